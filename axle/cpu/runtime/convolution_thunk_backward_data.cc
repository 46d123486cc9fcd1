//===- convolution_thunk_backward_data.cc - An lhs-dilated convolution ----===//
//
// The oneDNN convolution thunk (convolution_thunk_internal.h) on a
// convolution whose input is dilated (lhs_dilate, XLA's base dilation): a
// transposed convolution (JAX's conv_transpose) or the input gradient of a
// strided one. The forward primitive runs it on the dilated input, whose
// holes are zeros: with lhs_dilate=2x2, 3 of every 4 multiply-adds are
// wasted, after a gather of the dilated input (f32[4,16,16,32] to 32x32
// through a 3x3 window: 0.44 ms). It is oneDNN's backward-data primitive
// (the adjoint of a strided convolution) on the undilated input:
//   out[n, o, y...] = sum_{i, k...} lhs[n, i, x...] * rhs[o, i, k...]
//                     where y + k * D - P = x * S
// is
//   diff_src[n, o, y...] = sum_{i, kh...} diff_dst[n, i, x...] * w[i, o, kh...]
//                          where y = x * S - P' + kh * D
// with stride S = lhs_dilate, dilation D = rhs_dilate, the kernel's taps
// reversed (kh = K - 1 - k, or not when the HLO reverses its window),
// P' = (K - 1) * D - P on each side (both within [0, (K - 1) * D]), the
// HLO's input as diff_dst and its input features as oneDNN's output
// channels. The weights are copied dense (a kernel's size) each run, in
// the reversed order. An epilogue runs after the primitive, on the output
// (JAX's conv_transpose then relu, conv_transpose_strided_grad: 0.42 ms
// on the forward primitive with relu as its post-op, 0.08 ms so).
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <vector>

#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/dnnl_args.h"
#include "axle/cpu/runtime/dnnl_engine.h"

namespace axle::cpu::conv {

bool BackwardDataCandidate(const ConvPlan& plan) {
  if (plan.lhs.type() != F32 || plan.rhs.type() != F32 || plan.output_type != F32 ||
      plan.feature_groups * plan.batch_groups != 1 || plan.spatial < 1 || plan.spatial > 3) {
    return false;
  }
  bool dilated = false;
  int64_t window = 1, pixels = 1;
  for (int64_t i = 0; i < plan.spatial; ++i) {
    window *= plan.rhs_dims[2 + i];
    pixels *= plan.out_dims[2 + i];
    const WindowDimension& w = plan.window[i];
    const int64_t reach = (plan.rhs_dims[2 + i] - 1) * w.window_dilation();
    if (w.stride() != 1 || w.padding_low() < 0 || w.padding_high() < 0 || w.padding_low() > reach ||
        w.padding_high() > reach) {
      return false;
    }
    dilated = dilated || w.base_dilation() > 1;
  }
  // Not a transposed convolution's weight gradient (a 32x32 window over
  // 3x3 taps), which the backward-data kernels run slower than the forward
  // ones.
  return dilated && window <= pixels;
}

bool DnnlConvolutionThunk::BuildBackwardData() {
  const ConvPlan& p = plan_;
  const std::vector<int64_t> ls = p.LhsStrides(), rs = p.RhsStrides(), os = p.OutStrides();
  for (int64_t s : ls) {
    if (s == 0) return false;  // a broadcast input: the forward path gathers it
  }
  const dnnl::memory::data_type f32 = dnnl::memory::data_type::f32;
  const dnnl::memory::desc diff_dst(p.lhs_dims, f32, ls);
  const dnnl::memory::desc diff_src(p.out_dims, f32, os);
  // oneDNN's [I, O, kh...] from the HLO's [O, I, k...], the taps reversed
  // unless the window already is.
  std::vector<int64_t> dims = {p.rhs_dims[1], p.rhs_dims[0]};
  std::vector<int64_t> strides = {rs[1], rs[0]};
  int64_t offset = 0;
  dnnl::memory::dims stride, dilate, padding_low, padding_high;
  for (int64_t i = 0; i < p.spatial; ++i) {
    const WindowDimension& w = p.window[i];
    const int64_t taps = p.rhs_dims[2 + i];
    dims.push_back(taps);
    strides.push_back(w.window_reversal() ? rs[2 + i] : -rs[2 + i]);
    if (!w.window_reversal()) offset += (taps - 1) * rs[2 + i];
    const int64_t reach = (taps - 1) * w.window_dilation();
    stride.push_back(w.base_dilation());
    dilate.push_back(w.window_dilation() - 1);
    padding_low.push_back(reach - w.padding_low());
    padding_high.push_back(reach - w.padding_high());
  }
  const dnnl::memory::desc weights_dense(dims, f32, ShapeUtil::RowMajorStrides(dims));
  const dnnl::memory::desc weights_any(dims, f32, dnnl::memory::format_tag::any);
  try {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make = [&](const dnnl::memory::desc& src_desc, const dnnl::memory::desc& dst_desc) {
      dnnl::convolution_forward::desc forward(
          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_desc,
          weights_any, dst_desc, stride, dilate, padding_low, padding_high);
      dnnl::convolution_forward::primitive_desc hint(forward, DnnlEngine());
      dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, src_desc,
                                                 weights_any, dst_desc, stride, dilate, padding_low,
                                                 padding_high);
      return dnnl::convolution_backward_data::primitive_desc(desc, attr, DnnlEngine(), hint);
    };
    auto fallback = [](const dnnl::convolution_backward_data::primitive_desc& pd) {
      const char* impl = pd.impl_info_str();
      return std::strncmp(impl, "ref", 3) == 0 || std::strstr(impl, "gemm") != nullptr;
    };
    // The operands' own layouts first, else the primitive's with reorders.
    dnnl::convolution_backward_data::primitive_desc pd = make(diff_src, diff_dst);
    if (fallback(pd)) {
      pd = make(dnnl::memory::desc(p.out_dims, f32, dnnl::memory::format_tag::any),
                dnnl::memory::desc(p.lhs_dims, f32, dnnl::memory::format_tag::any));
      if (fallback(pd)) return false;
    }
    src_user_desc_ = diff_dst;
    src_desc_ = pd.diff_dst_desc();
    if (src_desc_ != src_user_desc_) {
      src_reorder_ = DnnlReorder(src_user_desc_, src_desc_);
    }
    dst_user_desc_ = diff_src;
    dst_desc_ = pd.diff_src_desc();
    if (dst_desc_ != dst_user_desc_) {
      dst_reorder_ = DnnlReorder(dst_desc_, dst_user_desc_);
    }
    weights_user_desc_ = weights_dense;
    weights_desc_ = pd.weights_desc();
    if (weights_desc_ != weights_user_desc_) {
      weights_reorder_ = DnnlReorder(weights_user_desc_, weights_desc_);
    }
    scratchpad_size_ = static_cast<int64_t>(pd.scratchpad_desc().get_size());
    backward_data_ = dnnl::convolution_backward_data(pd);
  } catch (const dnnl::error&) {
    src_reorder_.reset();
    dst_reorder_.reset();
    weights_reorder_.reset();
    return false;
  }
  gather_weights_ = true;
  weights_gather_dims_ = dims;
  weights_gather_strides_ = strides;
  weights_gather_offset_ = offset;
  // An epilogue (a relu, a bias) after the primitive, on the output.
  epilogue_after_ = true;
  if (p.scale) scale_ = MakeEpilogueInput(*p.scale);
  if (p.bias) bias_ = MakeEpilogueInput(*p.bias);
  if (p.addend) addend_ = MakeEpilogueInput(*p.addend);
  return true;
}

