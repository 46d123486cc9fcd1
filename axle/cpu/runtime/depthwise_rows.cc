// 3x3 depthwise convolution rows on AVX-512 register blocks (see
// depthwise_rows.h).
#include "axle/cpu/runtime/depthwise_rows.h"

#include <algorithm>

#include "axle/cpu/runtime/avx512_target.h"

namespace axle::cpu {

bool DepthwiseRowsTakes(const DepthwiseRows& conv) {
  const bool activation = conv.activation == Activation::kNone ||
                          conv.activation == Activation::kRelu ||
                          conv.activation == Activation::kClamp;
  return activation && (conv.stride == 1 || conv.stride == 2) && conv.width > 0 &&
         conv.out_width > 0 && conv.channels > 0 && conv.pad_left >= 0 && conv.weights != nullptr;
}

#ifdef __x86_64__

bool DepthwiseRowsAvailable() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

namespace {

constexpr int kTaps = 3;
constexpr int64_t kLanes = 16;

// What one block of 16 channels reads besides its inputs: the taps'
// weights, the bias, the active lanes and the activation's bounds.
struct Lanes {
  __m512 weights[kTaps * kTaps];
  __m512 bias, low, high;
  __mmask16 mask;
  Activation activation;
};

AXLE_AVX512 inline __mmask16 LaneMask(int64_t channels, int64_t c) {
  return channels - c >= kLanes ? __mmask16{0xFFFF}
                                : static_cast<__mmask16>((1u << (channels - c)) - 1);
}

// The taps' weights and the bias of channels [c, c + 16) into `lanes`.
AXLE_AVX512 inline void LoadLanes(const DepthwiseRows& conv, int64_t c, Lanes& lanes) {
  lanes.mask = LaneMask(conv.channels, c);
  for (int t = 0; t < kTaps * kTaps; ++t) {
    lanes.weights[t] = _mm512_maskz_loadu_ps(lanes.mask, conv.weights + t * conv.channels + c);
  }
  lanes.bias =
      conv.bias != nullptr ? _mm512_maskz_loadu_ps(lanes.mask, conv.bias + c) : _mm512_setzero_ps();
}

AXLE_AVX512 inline void Store(const Lanes& lanes, __m512 v, float* out) {
  // max(low, v) and min(high, v) return v when it is NaN.
  if (lanes.activation != Activation::kNone) v = _mm512_max_ps(lanes.low, v);
  if (lanes.activation == Activation::kClamp) v = _mm512_min_ps(lanes.high, v);
  _mm512_mask_storeu_ps(out, lanes.mask, v);
}

// `P` output pixels of one block of 16 channels from input column `column`
// on (their first taps'), every tap's column inside the row: each input
// vector of a row is read once and fed to the outputs whose window covers it.
template <int S, int P>
AXLE_AVX512 inline void Block(const float* const (&rows)[kTaps], int64_t column, int64_t channels,
                              const Lanes& lanes, float* out) {
  constexpr int kInputs = (P - 1) * S + kTaps;
  __m512 sums[P];
  for (int p = 0; p < P; ++p) sums[p] = lanes.bias;
  for (int ky = 0; ky < kTaps; ++ky) {
    if (rows[ky] == nullptr) continue;
    const float* in = rows[ky] + column * channels;
#pragma GCC unroll 32
    for (int i = 0; i < kInputs; ++i) {
      const __m512 x = _mm512_maskz_loadu_ps(lanes.mask, in + i * channels);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        const int kx = i - p * S;
        if (kx >= 0 && kx < kTaps) {
          sums[p] = _mm512_fmadd_ps(x, lanes.weights[ky * kTaps + kx], sums[p]);
        }
      }
    }
  }
  for (int p = 0; p < P; ++p) Store(lanes, sums[p], out + p * channels);
}

// `P` output pixels of every channel, a block of 16 channels after another,
// the weights loaded for each: the inputs (P * S + 2 pixels of three rows)
// are read in memory order.
template <int S, int P>
AXLE_AVX512 inline void Blocks(const DepthwiseRows& conv, const float* const (&rows)[kTaps],
                               int64_t column, Lanes& lanes, float* out) {
  for (int64_t c = 0; c < conv.channels; c += kLanes) {
    LoadLanes(conv, c, lanes);
    const float* lane_rows[kTaps];
    for (int ky = 0; ky < kTaps; ++ky) lane_rows[ky] = rows[ky] != nullptr ? rows[ky] + c : nullptr;
    Block<S, P>(lane_rows, column, conv.channels, lanes, out + c);
  }
}

// One output pixel of one block of 16 channels at the row's edge, its taps
// outside the row skipped.
AXLE_AVX512 inline void Edge(const DepthwiseRows& conv, const float* const (&rows)[kTaps],
                             int64_t ox, const Lanes& lanes, float* out) {
  __m512 sum = lanes.bias;
  for (int ky = 0; ky < kTaps; ++ky) {
    if (rows[ky] == nullptr) continue;
    for (int kx = 0; kx < kTaps; ++kx) {
      const int64_t ix = ox * conv.stride - conv.pad_left + kx;
      if (ix < 0 || ix >= conv.width) continue;
      sum = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lanes.mask, rows[ky] + ix * conv.channels),
                            lanes.weights[ky * kTaps + kx], sum);
    }
  }
  Store(lanes, sum, out);
}

