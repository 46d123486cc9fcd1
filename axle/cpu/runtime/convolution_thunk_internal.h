//===- convolution_thunk_internal.h - The oneDNN convolution thunk --------===//
//
// Internal to the oneDNN convolution thunk, which these files implement:
// convolution_thunk.cc (building the primitive, the scratch layout, a run),
// convolution_thunk_pieces.cc (the convolution split into row or feature
// pieces run on the intra-op pool), convolution_thunk_epilogue.cc (the
// scale, bias and addend as post-op arguments or after the primitive),
// convolution_thunk_weight_grad.cc, convolution_thunk_backward_data.cc and
// convolution_thunk_pointwise.cc (the other primitives it may run). See
// convolution_thunk.h for what it runs and how. This header includes oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_INTERNAL_H_
#define AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_INTERNAL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/core/primitive_type.h"
#include "axle/cpu/runtime/conv_row_split.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/depthwise_rows.h"
#include "axle/cpu/runtime/dnnl_args.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/small_dot.h"
#include "axle/cpu/runtime/thunk.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace axle::cpu::conv {

// oneDNN's reference or im2col + gemm implementation, which it picks for
// layouts its direct kernels do not take (NCHW f32, odd strides); in the
// primitive's preferred layouts plus reorders it runs faster.
bool IsFallback(const dnnl::convolution_forward::primitive_desc& pd);

// Whether `plan` (with its oneDNN `strides` and `dilates`, dilation 0 for
// none) may run on oneDNN's Winograd kernels: f32 in and out, two spatial
// dims, a 3x3 window at stride 1 without dilation, no groups, at least 4M
// multiply-adds, and AXLE_CPU_WINOGRAD not off. They take 2.2-3.2x fewer multiplies than the
// direct ones (F(2x2, 3x3) and F(4x4, 3x3) tiles; one thread, standalone:
// ResNet-18's 56x56x64 convolution 1.96 -> 1.01 ms, its 28x28x128 one
// 1.95 -> 0.59 ms), at the cost of reordering input and output to and from
// oneDNN's blocked layout (0.01-0.02 ms each) and of rounding: the
// transforms add and subtract tile values, so results differ from the
// direct sum in the last few bits (see convolution_test.cc).
bool WinogradCandidate(const ConvPlan& plan, const dnnl::memory::dims& strides,
                       const dnnl::memory::dims& dilates);

// A forward-inference convolution's primitive descriptor, with `bias` as its
// native bias where not null. Throws dnnl::error where oneDNN has none.
dnnl::convolution_forward::primitive_desc ForwardInference(
    dnnl::algorithm algorithm, const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
    const dnnl::memory::dims& strides, const dnnl::memory::dims& dilates,
    const dnnl::memory::dims& padding_low, const dnnl::memory::dims& padding_high,
    const dnnl::primitive_attr& attr);

// Whether `plan` may run as a weight gradient on oneDNN's backward-weights
// primitive (convolution_thunk_weight_grad.cc): f32, no feature groups or
// window reversal, and a window of more elements than the output has
// pixels (a 32x32 window over 3x3 taps), which the forward primitive runs
// slowly; without lhs dilation no negative low padding, with it (a
// transposed convolution's weight gradient) no rhs dilation, stride 1 and
// padding within the taps' reach. BuildWeightGrad also wants the minibatch
// (the HLO's input feature) outermost in both operands.
bool WeightGradCandidate(const ConvPlan& plan);

// Whether `plan` may run on oneDNN's backward-data primitive
// (convolution_thunk_backward_data.cc): f32, no groups, lhs dilation (a
// transposed convolution, a strided one's input gradient), window stride
// 1, padding within the dilated window's reach on each side and a window
// of no more elements than the output has pixels, which the forward
// primitive runs on the dilated input. An epilogue (a relu, a bias) runs
// after the primitive, on the output.
bool BackwardDataCandidate(const ConvPlan& plan);