absl::Status DnnlConvolutionThunk::RunBackwardData(const ThunkContext& context,
                                                   char* scratch) const {
  const ConvPlan& p = plan_;
  auto slot = [&](Slot s) { return scratch + slot_offset_[s]; };
  // The epilogue's operands read (or copied, where they share the output's
  // buffer) before the primitive writes the output.
  const char* scale = scale_ ? EpilogueData(context, *scale_, slot(kScale)) : nullptr;
  const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
  const char* addend = addend_ ? EpilogueData(context, *addend_, slot(kAddend)) : nullptr;
  char* out = OutputBase(context);
  try {
    const dnnl::engine& engine = DnnlEngine();
    static thread_local dnnl::stream stream(engine);  // one per thread, as RunPiece's
    DnnlArgs args;
    const char* lhs = BaseOf(context, p.lhs, operand_values_);
    args.Set(DNNL_ARG_DIFF_DST,
             src_reorder_
                 ? DnnlInput(stream, src_user_desc_, lhs, src_reorder_, src_desc_, slot(kSrc))
                 : DnnlThreadMemory(&src_user_desc_, DNNL_ARG_DIFF_DST, src_user_desc_, lhs));
    const char* rhs = BaseOf(context, p.rhs, operand_values_);
    char* dense = slot(kWeightsDense);
    StridedCopy(rhs + weights_gather_offset_ * element_size_, weights_gather_dims_,
                weights_gather_strides_, element_size_, dense);
    args.Set(DNNL_ARG_WEIGHTS, weights_reorder_
                                   ? DnnlInput(stream, weights_user_desc_, dense, weights_reorder_,
                                               weights_desc_, slot(kWeights))
                                   : DnnlThreadMemory(&weights_user_desc_, DNNL_ARG_WEIGHTS,
                                                      weights_user_desc_, dense));
    dnnl::memory diff_src =
        DnnlThreadMemory(&dst_desc_, DNNL_ARG_DIFF_SRC, dst_desc_, dst_reorder_ ? slot(kDst) : out);
    args.Set(DNNL_ARG_DIFF_SRC, diff_src);
    if (scratchpad_size_ > 0) {
      args.Set(DNNL_ARG_SCRATCHPAD, DnnlThreadScratchpad(this, scratchpad_size_, slot(kPad)));
    }
    args.Execute(*backward_data_, stream);
    if (dst_reorder_) {
      DnnlArgs copy;
      copy.Set(DNNL_ARG_FROM, diff_src);
      copy.Set(DNNL_ARG_TO, DnnlThreadMemory(&dst_user_desc_, DNNL_ARG_TO, dst_user_desc_, out));
      copy.Execute(*dst_reorder_, stream);
    }
    stream.wait();
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
  }
  EpilogueAfter(scale, bias, addend, out);
  return absl::OkStatus();
}

}  // namespace axle::cpu::conv
