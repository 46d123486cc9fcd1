//===- cudnn_conv_calls.cc - XLA:GPU's __cudnn$conv* calls as convolutions -===//
#include "axle/gpu/cudnn_conv_calls.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

std::optional<CudnnConvCallKind> KindOf(absl::string_view target) {
  if (target == "__cudnn$convForward") return CudnnConvCallKind::kForward;
  if (target == "__cudnn$convBackwardInput") return CudnnConvCallKind::kBackwardInput;
  if (target == "__cudnn$convBackwardFilter") return CudnnConvCallKind::kBackwardFilter;
  if (target == "__cudnn$convBiasActivationForward") {
    return CudnnConvCallKind::kBiasActivationForward;
  }
  return std::nullopt;
}

absl::Status Unsupported(const HloInstruction& call, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(
      "custom-call ", call.name(), " (",
      cast<HloCustomCallInstruction>(&call)->custom_call_target(), ") on CUDA: ", why));
}

absl::Status Invalid(const HloInstruction& call, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("custom-call ", call.name(), " (",
                   cast<HloCustomCallInstruction>(&call)->custom_call_target(), "): ", why));
}

// The text after `"key"` (or a bare key) and its colon within `object`,
// or nullopt where the key is absent.
std::optional<absl::string_view> ValueAfter(absl::string_view object, absl::string_view key) {
  size_t at = 0;
  while ((at = object.find(key, at)) != absl::string_view::npos) {
    const bool starts = at == 0 || (!absl::ascii_isalnum(object[at - 1]) && object[at - 1] != '_');
    size_t end = at + key.size();
    at = end;
    if (!starts ||
        (end < object.size() && (absl::ascii_isalnum(object[end]) || object[end] == '_'))) {
      continue;
    }
    if (end < object.size() && object[end] == '"') ++end;
    while (end < object.size() && absl::ascii_isspace(object[end])) ++end;
    if (end >= object.size() || object[end] != ':') continue;
    ++end;
    while (end < object.size() && absl::ascii_isspace(object[end])) ++end;
    return object.substr(end);
  }
  return std::nullopt;
}

absl::StatusOr<double> NumberAt(absl::string_view value, absl::string_view key) {
  // protobuf's JSON may quote numbers.
  if (!value.empty() && value[0] == '"') value.remove_prefix(1);
  const std::string text(value.substr(0, std::min<size_t>(value.size(), 64)));
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cudnn_conv_backend_config: ", key, " is not a number"));
  }
  return number;
}

// stream_executor's dnn.proto ActivationMode, by number.
constexpr const char* kActivationModes[] = {"kNone",      "kSigmoid",  "kRelu",     "kRelu6",
                                            "kReluX",     "kTanh",     "kBandPass", "kElu",
                                            "kLeakyRelu", "kGeluExact"};

// An activation_mode: its enum name ("kRelu") or number (2, "2"), as
// protobuf's JSON writes either.
absl::StatusOr<std::string> ActivationModeAt(absl::string_view value) {
  const bool quoted = !value.empty() && value[0] == '"';
  if (quoted) value.remove_prefix(1);
  size_t end = 0;
  while (end < value.size() && (absl::ascii_isalnum(value[end]) || value[end] == '_')) ++end;
  const absl::string_view word = value.substr(0, end);
  if (word.empty() || (quoted && (end >= value.size() || value[end] != '"'))) {
    return absl::InvalidArgumentError(
        "cudnn_conv_backend_config: activation_mode is neither a name nor a number");
  }
  if (!absl::ascii_isdigit(word[0])) return std::string(word);
  int number = 0;
  if (!absl::SimpleAtoi(word, &number) || number < 0 ||
      number >= static_cast<int>(std::size(kActivationModes))) {
    return absl::InvalidArgumentError(
        absl::StrCat("cudnn_conv_backend_config: activation_mode ", word, " is no ActivationMode"));
  }
  return std::string(kActivationModes[number]);
}

