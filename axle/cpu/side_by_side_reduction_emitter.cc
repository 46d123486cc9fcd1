//===- side_by_side_reduction_emitter.cc - Variadic reduces across lanes ---===//
//
// A variadic reduce (argmax, argmin) whose elements fold side by side, one
// per vector lane (loop_kernel_plan.h: SideBySideReduction): for each block
// of output elements along the output's minor dimension, the accumulators
// of the block's elements live in stack arrays; each step of the reduced
// dimensions (in row-major order, as the interpreter folds) runs the
// combiner on every element of the block in one loop, vectorized across
// the elements. A step reads the block's inputs a row apart when the
// reduced dimensions include the input's minor one (gathers; the lines
// they touch serve the next steps from L1), contiguously otherwise. See
// loop_kernel_emitter_internal.h: EmitSideBySideReduction.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Function.h"

namespace axle::cpu {
namespace {

// Adds "llvm.loop.interleave.count" 1 to the loop entered from `preheader`
// when it carries loop metadata (EmitForLoop's forced vector width): one
// vector per iteration, so a block of 8 or 16 elements is one vector
// iteration rather than the scalar remainder of an interleaved one.
void DisableInterleaving(llvm::BasicBlock* preheader) {
  llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
  llvm::LLVMContext& context = header->getContext();
  for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
    if (latch == preheader) continue;
    llvm::MDNode* old = latch->getTerminator()->getMetadata(llvm::LLVMContext::MD_loop);
    if (old == nullptr) continue;
    std::vector<llvm::Metadata*> properties = {nullptr};
    for (unsigned i = 1; i < old->getNumOperands(); ++i) properties.push_back(old->getOperand(i));
    llvm::Metadata* count[] = {
        llvm::MDString::get(context, "llvm.loop.interleave.count"),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
    properties.push_back(llvm::MDNode::get(context, count));
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
}

}  // namespace

absl::Status EmitSideBySideReduction(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                                     const HloInstruction& reduce,
                                     absl::Span<const llvm_ir::ElementGenerator> operands,
                                     const std::vector<SideBySideOutput>& outputs,
                                     int64_t range_dimension, llvm::Value* begin,
                                     llvm::Value* end) {
  const int64_t count = reduce.operand_count() / 2;
  std::vector<PrimitiveType> types;
  for (const Shape& result : reduce.shape().tuple_shapes()) types.push_back(result.element_type());
  if (count < 2 || reduce.operand_count() != 2 * count ||
      static_cast<int64_t>(types.size()) != count ||
      static_cast<int64_t>(operands.size()) != reduce.operand_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduce ", reduce.name(), ": needs N inputs, N init values and N results, N >= 2"));
  }
  const std::vector<int64_t>& out_dims = reduce.shape().tuple_shapes(0).dimensions();
  const std::vector<int64_t>& in_dims = reduce.operand(0)->shape().dimensions();
  const int64_t out_rank = static_cast<int64_t>(out_dims.size());
  const int64_t in_rank = static_cast<int64_t>(in_dims.size());
  std::vector<bool> is_reduced(in_rank, false);
  for (int64_t d : cast<HloDimensionsInstruction>(&reduce)->dimensions()) {
    if (d < 0 || d >= in_rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce ", reduce.name(), ": a reduced dimension is out of range"));
    }
    is_reduced[d] = true;
  }
  std::vector<int64_t> kept;    // input dimension of each output dimension
  std::vector<int64_t> folded;  // the reduced input dimensions, in order
  for (int64_t d = 0; d < in_rank; ++d) (is_reduced[d] ? folded : kept).push_back(d);
  if (out_rank < 1 || static_cast<int64_t>(kept.size()) != out_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduce ", reduce.name(), ": the result must have the kept dimensions"));
  }
  const int64_t minor = out_rank - 1;
  const int width = static_cast<int>(SideBySideVectorLanes(reduce));

  std::vector<llvm::Value*> init;
  for (int64_t k = 0; k < count; ++k) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[count + k](llvm_ir::IrIndex{}));
    init.push_back(value);
  }
  // One block's accumulators per result, in the entry block.
  std::vector<llvm::Value*> accumulators;
  {
    llvm::Function* function = b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    for (PrimitiveType type : types) {
      llvm::AllocaInst* array =
          entry.CreateAlloca(elemental.StorageType(type), entry.getInt64(kSideBySideBlock));
      array->setAlignment(llvm::Align(64));
      accumulators.push_back(array);
    }
  }
  const HloComputation& combiner = *reduce.to_apply();
  llvm_ir::IrIndex out_index(out_rank);
  llvm_ir::IrIndex in_index(in_rank);

