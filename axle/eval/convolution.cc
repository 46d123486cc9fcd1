//===- convolution.cc - convolution on host literals -----------------------===//
//
// XLA's ConvGeneralDilated, straight from its definition: for every output
// element (batch b, feature oz, spatial position o) and every kernel spatial
// position k and input feature of oz's group,
//
//   position in the dilated, padded input = o * stride - padding_low
//                                           + k * window_dilation
//
// which reads input element position / base_dilation when that divides
// evenly and lands inside the input (holes and padding read zero). The
// kernel is read at k, or at size - 1 - k under window reversal.
//
// feature_group_count splits input and output features into consecutive
// groups (output feature oz uses input group oz / (out_features / groups));
// batch_group_count splits the input batch likewise (output feature oz reads
// batch b + (oz / (out_features / batch_groups)) * (in_batch / batch_groups)).
//
// Operands are converted to the result type first and products summed in
// kernel_util::Accumulator, as XLA's evaluator does. Like that evaluator,
// integer results narrower than 64 bits saturate to the result type's range
// (the sum itself is formed in 64 bits); 64-bit integers wrap.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/algorithm/container.h"
#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using namespace kernel_util;  // NOLINT(google-build-using-namespace): the kernels' helpers

constexpr absl::string_view kOp = "convolution";

// The convolution's index arithmetic, resolved against the operand shapes.
struct ConvGeometry {
  int64_t num_spatial = 0;
  // Input (lhs).
  int64_t in_batch_dim = 0, in_feature_dim = 0;
  std::vector<int64_t> in_spatial_dims;
  std::vector<int64_t> in_strides;
  // Kernel (rhs).
  int64_t k_in_feature_dim = 0, k_out_feature_dim = 0;
  std::vector<int64_t> k_spatial_dims;
  std::vector<int64_t> k_spatial_sizes;
  std::vector<int64_t> k_strides;
  // Output.
  int64_t out_batch_dim = 0, out_feature_dim = 0;
  std::vector<int64_t> out_spatial_dims;
  std::vector<int64_t> out_dims;
  // Groups.
  int64_t input_features_per_group = 0;  // kernel input feature size
  int64_t output_features_per_feature_group = 0;
  int64_t output_features_per_batch_group = 0;
  int64_t batch_group_size = 0;  // input batch / batch_group_count
};

