//===- convolution_thunk_weight_grad.cc - A weight gradient as one -------===//
//
// The oneDNN convolution thunk (convolution_thunk_internal.h) on a weight
// gradient: a convolution whose window covers more elements than its output
// has pixels, as the weight gradients of training programs do (JAX's
// dim_labels=f01b_i01o->01bf: the input's features are the batch, the
// window is the output gradient's whole image, the output the kernel's few
// taps). Every convolution without feature groups, lhs dilation or window
// reversal is a relabeled weight gradient:
//   out[b, o, k...] = sum_{i, w...} lhs[b, i, k * stride + w * rhs_dilation
//                                        - padding_low] * rhs[i, o, w...]
// is oneDNN's
//   diff_weights[o, b, k...] = sum_{n, w...} src[n, b, w * S + k * (D + 1)
//                                               - P] * diff_dst[n, o, w...]
// with n = i (the minibatch), S = rhs_dilation, D + 1 = stride, P =
// padding_low. oneDNN's backward-weights primitive reads the input and the
// output gradient in place, channels-last as JAX lays them out; the forward
// primitive on the relabeled problem (the thunk's other path) reorders both
// into blocked layouts and runs a 32x32 window over 3x3 outputs, 1.3-3x
// slower on the weight gradients of the JAX programs (docs/PERFORMANCE.md).
//
// batch_group_count G is the weight gradient of a grouped or depthwise
// convolution (JAX's transpose of feature_group_count): output feature
// o = g * O/G + oc reads input batch items g * B/G + b, which is oneDNN's
// grouped diff_weights[g, oc, b, k...] over src channels g * B/G + b and
// diff_dst channels g * O/G + oc. As a forward convolution oneDNN runs it
// as G groups of a window the size of the image (a depthwise weight
// gradient on f32[8,16,16,32]: 2.6 ms, 0.03 ms on backward-weights).
//
// With lhs dilation B (the weight gradient of a transposed convolution,
// JAX's conv_transpose: its input x dilated, the output gradient the
// window), stride 1 and no rhs dilation, the dilated input's nonzeros are
// lhs[b, i, a] at k + w - padding_low = a * B, which is the roles swapped:
// oneDNN's
//   diff_weights[b, o, kk...] = sum_{n, a...} src[n, o, a * B + kk - P]
//                                             * diff_dst[n, b, a...]
// with src the HLO's kernel operand (the image), diff_dst its input,
// kk = K - 1 - k the taps reversed and P = K - 1 - padding_low (both
// paddings within [0, K - 1]; with a stride, oneDNN's dilation, oneDNN 2.6
// has only gemm kernels). The forward path gathers the dilated input and
// runs the window over it, 3 of 4 multiply-adds on its holes
// (conv_transpose_strided_grad's f32[4,16,16,32] by a 32x32 window into
// 3x3x32x16: 0.73 ms, 0.105 ms on backward-weights, one thread); the sum
// is reordered into the output's layout and copied with its taps reversed
// (a kernel's size).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/dnnl_args.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/omp_team.h"

