// Convolution thunks: convolution and convolution epilogues through oneDNN,
// or the loop (convolution_loop_thunk.cc) for what oneDNN does not take (see
// convolution_thunk.h).
#include "axle/cpu/runtime/convolution_thunk.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/conv_row_split.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/dnnl_post_ops.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/plan_serialization.h"

namespace axle::cpu {
namespace {

using conv::Activation;
using conv::BaseOf;
using conv::ConvPlan;
using conv::Next;
using conv::Operand;
using conv::StridedCopy;

// ---------------------------------------------------------------------------
// The oneDNN path.

// `size` bytes at a kBufferAlignment boundary inside `storage`.
char* Aligned(std::vector<char>& storage, int64_t size) {
  storage.resize(std::max<int64_t>(1, size) + kBufferAlignment);
  return AlignUp(storage.data());
}

// A per-feature scale folds into weights with at least this many output
// elements per weight element.
constexpr int64_t kMinOutputsPerWeight = 8;

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

 private:
  // Copies the input into the dense channels-last buffer `out`: batch group
  // g of the input becomes features [g * C, (g + 1) * C), spatial dims are
  // lhs-dilated (holes are zeros) and cropped by negative padding.
  template <typename E>
  void GatherInput(const E* in, E* out) const;
  // The epilogue after the primitive (E: float or bfloat16, rounding after
  // each step).
  template <typename E>
  void EpilogueAfter(const E* scale, const E* bias, const E* addend, E* out) const;
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
  };
  // Splits the convolution into one piece per thread of the intra-op pool
  // when it can (see pieces_); leaves pieces_ empty otherwise.
  void BuildPieces(const dnnl::primitive_attr& attr, const dnnl::memory::dims& strides,
                   const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                   const dnnl::memory::dims& padding_high);
  // The convolution as one piece per thread over ranges of its output
  // features, all pixels each, when its rows do not divide evenly (see
  // pieces_); false (and no pieces) when it cannot.
  bool BuildFeaturePieces(const dnnl::primitive_attr& attr, const dnnl::memory::dims& strides,
                          const dnnl::memory::dims& dilates, const dnnl::memory::dims& padding_low,
                          const dnnl::memory::dims& padding_high);
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
  void AddEpilogueArgs(const dnnl::engine& engine, const char* scale, const char* bias,
                       std::unordered_map<int, dnnl::memory>& args) const;

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
  // The addend (residual): when it is laid out as the output (dst_user_desc_)
  // and the primitive writes that layout, copied into the output first and
  // added by a sum post-op (oneDNN 2.6 runs a full-size binary post-op on a
  // slower kernel: jit instead of brgconv, ~25% for resnet18's blocks), else
  // a dense copy for the epilogue after the primitive.
  std::optional<EpilogueInput> addend_;
  bool addend_post_op_ = false;
  // A per-feature f32 scale of f32 weights much smaller than the output
  // (kMinOutputsPerWeight): folded into the weights (a dense copy of them,
  // multiplied per output feature before the reorder into the primitive's
  // layout: conv(x, w) * s as conv(x, w * s), a few thousand multiplies
  // instead of a binary post-op over the output), so that the bias can be
  // the primitive's own (an inference batch norm).
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
  std::array<int64_t, kNumSlots> slot_offset_{};
  int64_t scratch_bytes_ = 0;
};