absl::StatusOr<ConvGeometry> MakeConvGeometry(const HloConvolutionInstruction& conv,
                                              const Shape& lhs, const Shape& rhs) {
  const ConvolutionDimensionNumbers& dn = conv.convolution_dimension_numbers();
  const Window& window = conv.window();
  const Shape& out = conv.shape();
  ConvGeometry g;
  g.num_spatial = dn.input_spatial_dimensions_size();
  if (dn.kernel_spatial_dimensions_size() != g.num_spatial ||
      dn.output_spatial_dimensions_size() != g.num_spatial) {
    return InvalidArgument(kOp, ": input, kernel and output have different numbers of spatial ",
                           "dimensions in dim_labels");
  }
  if (window.dimensions_size() != g.num_spatial) {
    return InvalidArgument(kOp, ": window has ", window.dimensions_size(), " dimensions but ",
                           "the convolution has ", g.num_spatial, " spatial dimensions");
  }
  for (const Shape* s : {&lhs, &rhs, &out}) {
    if (s->rank() != g.num_spatial + 2) {
      return InvalidArgument(kOp, ": ", s->ToString(), " must have rank ", g.num_spatial + 2);
    }
  }
  std::vector<int64_t> in_dims = {dn.input_batch_dimension(), dn.input_feature_dimension()};
  for (int64_t d : dn.input_spatial_dimensions()) in_dims.push_back(d);
  std::vector<int64_t> k_dims = {dn.kernel_output_feature_dimension(),
                                 dn.kernel_input_feature_dimension()};
  for (int64_t d : dn.kernel_spatial_dimensions()) k_dims.push_back(d);
  std::vector<int64_t> o_dims = {dn.output_batch_dimension(), dn.output_feature_dimension()};
  for (int64_t d : dn.output_spatial_dimensions()) o_dims.push_back(d);
  AXLE_RETURN_IF_ERROR(CheckDimensionList(in_dims, lhs.rank(), kOp, "input dim_labels"));
  AXLE_RETURN_IF_ERROR(CheckDimensionList(k_dims, rhs.rank(), kOp, "kernel dim_labels"));
  AXLE_RETURN_IF_ERROR(CheckDimensionList(o_dims, out.rank(), kOp, "output dim_labels"));

  g.in_batch_dim = dn.input_batch_dimension();
  g.in_feature_dim = dn.input_feature_dimension();
  g.in_spatial_dims = dn.input_spatial_dimensions();
  g.k_in_feature_dim = dn.kernel_input_feature_dimension();
  g.k_out_feature_dim = dn.kernel_output_feature_dimension();
  g.k_spatial_dims = dn.kernel_spatial_dimensions();
  g.out_batch_dim = dn.output_batch_dimension();
  g.out_feature_dim = dn.output_feature_dimension();
  g.out_spatial_dims = dn.output_spatial_dimensions();
  g.in_strides = ShapeUtil::RowMajorStrides(lhs.dimensions());
  g.k_strides = ShapeUtil::RowMajorStrides(rhs.dimensions());

  const int64_t fgc = conv.feature_group_count();
  const int64_t bgc = conv.batch_group_count();
  const int64_t in_batch = lhs.dimensions(g.in_batch_dim);
  const int64_t in_features = lhs.dimensions(g.in_feature_dim);
  const int64_t k_in_features = rhs.dimensions(g.k_in_feature_dim);
  const int64_t out_features = rhs.dimensions(g.k_out_feature_dim);
  if (fgc < 1 || bgc < 1) {
    return InvalidArgument(kOp, ": feature_group_count=", fgc, " and batch_group_count=", bgc,
                           " must be positive");
  }
  if (in_features != k_in_features * fgc) {
    return InvalidArgument(kOp, ": input feature size ", in_features, " must equal the kernel's ",
                           "input feature size ", k_in_features, " times feature_group_count ",
                           fgc);
  }
  if (out_features % fgc != 0 || out_features % bgc != 0 || in_batch % bgc != 0) {
    return InvalidArgument(kOp, ": output feature size ", out_features, " and input batch size ",
                           in_batch, " must be divisible by feature_group_count ", fgc,
                           " and batch_group_count ", bgc);
  }
  g.input_features_per_group = k_in_features;
  g.output_features_per_feature_group = out_features / fgc;
  g.output_features_per_batch_group = out_features / bgc;
  g.batch_group_size = in_batch / bgc;

  g.out_dims.assign(out.rank(), 0);
  g.out_dims[g.out_batch_dim] = in_batch / bgc;
  g.out_dims[g.out_feature_dim] = out_features;
  for (int64_t i = 0; i < g.num_spatial; ++i) {
    const WindowDimension& w = window.dimensions(i);
    int64_t k_size = rhs.dimensions(g.k_spatial_dims[i]);
    if (w.size() != k_size) {
      return InvalidArgument(kOp, ": window size ", w.size(), " in spatial dimension ", i,
                             " differs from the kernel's size ", k_size);
    }
    if (w.stride() < 1 || w.window_dilation() < 1 || w.base_dilation() < 1) {
      return InvalidArgument(kOp, ": window stride and dilations must be positive in spatial ",
                             "dimension ", i);
    }
    g.k_spatial_sizes.push_back(k_size);
    g.out_dims[g.out_spatial_dims[i]] = WindowedOutputSize(lhs.dimensions(g.in_spatial_dims[i]), w);
  }
  AXLE_RETURN_IF_ERROR(CheckResultDims(out, g.out_dims, kOp));
  return g;
}

