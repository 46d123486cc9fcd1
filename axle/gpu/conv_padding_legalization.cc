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
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

bool CudnnType(PrimitiveType type) { return type == F32 || type == F16 || type == BF16; }

// Whether `convolution` is one cuDNN would take but for its padding (a
// forward or weight-gradient convolution, without lhs dilation).
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

// Whether `convolution` is an input gradient (lhs-dilated, window stride 1,
// no groups: cudnnConvolutionBackwardData) with asymmetric padding whose
// larger end cuDNN can take: at most the dilated window's span less one.
bool NeedsSymmetricBackwardDataPadding(const HloConvolutionInstruction& convolution) {
  const ConvolutionDimensionNumbers& numbers = convolution.convolution_dimension_numbers();
  const Window& window = convolution.window();
  const PrimitiveType type = convolution.shape().element_type();
  if (numbers.input_spatial_dimensions_size() != 2 || window.dimensions_size() != 2 ||
      convolution.batch_group_count() != 1 || convolution.feature_group_count() != 1 ||
      !CudnnType(type) || convolution.operand(0)->shape().element_type() != type ||
      convolution.operand(1)->shape().element_type() != type ||
      ShapeUtil::ElementsIn(convolution.shape()) == 0) {
    return false;
  }
  bool lhs_dilated = false;
  bool asymmetric = false;
  for (const WindowDimension& dimension : window.dimensions()) {
    const int64_t span = (dimension.size() - 1) * dimension.window_dilation();
    if (dimension.stride() != 1 || dimension.padding_low() < 0 || dimension.padding_high() < 0 ||
        std::max(dimension.padding_low(), dimension.padding_high()) > span) {
      return false;
    }
    lhs_dilated |= dimension.base_dilation() != 1;
    asymmetric |= dimension.padding_low() != dimension.padding_high();
  }
  return lhs_dilated && asymmetric;
}

// The input gradient with its padding made the larger end's on both ends,
// and the slice of its result that is the original's: the extra padding
// only adds outputs at the ends, which the slice drops.
HloInstruction* SymmetricBackwardData(HloConvolutionInstruction* convolution) {
  const ConvolutionDimensionNumbers& numbers = convolution->convolution_dimension_numbers();
  Window window = convolution->window();
  const Shape& shape = convolution->shape();
  std::vector<int64_t> wide_dims(shape.dimensions().begin(), shape.dimensions().end());
  std::vector<int64_t> starts(shape.rank(), 0);
  std::vector<int64_t> limits(shape.dimensions().begin(), shape.dimensions().end());
  for (int i = 0; i < window.dimensions_size(); ++i) {
    WindowDimension& dimension = (*window.mutable_dimensions())[i];
    const int64_t low = dimension.padding_low();
    const int64_t high = dimension.padding_high();
    const int64_t both = std::max(low, high);
    const int64_t output_dimension = numbers.output_spatial_dimensions(i);
    wide_dims[output_dimension] += (both - low) + (both - high);
    starts[output_dimension] = both - low;
    limits[output_dimension] = both - low + shape.dimensions(output_dimension);
    dimension.set_padding_low(both);
    dimension.set_padding_high(both);
  }
  Shape wide_shape = ShapeUtil::MakeShape(shape.element_type(), wide_dims);
  if (shape.has_layout()) *wide_shape.mutable_layout() = shape.layout();
  HloComputation* computation = convolution->parent();
  std::unique_ptr<HloInstruction> wide =
      convolution->CloneWithNewOperands(wide_shape, convolution->operands());
  cast<HloConvolutionInstruction>(wide.get())->mutable_attrs()->window = std::move(window);
  HloInstruction* added = computation->AddInstruction(std::move(wide));
  return MakeSlice(added, shape, std::move(starts), std::move(limits),
                   std::vector<int64_t>(shape.rank(), 1));
}

}  // namespace

absl::StatusOr<bool> GpuConvPaddingLegalization::Run(HloModule* module) {
  return ReplaceEachInstruction(
      module, [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
        auto* convolution = dyn_cast<HloConvolutionInstruction>(instruction);
        if (convolution == nullptr) return nullptr;
        if (NeedsLegalPadding(*convolution)) return Legalize(convolution);
        if (NeedsSymmetricBackwardDataPadding(*convolution)) {
          return SymmetricBackwardData(convolution);
        }
        return nullptr;
      });
}

}  // namespace axle::gpu