// The cudnn_conv_backend_config object's text (its braces balanced), or
// the whole text where it names no such object.
absl::string_view ConvConfigObject(absl::string_view text) {
  std::optional<absl::string_view> value = ValueAfter(text, "cudnn_conv_backend_config");
  if (!value.has_value() || value->empty() || (*value)[0] != '{') return text;
  int depth = 0;
  for (size_t i = 0; i < value->size(); ++i) {
    if ((*value)[i] == '{') ++depth;
    if ((*value)[i] == '}' && --depth == 0) return value->substr(0, i + 1);
  }
  return *value;
}

HloInstruction* Scalar(HloComputation* computation, double value, const Shape& shape) {
  absl::StatusOr<Literal> literal =
      LiteralUtil::CreateR0<double>(value).Convert(shape.element_type());
  CHECK(literal.ok()) << literal.status();  // a float type, checked by the caller
  return MakeFilledArray(computation, *literal, shape);
}

HloInstruction* Unary(HloOpcode opcode, HloInstruction* operand) {
  return operand->parent()->AddInstruction(
      HloInstruction::Create(opcode, operand->shape(), {operand}));
}

HloInstruction* Binary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs) {
  return MakeBinary(opcode, lhs, rhs, lhs->shape());
}

// select(v > 0, v, negative)
HloInstruction* WhereNegative(HloInstruction* v, HloInstruction* negative) {
  HloComputation* computation = v->parent();
  Shape pred_shape = v->shape();
  pred_shape.set_element_type(PRED);
  auto compare = std::make_unique<HloCompareInstruction>(
      HloOpcode::kCompare, pred_shape,
      std::vector<HloInstruction*>{v, Scalar(computation, 0, v->shape())});
  compare->mutable_attrs()->direction = ComparisonDirection::kGt;
  HloInstruction* positive = computation->AddInstruction(std::move(compare));
  return computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kSelect, v->shape(), {positive, v, negative}));
}

absl::StatusOr<HloInstruction*> Activate(const HloInstruction& call, HloInstruction* v,
                                         const CudnnConvCallConfig& config) {
  HloComputation* computation = v->parent();
  const std::string& mode = config.activation_mode;
  if (mode == "kNone") return v;
  if (mode == "kRelu") return Binary(HloOpcode::kMaximum, v, Scalar(computation, 0, v->shape()));
  if (mode == "kRelu6") {
    HloInstruction* relu = Binary(HloOpcode::kMaximum, v, Scalar(computation, 0, v->shape()));
    return Binary(HloOpcode::kMinimum, relu, Scalar(computation, 6, v->shape()));
  }
  if (mode == "kElu") return WhereNegative(v, Unary(HloOpcode::kExpm1, v));
  if (mode == "kLeakyRelu") {
    return WhereNegative(v, Binary(HloOpcode::kMultiply, v,
                                   Scalar(computation, config.leakyrelu_alpha, v->shape())));
  }
  if (mode == "kSigmoid") return Unary(HloOpcode::kLogistic, v);
  if (mode == "kTanh") return Unary(HloOpcode::kTanh, v);
  return Unsupported(call, absl::StrCat("activation_mode ", mode));
}

// A convolution of `lhs` and `rhs` with these attributes, checked against
// the shape the call claims for its result.
absl::StatusOr<HloInstruction*> AddConvolution(const HloInstruction& call, HloInstruction* lhs,
                                               HloInstruction* rhs, const Shape& shape,
                                               ConvolutionAttrs attrs) {
  absl::StatusOr<Shape> inferred = ShapeInference::InferConvolveShape(
      lhs->shape(), rhs->shape(), attrs.feature_group_count, attrs.batch_group_count, attrs.window,
      attrs.convolution_dimension_numbers, shape.element_type());
  if (!inferred.ok()) return Invalid(call, inferred.status().message());
  if (!ShapeUtil::Compatible(*inferred, shape)) {
    return Invalid(
        call, absl::StrCat("its window and dim_labels give ", ShapeUtil::HumanString(*inferred),
                           ", not the result's ", ShapeUtil::HumanString(shape)));
  }
  auto convolution = std::make_unique<HloConvolutionInstruction>(
      HloOpcode::kConvolution, shape, std::vector<HloInstruction*>{lhs, rhs});
  *convolution->mutable_attrs() = std::move(attrs);
  return call.parent()->AddInstruction(std::move(convolution));
}

