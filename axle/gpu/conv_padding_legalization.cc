//===- conv_padding_legalization.cc - Convolutions cuDNN's padding takes --===//
#include "axle/gpu/conv_padding_legalization.h"

#include <algorithm>
#include <cstdint>
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

bool CudnnType(PrimitiveType type) { return type == F32 || type == F16 || type == BF16; }

// Whether `convolution` is one cuDNN would take but for its padding.
bool NeedsLegalPadding(const HloConvolutionInstruction& convolution) {
  const ConvolutionDimensionNumbers& numbers = convolution.convolution_dimension_numbers();
  const Window& window = convolution.window();
  const PrimitiveType type = convolution.shape().element_type();
  if (numbers.input_spatial_dimensions_size() != 2 || window.dimensions_size() != 2 ||
      convolution.batch_group_count() != 1 || !CudnnType(type) ||
      convolution.operand(0)->shape().element_type() != type ||
      convolution.operand(1)->shape().element_type() != type ||
      ShapeUtil::ElementsIn(convolution.shape()) == 0) {
    return false;
  }
  bool asymmetric = false;
  for (const WindowDimension& dimension : window.dimensions()) {
    if (dimension.base_dilation() != 1) return false;
    asymmetric |= dimension.padding_low() != dimension.padding_high() ||
                  dimension.padding_low() < 0 || dimension.padding_high() < 0;
  }
  return asymmetric;
}

// The convolution on its input padded explicitly by what cuDNN cannot take,
// or nullptr where that input would be empty (left to Axle's kernel).
HloInstruction* Legalize(HloConvolutionInstruction* convolution) {
  HloInstruction* input = convolution->mutable_operand(0);
  const Shape& input_shape = input->shape();
  const ConvolutionDimensionNumbers& numbers = convolution->convolution_dimension_numbers();
  Window window = convolution->window();
  PaddingConfig padding;
  for (int64_t d = 0; d < input_shape.rank(); ++d) padding.add_dimensions();
  std::vector<int64_t> padded_dims(input_shape.dimensions().begin(),
                                   input_shape.dimensions().end());
  for (int i = 0; i < window.dimensions_size(); ++i) {
    WindowDimension& dimension = (*window.mutable_dimensions())[i];
    const int64_t low = dimension.padding_low();
    const int64_t high = dimension.padding_high();
    const int64_t kept = std::max<int64_t>(0, std::min(low, high));
    const int64_t input_dimension = numbers.input_spatial_dimensions(i);
    auto& edge = (*padding.mutable_dimensions())[input_dimension];
    edge.set_edge_padding_low(low - kept);
    edge.set_edge_padding_high(high - kept);
    padded_dims[input_dimension] += (low - kept) + (high - kept);
    if (padded_dims[input_dimension] <= 0) return nullptr;
    dimension.set_padding_low(kept);
    dimension.set_padding_high(kept);
  }
  Shape padded_shape = ShapeUtil::MakeShape(input_shape.element_type(), padded_dims);
  if (input_shape.has_layout()) *padded_shape.mutable_layout() = input_shape.layout();
  HloComputation* computation = convolution->parent();
  HloInstruction* zero = MakeConstant(computation, LiteralUtil::Zero(input_shape.element_type()));
  HloInstruction* operands[] = {input, zero};
  auto pad = std::make_unique<HloPadInstruction>(HloOpcode::kPad, padded_shape, operands);
  pad->mutable_attrs()->padding_config = std::move(padding);
  HloInstruction* padded = computation->AddInstruction(std::move(pad));
  HloInstruction* new_operands[] = {padded, convolution->mutable_operand(1)};
  std::unique_ptr<HloInstruction> replacement =
      convolution->CloneWithNewOperands(convolution->shape(), new_operands);
  cast<HloConvolutionInstruction>(replacement.get())->mutable_attrs()->window = std::move(window);
  return computation->AddInstruction(std::move(replacement));
}

}  // namespace

absl::StatusOr<bool> GpuConvPaddingLegalization::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      auto* convolution = dyn_cast<HloConvolutionInstruction>(instruction);
      if (convolution == nullptr || !NeedsLegalPadding(*convolution)) continue;
      HloInstruction* replacement = Legalize(convolution);
      if (replacement == nullptr) continue;
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle::gpu
