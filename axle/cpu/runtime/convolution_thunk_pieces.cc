// The oneDNN convolution thunk split into pieces run on the intra-op pool
// (convolution_thunk_internal.h): ranges of output rows (conv_row_split.h),
// each reading its own input rows in place or gathering them channels-last
// (conv_input_gather.h), or ranges of output features over all pixels.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/conv_input_gather.h"
#include "axle/cpu/runtime/conv_row_split.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/omp_team.h"

namespace axle::cpu::conv {
namespace {

// Whether `desc` (batch 1) is dense with its dim 2 outermost after the batch:
// then a range of dim 2 is one contiguous block of it.
bool RowsOutermost(const dnnl::memory::desc& desc) {
  if (desc.data.format_kind != dnnl_blocked || desc.data.format_desc.blocking.inner_nblks != 0) {
    return false;
  }
  const dnnl::memory::dims dims = desc.dims();
  const dnnl_dims_t& strides = desc.data.format_desc.blocking.strides;
  if (dims.size() < 3 || dims[0] != 1) return false;
  int64_t elements = 1, last = 0;
  for (size_t d = 1; d < dims.size(); ++d) {
    if (strides[d] <= 0) return false;
    if (d != 2 && dims[d] > 1 && strides[d] >= strides[2]) return false;
    elements *= dims[d];
    last += (dims[d] - 1) * strides[d];
  }
  return last + 1 == elements;
}

// Whether `desc` has batch 1 and plain element strides (no inner blocks).
bool PlainBatchOne(const dnnl::memory::desc& desc) {
  return desc.data.format_kind == dnnl_blocked && desc.data.format_desc.blocking.inner_nblks == 0 &&
         desc.dims().size() >= 3 && desc.dims()[0] == 1;
}

// Whether `desc` (batch 1, no inner blocks) has its dim 2 outermost after
// the batch, dense or not (a slice of a concatenation): then a range of dim
// 2 starts at an offset and keeps the strides.
bool RowsOutermostStrided(const dnnl::memory::desc& desc) {
  if (!PlainBatchOne(desc)) return false;
  const dnnl::memory::dims dims = desc.dims();
  const dnnl_dims_t& strides = desc.data.format_desc.blocking.strides;
  int64_t last = 0;
  for (size_t d = 1; d < dims.size(); ++d) {
    if (strides[d] <= 0) return false;
    if (d != 2) last += (dims[d] - 1) * strides[d];
  }
  return last < strides[2];
}

// `desc` with `rows` rows (dim 2) and the batch stride of a dense array.
dnnl::memory::desc WithRows(const dnnl::memory::desc& desc, int64_t rows) {
  dnnl::memory::dims dims = desc.dims();
  dnnl::memory::dims strides(desc.data.format_desc.blocking.strides,
                             desc.data.format_desc.blocking.strides + dims.size());
  dims[2] = rows;
  strides[0] = strides[2] * rows;
  return dnnl::memory::desc(dims, desc.data_type(), strides);
}

// A dense channels-last array of `desc`'s dims with `rows` rows (dim 2).
dnnl::memory::desc ChannelsLastRows(const dnnl::memory::desc& desc, int64_t rows) {
  dnnl::memory::dims dims = desc.dims();
  dims[2] = rows;
  return ChannelsLast(dims, desc.data_type());
}

// When `plan`'s output is a slice of a larger array (ConvPlan::output_strides)
// with batch 1, its features contiguous and its pixels evenly strided (a
// channels-last concatenation's part): the stride between its pixels. 0
// otherwise.
int64_t SlicePixelStride(const ConvPlan& plan) {
  if (plan.output_strides.empty() || plan.out_dims[0] != 1) return 0;
  const std::vector<int64_t> strides = plan.OutStrides();
  const size_t last = strides.size() - 1;
  if (strides[1] != 1 || last < 2 || strides[last] < plan.out_dims[1]) return 0;
  for (size_t d = 2; d < last; ++d) {
    if (strides[d] != strides[d + 1] * plan.out_dims[d + 1]) return 0;
  }
  return strides[last];
}

// `desc` ([1, C, H, W], rows and columns one dense run of pixels) as
// [1, C, H * W, 1]: the same memory, its pixels one column of rows. Null
// when the rows are not dense over the columns.
std::optional<dnnl::memory::desc> PixelsAsRows(const dnnl::memory::desc& desc) {
  const dnnl::memory::dims dims = desc.dims();
  const dnnl_dims_t& strides = desc.data.format_desc.blocking.strides;
  if (dims.size() != 4 || strides[2] != dims[3] * strides[3]) return std::nullopt;
  return dnnl::memory::desc({dims[0], dims[1], dims[2] * dims[3], 1}, desc.data_type(),
                            {strides[0], strides[1], strides[3], strides[3]});
}

// The row window of a convolution with `in_rows` input rows (dim 2) and a
// window of `size` rows, from its oneDNN strides, dilations (0 for none)
// and paddings.
ConvRowWindow RowWindow(int64_t in_rows, int64_t size, const dnnl::memory::dims& strides,
                        const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                        const dnnl::memory::dims& padding_high) {
  ConvRowWindow window;
  window.in_rows = in_rows;
  window.size = size;
  window.stride = strides[0];
  window.dilation = dilates[0] + 1;
  window.pad_low = padding_low[0];
  window.pad_high = padding_high[0];
  return window;
}

// The index in `weights` of the weights in layout `desc`: `from` reordered
// into it and appended when no entry has it yet.
int WeightsIn(std::vector<dnnl::memory>& weights, const dnnl::memory::desc& desc,
              dnnl::memory from) {
  for (size_t w = 0; w < weights.size(); ++w) {
    if (weights[w].get_desc() == desc) return static_cast<int>(w);
  }
  dnnl::memory packed(desc, DnnlEngine());
  dnnl::stream stream(DnnlEngine());
  DnnlCopy(stream, from, packed);
  stream.wait();
  weights.push_back(packed);
  return static_cast<int>(weights.size()) - 1;
}

}  // namespace

int64_t Place(int64_t& bytes, int64_t size) {
  const int64_t offset = bytes;
  bytes += RoundUpToAlignment(size);
  return offset;
}

void DnnlConvolutionThunk::BuildPieces(const dnnl::primitive_attr& attr,
                                       const dnnl::memory::dims& strides,
                                       const dnnl::memory::dims& dilates,
                                       const dnnl::memory::dims& padding_low,
                                       const dnnl::memory::dims& padding_high,
                                       const dnnl::memory* user_weights) {
  // Convolutions up to this many multiply-adds split into rows whatever
  // their rows. Larger ones split only evenly (below): oneDNN's team
  // partitions over output channels too, so it keeps its threads equally
  // busy where rows cannot.
  constexpr int64_t kMaxSplitMultiplyAdds = int64_t{32} << 20;
  pieces_.clear();
  piece_weights_.clear();
  piece_scratchpad_bytes_ = 0;
  gather_rows_ = false;
  const int threads = ThreadPool::DefaultNumThreads();
  const ConvPlan& p = plan_;
  if (winograd_) {
    if (threads >= 2 && user_weights != nullptr && !gather_input_ && !epilogue_after_) {
      // Over the output features where the weights are large beside the
      // input (WinogradFeaturesFirst), else over the rows.
      if (!(WinogradFeaturesFirst() &&
            BuildWinogradFeaturePieces(attr, strides, dilates, padding_low, padding_high,
                                       *user_weights))) {
        BuildWinogradPieces(attr, strides, dilates, padding_low, padding_high, *user_weights);
      }
    }
    return;
  }
  // An input the primitive wants reordered: each piece gathers its rows
  // (batch 1, strided, no blocks).
  const bool gather_rows = src_reorder_.has_value();
  // The pieces' rows are those of the primitive's output (dst_desc_): the
  // output itself, or a slice's dense copy (slice_pixel_stride_).
  slice_pixel_stride_ = SlicePixelStride(p);
  slice_dense_ = slice_pixel_stride_ > 0 && dst_reorder_.has_value() &&
                 dst_desc_ == ChannelsLast(dst_desc_.dims(), dst_desc_.data_type());
  if (threads < 2 || !packed_weights_ || gather_input_ || (dst_reorder_ && !slice_dense_) ||
      epilogue_after_ || reference_ ||
      !(gather_rows ? PlainBatchOne(src_user_desc_) : RowsOutermost(src_user_desc_)) ||
      !RowsOutermost(dst_desc_)) {
    return;
  }
  int64_t multiply_adds = 1;
  for (int64_t d : p.out_dims) multiply_adds *= d;
  for (size_t d = 1; d < p.rhs_dims.size(); ++d) multiply_adds *= p.rhs_dims[d];
  // A pointwise convolution over two spatial dims (1x1 window, stride 1, no
  // padding) is a product over pixels: its pieces are ranges of pixels,
  // which divide evenly where rows may not (7 rows over 2 threads: 4 and
  // 3, 49 pixels: 25 and 24).
  dnnl::memory::desc src_rows = src_user_desc_, dst_rows = dst_desc_;
  const bool pointwise = p.rhs_dims.size() == 4 && p.rhs_dims[2] == 1 && p.rhs_dims[3] == 1 &&
                         strides[0] == 1 && strides[1] == 1 && padding_low[0] == 0 &&
                         padding_low[1] == 0 && padding_high[0] == 0 && padding_high[1] == 0;
  if (pointwise && !gather_rows) {
    std::optional<dnnl::memory::desc> src_pixels = PixelsAsRows(src_user_desc_);
    std::optional<dnnl::memory::desc> dst_pixels = PixelsAsRows(dst_desc_);
    if (src_pixels && dst_pixels && src_pixels->dims()[2] == dst_pixels->dims()[2]) {
      src_rows = *src_pixels;
      dst_rows = *dst_pixels;
    }
  }
  const int64_t out_rows = dst_rows.dims()[2];
  // Larger ones split too when their rows divide evenly among the threads
  // (the longest piece at most 1/16 above an even share), as ResNet's 56,
  // 28 and 14 rows do on 2 threads: the pool's workers, spinning between
  // pieces, run them back to back, where oneDNN's team is woken twice per
  // convolution, and a piece a loaded core delays is taken by the caller
  // rather than waited for (resnet18, 2 threads on 2 loaded cores, best of
  // 300 runs: a 56x56x64 3x3 convolution 0.60-0.62 ms in rows, 0.85-1.15 ms
  // on oneDNN's team). Uneven ones (7 rows: 4 + 3) stay on oneDNN's team.
  // Uneven ones split over their output features instead where they can
  // (BuildFeaturePieces) when large, or when the longest row piece would
  // be more than 1/8 above an even share (7 rows: 4 + 3), else small ones
  // into uneven rows (13: 7 + 6, where the feature pieces measured 10-15%
  // slower on squeezenet's 13x13 convolutions) and larger ones not at all
  // (oneDNN's team).
  const int64_t longest_piece = (out_rows + threads - 1) / threads;
  const bool even = longest_piece * threads * 16 <= out_rows * 17;
  const bool lopsided = longest_piece * threads * 8 > out_rows * 9;
  if (!even && !gather_rows && (multiply_adds > kMaxSplitMultiplyAdds || lopsided) &&
      BuildFeaturePieces(attr, strides, dilates, padding_low, padding_high)) {
    return;
  }
  if (multiply_adds > kMaxSplitMultiplyAdds && !even) return;
  const ConvRowWindow window =
      RowWindow(src_rows.dims()[2], p.rhs_dims[2], strides, dilates, padding_low, padding_high);
  if (window.OutRows() != out_rows) return;
  const std::vector<ConvRowPiece> rows = SplitConvRows(window, threads);
  if (rows.empty()) return;
  const int64_t src_row_stride = src_rows.data.format_desc.blocking.strides[2];
  const int64_t dst_row_stride = dst_rows.data.format_desc.blocking.strides[2];
  dnnl::memory::desc weights_any(weights_desc_.dims(), weights_desc_.data_type(),
                                 dnnl::memory::format_tag::any);
  OmpTeamOfOne team;  // primitives for a team of one
  std::vector<Piece> pieces;
  std::vector<dnnl::memory> weights = {packed_weights_};
  int64_t scratchpad_bytes = 0;
  // A piece oneDNN declines leaves the convolution whole.
  try {
    for (const ConvRowPiece& row : rows) {
      Piece piece;
      piece.src = gather_rows ? ChannelsLastRows(src_rows, row.in_end - row.in_begin)
                              : WithRows(src_rows, row.in_end - row.in_begin);
      piece.dst = WithRows(dst_rows, row.out_end - row.out_begin);
      piece.src_offset = gather_rows ? 0 : row.in_begin * src_row_stride;
      piece.in_begin = row.in_begin;
      piece.in_end = row.in_end;
      piece.dst_offset = row.out_begin * dst_row_stride;
      piece.dst_bytes = static_cast<int64_t>(piece.dst.get_size());
      if (slice_pixel_stride_ > 0) {  // its rows dense in its scratch, then the slice
        piece.features = p.out_dims[1];
        piece.pixels =
            piece.dst_bytes / (piece.features * primitive_util::ByteWidth(p.output_type));
        piece.dst_temp_offset = Place(scratchpad_bytes, piece.dst_bytes);
      }
      dnnl::memory::dims low = padding_low, high = padding_high;
      low[0] = row.pad_low;
      high[0] = row.pad_high;
      const dnnl::convolution_forward::primitive_desc pd =
          ForwardInference(dnnl::algorithm::convolution_direct, piece.src, weights_any,
                           native_bias_ ? &native_bias_desc_ : nullptr, piece.dst, strides, dilates,
                           low, high, attr);
      if (IsFallback(pd) || pd.src_desc() != piece.src || pd.dst_desc() != piece.dst) return;
      // The weights in this primitive's layout: packed_weights_ reordered once
      // when it picked another.
      piece.weights = WeightsIn(weights, pd.weights_desc(), packed_weights_);
      piece.scratchpad_size = static_cast<int64_t>(pd.scratchpad_desc().get_size());
      piece.scratchpad_offset =
          Place(scratchpad_bytes, std::max<int64_t>(1, piece.scratchpad_size));
      if (gather_rows) {
        piece.gather_offset = Place(scratchpad_bytes, static_cast<int64_t>(piece.src.get_size()));
      }
      piece.primitive = dnnl::convolution_forward(pd);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return;
  }
  SetPieces(std::move(pieces), std::move(weights), scratchpad_bytes);
  if (gather_rows) {
    gather_rows_ = true;
    gather_dims_ = src_user_desc_.dims();
    gather_strides_.assign(src_user_desc_.data.format_desc.blocking.strides,
                           src_user_desc_.data.format_desc.blocking.strides + gather_dims_.size());
  }
}

void DnnlConvolutionThunk::SetPieces(std::vector<Piece> pieces, std::vector<dnnl::memory> weights,
                                     int64_t scratchpad_bytes) {
  pieces_ = std::move(pieces);
  piece_weights_ = std::move(weights);
  piece_scratchpad_bytes_ = scratchpad_bytes;
}

bool DnnlConvolutionThunk::BuildWinogradPieces(const dnnl::primitive_attr& attr,
                                               const dnnl::memory::dims& strides,
                                               const dnnl::memory::dims& dilates,
                                               const dnnl::memory::dims& padding_low,
                                               const dnnl::memory::dims& padding_high,
                                               const dnnl::memory& user_weights) {
  const int threads = ThreadPool::DefaultNumThreads();
  if (!RowsOutermostStrided(src_user_desc_) || !RowsOutermostStrided(dst_user_desc_)) return false;
  // Rows that split unevenly (7 on 2 threads: 4 + 3, the longest piece more
  // than 1/8 above an even share) stay whole on oneDNN's team, which
  // splits its tiles evenly.
  const int64_t out_rows = dst_user_desc_.dims()[2];
  const int64_t longest_piece = (out_rows + threads - 1) / threads;
  if (longest_piece * threads * 8 > out_rows * 9) return false;
  const ConvRowWindow window = RowWindow(src_user_desc_.dims()[2], plan_.rhs_dims[2], strides,
                                         dilates, padding_low, padding_high);
  if (window.OutRows() != out_rows) return false;
  const std::vector<ConvRowPiece> rows = SplitConvRows(window, threads);
  if (rows.empty()) return false;
  const int64_t src_row_stride = src_user_desc_.data.format_desc.blocking.strides[2];
  const int64_t dst_row_stride = dst_user_desc_.data.format_desc.blocking.strides[2];
  const dnnl::memory::data_type type = src_user_desc_.data_type();
  dnnl::memory::desc weights_any(weights_desc_.dims(), weights_desc_.data_type(),
                                 dnnl::memory::format_tag::any);
  OmpTeamOfOne team;  // primitives and reorders for a team of one
  std::vector<Piece> pieces;
  std::vector<dnnl::memory> weights = {packed_weights_};
  int64_t scratch_bytes = 0;
  try {
    for (const ConvRowPiece& row : rows) {
      Piece piece;
      piece.src_user = WithRows(src_user_desc_, row.in_end - row.in_begin);
      piece.dst_user = WithRows(dst_user_desc_, row.out_end - row.out_begin);
      piece.src_offset = row.in_begin * src_row_stride;
      piece.dst_offset = row.out_begin * dst_row_stride;
      dnnl::memory::dims src_dims = piece.src_user.dims(), dst_dims = piece.dst_user.dims();
      dnnl::memory::desc src_any(src_dims, type, dnnl::memory::format_tag::any);
      dnnl::memory::desc dst_any(dst_dims, type, dnnl::memory::format_tag::any);
      dnnl::memory::dims low = padding_low, high = padding_high;
      low[0] = row.pad_low;
      high[0] = row.pad_high;
      const dnnl::convolution_forward::primitive_desc pd = ForwardInference(
          dnnl::algorithm::convolution_winograd, src_any, weights_any,
          native_bias_ ? &native_bias_desc_ : nullptr, dst_any, strides, dilates, low, high, attr);
      if (std::strstr(pd.impl_info_str(), "wino") == nullptr) return false;
      piece.src = pd.src_desc();
      piece.dst = pd.dst_desc();
      // Packed from the user's layout when no earlier piece's is this one.
      piece.weights = WeightsIn(weights, pd.weights_desc(), user_weights);
      FinishBlockedPiece(pd, piece, scratch_bytes);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return false;
  }
  SetPieces(std::move(pieces), std::move(weights), scratch_bytes);
  return true;
}

void DnnlConvolutionThunk::FinishBlockedPiece(const dnnl::convolution_forward::primitive_desc& pd,
                                              Piece& piece, int64_t& scratch_bytes) const {
  piece.src_reorder = DnnlReorder(piece.src_user, piece.src);
  piece.dst_reorder = DnnlReorder(piece.dst, piece.dst_user);
  if (addend_post_op_) piece.addend_reorder = DnnlReorder(piece.dst_user, piece.dst);
  piece.scratchpad_size = static_cast<int64_t>(pd.scratchpad_desc().get_size());
  piece.scratchpad_offset = Place(scratch_bytes, std::max<int64_t>(1, piece.scratchpad_size));
  piece.blocked_src_offset = Place(scratch_bytes, static_cast<int64_t>(piece.src.get_size()));
  piece.blocked_dst_offset = Place(scratch_bytes, static_cast<int64_t>(piece.dst.get_size()));
  piece.primitive = dnnl::convolution_forward(pd);
}

bool DnnlConvolutionThunk::WinogradFeaturesFirst() const {
  // Row pieces each read all of the transformed weights (36 values per 9
  // of a 3x3 kernel, for F(4x4, 3x3)) and their own rows of the input;
  // feature pieces each read their features' weights and transform all of
  // the input, over all pixels, where oneDNN picks its F(2x2, 3x3) kernel
  // (more multiplies per output than F(4x4, 3x3)).
  constexpr int64_t kMinWeightsPerInput = 4;
  int64_t weights = 1, input = 1;
  for (int64_t d : plan_.rhs_dims) weights *= d;
  for (int64_t d : src_user_desc_.dims()) input *= d;
  return weights >= kMinWeightsPerInput * input;
}

bool DnnlConvolutionThunk::BuildWinogradFeaturePieces(const dnnl::primitive_attr& attr,
                                                      const dnnl::memory::dims& strides,
                                                      const dnnl::memory::dims& dilates,
                                                      const dnnl::memory::dims& padding_low,
                                                      const dnnl::memory::dims& padding_high,
                                                      const dnnl::memory& user_weights) {
  // Each piece's features a multiple of this (oneDNN's blocks of 16 f32
  // features).
  constexpr int64_t kFeatureMultiple = 16;
  const int threads = ThreadPool::DefaultNumThreads();
  const int64_t features = plan_.out_dims[1];
  // No scale post-op (a per-feature scale folded into the weights is fine),
  // a native bias or none, the input and output in plain strided layouts.
  auto plain = [](const dnnl::memory::desc& desc) {
    return desc.data.format_kind == dnnl_blocked && desc.data.format_desc.blocking.inner_nblks == 0;
  };
  if ((scale_ && !fold_scale_) || (bias_ && !native_bias_) ||
      features % (threads * kFeatureMultiple) != 0 || !plain(src_user_desc_) ||
      !plain(dst_user_desc_) || !plain(weights_user_desc_)) {
    return false;
  }
  const int64_t per_piece = features / threads;
  const dnnl::memory::data_type type = src_user_desc_.data_type();
  const dnnl::memory::dims src_dims = src_user_desc_.dims();
  const dnnl::memory::dims weights_dims = weights_user_desc_.dims();
  const dnnl::memory::dims dst_strides(
      dst_user_desc_.data.format_desc.blocking.strides,
      dst_user_desc_.data.format_desc.blocking.strides + dst_user_desc_.dims().size());
  OmpTeamOfOne team;  // primitives and reorders for a team of one
  std::vector<Piece> pieces;
  std::vector<dnnl::memory> weights;
  int64_t scratch_bytes = 0;
  try {
    dnnl::stream stream(DnnlEngine());
    for (int64_t t = 0; t < threads; ++t) {
      Piece piece;
      piece.features_begin = t * per_piece;
      piece.features = per_piece;
      piece.src_user = src_user_desc_;
      dnnl::memory::dims dst_dims = dst_user_desc_.dims();
      dst_dims[1] = per_piece;
      // The piece's features of the output: its strides, from feature
      // features_begin on.
      piece.dst_user = dnnl::memory::desc(dst_dims, dst_user_desc_.data_type(), dst_strides);
      piece.dst_offset = piece.features_begin * dst_strides[1];
      dnnl::memory::dims piece_weights_dims = weights_dims;
      piece_weights_dims[0] = per_piece;
      piece.bias = dnnl::memory::desc({per_piece}, dnnl::memory::data_type::f32,
                                      dnnl::memory::format_tag::a);
      const dnnl::convolution_forward::primitive_desc pd = ForwardInference(
          dnnl::algorithm::convolution_winograd,
          dnnl::memory::desc(src_dims, type, dnnl::memory::format_tag::any),
          dnnl::memory::desc(piece_weights_dims, weights_user_desc_.data_type(),
                             dnnl::memory::format_tag::any),
          native_bias_ ? &piece.bias : nullptr,
          dnnl::memory::desc(dst_dims, dst_user_desc_.data_type(), dnnl::memory::format_tag::any),
          strides, dilates, padding_low, padding_high, attr);
      if (std::strstr(pd.impl_info_str(), "wino") == nullptr) return false;
      piece.src = pd.src_desc();
      piece.dst = pd.dst_desc();
      // The piece's features of the user's weights, dense first (oneDNN's
      // Winograd weights reorder reads oihw and hwio only).
      dnnl::memory::dims offsets(weights_dims.size(), 0);
      offsets[0] = piece.features_begin;
      dnnl::memory slice(weights_user_desc_.submemory_desc(piece_weights_dims, offsets),
                         DnnlEngine(), user_weights.get_data_handle());
      dnnl::memory dense(dnnl::memory::desc(piece_weights_dims, weights_user_desc_.data_type(),
                                            ShapeUtil::RowMajorStrides(piece_weights_dims)),
                         DnnlEngine());
      DnnlCopy(stream, slice, dense);
      dnnl::memory packed(pd.weights_desc(), DnnlEngine());
      DnnlCopy(stream, dense, packed);
      stream.wait();
      piece.weights = static_cast<int>(weights.size());
      weights.push_back(packed);
      FinishBlockedPiece(pd, piece, scratch_bytes);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return false;
  }
  SetPieces(std::move(pieces), std::move(weights), scratch_bytes);
  return true;
}

bool DnnlConvolutionThunk::BuildFeaturePieces(const dnnl::primitive_attr& attr,
                                              const dnnl::memory::dims& strides,
                                              const dnnl::memory::dims& dilates,
                                              const dnnl::memory::dims& padding_low,
                                              const dnnl::memory::dims& padding_high) {
  // Each piece's features a multiple of this (whole vectors, oneDNN's
  // blocks of 16 f32 output channels).
  constexpr int64_t kFeatureMultiple = 16;
  const int threads = ThreadPool::DefaultNumThreads();
  const ConvPlan& p = plan_;
  const int64_t features = p.out_dims[1];
  const dnnl::memory::dims weights_dims = weights_desc_.dims();
  // No groups, no scale post-op (a per-feature scale folded into the
  // weights is fine), a native bias or none, and a dense channels-last
  // output (each pixel's features one run).
  const int64_t spatial = static_cast<int64_t>(p.out_dims.size()) - 2;
  if (static_cast<int64_t>(weights_dims.size()) != spatial + 2 || (scale_ && !fold_scale_) ||
      (bias_ && !native_bias_) || features % (threads * kFeatureMultiple) != 0 ||
      dst_desc_ != ChannelsLastRows(dst_desc_, p.out_dims[2])) {
    return false;
  }
  const int64_t out_size = primitive_util::ByteWidth(p.output_type);
  int64_t pixels = 1;
  for (int64_t d = 2; d < static_cast<int64_t>(p.out_dims.size()); ++d) pixels *= p.out_dims[d];
  const int64_t per_piece = features / threads;
  std::vector<Piece> pieces;
  std::vector<dnnl::memory> weights;
  int64_t scratch_bytes = 0;
  try {
    // The weights unpacked into plain [O, I, spatial...] once, each piece's
    // features then packed into its primitive's layout.
    dnnl::memory::desc plain_desc(weights_dims, weights_desc_.data_type(),
                                  ShapeUtil::RowMajorStrides(weights_dims));
    dnnl::memory plain(plain_desc, DnnlEngine());
    dnnl::stream stream(DnnlEngine());
    DnnlCopy(stream, packed_weights_, plain);
    stream.wait();
    OmpTeamOfOne team;  // primitives for a team of one
    for (int64_t t = 0; t < threads; ++t) {
      Piece piece;
      piece.features_begin = t * per_piece;
      piece.features = per_piece;
      piece.pixels = pixels;
      piece.src = src_user_desc_;
      dnnl::memory::dims dst_dims = p.out_dims;
      dst_dims[1] = per_piece;
      piece.dst = ChannelsLast(dst_dims, DnnlType(p.output_type));
      dnnl::memory::dims piece_weights_dims = weights_dims;
      piece_weights_dims[0] = per_piece;
      dnnl::memory::desc weights_any(piece_weights_dims, weights_desc_.data_type(),
                                     dnnl::memory::format_tag::any);
      piece.bias = dnnl::memory::desc({per_piece}, dnnl::memory::data_type::f32,
                                      dnnl::memory::format_tag::a);
      const dnnl::convolution_forward::primitive_desc pd =
          ForwardInference(dnnl::algorithm::convolution_direct, piece.src, weights_any,
                           native_bias_ ? &piece.bias : nullptr, piece.dst, strides, dilates,
                           padding_low, padding_high, attr);
      if (IsFallback(pd) || pd.src_desc() != piece.src || pd.dst_desc() != piece.dst) return false;
      dnnl::memory::dims offsets(weights_dims.size(), 0);
      offsets[0] = piece.features_begin;
      dnnl::memory slice(plain_desc.submemory_desc(piece_weights_dims, offsets), DnnlEngine(),
                         plain.get_data_handle());
      dnnl::memory packed(pd.weights_desc(), DnnlEngine());
      DnnlCopy(stream, slice, packed);
      stream.wait();
      piece.weights = static_cast<int>(weights.size());
      weights.push_back(packed);
      piece.scratchpad_size = static_cast<int64_t>(pd.scratchpad_desc().get_size());
      piece.scratchpad_offset = Place(scratch_bytes, std::max<int64_t>(1, piece.scratchpad_size));
      piece.dst_temp_offset = Place(scratch_bytes, pixels * per_piece * out_size);
      piece.primitive = dnnl::convolution_forward(pd);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return false;
  }
  SetPieces(std::move(pieces), std::move(weights), scratch_bytes);
  return true;
}

absl::Status DnnlConvolutionThunk::RunPieces(const ThunkContext& context, const char* src,
                                             char* out, const char* scale, const char* bias,
                                             char* scratchpads) const {
  const char* addend =
      addend_post_op_ ? BaseOf(context, addend_->operand, operand_values_) : nullptr;
  absl::InlinedVector<absl::Status, 4> status(pieces_.size());
  auto run = [&](int64_t begin, int64_t end) {
    OmpTeamOfOne team;
    for (int64_t i = begin; i < end; ++i) {
      status[i] = RunPiece(pieces_[i], src, out, addend, scale, bias, scratchpads);
    }
  };
  const int64_t count = static_cast<int64_t>(pieces_.size());
  if (context.thread_pool == nullptr) {
    run(0, count);
  } else {
    context.thread_pool->ParallelFor(count, 1, run, context.max_threads,
                                     ThreadPool::AfterJob::kSpin);
  }
  for (const absl::Status& piece_status : status) AXLE_RETURN_IF_ERROR(piece_status);
  return absl::OkStatus();
}

absl::Status DnnlConvolutionThunk::RunPiece(const Piece& piece, const char* src, char* out,
                                            const char* addend, const char* scale, const char* bias,
                                            char* scratchpads) const {
  const int64_t out_size = primitive_util::ByteWidth(plan_.output_type);
  try {
    const dnnl::engine& engine = DnnlEngine();
    // One stream per thread, made once: a piece runs every few microseconds.
    static thread_local dnnl::stream stream(engine);
    char* dst = out + piece.dst_offset * out_size;
    // A feature piece's output: dense features in its scratch, strided in out.
    const int64_t out_features = plan_.out_dims[1];
    // Pixels lie this far apart in the output (a slice's stride, or dense).
    const int64_t out_stride = slice_pixel_stride_ > 0 ? slice_pixel_stride_ : out_features;
    auto copy_features = [&](const char* from, int64_t from_stride, char* to, int64_t to_stride) {
      CopyRuns(from, from_stride * out_size, to, to_stride * out_size, piece.features * out_size,
               piece.pixels);
    };
    if (piece.features_begin >= 0) {
      dst = scratchpads + piece.dst_temp_offset;
      if (addend != nullptr) {
        copy_features(addend + piece.features_begin * out_size, out_features, dst, piece.features);
      }
    } else if (slice_pixel_stride_ > 0) {
      dst = scratchpads + piece.dst_temp_offset;
    } else if (addend != nullptr && addend != out && !piece.src_reorder) {
      std::memcpy(dst, addend + piece.dst_offset * out_size, piece.dst_bytes);
    }
    DnnlArgs args;
    const char* piece_src = src + piece.src_offset * element_size_;
    if (piece.src_reorder) {  // blocked (BuildWinogradPieces): rows in, then out
      char* blocked_src = scratchpads + piece.blocked_src_offset;
      char* blocked_dst = scratchpads + piece.blocked_dst_offset;
      dnnl::memory src_memory =
          DnnlInput(stream, piece.src_user, piece_src, piece.src_reorder, piece.src, blocked_src);
      dnnl::memory dst_memory(piece.dst, engine, blocked_dst);
      if (addend != nullptr) {
        dnnl::memory user_addend(piece.dst_user, engine,
                                 const_cast<char*>(addend) + piece.dst_offset * out_size);
        piece.addend_reorder->execute(stream, user_addend, dst_memory);
      }
      args.Set(DNNL_ARG_SRC, src_memory);
      args.Set(DNNL_ARG_WEIGHTS, piece_weights_[piece.weights]);
      args.Set(DNNL_ARG_DST, dst_memory);
      AddEpilogueArgs(scale, bias, args);
      if (piece.features_begin >= 0 && native_bias_) {  // BuildWinogradFeaturePieces
        args.Set(DNNL_ARG_BIAS, DnnlThreadMemory(&piece.bias, DNNL_ARG_BIAS, piece.bias,
                                                 bias + piece.features_begin * out_size));
      }
      if (piece.scratchpad_size > 0) {
        args.Set(DNNL_ARG_SCRATCHPAD, DnnlThreadScratchpad(&piece, piece.scratchpad_size,
                                                           scratchpads + piece.scratchpad_offset));
      }
      args.Execute(piece.primitive, stream);
      dnnl::memory user_dst(piece.dst_user, engine, out + piece.dst_offset * out_size);
      piece.dst_reorder->execute(stream, dst_memory, user_dst);
      stream.wait();
      return absl::OkStatus();
    }
    if (piece.gather_offset >= 0) {
      char* gathered = scratchpads + piece.gather_offset;
      GatherRowsChannelsLast(src, element_size_, gather_dims_, gather_strides_, piece.in_begin,
                             piece.in_end, gathered);
      piece_src = gathered;
    }
    args.Set(DNNL_ARG_SRC, DnnlThreadMemory(&piece.src, DNNL_ARG_SRC, piece.src, piece_src));
    args.Set(DNNL_ARG_WEIGHTS, piece_weights_[piece.weights]);
    args.Set(DNNL_ARG_DST, DnnlThreadMemory(&piece.dst, DNNL_ARG_DST, piece.dst, dst));
    AddEpilogueArgs(scale, bias, args);               // pieces imply !epilogue_after_
    if (piece.features_begin >= 0 && native_bias_) {  // no scale post-op (BuildFeaturePieces)
      args.Set(DNNL_ARG_BIAS, DnnlThreadMemory(&piece.bias, DNNL_ARG_BIAS, piece.bias,
                                               bias + piece.features_begin * out_size));
    }
    if (piece.scratchpad_size > 0) {
      args.Set(DNNL_ARG_SCRATCHPAD, DnnlThreadScratchpad(&piece, piece.scratchpad_size,
                                                         scratchpads + piece.scratchpad_offset));
    }
    args.Execute(piece.primitive, stream);
    stream.wait();
    if (piece.features_begin >= 0) {
      copy_features(dst, piece.features, out + piece.features_begin * out_size, out_stride);
    } else if (slice_pixel_stride_ > 0) {  // rows from pixel dst_offset / features on
      copy_features(dst, out_features,
                    out + piece.dst_offset / out_features * slice_pixel_stride_ * out_size,
                    slice_pixel_stride_);
    }
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
  }
  return absl::OkStatus();
}

}  // namespace axle::cpu::conv

namespace axle::cpu::conv {

bool DnnlConvolutionThunk::RowBandsAvailable() const {
  const ConvPlan& p = plan_;
  return !reference_ && !winograd_ && !weight_grad_ && !backward_data_ && !pointwise_into_slice() &&
         static_cast<bool>(packed_weights_) && !gather_input_ && !src_reorder_ && !dst_reorder_ &&
         !epilogue_after_ && src_offset_ == 0 && p.output_strides.empty() && p.spatial == 2 &&
         p.out_dims[0] == 1 && p.lhs.type() == F32 && p.output_type == F32 &&
         (!scale_ || scale_->constant) && (!bias_ || bias_->constant) &&
         (!addend_ || addend_post_op_) && RowsOutermost(src_user_desc_) &&
         RowsOutermost(dst_desc_) && dst_desc_ == dst_user_desc_;
}

ConvRowWindow DnnlConvolutionThunk::RowBandWindow() const {
  return RowWindow(src_user_desc_.dims()[2], plan_.rhs_dims[2], strides_, dilates_, padding_low_,
                   padding_high_);
}

int DnnlConvolutionThunk::AddRowBand(int64_t in_rows, int64_t out_rows, int64_t pad_low,
                                     int64_t pad_high) {
  OmpTeamOfOne team;  // a primitive for a team of one
  Piece piece;
  piece.src = WithRows(src_user_desc_, in_rows);
  piece.dst = WithRows(dst_desc_, out_rows);
  // A 1x1 one as a product over pixels, one column of rows: oneDNN's 1x1
  // kernels block over a row's pixels (14 for a 14x14 map) otherwise.
  const bool pointwise = plan_.rhs_dims[2] == 1 && plan_.rhs_dims[3] == 1 && strides_[0] == 1 &&
                         strides_[1] == 1 && padding_low_[1] == 0 && padding_high_[1] == 0 &&
                         pad_low == 0 && pad_high == 0 && in_rows == out_rows;
  if (pointwise) {
    std::optional<dnnl::memory::desc> src_pixels = PixelsAsRows(piece.src);
    std::optional<dnnl::memory::desc> dst_pixels = PixelsAsRows(piece.dst);
    if (src_pixels && dst_pixels) {
      piece.src = *src_pixels;
      piece.dst = *dst_pixels;
    }
  }
  piece.dst_bytes = static_cast<int64_t>(piece.dst.get_size());
  dnnl::memory::dims low = padding_low_, high = padding_high_;
  low[0] = pad_low;
  high[0] = pad_high;
  dnnl::memory::desc weights_any(weights_desc_.dims(), weights_desc_.data_type(),
                                 dnnl::memory::format_tag::any);
  try {
    const dnnl::convolution_forward::primitive_desc pd =
        ForwardInference(dnnl::algorithm::convolution_direct, piece.src, weights_any,
                         native_bias_ ? &native_bias_desc_ : nullptr, piece.dst, strides_, dilates_,
                         low, high, attr_);
    if (IsFallback(pd) || pd.src_desc() != piece.src || pd.dst_desc() != piece.dst) return -1;
    if (piece_weights_.empty()) piece_weights_.push_back(packed_weights_);
    piece.weights = WeightsIn(piece_weights_, pd.weights_desc(), packed_weights_);
    piece.scratchpad_size = static_cast<int64_t>(pd.scratchpad_desc().get_size());
    row_band_scratchpad_bytes_ = std::max(row_band_scratchpad_bytes_, piece.scratchpad_size);
    piece.primitive = dnnl::convolution_forward(pd);
  } catch (const dnnl::error&) {
    return -1;
  }
  row_bands_.push_back(std::move(piece));
  return static_cast<int>(row_bands_.size()) - 1;
}

absl::Status DnnlConvolutionThunk::RunRowBand(int band, const char* src, char* dst,
                                              const char* addend, char* scratchpad) const {
  OmpTeamOfOne team;
  // RowBandsAvailable: a constant scale and bias, an addend by the sum post-op.
  return RunPiece(row_bands_[band], src, dst, addend, scale_ ? scale_->constant.get() : nullptr,
                  bias_ ? bias_->constant.get() : nullptr, scratchpad);
}

}  // namespace axle::cpu::conv
