//===- cpu_elementwise_bench.cc - Throughput of a JIT-compiled loop kernel -===//
//
// The 5-op chain `((a*b + c) relu * 0.5) - a` on 16M f32 (3 inputs read, 1
// output written: 256 MiB of traffic per run), compiled by axle/cpu's loop
// kernel emitter, on 1 and 2 threads (the outer range split in halves).
// Peers in the same run: the same chain as a plain C++ loop built by the
// host compiler, and a STREAM-style triad (`a*b + c`). Compare bytes/s with
// ../shared/PEERS.md (STREAM triad: 41 GB/s on 1 core, 82 GB/s on 2).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "benchmark/benchmark.h"

namespace {

constexpr int64_t kElements = int64_t{16} << 20;

constexpr char kChain[] = R"(
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

// 64-byte aligned, touched once so page faults stay out of the timing.
struct Buffers {
  std::vector<float*> arrays;
  Buffers() {
    for (int i = 0; i < 4; ++i) {
      auto* p = static_cast<float*>(std::aligned_alloc(64, kElements * sizeof(float)));
      for (int64_t j = 0; j < kElements; ++j) p[j] = static_cast<float>((j * (i + 3)) % 17) - 8.0f;
      arrays.push_back(p);
    }
  }
  ~Buffers() {
    for (float* p : arrays) std::free(p);
  }
};

Buffers& SharedBuffers() {
  static Buffers* buffers = new Buffers();
  return *buffers;
}

const axle::cpu::CompiledKernel& ChainKernel() {
  static const axle::cpu::CompiledKernel* kernel = [] {
    auto module = axle::ParseAndReturnUnverifiedModule(kChain);
    if (!module.ok()) std::abort();
    auto compiled = axle::cpu::CompileLoopKernel(*(*module)->entry_computation());
    if (!compiled.ok()) std::abort();
    // The module must outlive nothing: the kernel owns its code.
    return compiled->release();
  }();
  return *kernel;
}

void BM_AxleChain(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const auto& kernel = ChainKernel();
  Buffers& buffers = SharedBuffers();
  void* args[4] = {buffers.arrays[0], buffers.arrays[1], buffers.arrays[2], buffers.arrays[3]};
  for (auto _ : state) {
    if (threads == 1) {
      kernel.Run(args);
    } else {
      const int64_t half = kernel.outer_size() / 2;
      std::thread other([&] { kernel.RunRange(args, half, kernel.outer_size()); });
      kernel.RunRange(args, 0, half);
      other.join();
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}
BENCHMARK(BM_AxleChain)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CppChain(benchmark::State& state) {
  Buffers& buffers = SharedBuffers();
  const float* a = buffers.arrays[0];
  const float* b = buffers.arrays[1];
  const float* c = buffers.arrays[2];
  float* out = buffers.arrays[3];
  for (auto _ : state) {
    for (int64_t i = 0; i < kElements; ++i) {
      out[i] = std::max(a[i] * b[i] + c[i], 0.0f) * 0.5f - a[i];
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}
BENCHMARK(BM_CppChain)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CppTriad(benchmark::State& state) {
  Buffers& buffers = SharedBuffers();
  const float* a = buffers.arrays[0];
  const float* b = buffers.arrays[1];
  const float* c = buffers.arrays[2];
  float* out = buffers.arrays[3];
  for (auto _ : state) {
    for (int64_t i = 0; i < kElements; ++i) out[i] = a[i] * b[i] + c[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}
BENCHMARK(BM_CppTriad)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