void DnnlConvolutionThunk::PlanScratch() {
  scratch_bytes_ = 0;
  auto add = [&](Slot slot, bool needed, int64_t size) {
    slot_offset_[slot] = -1;
    if (!needed) return;
    slot_offset_[slot] = scratch_bytes_;
    scratch_bytes_ += RoundUpToAlignment(std::max<int64_t>(1, size));
  };
  const bool weights_per_run = !packed_weights_;
  add(kGathered, gather_input_, src_user_desc_.get_size());
  add(kSrc, src_reorder_.has_value() && pieces_.empty(), src_desc_.get_size());
  add(kWeightsDense, weights_per_run && gather_weights_, weights_user_desc_.get_size());
  add(kWeights, weights_per_run && weights_reorder_.has_value(), weights_desc_.get_size());
  add(kDst, dst_reorder_.has_value() && pieces_.empty(), dst_desc_.get_size());
  add(kScale, scale_ && !scale_->constant, scale_ ? scale_->desc.get_size() : 0);
  add(kBias, bias_ && !bias_->constant, bias_ ? bias_->desc.get_size() : 0);
  add(kAddend, epilogue_after_ && addend_ && !addend_->constant,
      addend_ ? addend_->desc.get_size() : 0);
  add(kPad, scratchpad_size_ > 0 && pieces_.empty(), scratchpad_size_);
  add(kPieceScratchpads, piece_scratchpad_bytes_ > 0, piece_scratchpad_bytes_);
}

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
  // A dense copy of the weights per run (or once, for constant ones).
  auto gather_weights = [&]() {
    gather_weights_ = true;
    weights_gather_dims_ = weights_dims;
    weights_gather_strides_ = weights_strides;
    weights_user_desc_ = dnnl::memory::desc(weights_dims, DnnlType(p.rhs.type()),
                                            ShapeUtil::RowMajorStrides(weights_dims));
  };
  if (gather_weights_) {
    gather_weights();
  } else {
    weights_user_desc_ = dnnl::memory::desc(weights_dims, DnnlType(p.rhs.type()), weights_strides);
  }
  dnnl::memory::desc weights_any(weights_dims, DnnlType(p.rhs.type()),
                                 dnnl::memory::format_tag::any);
  // Output.
  std::vector<int64_t> os = p.OutStrides();
  dst_user_desc_ = dnnl::memory::desc(p.out_dims, DnnlType(p.output_type), os);
  // A slice of a larger array: the primitive writes the output's own dense
  // layout (oneDNN runs strided outputs on its reference kernel), copied
  // into the slice.
  const dnnl::memory::desc dst_dense(p.out_dims, DnnlType(p.output_type), p.DenseOutStrides());
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
  if (p.addend) {
    addend_ = MakeEpilogueInput(*p.addend);
    // In place only when it has the output's layout (oneDNN 2.6 binary
    // post-ops mis-read other layouts, as above).
    addend_post_op_ = !epilogue_after_ && p.addend->literal == nullptr &&
                      p.OutputOrder(*p.addend) == os && p.addend->type() == p.output_type;
    epilogue_after_ = epilogue_after_ || !addend_post_op_;
  }
  // Only where the weights are small beside the output (a layer's kernel,
  // not a weight gradient's activations: scaling those every run costs more
  // than the post-op, and tiny scaled values may run denormal).
  int64_t weight_elements = 1, output_elements = 1;
  for (int64_t d : p.rhs_dims) weight_elements *= d;
  for (int64_t d : p.out_dims) output_elements *= d;
  fold_scale_ = scale_ && !epilogue_after_ && p.output_type == F32 && p.lhs.type() == F32 &&
                p.rhs.type() == F32 && weight_elements * kMinOutputsPerWeight <= output_elements;
  if (fold_scale_ && !gather_weights_) gather_weights();
  native_bias_ = bias_ && (!scale_ || fold_scale_) && !epilogue_after_ && p.output_type == F32;
  native_bias_desc_ = dnnl::memory::desc({p.out_dims[1]}, dnnl::memory::data_type::f32,
                                         dnnl::memory::format_tag::a);
  using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;
  dnnl::primitive_attr attr;
  auto make = [&](const dnnl::memory::desc& src,
                  const dnnl::memory::desc& dst) -> std::optional<PrimitiveDesc> {
    try {
      if (native_bias_) {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
            weights_any, native_bias_desc_, dst, strides, dilates, padding_low, padding_high);
        return PrimitiveDesc(desc, attr, DnnlEngine());
      }
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, src, weights_any,
                                           dst, strides, dilates, padding_low, padding_high);
      return PrimitiveDesc(desc, attr, DnnlEngine());
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  };
  // The operands' own layouts first; the primitive's preferred ones when
  // oneDNN would otherwise run a fallback implementation.
  auto choose = [&]() -> std::optional<PrimitiveDesc> {
    dnnl::post_ops post_ops;
    if (scale_ && !epilogue_after_ && !fold_scale_) {
      post_ops.append_binary(dnnl::algorithm::binary_mul, scale_->desc);
    }
    if (bias_ && !epilogue_after_ && !native_bias_) {
      post_ops.append_binary(dnnl::algorithm::binary_add, bias_->desc);
    }
    if (addend_post_op_) post_ops.append_sum(1.f);
    AppendActivationPostOp(post_ops, epilogue_after_ ? Activation::kNone : p.activation, p.low,
                           p.high);
    attr = dnnl::primitive_attr();
    attr.set_post_ops(post_ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    std::optional<PrimitiveDesc> pd = make(src_user_desc_, dst_dense);
    if (!pd || IsFallback(*pd)) {
      dnnl::memory::desc src_any(src_dims, type, dnnl::memory::format_tag::any);
      dnnl::memory::desc dst_any(p.out_dims, DnnlType(p.output_type),
                                 dnnl::memory::format_tag::any);
      std::optional<PrimitiveDesc> preferred = make(src_any, dst_any);
      if (preferred && (!pd || !IsFallback(*preferred))) pd = std::move(preferred);
    }
    return pd;
  };
  std::optional<PrimitiveDesc> pd = choose();
  if (pd && addend_post_op_ && pd->dst_desc() != dst_user_desc_) {
    // The primitive writes another layout: the addend after it.
    addend_post_op_ = false;
    epilogue_after_ = true;
    fold_scale_ = false;
    native_bias_ = false;
    pd = choose();
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
          dnnl::reorder::primitive_desc(DnnlEngine(), src_user_desc_, DnnlEngine(), src_desc_));
    }
    if (dst_desc_ != dst_user_desc_) {
      dst_reorder_ = dnnl::reorder(
          dnnl::reorder::primitive_desc(DnnlEngine(), dst_desc_, DnnlEngine(), dst_user_desc_));
    }
    if (weights_desc_ != weights_user_desc_) {
      weights_reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(
          DnnlEngine(), weights_user_desc_, DnnlEngine(), weights_desc_));
    }
    // Constant weights: into the primitive's layout once (unless a scale
    // read at run time is folded into them).
    if (p.rhs.literal != nullptr && (!fold_scale_ || scale_->constant)) {
      const char* base = static_cast<const char*>(p.rhs.literal->untyped_data());
      std::vector<char> dense;
      if (gather_weights_) {
        char* out = Aligned(dense, weights_user_desc_.get_size());
        StridedCopy(base + weights_gather_offset_ * element_size_, weights_gather_dims_,
                    weights_gather_strides_, element_size_, out);
        if (fold_scale_) {
          ScaleWeights(reinterpret_cast<const float*>(scale_->constant.get()),
                       reinterpret_cast<float*>(out));
        }
        base = out;
      }
      dnnl::memory user(weights_user_desc_, DnnlEngine(), const_cast<char*>(base));
      packed_weights_ = dnnl::memory(weights_desc_, DnnlEngine());
      dnnl::stream stream(DnnlEngine());
      dnnl::reorder(user, packed_weights_).execute(stream, user, packed_weights_);
      stream.wait();
      // Freed unless a serialized copy will need it (thunk_serialization.h).
      if (!KeepSerializableState()) plan_.rhs.literal.reset();
    }
    primitive_ = dnnl::convolution_forward(*pd);
    BuildPieces(attr, strides, dilates, padding_low, padding_high);
  } catch (const dnnl::error& error) {
    return absl::UnimplementedError(absl::StrCat("oneDNN convolution: ", error.what()));
  }
  PlanScratch();
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
                                               const EpilogueInput& input, char* storage) const {
  if (input.constant) return input.constant.get();
  StridedCopy(BaseOf(context, input.operand, operand_values_), input.dims, input.strides,
              input.element_size, storage);
  return storage;
}

