// Convolution thunks: convolution and convolution epilogues through oneDNN,
// or a plain loop for what oneDNN does not take (see convolution_thunk.h).
#include "axle/cpu/runtime/convolution_thunk.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace axle::cpu {
namespace {

enum class Activation { kNone, kRelu, kLogistic, kTanh, kExp, kClamp };

// Where an array's elements come from: thunk operand `operand` or
// `literal`, both dense arrays of `buffer_shape`; element (i0, i1, ...) of
// the array is at element offset sum(i_d * strides[d]) of that buffer
// (stride 0 along broadcast dims).
struct Operand {
  int64_t operand = -1;  // index into the thunk's operands, or -1: `literal`
  std::shared_ptr<const Literal> literal;
  Shape buffer_shape;
  std::vector<int64_t> strides;
  PrimitiveType type() const { return buffer_shape.element_type(); }
};

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

// A fused parameter, constant or broadcast (of those) as an Operand.
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
    default:
      return Unsupported(instruction, "a convolution operand the convolution thunk cannot read");
  }
}

absl::StatusOr<double> SplatValue(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants) {
  AXLE_ASSIGN_OR_RETURN(Operand source, Resolve(instruction, constants));
  bool splat = source.literal != nullptr;
  for (int64_t stride : source.strides) splat = splat && stride == 0;
  if (!splat || source.literal->element_count() != 1) {
    return Unsupported(instruction, "an activation bound that is not a constant");
  }
  return source.literal->GetAsDouble(0);
}

std::vector<int64_t> Permuted(const std::vector<int64_t>& values,
                              const std::vector<int64_t>& order) {
  std::vector<int64_t> out;
  for (int64_t d : order) out.push_back(values[d]);
  return out;
}

// The convolution in canonical order: lhs [batch, feature, spatial...],
// rhs [output feature, input feature, spatial...], output [batch, feature,
// spatial...]. `*_order` maps canonical to HLO dims, `*_dims` are sizes in
// canonical order, strides of the Operands stay per HLO dim.
struct ConvPlan {
  Operand lhs, rhs;
  // Over the output's HLO dims: the result is (conv * scale + bias).
  std::optional<Operand> scale, bias;
  Activation activation = Activation::kNone;
  double low = 0, high = 0;  // clamp bounds
  PrimitiveType output_type = F32;
  Shape output_shape;
  int64_t spatial = 0;
  std::vector<int64_t> lhs_order, rhs_order, out_order;
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  std::vector<WindowDimension> window;
  int64_t feature_groups = 1, batch_groups = 1;

  std::vector<int64_t> LhsStrides() const { return Permuted(lhs.strides, lhs_order); }
  std::vector<int64_t> RhsStrides() const { return Permuted(rhs.strides, rhs_order); }
  // An epilogue operand's strides in the output's canonical order.
  std::vector<int64_t> OutputOrder(const Operand& operand) const {
    return Permuted(operand.strides, out_order);
  }
  std::vector<int64_t> OutStrides() const {
    return Permuted(ShapeUtil::RowMajorStrides(output_shape.dimensions()), out_order);
  }
};