// dx of the forward convolution the call describes: dy dilated by the
// forward strides, convolved with the kernel reversed and its features
// swapped, padded so that dx gets the input's size.
absl::StatusOr<ConvolutionAttrs> BackwardInputAttrs(const HloInstruction& call,
                                                    const ConvolutionAttrs& forward,
                                                    const Shape& dx, const Shape& dy) {
  if (forward.feature_group_count != 1 || forward.batch_group_count != 1) {
    return Unsupported(call, "grouped input gradients");
  }
  const ConvolutionDimensionNumbers& f = forward.convolution_dimension_numbers;
  ConvolutionAttrs attrs = forward;
  ConvolutionDimensionNumbers& b = attrs.convolution_dimension_numbers;
  b.set_input_batch_dimension(f.output_batch_dimension());
  b.set_input_feature_dimension(f.output_feature_dimension());
  *b.mutable_input_spatial_dimensions() = f.output_spatial_dimensions();
  b.set_kernel_input_feature_dimension(f.kernel_output_feature_dimension());
  b.set_kernel_output_feature_dimension(f.kernel_input_feature_dimension());
  b.set_output_batch_dimension(f.input_batch_dimension());
  b.set_output_feature_dimension(f.input_feature_dimension());
  *b.mutable_output_spatial_dimensions() = f.input_spatial_dimensions();
  for (int i = 0; i < forward.window.dimensions_size(); ++i) {
    const WindowDimension& w = forward.window.dimensions(i);
    if (w.base_dilation() != 1) return Unsupported(call, "an lhs-dilated forward convolution");
    const int64_t in = dx.dimensions(f.input_spatial_dimensions(i));
    const int64_t out = dy.dimensions(f.output_spatial_dimensions(i));
    WindowDimension& d = (*attrs.window.mutable_dimensions())[i];
    const int64_t span = (w.size() - 1) * w.window_dilation();
    d.set_stride(1);
    d.set_base_dilation(w.stride());
    d.set_padding_low(span - w.padding_low());
    d.set_padding_high(in - 1 - (out - 1) * w.stride() + w.padding_low());
    d.set_window_reversal(!w.window_reversal());
  }
  return attrs;
}

// dw: x with batch and feature exchanged, convolved with dy as the kernel
// (dy's batch the input feature), the forward strides as window dilation
// and its dilation as window stride; groups as batch groups.
absl::StatusOr<ConvolutionAttrs> BackwardFilterAttrs(const HloInstruction& call,
                                                     const ConvolutionAttrs& forward,
                                                     const Shape& x, const Shape& dy) {
  if (forward.batch_group_count != 1) return Unsupported(call, "batch-grouped filter gradients");
  const ConvolutionDimensionNumbers& f = forward.convolution_dimension_numbers;
  ConvolutionAttrs attrs = forward;
  attrs.feature_group_count = 1;
  attrs.batch_group_count = forward.feature_group_count;
  ConvolutionDimensionNumbers& b = attrs.convolution_dimension_numbers;
  b.set_input_batch_dimension(f.input_feature_dimension());
  b.set_input_feature_dimension(f.input_batch_dimension());
  b.set_kernel_input_feature_dimension(f.output_batch_dimension());
  b.set_kernel_output_feature_dimension(f.output_feature_dimension());
  *b.mutable_kernel_spatial_dimensions() = f.output_spatial_dimensions();
  b.set_output_batch_dimension(f.kernel_input_feature_dimension());
  b.set_output_feature_dimension(f.kernel_output_feature_dimension());
  *b.mutable_output_spatial_dimensions() = f.kernel_spatial_dimensions();
  for (int i = 0; i < forward.window.dimensions_size(); ++i) {
    const WindowDimension& w = forward.window.dimensions(i);
    if (w.base_dilation() != 1) return Unsupported(call, "an lhs-dilated forward convolution");
    if (w.window_reversal()) return Unsupported(call, "window reversal in a filter gradient");
    const int64_t in = x.dimensions(f.input_spatial_dimensions(i));
    const int64_t out = dy.dimensions(f.output_spatial_dimensions(i));
    WindowDimension& d = (*attrs.window.mutable_dimensions())[i];
    d.set_size(out);
    d.set_stride(w.window_dilation());
    d.set_window_dilation(w.stride());
    d.set_padding_low(w.padding_low());
    d.set_padding_high((w.size() - 1) * w.window_dilation() + (out - 1) * w.stride() + 1 - in -
                       w.padding_low());
  }
  return attrs;
}

