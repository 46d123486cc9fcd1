// Convolution thunks: convolution and convolution epilogues through oneDNN,
// or the loop (convolution_loop_thunk.cc) for what oneDNN does not take (see
// convolution_thunk.h). The oneDNN thunk (convolution_thunk_internal.h):
// its primitive built, its scratch laid out, a run; its pieces are in
// convolution_thunk_pieces.cc, its epilogue in convolution_thunk_epilogue.cc.
#include "axle/cpu/runtime/convolution_thunk.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/conv_input_gather.h"
#include "axle/cpu/runtime/conv_row_split.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/dnnl_post_ops.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/plan_serialization.h"

namespace axle::cpu {
namespace conv {
namespace {

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

}  // namespace

bool WinogradCandidate(const ConvPlan& plan, const dnnl::memory::dims& strides,
                       const dnnl::memory::dims& dilates) {
  if (!EnvironmentOptions::Read().cpu_winograd.value_or(true) || plan.spatial != 2 ||
      plan.feature_groups * plan.batch_groups != 1 || plan.lhs.type() != F32 ||
      plan.rhs.type() != F32 || plan.output_type != F32) {
    return false;
  }
  for (int64_t i = 0; i < 2; ++i) {
    if (plan.rhs_dims[2 + i] != 3 || strides[i] != 1 || dilates[i] != 0) return false;
  }
  // oneDNN's AVX-512 Winograd kernels work on blocks of 16 input and 16
  // output features: with fewer, the padded blocks' transforms cost more
  // than the direct sum saves (a CNN's first layer, 3 -> 16 features on
  // f32[16,32,32,3]: 0.11 ms direct, 0.70 ms Winograd at 2 threads).
  constexpr int64_t kMinWinogradFeatures = 16;
  if (plan.rhs_dims[0] < kMinWinogradFeatures || plan.rhs_dims[1] < kMinWinogradFeatures) {
    return false;
  }
  // Smaller ones save less than their reorders and oneDNN's team cost
  // (one thread, standalone: DenseNet's 7x7 128 -> 32, 1.8M multiply-adds,
  // 0.026 ms direct, 0.024 ms Winograd before the reorders; its 14x14 one,
  // 7.2M, 0.113 against 0.077 ms).
  constexpr int64_t kMinWinogradMultiplyAdds = int64_t{1} << 22;
  int64_t multiply_adds = 1;
  for (int64_t d : plan.out_dims) multiply_adds *= d;
  for (size_t d = 1; d < plan.rhs_dims.size(); ++d) multiply_adds *= plan.rhs_dims[d];
  return multiply_adds >= kMinWinogradMultiplyAdds;
}

bool IsFallback(const dnnl::convolution_forward::primitive_desc& pd) {
  return IsReference(pd) || std::strstr(pd.impl_info_str(), "gemm") != nullptr;
}

dnnl::convolution_forward::primitive_desc ForwardInference(
    dnnl::algorithm algorithm, const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
    const dnnl::memory::dims& strides, const dnnl::memory::dims& dilates,
    const dnnl::memory::dims& padding_low, const dnnl::memory::dims& padding_high,
    const dnnl::primitive_attr& attr) {
  if (bias != nullptr) {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src,
                                         weights, *bias, dst, strides, dilates, padding_low,
                                         padding_high);
    return {desc, attr, DnnlEngine()};
  }
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src, weights,
                                       dst, strides, dilates, padding_low, padding_high);
  return {desc, attr, DnnlEngine()};
}

