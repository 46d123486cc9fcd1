//===- runtime_overhead_bench.cc - The fixed cost of one run on the cpu ----===//
//
// What a run of a tiny program costs on the `cpu` platform through
// LocalClient, as a user calls it: argument checks, result allocation,
// aliasing, the arena, the thunk loop and the result's construction, with
// kernels that take nanoseconds. Small programs (an RNN tagger's step, the
// shorter ../shared/jax programs, the PyTorch device's training step) pay
// this on every call.
//
//   add           one add of two f32[4]
//   tuple8        eight results (a tuple of 8 f32[4]) of one parameter
//   params16      the sum of 16 f32[4] parameters (a tuple of one)
//   while100      a while loop of 100 iterations of a scalar add
//   thunks20      20 small dots in a chain (20 thunks that do not fuse)
//   alias         add with its output aliased to parameter 0, the
//                 argument lent (copy protected) or donated
//
// Entry points: Run (lent ShapedBuffers), RunArrays (the PyTorch device's:
// arrays in, a tuple of arrays out) and RunAsync followed by
// BlockHostUntilDone. The argument is ExecutableRunOptions'
// intra_op_threads (1 or 2); the pool's size is AXLE_NUM_THREADS.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "benchmark/benchmark.h"

namespace axle {
namespace {

constexpr char kAdd[] = R"(
HloModule add
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
}
)";

constexpr char kTuple8[] = R"(
HloModule tuple8
ENTRY e {
  a = f32[4] parameter(0)
  o0 = f32[4] add(a, a)
  o1 = f32[4] multiply(a, a)
  o2 = f32[4] subtract(a, o1)
  o3 = f32[4] negate(a)
  o4 = f32[4] abs(a)
  o5 = f32[4] maximum(a, o3)
  o6 = f32[4] minimum(a, o3)
  o7 = f32[4] multiply(o0, o1)
  ROOT r = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4])
      tuple(o0, o1, o2, o3, o4, o5, o6, o7)
}
)";

std::string Params16() {
  std::string text = "HloModule params16\nENTRY e {\n";
  for (int i = 0; i < 16; ++i)
    text += "  p" + std::to_string(i) + " = f32[4] parameter(" + std::to_string(i) + ")\n";
  std::string last = "p0";
  for (int i = 1; i < 16; ++i) {
    const std::string name = "s" + std::to_string(i);
    text += "  " + name + " = f32[4] add(" + last + ", p" + std::to_string(i) + ")\n";
    last = name;
  }
  // A tuple of one, so that RunArrays runs it too.
  return text + "  ROOT r = (f32[4]) tuple(" + last + ")\n}\n";
}

constexpr char kWhile100[] = R"(
HloModule while100
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  half = f32[] constant(0.5)
  x1 = f32[] add(x, half)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}
)";

std::string Thunks20() {
  std::string text =
      "HloModule thunks20\nENTRY e {\n  x = f32[4,4] parameter(0)\n  w = f32[4,4] parameter(1)\n";
  std::string last = "x";
  for (int i = 0; i < 20; ++i) {
    const std::string name = "d" + std::to_string(i);
    text += "  " + std::string(i == 19 ? "ROOT " : "") + name + " = f32[4,4] dot(" + last +
            ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    last = name;
  }
  return text + "}\n";
}

constexpr char kAlias[] = R"(
HloModule alias, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
}
)";

struct Program {
  LocalClient* client = nullptr;
  std::unique_ptr<LocalExecutable> executable;
  std::vector<ScopedShapedBuffer> arguments;

  std::vector<const ShapedBuffer*> ArgumentPointers() const {
    std::vector<const ShapedBuffer*> pointers;
    for (const ScopedShapedBuffer& argument : arguments) pointers.push_back(&argument);
    return pointers;
  }
};

// Compiled once per process; arguments hold small values (0.25 * (i % 5)).
Program& Get(const std::string& name) {
  static auto* programs = new std::map<std::string, std::unique_ptr<Program>>();
  std::unique_ptr<Program>& program = (*programs)[name];
  if (program != nullptr) return *program;
  const std::map<std::string, std::string> texts = {
      {"add", kAdd},           {"tuple8", kTuple8},      {"params16", Params16()},
      {"while100", kWhile100}, {"thunks20", Thunks20()}, {"alias", kAlias}};
  program = std::make_unique<Program>();
  auto platform = PlatformUtil::GetPlatform("cpu");
  if (!platform.ok()) std::abort();
  program->client = *ClientLibrary::GetOrCreateLocalClient(*platform);
  auto module = ParseAndReturnUnverifiedModule(texts.at(name));
  if (!module.ok()) std::abort();
  auto executable = program->client->Compile(std::move(*module), {});
  if (!executable.ok()) std::abort();
  program->executable = std::move(*executable);
  for (const Shape& shape : program->executable->executable()->parameter_shapes()) {
    Literal literal(shape);
    auto data = literal.data<float>();
    for (size_t i = 0; i < data.size(); ++i) data[i] = 0.25f * static_cast<float>(i % 5);
    auto buffer = program->client->LiteralToShapedBuffer(literal, 0);
    if (!buffer.ok()) std::abort();
    program->arguments.push_back(std::move(*buffer));
  }
  return *program;
}

