//===- dot_variants_to_dot.cc - ragged-dot and scaled-dot as dots ----------===//
#include "axle/gpu/dot_variants_to_dot.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/algorithm/container.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

bool Contains(absl::Span<const int64_t> dims, int64_t d) { return absl::c_linear_search(dims, d); }

HloInstruction* Add(HloComputation* computation, std::unique_ptr<HloInstruction> instruction) {
  return computation->AddInstruction(std::move(instruction));
}

HloInstruction* Iota(HloComputation* computation, const Shape& shape, int64_t dimension) {
  auto iota =
      std::make_unique<HloIotaInstruction>(HloOpcode::kIota, shape, std::vector<HloInstruction*>{});
  iota->mutable_attrs()->iota_dimension = dimension;
  return Add(computation, std::move(iota));
}

HloInstruction* Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection direction) {
  Shape shape = a->shape();
  shape.set_element_type(PRED);
  auto compare = std::make_unique<HloCompareInstruction>(HloOpcode::kCompare, shape,
                                                         std::vector<HloInstruction*>{a, b});
  compare->mutable_attrs()->direction = direction;
  return Add(a->parent(), std::move(compare));
}

HloInstruction* Select(HloInstruction* predicate, HloInstruction* on_true,
                       HloInstruction* on_false) {
  return Add(predicate->parent(), HloInstruction::Create(HloOpcode::kSelect, on_true->shape(),
                                                         {predicate, on_true, on_false}));
}

HloInstruction* Zeros(HloComputation* computation, const Shape& shape) {
  return MakeFilledArray(computation, LiteralUtil::Zero(shape.element_type()), shape);
}

// The sum of `x` over `dimensions`, in x's type.
HloInstruction* Sum(HloInstruction* x, const std::vector<int64_t>& dimensions, const Shape& shape) {
  HloComputation* computation = x->parent();
  const PrimitiveType type = x->shape().element_type();
  auto reduce = std::make_unique<HloDimensionsInstruction>(
      HloOpcode::kReduce, shape,
      std::vector<HloInstruction*>{x, MakeConstant(computation, LiteralUtil::Zero(type))});
  reduce->mutable_attrs()->dimensions = dimensions;
  reduce->AppendCalledComputation(
      AddScalarCombiner(computation->parent(), "dot_variants_sum", HloOpcode::kAdd, type));
  return Add(computation, std::move(reduce));
}

HloInstruction* Dot(HloInstruction* lhs, HloInstruction* rhs, const Shape& shape,
                    const DotDimensionNumbers& dnums, const PrecisionConfig& precision) {
  auto dot = std::make_unique<HloDotInstruction>(HloOpcode::kDot, shape,
                                                 std::vector<HloInstruction*>{lhs, rhs});
  dot->mutable_attrs()->dot_dimension_numbers = dnums;
  dot->mutable_attrs()->precision_config = precision;
  return Add(lhs->parent(), std::move(dot));
}

bool PackedNibble(const HloDotInstruction& dot) {
  for (int i = 0; i < dot.precision_config().operand_precision_size(); ++i) {
    if (dot.precision_config().operand_precision(i) == PrecisionConfig::PACKED_NIBBLE) return true;
  }
  return false;
}

// --- scaled-dot ------------------------------------------------------------

// A scalar, or of the operand's rank with each operand dimension a whole
// number of blocks of the scale's.
bool ScaleFits(const Shape& shape, const Shape& scale_shape) {
  if (!shape.IsArray() || !scale_shape.IsArray()) return false;
  if (scale_shape.rank() == 0) return true;
  if (scale_shape.rank() != shape.rank()) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t s = scale_shape.dimensions(d);
    if (s <= 0 || shape.dimensions(d) % s != 0) return false;
  }
  return true;
}