absl::StatusOr<ConvPlan> MakePlan(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants) {
  ConvPlan plan;
  const HloInstruction* node = &instruction;
  bool in_fusion = instruction.opcode() == HloOpcode::kFusion;
  if (in_fusion) {
    node = cast<HloFusionInstruction>(&instruction)
               ->fused_instructions_computation()
               ->root_instruction();
    auto is_chain = [](const HloInstruction* value) {
      return value->opcode() == HloOpcode::kConvolution || value->opcode() == HloOpcode::kAdd ||
             value->opcode() == HloOpcode::kMultiply;
    };
    switch (node->opcode()) {
      case HloOpcode::kLogistic:
      case HloOpcode::kTanh:
      case HloOpcode::kExp:
        plan.activation = node->opcode() == HloOpcode::kLogistic ? Activation::kLogistic
                          : node->opcode() == HloOpcode::kTanh   ? Activation::kTanh
                                                                 : Activation::kExp;
        node = node->operand(0);
        break;
      case HloOpcode::kMaximum: {
        int chain = is_chain(node->operand(0)) ? 0 : 1;
        AXLE_ASSIGN_OR_RETURN(double zero, SplatValue(*node->operand(1 - chain), constants));
        if (zero != 0.0) return Unsupported(instruction, "a maximum that is not a relu");
        plan.activation = Activation::kRelu;
        node = node->operand(chain);
        break;
      }
      case HloOpcode::kClamp: {
        AXLE_ASSIGN_OR_RETURN(plan.low, SplatValue(*node->operand(0), constants));
        AXLE_ASSIGN_OR_RETURN(plan.high, SplatValue(*node->operand(2), constants));
        plan.activation = Activation::kClamp;
        node = node->operand(1);
        break;
      }
      default:
        break;
    }
    if (node->opcode() == HloOpcode::kAdd) {
      int chain = is_chain(node->operand(0)) ? 0 : 1;
      AXLE_ASSIGN_OR_RETURN(Operand bias, Resolve(*node->operand(1 - chain), constants));
      plan.bias = std::move(bias);
      node = node->operand(chain);
    }
    if (node->opcode() == HloOpcode::kMultiply) {
      int chain = node->operand(0)->opcode() == HloOpcode::kConvolution ? 0 : 1;
      AXLE_ASSIGN_OR_RETURN(Operand scale, Resolve(*node->operand(1 - chain), constants));
      plan.scale = std::move(scale);
      node = node->operand(chain);
    }
  }
  if (node->opcode() != HloOpcode::kConvolution) {
    return Unsupported(instruction, "a fusion the convolution thunk does not implement");
  }
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

const char* BaseOf(const ThunkContext& context, const Operand& operand,
                   const std::vector<int64_t>& operand_values) {
  if (operand.literal != nullptr) return static_cast<const char*>(operand.literal->untyped_data());
  return static_cast<const char*>(context.address(operand_values[operand.operand]));
}

// Copies `dims` elements of `size` bytes read at `strides` (elements, any
// sign) from `in` into the dense row-major array `out`.
void StridedCopy(const char* in, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t size, char* out) {
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < count; ++n) {
    std::memcpy(out + n * size, in + offset * size, size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// Advances `index` through `dims` in row-major order; false after the last.
bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// ---------------------------------------------------------------------------
// The loop path: any element type, accumulating in f64, c128 or wrapping
// 64-bit integers (pred: 0 / 1, any product makes it true), rounded like the
// interpreter (axle/eval/convolution.cc).

int64_t WrapTo(uint64_t value, PrimitiveType type) {
  int bits = primitive_util::BitWidth(type);
  if (bits >= 64) return static_cast<int64_t>(value);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (primitive_util::IsSignedIntegralType(type) && (value >> (bits - 1)) != 0) value |= ~mask;
  return static_cast<int64_t>(value);
}

// A 64-bit integer sum rounded to `type`: narrower types saturate.
int64_t SaturateTo(uint64_t sum, PrimitiveType type) {
  int bits = primitive_util::BitWidth(type);
  if (bits >= 64) return static_cast<int64_t>(sum);
  if (primitive_util::IsSignedIntegralType(type)) {
    int64_t high = (int64_t{1} << (bits - 1)) - 1;
    return std::clamp<int64_t>(static_cast<int64_t>(sum), -high - 1, high);
  }
  return static_cast<int64_t>(std::min<uint64_t>(sum, (uint64_t{1} << bits) - 1));
}

class LoopConvolutionThunk : public Thunk {
 public:
  LoopConvolutionThunk(std::string name, ConvPlan plan, std::vector<int64_t> operand_values,
                       int64_t output_value)
      : Thunk(std::move(name)),
        plan_(std::move(plan)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value) {
    if (primitive_util::IsComplexType(plan_.output_type)) {
      compute_type_ = C128;
    } else if (primitive_util::IsFloatingPointType(plan_.output_type)) {
      compute_type_ = F64;
    } else {
      compute_type_ = S64;
    }
  }

  absl::Status Execute(const ThunkContext& context) const override {
    switch (compute_type_) {
      case C128:
        return Run<complex128>(context);
      case F64:
        return Run<double>(context);
      default:
        return Run<uint64_t>(context);
    }
  }
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

 private:
  // The buffer under `operand` converted to the compute type.
  absl::StatusOr<Literal> Load(const ThunkContext& context, const Operand& operand) const {
    if (operand.literal != nullptr) return operand.literal->Convert(compute_type_);
    Literal raw(operand.buffer_shape);
    if (raw.size_bytes() > 0) {  // an empty operand may have no buffer
      std::memcpy(raw.untyped_data(), context.address(operand_values_[operand.operand]),
                  raw.size_bytes());
    }
    return raw.Convert(compute_type_);
  }

  template <typename T>
  absl::Status Run(const ThunkContext& context) const {
    const ConvPlan& p = plan_;
    AXLE_ASSIGN_OR_RETURN(Literal lhs_literal, Load(context, p.lhs));
    AXLE_ASSIGN_OR_RETURN(Literal rhs_literal, Load(context, p.rhs));
    Literal scale_literal, bias_literal;
    if (p.scale) {
      AXLE_ASSIGN_OR_RETURN(scale_literal, Load(context, *p.scale));
    }
    if (p.bias) {
      AXLE_ASSIGN_OR_RETURN(bias_literal, Load(context, *p.bias));
    }
    const T* in = static_cast<const T*>(lhs_literal.untyped_data());
    const T* kernel = static_cast<const T*>(rhs_literal.untyped_data());
    const T* scale = p.scale ? static_cast<const T*>(scale_literal.untyped_data()) : nullptr;
    const T* bias = p.bias ? static_cast<const T*>(bias_literal.untyped_data()) : nullptr;
    std::vector<int64_t> ls = p.LhsStrides(), rs = p.RhsStrides(), os = p.OutStrides();
    std::vector<int64_t> ss = p.scale ? p.OutputOrder(*p.scale) : std::vector<int64_t>();
    std::vector<int64_t> bs = p.bias ? p.OutputOrder(*p.bias) : std::vector<int64_t>();
    Literal result(ShapeUtil::MakeShape(compute_type_, p.output_shape.dimensions()));
    T* out = static_cast<T*>(result.untyped_data());
    const int64_t in_features = p.rhs_dims[1];
    const int64_t per_feature_group = p.out_dims[1] / p.feature_groups;
    const int64_t per_batch_group = p.out_dims[1] / p.batch_groups;
    const int64_t batch_group_size = p.lhs_dims[0] / p.batch_groups;
    std::vector<int64_t> k_dims(p.rhs_dims.begin() + 2, p.rhs_dims.end());
    int64_t out_count = 1, k_count = 1;
    for (int64_t d : p.out_dims) out_count *= d;
    for (int64_t d : k_dims) k_count *= d;
    std::vector<int64_t> o(p.out_dims.size(), 0), k(p.spatial, 0);
    for (int64_t e = 0; e < out_count; ++e, Next(p.out_dims, o)) {
      const int64_t oz = o[1];
      const int64_t in_base = (o[0] + (oz / per_batch_group) * batch_group_size) * ls[0] +
                              (oz / per_feature_group) * in_features * ls[1];
      T acc = T(0);
      std::fill(k.begin(), k.end(), 0);
      for (int64_t w = 0; w < k_count; ++w, Next(k_dims, k)) {
        int64_t in_offset = in_base, k_offset = oz * rs[0];
        bool inside = true;
        for (int64_t i = 0; i < p.spatial && inside; ++i) {
          const WindowDimension& window = p.window[i];
          int64_t dilated =
              o[2 + i] * window.stride() - window.padding_low() + k[i] * window.window_dilation();
          int64_t position = dilated / window.base_dilation();
          inside = dilated % window.base_dilation() == 0 && position >= 0 &&
                   position < p.lhs_dims[2 + i];
          in_offset += position * ls[2 + i];
          k_offset += (window.window_reversal() ? k_dims[i] - 1 - k[i] : k[i]) * rs[2 + i];
        }
        if (!inside) continue;
        for (int64_t iz = 0; iz < in_features; ++iz) {
          acc += in[in_offset + iz * ls[1]] * kernel[k_offset + iz * rs[1]];
        }
      }
      int64_t out_offset = 0, scale_offset = 0, bias_offset = 0;
      for (size_t d = 0; d < o.size(); ++d) {
        out_offset += o[d] * os[d];
        if (scale) scale_offset += o[d] * ss[d];
        if (bias) bias_offset += o[d] * bs[d];
      }
      out[out_offset] = Epilogue(acc, scale ? &scale[scale_offset] : nullptr,
                                 bias ? &bias[bias_offset] : nullptr);
    }
    AXLE_ASSIGN_OR_RETURN(Literal converted, result.Convert(p.output_type));
    if (converted.size_bytes() > 0) {
      std::memcpy(context.address(output_value_), converted.untyped_data(), converted.size_bytes());
    }
    return absl::OkStatus();
  }

  template <typename T>
  T Epilogue(T sum, const T* scale, const T* bias) const {
    if constexpr (std::is_same_v<T, uint64_t>) {
      // Integers: the sum saturates, multiply and add wrap in the result
      // type.
      const PrimitiveType type = plan_.output_type;
      if (type == PRED) {  // or of ands, as the interpreter's bool accumulator
        bool x = sum != 0 && (scale == nullptr || *scale != 0);
        return x || (bias != nullptr && *bias != 0);
      }
      int64_t x = SaturateTo(sum, type);
      if (scale != nullptr) x = WrapTo(static_cast<uint64_t>(x) * *scale, type);
      if (bias != nullptr) x = WrapTo(static_cast<uint64_t>(x) + *bias, type);
      if (primitive_util::IsUnsignedIntegralType(type)) {
        uint64_t u = static_cast<uint64_t>(x);
        if (plan_.activation == Activation::kClamp) {
          u = std::min(std::max(u, static_cast<uint64_t>(plan_.low)),
                       static_cast<uint64_t>(plan_.high));
        }
        return u;
      }
      if (plan_.activation == Activation::kRelu) x = std::max<int64_t>(x, 0);
      if (plan_.activation == Activation::kClamp) {
        x = std::min(std::max(x, static_cast<int64_t>(plan_.low)),
                     static_cast<int64_t>(plan_.high));
      }
      return static_cast<uint64_t>(x);
    } else if constexpr (std::is_same_v<T, double>) {
      double x = sum * (scale != nullptr ? *scale : 1.0) + (bias != nullptr ? *bias : 0.0);
      switch (plan_.activation) {
        case Activation::kRelu:
          return std::isnan(x) ? x : std::max(x, 0.0);
        case Activation::kClamp:
          return std::isnan(x) ? x : std::min(std::max(x, plan_.low), plan_.high);
        case Activation::kLogistic:
          return 1.0 / (1.0 + std::exp(-x));
        case Activation::kTanh:
          return std::tanh(x);
        case Activation::kExp:
          return std::exp(x);
        case Activation::kNone:
          return x;
      }
      return x;
    } else {
      T x = sum * (scale != nullptr ? *scale : T(1)) + (bias != nullptr ? *bias : T(0));
      switch (plan_.activation) {
        case Activation::kLogistic:
          return T(1.0) / (T(1.0) + std::exp(-x));
        case Activation::kTanh:
          return std::tanh(x);
        case Activation::kExp:
          return std::exp(x);
        default:
          return x;
      }
    }
  }

  ConvPlan plan_;
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  PrimitiveType compute_type_ = F64;
};

// ---------------------------------------------------------------------------
// The oneDNN path.

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::memory::data_type DnnlType(PrimitiveType type) {
  return type == BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// `size` bytes at a 64-byte boundary inside `storage`.
char* Aligned(std::vector<char>& storage, int64_t size) {
  storage.resize(std::max<int64_t>(1, size) + 64);
  char* data = storage.data();
  return data + (64 - reinterpret_cast<uintptr_t>(data) % 64);
}

bool IsReference(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

// oneDNN's reference or im2col + gemm implementation, which it picks for
// layouts its direct kernels do not take (NCHW f32, odd strides); in the
// primitive's preferred layouts plus reorders it runs faster.
bool IsFallback(const dnnl::convolution_forward::primitive_desc& pd) {
  return IsReference(pd) || std::strstr(pd.impl_info_str(), "gemm") != nullptr;
}

class DnnlConvolutionThunk : public Thunk {
 public:
  DnnlConvolutionThunk(std::string name, std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value) {}

  // Unimplemented when oneDNN declines the convolution.
  absl::Status Build(ConvPlan plan);

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  bool reference() const { return reference_; }

 private:
  // Copies the input into the dense channels-last buffer `out`: batch group
  // g of the input becomes features [g * C, (g + 1) * C), spatial dims are
  // lhs-dilated (holes are zeros) and cropped by negative padding.
  template <typename E>
  void GatherInput(const E* in, E* out) const;
  // The epilogue after the primitive (E: float or bfloat16, rounding after
  // each step).
  template <typename E>
  void EpilogueAfter(const E* scale, const E* bias, E* out) const;

  // The scale or bias of the epilogue: a dense array over the output's
  // canonical dims, 1 where it does not vary.
  struct EpilogueInput {
    Operand operand;
    std::vector<int64_t> dims, strides;  // strides into `operand`
    int64_t element_size = 4;
    dnnl::memory::desc desc;
    std::shared_ptr<char[]> constant;
  };
  EpilogueInput MakeEpilogueInput(const Operand& operand) const;
  // The dense array of `input` for this run (in `storage` unless constant).
  const char* EpilogueData(const ThunkContext& context, const EpilogueInput& input,
                           std::vector<char>& storage) const;

  ConvPlan plan_;
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  bool reference_ = false;
  int64_t element_size_ = 4;  // of the input and kernel
  // Input: read in place at src_offset_ (elements), or gathered.
  bool gather_input_ = false;
  int64_t src_offset_ = 0;
  std::vector<int64_t> crop_low_, src_spatial_;  // per spatial dim, of the dilated input
  dnnl::memory::desc src_user_desc_, src_desc_;
  std::optional<dnnl::reorder> src_reorder_;
  // Kernel: packed once (constant), or reordered from its user layout (a
  // dense copy first when window reversal or broadcasts need it).
  dnnl::memory packed_weights_;
  bool gather_weights_ = false;
  std::vector<int64_t> weights_gather_dims_, weights_gather_strides_;
  int64_t weights_gather_offset_ = 0;
  dnnl::memory::desc weights_user_desc_, weights_desc_;
  std::optional<dnnl::reorder> weights_reorder_;
  // Output: written in place, or reordered from the primitive's layout.
  dnnl::memory::desc dst_user_desc_, dst_desc_;
  std::optional<dnnl::reorder> dst_reorder_;
  std::optional<EpilogueInput> scale_, bias_;
  // The epilogue runs after the primitive instead of as post-ops: for bf16
  // results (rounded after each step, as the HLO says) and for a scale or
  // bias that varies along more than the feature dim (oneDNN 2.6 post-ops
  // mis-read a full-size operand whose layout differs from the output's).
  bool epilogue_after_ = false;
  dnnl::convolution_forward primitive_;
  int64_t scratchpad_size_ = 0;
};

absl::Status DnnlConvolutionThunk::Build(ConvPlan plan) {
  // oneDNN fixes a primitive's team size when it creates it: the size a run
  // gets when it runs alone.
  OmpTeamShare share(nullptr);
  plan_ = std::move(plan);
  const ConvPlan& p = plan_;
  element_size_ = primitive_util::ByteWidth(p.lhs.type());
  const int64_t groups = p.feature_groups * p.batch_groups;
  const int64_t batch = p.out_dims[0];
  const int64_t channels = p.lhs_dims[1] * p.batch_groups;  // features after batch groups
  auto none_zero = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] > 1 && strides[d] == 0) return false;
    }
    return true;
  };
  // Input.
  std::vector<int64_t> ls = p.LhsStrides();
  dnnl::memory::dims strides, dilates, padding_low, padding_high;
  gather_input_ = p.batch_groups > 1 || !none_zero(p.lhs_dims, ls);
  for (int64_t i = 0; i < p.spatial; ++i) {
    const WindowDimension& w = p.window[i];
    gather_input_ = gather_input_ || w.base_dilation() > 1;
    int64_t dilated = (p.lhs_dims[2 + i] - 1) * w.base_dilation() + 1;
    crop_low_.push_back(std::max<int64_t>(0, -w.padding_low()));
    src_spatial_.push_back(dilated - crop_low_.back() - std::max<int64_t>(0, -w.padding_high()));
    if (src_spatial_.back() <= 0) return absl::UnimplementedError("input cropped away");
    strides.push_back(w.stride());
    dilates.push_back(w.window_dilation() - 1);
    padding_low.push_back(std::max<int64_t>(0, w.padding_low()));
    padding_high.push_back(std::max<int64_t>(0, w.padding_high()));
  }
  dnnl::memory::dims src_dims = {batch, channels};
  src_dims.insert(src_dims.end(), src_spatial_.begin(), src_spatial_.end());
  dnnl::memory::dims src_strides(src_dims.size());
  if (gather_input_) {  // dense channels-last
    int64_t stride = 1;
    src_strides[1] = 1;
    stride = channels;
    for (int64_t i = p.spatial - 1; i >= 0; --i) {
      src_strides[2 + i] = stride;
      stride *= src_spatial_[i];
    }
    src_strides[0] = stride;
  } else {
    src_strides.assign(ls.begin(), ls.end());
    for (int64_t i = 0; i < p.spatial; ++i) src_offset_ += crop_low_[i] * ls[2 + i];
  }
  dnnl::memory::data_type type = DnnlType(p.lhs.type());
  src_user_desc_ = dnnl::memory::desc(src_dims, type, src_strides);
  // Kernel: [G, O/G, I, spatial...] (or [O, I, spatial...]).
  std::vector<int64_t> rs = p.RhsStrides();
  dnnl::memory::dims weights_dims, weights_strides;
  if (groups > 1) {
    weights_dims = {groups, p.rhs_dims[0] / groups};
    weights_strides = {p.rhs_dims[0] / groups * rs[0], rs[0]};
  } else {
    weights_dims = {p.rhs_dims[0]};
    weights_strides = {rs[0]};
  }
  for (size_t d = 1; d < p.rhs_dims.size(); ++d) {
    weights_dims.push_back(p.rhs_dims[d]);
    weights_strides.push_back(rs[d]);
  }
  gather_weights_ = !none_zero(weights_dims, weights_strides);
  for (int64_t i = 0; i < p.spatial; ++i) {
    if (!p.window[i].window_reversal()) continue;
    gather_weights_ = true;
    size_t d = weights_dims.size() - p.spatial + i;
    weights_gather_offset_ += (weights_dims[d] - 1) * weights_strides[d];
    weights_strides[d] = -weights_strides[d];
  }
  if (gather_weights_) {
    weights_gather_dims_ = weights_dims;
    weights_gather_strides_ = weights_strides;
    weights_user_desc_ = dnnl::memory::desc(weights_dims, DnnlType(p.rhs.type()),
                                            ShapeUtil::RowMajorStrides(weights_dims));
  } else {
    weights_user_desc_ = dnnl::memory::desc(weights_dims, DnnlType(p.rhs.type()), weights_strides);
  }
  dnnl::memory::desc weights_any(weights_dims, DnnlType(p.rhs.type()),
                                 dnnl::memory::format_tag::any);
  // Output.
  std::vector<int64_t> os = p.OutStrides();
  dst_user_desc_ = dnnl::memory::desc(p.out_dims, DnnlType(p.output_type), os);
  // Epilogue.
  epilogue_after_ = p.output_type == BF16;
  auto per_channel = [](const EpilogueInput& input) {
    for (size_t d = 0; d < input.dims.size(); ++d) {
      if (d != 1 && input.dims[d] != 1) return false;
    }
    return true;
  };
  if (p.scale) {
    scale_ = MakeEpilogueInput(*p.scale);
    epilogue_after_ = epilogue_after_ || !per_channel(*scale_);
  }
  if (p.bias) {
    bias_ = MakeEpilogueInput(*p.bias);
    epilogue_after_ = epilogue_after_ || !per_channel(*bias_);
  }
  dnnl::post_ops post_ops;
  if (scale_ && !epilogue_after_) {
    post_ops.append_binary(dnnl::algorithm::binary_mul, scale_->desc);
  }
  if (bias_ && !epilogue_after_) post_ops.append_binary(dnnl::algorithm::binary_add, bias_->desc);
  switch (epilogue_after_ ? Activation::kNone : p.activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      break;
    case Activation::kLogistic:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
      break;
    case Activation::kTanh:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_tanh, 0.f, 0.f);
      break;
    case Activation::kExp:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_exp, 0.f, 0.f);
      break;
    case Activation::kClamp:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, static_cast<float>(p.low),
                              static_cast<float>(p.high));
      break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;
  auto make = [&](const dnnl::memory::desc& src,
                  const dnnl::memory::desc& dst) -> std::optional<PrimitiveDesc> {
    try {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, src, weights_any,
                                           dst, strides, dilates, padding_low, padding_high);
      return PrimitiveDesc(desc, attr, Engine());
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  };
  // The operands' own layouts first; the primitive's preferred ones when
  // oneDNN would otherwise run a fallback implementation.
  std::optional<PrimitiveDesc> pd = make(src_user_desc_, dst_user_desc_);
  if (!pd || IsFallback(*pd)) {
    dnnl::memory::desc src_any(src_dims, type, dnnl::memory::format_tag::any);
    dnnl::memory::desc dst_any(p.out_dims, DnnlType(p.output_type), dnnl::memory::format_tag::any);
    std::optional<PrimitiveDesc> preferred = make(src_any, dst_any);
    if (preferred && (!pd || !IsFallback(*preferred))) pd = std::move(preferred);
  }
  if (!pd) return absl::UnimplementedError("oneDNN declines the convolution");
  reference_ = IsReference(*pd);
  try {
    scratchpad_size_ = static_cast<int64_t>(pd->scratchpad_desc().get_size());
    src_desc_ = pd->src_desc();
    dst_desc_ = pd->dst_desc();
    weights_desc_ = pd->weights_desc();
    if (src_desc_ != src_user_desc_) {
      src_reorder_ = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), src_user_desc_, Engine(), src_desc_));
    }
    if (dst_desc_ != dst_user_desc_) {
      dst_reorder_ = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), dst_desc_, Engine(), dst_user_desc_));
    }
    if (weights_desc_ != weights_user_desc_) {
      weights_reorder_ = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), weights_user_desc_, Engine(), weights_desc_));
    }
    if (p.rhs.literal != nullptr) {
      // Constant weights: into the primitive's layout once.
      const char* base = static_cast<const char*>(p.rhs.literal->untyped_data());
      std::vector<char> dense;
      if (gather_weights_) {
        char* out = Aligned(dense, weights_user_desc_.get_size());
        StridedCopy(base + weights_gather_offset_ * element_size_, weights_gather_dims_,
                    weights_gather_strides_, element_size_, out);
        base = out;
      }
      dnnl::memory user(weights_user_desc_, Engine(), const_cast<char*>(base));
      packed_weights_ = dnnl::memory(weights_desc_, Engine());
      dnnl::stream stream(Engine());
      dnnl::reorder(user, packed_weights_).execute(stream, user, packed_weights_);
      stream.wait();
      plan_.rhs.literal.reset();
    }
    primitive_ = dnnl::convolution_forward(*pd);
  } catch (const dnnl::error& error) {
    return absl::UnimplementedError(absl::StrCat("oneDNN convolution: ", error.what()));
  }
  return absl::OkStatus();
}

