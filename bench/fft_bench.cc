//===- fft_bench.cc - The FFT libraries Debian packages, side by side ------===//
//
// Times the candidates for the cpu platform's fft thunk on the shapes of
// ../shared/jax/fft_roundtrip.hlo and a few larger ones, at 1 and 2
// threads (the batch split across axle::ThreadPool, the way the thunk
// splits it):
//
//   fftw     FFTW 3.3.10 (libfftw3-dev, GPL-2+), plan_many with
//            FFTW_MEASURE, run with fftw_execute_dft* on each thread's
//            slice of the batch (the new-array execute is thread safe).
//   kiss-c   KISS FFT 131 (libkissfft-dev, BSD-3), Debian's single
//            precision C library: kiss_fft per line; real 2-d as
//            kiss_fftr rows then kiss_fft_stride columns (one kiss_fftr
//            cfg per thread: it holds a work buffer).
//   kiss-hh  KISS FFT's header-only C++ template (kissfft.hh) in float
//            or double, per line, compiled here (-O2 and this project's
//            flags); Debian ships no double precision C library.
//
// Prints the best of several repetitions in microseconds (the machine is
// shared; the minimum is the stable statistic). Not a test: nothing is
// asserted; the numbers go to docs/PERFORMANCE.md by hand.
//
//===----------------------------------------------------------------------===//
#include <fftw3.h>
#include <kissfft/kiss_fft.h>
#include <kissfft/kiss_fftr.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <kissfft/kissfft.hh>
#include <memory>
#include <string>
#include <vector>

#include "axle/base/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

// Best time in microseconds of `fn` over enough repetitions to last ~0.3 s.
double BestMicros(const std::function<void()>& fn) {
  fn();  // warm up
  double best = 1e30;
  auto start = Clock::now();
  int reps = 0;
  while (reps < 5 || (Clock::now() - start < std::chrono::milliseconds(300) && reps < 2000)) {
    auto t0 = Clock::now();
    fn();
    auto t1 = Clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
    ++reps;
  }
  return best;
}

// Runs body(begin, end) over [0, batch) split across `threads` threads.
void Split(axle::ThreadPool& pool, int threads, int64_t batch,
           const std::function<void(int64_t, int64_t)>& body) {
  if (threads == 1) {
    body(0, batch);
    return;
  }
  pool.ParallelFor(batch, (batch + threads - 1) / threads, body, threads);
}

void Report(const char* shape, const char* library, int threads, double micros) {
  std::printf("%-34s %-8s %d thr %10.1f us\n", shape, library, threads, micros);
}

template <typename T>
void* Alloc(int64_t count) {
  return fftw_malloc(sizeof(T) * count);
}

// ---- complex 1-d, batched -------------------------------------------------

void ComplexF32(axle::ThreadPool& pool, int n, int batch, const char* shape) {
  using C = std::complex<float>;
  C* in = static_cast<C*>(Alloc<C>(int64_t{n} * batch));
  C* out = static_cast<C*>(Alloc<C>(int64_t{n} * batch));
  for (int64_t i = 0; i < int64_t{n} * batch; ++i) in[i] = C(std::sin(i * 0.1f), 0.5f);
  for (int threads : {1, 2}) {
    int chunk = (batch + threads - 1) / threads;
    fftwf_plan plan = fftwf_plan_many_dft(1, &n, chunk, reinterpret_cast<fftwf_complex*>(in),
                                          nullptr, 1, n, reinterpret_cast<fftwf_complex*>(out),
                                          nullptr, 1, n, FFTW_FORWARD, FFTW_MEASURE);
    for (int64_t i = 0; i < int64_t{n} * batch; ++i) in[i] = C(std::sin(i * 0.1f), 0.5f);
    Report(shape, "fftw", threads, BestMicros([&] {
             Split(pool, threads, batch / chunk, [&](int64_t b, int64_t e) {
               for (int64_t c = b; c < e; ++c) {
                 fftwf_execute_dft(plan, reinterpret_cast<fftwf_complex*>(in + c * chunk * n),
                                   reinterpret_cast<fftwf_complex*>(out + c * chunk * n));
               }
             });
           }));
    fftwf_destroy_plan(plan);
  }
  kiss_fft_cfg cfg = kiss_fft_alloc(n, 0, nullptr, nullptr);
  for (int threads : {1, 2}) {
    Report(shape, "kiss-c", threads, BestMicros([&] {
             Split(pool, threads, batch, [&](int64_t b, int64_t e) {
               for (int64_t i = b; i < e; ++i) {
                 kiss_fft(cfg, reinterpret_cast<kiss_fft_cpx*>(in + i * n),
                          reinterpret_cast<kiss_fft_cpx*>(out + i * n));
               }
             });
           }));
  }
  kiss_fft_free(cfg);
  kissfft<float> hh(n, false);
  for (int threads : {1, 2}) {
    // kissfft.hh keeps a mutable work buffer for radices above 5: one plan
    // per thread.
    std::vector<kissfft<float>> plans(threads, hh);
    Report(shape, "kiss-hh", threads, BestMicros([&] {
             Split(pool, threads, batch, [&](int64_t b, int64_t e) {
               const kissfft<float>& plan = plans[b * threads / batch];
               for (int64_t i = b; i < e; ++i) plan.transform(in + i * n, out + i * n);
             });
           }));
  }
  fftw_free(in);
  fftw_free(out);
}

