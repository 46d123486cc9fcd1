// The oneDNN convolution thunk's depthwise path (convolution_thunk_internal.h):
// a 3x3 depthwise convolution of one channels-last image on
// depthwise_rows.h's kernel, over pieces of its output rows on the
// intra-op pool. The oneDNN primitive and its row bands are built as well:
// a chain (conv_chain.h) runs the bands, on this kernel too.
//
// One thread, standalone, best of 300 (mobilenet_v2's shapes on the Zen
// 4-class host of 2026-11-29): 112x112x32 162 -> 134 us, 56x56x144 147 ->
// 119, 28x28x192 44.5 -> 40.0, 14x14x384 28.8 -> 20.1, 14x14x576 31.5 ->
// 28.1, 7x7x960 16.3 -> 13.0; at stride 2, 56x56x144 47.0 -> 45.7,
// 28x28x192 14.7 -> 13.4, 14x14x576 9.7 -> 9.3, but 112x112x96 160 -> 170
// (a 4.8 MB input read from memory at either speed).
#include <algorithm>

#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"

namespace axle::cpu::conv {

void DnnlConvolutionThunk::BuildDepthwiseRows() {
  const ConvPlan& p = plan_;
  if (!DepthwiseRowsAvailable() || p.rhs.literal == nullptr || p.lhs.type() != F32 ||
      p.rhs.type() != F32 || p.output_type != F32 || p.spatial != 2 || p.out_dims[0] != 1 ||
      p.batch_groups != 1 || p.feature_groups != p.lhs_dims[1] || p.out_dims[1] != p.lhs_dims[1] ||
      p.rhs_dims[1] != 1 || p.rhs_dims[2] != 3 || p.rhs_dims[3] != 3 || p.scale || p.addend ||
      !p.output_strides.empty()) {
    return;
  }
  // Rows (window dim 0) and columns (1) alike: a 3x3 window at stride 1 or
  // 2, no dilation.
  for (const WindowDimension& w : p.window) {
    if (w.size() != 3 || w.stride() != p.window[0].stride() || w.window_dilation() != 1 ||
        w.base_dilation() != 1 || w.window_reversal() || w.padding_low() < 0 ||
        w.padding_high() < 0) {
      return;
    }
  }
  // Input and output dense channels-last: [1, C, H, W] with C innermost.
  auto channels_last = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    return strides[1] == 1 && strides[3] == dims[1] && strides[2] == dims[1] * dims[3];
  };
  if (!channels_last(p.lhs_dims, p.LhsStrides()) || !channels_last(p.out_dims, p.OutStrides())) {
    return;
  }
  DepthwiseRows conv;
  conv.width = p.lhs_dims[3];
  conv.out_width = p.out_dims[3];
  conv.channels = p.lhs_dims[1];
  conv.stride = p.window[1].stride();
  conv.pad_left = p.window[1].padding_low();
  conv.activation = p.activation;
  conv.low = static_cast<float>(p.low);
  conv.high = static_cast<float>(p.high);
  // [3][3][channels] from the canonical [channels, 1, 3, 3].
  const std::vector<int64_t> rs = p.RhsStrides();
  const auto* w = static_cast<const float*>(p.rhs.literal->untyped_data());
  std::vector<float> weights(9 * conv.channels);
  for (int64_t c = 0; c < conv.channels; ++c) {
    for (int64_t ky = 0; ky < 3; ++ky) {
      for (int64_t kx = 0; kx < 3; ++kx) {
        weights[(ky * 3 + kx) * conv.channels + c] = w[c * rs[0] + ky * rs[2] + kx * rs[3]];
      }
    }
  }
  std::vector<float> bias;
  if (p.bias) {
    // A constant, one value per feature.
    if (p.bias->literal == nullptr || p.bias->type() != F32) return;
    const std::vector<int64_t> bs = p.OutputOrder(*p.bias);
    for (size_t d = 0; d < bs.size(); ++d) {
      if (d != 1 && bs[d] != 0 && p.out_dims[d] != 1) return;
    }
    const auto* b = static_cast<const float*>(p.bias->literal->untyped_data());
    bias.resize(conv.channels);
    for (int64_t c = 0; c < conv.channels; ++c) bias[c] = b[c * bs[1]];
  }
  conv.weights = weights.data();
  conv.bias = p.bias ? bias.data() : nullptr;
  if (!DepthwiseRowsTakes(conv)) return;
  // The vectors' moves keep their data where conv points.
  depthwise_rows_weights_ = std::move(weights);
  depthwise_rows_bias_ = std::move(bias);
  depthwise_rows_ = conv;
}

absl::Status DnnlConvolutionThunk::RunDepthwiseRows(const ThunkContext& context) const {
  const ConvPlan& p = plan_;
  const DepthwiseRows& conv = *depthwise_rows_;
  const auto* in = reinterpret_cast<const float*>(BaseOf(context, p.lhs, operand_values_));
  auto* out = reinterpret_cast<float*>(OutputBase(context));
  const int64_t in_rows = p.lhs_dims[2], out_rows = p.out_dims[2];
  const int64_t stride = p.window[0].stride(), pad_top = p.window[0].padding_low();
  const int64_t in_row = conv.width * conv.channels, out_row = conv.out_width * conv.channels;
  const int threads = context.thread_pool == nullptr ? 1
                      : context.max_threads > 0      ? context.max_threads
                                                     : context.thread_pool->num_threads();
  const int64_t pieces = std::clamp<int64_t>(out_rows, 1, threads);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t first_out = out_rows * i / pieces, end_out = out_rows * (i + 1) / pieces;
      // The piece's input rows, those inside the image.
      const int64_t first = first_out * stride - pad_top;
      const int64_t rows_begin = std::clamp<int64_t>(first, 0, in_rows);
      const int64_t rows_end =
          std::clamp<int64_t>((end_out - 1) * stride - pad_top + 3, rows_begin, in_rows);
      DepthwiseRows3x3(conv, in + rows_begin * in_row, rows_end - rows_begin, rows_begin - first,
                       out + first_out * out_row, end_out - first_out);
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