// The dimensions of `shape` with its trailing (vector) dimension merged
// into dimension `feature`, the one before it: cuDNN's INT8x4 / INT8x32
// layouts, where feature f * v + k is element k of vector f.
std::optional<Shape> MergeVector(const Shape& shape, int64_t feature) {
  const int64_t rank = shape.rank();
  if (rank < 2 || feature != rank - 2) return std::nullopt;
  std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end() - 1);
  dims[feature] *= shape.dimensions(rank - 1);
  return ShapeUtil::MakeShapeWithDescendingLayout(shape.element_type(), dims);
}

// An int8 convForward: convolution(s8, s8) -> s32, then the result type.
// Operands one rank above the dim_labels carry cuDNN's feature vectors in
// their trailing dimension (XLA's vectorized int8 convolutions): merged
// into the features before, split again after.
absl::StatusOr<HloInstruction*> LowerInt8(HloCustomCallInstruction* call,
                                          const CudnnConvCallConfig& config) {
  const CustomCallAttrs& custom = call->attrs();
  const Shape& result = call->shape().tuple_shapes(0);
  const ConvolutionDimensionNumbers& numbers = *custom.convolution_dimension_numbers;
  HloInstruction* a = call->mutable_operand(0);
  HloInstruction* b = call->mutable_operand(1);
  Shape conv_shape = result;
  const int64_t labelled = numbers.input_spatial_dimensions_size() + 2;
  const bool vectorized = a->shape().rank() == labelled + 1;
  if (vectorized) {
    std::optional<Shape> x = MergeVector(a->shape(), numbers.input_feature_dimension());
    std::optional<Shape> w = MergeVector(b->shape(), numbers.kernel_input_feature_dimension());
    std::optional<Shape> y = MergeVector(result, numbers.output_feature_dimension());
    if (!x || !w || !y || b->shape().rank() != labelled + 1 || result.rank() != labelled + 1) {
      return Unsupported(*call, "vectorized features not next to their feature dimension");
    }
    a = MakeReshape(a, *x);
    b = MakeReshape(b, *w);
    conv_shape = *y;
  }
  conv_shape.set_element_type(S32);
  ConvolutionAttrs forward;
  forward.window = *custom.window;
  forward.convolution_dimension_numbers = numbers;
  forward.feature_group_count = custom.feature_group_count;
  forward.batch_group_count = custom.batch_group_count;
  forward.precision_config = custom.precision_config;
  AXLE_ASSIGN_OR_RETURN(HloInstruction * value,
                        AddConvolution(*call, a, b, conv_shape, std::move(forward)));
  HloComputation* computation = call->parent();
  if (result.element_type() == S8) {
    value = Binary(HloOpcode::kMaximum, value, Scalar(computation, -128, value->shape()));
    value = Binary(HloOpcode::kMinimum, value, Scalar(computation, 127, value->shape()));
  }
  if (result.element_type() != S32) value = MakeConvert(value, result.element_type());
  if (result.element_type() == F32 && config.conv_result_scale != 1) {
    value = Binary(HloOpcode::kMultiply, value,
                   Scalar(computation, config.conv_result_scale, value->shape()));
  }
  if (config.activation_mode != "kNone") {
    return Unsupported(*call, absl::StrCat("activation_mode ", config.activation_mode,
                                           " outside convBiasActivationForward"));
  }
  if (vectorized) value = MakeReshape(value, result);
  HloInstruction* scratch =
      MakeFilledArray(computation, LiteralUtil::Zero(U8), call->shape().tuple_shapes(1));
  return MakeTuple(computation, {value, scratch});
}

