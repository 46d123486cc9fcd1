//===- stream.cc - STREAM triad: the machine's memory bandwidth -------------===//
//
//   stream THREADS [--min_seconds=S] [--max_runs=N] [--nontemporal]
//
// a[i] = b[i] + 3 * c[i] over three arrays of 256 MiB of doubles, split in
// contiguous parts over THREADS threads (each thread first-touches its own
// part, so page faults stay out of the timing; the arrays ask for huge
// pages, as Axle's allocator does, which matters in a VM). Bytes counted as STREAM
// does: 3 x 256 MiB per repetition (no write-allocate traffic). Runs until
// S seconds (default 1.5) have passed and at least 5 times, at most N
// (default 200) times: the sample counts axle-bench uses. --nontemporal
// stores `a` with non-temporal (streaming) stores, which skip the read for
// ownership: the limit for kernels that store that way. Prints
//   ok threads=N best_gbs=.. median_gbs=.. runs=..
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kElements = (int64_t{256} << 20) / sizeof(double);

void ForEachPart(int threads, void (*fn)(int64_t, int64_t, double*, double*, double*), double* a,
                 double* b, double* c) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    // Parts start on 64-byte boundaries (8 doubles), as aligned streaming
    // stores need.
    int64_t begin = kElements * t / threads / 8 * 8;
    int64_t end = t + 1 == threads ? kElements : kElements * (t + 1) / threads / 8 * 8;
    workers.emplace_back(fn, begin, end, a, b, c);
  }
  for (std::thread& worker : workers) worker.join();
}

void Fill(int64_t begin, int64_t end, double* a, double* b, double* c) {
  for (int64_t i = begin; i < end; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
}

void Triad(int64_t begin, int64_t end, double* a, double* b, double* c) {
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0 * c[i];
}

// The same with streaming stores (each part starts on a 64-byte boundary:
// see ForEachPart).
void TriadNonTemporal(int64_t begin, int64_t end, double* a, double* b, double* c) {
  int64_t i = begin;
#if defined(__AVX512F__)
  const __m512d three = _mm512_set1_pd(3.0);
  for (; i + 8 <= end; i += 8) {
    _mm512_stream_pd(a + i, _mm512_fmadd_pd(three, _mm512_loadu_pd(c + i), _mm512_loadu_pd(b + i)));
  }
#elif defined(__AVX__)
  const __m256d three = _mm256_set1_pd(3.0);
  for (; i + 4 <= end; i += 4) {
    _mm256_stream_pd(
        a + i, _mm256_add_pd(_mm256_loadu_pd(b + i), _mm256_mul_pd(three, _mm256_loadu_pd(c + i))));
  }
#else
  const __m128d three = _mm_set1_pd(3.0);
  for (; i + 2 <= end; i += 2) {
    _mm_stream_pd(a + i, _mm_add_pd(_mm_loadu_pd(b + i), _mm_mul_pd(three, _mm_loadu_pd(c + i))));
  }
#endif
  for (; i < end; ++i) a[i] = b[i] + 3.0 * c[i];
  _mm_sfence();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  double min_seconds = 1.5;
  int max_runs = 200;
  bool nontemporal = false;
  bool usage_error = threads < 1;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--min_seconds=", 0) == 0) {
      min_seconds = std::atof(arg.c_str() + 14);
    } else if (arg.rfind("--max_runs=", 0) == 0) {
      max_runs = std::atoi(arg.c_str() + 11);
    } else if (arg == "--nontemporal") {
      nontemporal = true;
    } else {
      usage_error = true;
    }
  }
  if (usage_error || max_runs < 1 || min_seconds < 0) {
    std::fprintf(stderr,
                 "usage: stream THREADS [--min_seconds=S] [--max_runs=N] [--nontemporal]\n");
    return 1;
  }
  auto* triad = nontemporal ? TriadNonTemporal : Triad;
  size_t bytes = kElements * sizeof(double);
  constexpr size_t kHugePage = size_t{2} << 20;
  auto* a = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  auto* b = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  auto* c = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  for (double* array : {a, b, c}) madvise(array, bytes, MADV_HUGEPAGE);
  ForEachPart(threads, Fill, a, b, c);
  ForEachPart(threads, triad, a, b, c);  // warm-up
  std::vector<double> rates;
  const auto begin = std::chrono::steady_clock::now();
  while (static_cast<int>(rates.size()) < max_runs &&
         (rates.size() < 5 ||
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() <
              min_seconds)) {
    auto start = std::chrono::steady_clock::now();
    ForEachPart(threads, triad, a, b, c);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(3.0 * bytes / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  // a[i] is 7 everywhere: keeps the loop from being optimized away.
  std::printf("ok threads=%d best_gbs=%.1f median_gbs=%.1f runs=%zu check=%g\n", threads,
              rates.back(), rates[rates.size() / 2], rates.size(), a[kElements / 2]);
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
