//===- row_buffers_emitter.cc - Row buffers and next-row prefetches ---------===//
//
// Row values (row_index_analysis.h) kept in stack row buffers, and the
// prefetches of a row ahead the last row reduction issues.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace axle::cpu {

// Hands `hook` to the elemental emitter for `reduce`, the row's last row
// reduction, with prefetches of a row ahead when its input computes a
// transcendental (enough work to hide them).
void LoopKernelEmitter::ArmRowReduction(llvm_ir::ElementalIrEmitter::RowReductionHook& hook,
                                        const HloInstruction& reduce,
                                        const std::vector<int64_t>& dims,
                                        const llvm_ir::IrIndex& row_index,
                                        const std::vector<llvm::Value*>& buffers) {
  if (ComputesTranscendentals(*reduce.operand(0))) {
    hook.prefetch_streams = NextRowStreams(dims, row_index, buffers);
  }
  elemental_.SetRowReductionHook(&hook);
}

std::vector<llvm::Value*> LoopKernelEmitter::NextRowStreams(
    const std::vector<int64_t>& dims, const llvm_ir::IrIndex& row_index,
    const std::vector<llvm::Value*>& buffers) {
  std::vector<llvm::Value*> streams;
  if (dims.size() < 2 || row_index.size() + 1 != dims.size()) return streams;
  for (int64_t p = 0; p < computation_.num_parameters(); ++p) {
    const Shape& shape = computation_.parameter_instruction(p)->shape();
    if (!shape.IsArray() || shape.dimensions() != dims) continue;
    const int64_t row_bytes = dims.back() * primitive_util::ByteWidth(shape.element_type());
    if (row_bytes < kPrefetchMinRowBytes) continue;
    llvm::Value* next_row = b_.CreateAdd(
        elemental_.Linearize(row_index, absl::MakeSpan(dims).subspan(0, dims.size() - 1)),
        b_.getInt64(kPrefetchRowsAhead));
    // No inbounds: past the last row this points past the buffer, which
    // a prefetch may (it never faults).
    streams.push_back(b_.CreateGEP(b_.getInt8Ty(), buffers[p],
                                   b_.CreateMul(next_row, b_.getInt64(row_bytes)), "next_row"));
  }
  return streams;
}

void LoopKernelEmitter::PlanRowBuffers(const RowIndexAnalysis& rows, llvm::Function* body) {
  llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
  for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
    if (!rows.IsRowMaterializable(instruction)) continue;
    const PrimitiveType type = instruction->shape().element_type();
    if (primitive_util::IsComplexType(type) || type == PRED) continue;
    // The rank of the reductions that fill it; all must agree.
    int64_t depth = -1;
    bool agree = true;
    for (const HloInstruction* user : instruction->users()) {
      if (user->opcode() != HloOpcode::kReduce || !rows.IsHoistableRowValue(user)) continue;
      if (depth >= 0 && depth != user->shape().rank()) agree = false;
      depth = user->shape().rank();
    }
    if (!agree || depth < 1) continue;
    const std::vector<int64_t>& dims = instruction->shape().dimensions();
    std::vector<int64_t> row_dims(dims.begin() + depth, dims.end());
    int64_t elements = 1;
    for (int64_t d : row_dims) elements *= d;
    const int64_t bytes = elements * primitive_util::ByteWidth(type);
    if (elements < 1 || bytes > kMaxRowBufferBytes) continue;
    llvm::AllocaInst* buffer =
        entry.CreateAlloca(elemental_.StorageType(type), entry.getInt64(elements),
                           absl::StrCat(instruction->name(), ".row"));
    buffer->setAlignment(llvm::Align(kBufferAlignment));
    row_buffers_[instruction] = {buffer, nullptr, elements, static_cast<size_t>(depth),
                                 std::move(row_dims)};
  }
}

llvm::Value* LoopKernelEmitter::RowBufferBase(const RowBuffer& row_buffer) const {
  return skewing_ ? row_buffer.double_buffer : row_buffer.buffer;
}

llvm::Value* LoopKernelEmitter::RowBufferOffset(const RowBuffer& row_buffer,
                                                const llvm_ir::IrIndex& index) {
  llvm_ir::IrIndex row_index(index.begin() + static_cast<std::ptrdiff_t>(row_buffer.depth),
                             index.end());
  llvm::Value* offset = elemental_.Linearize(row_index, row_buffer.row_dims);
  if (!skewing_) return offset;
  // Skewed rows (depth 1): row r's copy at parity r & 1.
  llvm::Value* parity = b_.CreateAnd(index[0], b_.getInt64(1));
  return b_.CreateAdd(offset, b_.CreateMul(parity, b_.getInt64(row_buffer.elements)));
}

}  // namespace axle::cpu