// The call's value as HLO: a tuple of the computed array and zeros for the
// scratch.
absl::StatusOr<HloInstruction*> Lower(HloCustomCallInstruction* call) {
  const CudnnConvCallKind kind = *KindOf(call->custom_call_target());
  const CustomCallAttrs& custom = call->attrs();
  const Shape& shape = call->shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(0).IsArray() ||
      !shape.tuple_shapes(1).IsArray() || shape.tuple_shapes(1).element_type() != U8 ||
      shape.tuple_shapes(1).rank() != 1) {
    return Invalid(*call, "the result must be (array, u8[n] scratch)");
  }
  if (!custom.window.has_value() || !custom.convolution_dimension_numbers.has_value()) {
    return Invalid(*call, "no window or dim_labels");
  }
  const int64_t operands = call->operand_count();
  const bool fused = kind == CudnnConvCallKind::kBiasActivationForward;
  if (fused ? operands != 3 && operands != 4 : operands != 2) {
    return Invalid(*call, absl::StrCat(operands, " operands"));
  }
  const Shape& result = shape.tuple_shapes(0);
  const PrimitiveType type = result.element_type();
  // cuDNN's int8 forward convolutions: s8 operands, the products summed in
  // s32, the result s32, f32 (converted, then scaled) or s8 (saturated).
  const bool int8 = kind == CudnnConvCallKind::kForward && operands == 2 &&
                    call->operand(0)->shape().element_type() == S8 &&
                    (type == S8 || type == S32 || type == F32);
  for (const HloInstruction* operand : call->operands()) {
    if (!operand->shape().IsArray() || operand->shape().element_type() != (int8 ? S8 : type)) {
      return Unsupported(*call, "operands and result of different types");
    }
  }
  if (!int8 && !primitive_util::IsFloatingPointType(type)) {
    return Unsupported(*call, absl::StrCat(primitive_util::LowercasePrimitiveTypeName(type),
                                           " (floating-point types and int8 forward only)"));
  }
  absl::StatusOr<CudnnConvCallConfig> parsed =
      ParseCudnnConvBackendConfig(call->raw_backend_config_string());
  if (!parsed.ok()) return Invalid(*call, parsed.status().message());
  const CudnnConvCallConfig& config = *parsed;
  if (int8) {
    if (type != F32 && config.conv_result_scale != 1) {
      return Unsupported(*call,
                         absl::StrCat("an integer result scaled by ", config.conv_result_scale));
    }
    return LowerInt8(call, config);
  }

  ConvolutionAttrs forward;
  forward.window = *custom.window;
  forward.convolution_dimension_numbers = *custom.convolution_dimension_numbers;
  forward.feature_group_count = custom.feature_group_count;
  forward.batch_group_count = custom.batch_group_count;
  forward.precision_config = custom.precision_config;
  HloInstruction* a = call->mutable_operand(0);
  HloInstruction* b = call->mutable_operand(1);
  HloInstruction* value = nullptr;
  switch (kind) {
    case CudnnConvCallKind::kForward:
    case CudnnConvCallKind::kBiasActivationForward: {
      AXLE_ASSIGN_OR_RETURN(value, AddConvolution(*call, a, b, result, forward));
      break;
    }
    case CudnnConvCallKind::kBackwardInput: {
      AXLE_ASSIGN_OR_RETURN(ConvolutionAttrs attrs,
                            BackwardInputAttrs(*call, forward, result, a->shape()));
      AXLE_ASSIGN_OR_RETURN(value, AddConvolution(*call, a, b, result, std::move(attrs)));
      break;
    }
    case CudnnConvCallKind::kBackwardFilter: {
      AXLE_ASSIGN_OR_RETURN(ConvolutionAttrs attrs,
                            BackwardFilterAttrs(*call, forward, a->shape(), b->shape()));
      AXLE_ASSIGN_OR_RETURN(value, AddConvolution(*call, a, b, result, std::move(attrs)));
      break;
    }
  }
  HloComputation* computation = call->parent();
  if (config.conv_result_scale != 1) {
    value =
        Binary(HloOpcode::kMultiply, value, Scalar(computation, config.conv_result_scale, result));
  }
  if (fused) {
    HloInstruction* bias = call->mutable_operand(2);
    const int64_t feature = forward.convolution_dimension_numbers.output_feature_dimension();
    if (bias->shape().rank() != 1 || bias->shape().dimensions(0) != result.dimensions(feature)) {
      return Invalid(*call, "the bias must be 1-D, one element per output feature");
    }
    if (operands == 4 && config.side_input_scale != 0) {
      HloInstruction* side = call->mutable_operand(3);
      if (!ShapeUtil::Compatible(side->shape(), result)) {
        return Invalid(*call, "the side input must have the result's shape");
      }
      HloInstruction* scaled = side;
      if (config.side_input_scale != 1) {
        scaled = Binary(HloOpcode::kMultiply, side,
                        Scalar(computation, config.side_input_scale, side->shape()));
      }
      value = Binary(HloOpcode::kAdd, value, scaled);
    }
    value = Binary(HloOpcode::kAdd, value, MakeBroadcast(bias, result, {feature}));
    AXLE_ASSIGN_OR_RETURN(value, Activate(*call, value, config));
  } else if (config.activation_mode != "kNone") {
    return Unsupported(*call, absl::StrCat("activation_mode ", config.activation_mode,
                                           " outside convBiasActivationForward"));
  }
  HloInstruction* scratch =
      MakeFilledArray(computation, LiteralUtil::Zero(U8), shape.tuple_shapes(1));
  return MakeTuple(computation, {value, scratch});
}

}  // namespace