namespace axle::cpu::conv {
namespace {

// `desc` ([N, C, spatial...], any strides) cut to its first `batch` items.
dnnl::memory::desc PieceOf(const dnnl::memory::desc& desc, int64_t batch) {
  dnnl::memory::dims dims = desc.dims();
  dims[0] = batch;
  const auto& strides = desc.data.format_desc.blocking.strides;
  return dnnl::memory::desc(dims, desc.data_type(),
                            dnnl::memory::dims(strides, strides + dims.size()));
}

}  // namespace

bool WeightGradCandidate(const ConvPlan& plan) {
  if (plan.lhs.type() != F32 || plan.rhs.type() != F32 || plan.output_type != F32 ||
      plan.feature_groups != 1 || plan.spatial < 1 || plan.spatial > 3) {
    return false;
  }
  bool dilated = false;
  for (int64_t i = 0; i < plan.spatial; ++i)
    dilated = dilated || plan.window[i].base_dilation() > 1;
  int64_t window = 1, pixels = 1;
  for (int64_t i = 0; i < plan.spatial; ++i) {
    const WindowDimension& w = plan.window[i];
    if (w.window_reversal()) return false;
    if (dilated) {
      // No rhs dilation, stride 1 (oneDNN's dilation: with it oneDNN 2.6
      // offers only its gemm kernels), and padding within the taps' reach
      // on both sides: oneDNN's padding, reach - the HLO's, in [0, reach].
      const int64_t reach = plan.out_dims[2 + i] - 1;
      if (w.window_dilation() != 1 || w.stride() != 1 || w.padding_low() < 0 ||
          w.padding_high() < 0 || w.padding_low() > reach || w.padding_high() > reach) {
        return false;
      }
    } else if (w.padding_low() < 0) {
      return false;
    }
    window *= plan.rhs_dims[2 + i];
    pixels *= plan.out_dims[2 + i];
  }
  return window > pixels;
}

bool DnnlConvolutionThunk::BuildWeightGrad() {
  const ConvPlan& p = plan_;
  std::vector<int64_t> ls = p.LhsStrides(), rs = p.RhsStrides(), os = p.OutStrides();
  // The minibatch (the HLO's input feature) outermost in both operands, as
  // in a gradient's activations, so that a range of it is one block of
  // each: not a forward convolution's kernel (its input features inner to
  // its window, a global 7x7 convolution's), and no broadcast.
  for (size_t d = 0; d < ls.size(); ++d) {
    if (ls[d] == 0 || ls[d] > ls[1] || rs[d] == 0 || rs[d] > rs[1]) return false;
  }
  bool dilated = false;
  for (int64_t i = 0; i < p.spatial; ++i) dilated = dilated || p.window[i].base_dilation() > 1;
  // oneDNN's [N, C, spatial...] src and diff_dst, [O, I, spatial...]
  // diff_weights: the HLO's batch and feature roles swapped.
  auto swap_first = [](std::vector<int64_t> v) {
    std::swap(v[0], v[1]);
    return dnnl::memory::dims(v.begin(), v.end());
  };
  const dnnl::memory::desc lhs_all(swap_first(p.lhs_dims), dnnl::memory::data_type::f32,
                                   swap_first(ls));
  const dnnl::memory::desc rhs_all(swap_first(p.rhs_dims), dnnl::memory::data_type::f32,
                                   swap_first(rs));
  const dnnl::memory::desc& src_all = dilated ? rhs_all : lhs_all;
  const dnnl::memory::desc& diff_dst_all = dilated ? lhs_all : rhs_all;
  src_batch_stride_ = (dilated ? rs[1] : ls[1]) * element_size_;
  diff_dst_batch_stride_ = (dilated ? ls[1] : rs[1]) * element_size_;
  // [O, I, k...], or oneDNN's grouped [G, O/G, I, k...]; lhs-dilated, the
  // output's [B, O, k...] (oneDNN's output channels are the HLO's input
  // batch), grouped [G, B, O/G, k...].
  dnnl::memory::dims weights_dims, out_strides;
  if (dilated) {
    weights_dims.assign(p.out_dims.begin(), p.out_dims.end());
    out_strides.assign(os.begin(), os.end());
    if (p.batch_groups > 1) {
      weights_dims[1] /= p.batch_groups;
      weights_dims.insert(weights_dims.begin(), p.batch_groups);
      out_strides.insert(out_strides.begin(), weights_dims[2] * out_strides[1]);
    }
  } else {
    weights_dims = swap_first(p.out_dims);
    out_strides = swap_first(os);
    if (p.batch_groups > 1) {
      weights_dims[0] /= p.batch_groups;
      weights_dims.insert(weights_dims.begin(), p.batch_groups);
      out_strides.insert(out_strides.begin(), weights_dims[1] * out_strides[0]);
    }
  }
  dnnl::memory::dims strides, dilates, padding_low, padding_high;
  for (int64_t i = 0; i < p.spatial; ++i) {
    const WindowDimension& w = p.window[i];
    const int64_t input = p.lhs_dims[2 + i], window = p.rhs_dims[2 + i], taps = p.out_dims[2 + i];
    if (dilated) {
      // src the window (the HLO's kernel operand), diff_dst the input.
      const int64_t low = (taps - 1) * w.stride() - w.padding_low();
      strides.push_back(w.base_dilation());
      dilates.push_back(w.stride() - 1);
      padding_low.push_back(low);
      padding_high.push_back((input - 1) * w.base_dilation() + (taps - 1) * w.stride() + 1 -
                             window - low);
      continue;
    }
    strides.push_back(w.window_dilation());
    dilates.push_back(w.stride() - 1);
    padding_low.push_back(w.padding_low());
    // The high padding that makes the last window end on the last tap's
    // last element (oneDNN checks it; the HLO's may reach further, into
    // padding no output reads).
    padding_high.push_back((window - 1) * w.window_dilation() + (taps - 1) * w.stride() + 1 -
                           input - w.padding_low());
  }
  // One primitive per range of the minibatch (the HLO's input feature),
  // one per thread of the intra-op pool, each for a team of one, summed:
  // oneDNN's own team splits the minibatch too but reduces through
  // spinning barriers, which a loaded core stalls (batchnorm_train_step at
  // 2 threads on 2 loaded cores: 1.3 ms per run against 0.25 ms at best).
  const int64_t minibatch = p.lhs_dims[1];
  const int64_t count = std::min<int64_t>(std::max(1, ThreadPool::DefaultNumThreads()), minibatch);
  OmpTeamOfOne team;
  std::vector<WeightGradPiece> pieces;
  dnnl::memory::desc weights_desc;
  int64_t scratch_bytes = 0;
  try {
    const dnnl::memory::desc weights_any(weights_dims, dnnl::memory::data_type::f32,
                                         dnnl::memory::format_tag::any);
    for (int64_t i = 0; i < count; ++i) {
      WeightGradPiece piece;
      piece.batch_begin = minibatch * i / count;
      const int64_t size = minibatch * (i + 1) / count - piece.batch_begin;
      const dnnl::memory::desc src = PieceOf(src_all, size);
      const dnnl::memory::desc diff_dst = PieceOf(diff_dst_all, size);
      dnnl::convolution_forward::desc forward(
          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, weights_any,
          diff_dst, strides, dilates, padding_low, padding_high);
      dnnl::convolution_forward::primitive_desc hint(forward, DnnlEngine());
      dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, src,
                                                    weights_any, diff_dst, strides, dilates,
                                                    padding_low, padding_high);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, DnnlEngine(), hint);
      // Its reference or im2col + gemm kernels (layouts the jit kernels do
      // not read in place) run slower than the forward path.
      const char* impl = pd.impl_info_str();
      if (std::strncmp(impl, "ref", 3) == 0 || std::strstr(impl, "gemm") != nullptr ||
          pd.src_desc() != src || pd.diff_dst_desc() != diff_dst ||
          (i > 0 && pd.diff_weights_desc() != weights_desc)) {
        return false;
      }
      weights_desc = pd.diff_weights_desc();
      piece.primitive = dnnl::convolution_backward_weights(pd);
      piece.src = src;
      piece.diff_dst = diff_dst;
      // The first piece's sum in kDst, the others' in the pieces' scratch.
      if (i > 0) piece.weights_offset = Place(scratch_bytes, weights_desc.get_size());
      piece.scratchpad_size = static_cast<int64_t>(pd.scratchpad_desc().get_size());
      piece.scratchpad_offset = Place(scratch_bytes, piece.scratchpad_size);
      pieces.push_back(std::move(piece));
    }
    // The sum in the primitive's layout, reordered into the output's (both
    // a kernel's size).
    const dnnl::memory::desc out(weights_dims, dnnl::memory::data_type::f32, out_strides);
    if (dilated && !PlanReversal(weights_dims, out_strides, scratch_bytes)) return false;
    dst_reorder_ = DnnlReorder(weights_desc, out);
    dst_user_desc_ = out;
  } catch (const dnnl::error&) {
    return false;
  }
  dst_desc_ = weights_desc;
  weight_grad_pieces_ = std::move(pieces);
  piece_scratchpad_bytes_ = scratch_bytes;
  src_user_desc_ = src_desc_ = src_all;
  weights_user_desc_ = weights_desc_ = diff_dst_all;
  // The epilogue (a learning rate's scale, say) after the primitive: the
  // output is a kernel's size.
  epilogue_after_ = true;
  if (p.scale) scale_ = MakeEpilogueInput(*p.scale);
  if (p.bias) bias_ = MakeEpilogueInput(*p.bias);
  if (p.addend) addend_ = MakeEpilogueInput(*p.addend);
  weight_grad_ = true;
  weight_grad_dilated_ = dilated;
  return true;
}

