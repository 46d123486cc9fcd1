//===- column_reduction_emitter.cc - Column reductions in a loop kernel -----===//
//
// A reduce root that keeps its input's minor dimension accumulates into the
// output row, input row by input row (IsColumnReduction). Sibling column
// reductions merged into one kernel (ColumnReductions) accumulate into
// their output rows in the same loops, reading their inputs once.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Metadata.h"

namespace axle::cpu {

// A reduce root that keeps its input's minor dimension and reduces others
// (a column reduction, such as a bias gradient). Folding the reduced
// dimensions inside each output element would read the input a row apart
// per step (and 4 KiB strides all land in one L1 set). Instead the output
// row is the accumulator: it is set to the init value, then every input
// row is folded into it with the minor dimension innermost (contiguous,
// vectorized across output elements). Each element still folds its inputs
// in order, as the interpreter does. Several reduces of one input shape over
// the same dimensions fold side by side in the same column loop.
namespace {

// Marks the loop entered from `preheader` to vectorize with one 512-bit
// vector of `type` and no interleaving.
void SetColumnLoopVectorization(llvm::BasicBlock* preheader, PrimitiveType type) {
  const int64_t bits = std::max<int64_t>(8, primitive_util::BitWidth(type));
  const int width = static_cast<int>(std::max<int64_t>(1, 512 / bits));
  llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
  llvm::LLVMContext& context = header->getContext();
  auto property = [&](const char* key, int value) -> llvm::Metadata* {
    llvm::Metadata* entry[] = {llvm::MDString::get(context, key),
                               llvm::ConstantAsMetadata::get(
                                   llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))};
    return llvm::MDNode::get(context, entry);
  };
  for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
    if (latch == preheader) continue;
    std::vector<llvm::Metadata*> properties = {nullptr};
    properties.push_back(llvm::MDNode::get(
        context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(context))}));
    properties.push_back(property("llvm.loop.vectorize.width", width));
    properties.push_back(property("llvm.loop.interleave.count", 1));
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
}

}  // namespace