// Places `size` bytes at the end of a scratch area of `bytes` bytes, which
// grows past them (aligned); returns their offset.
int64_t Place(int64_t& bytes, int64_t size);

// A dense channels-last array of `dims` ([N, C, spatial...]).
dnnl::memory::desc ChannelsLast(const dnnl::memory::dims& dims, dnnl::memory::data_type type);

// The oneDNN path of CreateConvolutionThunk: one forward-inference
// convolution primitive, or pieces of it (BuildPieces), made at compile time.
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
  int64_t scratch_bytes() const override { return scratch_bytes_; }
  // The plan Build got (its HLO left out); the loader builds from it again.
  absl::Status Serialize(ThunkWriter& writer) const override {
    if (plan_.rhs.literal == nullptr && plan_.rhs.operand < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "convolution %", name(),
          " freed its constant weights once packed (SetKeepSerializableState was off)"));
    }
    writer.Begin(ThunkTag::kDnnlConvolution, *this);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    WriteConvPlan(plan_, writer);
    return absl::OkStatus();
  }

  bool reference() const { return reference_; }
  bool split_into_rows() const { return !pieces_.empty() && pieces_[0].features_begin < 0; }
  bool split_into_features() const { return !pieces_.empty() && pieces_[0].features_begin >= 0; }
  bool winograd() const { return winograd_; }
  bool pointwise_into_slice() const { return !pointwise_weights_.empty(); }
  // The convolution on depthwise_rows.h's kernel (BuildDepthwiseRows),
  // or null: what Execute runs, and a chain's bands.
  const DepthwiseRows* depthwise_rows() const {
    return depthwise_rows_ ? &*depthwise_rows_ : nullptr;
  }
  bool weight_grad() const { return weight_grad_; }
  bool backward_data() const { return backward_data_.has_value(); }
  const ConvPlan& plan() const { return plan_; }
  const std::vector<int64_t>& operand_values() const { return operand_values_; }

  // --- Bands of rows, for a chain of convolutions (conv_chain.h) ---
  // Whether the convolution can run over bands of its output rows, each
  // band its own primitive: f32, two spatial dims, batch 1, packed
  // constant weights, input and output dense channels-last and read and
  // written in place, no Winograd, the epilogue as post-ops with a
  // constant scale and bias (an addend through the sum post-op).
  bool RowBandsAvailable() const;
  // The window along the rows (the outermost spatial dim).
  ConvRowWindow RowBandWindow() const;
  // A primitive for a team of one from `in_rows` input rows to `out_rows`
  // output rows, `pad_low` and `pad_high` rows of zeros above and below
  // the input's, both dense channels-last; its index for RunRowBand, or -1
  // when oneDNN declines it or would run a fallback.
  int AddRowBand(int64_t in_rows, int64_t out_rows, int64_t pad_low, int64_t pad_high);
  // The most scratchpad bytes a band of AddRowBand's asks for.
  int64_t row_band_scratchpad_bytes() const { return row_band_scratchpad_bytes_; }
  // Runs band `band` on the calling thread from `src` (its first input
  // row) into `dst` (its first output row), the addend's matching rows
  // from `addend` (null without one) copied into `dst` first.
  absl::Status RunRowBand(int band, const char* src, char* dst, const char* addend,
                          char* scratchpad) const;

 private:
  // The epilogue after the primitive on the output `out` (f32 or bf16,
  // rounding after each step), from the dense scale, bias and addend (each
  // null when absent).
  void EpilogueAfter(const char* scale, const char* bias, const char* addend, char* out) const;
  template <typename E>
  void EpilogueAfterAs(const E* scale, const E* bias, const E* addend, E* out) const;
  // Multiplies the dense weights ([O, ...] or [G, O/G, ...], row-major) by
  // the per-feature `scale`.
  void ScaleWeights(const float* scale, float* weights) const;
  // Copies the addend into the output for the sum post-op, split across
  // the run's threads.
  void CopyAddend(const ThunkContext& context, const char* addend, char* out) const;

  // One primitive of a convolution split into rows (conv_row_split.h).
  struct Piece {
    dnnl::convolution_forward primitive;
    dnnl::memory::desc src, dst;
    // Element offsets from the input view's start (src_offset_ included)
    // and the output's; the piece's output rows, in bytes.
    int64_t src_offset = 0, dst_offset = 0, dst_bytes = 0;
    int weights = 0;  // index into piece_weights_
    int64_t scratchpad_offset = 0, scratchpad_size = 0;
    // With gather_rows_: the piece's input rows [in_begin, in_end), copied
    // channels-last into its scratch at gather_offset (bytes) before it runs.
    int64_t in_begin = 0, in_end = 0, gather_offset = -1;
    // A piece of output features [features_begin, features_begin +
    // features) over all pixels (BuildFeaturePieces), or -1 for rows: it
    // writes its features dense into its scratch at dst_temp_offset (bytes;
    // the addend's copied there first) and copies them into the output.
    int64_t features_begin = -1, features = 0, pixels = 0, dst_temp_offset = 0;
    dnnl::memory::desc bias;  // the piece's features of the native bias
    // A piece in a blocked layout (BuildWinogradPieces): its input rows
    // (src_user, at src_offset) reordered into its scratch at
    // blocked_src_offset (bytes) before it runs, its output (and the
    // addend first) in its scratch at blocked_dst_offset, reordered into
    // the output's rows (dst_user, at dst_offset) after.
    std::optional<dnnl::reorder> src_reorder, dst_reorder, addend_reorder;
    dnnl::memory::desc src_user, dst_user;
    int64_t blocked_src_offset = -1, blocked_dst_offset = -1;
  };
  // The convolution as oneDNN's backward-weights primitive when it is a
  // weight gradient that the primitive reads in place (WeightGradCandidate;
  // false, nothing changed, otherwise), and its run
  // (convolution_thunk_weight_grad.cc).
  bool BuildWeightGrad();
  // The convolution as a product over pixels on the small-dot kernel,
  // writing its slice in place (PointwiseIntoSliceCandidate; false, nothing
  // changed, otherwise), and its run (convolution_thunk_pointwise.cc).
  bool BuildPointwiseIntoSlice();
  absl::Status RunPointwiseIntoSlice(const ThunkContext& context, char* scratch) const;
  // A 3x3 depthwise convolution (batch 1, f32, dense channels-last, constant
  // weights and per-feature bias, no scale or addend, relu/clamp/none) on
  // depthwise_rows.h's kernel besides the oneDNN primitive and its row
  // bands, and its run over pieces of output rows on the intra-op pool
  // (convolution_thunk_depthwise.cc).
  void BuildDepthwiseRows();
  absl::Status RunDepthwiseRows(const ThunkContext& context) const;
  absl::Status RunWeightGrad(const ThunkContext& context, char* scratch) const;
  // An lhs-dilated weight gradient's copy with its taps reversed from a
  // sum in the output's layout (`dims`, `strides`: oneDNN's diff_weights
  // on the output), placed at the end of `scratch_bytes`; false when the
  // output's layout is not dense.
  bool PlanReversal(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides,
                    int64_t& scratch_bytes);
  // The convolution as oneDNN's backward-data primitive on the undilated
  // input (BackwardDataCandidate; false, nothing changed, otherwise), and
  // its run (convolution_thunk_backward_data.cc).
  bool BuildBackwardData();
  absl::Status RunBackwardData(const ThunkContext& context, char* scratch) const;

  // Splits the convolution into one piece per thread of the intra-op pool
  // when it can (see pieces_); leaves pieces_ empty otherwise.
  // `user_weights`: the constant weights in weights_user_desc_ (null when
  // they are not constant).
  void BuildPieces(const dnnl::primitive_attr& attr, const dnnl::memory::dims& strides,
                   const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                   const dnnl::memory::dims& padding_high, const dnnl::memory* user_weights);
  // A Winograd convolution (winograd_) as one piece per thread over ranges
  // of its output rows, each a Winograd primitive for a team of one that
  // reorders its own input rows into oneDNN's blocked layout and its output
  // rows back (see pieces_); false (and no pieces) when it cannot.
  bool BuildWinogradPieces(const dnnl::primitive_attr& attr, const dnnl::memory::dims& strides,
                           const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                           const dnnl::memory::dims& padding_high,
                           const dnnl::memory& user_weights);
  // A Winograd convolution as one piece per thread over ranges of its
  // output features, each a Winograd primitive for a team of one over all
  // pixels that reorders the whole input into oneDNN's blocked layout and
  // its features of the output back (see pieces_); false (and no pieces)
  // when it cannot.
  bool BuildWinogradFeaturePieces(const dnnl::primitive_attr& attr,
                                  const dnnl::memory::dims& strides,
                                  const dnnl::memory::dims& dilates,
                                  const dnnl::memory::dims& padding_low,
                                  const dnnl::memory::dims& padding_high,
                                  const dnnl::memory& user_weights);
  // Whether a Winograd convolution splits over its output features before
  // its rows: when its weights are at least as large as its input.
  bool WinogradFeaturesFirst() const;
  // The convolution as one piece per thread over ranges of its output
  // features, all pixels each, when its rows do not divide evenly (see
  // pieces_); false (and no pieces) when it cannot.
  bool BuildFeaturePieces(const dnnl::primitive_attr& attr, const dnnl::memory::dims& strides,
                          const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                          const dnnl::memory::dims& padding_high);
  // The builders' result, kept once every piece was made: the pieces, the
  // packed weights they index and the scratch they need.
  // The rest of a Winograd piece (src_user, src, dst, dst_user and its
  // weights set): the reorders into and out of oneDNN's blocked layout
  // (and the addend's), its scratchpad and blocked rows placed in the
  // scratch (scratch_bytes grows), and the primitive.
  void FinishBlockedPiece(const dnnl::convolution_forward::primitive_desc& pd, Piece& piece,
                          int64_t& scratch_bytes) const;
  void SetPieces(std::vector<Piece> pieces, std::vector<dnnl::memory> weights,
                 int64_t scratchpad_bytes);
  // The start of the output in this run (a slice's: ConvPlan::output_offset).
  char* OutputBase(const ThunkContext& context) const {
    return static_cast<char*>(context.address(output_value_)) +
           plan_.output_offset * primitive_util::ByteWidth(plan_.output_type);
  }
  // Runs the pieces across the run's pool; `src` is the input view's start.
  absl::Status RunPieces(const ThunkContext& context, const char* src, char* out, const char* scale,
                         const char* bias, char* scratchpads) const;
  absl::Status RunPiece(const Piece& piece, const char* src, char* out, const char* addend,
                        const char* scale, const char* bias, char* scratchpads) const;
  // Adds the arguments of the epilogue the primitive runs itself (not
  // epilogue_after_): the scale as post-op 0 unless folded into the weights,
  // and the bias as the primitive's own or as the next post-op.
  void AddEpilogueArgs(const char* scale, const char* bias, DnnlArgs& args) const;

  // The scale or bias of the epilogue: a dense array over the output's
  // canonical dims, 1 where it does not vary.
  struct EpilogueInput {
    Operand operand;
    std::vector<int64_t> dims, strides;  // strides into `operand`
    // The dense array's strides: `dims` in the output's order in memory (a
    // channels-last output's features fastest), so that the epilogue after
    // the primitive reads it as it walks the output.
    std::vector<int64_t> dense_strides;
    // `dims` and `strides` from the outermost dim of that order in: the
    // StridedCopy that writes the dense array.
    std::vector<int64_t> copy_dims, copy_strides;
    // The operand already has those strides along every dim larger than 1:
    // read in place.
    bool dense = false;
    int64_t element_size = 4;
    dnnl::memory::desc desc;
    std::shared_ptr<char[]> constant;
  };
  EpilogueInput MakeEpilogueInput(const Operand& operand) const;
  // The dense array of `input` for this run: the operand itself when it is
  // dense and apart from the output (the primitive writes the output before
  // the epilogue reads it), else a copy in `storage` (unless constant).
  const char* EpilogueData(const ThunkContext& context, const EpilogueInput& input,
                           char* storage) const;

  // The buffers a run needs, each at an offset in the thunk's scratch
  // memory (-1 where not needed), laid out once Build knows their sizes.
  enum Slot {
    kGathered,
    kSrc,
    kWeightsDense,
    kWeights,
    kDst,
    kScale,
    kBias,
    kAddend,
    kPad,
    kPieceScratchpads,
    kNumSlots
  };
  void PlanScratch();

  ConvPlan plan_;
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  bool reference_ = false;
  int64_t element_size_ = 4;  // of the input and kernel
  // Input: read in place at src_offset_ (elements), or gathered
  // (GatherDilatedInput, conv_input_gather.h).
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
  // The addend (residual): when it is laid out as the output (dst_user_desc_)
  // and the primitive writes that layout, copied into the output first and
  // added by a sum post-op (oneDNN 2.6 runs a full-size binary post-op on a
  // slower kernel: jit instead of brgconv, ~25% for resnet18's blocks), else
  // a dense copy for the epilogue after the primitive.
  std::optional<EpilogueInput> addend_;
  bool addend_post_op_ = false;
  // A primitive on oneDNN's Winograd kernels (WinogradCandidate), which
  // read and write a blocked layout; with an addend post-op, the addend is
  // reordered into dst's blocked layout by addend_reorder_ first.
  bool winograd_ = false;
  std::optional<dnnl::reorder> addend_reorder_;
  // A per-feature f32 scale of f32 weights much smaller than the output
  // (kMinOutputsPerWeight in convolution_thunk.cc): folded into the weights
  // (a dense copy of them, multiplied per output feature before the reorder
  // into the primitive's layout: conv(x, w) * s as conv(x, w * s), a few
  // thousand multiplies instead of a binary post-op over the output), so
  // that the bias can be the primitive's own (an inference batch norm).
  bool fold_scale_ = false;
  // A per-feature f32 bias without a scale (or with a folded one): the
  // primitive's own bias argument (one value per output feature) rather
  // than a binary post-op.
  bool native_bias_ = false;
  dnnl::memory::desc native_bias_desc_;
  // The epilogue runs after the primitive instead of as post-ops: for bf16
  // results (rounded after each step, as the HLO says) and for a scale or
  // bias that varies along more than the feature dim (oneDNN 2.6 post-ops
  // mis-read a full-size operand whose layout differs from the output's).
  bool epilogue_after_ = false;
  dnnl::convolution_forward primitive_;
  // A weight gradient (BuildWeightGrad): the input as src, the kernel
  // operand as diff_dst (src_desc_, weights_desc_: the whole minibatch),
  // the output as diff_weights (dst_desc_, reordered into dst_user_desc_),
  // the epilogue after.
  bool weight_grad_ = false;
  // Its pieces: ranges of the minibatch, each a primitive for a team of
  // one run on the intra-op pool, writing its sum (the first into kDst, the
  // others into the pieces' scratch at weights_offset) and using its
  // scratchpad there.
  struct WeightGradPiece {
    dnnl::convolution_backward_weights primitive;
    dnnl::memory::desc src, diff_dst;
    int64_t batch_begin = 0;
    int64_t weights_offset = -1, scratchpad_offset = 0, scratchpad_size = 0;
  };
  std::vector<WeightGradPiece> weight_grad_pieces_;
  // An lhs-dilated weight gradient (a transposed convolution's): the HLO's
  // kernel operand as src, its input as diff_dst, and the sum's taps
  // reversed: reordered into the pieces' scratch at unreversed_offset_
  // (bytes, the output's layout), then copied into the output in its
  // memory order (StridedCopy of reversal_dims_ and reversal_strides_, in
  // elements from reversal_offset_).
  bool weight_grad_dilated_ = false;
  int64_t unreversed_offset_ = 0, reversal_offset_ = 0;
  std::vector<int64_t> reversal_dims_, reversal_strides_;
  // An lhs-dilated convolution (BuildBackwardData): the input as diff_dst
  // (src_user_desc_, reordered into src_desc_ when they differ), the kernel
  // copied dense and reversed (weights_gather_*, weights_user_desc_), the
  // output as diff_src (dst_desc_, reordered into dst_user_desc_).
  std::optional<dnnl::convolution_backward_data> backward_data_;
  // Bytes from one minibatch item to the next in the input and the kernel
  // operand (the output gradient).
  int64_t src_batch_stride_ = 0, diff_dst_batch_stride_ = 0;
  int64_t scratchpad_size_ = 0;
  // The convolution as pieces over ranges of its output's outermost
  // spatial dim (rows), one per thread of the intra-op pool, each a
  // primitive for a team of one that Execute runs on the pool instead of
  // primitive_ on oneDNN's OpenMP team. Between two thunks that split
  // this way the pool's workers spin (ThreadPool::AfterJob::kSpin), where
  // OpenMP's (throttled, omp_team.h) go to sleep and are woken twice per
  // primitive: tens of microseconds each on a VM, as much as a small
  // convolution of a MobileNet takes. Only for batch 1, constant weights,
  // input and output read in place with the rows outermost (channels-last),
  // the epilogue as post-ops, and small convolutions (see BuildPieces).
  std::vector<Piece> pieces_;
  // The input is not channels-last (an NCHW image into a network's first
  // convolution, which oneDNN would reorder whole on its team before the
  // primitive): each piece gathers its own input rows channels-last
  // (GatherRowsChannelsLast) from the input's dims and element strides.
  bool gather_rows_ = false;
  std::vector<int64_t> gather_dims_, gather_strides_;
  // The pieces' weights: packed_weights_ first for row pieces, each feature
  // piece's own for those.
  std::vector<dnnl::memory> piece_weights_;
  int64_t piece_scratchpad_bytes_ = 0;
  // The output is a slice of a larger channels-last array whose pixels lie
  // this many elements apart (ConvPlan::output_strides): row pieces too
  // write their rows dense into their scratch (dst_temp_offset) and copy
  // each pixel's features into the slice; 0 otherwise.
  int64_t slice_pixel_stride_ = 0;
  // The primitive writes the slice's pixels dense (in kDst, when not in
  // pieces): copied in with CopyRuns rather than oneDNN's reorder.
  bool slice_dense_ = false;
  // A pointwise convolution into a concatenation's slice
  // (BuildPointwiseIntoSlice): out[pixel, :] = act(in[pixel, :] x W + bias),
  // the weights (scale folded in) packed once for the small-dot kernel
  // (small_dot.h), which stores each tile of results at the slice's pixel
  // stride: no dense copy of the output, no copy into the slice. The
  // oneDNN path writes its pixels dense and copies them in (oneDNN 2.6's
  // direct kernels and brgemm matmul take no strided output).
  std::vector<float> pointwise_weights_;
  const float* pointwise_packed_ = nullptr;  // into pointwise_weights_, aligned
  SmallDotShape pointwise_shape_;            // all pixels; a run's pieces take rows of it
  // BuildDepthwiseRows's convolution, its weights ([3][3][features]) and bias.
  std::optional<DepthwiseRows> depthwise_rows_;
  std::vector<float> depthwise_rows_weights_, depthwise_rows_bias_;
  std::array<int64_t, kNumSlots> slot_offset_{};
  int64_t scratch_bytes_ = 0;
  // The primitive's attributes and window, kept for AddRowBand.
  dnnl::primitive_attr attr_;
  dnnl::memory::dims strides_, dilates_, padding_low_, padding_high_;
  // AddRowBand's primitives (row pieces with their offsets 0), their
  // weights in piece_weights_.
  std::vector<Piece> row_bands_;
  int64_t row_band_scratchpad_bytes_ = 0;
};

}  // namespace axle::cpu::conv

#endif  // AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_INTERNAL_H_