// `operand` times its block scale (ScaleFits), in `compute` then converted
// to `type`.
HloInstruction* Dequantize(HloInstruction* operand, HloInstruction* scale, PrimitiveType compute,
                           PrimitiveType type) {
  const Shape& shape = operand->shape();
  const Shape& scale_shape = scale->shape();
  HloInstruction* value = MakeConvert(operand, compute);
  HloInstruction* factor = MakeConvert(scale, compute);
  const Shape wide = ShapeUtil::MakeShape(compute, shape.dimensions());
  HloInstruction* expanded = nullptr;
  if (scale_shape.rank() == 0) {
    expanded = MakeBroadcast(factor, wide, {});
  } else {
    // [s0, b0, s1, b1, ...] from [s0, s1, ...], then merged to [d0, d1, ...].
    std::vector<int64_t> blocked, dimensions;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int64_t s = scale_shape.dimensions(d);
      const int64_t n = shape.dimensions(d);
      dimensions.push_back(static_cast<int64_t>(blocked.size()));
      blocked.push_back(s);
      blocked.push_back(n / s);
    }
    expanded = MakeReshape(
        MakeBroadcast(factor, ShapeUtil::MakeShape(compute, blocked), dimensions), wide);
  }
  return MakeConvert(MakeBinary(HloOpcode::kMultiply, value, expanded, wide), type);
}

HloInstruction* ScaledDot(HloInstruction* instruction) {
  const auto& dot = *cast<HloDotInstruction>(instruction);
  if (instruction->operand_count() != 4 || PackedNibble(dot)) return nullptr;
  const PrimitiveType type = instruction->shape().element_type();
  for (const HloInstruction* operand : instruction->operands()) {
    if (!operand->shape().IsArray() || pu::IsComplexType(operand->shape().element_type())) {
      return nullptr;
    }
  }
  if (!pu::IsFloatingPointType(type) ||
      !ScaleFits(instruction->operand(0)->shape(), instruction->operand(2)->shape()) ||
      !ScaleFits(instruction->operand(1)->shape(), instruction->operand(3)->shape())) {
    return nullptr;
  }
  const PrimitiveType compute = type == F64 ? F64 : F32;
  HloInstruction* lhs =
      Dequantize(instruction->mutable_operand(0), instruction->mutable_operand(2), compute, type);
  HloInstruction* rhs =
      Dequantize(instruction->mutable_operand(1), instruction->mutable_operand(3), compute, type);
  return Dot(lhs, rhs, instruction->shape(), dot.dot_dimension_numbers(), dot.precision_config());
}

// XLA's __op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale) custom call
// (BlockScalingRewriter): lhs [B?, M, K], rhs [B?, N, K], each scale its
// operand's shape but for the last dimension, K / block_size; each operand
// and scale converted to the result type, multiplied with the scale
// broadcast over its block, and contracted along K (batched along B).
HloInstruction* BlockScaledDot(HloInstruction* instruction) {
  const auto* call = cast<HloCustomCallInstruction>(instruction);
  if (!IsBlockScaledDotCall(*call) || instruction->operand_count() != 4 ||
      !instruction->shape().IsArray()) {
    return nullptr;
  }
  const PrimitiveType type = instruction->shape().element_type();
  if (!pu::IsFloatingPointType(type)) return nullptr;
  const int64_t rank = instruction->operand(0)->shape().rank();
  if (rank != 2 && rank != 3) return nullptr;
  for (int64_t side = 0; side < 2; ++side) {
    const Shape& shape = instruction->operand(side)->shape();
    const Shape& scale = instruction->operand(side + 2)->shape();
    if (!shape.IsArray() || !scale.IsArray() || shape.rank() != rank || scale.rank() != rank ||
        pu::IsComplexType(shape.element_type()) || pu::IsComplexType(scale.element_type()) ||
        !ScaleFits(shape, scale)) {
      return nullptr;
    }
    for (int64_t d = 0; d + 1 < rank; ++d) {
      if (shape.dimensions(d) != scale.dimensions(d)) return nullptr;
    }
  }
  HloInstruction* lhs =
      Dequantize(instruction->mutable_operand(0), instruction->mutable_operand(2), type, type);
  HloInstruction* rhs =
      Dequantize(instruction->mutable_operand(1), instruction->mutable_operand(3), type, type);
  DotDimensionNumbers dnums;
  dnums.add_lhs_contracting_dimensions(rank - 1);
  dnums.add_rhs_contracting_dimensions(rank - 1);
  if (rank == 3) {
    dnums.add_lhs_batch_dimensions(0);
    dnums.add_rhs_batch_dimensions(0);
  }
  absl::StatusOr<Shape> inferred =
      ShapeInference::InferDotOpShape(lhs->shape(), rhs->shape(), dnums, type);
  if (!inferred.ok() || !ShapeUtil::Compatible(*inferred, instruction->shape())) return nullptr;
  return Dot(lhs, rhs, instruction->shape(), dnums, PrecisionConfig());
}

