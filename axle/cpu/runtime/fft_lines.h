//===- fft_lines.h - Power-of-two f32 FFTs of 16 lines at once -------------===//
//
// The fft thunk's lines are many and short (a 64 x 64 rfft2 of 8 images:
// 776 lines of 64 points); KISS FFT transforms one line at a time with
// scalar complex arithmetic, about 0.5 us a line here. LineBatchFft
// transforms 16 lines together, one line per lane of AVX-512 vectors: the
// lines are loaded (bit-reversed) into split real / imaginary arrays of 16
// lanes, go through the radix-2 decimation-in-time stages with every
// butterfly a handful of 16-wide vector ops and the twiddles broadcast,
// and are stored back. Adjacent lines (an axis pass over columns) load and
// store as whole vectors; other lines element by element.
//
// Power-of-two lengths from 2 to 2^16 on CPUs with AVX-512F (Supports);
// the thunk keeps KISS FFT for the rest. Unscaled, like ComplexFftPlan:
// out[k] = sum_j in[j] exp(s 2 pi i j k / n), s = -1 forward, +1 inverse.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_FFT_LINES_H_
#define AXLE_CPU_RUNTIME_FFT_LINES_H_

#include <complex>
#include <cstdint>
#include <vector>

namespace axle::cpu {

class LineBatchFft {
 public:
  static constexpr int kLanes = 16;

  // Whether this CPU and length `n` take the batched path.
  static bool Supports(int64_t n);

  LineBatchFft(int64_t n, bool inverse);

  int64_t size() const { return n_; }
  // Floats of work memory Run needs.
  int64_t work_floats() const { return 2 * n_ * kLanes; }

  // Transforms `lines` (1..16) lines: element j of line l is read at
  // in[l * in_line + j * in_element] and written to out[l * out_line + j *
  // out_element]. `out` may be `in` (the lines are loaded before any is
  // stored).
  void Run(const std::complex<float>* in, int64_t in_line, int64_t in_element,
           std::complex<float>* out, int64_t out_line, int64_t out_element, int lines,
           float* work) const;

  // Real transforms of 2n points through this n-point one, for `lines`
  // (1..16) contiguous lines, the step between the halves done on the
  // lanes too (RealFftPlan's ForwardFromHalf / InverseToHalf, 16 lines at
  // once). Forward (a plan made with inverse false): line l's 2n reals at
  // in + l * in_line (floats, in_line even) -> its n + 1 frequencies at
  // out + l * out_line (complex). Inverse (inverse true): n + 1
  // frequencies at in + l * in_line (complex; the imaginary parts of the
  // first and last ignored) -> 2n reals at out + l * out_line (floats,
  // out_line even), times `scale` (unscaled inverse: 1).
  void RunRealForward(const float* in, int64_t in_line, std::complex<float>* out, int64_t out_line,
                      int lines, float* work) const;
  void RunRealInverse(const std::complex<float>* in, int64_t in_line, float* out, int64_t out_line,
                      int lines, float scale, float* work) const;
  // Floats of work memory the real transforms need.
  int64_t real_work_floats() const { return 4 * (n_ + 1) * kLanes; }

 private:
  int64_t n_;
  std::vector<uint32_t> reverse_;  // bit reversal of [0, n)
  // Stage with butterflies of span h (1, 2, 4, ...): exp(s pi i k / h),
  // k in [0, h), at offset h - 1.
  std::vector<float> twiddle_re_, twiddle_im_;
  // exp(s 2 pi i k / 2n), k in [0, n]: the real transforms' twiddles.
  std::vector<float> real_twiddle_re_, real_twiddle_im_;

  // Rows [0, rows) of `lines` lines (element j of line l at in[l * in_line
  // + j * in_element], complex) into 16-lane split rows re/im, row j at
  // row_of[j] (or j when null); missing lanes are zero.
  static void Load(const float* in, int64_t in_line, int64_t in_element, int lines, int64_t rows,
                   const uint32_t* row_of, float* re, float* im);
  // The 16-lane rows [0, rows) back out to `lines` lines.
  static void Store(const float* re, const float* im, int64_t rows, float* out, int64_t out_line,
                    int64_t out_element, int lines);
  // The radix-2 stages on bit-reversed split rows.
  void Butterflies(float* re, float* im) const;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_FFT_LINES_H_
