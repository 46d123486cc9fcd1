// The oneDNN convolution thunk's epilogue (convolution_thunk_internal.h):
// the scale, bias and addend as dense arrays, as the primitive's post-op
// and bias arguments, or applied after the primitive; a per-feature scale
// folded into the weights; the addend copied into the output for the sum
// post-op.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/vector_activations.h"

namespace axle::cpu::conv {

DnnlConvolutionThunk::EpilogueInput DnnlConvolutionThunk::MakeEpilogueInput(
    const Operand& operand) const {
  EpilogueInput input;
  input.operand = operand;
  input.strides = plan_.OutputOrder(operand);
  input.element_size = primitive_util::ByteWidth(operand.type());
  input.dims = plan_.out_dims;
  // Broadcast dimensions collapse to 1, except the feature dimension (1):
  // a native bias and a scale folded into the weights read one value per
  // output feature, so a scalar broadcast is replicated across features.
  for (size_t d = 0; d < input.dims.size(); ++d) {
    if (input.strides[d] == 0 && d != 1) input.dims[d] = 1;
  }
  // Dense in the output's order: its dims from the least output stride up.
  const std::vector<int64_t> os = plan_.OutStrides();
  std::vector<size_t> order(input.dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return os[a] < os[b]; });
  input.dense_strides.assign(input.dims.size(), 0);
  int64_t stride = 1;
  for (size_t d : order) {
    input.dense_strides[d] = stride;
    stride *= input.dims[d];
  }
  for (auto d = order.rbegin(); d != order.rend(); ++d) {
    input.copy_dims.push_back(input.dims[*d]);
    input.copy_strides.push_back(input.strides[*d]);
  }
  input.desc = dnnl::memory::desc(input.dims, DnnlType(operand.type()), input.dense_strides);
  input.dense = true;
  for (size_t d = 0; d < input.dims.size(); ++d) {
    input.dense = input.dense && (input.dims[d] == 1 || input.strides[d] == input.dense_strides[d]);
  }
  if (operand.literal != nullptr) {
    input.constant.reset(new char[input.desc.get_size() + 1]);
    StridedCopy(static_cast<const char*>(operand.literal->untyped_data()), input.copy_dims,
                input.copy_strides, input.element_size, input.constant.get());
    input.operand.literal.reset();
  }
  return input;
}

const char* DnnlConvolutionThunk::EpilogueData(const ThunkContext& context,
                                               const EpilogueInput& input, char* storage) const {
  if (input.constant) return input.constant.get();
  const char* base = BaseOf(context, input.operand, operand_values_);
  if (input.dense) {
    const char* out = OutputBase(context);
    const auto bytes = static_cast<int64_t>(input.desc.get_size());
    const auto out_bytes = static_cast<int64_t>(dst_user_desc_.get_size());
    if (base + bytes <= out || out + out_bytes <= base) return base;
  }
  StridedCopy(base, input.copy_dims, input.copy_strides, input.element_size, storage);
  return storage;
}