template <typename E>
void DnnlConvolutionThunk::GatherInput(const E* in, E* out) const {
  const ConvPlan& p = plan_;
  std::vector<int64_t> ls = p.LhsStrides();
  const int64_t batch = p.out_dims[0], features = p.lhs_dims[1];
  std::vector<int64_t> position(p.spatial, 0);
  for (int64_t n = 0; n < batch; ++n) {
    std::fill(position.begin(), position.end(), 0);
    do {
      // The input element under this dense spatial position, if any.
      bool hole = false;
      int64_t offset = n * ls[0];
      for (int64_t i = 0; i < p.spatial; ++i) {
        int64_t dilated = position[i] + crop_low_[i];
        int64_t d = p.window[i].base_dilation();
        hole = hole || dilated % d != 0;
        offset += dilated / d * ls[2 + i];
      }
      for (int64_t g = 0; g < p.batch_groups; ++g) {
        const E* from = in + offset + g * batch * ls[0];
        for (int64_t c = 0; c < features; ++c) *out++ = hole ? E() : from[c * ls[1]];
      }
    } while (Next(src_spatial_, position));
  }
}

DnnlConvolutionThunk::EpilogueInput DnnlConvolutionThunk::MakeEpilogueInput(
    const Operand& operand) const {
  EpilogueInput input;
  input.operand = operand;
  input.strides = plan_.OutputOrder(operand);
  input.element_size = primitive_util::ByteWidth(operand.type());
  input.dims = plan_.out_dims;
  for (size_t d = 0; d < input.dims.size(); ++d) {
    if (input.strides[d] == 0) input.dims[d] = 1;
  }
  input.desc = dnnl::memory::desc(input.dims, DnnlType(operand.type()),
                                  ShapeUtil::RowMajorStrides(input.dims));
  if (operand.literal != nullptr) {
    input.constant.reset(new char[input.desc.get_size() + 1]);
    StridedCopy(static_cast<const char*>(operand.literal->untyped_data()), input.dims,
                input.strides, input.element_size, input.constant.get());
    input.operand.literal.reset();
  }
  return input;
}

