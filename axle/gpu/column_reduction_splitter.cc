//===- column_reduction_splitter.cc - Large column reductions in two passes ===//
#include "axle/gpu/column_reduction_splitter.h"

#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

// The identity of a combiner `opcode` over `type`, or an empty literal
// when the pass does not split reductions by it.
Literal IdentityOf(HloOpcode opcode, PrimitiveType type) {
  const bool numeric =
      primitive_util::IsFloatingPointType(type) || primitive_util::IsIntegralType(type);
  switch (opcode) {
    case HloOpcode::kAdd:
      return numeric ? LiteralUtil::Zero(type) : Literal();
    case HloOpcode::kMultiply:
      return numeric ? LiteralUtil::One(type) : Literal();
    case HloOpcode::kMaximum:
      return numeric ? LiteralUtil::MinValue(type) : Literal();
    case HloOpcode::kMinimum:
      return numeric ? LiteralUtil::MaxValue(type) : Literal();
    case HloOpcode::kAnd:
      return type == PRED ? LiteralUtil::One(PRED) : Literal();
    case HloOpcode::kOr:
      return type == PRED ? LiteralUtil::Zero(PRED) : Literal();
    default:
      return Literal();
  }
}

// Whether `reduce` combines by one binary op of its two parameters, with a
// constant init value that is that op's identity.
bool CombinesWithIdentityInit(const HloInstruction& reduce) {
  const HloComputation* computation = reduce.to_apply();
  const HloInstruction* root = computation->root_instruction();
  if (computation->num_parameters() != 2 || root->operand_count() != 2 ||
      root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1)) {
    return false;
  }
  if (reduce.operand(1)->opcode() != HloOpcode::kConstant) return false;
  const Literal& init = cast<HloConstantInstruction>(reduce.operand(1))->literal();
  const Literal identity = IdentityOf(root->opcode(), root->shape().element_type());
  if (!identity.shape().IsArray() ||
      identity.shape().element_type() != init.shape().element_type()) {
    return false;
  }
  return init == identity;
}

Shape RowMajor(PrimitiveType type, const std::vector<int64_t>& dims) {
  return ShapeUtil::MakeShapeWithDescendingLayout(type, dims);
}

}  // namespace

int64_t GpuColumnReductionSplitter::PartsFor(int64_t rows, int64_t columns,
                                             int64_t element_bytes) const {
  if (rows <= 0 || columns <= 0 || element_bytes <= 0 ||
      rows * columns * element_bytes < min_bytes_) {
    return 1;
  }
  const auto tiles = [&](int64_t parts) {
    return (parts * columns * element_bytes + kTileBytes - 1) / kTileBytes;
  };
  if (tiles(1) >= target_tiles_) return 1;
  int64_t parts = 1;
  while (tiles(parts) < target_tiles_) parts *= 2;
  // The most parts up to that which divide the rows and keep each part long.
  while (parts > 1 && (rows % parts != 0 || rows / parts < min_rows_per_part_)) parts /= 2;
  return parts;
}

absl::StatusOr<bool> GpuColumnReductionSplitter::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* reduce : computation->MakeInstructionPostOrder()) {
      if (reduce->opcode() != HloOpcode::kReduce || reduce->operand_count() != 2 ||
          !reduce->shape().IsArray()) {
        continue;
      }
      HloInstruction* input = reduce->mutable_operand(0);
      const Shape& shape = input->shape();
      if (!shape.IsArray() || !shape.is_static() || !ShapeUtil::HasDescendingLayout(shape) ||
          !ShapeUtil::HasDescendingLayout(reduce->shape())) {
        continue;
      }
      // The reduced dimensions must be the leading ones.
      const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(reduce)->dimensions();
      const int64_t reduced = static_cast<int64_t>(dims.size());
      bool leading = reduced > 0;
      for (int64_t i = 0; leading && i < reduced; ++i) leading = dims[i] == i;
      if (!leading || !CombinesWithIdentityInit(*reduce)) continue;
      int64_t rows = 1, columns = 1;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        (d < reduced ? rows : columns) *= shape.dimensions(d);
      }
      const PrimitiveType type = shape.element_type();
      const int64_t parts = PartsFor(rows, columns, primitive_util::ByteWidth(type));
      if (parts <= 1) continue;

      HloInstruction* init = reduce->mutable_operand(1);
      const auto make_reduce = [&](HloInstruction* operand, const Shape& result) {
        auto instruction = std::make_unique<HloDimensionsInstruction>(
            HloOpcode::kReduce, result, std::vector<HloInstruction*>{operand, init});
        instruction->mutable_attrs()->dimensions = {0};
        instruction->AppendCalledComputation(reduce->to_apply());
        return computation->AddInstruction(std::move(instruction));
      };
      HloInstruction* spread = MakeBitcast(input, RowMajor(type, {rows / parts, parts * columns}));
      HloInstruction* partial = make_reduce(spread, RowMajor(type, {parts * columns}));
      HloInstruction* stacked = MakeBitcast(partial, RowMajor(type, {parts, columns}));
      HloInstruction* total = make_reduce(stacked, RowMajor(type, {columns}));
      HloInstruction* result = MakeBitcast(total, reduce->shape());
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(reduce, result));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle::gpu