// --- ragged-dot ------------------------------------------------------------

// For every group j of each prefix row, where it starts: the sum of the
// earlier groups' sizes (negative ones as 0), s64 [prefix..., g].
HloInstruction* GroupStarts(HloInstruction* sizes) {
  HloComputation* computation = sizes->parent();
  const Shape& shape = sizes->shape();
  const int64_t p = shape.rank() - 1;
  const int64_t g = shape.dimensions(p);
  HloInstruction* clamped =
      MakeBinary(HloOpcode::kMaximum, sizes, Zeros(computation, shape), shape);
  std::vector<int64_t> pairs(shape.dimensions().begin(), shape.dimensions().end());
  pairs.push_back(g);  // [prefix..., j, t]
  const Shape pair_shape = ShapeUtil::MakeShape(S64, pairs);
  std::vector<int64_t> map;
  for (int64_t d = 0; d < p; ++d) map.push_back(d);
  map.push_back(p + 1);
  HloInstruction* by_t = MakeBroadcast(clamped, pair_shape, map);
  HloInstruction* earlier = Compare(Iota(computation, pair_shape, p + 1),
                                    Iota(computation, pair_shape, p), ComparisonDirection::kLt);
  HloInstruction* terms = Select(earlier, by_t, Zeros(computation, pair_shape));
  return Sum(terms, {p + 1}, shape);
}