absl::Status DnnlConvolutionThunk::Execute(const ThunkContext& context) const {
  OmpTeamShare share(context.run_options);
  const ConvPlan& p = plan_;
  // The run's buffers: in the executable's arena, or here when the caller
  // gave no scratch memory.
  std::vector<char> own_scratch;
  char* scratch = context.scratch;
  if (scratch == nullptr || context.scratch_bytes < scratch_bytes_) {
    scratch = Aligned(own_scratch, scratch_bytes_);
  }
  auto slot = [&](Slot s) { return scratch + slot_offset_[s]; };
  try {
    const dnnl::engine& engine = DnnlEngine();
    dnnl::stream stream(engine);
    std::unordered_map<int, dnnl::memory> args;
    // Input.
    const char* lhs = BaseOf(context, p.lhs, operand_values_);
    char* src = const_cast<char*>(lhs) + src_offset_ * element_size_;
    if (gather_input_) {
      src = slot(kGathered);
      if (element_size_ == 2) {
        GatherInput(reinterpret_cast<const uint16_t*>(lhs), reinterpret_cast<uint16_t*>(src));
      } else {
        GatherInput(reinterpret_cast<const uint32_t*>(lhs), reinterpret_cast<uint32_t*>(src));
      }
    }
    const char* scale = scale_ ? EpilogueData(context, *scale_, slot(kScale)) : nullptr;
    if (!pieces_.empty()) {
      const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
      return RunPieces(context, src, OutputBase(context), scale, bias, slot(kPieceScratchpads));
    }
    dnnl::memory src_memory(src_user_desc_, engine, src);
    if (src_reorder_) {
      dnnl::memory user = src_memory;
      src_memory = dnnl::memory(src_desc_, engine, slot(kSrc));
      src_reorder_->execute(stream, user, src_memory);
    }
    args[DNNL_ARG_SRC] = src_memory;
    // Kernel.
    if (packed_weights_) {
      args[DNNL_ARG_WEIGHTS] = packed_weights_;
    } else {
      const char* rhs = BaseOf(context, p.rhs, operand_values_);
      if (gather_weights_) {
        char* dense = slot(kWeightsDense);
        StridedCopy(rhs + weights_gather_offset_ * element_size_, weights_gather_dims_,
                    weights_gather_strides_, element_size_, dense);
        if (fold_scale_) {
          ScaleWeights(reinterpret_cast<const float*>(scale), reinterpret_cast<float*>(dense));
        }
        rhs = dense;
      }
      dnnl::memory weights(weights_user_desc_, engine, const_cast<char*>(rhs));
      if (weights_reorder_) {
        dnnl::memory user = weights;
        weights = dnnl::memory(weights_desc_, engine, slot(kWeights));
        weights_reorder_->execute(stream, user, weights);
      }
      args[DNNL_ARG_WEIGHTS] = weights;
    }
    // Output.
    char* out = OutputBase(context);
    dnnl::memory dst_memory(dst_desc_, engine, dst_reorder_ ? slot(kDst) : out);
    args[DNNL_ARG_DST] = dst_memory;
    // Scale and bias: post-ops 0 and 1 (or 0 without a scale), or the bias
    // the primitive's own; the addend in the output, for the sum post-op.
    const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
    if (addend_post_op_) {
      const char* addend = BaseOf(context, addend_->operand, operand_values_);
      if (addend != out) CopyAddend(context, addend, out);
    }
    if (!epilogue_after_) AddEpilogueArgs(engine, scale, bias, args);
    if (scratchpad_size_ > 0) {
      args[DNNL_ARG_SCRATCHPAD] = DnnlScratchpad(scratchpad_size_, slot(kPad));
    }
    primitive_.execute(stream, args);
    if (dst_reorder_ && !slice_dense_) {
      dnnl::memory user(dst_user_desc_, engine, out);
      dst_reorder_->execute(stream, dst_memory, user);
    }
    stream.wait();
    if (slice_dense_) {  // batch 1 (SlicePixelStride): each pixel's features
      const int64_t size = primitive_util::ByteWidth(p.output_type);
      int64_t pixels = 1;
      for (size_t d = 2; d < p.out_dims.size(); ++d) pixels *= p.out_dims[d];
      CopyRuns(slot(kDst), p.out_dims[1] * size, out, slice_pixel_stride_ * size,
               p.out_dims[1] * size, pixels);
    }
    const char* addend =
        epilogue_after_ && addend_ ? EpilogueData(context, *addend_, slot(kAddend)) : nullptr;
    if (epilogue_after_ && p.output_type == BF16) {
      EpilogueAfter(reinterpret_cast<const bfloat16*>(scale),
                    reinterpret_cast<const bfloat16*>(bias),
                    reinterpret_cast<const bfloat16*>(addend), reinterpret_cast<bfloat16*>(out));
    } else if (epilogue_after_) {
      EpilogueAfter(reinterpret_cast<const float*>(scale), reinterpret_cast<const float*>(bias),
                    reinterpret_cast<const float*>(addend), reinterpret_cast<float*>(out));
    }
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
  }
  return absl::OkStatus();
}

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