// One output pixel of every channel at the row's edge.
AXLE_AVX512 inline void EdgeChannels(const DepthwiseRows& conv, const float* const (&rows)[kTaps],
                                     int64_t ox, Lanes& lanes, float* out) {
  for (int64_t c = 0; c < conv.channels; c += kLanes) {
    LoadLanes(conv, c, lanes);
    const float* lane_rows[kTaps];
    for (int ky = 0; ky < kTaps; ++ky) lane_rows[ky] = rows[ky] != nullptr ? rows[ky] + c : nullptr;
    Edge(conv, lane_rows, ox, lanes, out + c);
  }
}

template <int S>
AXLE_AVX512 void RowsByPixelBlock(const DepthwiseRows& conv, const float* in, int64_t in_rows,
                                  int64_t pad_top, float* out, int64_t out_rows) {
  const int64_t channels = conv.channels, width = conv.width, out_width = conv.out_width;
  // The output pixels whose three tap columns all lie inside the row.
  const int64_t begin = std::min(out_width, (conv.pad_left + S - 1) / S);
  const int64_t last = width - kTaps + conv.pad_left;
  const int64_t end = last < 0 ? begin : std::clamp(last / S + 1, begin, out_width);
  Lanes lanes;
  lanes.activation = conv.activation;
  lanes.low = _mm512_set1_ps(conv.activation == Activation::kClamp ? conv.low : 0.f);
  lanes.high = _mm512_set1_ps(conv.high);
  for (int64_t r = 0; r < out_rows; ++r) {
    const float* rows[kTaps];
    for (int ky = 0; ky < kTaps; ++ky) {
      const int64_t iy = r * S - pad_top + ky;
      rows[ky] = iy >= 0 && iy < in_rows ? in + iy * width * channels : nullptr;
    }
    float* o = out + r * out_width * channels;
    const auto column = [&](int64_t ox) { return ox * S - conv.pad_left; };
    int64_t ox = 0;
    for (; ox < begin; ++ox) EdgeChannels(conv, rows, ox, lanes, o + ox * channels);
    for (; ox + 8 <= end; ox += 8) Blocks<S, 8>(conv, rows, column(ox), lanes, o + ox * channels);
    if (ox + 4 <= end) {
      Blocks<S, 4>(conv, rows, column(ox), lanes, o + ox * channels);
      ox += 4;
    }
    if (ox + 2 <= end) {
      Blocks<S, 2>(conv, rows, column(ox), lanes, o + ox * channels);
      ox += 2;
    }
    if (ox < end) {
      Blocks<S, 1>(conv, rows, column(ox), lanes, o + ox * channels);
      ++ox;
    }
    for (; ox < out_width; ++ox) EdgeChannels(conv, rows, ox, lanes, o + ox * channels);
  }
}