void ComplexF64(axle::ThreadPool& pool, int n, int batch, const char* shape) {
  using C = std::complex<double>;
  C* in = static_cast<C*>(Alloc<C>(int64_t{n} * batch));
  C* out = static_cast<C*>(Alloc<C>(int64_t{n} * batch));
  for (int threads : {1, 2}) {
    int chunk = (batch + threads - 1) / threads;
    fftw_plan plan = fftw_plan_many_dft(1, &n, chunk, reinterpret_cast<fftw_complex*>(in), nullptr,
                                        1, n, reinterpret_cast<fftw_complex*>(out), nullptr, 1, n,
                                        FFTW_FORWARD, FFTW_MEASURE);
    for (int64_t i = 0; i < int64_t{n} * batch; ++i) in[i] = C(std::sin(i * 0.1), 0.5);
    Report(shape, "fftw", threads, BestMicros([&] {
             Split(pool, threads, batch / chunk, [&](int64_t b, int64_t e) {
               for (int64_t c = b; c < e; ++c) {
                 fftw_execute_dft(plan, reinterpret_cast<fftw_complex*>(in + c * chunk * n),
                                  reinterpret_cast<fftw_complex*>(out + c * chunk * n));
               }
             });
           }));
    fftw_destroy_plan(plan);
  }
  kissfft<double> hh(n, false);
  for (int threads : {1, 2}) {
    std::vector<kissfft<double>> plans(threads, hh);
    Report(shape, "kiss-hh", threads, BestMicros([&] {
             Split(pool, threads, batch, [&](int64_t b, int64_t e) {
               const kissfft<double>& plan = plans[b * threads / batch];
               for (int64_t i = b; i < e; ++i) plan.transform(in + i * n, out + i * n);
             });
           }));
  }
  fftw_free(in);
  fftw_free(out);
}

// ---- real 2-d, batched: forward then back (fft_roundtrip's pair) ----------