const char* DnnlConvolutionThunk::EpilogueData(const ThunkContext& context,
                                               const EpilogueInput& input,
                                               std::vector<char>& storage) const {
  if (input.constant) return input.constant.get();
  char* dense = Aligned(storage, input.desc.get_size());
  StridedCopy(BaseOf(context, input.operand, operand_values_), input.dims, input.strides,
              input.element_size, dense);
  return dense;
}

absl::Status DnnlConvolutionThunk::Execute(const ThunkContext& context) const {
  OmpTeamShare share(context.run_options);
  const ConvPlan& p = plan_;
  std::vector<char> gathered, src_storage, weights_dense, weights_storage, dst_storage,
      scale_storage, bias_storage, scratchpad;
  try {
    const dnnl::engine& engine = Engine();
    dnnl::stream stream(engine);
    std::unordered_map<int, dnnl::memory> args;
    // Input.
    const char* lhs = BaseOf(context, p.lhs, operand_values_);
    char* src = const_cast<char*>(lhs) + src_offset_ * element_size_;
    if (gather_input_) {
      src = Aligned(gathered, src_user_desc_.get_size());
      if (element_size_ == 2) {
        GatherInput(reinterpret_cast<const uint16_t*>(lhs), reinterpret_cast<uint16_t*>(src));
      } else {
        GatherInput(reinterpret_cast<const uint32_t*>(lhs), reinterpret_cast<uint32_t*>(src));
      }
    }
    dnnl::memory src_memory(src_user_desc_, engine, src);
    if (src_reorder_) {
      dnnl::memory user = src_memory;
      src_memory = dnnl::memory(src_desc_, engine, Aligned(src_storage, src_desc_.get_size()));
      src_reorder_->execute(stream, user, src_memory);
    }
    args[DNNL_ARG_SRC] = src_memory;
    // Kernel.
    if (packed_weights_) {
      args[DNNL_ARG_WEIGHTS] = packed_weights_;
    } else {
      const char* rhs = BaseOf(context, p.rhs, operand_values_);
      if (gather_weights_) {
        char* dense = Aligned(weights_dense, weights_user_desc_.get_size());
        StridedCopy(rhs + weights_gather_offset_ * element_size_, weights_gather_dims_,
                    weights_gather_strides_, element_size_, dense);
        rhs = dense;
      }
      dnnl::memory weights(weights_user_desc_, engine, const_cast<char*>(rhs));
      if (weights_reorder_) {
        dnnl::memory user = weights;
        weights =
            dnnl::memory(weights_desc_, engine, Aligned(weights_storage, weights_desc_.get_size()));
        weights_reorder_->execute(stream, user, weights);
      }
      args[DNNL_ARG_WEIGHTS] = weights;
    }
    // Output.
    char* out = static_cast<char*>(context.address(output_value_));
    dnnl::memory dst_memory(dst_desc_, engine,
                            dst_reorder_ ? Aligned(dst_storage, dst_desc_.get_size()) : out);
    args[DNNL_ARG_DST] = dst_memory;
    // Bias.
    // Scale and bias: post-ops 0 and 1 (or 0 without a scale).
    const char* scale = scale_ ? EpilogueData(context, *scale_, scale_storage) : nullptr;
    const char* bias = bias_ ? EpilogueData(context, *bias_, bias_storage) : nullptr;
    if (!epilogue_after_) {
      if (scale_) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            dnnl::memory(scale_->desc, engine, const_cast<char*>(scale));
      }
      if (bias_) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(scale_ ? 1 : 0) | DNNL_ARG_SRC_1] =
            dnnl::memory(bias_->desc, engine, const_cast<char*>(bias));
      }
    }
    if (scratchpad_size_ > 0) {
      dnnl::memory::desc scratch_desc({scratchpad_size_}, dnnl::memory::data_type::u8,
                                      dnnl::memory::format_tag::a);
      args[DNNL_ARG_SCRATCHPAD] =
          dnnl::memory(scratch_desc, engine, Aligned(scratchpad, scratchpad_size_));
    }
    primitive_.execute(stream, args);
    if (dst_reorder_) {
      dnnl::memory user(dst_user_desc_, engine, out);
      dst_reorder_->execute(stream, dst_memory, user);
    }
    stream.wait();
    if (epilogue_after_ && p.output_type == BF16) {
      EpilogueAfter(reinterpret_cast<const bfloat16*>(scale),
                    reinterpret_cast<const bfloat16*>(bias), reinterpret_cast<bfloat16*>(out));
    } else if (epilogue_after_) {
      EpilogueAfter(reinterpret_cast<const float*>(scale), reinterpret_cast<const float*>(bias),
                    reinterpret_cast<float*>(out));
    }
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution: ", error.what()));
  }
  return absl::OkStatus();
}

