// The oneDNN convolution thunk's pointwise path (convolution_thunk_internal.h):
// a 1x1 convolution at stride 1 that writes its slice of a concatenation
// (concat_in_place.h) runs as a product over its pixels on the small-dot
// kernel (small_dot.h), each tile of results stored at the slice's pixel
// stride. oneDNN 2.6 writes no strided output fast (its direct kernels and
// its brgemm matmul decline one; the reference and gemm ones take it), so
// its path computes the pixels into a dense buffer and copies them in.
//
// What that copy cost (one thread, standalone, best of 300; squeezenet's
// 55x55 16 -> 64 expand): brgconv 61 us dense + 23 us copy, this kernel
// 82 us. At two threads it cost more: the dense buffer of a row piece lies
// in the thunk's scratch, written by whichever core runs the piece, so
// when the pieces change cores between runs its lines move between the
// cores' caches (the same expand, two row pieces, best of 200: 44 us here
// against 46 us dense + copy with each piece on the same core every run,
// 106 us when they alternate; in the program, 0.100 ms against 0.045 ms
// for the same convolution writing a dense output).
#include <algorithm>

#include "axle/base/alignment.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu::conv {
namespace {

// The element stride between pixels of an array of `dims` ([1, C,
// spatial...]) at `strides`, when its features are contiguous and its
// pixels evenly strided with room for the features (channels-last, or a
// slice of a channels-last array along the features); 0 otherwise.
int64_t EvenPixelStride(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  const size_t last = dims.size() - 1;
  if (dims.size() < 3 || dims[0] != 1 || strides[1] != 1 || strides[last] < dims[1]) return 0;
  for (size_t d = 2; d < last; ++d) {
    if (strides[d] != strides[d + 1] * dims[d + 1]) return 0;
  }
  return strides[last];
}

// Rows (pixels) a piece of a run takes at least: the small-dot kernel
// reads the packed weights as 32-column panels from 4 rows on.
constexpr int64_t kMinPieceRows = 4;

// Input features (the contraction) at most: the copy the small-dot kernel
// saves shrinks beside the arithmetic as the contraction grows, and from
// about here oneDNN's kernel, blocked over the contraction, is the faster
// one (one thread, best of 200: googlenet's 7x7 pointwise convolutions
// of 832 features, 0.211 ms on oneDNN with the copy against 0.225 here;
// its 14x14 ones of 528, 0.509 against 0.497).
constexpr int64_t kMaxInputFeatures = 640;

}  // namespace