dnnl::memory::desc ChannelsLast(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  // Features fastest, then the spatial dims innermost first, the batch last.
  std::vector<int64_t> minor_to_major = {1};
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 2; --d) minor_to_major.push_back(d);
  minor_to_major.push_back(0);
  return dnnl::memory::desc(dims, type, ShapeUtil::StridesInLayout(dims, minor_to_major));
}

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
  if ((WeightGradCandidate(p) && BuildWeightGrad()) ||
      (BackwardDataCandidate(p) && BuildBackwardData()) || BuildPointwiseIntoSlice()) {
    PlanScratch();
    return absl::OkStatus();
  }
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
  dnnl::memory::data_type type = DnnlType(p.lhs.type());
  if (gather_input_) {
    src_user_desc_ = ChannelsLast(src_dims, type);
  } else {
    for (int64_t i = 0; i < p.spatial; ++i) src_offset_ += crop_low_[i] * ls[2 + i];
    src_user_desc_ = dnnl::memory::desc(src_dims, type, ls);
  }
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
  auto make = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                  dnnl::algorithm algorithm =
                      dnnl::algorithm::convolution_direct) -> std::optional<PrimitiveDesc> {
    try {
      return ForwardInference(algorithm, src, weights_any,
                              native_bias_ ? &native_bias_desc_ : nullptr, dst, strides, dilates,
                              padding_low, padding_high, attr);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  };
  // Small Winograd convolutions with weights read at run time only on one
  // thread: on more, Winograd's pieces (BuildWinogradPieces) need constant
  // weights, and on oneDNN's team its transforms' barriers and the
  // weights' transform (0.12 ms per run here) cost more than its saving,
  // while the direct primitive splits well (f32[8,32,32,16] 3x3 -> 32,
  // 38M multiply-adds, 2 threads on 2 loaded cores: 0.89 ms Winograd, 0.36
  // ms direct; 0.65 ms either way on one thread). Larger ones keep it: its
  // saving grows with them (f32[16,32,32,32] 3x3 -> 32, 151M: 1.73 ms
  // against 2.68 ms direct on one core; resnet_block_infer's 925M ones
  // about 10 against 16 ms).
  constexpr int64_t kMinRuntimeWeightsWinogradMultiplyAdds = int64_t{1} << 26;
  int64_t multiply_adds = 1;
  for (int64_t d : p.out_dims) multiply_adds *= d;
  for (size_t d = 1; d < p.rhs_dims.size(); ++d) multiply_adds *= p.rhs_dims[d];
  const bool winograd = WinogradCandidate(p, strides, dilates) &&
                        (p.rhs.literal != nullptr || ThreadPool::DefaultNumThreads() < 2 ||
                         multiply_adds >= kMinRuntimeWeightsWinogradMultiplyAdds);
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
    dnnl::memory::desc src_any(src_dims, type, dnnl::memory::format_tag::any);
    dnnl::memory::desc dst_any(p.out_dims, DnnlType(p.output_type), dnnl::memory::format_tag::any);
    if (winograd && !epilogue_after_) {
      std::optional<PrimitiveDesc> pd =
          make(src_any, dst_any, dnnl::algorithm::convolution_winograd);
      if (pd && !IsFallback(*pd)) return pd;
    }
    std::optional<PrimitiveDesc> pd = make(src_user_desc_, dst_dense);
    if (!pd || IsFallback(*pd)) {
      std::optional<PrimitiveDesc> preferred = make(src_any, dst_any);
      if (preferred && (!pd || !IsFallback(*preferred))) pd = std::move(preferred);
    }
    return pd;
  };
  std::optional<PrimitiveDesc> pd = choose();
  winograd_ = pd && std::strstr(pd->impl_info_str(), "wino") != nullptr;
  // A Winograd primitive writes its blocked layout: the addend is reordered
  // into it for the sum post-op (winograd_ above), not added after.
  if (pd && addend_post_op_ && !winograd_ && pd->dst_desc() != dst_user_desc_) {
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
      src_reorder_ = DnnlReorder(src_user_desc_, src_desc_);
    }
    if (dst_desc_ != dst_user_desc_) {
      dst_reorder_ = DnnlReorder(dst_desc_, dst_user_desc_);
      if (addend_post_op_) addend_reorder_ = DnnlReorder(dst_user_desc_, dst_desc_);
    }
    if (weights_desc_ != weights_user_desc_) {
      try {
        weights_reorder_ = DnnlReorder(weights_user_desc_, weights_desc_);
      } catch (const dnnl::error&) {
        // oneDNN's Winograd weights reorder reads oihw and hwio only: other
        // layouts (the hwoi kernel of JAX's input-gradient convolution,
        // dim_labels ..._01oi->...) through a dense copy of the weights.
        if (gather_weights_) throw;
        gather_weights();
        weights_reorder_ = DnnlReorder(weights_user_desc_, weights_desc_);
      }
    }
    // Constant weights: into the primitive's layout once (unless a scale
    // read at run time is folded into them).
    // The constant weights in their user layout, kept until the pieces are
    // built: a Winograd piece packs its own from them (oneDNN reorders no
    // Winograd layout into another).
    std::vector<char> dense;
    std::optional<dnnl::memory> user_weights;
    if (p.rhs.literal != nullptr && (!fold_scale_ || scale_->constant)) {
      const char* base = static_cast<const char*>(p.rhs.literal->untyped_data());
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
      user_weights.emplace(weights_user_desc_, DnnlEngine(), const_cast<char*>(base));
      packed_weights_ = dnnl::memory(weights_desc_, DnnlEngine());
      dnnl::stream stream(DnnlEngine());
      DnnlCopy(stream, *user_weights, packed_weights_);
      stream.wait();
    }
    primitive_ = dnnl::convolution_forward(*pd);
    attr_ = attr;
    strides_ = strides;
    dilates_ = dilates;
    padding_low_ = padding_low;
    padding_high_ = padding_high;
    BuildPieces(attr, strides, dilates, padding_low, padding_high,
                user_weights ? &*user_weights : nullptr);
    BuildDepthwiseRows();
    // Freed unless a serialized copy will need it (thunk_serialization.h).
    if (user_weights && !KeepSerializableState()) plan_.rhs.literal.reset();
  } catch (const dnnl::error& error) {
    return absl::UnimplementedError(absl::StrCat("oneDNN convolution: ", error.what()));
  }
  PlanScratch();
  return absl::OkStatus();
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
  if (weight_grad_) return RunWeightGrad(context, scratch);
  if (backward_data_) return RunBackwardData(context, scratch);
  if (pointwise_into_slice()) return RunPointwiseIntoSlice(context, scratch);
  if (depthwise_rows_) return RunDepthwiseRows(context);
  auto slot = [&](Slot s) { return scratch + slot_offset_[s]; };
  try {
    const dnnl::engine& engine = DnnlEngine();
    static thread_local dnnl::stream stream(engine);  // see RunPiece
    DnnlArgs args;
    // Input.
    const char* lhs = BaseOf(context, p.lhs, operand_values_);
    char* src = const_cast<char*>(lhs) + src_offset_ * element_size_;
    if (gather_input_) {
      src = slot(kGathered);
      GatherDilatedInput(p, crop_low_, src_spatial_, lhs, element_size_, src);
    }
    const char* scale = scale_ ? EpilogueData(context, *scale_, slot(kScale)) : nullptr;
    if (!pieces_.empty()) {
      const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
      return RunPieces(context, src, OutputBase(context), scale, bias, slot(kPieceScratchpads));
    }
    args.Set(DNNL_ARG_SRC,
             src_reorder_
                 ? DnnlInput(stream, src_user_desc_, src, src_reorder_, src_desc_, slot(kSrc))
                 : DnnlThreadMemory(&src_user_desc_, DNNL_ARG_SRC, src_user_desc_, src));
    // Kernel.
    if (packed_weights_) {
      args.Set(DNNL_ARG_WEIGHTS, packed_weights_);
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
      args.Set(DNNL_ARG_WEIGHTS, DnnlInput(stream, weights_user_desc_, rhs, weights_reorder_,
                                           weights_desc_, slot(kWeights)));
    }
    // Output.
    char* out = OutputBase(context);
    dnnl::memory dst_memory =
        DnnlThreadMemory(&dst_desc_, DNNL_ARG_DST, dst_desc_, dst_reorder_ ? slot(kDst) : out);
    args.Set(DNNL_ARG_DST, dst_memory);
    // Scale and bias: post-ops 0 and 1 (or 0 without a scale), or the bias
    // the primitive's own; the addend in the output, for the sum post-op.
    const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
    if (addend_post_op_) {
      const char* addend = BaseOf(context, addend_->operand, operand_values_);
      if (addend_reorder_) {  // into the primitive's layout (a Winograd one)
        dnnl::memory user(dst_user_desc_, engine, const_cast<char*>(addend));
        addend_reorder_->execute(stream, user, dst_memory);
      } else if (addend != out) {
        CopyAddend(context, addend, out);
      }
    }
    if (!epilogue_after_) AddEpilogueArgs(scale, bias, args);
    if (scratchpad_size_ > 0) {
      args.Set(DNNL_ARG_SCRATCHPAD, DnnlThreadScratchpad(this, scratchpad_size_, slot(kPad)));
    }
    args.Execute(primitive_, stream);
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
    if (epilogue_after_) EpilogueAfter(scale, bias, addend, out);
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
  }
  return absl::OkStatus();
}

