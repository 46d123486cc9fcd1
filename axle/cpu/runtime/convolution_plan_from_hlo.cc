//===- convolution_plan_from_hlo.cc - A convolution's plan from its HLO ---===//
//
// MakePlan and Resolve (convolution_plan.h): the compiler's half of the
// plan. The rest of convolution_plan.cc is what the thunks run, which
// links no HLO.
//
//===----------------------------------------------------------------------===//
#include <cstring>

#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/epilogue_plan.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu::conv {
namespace {

Operand PlainOperand(const Shape& shape, int64_t number, const Literal* constant) {
  Operand operand;
  operand.buffer_shape = shape;
  operand.strides = ShapeUtil::RowMajorStrides(shape.dimensions());
  if (constant != nullptr) {
    operand.literal = std::make_shared<const Literal>(constant->Clone());
  } else {
    operand.operand = number;
  }
  return operand;
}

}  // namespace

absl::StatusOr<Operand> Resolve(const HloInstruction& instruction,
                                const std::vector<const Literal*>& constants) {
  switch (instruction.opcode()) {
    case HloOpcode::kParameter: {
      int64_t number = cast<HloParameterInstruction>(&instruction)->parameter_number();
      return PlainOperand(instruction.shape(), number, constants[number]);
    }
    case HloOpcode::kConstant:
      return PlainOperand(instruction.shape(), -1,
                          &cast<HloConstantInstruction>(&instruction)->literal());
    case HloOpcode::kBroadcast: {
      AXLE_ASSIGN_OR_RETURN(Operand inner, Resolve(*instruction.operand(0), constants));
      const auto& mapping = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      std::vector<int64_t> strides(instruction.shape().rank(), 0);
      for (size_t j = 0; j < mapping.size(); ++j) strides[mapping[j]] = inner.strides[j];
      inner.strides = std::move(strides);
      return inner;
    }
    case HloOpcode::kTranspose: {
      // Element i of the transpose is element p[i] of its operand.
      AXLE_ASSIGN_OR_RETURN(Operand inner, Resolve(*instruction.operand(0), constants));
      inner.strides =
          Permuted(inner.strides, cast<HloDimensionsInstruction>(&instruction)->dimensions());
      return inner;
    }
    default:
      return Unsupported(instruction, "a convolution operand the convolution thunk cannot read");
  }
}

absl::StatusOr<ConvPlan> MakePlan(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants) {
  ConvPlan plan;
  AXLE_ASSIGN_OR_RETURN(EpiloguePlan epilogue,
                        PlanEpilogue(instruction, HloOpcode::kConvolution, constants));
  const bool in_fusion = instruction.opcode() == HloOpcode::kFusion;
  TakeActivationAndChain(epilogue, plan);
  if (epilogue.bias != nullptr) {
    AXLE_ASSIGN_OR_RETURN(Operand bias, Resolve(*epilogue.bias, constants));
    plan.bias = std::move(bias);
  }
  if (epilogue.scale != nullptr) {
    AXLE_ASSIGN_OR_RETURN(Operand scale, Resolve(*epilogue.scale, constants));
    plan.scale = std::move(scale);
  }
  if (epilogue.addend != nullptr) {
    AXLE_ASSIGN_OR_RETURN(Operand addend, Resolve(*epilogue.addend, constants));
    plan.addend = std::move(addend);
    plan.addend_add = epilogue.addend_add;
  }
  const HloInstruction* node = epilogue.core;
  const auto* conv = cast<HloConvolutionInstruction>(node);
  if (in_fusion) {
    AXLE_ASSIGN_OR_RETURN(plan.lhs, Resolve(*conv->operand(0), constants));
    AXLE_ASSIGN_OR_RETURN(plan.rhs, Resolve(*conv->operand(1), constants));
  } else {
    plan.lhs = PlainOperand(conv->operand(0)->shape(), 0, constants[0]);
    plan.rhs = PlainOperand(conv->operand(1)->shape(), 1, constants[1]);
  }
  const ConvolutionDimensionNumbers& dn = conv->convolution_dimension_numbers();
  plan.spatial = dn.input_spatial_dimensions_size();
  plan.lhs_order = {dn.input_batch_dimension(), dn.input_feature_dimension()};
  plan.rhs_order = {dn.kernel_output_feature_dimension(), dn.kernel_input_feature_dimension()};
  plan.out_order = {dn.output_batch_dimension(), dn.output_feature_dimension()};
  for (int64_t i = 0; i < plan.spatial; ++i) {
    plan.lhs_order.push_back(dn.input_spatial_dimensions(i));
    plan.rhs_order.push_back(dn.kernel_spatial_dimensions(i));
    plan.out_order.push_back(dn.output_spatial_dimensions(i));
  }
  plan.output_shape = instruction.shape();
  plan.output_type = instruction.shape().element_type();
  const Shape& lhs_shape = conv->operand(0)->shape();
  const Shape& rhs_shape = conv->operand(1)->shape();
  if (lhs_shape.rank() != plan.spatial + 2 || rhs_shape.rank() != plan.spatial + 2 ||
      conv->shape().rank() != plan.spatial + 2 ||
      conv->window().dimensions_size() != plan.spatial) {
    return Unsupported(instruction, "a convolution whose ranks do not match its dim_labels");
  }
  plan.lhs_dims = Permuted(lhs_shape.dimensions(), plan.lhs_order);
  plan.rhs_dims = Permuted(rhs_shape.dimensions(), plan.rhs_order);
  plan.out_dims = Permuted(conv->shape().dimensions(), plan.out_order);
  for (int64_t i = 0; i < plan.spatial; ++i) plan.window.push_back(conv->window().dimensions(i));
  plan.feature_groups = conv->feature_group_count();
  plan.batch_groups = conv->batch_group_count();
  if (plan.feature_groups < 1 || plan.batch_groups < 1 ||
      plan.out_dims[1] % plan.feature_groups != 0 || plan.out_dims[1] % plan.batch_groups != 0 ||
      plan.lhs_dims[0] % plan.batch_groups != 0 ||
      plan.lhs_dims[1] != plan.rhs_dims[1] * plan.feature_groups) {
    return Unsupported(instruction, "a convolution with inconsistent group counts");
  }
  return plan;
}

}  // namespace axle::cpu::conv
