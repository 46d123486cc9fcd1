//===- depthwise_rows.h - 3x3 depthwise convolution rows on AVX-512 --------===//
//
// A depthwise 3x3 convolution of channels-last f32 rows (MobileNet's), the
// kernel a chain's depthwise bands (conv_chain_thunk.cc) and a standalone
// depthwise convolution (convolution_thunk_depthwise.cc) run on. oneDNN
// 2.6's brdgmm_dw ran them at 17-30 GMAC/s on one core of the Zen 4-class
// host of 2026-11-29, whose FMA peak is ~58 (one 512-bit FMA a cycle):
// each output vector is 9 FMAs with 9 input loads at most, so the loads
// and the loop around them bound it. Here a block of 8 output pixels of
// 16 channels keeps its sums in registers and the 9 taps' weights too,
// reading each input vector of a row once for every output that needs it;
// the channels past the last multiple of 16 run masked. Up to 128
// channels a row runs a pixel block at a time over all channel blocks (the
// inputs read in memory order), past that a channel block at a time. Bias and activation (none,
// relu, clamp) are applied in registers. Sums use FMA in tap order (rows, then columns), as
// oneDNN's f32 kernels do; the results are not bit-identical to the interpreter's.
//
// Only on x86-64 CPUs with AVX-512F (DepthwiseRowsAvailable()); the caller
// keeps oneDNN elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DEPTHWISE_ROWS_H_
#define AXLE_CPU_RUNTIME_DEPTHWISE_ROWS_H_

#include <cstdint>

#include "axle/cpu/runtime/epilogue_activation.h"

namespace axle::cpu {

// The convolution: `channels` features, input rows of `width` pixels,
// output rows of `out_width`, the same `stride` (1 or 2) along rows and
// columns, `pad_left` columns of zeros before each input row (those past
// its end are zeros too).
struct DepthwiseRows {
  int64_t width = 0, out_width = 0, channels = 0;
  int64_t stride = 1, pad_left = 1;
  const float* weights = nullptr;             // [3][3][channels]: row, column, feature
  const float* bias = nullptr;                // [channels], or null
  Activation activation = Activation::kNone;  // kNone, kRelu or kClamp
  float low = 0, high = 0;                    // kClamp's bounds
};

// Whether this CPU runs the kernel (AVX-512F on x86-64).
bool DepthwiseRowsAvailable();

// Whether DepthwiseRows3x3 computes `conv` (its stride, activation).
bool DepthwiseRowsTakes(const DepthwiseRows& conv);

// Output rows [0, out_rows) into `out` (rows of out_width * channels
// floats): output row r reads input rows r * stride - pad_top + {0, 1, 2},
// those outside [0, in_rows) zeros; `in` holds in_rows rows of width *
// channels floats.
void DepthwiseRows3x3(const DepthwiseRows& conv, const float* in, int64_t in_rows, int64_t pad_top,
                      float* out, int64_t out_rows);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DEPTHWISE_ROWS_H_
