//===- skewed_rows_emitter.cc - Skewed row reductions in a loop kernel ------===//
//
// A 2-d kernel whose row reduction feeds a large output computes the
// reduction of row r+1 while it stores row r (loop_kernel_plan.h:
// SkewableRowReduction), through double row buffers.
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
#include "axle/cpu/jit.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace axle::cpu {

absl::Status LoopKernelEmitter::EmitSkewedRows(llvm::Function* body, const HloInstruction& output,
                                               const HloInstruction& reduce,
                                               const std::vector<const HloInstruction*>& values,
                                               const std::vector<llvm::Value*>& buffers,
                                               const std::vector<int64_t>& dims, llvm::Value* begin,
                                               llvm::Value* end) {
  const int64_t columns = dims[1];
  llvm::Type* f32 = b_.getFloatTy();
  llvm::Value* out = buffers[computation_.num_parameters()];
  llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
  for (auto& [instruction, row_buffer] : row_buffers_) {
    if (row_buffer.depth != 1) continue;
    llvm::Type* storage = elemental_.StorageType(instruction->shape().element_type());
    auto* buffer = entry.CreateAlloca(storage, entry.getInt64(2 * row_buffer.elements),
                                      absl::StrCat(instruction->name(), ".rows"));
    buffer->setAlignment(llvm::Align(kBufferAlignment));
    row_buffer.double_buffer = buffer;
    // Zeroed: a range's first row computes its nonexistent previous row
    // (into the spare row) from the other half.
    const int64_t bytes =
        2 * row_buffer.elements * primitive_util::ByteWidth(instruction->shape().element_type());
    b_.CreateMemSet(buffer, b_.getInt8(0), bytes, llvm::Align(kBufferAlignment));
  }
  // Rows go straight to a 64-byte aligned output (always, from Axle's
  // allocators); to a misaligned one through the spare row and a copy.
  llvm::Value* aligned = b_.CreateICmpEQ(
      b_.CreateAnd(b_.CreatePtrToInt(out, b_.getInt64Ty()), kBufferAlignment - 1), b_.getInt64(0));
  auto* spare_row = entry.CreateAlloca(f32, entry.getInt64(columns), "spare_row");
  spare_row->setAlignment(llvm::Align(kBufferAlignment));
  std::map<const HloInstruction*, llvm::AllocaInst*> previous;
  for (const HloInstruction* value : values) {
    previous[value] = entry.CreateAlloca(f32, nullptr, absl::StrCat(value->name(), ".previous"));
    b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), previous[value]);
  }
  // The previous row's values, as row values of row `row`.
  auto recall_previous = [&](llvm::Value* row) {
    for (const auto& [value, slot] : previous) {
      cache_[value].push_back(
          {llvm_ir::IrIndex{row}, b_.CreateLoad(f32, slot), elemental_.scope()});
    }
  };
  skewing_ = true;
  absl::Status status = elemental_.EmitForLoop(begin, end, "skewed", [&](llvm::Value* row) {
    llvm::Value* previous_row = b_.CreateSub(row, b_.getInt64(1));
    recall_previous(previous_row);
    llvm::Value* has_previous = b_.CreateICmpSGT(row, begin);
    llvm::Value* previous_row_out =
        b_.CreateGEP(f32, out, b_.CreateMul(previous_row, b_.getInt64(columns)));
    llvm::Value* previous_out =
        b_.CreateSelect(b_.CreateAnd(has_previous, aligned), previous_row_out, spare_row);
    b_.CreateAlignmentAssumption(module_->getDataLayout(), previous_out, kBufferAlignment);
    std::map<const HloInstruction*, llvm::Value*> current;
    filling_row_buffers_ = true;
    for (const HloInstruction* value : values) {
      llvm_ir::ElementalIrEmitter::RowReductionHook hook;
      if (value == &reduce) {
        hook.columns = columns;
        hook.loop_property = kNonTemporalStoresLoopProperty;
        hook.per_column = [&](llvm::Value* column) -> absl::Status {
          filling_row_buffers_ = false;
          absl::StatusOr<llvm::Value*> element =
              generators_.at(&output)(llvm_ir::IrIndex{previous_row, column});
          filling_row_buffers_ = true;
          AXLE_RETURN_IF_ERROR(element.status());
          elemental_.StoreElement(*element, previous_out, column, F32);
          return absl::OkStatus();
        };
        ArmRowReduction(hook, *value, dims, llvm_ir::IrIndex{row}, buffers);
      }
      absl::StatusOr<llvm::Value*> computed = generators_.at(value)(llvm_ir::IrIndex{row});
      elemental_.ClearRowReductionHook();
      AXLE_RETURN_IF_ERROR(computed.status());
      if (value == &reduce && !hook.taken) {
        return absl::InternalError(
            absl::StrCat("CPU codegen: skewed rows: ", reduce.name(), " did not take the hook"));
      }
      current[value] = *computed;
    }
    filling_row_buffers_ = false;
    for (const auto& [value, slot] : previous) b_.CreateStore(current.at(value), slot);
    // A misaligned output: the previous row went to the spare row; copy.
    llvm::LLVMContext& context = module_->getContext();
    llvm::Function* function = b_.GetInsertBlock()->getParent();
    auto* copy_block = llvm::BasicBlock::Create(context, "skewed.copy", function);
    auto* next_block = llvm::BasicBlock::Create(context, "skewed.next", function);
    b_.CreateCondBr(b_.CreateAnd(has_previous, b_.CreateNot(aligned)), copy_block, next_block);
    b_.SetInsertPoint(copy_block);
    b_.CreateMemCpy(previous_row_out, llvm::MaybeAlign(4), spare_row, llvm::Align(kBufferAlignment),
                    columns * 4);
    b_.CreateBr(next_block);
    b_.SetInsertPoint(next_block);
    return absl::OkStatus();
  });
  if (status.ok()) {
    // The last row's output (none when the range is empty).
    llvm::Value* last =
        b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, begin, b_.CreateSub(end, b_.getInt64(1)));
    status = elemental_.EmitForLoop(
        last, end, "skewed_last",
        [&](llvm::Value* row) {
          recall_previous(row);
          llvm_ir::IrIndex index = {row, nullptr};
          return EmitNonTemporalRow(
              b_.getInt64(0), b_.getInt64(columns), out, F32, index, dims,
              [&](llvm::Value* column) -> absl::Status {
                index[1] = column;
                AXLE_ASSIGN_OR_RETURN(llvm::Value * element, generators_.at(&output)(index));
                StoreOutput(element, out, elemental_.Linearize(index, dims), F32);
                return absl::OkStatus();
              });
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  }
  skewing_ = false;
  filling_row_buffers_ = false;
  return status;
}

}  // namespace axle::cpu
