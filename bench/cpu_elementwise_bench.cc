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
#include "bench/elementwise_chain.h"
#include "benchmark/benchmark.h"

namespace {

using axle::bench::ChainArrays;
using axle::bench::ChainPointers;
using axle::bench::kChain;
using axle::bench::kElements;

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
  const std::vector<float*>& arrays = ChainArrays();
  void* args[4] = {arrays[0], arrays[1], arrays[2], arrays[3]};
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

// `out[i] = element(a[i], b[i], c[i])` over the chain's arrays, built by
// the host compiler.
template <typename Element>
void RunCppLoop(benchmark::State& state, Element element) {
  const auto [a, b, c, out] = ChainPointers();
  for (auto _ : state) {
    for (int64_t i = 0; i < kElements; ++i) out[i] = element(a[i], b[i], c[i]);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}

void BM_CppChain(benchmark::State& state) {
  RunCppLoop(state, [](float a, float b, float c) { return std::max(a * b + c, 0.0f) * 0.5f - a; });
}
BENCHMARK(BM_CppChain)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CppTriad(benchmark::State& state) {
  RunCppLoop(state, [](float a, float b, float c) { return a * b + c; });
}
BENCHMARK(BM_CppTriad)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