// `desc` with `rows` rows (dim 2) and the batch stride of a dense array.
dnnl::memory::desc WithRows(const dnnl::memory::desc& desc, int64_t rows) {
  dnnl::memory::dims dims = desc.dims();
  dnnl::memory::dims strides(desc.data.format_desc.blocking.strides,
                             desc.data.format_desc.blocking.strides + dims.size());
  dims[2] = rows;
  strides[0] = strides[2] * rows;
  return dnnl::memory::desc(dims, desc.data_type(), strides);
}

// Whether `desc` has batch 1 and plain element strides (no inner blocks).
bool PlainBatchOne(const dnnl::memory::desc& desc) {
  return desc.data.format_kind == dnnl_blocked && desc.data.format_desc.blocking.inner_nblks == 0 &&
         desc.dims().size() >= 3 && desc.dims()[0] == 1;
}

// A dense channels-last array of `dims` ([N, C, spatial...]).
dnnl::memory::desc ChannelsLast(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  dnnl::memory::dims strides(dims.size());
  int64_t stride = dims[1];
  strides[1] = 1;
  for (size_t d = dims.size() - 1; d >= 2; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  strides[0] = stride;
  return dnnl::memory::desc(dims, type, strides);
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

}  // namespace

void DnnlConvolutionThunk::BuildPieces(const dnnl::primitive_attr& attr,
                                       const dnnl::memory::dims& strides,
                                       const dnnl::memory::dims& dilates,
                                       const dnnl::memory::dims& padding_low,
                                       const dnnl::memory::dims& padding_high) {
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
  ConvRowWindow window;
  window.in_rows = src_rows.dims()[2];
  window.size = p.rhs_dims[2];
  window.stride = strides[0];
  window.dilation = dilates[0] + 1;
  window.pad_low = padding_low[0];
  window.pad_high = padding_high[0];
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
        piece.dst_temp_offset = scratchpad_bytes;
        scratchpad_bytes += RoundUpToAlignment(piece.dst_bytes);
      }
      dnnl::memory::dims low = padding_low, high = padding_high;
      low[0] = row.pad_low;
      high[0] = row.pad_high;
      using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;
      std::optional<PrimitiveDesc> pd;
      if (native_bias_) {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, piece.src,
            weights_any, native_bias_desc_, piece.dst, strides, dilates, low, high);
        pd.emplace(desc, attr, DnnlEngine());
      } else {
        dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::convolution_direct, piece.src,
                                             weights_any, piece.dst, strides, dilates, low, high);
        pd.emplace(desc, attr, DnnlEngine());
      }
      if (IsFallback(*pd) || pd->src_desc() != piece.src || pd->dst_desc() != piece.dst) return;
      // The weights in this primitive's layout: packed_weights_ reordered once
      // when it picked another.
      piece.weights = -1;
      for (size_t w = 0; w < weights.size(); ++w) {
        if (weights[w].get_desc() == pd->weights_desc()) piece.weights = static_cast<int>(w);
      }
      if (piece.weights < 0) {
        dnnl::memory packed(pd->weights_desc(), DnnlEngine());
        dnnl::stream stream(DnnlEngine());
        dnnl::reorder(packed_weights_, packed).execute(stream, packed_weights_, packed);
        stream.wait();
        piece.weights = static_cast<int>(weights.size());
        weights.push_back(packed);
      }
      piece.scratchpad_size = static_cast<int64_t>(pd->scratchpad_desc().get_size());
      piece.scratchpad_offset = scratchpad_bytes;
      scratchpad_bytes += RoundUpToAlignment(std::max<int64_t>(1, piece.scratchpad_size));
      if (gather_rows) {
        piece.gather_offset = scratchpad_bytes;
        scratchpad_bytes += RoundUpToAlignment(static_cast<int64_t>(piece.src.get_size()));
      }
      piece.primitive = dnnl::convolution_forward(*pd);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return;
  }
  pieces_ = std::move(pieces);
  if (gather_rows) {
    gather_rows_ = true;
    gather_dims_ = src_user_desc_.dims();
    gather_strides_.assign(src_user_desc_.data.format_desc.blocking.strides,
                           src_user_desc_.data.format_desc.blocking.strides + gather_dims_.size());
  }
  piece_weights_ = std::move(weights);
  piece_scratchpad_bytes_ = scratchpad_bytes;
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
    dnnl::reorder(packed_weights_, plain).execute(stream, packed_weights_, plain);
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
      using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;
      std::optional<PrimitiveDesc> pd;
      if (native_bias_) {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, piece.src,
            weights_any, piece.bias, piece.dst, strides, dilates, padding_low, padding_high);
        pd.emplace(desc, attr, DnnlEngine());
      } else {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, piece.src,
            weights_any, piece.dst, strides, dilates, padding_low, padding_high);
        pd.emplace(desc, attr, DnnlEngine());
      }
      if (IsFallback(*pd) || pd->src_desc() != piece.src || pd->dst_desc() != piece.dst) {
        return false;
      }
      dnnl::memory::dims offsets(weights_dims.size(), 0);
      offsets[0] = piece.features_begin;
      dnnl::memory slice(plain_desc.submemory_desc(piece_weights_dims, offsets), DnnlEngine(),
                         plain.get_data_handle());
      dnnl::memory packed(pd->weights_desc(), DnnlEngine());
      dnnl::reorder(slice, packed).execute(stream, slice, packed);
      stream.wait();
      piece.weights = static_cast<int>(weights.size());
      weights.push_back(packed);
      piece.scratchpad_size = static_cast<int64_t>(pd->scratchpad_desc().get_size());
      piece.scratchpad_offset = scratch_bytes;
      scratch_bytes += RoundUpToAlignment(std::max<int64_t>(1, piece.scratchpad_size));
      piece.dst_temp_offset = scratch_bytes;
      scratch_bytes += RoundUpToAlignment(pixels * per_piece * out_size);
      piece.primitive = dnnl::convolution_forward(*pd);
      pieces.push_back(std::move(piece));
    }
  } catch (const dnnl::error&) {
    return false;
  }
  pieces_ = std::move(pieces);
  piece_weights_ = std::move(weights);
  piece_scratchpad_bytes_ = scratch_bytes;
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
    dnnl::stream stream(engine);
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
    } else if (addend != nullptr && addend != out) {
      std::memcpy(dst, addend + piece.dst_offset * out_size, piece.dst_bytes);
    }
    std::unordered_map<int, dnnl::memory> args;
    const char* piece_src = src + piece.src_offset * element_size_;
    if (piece.gather_offset >= 0) {
      char* gathered = scratchpads + piece.gather_offset;
      GatherRowsChannelsLast(src, element_size_, gather_dims_, gather_strides_, piece.in_begin,
                             piece.in_end, gathered);
      piece_src = gathered;
    }
    args[DNNL_ARG_SRC] = dnnl::memory(piece.src, engine, const_cast<char*>(piece_src));
    args[DNNL_ARG_WEIGHTS] = piece_weights_[piece.weights];
    args[DNNL_ARG_DST] = dnnl::memory(piece.dst, engine, dst);
    AddEpilogueArgs(engine, scale, bias, args);       // pieces imply !epilogue_after_
    if (piece.features_begin >= 0 && native_bias_) {  // no scale post-op (BuildFeaturePieces)
      args[DNNL_ARG_BIAS] = dnnl::memory(piece.bias, engine,
                                         const_cast<char*>(bias) + piece.features_begin * out_size);
    }
    if (piece.scratchpad_size > 0) {
      args[DNNL_ARG_SCRATCHPAD] =
          DnnlScratchpad(piece.scratchpad_size, scratchpads + piece.scratchpad_offset);
    }
    piece.primitive.execute(stream, args);
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