bool DnnlConvolutionThunk::BuildPointwiseIntoSlice() {
  const ConvPlan& p = plan_;
  if (!SmallDotAvailable() || p.output_strides.empty() || p.lhs.type() != F32 ||
      p.rhs.type() != F32 || p.output_type != F32 || p.rhs.literal == nullptr || p.addend ||
      p.feature_groups * p.batch_groups != 1 || p.spatial < 1) {
    return false;
  }
  for (int64_t i = 0; i < p.spatial; ++i) {
    const WindowDimension& w = p.window[i];
    if (p.rhs_dims[2 + i] != 1 || w.stride() != 1 || w.padding_low() != 0 ||
        w.padding_high() != 0 || w.base_dilation() != 1 || p.lhs_dims[2 + i] != p.out_dims[2 + i]) {
      return false;
    }
  }
  const int64_t in_stride = EvenPixelStride(p.lhs_dims, p.LhsStrides());
  const int64_t out_stride = EvenPixelStride(p.out_dims, p.OutStrides());
  int64_t pixels = 1;
  for (size_t d = 2; d < p.out_dims.size(); ++d) pixels *= p.out_dims[d];
  if (in_stride == 0 || out_stride == 0 || pixels < kMinPieceRows ||
      p.lhs_dims[1] > kMaxInputFeatures) {
    return false;
  }
  // A per-feature scale folds into the weights (a constant one); a
  // per-feature bias is the kernel's bias over the columns.
  auto per_feature = [](const EpilogueInput& input) {
    for (size_t d = 0; d < input.dims.size(); ++d) {
      if (d != 1 && input.dims[d] != 1) return false;
    }
    return true;
  };
  std::optional<EpilogueInput> scale, bias;
  if (p.scale) {
    scale = MakeEpilogueInput(*p.scale);
    if (!scale->constant || !per_feature(*scale)) return false;
  }
  if (p.bias) {
    bias = MakeEpilogueInput(*p.bias);
    if (!per_feature(*bias)) return false;
  }
  const int64_t features = p.out_dims[1], inputs = p.lhs_dims[1];
  SmallDotShape shape;
  shape.m = pixels;
  shape.n = features;
  shape.k = inputs;
  shape.lhs_row_stride = in_stride;
  shape.lhs_k_stride = 1;
  shape.rhs_k_stride = features;
  shape.bias_column_stride = 1;
  shape.activation = p.activation;
  shape.low = static_cast<float>(p.low);
  shape.high = static_cast<float>(p.high);
  shape.out_row_stride = out_stride;
  // The weights as a dense [inputs, features] rhs, scaled, then packed.
  const std::vector<int64_t> rs = p.RhsStrides();
  const auto* weights = static_cast<const float*>(p.rhs.literal->untyped_data());
  const auto* scales = scale ? reinterpret_cast<const float*>(scale->constant.get()) : nullptr;
  std::vector<float> dense(inputs * features);
  for (int64_t i = 0; i < inputs; ++i) {
    for (int64_t o = 0; o < features; ++o) {
      const float w = weights[o * rs[0] + i * rs[1]];
      dense[i * features + o] = scales != nullptr ? w * scales[o] : w;
    }
  }
  pointwise_weights_.resize(SmallDotPackedRhsSize(shape) + kBufferAlignment / sizeof(float));
  float* packed = AlignUp(pointwise_weights_.data());
  PackSmallDotRhs(shape, dense.data(), packed);
  pointwise_packed_ = packed;
  shape.rhs_packed = true;
  pointwise_shape_ = shape;
  bias_ = std::move(bias);
  // Freed unless a serialized copy will need it (thunk_serialization.h).
  if (!KeepSerializableState()) plan_.rhs.literal.reset();
  return true;
}

absl::Status DnnlConvolutionThunk::RunPointwiseIntoSlice(const ThunkContext& context,
                                                         char* scratch) const {
  const SmallDotShape& shape = pointwise_shape_;
  const auto* in = reinterpret_cast<const float*>(BaseOf(context, plan_.lhs, operand_values_));
  const float* bias =
      bias_ ? reinterpret_cast<const float*>(EpilogueData(
                  context, *bias_, scratch + std::max<int64_t>(0, slot_offset_[kBias])))
            : nullptr;
  auto* out = reinterpret_cast<float*>(OutputBase(context));
  // One piece of rows per thread, as the row pieces of the oneDNN path
  // are: each a contiguous range of pixels, in the tall kernel's tiles.
  const int threads = context.thread_pool == nullptr ? 1
                      : context.max_threads > 0      ? context.max_threads
                                                     : context.thread_pool->num_threads();
  const int64_t pieces = std::clamp<int64_t>(shape.m / kMinPieceRows, 1, threads);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t first = shape.m * i / pieces;
      SmallDotShape piece = shape;
      piece.m = shape.m * (i + 1) / pieces - first;
      SmallDotF32(piece, in + first * shape.lhs_row_stride, pointwise_packed_, bias,
                  out + first * shape.out_row_stride, 0, SmallDotUnits(piece));
    }
  };
  if (pieces == 1) {
    run(0, 1);
  } else {
    context.thread_pool->ParallelFor(pieces, 1, run, context.max_threads,
                                     ThreadPool::AfterJob::kSpin);
  }
  return absl::OkStatus();
}

}  // namespace axle::cpu::conv
