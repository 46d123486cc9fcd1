//===- cpu_parallel_bench.cc - The cpu platform on 1 and 2 threads ---------===//
//
// The 5-op chain `((a*b + c) relu * 0.5) - a` on 16M f32 through the `cpu`
// platform as a user runs it (LocalClient: compile once, then
// LocalExecutable::Run, result buffer allocated per run by the runtime),
// with ExecutableRunOptions::set_intra_op_threads(1) and (2). Peers in the
// same run: a STREAM-style triad (`a*b + c`) split over the same pool, and
// the cost of an empty ParallelFor (what splitting costs a small kernel),
// and a oneDNN matmul followed by split elementwise kernels (OpenMP and the
// pool taking turns on the same cores).
// Compare with ../shared/PEERS.md: triad 41 / 82 GB/s on 1 / 2 cores,
// PyTorch eager 20 / 11 ms, the fused ideal about 6 / 3 ms.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "axle/base/thread_pool.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "bench/elementwise_chain.h"
#include "benchmark/benchmark.h"

namespace axle {
namespace {

using bench::ChainInput;
using bench::ChainPointers;
using bench::kChain;
using bench::kElements;

// A module compiled for the cpu platform, with its arguments on it.
struct Program {
  LocalClient* client = nullptr;
  std::unique_ptr<LocalExecutable> executable;
  std::vector<ScopedShapedBuffer> arguments;
};

// `hlo` compiled for cpu, with `arguments` transferred; aborts on an error.
Program* CompileProgram(const char* hlo, const std::vector<Literal>& arguments) {
  auto* program = new Program;
  auto platform = PlatformUtil::GetPlatform("cpu");
  if (!platform.ok()) std::abort();
  program->client = *ClientLibrary::GetOrCreateLocalClient(*platform);
  auto module = ParseAndReturnUnverifiedModule(hlo);
  if (!module.ok()) std::abort();
  auto executable = program->client->Compile(std::move(*module), {});
  if (!executable.ok()) std::abort();
  program->executable = std::move(*executable);
  for (const Literal& literal : arguments) {
    auto buffer = program->client->LiteralToShapedBuffer(literal, 0);
    if (!buffer.ok()) std::abort();
    program->arguments.push_back(std::move(*buffer));
  }
  return program;
}

// Runs `program` on state.range(0) threads: once untimed (the first run
// faults in the result block and the arena), then once per iteration.
void RunProgram(benchmark::State& state, const Program& program) {
  std::vector<const ShapedBuffer*> arguments;
  for (const auto& argument : program.arguments) arguments.push_back(&argument);
  ExecutableRunOptions options;
  options.set_intra_op_threads(static_cast<int>(state.range(0)));
  if (!program.executable->Run(arguments, options).ok()) std::abort();
  for (auto _ : state) {
    auto result = program.executable->Run(arguments, options);
    if (!result.ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(result);
  }
}

void BM_ChainLocalClient(benchmark::State& state) {
  static const Program* chain = [] {
    std::vector<Literal> arguments;
    for (int i = 0; i < 3; ++i) {
      Literal literal(ShapeUtil::MakeShape(F32, {kElements}));
      auto data = literal.data<float>();
      for (int64_t j = 0; j < kElements; ++j) data[j] = ChainInput(i, j);
      arguments.push_back(std::move(literal));
    }
    return CompileProgram(kChain, arguments);
  }();
  RunProgram(state, *chain);
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}
BENCHMARK(BM_ChainLocalClient)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A oneDNN matmul (OpenMP threads) followed by elementwise kernels large
// enough to be split across the pool: if OpenMP's workers still spin after
// the matmul, the pool's worker competes with them for the second core.
// Run once as is and once with OMP_WAIT_POLICY=passive to see the cost
// (on 2 busy cores: 12.6 ms vs 3.1 ms at 2 threads; 4.4 ms at 1). libgomp
// reads the variable in its own initializer, before any code of ours, and
// glibc resets the environment before that, so the program cannot set it
// for itself: the launcher must, until kernels run on OpenMP's threads.
constexpr char kDotThenElementwise[] = R"(
HloModule dot_then_elementwise
ENTRY e {
  x = f32[256,512] parameter(0)
  w = f32[512,1024] parameter(1)
  y = f32[256,1024] parameter(2)
  d = f32[256,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[256,1024] broadcast(zero), dimensions={}
  r = f32[256,1024] maximum(d, zeros)
  ROOT out = f32[256,1024] multiply(r, y)
}
)";

void BM_DotThenElementwise(benchmark::State& state) {
  static const Program* program = [] {
    std::vector<Literal> arguments;
    const int64_t shapes[3][2] = {{256, 512}, {512, 1024}, {256, 1024}};
    for (const auto& dims : shapes) {
      Literal literal(ShapeUtil::MakeShape(F32, {dims[0], dims[1]}));
      auto data = literal.data<float>();
      for (size_t j = 0; j < data.size(); ++j) data[j] = static_cast<float>(j % 13) * 0.1f - 0.6f;
      arguments.push_back(std::move(literal));
    }
    return CompileProgram(kDotThenElementwise, arguments);
  }();
  RunProgram(state, *program);
}
BENCHMARK(BM_DotThenElementwise)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_TriadPool(benchmark::State& state) {
  // Named pointers, not a structured binding: a lambda may capture
  // structured bindings only from C++20 on, and clang-tidy's clang refuses it.
  const bench::ChainOperands chain = ChainPointers();
  const float* a = chain.a;
  const float* b = chain.b;
  const float* c = chain.c;
  float* out = chain.out;
  for (auto _ : state) {
    ThreadPool::Default().ParallelFor(
        kElements, 1 << 16,
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) out[i] = a[i] * b[i] + c[i];
        },
        static_cast<int>(state.range(0)));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * sizeof(float));
}
BENCHMARK(BM_TriadPool)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EmptyParallelFor(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    ThreadPool::Default().ParallelFor(
        threads, 1, [](int64_t begin, int64_t end) { benchmark::DoNotOptimize(begin + end); },
        threads);
  }
}
BENCHMARK(BM_EmptyParallelFor)->Arg(1)->Arg(2)->UseRealTime();

}  // namespace
}  // namespace axle

BENCHMARK_MAIN();