void DnnlConvolutionThunk::AddEpilogueArgs(const dnnl::engine& engine, const char* scale,
                                           const char* bias,
                                           std::unordered_map<int, dnnl::memory>& args) const {
  const bool scale_post_op = scale_ && !fold_scale_;
  if (scale_post_op) {
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
        dnnl::memory(scale_->desc, engine, const_cast<char*>(scale));
  }
  if (native_bias_) {
    args[DNNL_ARG_BIAS] = dnnl::memory(native_bias_desc_, engine, const_cast<char*>(bias));
  } else if (bias_) {
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(scale_post_op ? 1 : 0) | DNNL_ARG_SRC_1] =
        dnnl::memory(bias_->desc, engine, const_cast<char*>(bias));
  }
}

void DnnlConvolutionThunk::ScaleWeights(const float* scale, float* weights) const {
  const int64_t features = plan_.rhs_dims[0];
  int64_t per_feature = 1;
  for (size_t d = 1; d < plan_.rhs_dims.size(); ++d) per_feature *= plan_.rhs_dims[d];
  for (int64_t f = 0; f < features; ++f) {
    const float s = scale[f];
    float* row = weights + f * per_feature;
    for (int64_t i = 0; i < per_feature; ++i) row[i] *= s;
  }
}

void DnnlConvolutionThunk::CopyAddend(const ThunkContext& context, const char* addend,
                                      char* out) const {
  constexpr int64_t kBlockBytes = 256 << 10;
  const int64_t bytes = static_cast<int64_t>(dst_user_desc_.get_size());
  const int threads = context.thread_pool == nullptr ? 1
                      : context.max_threads > 0      ? context.max_threads
                                                     : context.thread_pool->num_threads();
  if (threads <= 1 || bytes < 2 * kBlockBytes) {
    std::memcpy(out, addend, bytes);
    return;
  }
  const int64_t blocks = (bytes + kBlockBytes - 1) / kBlockBytes;
  context.thread_pool->ParallelFor(
      blocks, 1,
      [&](int64_t begin, int64_t end) {
        const int64_t from = begin * kBlockBytes;
        const int64_t to = std::min(bytes, end * kBlockBytes);
        std::memcpy(out + from, addend + from, to - from);
      },
      threads);
}

