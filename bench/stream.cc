//===- stream.cc - STREAM triad: the machine's memory bandwidth -------------===//
//
//   stream THREADS [REPETITIONS]
//
// a[i] = b[i] + 3 * c[i] over three arrays of 256 MiB of doubles, split in
// contiguous parts over THREADS threads (each thread first-touches its own
// part, so page faults stay out of the timing; the arrays ask for huge
// pages, as Axle's allocator does, which matters in a VM). Bytes counted as STREAM
// does: 3 x 256 MiB per repetition (no write-allocate traffic). Prints
//   ok threads=N best_gbs=.. median_gbs=..
//
//===----------------------------------------------------------------------===//
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kElements = (int64_t{256} << 20) / sizeof(double);

void ForEachPart(int threads, void (*fn)(int64_t, int64_t, double*, double*, double*), double* a,
                 double* b, double* c) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    int64_t begin = kElements * t / threads;
    int64_t end = kElements * (t + 1) / threads;
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

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  int repetitions = argc > 2 ? std::atoi(argv[2]) : 20;
  if (threads < 1 || repetitions < 1) {
    std::fprintf(stderr, "usage: stream THREADS [REPETITIONS]\n");
    return 1;
  }
  size_t bytes = kElements * sizeof(double);
  constexpr size_t kHugePage = size_t{2} << 20;
  auto* a = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  auto* b = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  auto* c = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  for (double* array : {a, b, c}) madvise(array, bytes, MADV_HUGEPAGE);
  ForEachPart(threads, Fill, a, b, c);
  ForEachPart(threads, Triad, a, b, c);  // warm-up
  std::vector<double> rates;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    ForEachPart(threads, Triad, a, b, c);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(3.0 * bytes / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  // a[i] is 7 everywhere: keeps the loop from being optimized away.
  std::printf("ok threads=%d best_gbs=%.1f median_gbs=%.1f check=%g\n", threads, rates.back(),
              rates[rates.size() / 2], a[kElements / 2]);
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