template <int S>
AXLE_AVX512 void RowsByChannelBlock(const DepthwiseRows& conv, const float* in, int64_t in_rows,
                                    int64_t pad_top, float* out, int64_t out_rows) {
  const int64_t channels = conv.channels, width = conv.width, out_width = conv.out_width;
  // The output pixels whose three tap columns all lie inside the row.
  const int64_t begin = std::min(out_width, (conv.pad_left + S - 1) / S);
  const int64_t last = width - kTaps + conv.pad_left;
  const int64_t end = last < 0 ? begin : std::clamp(last / S + 1, begin, out_width);
  Lanes lanes;
  lanes.activation = conv.activation;
  lanes.low = _mm512_set1_ps(conv.activation == Activation::kClamp ? conv.low : 0.f);
  lanes.high = _mm512_set1_ps(conv.high);
  for (int64_t r = 0; r < out_rows; ++r) {
    const float* rows[kTaps];
    for (int ky = 0; ky < kTaps; ++ky) {
      const int64_t iy = r * S - pad_top + ky;
      rows[ky] = iy >= 0 && iy < in_rows ? in + iy * width * channels : nullptr;
    }
    float* out_row = out + r * out_width * channels;
    for (int64_t c = 0; c < channels; c += kLanes) {
      LoadLanes(conv, c, lanes);
      const float* lane_rows[kTaps];
      for (int ky = 0; ky < kTaps; ++ky)
        lane_rows[ky] = rows[ky] != nullptr ? rows[ky] + c : nullptr;
      float* o = out_row + c;
      int64_t ox = 0;
      for (; ox < begin; ++ox) Edge(conv, lane_rows, ox, lanes, o + ox * channels);
      for (; ox + 8 <= end; ox += 8) {
        Block<S, 8>(lane_rows, ox * S - conv.pad_left, channels, lanes, o + ox * channels);
      }
      if (ox + 4 <= end) {
        Block<S, 4>(lane_rows, ox * S - conv.pad_left, channels, lanes, o + ox * channels);
        ox += 4;
      }
      if (ox + 2 <= end) {
        Block<S, 2>(lane_rows, ox * S - conv.pad_left, channels, lanes, o + ox * channels);
        ox += 2;
      }
      if (ox < end) {
        Block<S, 1>(lane_rows, ox * S - conv.pad_left, channels, lanes, o + ox * channels);
        ++ox;
      }
      for (; ox < out_width; ++ox) Edge(conv, lane_rows, ox, lanes, o + ox * channels);
    }
  }
}

// Two loop orders. Up to kPixelBlockChannels channels, a row runs a block
// of output pixels at a time, every channel block of it before the next
// block: the inputs are read in memory order (one channel block's pass over
// a whole row strides through L2), and the taps' weights (9 * 128 floats,
// 4.5 KiB) stay in L1 while they are reloaded for each block. With more
// channels the weights crowd the inputs out of L1 and the narrow rows (7, 14
// pixels) pay the reloads on few pixels: one channel block at a time, over
// the whole row, its weights in registers throughout. On the Zen 4-class
// host (bands in L2, one thread): the 112x32 stride 1 and 112x96 stride 2
// bands ran 15-28% faster by pixel block, the 14x384 to 7x960 ones 7-40%
// slower, those of 144 and 192 channels within 3%.
constexpr int64_t kPixelBlockChannels = 128;

template <int S>
AXLE_AVX512 void Rows(const DepthwiseRows& conv, const float* in, int64_t in_rows, int64_t pad_top,
                      float* out, int64_t out_rows) {
  if (conv.channels <= kPixelBlockChannels) {
    RowsByPixelBlock<S>(conv, in, in_rows, pad_top, out, out_rows);
  } else {
    RowsByChannelBlock<S>(conv, in, in_rows, pad_top, out, out_rows);
  }
}

}  // namespace

void DepthwiseRows3x3(const DepthwiseRows& conv, const float* in, int64_t in_rows, int64_t pad_top,
                      float* out, int64_t out_rows) {
  if (conv.stride == 1) {
    Rows<1>(conv, in, in_rows, pad_top, out, out_rows);
  } else {
    Rows<2>(conv, in, in_rows, pad_top, out, out_rows);
  }
}

#else

bool DepthwiseRowsAvailable() { return false; }

void DepthwiseRows3x3(const DepthwiseRows&, const float*, int64_t, int64_t, float*, int64_t) {}

#endif

}  // namespace axle::cpu