template <typename E>
void DnnlConvolutionThunk::EpilogueAfter(const E* scale, const E* bias, E* out) const {
  const ConvPlan& p = plan_;
  if (!p.scale && !p.bias && p.activation == Activation::kNone) return;
  std::vector<int64_t> os = p.OutStrides();
  // Strides into the dense scale / bias arrays (0 along their size-1 dims).
  auto dense_strides = [&](const std::optional<EpilogueInput>& input) {
    if (!input) return std::vector<int64_t>(os.size(), 0);
    std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(input->dims);
    for (size_t d = 0; d < strides.size(); ++d) {
      if (input->dims[d] == 1) strides[d] = 0;
    }
    return strides;
  };
  std::vector<int64_t> ss = dense_strides(scale_), bs = dense_strides(bias_);
  std::vector<int64_t> o(p.out_dims.size(), 0);
  int64_t count = 1;
  for (int64_t d : p.out_dims) count *= d;
  for (int64_t e = 0; e < count; ++e, Next(p.out_dims, o)) {
    int64_t out_offset = 0, scale_offset = 0, bias_offset = 0;
    for (size_t d = 0; d < o.size(); ++d) {
      out_offset += o[d] * os[d];
      scale_offset += o[d] * ss[d];
      bias_offset += o[d] * bs[d];
    }
    E& value = out[out_offset];
    if (scale != nullptr) {
      value = E(static_cast<float>(value) * static_cast<float>(scale[scale_offset]));
    }
    if (bias != nullptr) {
      value = E(static_cast<float>(value) + static_cast<float>(bias[bias_offset]));
    }
    float x = static_cast<float>(value);
    switch (p.activation) {
      case Activation::kNone:
        continue;
      case Activation::kRelu:
        x = std::isnan(x) ? x : std::max(x, 0.f);
        break;
      case Activation::kClamp:
        x = std::isnan(x)
                ? x
                : std::min(std::max(x, static_cast<float>(p.low)), static_cast<float>(p.high));
        break;
      case Activation::kLogistic:
        x = 1.f / (1.f + std::exp(-x));
        break;
      case Activation::kTanh:
        x = std::tanh(x);
        break;
      case Activation::kExp:
        x = std::exp(x);
        break;
    }
    value = E(x);
  }
}