bool IsCudnnConvCall(const HloCustomCallInstruction& call) {
  return KindOf(call.custom_call_target()).has_value();
}

absl::StatusOr<CudnnConvCallConfig> ParseCudnnConvBackendConfig(absl::string_view text) {
  CudnnConvCallConfig config;
  const absl::string_view object = ConvConfigObject(text);
  if (std::optional<absl::string_view> value = ValueAfter(object, "conv_result_scale")) {
    AXLE_ASSIGN_OR_RETURN(config.conv_result_scale, NumberAt(*value, "conv_result_scale"));
  }
  if (std::optional<absl::string_view> value = ValueAfter(object, "side_input_scale")) {
    AXLE_ASSIGN_OR_RETURN(config.side_input_scale, NumberAt(*value, "side_input_scale"));
  }
  if (std::optional<absl::string_view> value = ValueAfter(object, "leakyrelu_alpha")) {
    AXLE_ASSIGN_OR_RETURN(config.leakyrelu_alpha, NumberAt(*value, "leakyrelu_alpha"));
  }
  if (std::optional<absl::string_view> value = ValueAfter(object, "activation_mode")) {
    AXLE_ASSIGN_OR_RETURN(config.activation_mode, ActivationModeAt(*value));
  }
  return config;
}

absl::StatusOr<bool> GpuCudnnConvCallsToHlo::Run(HloModule* module) {
  return ReplaceEachInstruction(module,
                                [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
                                  auto* call = dyn_cast<HloCustomCallInstruction>(instruction);
                                  if (call == nullptr || !IsCudnnConvCall(*call)) return nullptr;
                                  return Lower(call);
                                });
}

}  // namespace axle::gpu