template <typename E>
void DnnlConvolutionThunk::EpilogueAfter(const E* scale, const E* bias, const E* addend,
                                         E* out) const {
  const ConvPlan& p = plan_;
  if (!p.scale && !p.bias && !p.addend && p.activation == Activation::kNone) return;
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
  std::vector<int64_t> ss = dense_strides(scale_), bs = dense_strides(bias_),
                       as = dense_strides(addend_);
  std::vector<int64_t> o(p.out_dims.size(), 0);
  int64_t count = 1;
  for (int64_t d : p.out_dims) count *= d;
  for (int64_t e = 0; e < count; ++e, Next(p.out_dims, o)) {
    int64_t out_offset = 0, scale_offset = 0, bias_offset = 0, addend_offset = 0;
    for (size_t d = 0; d < o.size(); ++d) {
      out_offset += o[d] * os[d];
      scale_offset += o[d] * ss[d];
      bias_offset += o[d] * bs[d];
      addend_offset += o[d] * as[d];
    }
    E& value = out[out_offset];
    if (scale != nullptr) {
      value = E(static_cast<float>(value) * static_cast<float>(scale[scale_offset]));
    }
    if (bias != nullptr) {
      value = E(static_cast<float>(value) + static_cast<float>(bias[bias_offset]));
    }
    if (addend != nullptr) {
      value = E(static_cast<float>(value) + static_cast<float>(addend[addend_offset]));
    }
    ActivateInPlace(p.activation, static_cast<float>(p.low), static_cast<float>(p.high), &value, 1);
  }
}

}  // namespace