HloInstruction* RaggedDot(HloInstruction* instruction) {
  const auto& dot = *cast<HloDotInstruction>(instruction);
  const DotDimensionNumbers& dnums = dot.dot_dimension_numbers();
  const std::vector<int64_t>& ragged = dot.attrs().lhs_ragged_dimensions;
  const std::vector<int64_t>& group_dims = dot.attrs().rhs_group_dimensions;
  if (instruction->operand_count() != 3 || ragged.size() != 1 || PackedNibble(dot)) return nullptr;
  HloInstruction* lhs = instruction->mutable_operand(0);
  HloInstruction* rhs = instruction->mutable_operand(1);
  HloInstruction* sizes = instruction->mutable_operand(2);
  const Shape& lhs_shape = lhs->shape();
  const Shape& sizes_shape = sizes->shape();
  const int64_t r = ragged[0];
  if (!lhs_shape.IsArray() || !sizes_shape.IsArray() || sizes_shape.rank() < 1 ||
      !pu::IsIntegralType(sizes_shape.element_type()) || r < 0 || r >= lhs_shape.rank()) {
    return nullptr;
  }
  HloComputation* computation = instruction->parent();
  if (Contains(dnums.lhs_batch_dimensions(), r)) {
    // Ragged along a batch dimension: every group meets its own batch.
    return group_dims.empty() ? Dot(lhs, rhs, instruction->shape(), dnums, dot.precision_config())
                              : nullptr;
  }
  const bool contracting = Contains(dnums.lhs_contracting_dimensions(), r);
  if (contracting != group_dims.empty()) return nullptr;
  // The lhs dimensions group_sizes' leading ones stand for (as the evaluator).
  std::vector<int64_t> prefix = dnums.lhs_batch_dimensions();
  if (contracting) {
    for (int64_t d : dnums.lhs_contracting_dimensions()) {
      if (d == r) break;
      prefix.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < r; ++d) {
      if (!Contains(dnums.lhs_batch_dimensions(), d) &&
          !Contains(dnums.lhs_contracting_dimensions(), d)) {
        prefix.push_back(d);
      }
    }
  }
  if (sizes_shape.rank() == 1) prefix.clear();
  if (static_cast<int64_t>(prefix.size()) != sizes_shape.rank() - 1) return nullptr;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (lhs_shape.dimensions(prefix[i]) != sizes_shape.dimensions(static_cast<int64_t>(i))) {
      return nullptr;
    }
  }
  const int64_t g = sizes_shape.dimensions(sizes_shape.rank() - 1);
  const Shape& shape = instruction->shape();
  const int64_t batch = dnums.lhs_batch_dimensions_size();
  if (!contracting && (group_dims[0] < 0 || group_dims[0] >= rhs->shape().rank() ||
                       rhs->shape().dimensions(group_dims[0]) != g)) {
    return nullptr;
  }
  if (contracting && (shape.rank() < batch + 1 || shape.dimensions(0) != g)) return nullptr;

  // Each group's copy of lhs, zero outside the group: [g, lhs...].
  HloInstruction* sizes64 = MakeConvert(sizes, S64);
  HloInstruction* starts = GroupStarts(sizes64);
  HloInstruction* ends = MakeBinary(HloOpcode::kAdd, starts, sizes64, sizes64->shape());
  std::vector<int64_t> grouped = {g};
  grouped.insert(grouped.end(), lhs_shape.dimensions().begin(), lhs_shape.dimensions().end());
  const Shape mask_shape = ShapeUtil::MakeShape(S64, grouped);
  std::vector<int64_t> map;
  map.reserve(prefix.size() + 1);
  for (int64_t d : prefix) map.push_back(d + 1);
  map.push_back(0);
  HloInstruction* coordinate = Iota(computation, mask_shape, r + 1);
  HloInstruction* inside = MakeBinary(
      HloOpcode::kAnd,
      Compare(coordinate, MakeBroadcast(starts, mask_shape, map), ComparisonDirection::kGe),
      Compare(coordinate, MakeBroadcast(ends, mask_shape, map), ComparisonDirection::kLt),
      ShapeUtil::MakeShape(PRED, grouped));
  const Shape copies_shape = ShapeUtil::MakeShape(lhs_shape.element_type(), grouped);
  std::vector<int64_t> lhs_map;
  for (int64_t d = 0; d < lhs_shape.rank(); ++d) lhs_map.push_back(d + 1);
  HloInstruction* copies =
      Select(inside, MakeBroadcast(lhs, copies_shape, lhs_map), Zeros(computation, copies_shape));

  DotDimensionNumbers grouped_dnums;
  for (int64_t d : dnums.lhs_batch_dimensions()) grouped_dnums.add_lhs_batch_dimensions(d + 1);
  for (int64_t d : dnums.lhs_contracting_dimensions()) {
    grouped_dnums.add_lhs_contracting_dimensions(d + 1);
  }
  for (int64_t d : dnums.rhs_batch_dimensions()) grouped_dnums.add_rhs_batch_dimensions(d);
  for (int64_t d : dnums.rhs_contracting_dimensions()) {
    grouped_dnums.add_rhs_contracting_dimensions(d);
  }
  if (!contracting) {
    // g batched against rhs's group dimension, then the groups summed.
    grouped_dnums.mutable_lhs_batch_dimensions()->insert(
        grouped_dnums.mutable_lhs_batch_dimensions()->begin(), 0);
    grouped_dnums.mutable_rhs_batch_dimensions()->insert(
        grouped_dnums.mutable_rhs_batch_dimensions()->begin(), group_dims[0]);
    std::vector<int64_t> dims = {g};
    dims.insert(dims.end(), shape.dimensions().begin(), shape.dimensions().end());
    HloInstruction* products = Dot(copies, rhs, ShapeUtil::MakeShape(shape.element_type(), dims),
                                   grouped_dnums, dot.precision_config());
    return Sum(products, {0}, shape);
  }
  // g a free dimension of lhs: out [batch..., g, ...], moved to the front.
  std::vector<int64_t> dims(shape.dimensions().begin() + 1, shape.dimensions().end());
  dims.insert(dims.begin() + batch, g);
  HloInstruction* products = Dot(copies, rhs, ShapeUtil::MakeShape(shape.element_type(), dims),
                                 grouped_dnums, dot.precision_config());
  if (batch == 0) return products;
  std::vector<int64_t> permutation = {batch};
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d != batch) permutation.push_back(d);
  }
  return MakeTranspose(products, permutation);
}

}  // namespace

bool IsBlockScaledDotCall(const HloCustomCallInstruction& call) {
  return call.custom_call_target() == "__op$block_scaled_dot";
}

absl::StatusOr<bool> GpuDotVariantsToDot::Run(HloModule* module) {
  return ReplaceEachInstruction(module,
                                [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
                                  switch (instruction->opcode()) {
                                    case HloOpcode::kScaledDot:
                                      return ScaledDot(instruction);
                                    case HloOpcode::kRaggedDot:
                                      return RaggedDot(instruction);
                                    case HloOpcode::kCustomCall:
                                      return BlockScaledDot(instruction);
                                    default:
                                      return nullptr;
                                  }
                                });
}

}  // namespace axle::gpu