bool DnnlTakes(const ConvPlan& plan) {
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

absl::StatusOr<std::unique_ptr<Thunk>> MakeDnnlConvolutionThunk(std::string name,
                                                                std::vector<int64_t> operand_values,
                                                                int64_t output_value,
                                                                ConvPlan plan) {
  auto thunk = std::make_unique<DnnlConvolutionThunk>(std::move(name), std::move(operand_values),
                                                      output_value);
  // A grouped 1-D convolution on oneDNN's 2-D depthwise and grouped
  // kernels (WithUnitRow): [8,256,32] depthwise, 7 taps, 0.177 -> 0.013 ms.
  if (plan.spatial == 1 && plan.feature_groups > 1) plan = WithUnitRow(std::move(plan));
  AXLE_RETURN_IF_ERROR(thunk->Build(std::move(plan)));
  return std::unique_ptr<Thunk>(std::move(thunk));
}

}  // namespace conv

std::unique_ptr<Thunk> LoadDnnlConvolutionThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  conv::ConvPlan plan = ReadConvPlan(reader);
  if (!reader.ok()) return nullptr;
  if (!ConvPlanOperandsIn(plan, operand_values.size()) || !conv::DnnlTakes(plan)) {
    reader.Fail(absl::StrCat("convolution %", name, ": a plan oneDNN does not take"));
    return nullptr;
  }
  auto thunk = std::make_unique<conv::DnnlConvolutionThunk>(
      std::move(name), std::move(operand_values), output_value);
  if (absl::Status status = thunk->Build(std::move(plan)); !status.ok()) {
    reader.Fail(absl::StrCat("convolution %", thunk->name(), ": ", status.message()));
    return nullptr;
  }
  return thunk;
}

absl::StatusOr<std::string> ConvolutionThunkKind(const Thunk& thunk) {
  if (const auto* dnnl = dynamic_cast<const conv::DnnlConvolutionThunk*>(&thunk)) {
    if (dnnl->reference()) return std::string("onednn-reference");
    if (dnnl->weight_grad()) return std::string("onednn-weight-grad");
    if (dnnl->backward_data()) return std::string("onednn-backward-data");
    if (dnnl->pointwise_into_slice()) return std::string("small-dot-pointwise");
    if (dnnl->depthwise_rows() != nullptr) return std::string("depthwise-rows");
    if (dnnl->winograd()) {
      if (dnnl->split_into_features()) return std::string("onednn-winograd-features");
      return std::string(dnnl->split_into_rows() ? "onednn-winograd-rows" : "onednn-winograd");
    }
    if (dnnl->split_into_features()) return std::string("onednn-features");
    return std::string(dnnl->split_into_rows() ? "onednn-rows" : "onednn");
  }
  if (conv::IsLoopConvolutionThunk(thunk)) return std::string("loop");
  return absl::InvalidArgumentError("not a convolution thunk");
}

}  // namespace axle::cpu