bool DnnlTakes(const ConvPlan& plan) {
  PrimitiveType in = plan.lhs.type();
  if (in != plan.rhs.type() || (in != F32 && in != BF16)) return false;
  if (plan.output_type != F32 && !(in == BF16 && plan.output_type == BF16)) return false;
  if (plan.bias && plan.bias->type() != plan.output_type) return false;
  if (plan.scale && plan.scale->type() != plan.output_type) return false;
  if (plan.spatial < 1 || plan.spatial > 3) return false;
  if (plan.feature_groups > 1 && plan.batch_groups > 1) return false;
  for (const auto* dims : {&plan.lhs_dims, &plan.rhs_dims, &plan.out_dims}) {
    for (int64_t d : *dims) {
      if (d == 0) return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Thunk>> CreateConvolutionThunk(
    const HloInstruction& instruction, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value) {
  if (!instruction.shape().IsArray()) {
    return Unsupported(instruction, "a convolution with a tuple result");
  }
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan, MakePlan(instruction, constants));
  if (DnnlTakes(plan)) {
    auto thunk =
        std::make_unique<DnnlConvolutionThunk>(instruction.name(), operand_values, output_value);
    if (thunk->Build(plan).ok()) return std::unique_ptr<Thunk>(std::move(thunk));
  }
  return std::unique_ptr<Thunk>(std::make_unique<LoopConvolutionThunk>(
      instruction.name(), std::move(plan), std::move(operand_values), output_value));
}

absl::StatusOr<std::string> ConvolutionThunkKind(const Thunk& thunk) {
  if (const auto* dnnl = dynamic_cast<const DnnlConvolutionThunk*>(&thunk)) {
    return std::string(dnnl->reference() ? "onednn-reference" : "onednn");
  }
  if (dynamic_cast<const LoopConvolutionThunk*>(&thunk) != nullptr) return std::string("loop");
  return absl::InvalidArgumentError("not a convolution thunk");
}

absl::Status EmitConvolutionThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  std::vector<int64_t> operand_values;
  std::vector<const Literal*> constants;
  for (const HloInstruction* operand : instruction.operands()) {
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(operand));
    operand_values.push_back(value);
    constants.push_back(builder.ConstantOf(value));
  }
  int64_t output = builder.DefineTemporary(&instruction, {}, instruction.shape());
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<Thunk> thunk,
      CreateConvolutionThunk(instruction, std::move(operand_values), constants, output));
  builder.AddThunk(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace axle::cpu