void DnnlConvolutionThunk::AddEpilogueArgs(const char* scale, const char* bias,
                                           DnnlArgs& args) const {
  const bool scale_post_op = scale_ && !fold_scale_;
  if (scale_post_op) {
    const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
    args.Set(arg, DnnlThreadMemory(&scale_->desc, arg, scale_->desc, scale));
  }
  if (native_bias_) {
    args.Set(DNNL_ARG_BIAS,
             DnnlThreadMemory(&native_bias_desc_, DNNL_ARG_BIAS, native_bias_desc_, bias));
  } else if (bias_) {
    const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(scale_post_op ? 1 : 0) | DNNL_ARG_SRC_1;
    args.Set(arg, DnnlThreadMemory(&bias_->desc, arg, bias_->desc, bias));
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
void DnnlConvolutionThunk::EpilogueAfterAs(const E* scale, const E* bias, const E* addend,
                                           E* out) const {
  const ConvPlan& p = plan_;
  if (!p.scale && !p.bias && !p.addend && p.activation == Activation::kNone) return;
  std::vector<int64_t> os = p.OutStrides();
  const float low = static_cast<float>(p.low), high = static_cast<float>(p.high);
  if (!p.scale && !p.bias && !p.addend) {
    // An activation alone, over a dense output in one pass (per line of 16
    // features, a transposed convolution's relu on f32[4,32,32,16] took
    // 0.4 ms; the primitive 0.09).
    int64_t elements = 1, span = 1;
    for (size_t d = 0; d < os.size(); ++d) {
      elements *= p.out_dims[d];
      span += (p.out_dims[d] - 1) * os[d];
    }
    if (span == elements) {
      if constexpr (std::is_same_v<E, float>) {
        ActivateF32InPlace(p.activation, low, high, out, elements);
      } else {
        ActivateInPlace(p.activation, low, high, out, elements);
      }
      return;
    }
  }
  // Strides into the dense scale / bias arrays (0 along their size-1 dims).
  auto dense_strides = [&](const std::optional<EpilogueInput>& input) {
    if (!input) return std::vector<int64_t>(os.size(), 0);
    std::vector<int64_t> strides = input->dense_strides;
    for (size_t d = 0; d < strides.size(); ++d) {
      if (input->dims[d] == 1) strides[d] = 0;
    }
    return strides;
  };
  std::vector<int64_t> ss = dense_strides(scale_), bs = dense_strides(bias_),
                       as = dense_strides(addend_);
  // Lines along the output's innermost dim in memory (least stride): the
  // odometer steps once per line, the inner loop at fixed strides.
  const size_t rank = p.out_dims.size();
  size_t inner = 0;
  for (size_t d = 1; d < rank; ++d) {
    if (os[d] < os[inner] && p.out_dims[d] > 1) inner = d;
  }
  const int64_t n = p.out_dims[inner];
  const int64_t osi = os[inner], ssi = ss[inner], bsi = bs[inner], asi = as[inner];
  std::vector<int64_t> line_dims = p.out_dims;
  line_dims[inner] = 1;
  int64_t lines = 1;
  for (int64_t d : line_dims) lines *= d;
  std::vector<int64_t> o(rank, 0);
  for (int64_t line = 0; line < lines; ++line, Next(line_dims, o)) {
    int64_t out_offset = 0, scale_offset = 0, bias_offset = 0, addend_offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      out_offset += o[d] * os[d];
      scale_offset += o[d] * ss[d];
      bias_offset += o[d] * bs[d];
      addend_offset += o[d] * as[d];
    }
    E* line_out = out + out_offset;
    for (int64_t i = 0; i < n; ++i) {
      E value = line_out[i * osi];
      if (scale != nullptr) {
        value = E(static_cast<float>(value) * static_cast<float>(scale[scale_offset + i * ssi]));
      }
      if (bias != nullptr) {
        value = E(static_cast<float>(value) + static_cast<float>(bias[bias_offset + i * bsi]));
      }
      if (addend != nullptr) {
        value = E(static_cast<float>(value) + static_cast<float>(addend[addend_offset + i * asi]));
      }
      line_out[i * osi] = value;
    }
    if (p.activation == Activation::kNone) continue;
    if (osi == 1) {
      ActivateInPlace(p.activation, low, high, line_out, n);
    } else {
      for (int64_t i = 0; i < n; ++i)
        ActivateInPlace(p.activation, low, high, &line_out[i * osi], 1);
    }
  }
}

void DnnlConvolutionThunk::EpilogueAfter(const char* scale, const char* bias, const char* addend,
                                         char* out) const {
  if (plan_.output_type == BF16) {
    EpilogueAfterAs(reinterpret_cast<const bfloat16*>(scale),
                    reinterpret_cast<const bfloat16*>(bias),
                    reinterpret_cast<const bfloat16*>(addend), reinterpret_cast<bfloat16*>(out));
  } else {
    EpilogueAfterAs(reinterpret_cast<const float*>(scale), reinterpret_cast<const float*>(bias),
                    reinterpret_cast<const float*>(addend), reinterpret_cast<float*>(out));
  }
}

}  // namespace axle::cpu::conv
