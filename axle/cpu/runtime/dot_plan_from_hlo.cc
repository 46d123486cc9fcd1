//===- dot_plan_from_hlo.cc - A dot's plan from its HLO -------------------===//
//
// MakePlan and Resolve (dot_plan.h): the compiler's half of the plan. The
// rest of dot_plan.cc is what the thunks run, which links no HLO.
//
//===----------------------------------------------------------------------===//
#include <cstring>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/epilogue_plan.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/dot_dimensions.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu::dot {
namespace {

std::vector<int64_t> DimsOf(const Shape& shape) {
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

}  // namespace

// Resolves a parameter, constant or broadcast (of those) to a Source.
// `parameter_operand(i)` maps a parameter number to the thunk operand.
absl::StatusOr<Source> Resolve(const HloInstruction& instruction, bool in_fusion,
                               const std::vector<const Literal*>& constants) {
  Source source;
  source.type = instruction.shape().element_type();
  source.dims = DimsOf(instruction.shape());
  source.strides = ShapeUtil::RowMajorStrides(source.dims);
  switch (instruction.opcode()) {
    case HloOpcode::kParameter: {
      int64_t number = cast<HloParameterInstruction>(&instruction)->parameter_number();
      if (!in_fusion) break;
      if (constants[number] != nullptr) {
        source.literal = std::make_shared<const Literal>(constants[number]->Clone());
      } else {
        source.operand = number;
      }
      return source;
    }
    case HloOpcode::kConstant:
      if (!in_fusion) break;
      source.literal =
          std::make_shared<const Literal>(cast<HloConstantInstruction>(&instruction)->literal());
      return source;
    case HloOpcode::kBroadcast: {
      if (!in_fusion) break;
      AXLE_ASSIGN_OR_RETURN(Source inner, Resolve(*instruction.operand(0), true, constants));
      const auto& mapping = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      std::fill(source.strides.begin(), source.strides.end(), 0);
      for (size_t j = 0; j < mapping.size(); ++j) source.strides[mapping[j]] = inner.strides[j];
      source.operand = inner.operand;
      source.literal = std::move(inner.literal);
      return source;
    }
    default:
      break;
  }
  return Unsupported(instruction, "a dot operand the dot thunk cannot read");
}

absl::StatusOr<DotPlan> MakePlan(const HloInstruction& instruction,
                                 const std::vector<const Literal*>& constants) {
  DotPlan plan;
  AXLE_ASSIGN_OR_RETURN(EpiloguePlan epilogue,
                        PlanEpilogue(instruction, HloOpcode::kDot, constants));
  const bool in_fusion = instruction.opcode() == HloOpcode::kFusion;
  TakeActivationAndChain(epilogue, plan);
  if (epilogue.bias != nullptr) {
    AXLE_ASSIGN_OR_RETURN(Source bias, Resolve(*epilogue.bias, true, constants));
    plan.bias = std::move(bias);
    plan.bias_add = epilogue.bias_add;
  }
  const HloInstruction* node = epilogue.core;
  const auto* dot = cast<HloDotInstruction>(node);
  const auto& numbers = dot->dot_dimension_numbers();
  for (auto precision : dot->precision_config().operand_precision()) {
    plan.packed_nibble = plan.packed_nibble || precision == PrecisionConfig::PACKED_NIBBLE;
  }
  if (in_fusion) {
    AXLE_ASSIGN_OR_RETURN(plan.lhs, Resolve(*node->operand(0), true, constants));
    AXLE_ASSIGN_OR_RETURN(plan.rhs, Resolve(*node->operand(1), true, constants));
  } else {
    for (int i = 0; i < 2; ++i) {
      Source& source = i == 0 ? plan.lhs : plan.rhs;
      const Shape& shape = node->operand(i)->shape();
      source.type = shape.element_type();
      source.dims = DimsOf(shape);
      source.strides = ShapeUtil::RowMajorStrides(source.dims);
      if (constants[i] != nullptr) {
        source.literal = std::make_shared<const Literal>(constants[i]->Clone());
      } else {
        source.operand = i;
      }
    }
  }
  std::vector<int64_t> lhs_batch(numbers.lhs_batch_dimensions().begin(),
                                 numbers.lhs_batch_dimensions().end());
  std::vector<int64_t> rhs_batch(numbers.rhs_batch_dimensions().begin(),
                                 numbers.rhs_batch_dimensions().end());
  std::vector<int64_t> lhs_contracting(numbers.lhs_contracting_dimensions().begin(),
                                       numbers.lhs_contracting_dimensions().end());
  std::vector<int64_t> rhs_contracting(numbers.rhs_contracting_dimensions().begin(),
                                       numbers.rhs_contracting_dimensions().end());
  plan.lhs_groups = {lhs_batch, DotFreeDimensions(plan.lhs.dims.size(), lhs_batch, lhs_contracting),
                     lhs_contracting};
  plan.rhs_groups = {rhs_batch, rhs_contracting,
                     DotFreeDimensions(plan.rhs.dims.size(), rhs_batch, rhs_contracting)};
  for (int64_t d : lhs_batch) plan.batch *= plan.lhs.dims[d];
  for (int64_t d : plan.lhs_groups[1]) plan.m *= plan.lhs.dims[d];
  for (int64_t d : lhs_contracting) plan.k *= plan.lhs.dims[d];
  for (int64_t d : plan.rhs_groups[2]) plan.n *= plan.rhs.dims[d];
  plan.output_type = instruction.shape().element_type();
  plan.output_dims = DimsOf(instruction.shape());
  plan.output_batch_rank = static_cast<int64_t>(lhs_batch.size());
  plan.output_m_rank = static_cast<int64_t>(plan.lhs_groups[1].size());
  return plan;
}

}  // namespace axle::cpu::dot
