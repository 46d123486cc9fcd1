//===- elementwise_chain.h - The 5-op chain the cpu benchmarks time --------===//
//
// `((a*b + c) relu * 0.5) - a` on 16M f32 (3 inputs read, 1 output written:
// 256 MiB of traffic per run), as HLO text, with the inputs' values and four
// arrays for the C++ peers (a, b, c and the output), shared by
// cpu_elementwise_bench.cc and cpu_parallel_bench.cc.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BENCH_ELEMENTWISE_CHAIN_H_
#define AXLE_BENCH_ELEMENTWISE_CHAIN_H_

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace axle::bench {

inline constexpr int64_t kElements = int64_t{16} << 20;

inline constexpr char kChain[] = R"(
HloModule chain
ENTRY chain {
  a = f32[16777216] parameter(0)
  b = f32[16777216] parameter(1)
  c = f32[16777216] parameter(2)
  ab = f32[16777216] multiply(a, b)
  abc = f32[16777216] add(ab, c)
  zero = f32[] constant(0)
  zeros = f32[16777216] broadcast(zero), dimensions={}
  relu = f32[16777216] maximum(abc, zeros)
  half = f32[] constant(0.5)
  halves = f32[16777216] broadcast(half), dimensions={}
  scaled = f32[16777216] multiply(relu, halves)
  ROOT out = f32[16777216] subtract(scaled, a)
}
)";

// Element j of input i (small integers: no denormals, no overflow).
inline float ChainInput(int i, int64_t j) { return static_cast<float>((j * (i + 3)) % 17) - 8.0f; }

// Four arrays of kElements, 64-byte aligned and written once (page faults
// stay out of the timing), filled as ChainInput: a, b, c and the output.
inline const std::vector<float*>& ChainArrays() {
  static const auto* arrays = [] {
    auto* arrays = new std::vector<float*>;
    for (int i = 0; i < 4; ++i) {
      auto* p = static_cast<float*>(std::aligned_alloc(64, kElements * sizeof(float)));
      if (p == nullptr) std::abort();
      for (int64_t j = 0; j < kElements; ++j) p[j] = ChainInput(i, j);
      arrays->push_back(p);
    }
    return arrays;
  }();
  return *arrays;
}

// ChainArrays by name, for the C++ peers' loops.
struct ChainOperands {
  const float* a;
  const float* b;
  const float* c;
  float* out;
};
inline ChainOperands ChainPointers() {
  const std::vector<float*>& arrays = ChainArrays();
  return {arrays[0], arrays[1], arrays[2], arrays[3]};
}

}  // namespace axle::bench

#endif  // AXLE_BENCH_ELEMENTWISE_CHAIN_H_