bool DnnlConvolutionThunk::PlanReversal(const dnnl::memory::dims& dims,
                                        const dnnl::memory::dims& strides, int64_t& scratch_bytes) {
  // The output's dims in its memory order (strides falling), which must
  // tile it densely; the copy reads the unreversed sum (the same layout)
  // with the taps' strides negated.
  std::vector<size_t> order(dims.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return strides[a] > strides[b]; });
  const size_t taps_begin = dims.size() - static_cast<size_t>(plan_.spatial);
  int64_t dense = 1, offset = 0;
  std::vector<int64_t> reversal_dims, reversal_strides;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (dims[*it] > 1 && strides[*it] != dense) return false;
    dense *= dims[*it];
  }
  for (size_t d : order) {
    reversal_dims.push_back(dims[d]);
    if (d >= taps_begin) {
      reversal_strides.push_back(-strides[d]);
      offset += (dims[d] - 1) * strides[d];
    } else {
      reversal_strides.push_back(strides[d]);
    }
  }
  unreversed_offset_ = Place(scratch_bytes, dense * element_size_);
  reversal_offset_ = offset;
  reversal_dims_ = std::move(reversal_dims);
  reversal_strides_ = std::move(reversal_strides);
  return true;
}

absl::Status DnnlConvolutionThunk::RunWeightGrad(const ThunkContext& context, char* scratch) const {
  const ConvPlan& p = plan_;
  auto slot = [&](Slot s) { return scratch + slot_offset_[s]; };
  const char* lhs = BaseOf(context, p.lhs, operand_values_);
  const char* rhs = BaseOf(context, p.rhs, operand_values_);
  // Lhs-dilated, the kernel operand is the src.
  if (weight_grad_dilated_) std::swap(lhs, rhs);
  char* pieces_scratch = slot(kPieceScratchpads);
  auto weights_of = [&](const WeightGradPiece& piece) {
    return piece.weights_offset < 0 ? slot(kDst) : pieces_scratch + piece.weights_offset;
  };
  const int64_t count = static_cast<int64_t>(weight_grad_pieces_.size());
  absl::InlinedVector<absl::Status, 4> status(count);
  auto run = [&](int64_t begin, int64_t end) {
    OmpTeamOfOne team;
    const dnnl::engine& engine = DnnlEngine();
    for (int64_t i = begin; i < end; ++i) {
      const WeightGradPiece& piece = weight_grad_pieces_[i];
      try {
        static thread_local dnnl::stream stream(engine);  // one per thread, as RunPiece's
        DnnlArgs args;
        args.Set(DNNL_ARG_SRC, DnnlThreadMemory(&piece.src, DNNL_ARG_SRC, piece.src,
                                                lhs + piece.batch_begin * src_batch_stride_));
        args.Set(DNNL_ARG_DIFF_DST,
                 DnnlThreadMemory(&piece.diff_dst, DNNL_ARG_DIFF_DST, piece.diff_dst,
                                  rhs + piece.batch_begin * diff_dst_batch_stride_));
        args.Set(DNNL_ARG_DIFF_WEIGHTS,
                 DnnlThreadMemory(&piece, DNNL_ARG_DIFF_WEIGHTS, dst_desc_, weights_of(piece)));
        if (piece.scratchpad_size > 0) {
          args.Set(DNNL_ARG_SCRATCHPAD,
                   DnnlThreadScratchpad(&piece, piece.scratchpad_size,
                                        pieces_scratch + piece.scratchpad_offset));
        }
        args.Execute(piece.primitive, stream);
        stream.wait();
      } catch (const dnnl::error& error) {
        status[i] =
            absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
      }
    }
  };
  if (context.thread_pool == nullptr || count == 1) {
    run(0, count);
  } else {
    context.thread_pool->ParallelFor(count, 1, run, context.max_threads,
                                     ThreadPool::AfterJob::kSpin);
  }
  for (const absl::Status& piece_status : status) AXLE_RETURN_IF_ERROR(piece_status);
  // The pieces' sums added into the first's (padding included: the same
  // layout), then reordered into the output.
  float* sum = reinterpret_cast<float*>(slot(kDst));
  const int64_t elements = static_cast<int64_t>(dst_desc_.get_size() / sizeof(float));
  for (int64_t i = 1; i < count; ++i) {
    const float* part = reinterpret_cast<const float*>(weights_of(weight_grad_pieces_[i]));
    for (int64_t e = 0; e < elements; ++e) sum[e] += part[e];
  }
  try {
    OmpTeamOfOne team;
    const dnnl::engine& engine = DnnlEngine();
    static thread_local dnnl::stream stream(engine);
    char* unreversed = pieces_scratch + unreversed_offset_;
    DnnlArgs args;
    args.Set(DNNL_ARG_FROM, DnnlThreadMemory(&dst_desc_, DNNL_ARG_FROM, dst_desc_, sum));
    args.Set(DNNL_ARG_TO,
             DnnlThreadMemory(&dst_user_desc_, DNNL_ARG_TO, dst_user_desc_,
                              weight_grad_dilated_ ? unreversed : OutputBase(context)));
    args.Execute(*dst_reorder_, stream);
    stream.wait();
    if (weight_grad_dilated_) {
      StridedCopy(unreversed + reversal_offset_ * element_size_, reversal_dims_, reversal_strides_,
                  element_size_, OutputBase(context));
    }
  } catch (const dnnl::error& error) {
    return absl::InternalError(absl::StrCat("oneDNN convolution %", name(), ": ", error.what()));
  }
  const char* scale = scale_ ? EpilogueData(context, *scale_, slot(kScale)) : nullptr;
  const char* bias = bias_ ? EpilogueData(context, *bias_, slot(kBias)) : nullptr;
  const char* addend = addend_ ? EpilogueData(context, *addend_, slot(kAddend)) : nullptr;
  EpilogueAfter(scale, bias, addend, OutputBase(context));
  return absl::OkStatus();
}

}  // namespace axle::cpu::conv
