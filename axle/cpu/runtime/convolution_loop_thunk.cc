// The convolution loop thunk: any element type, for what oneDNN does not
// take (see convolution_thunk.h).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/convolution_plan.h"

namespace axle::cpu::conv {
namespace {

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
      return ApplyActivation(plan_.activation, x, plan_.low, plan_.high);
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

}  // namespace

std::unique_ptr<Thunk> CreateLoopConvolutionThunk(std::string name, ConvPlan plan,
                                                  std::vector<int64_t> operand_values,
                                                  int64_t output_value) {
  return std::make_unique<LoopConvolutionThunk>(std::move(name), std::move(plan),
                                                std::move(operand_values), output_value);
}

bool IsLoopConvolutionThunk(const Thunk& thunk) {
  return dynamic_cast<const LoopConvolutionThunk*>(&thunk) != nullptr;
}

}  // namespace axle::cpu::conv