ExecutableRunOptions Options(const benchmark::State& state) {
  ExecutableRunOptions options;
  options.set_intra_op_threads(static_cast<int>(state.range(0)));
  return options;
}

// LocalExecutable::Run on lent buffers; the result is freed each time.
void Run(benchmark::State& state, const std::string& name) {
  Program& program = Get(name);
  const std::vector<const ShapedBuffer*> arguments = program.ArgumentPointers();
  const ExecutableRunOptions options = Options(state);
  if (!program.executable->Run(arguments, options).ok()) std::abort();
  for (auto _ : state) {
    auto result = program.executable->Run(arguments, options);
    if (!result.ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(result);
  }
}

// LocalExecutable::RunArrays: lent array buffers, the results' buffers
// handed to the caller.
void RunArrays(benchmark::State& state, const std::string& name) {
  Program& program = Get(name);
  const ExecutableRunOptions options = Options(state);
  std::vector<MaybeOwningDeviceMemory> arguments;
  std::vector<se::OwningDeviceMemory> results;
  for (auto _ : state) {
    arguments.clear();
    for (const ScopedShapedBuffer& argument : program.arguments) {
      arguments.emplace_back(argument.root_buffer());
    }
    absl::Status status =
        program.executable->RunArrays(absl::MakeSpan(arguments), options, &results);
    if (!status.ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(results);
  }
}

// RunAsync, then waiting for the stream: the asynchronous runtime's cost
// (enqueue, the stream's worker, the wake-up of the waiting caller).
void RunAsyncAndWait(benchmark::State& state, const std::string& name) {
  Program& program = Get(name);
  const std::vector<const ShapedBuffer*> arguments = program.ArgumentPointers();
  const ExecutableRunOptions options = Options(state);
  auto stream = program.client->platform()->DefaultStream(0);
  if (!stream.ok()) std::abort();
  for (auto _ : state) {
    auto result = program.executable->RunAsync(arguments, options);
    if (!result.ok() || !(*stream)->BlockHostUntilDone().ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(result);
  }
}

// RunAsync 16 times, then one wait: the enqueue cost when the caller does
// not wait for each run (per run).
void RunAsyncBatch(benchmark::State& state, const std::string& name) {
  Program& program = Get(name);
  const std::vector<const ShapedBuffer*> arguments = program.ArgumentPointers();
  const ExecutableRunOptions options = Options(state);
  auto stream = program.client->platform()->DefaultStream(0);
  if (!stream.ok()) std::abort();
  constexpr int kBatch = 16;
  std::vector<ScopedShapedBuffer> results;
  for (auto _ : state) {
    results.clear();
    for (int i = 0; i < kBatch; ++i) {
      auto result = program.executable->RunAsync(arguments, options);
      if (!result.ok()) state.SkipWithError("run failed");
      results.push_back(std::move(*result));
    }
    if (!(*stream)->BlockHostUntilDone().ok()) state.SkipWithError("run failed");
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Donation: the result of one run is donated as the next run's argument 0
// (aliased to the output: updated in place, no allocation, no copy).
void RunDonated(benchmark::State& state) {
  Program& program = Get("alias");
  const ExecutableRunOptions options = Options(state);
  auto first = program.executable->Run(program.ArgumentPointers(), options);
  if (!first.ok()) std::abort();
  ScopedShapedBuffer carried = std::move(*first);
  for (auto _ : state) {
    std::vector<ExecutionInput> inputs;
    inputs.push_back(ExecutionInput::Donate(&carried));
    inputs.push_back(ExecutionInput::Borrow(program.arguments[1]));
    auto output = program.executable->Run(std::move(inputs), options);
    if (!output.ok()) {
      state.SkipWithError("run failed");
      break;
    }
    carried = output->ConsumeResult();
  }
}

void Threads(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
}

#define AXLE_OVERHEAD_BENCH(fn, name)                                  \
  void BM_##fn##_##name(benchmark::State& state) { fn(state, #name); } \
  BENCHMARK(BM_##fn##_##name)->Apply(Threads)

AXLE_OVERHEAD_BENCH(Run, add);
AXLE_OVERHEAD_BENCH(Run, tuple8);
AXLE_OVERHEAD_BENCH(Run, params16);
AXLE_OVERHEAD_BENCH(Run, while100);
AXLE_OVERHEAD_BENCH(Run, thunks20);
AXLE_OVERHEAD_BENCH(Run, alias);
AXLE_OVERHEAD_BENCH(RunArrays, tuple8);
AXLE_OVERHEAD_BENCH(RunArrays, params16);
AXLE_OVERHEAD_BENCH(RunAsyncAndWait, add);
AXLE_OVERHEAD_BENCH(RunAsyncAndWait, tuple8);
AXLE_OVERHEAD_BENCH(RunAsyncBatch, add);

void BM_RunDonated_alias(benchmark::State& state) { RunDonated(state); }
BENCHMARK(BM_RunDonated_alias)->Apply(Threads);

}  // namespace
}  // namespace axle

BENCHMARK_MAIN();