void RealRoundTrip2d(axle::ThreadPool& pool, int n0, int n1, int batch, const char* shape) {
  using C = std::complex<float>;
  const int64_t real_size = int64_t{n0} * n1, complex_size = int64_t{n0} * (n1 / 2 + 1);
  float* x = static_cast<float*>(Alloc<float>(real_size * batch));
  C* f = static_cast<C*>(Alloc<C>(complex_size * batch));
  float* y = static_cast<float*>(Alloc<float>(real_size * batch));
  int dims[2] = {n0, n1};
  for (int threads : {1, 2}) {
    int chunk = (batch + threads - 1) / threads;
    fftwf_plan forward = fftwf_plan_many_dft_r2c(2, dims, chunk, x, nullptr, 1, real_size,
                                                 reinterpret_cast<fftwf_complex*>(f), nullptr, 1,
                                                 complex_size, FFTW_MEASURE);
    // A multi-dimensional c2r overwrites its input (FFTW_PRESERVE_INPUT
    // makes no plan for it); here the forward transform rewrites it anyway.
    fftwf_plan backward =
        fftwf_plan_many_dft_c2r(2, dims, chunk, reinterpret_cast<fftwf_complex*>(f), nullptr, 1,
                                complex_size, y, nullptr, 1, real_size, FFTW_MEASURE);
    for (int64_t i = 0; i < real_size * batch; ++i) x[i] = std::sin(i * 0.1f);
    Report(
        shape, "fftw", threads, BestMicros([&] {
          Split(pool, threads, batch / chunk, [&](int64_t b, int64_t e) {
            for (int64_t c = b; c < e; ++c) {
              fftwf_execute_dft_r2c(forward, x + c * chunk * real_size,
                                    reinterpret_cast<fftwf_complex*>(f + c * chunk * complex_size));
            }
          });
          Split(pool, threads, batch / chunk, [&](int64_t b, int64_t e) {
            for (int64_t c = b; c < e; ++c) {
              fftwf_execute_dft_c2r(backward,
                                    reinterpret_cast<fftwf_complex*>(f + c * chunk * complex_size),
                                    y + c * chunk * real_size);
            }
          });
        }));
    fftwf_destroy_plan(forward);
    fftwf_destroy_plan(backward);
  }
  // KISS FFT: rows by kiss_fftr, columns by kiss_fft_stride into a line
  // buffer (Debian's kiss_fftndr_alloc returns null for these shapes). A
  // kiss_fftr cfg holds a work buffer: one per thread.
  const int h = n1 / 2 + 1;
  for (int threads : {1, 2}) {
    struct PerThread {
      kiss_fftr_cfg row_forward, row_backward;
      kiss_fft_cfg column_forward, column_backward;
      std::vector<C> line, work;
    };
    std::vector<PerThread> state(threads);
    for (PerThread& t : state) {
      t.row_forward = kiss_fftr_alloc(n1, 0, nullptr, nullptr);
      t.row_backward = kiss_fftr_alloc(n1, 1, nullptr, nullptr);
      t.column_forward = kiss_fft_alloc(n0, 0, nullptr, nullptr);
      t.column_backward = kiss_fft_alloc(n0, 1, nullptr, nullptr);
      t.line.resize(n0);
      t.work.resize(complex_size);
    }
    auto columns = [&](kiss_fft_cfg cfg, C* data, PerThread& t) {
      for (int c = 0; c < h; ++c) {
        kiss_fft_stride(cfg, reinterpret_cast<kiss_fft_cpx*>(data + c),
                        reinterpret_cast<kiss_fft_cpx*>(t.line.data()), h);
        for (int r = 0; r < n0; ++r) data[c + int64_t{r} * h] = t.line[r];
      }
    };
    Report(shape, "kiss-c", threads, BestMicros([&] {
             Split(pool, threads, batch, [&](int64_t b, int64_t e) {
               PerThread& t = state[b * threads / batch];
               for (int64_t i = b; i < e; ++i) {
                 C* fi = f + i * complex_size;
                 for (int r = 0; r < n0; ++r) {
                   kiss_fftr(t.row_forward, x + i * real_size + int64_t{r} * n1,
                             reinterpret_cast<kiss_fft_cpx*>(fi + int64_t{r} * h));
                 }
                 columns(t.column_forward, fi, t);
               }
             });
             Split(pool, threads, batch, [&](int64_t b, int64_t e) {
               PerThread& t = state[b * threads / batch];
               for (int64_t i = b; i < e; ++i) {
                 // The operand stays: work on a copy.
                 std::copy(f + i * complex_size, f + (i + 1) * complex_size, t.work.begin());
                 columns(t.column_backward, t.work.data(), t);
                 for (int r = 0; r < n0; ++r) {
                   kiss_fftri(t.row_backward,
                              reinterpret_cast<kiss_fft_cpx*>(t.work.data() + int64_t{r} * h),
                              y + i * real_size + int64_t{r} * n1);
                 }
               }
             });
           }));
    for (PerThread& t : state) {
      kiss_fftr_free(t.row_forward);
      kiss_fftr_free(t.row_backward);
      kiss_fft_free(t.column_forward);
      kiss_fft_free(t.column_backward);
    }
  }
  fftw_free(x);
  fftw_free(f);
  fftw_free(y);
}

}  // namespace

int main() {
  axle::ThreadPool pool(2);
  RealRoundTrip2d(pool, 64, 64, 8, "rfft2+irfft2 f32 8x64x64");
  ComplexF32(pool, 64, 1, "fft c64 64 (x1)");
  ComplexF32(pool, 64, 512, "fft c64 64 x512");
  ComplexF32(pool, 4096, 256, "fft c64 4096 x256");
  ComplexF64(pool, 4096, 256, "fft c128 4096 x256");
  RealRoundTrip2d(pool, 256, 256, 4, "rfft2+irfft2 f32 4x256x256");
  ComplexF32(pool, 97, 1024, "fft c64 97 (prime) x1024");
  ComplexF32(pool, 4099, 16, "fft c64 4099 (prime) x16");
  return 0;
}