bool conv::DnnlTakes(const ConvPlan& plan) {
  PrimitiveType in = plan.lhs.type();
  if (in != plan.rhs.type() || (in != F32 && in != BF16)) return false;
  if (plan.output_type != F32 && !(in == BF16 && plan.output_type == BF16)) return false;
  if (plan.bias && plan.bias->type() != plan.output_type) return false;
  if (plan.scale && plan.scale->type() != plan.output_type) return false;
  if (plan.addend && plan.addend->type() != plan.output_type) return false;
  if (plan.spatial < 1 || plan.spatial > 3) return false;
  if (plan.feature_groups > 1 && plan.batch_groups > 1) return false;
  for (const auto* dims : {&plan.lhs_dims, &plan.rhs_dims, &plan.out_dims}) {
    for (int64_t d : *dims) {
      if (d == 0) return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Thunk>> conv::MakeDnnlConvolutionThunk(
    std::string name, std::vector<int64_t> operand_values, int64_t output_value, ConvPlan plan) {
  auto thunk = std::make_unique<DnnlConvolutionThunk>(std::move(name), std::move(operand_values),
                                                      output_value);
  AXLE_RETURN_IF_ERROR(thunk->Build(std::move(plan)));
  return std::unique_ptr<Thunk>(std::move(thunk));
}

std::unique_ptr<Thunk> LoadDnnlConvolutionThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  ConvPlan plan = ReadConvPlan(reader);
  if (!reader.ok()) return nullptr;
  if (!ConvPlanOperandsIn(plan, operand_values.size()) || !conv::DnnlTakes(plan)) {
    reader.Fail(absl::StrCat("convolution %", name, ": a plan oneDNN does not take"));
    return nullptr;
  }
  auto thunk = std::make_unique<DnnlConvolutionThunk>(std::move(name), std::move(operand_values),
                                                      output_value);
  if (absl::Status status = thunk->Build(std::move(plan)); !status.ok()) {
    reader.Fail(absl::StrCat("convolution %", thunk->name(), ": ", status.message()));
    return nullptr;
  }
  return thunk;
}

absl::StatusOr<std::string> ConvolutionThunkKind(const Thunk& thunk) {
  if (const auto* dnnl = dynamic_cast<const DnnlConvolutionThunk*>(&thunk)) {
    if (dnnl->reference()) return std::string("onednn-reference");
    if (dnnl->split_into_features()) return std::string("onednn-features");
    return std::string(dnnl->split_into_rows() ? "onednn-rows" : "onednn");
  }
  if (conv::IsLoopConvolutionThunk(thunk)) return std::string("loop");
  return absl::InvalidArgumentError("not a convolution thunk");
}

}  // namespace axle::cpu