absl::Status LoopKernelEmitter::EmitColumnReduction(
    const std::vector<const HloInstruction*>& reduces, const std::vector<llvm::Value*>& outputs,
    llvm::Value* begin, llvm::Value* end) {
  // ColumnReductions: one input shape, one set of reduced dimensions.
  const HloInstruction& reduce = *reduces[0];
  const std::vector<int64_t>& out_dims = reduce.shape().dimensions();
  const std::vector<int64_t>& in_dims = reduce.operand(0)->shape().dimensions();
  const int64_t out_rank = static_cast<int64_t>(out_dims.size());
  const int64_t in_rank = static_cast<int64_t>(in_dims.size());
  std::vector<bool> is_reduced(in_rank, false);
  for (int64_t d : cast<HloDimensionsInstruction>(&reduce)->dimensions()) is_reduced[d] = true;
  std::vector<int64_t> kept;    // input dimension of each output dimension
  std::vector<int64_t> folded;  // the reduced input dimensions, in order
  for (int64_t d = 0; d < in_rank; ++d) (is_reduced[d] ? folded : kept).push_back(d);
  if (static_cast<int64_t>(kept.size()) != out_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduce ", reduce.name(), ": the result must have the kept dimensions"));
  }
  // The vector width of the widest result type (a 512-bit vector of it).
  PrimitiveType widest = reduce.shape().element_type();
  std::vector<llvm::Value*> inits;
  for (const HloInstruction* r : reduces) {
    const PrimitiveType type = r->shape().element_type();
    if (primitive_util::BitWidth(type) > primitive_util::BitWidth(widest)) widest = type;
    AXLE_ASSIGN_OR_RETURN(inits.emplace_back(), generators_.at(r->operand(1))(llvm_ir::IrIndex{}));
  }
  llvm_ir::IrIndex out_index(out_rank);
  llvm_ir::IrIndex in_index(in_rank);
  const int64_t minor = out_rank - 1;
  const std::vector<int64_t> column_splits = InnerLoopSplits(computation_, in_dims);
  std::function<absl::Status(size_t)> emit_folded = [&](size_t f) -> absl::Status {
    if (f < folded.size()) {
      const int64_t d = folded[f];
      return elemental_.EmitForLoop(b_.getInt64(0), b_.getInt64(in_dims[d]), absl::StrCat("r", d),
                                    [&](llvm::Value* i) {
                                      in_index[d] = i;
                                      return emit_folded(f + 1);
                                    });
    }
    // Every reduce's element of this input row and column, folded into its
    // output row: the input is read once for all of them (values they
    // share are emitted once, the generators' cache).
    auto column = [&](llvm::Value* c) -> absl::Status {
      out_index[minor] = c;
      in_index[in_rank - 1] = c;
      llvm::Value* linear = elemental_.Linearize(out_index, out_dims);
      for (size_t r = 0; r < reduces.size(); ++r) {
        const PrimitiveType type = reduces[r]->shape().element_type();
        llvm::Value* accumulated = elemental_.LoadElement(outputs[r], linear, type);
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value,
                              generators_.at(reduces[r]->operand(0))(in_index));
        AXLE_ASSIGN_OR_RETURN(
            std::vector<llvm::Value*> folded_value,
            elemental_.EmitScalarComputation(*reduces[r]->to_apply(), {accumulated, value}));
        if (folded_value.size() != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "reduce ", reduces[r]->name(), ": the computation must return one value"));
        }
        elemental_.StoreElement(folded_value[0], outputs[r], linear, type);
      }
      return absl::OkStatus();
    };
    // One vector wide, not interleaved: LLVM's choice (4 vectors of 16
    // f32) leaves a range of fewer than 64 columns (a batch norm's 64
    // channels split across two threads) to the scalar remainder loop,
    // 14x slower.
    auto vectorized_loop = [&](llvm::Value* low, llvm::Value* high,
                               const std::string& name) -> absl::Status {
      llvm::BasicBlock* preheader = b_.GetInsertBlock();
      absl::Cleanup one_vector = [&] { SetColumnLoopVectorization(preheader, widest); };
      return elemental_.EmitForLoop(low, high, name, column);
    };
    if (minor == 0 || column_splits.empty()) {
      return vectorized_loop(minor == 0 ? begin : b_.getInt64(0),
                             minor == 0 ? end : b_.getInt64(out_dims[minor]), "column");
    }
    // The columns in parts at a minor concatenate's (or edge pad's) operand
    // boundaries (InnerLoopSplits: GoogLeNet's global average pool of its
    // last inception module's concatenation), each part reading one operand
    // with vector loads instead of gathers and selects.
    int64_t part_begin = 0;
    for (size_t part = 0; part <= column_splits.size(); ++part) {
      const int64_t part_end = part < column_splits.size() ? column_splits[part] : out_dims[minor];
      AXLE_RETURN_IF_ERROR(vectorized_loop(b_.getInt64(part_begin), b_.getInt64(part_end),
                                           absl::StrCat("column.part", part)));
      part_begin = part_end;
    }
    return absl::OkStatus();
  };
  std::function<absl::Status(int64_t)> emit_outer = [&](int64_t d) -> absl::Status {
    if (d < minor) {
      return elemental_.EmitForLoop(d == 0 ? begin : b_.getInt64(0),
                                    d == 0 ? end : b_.getInt64(out_dims[d]), absl::StrCat("d", d),
                                    [&](llvm::Value* i) {
                                      out_index[d] = i;
                                      in_index[kept[d]] = i;
                                      return emit_outer(d + 1);
                                    });
    }
    llvm::Value* low = minor == 0 ? begin : b_.getInt64(0);
    llvm::Value* high = minor == 0 ? end : b_.getInt64(out_dims[minor]);
    AXLE_RETURN_IF_ERROR(
        elemental_.EmitForLoop(low, high, "init", [&](llvm::Value* c) -> absl::Status {
          out_index[minor] = c;
          llvm::Value* linear = elemental_.Linearize(out_index, out_dims);
          for (size_t r = 0; r < reduces.size(); ++r) {
            elemental_.StoreElement(inits[r], outputs[r], linear,
                                    reduces[r]->shape().element_type());
          }
          return absl::OkStatus();
        }));
    return emit_folded(0);
  };
  return emit_outer(0);
}

}  // namespace axle::cpu