  // Elements [first, first + size) of the output's minor dimension, size
  // at most kSideBySideBlock: init, every step of the reduced dimensions,
  // then the results stored.
  auto emit_block = [&](llvm::Value* first, llvm::Value* size) -> absl::Status {
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(b.getInt64(0), size, "init", [&](llvm::Value* lane) {
      for (int64_t k = 0; k < count; ++k) {
        elemental.StoreElement(init[k], accumulators[k], lane, types[k]);
      }
      return absl::OkStatus();
    }));
    std::function<absl::Status(size_t)> emit_folded = [&](size_t f) -> absl::Status {
      if (f < folded.size()) {
        const int64_t d = folded[f];
        return elemental.EmitForLoop(
            b.getInt64(0), b.getInt64(in_dims[d]), absl::StrCat("r", d),
            [&](llvm::Value* i) {
              in_index[d] = i;
              return emit_folded(f + 1);
            },
            llvm_ir::ElementalIrEmitter::kVectorizeNever);
      }
      llvm::BasicBlock* preheader = b.GetInsertBlock();
      AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
          b.getInt64(0), size, "lanes",
          [&](llvm::Value* lane) -> absl::Status {
            in_index[kept[minor]] = b.CreateAdd(first, lane);
            std::vector<llvm::Value*> arguments;
            for (int64_t k = 0; k < count; ++k) {
              arguments.push_back(elemental.LoadElement(accumulators[k], lane, types[k]));
            }
            for (int64_t k = 0; k < count; ++k) {
              AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](in_index));
              arguments.push_back(value);
            }
            AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                                  elemental.EmitScalarComputation(combiner, arguments));
            if (static_cast<int64_t>(results.size()) != count) {
              return absl::InvalidArgumentError(
                  absl::StrCat("reduce ", reduce.name(), ": the computation returns ",
                               results.size(), " values for ", count, " accumulators"));
            }
            for (int64_t k = 0; k < count; ++k) {
              elemental.StoreElement(results[k], accumulators[k], lane, types[k]);
            }
            return absl::OkStatus();
          },
          width > 1 ? width : llvm_ir::ElementalIrEmitter::kVectorizeAuto));
      DisableInterleaving(preheader);
      return absl::OkStatus();
    };
    AXLE_RETURN_IF_ERROR(emit_folded(0));
    return elemental.EmitForLoop(b.getInt64(0), size, "store", [&](llvm::Value* lane) {
      out_index[minor] = b.CreateAdd(first, lane);
      llvm::Value* linear = elemental.Linearize(out_index, out_dims);
      for (const SideBySideOutput& output : outputs) {
        const PrimitiveType type = types[output.result];
        elemental.StoreElement(elemental.LoadElement(accumulators[output.result], lane, type),
                               output.buffer, linear, type);
      }
      return absl::OkStatus();
    });
  };

  std::function<absl::Status(int64_t)> emit_outer = [&](int64_t d) -> absl::Status {
    llvm::Value* low = d == range_dimension ? begin : b.getInt64(0);
    llvm::Value* high = d == range_dimension ? end : b.getInt64(out_dims[d]);
    if (d < minor) {
      return elemental.EmitForLoop(
          low, high, absl::StrCat("d", d),
          [&](llvm::Value* i) {
            out_index[d] = i;
            in_index[kept[d]] = i;
            return emit_outer(d + 1);
          },
          llvm_ir::ElementalIrEmitter::kVectorizeNever);
    }
    // The minor dimension in blocks of kSideBySideBlock elements.
    llvm::Value* length = b.CreateSub(high, low);
    llvm::Value* blocks = b.CreateSDiv(b.CreateAdd(length, b.getInt64(kSideBySideBlock - 1)),
                                       b.getInt64(kSideBySideBlock));
    return elemental.EmitForLoop(
        b.getInt64(0), blocks, "block",
        [&](llvm::Value* block) {
          llvm::Value* offset = b.CreateMul(block, b.getInt64(kSideBySideBlock));
          llvm::Value* size = b.CreateBinaryIntrinsic(
              llvm::Intrinsic::smin, b.CreateSub(length, offset), b.getInt64(kSideBySideBlock));
          return emit_block(b.CreateAdd(low, offset), size);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  };
  return emit_outer(0);
}

}  // namespace axle::cpu