// Rounds a 64-bit integer sum to T, saturating when T is narrower than 64
// bits (XLA's evaluator clamps convolution results).
template <typename T>
T SaturateOrWrap(uint64_t sum) {
  if constexpr (is_intn_v<T>) {
    int64_t s = static_cast<int64_t>(sum);
    return T(std::clamp<int64_t>(s, T::kMin, T::kMax));
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<T>(sum);
  } else if constexpr (std::is_signed_v<T>) {
    int64_t s = static_cast<int64_t>(sum);
    return static_cast<T>(
        std::clamp<int64_t>(s, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else {
    return static_cast<T>(std::min<uint64_t>(sum, std::numeric_limits<T>::max()));
  }
}

template <typename T>
Literal ConvolveTyped(const HloConvolutionInstruction& conv, const ConvGeometry& g,
                      const Literal& lhs, const Literal& rhs) {
  Literal result(conv.shape());
  absl::Span<T> out = result.data<T>();
  if (out.empty()) return result;
  absl::Span<const T> in = lhs.data<T>();
  absl::Span<const T> kernel = rhs.data<T>();
  const Window& window = conv.window();
  const std::vector<int64_t>& in_dims = lhs.shape().dimensions();

  std::vector<int64_t> o(g.out_dims.size(), 0);
  std::vector<int64_t> k(g.num_spatial, 0);
  do {
    const int64_t b = o[g.out_batch_dim];
    const int64_t oz = o[g.out_feature_dim];
    const int64_t feature_group = oz / g.output_features_per_feature_group;
    const int64_t batch_group = oz / g.output_features_per_batch_group;
    const int64_t in_base =
        (b + batch_group * g.batch_group_size) * g.in_strides[g.in_batch_dim] +
        feature_group * g.input_features_per_group * g.in_strides[g.in_feature_dim];
    const int64_t k_base = oz * g.k_strides[g.k_out_feature_dim];
    Accumulator<T> acc{};
    bool window_nonempty = true;
    for (int64_t s : g.k_spatial_sizes) window_nonempty &= s > 0;
    absl::c_fill(k, 0);
    for (bool more = window_nonempty; more;
         more = NextIndex(g.k_spatial_sizes, absl::MakeSpan(k))) {
      int64_t in_offset = in_base, k_offset = k_base;
      bool inside = true;
      for (int64_t i = 0; i < g.num_spatial && inside; ++i) {
        const WindowDimension& w = window.dimensions(i);
        int64_t dilated =
            o[g.out_spatial_dims[i]] * w.stride() - w.padding_low() + k[i] * w.window_dilation();
        if (dilated % w.base_dilation() != 0) {
          inside = false;
          break;
        }
        int64_t position = dilated / w.base_dilation();
        if (position < 0 || position >= in_dims[g.in_spatial_dims[i]]) {
          inside = false;
          break;
        }
        in_offset += position * g.in_strides[g.in_spatial_dims[i]];
        int64_t kk = w.window_reversal() ? w.size() - 1 - k[i] : k[i];
        k_offset += kk * g.k_strides[g.k_spatial_dims[i]];
      }
      if (inside) {
        for (int64_t iz = 0; iz < g.input_features_per_group; ++iz) {
          acc = MultiplyAdd(acc, ToAccumulator(in[in_offset + iz * g.in_strides[g.in_feature_dim]]),
                            ToAccumulator(kernel[k_offset + iz * g.k_strides[g.k_in_feature_dim]]));
        }
      }
    }
    if constexpr (is_integer_v<T>) {
      out[result.LinearIndex(o)] = SaturateOrWrap<T>(acc);
    } else {
      out[result.LinearIndex(o)] = FromAccumulator<T>(acc);
    }
  } while (NextIndex(g.out_dims, absl::MakeSpan(o)));
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvaluateConvolution(const HloConvolutionInstruction& conv,
                                            const Literal& lhs, const Literal& rhs) {
  AXLE_RETURN_IF_ERROR(CheckArray(lhs, kOp, "lhs"));
  AXLE_RETURN_IF_ERROR(CheckArray(rhs, kOp, "rhs"));
  if (!conv.shape().IsArray()) {
    return InvalidArgument(kOp, ": result must be an array, got ", conv.shape().ToString());
  }
  for (PrecisionConfig::Precision p : conv.precision_config().operand_precision()) {
    if (p == PrecisionConfig::PACKED_NIBBLE) {
      return absl::UnimplementedError("convolution: PACKED_NIBBLE precision");
    }
  }
  AXLE_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(conv, lhs.shape(), rhs.shape()));
  PrimitiveType type = conv.shape().element_type();
  Literal lhs_converted, rhs_converted;
  const Literal* l = &lhs;
  const Literal* r = &rhs;
  if (lhs.shape().element_type() != type) {
    AXLE_ASSIGN_OR_RETURN(lhs_converted, lhs.Convert(type));
    l = &lhs_converted;
  }
  if (rhs.shape().element_type() != type) {
    AXLE_ASSIGN_OR_RETURN(rhs_converted, rhs.Convert(type));
    r = &rhs_converted;
  }
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> Literal { return ConvolveTyped<T>(conv, g, *l, *r); }, type);
}

}  // namespace axle
