//===- parallel_test.cc - Threads and arenas of the cpu executable ---------===//
//
// Kernels split across the intra-op pool compute exactly what one thread
// computes (split by bytes, or after timed runs showed them long); one executable runs from 8
// threads at once (Run and RunAsync); temporaries come from arenas the executable reuses, so
// steady-state runs allocate only their result buffers.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// Four pool threads even on a smaller machine, so that the kernels below
// really are split (unless the environment says otherwise). Runs before
// main, hence before the pool is created.
const bool kPoolSize = [] { return setenv("AXLE_NUM_THREADS", "4", /*overwrite=*/0) == 0; }();

// Large enough to be split: 512x1024 f32 is 2 MiB per array.
constexpr char kSoftmaxRows[] = R"(
HloModule softmax_rows
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[512,1024] parameter(0)
  q = f32[512,1024] parameter(1)
  pq = f32[512,1024] multiply(p, q)
  e = f32[512,1024] exponential(pq)
  zero = f32[] constant(0)
  s = f32[512] reduce(e, zero), dimensions={1}, to_apply=add
  cols = f32[1024] reduce(e, zero), dimensions={0}, to_apply=add
  sb = f32[512,1024] broadcast(s), dimensions={0}
  cb = f32[512,1024] broadcast(cols), dimensions={1}
  d = f32[512,1024] divide(e, sb)
  ROOT out = f32[512,1024] add(d, cb)
}
)";

Literal Filled(const Shape& shape, int seed) {
  Literal literal(shape);
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>((i * (seed + 7) + seed) % 23) / 23.0f - 0.4f;
  }
  return literal;
}

// Counts Allocate calls and forwards them to the host allocator.
class CountingAllocator : public se::DeviceMemoryAllocator {
 public:
  explicit CountingAllocator(const se::Platform* platform)
      : se::DeviceMemoryAllocator(platform), host_(platform) {}
  absl::Status Deallocate(int device_ordinal, se::DeviceMemoryBase mem) override {
    return host_.Deallocate(device_ordinal, mem);
  }
  int64_t allocations() const { return allocations_.load(); }

 protected:
  absl::StatusOr<se::DeviceMemoryBase> AllocateRaw(int device_ordinal, uint64_t size) override {
    allocations_.fetch_add(1);
    AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory memory, host_.Allocate(device_ordinal, size));
    return memory.Release();
  }

 private:
  HostMemoryAllocator host_;
  std::atomic<int64_t> allocations_{0};
};

class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kPoolSize);
    auto platform = PlatformUtil::GetPlatform("cpu");
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = *platform;
    client_ = *ClientLibrary::GetOrCreateLocalClient(platform_);
  }

  std::unique_ptr<LocalExecutable> Compile(absl::string_view text) {
    auto module = ParseAndReturnUnverifiedModule(text);
    CHECK(module.ok()) << module.status();
    auto executable = client_->Compile(std::move(*module), {});
    CHECK(executable.ok()) << executable.status();
    return std::move(*executable);
  }

  std::vector<ScopedShapedBuffer> ToDevice(const std::vector<Literal>& literals) {
    std::vector<ScopedShapedBuffer> buffers;
    for (const Literal& literal : literals) {
      auto buffer = client_->LiteralToShapedBuffer(literal, 0);
      CHECK(buffer.ok()) << buffer.status();
      buffers.push_back(std::move(*buffer));
    }
    return buffers;
  }

  absl::StatusOr<Literal> Run(const LocalExecutable& executable,
                              const std::vector<ScopedShapedBuffer>& arguments,
                              ExecutableRunOptions options) {
    std::vector<const ShapedBuffer*> pointers;
    pointers.reserve(arguments.size());
    for (const auto& argument : arguments) pointers.push_back(&argument);
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable.Run(pointers, options));
    return client_->ShapedBufferToLiteral(result);
  }

  // Enqueued on the device's stream; the transfer waits for it.
  absl::StatusOr<Literal> RunAsync(const LocalExecutable& executable,
                                   const std::vector<ScopedShapedBuffer>& arguments) {
    std::vector<const ShapedBuffer*> pointers;
    pointers.reserve(arguments.size());
    for (const auto& argument : arguments) pointers.push_back(&argument);
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable.RunAsync(pointers, {}));
    return client_->ShapedBufferToLiteral(result);
  }

  absl::StatusOr<Literal> RunReference(absl::string_view text, const std::vector<Literal>& args) {
    AXLE_ASSIGN_OR_RETURN(se::Platform * platform, PlatformUtil::GetPlatform("interpreter"));
    AXLE_ASSIGN_OR_RETURN(LocalClient * client, ClientLibrary::GetOrCreateLocalClient(platform));
    AXLE_ASSIGN_OR_RETURN(auto module, ParseAndReturnUnverifiedModule(text));
    AXLE_ASSIGN_OR_RETURN(auto executable, client->Compile(std::move(module), {}));
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const ShapedBuffer*> pointers;
    for (const Literal& arg : args) {
      AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer, client->LiteralToShapedBuffer(arg, 0));
      buffers.push_back(std::move(buffer));
    }
    pointers.reserve(buffers.size());
    for (const auto& buffer : buffers) pointers.push_back(&buffer);
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable->Run(pointers, {}));
    return client->ShapedBufferToLiteral(result);
  }

  se::Platform* platform_ = nullptr;
  LocalClient* client_ = nullptr;
};

TEST_F(ParallelTest, OneAndManyThreadsGiveIdenticalResults) {
  ASSERT_GE(ThreadPool::Default().num_threads(), 2) << "AXLE_NUM_THREADS=1 leaves nothing to test";
  const Shape shape = ShapeUtil::MakeShape(F32, {512, 1024});
  std::vector<Literal> args;
  args.push_back(Filled(shape, 1));
  args.push_back(Filled(shape, 2));
  auto executable = Compile(kSoftmaxRows);
  auto buffers = ToDevice(args);
  absl::StatusOr<Literal> one =
      Run(*executable, buffers, ExecutableRunOptions().set_intra_op_threads(1));
  ASSERT_TRUE(one.ok()) << one.status();
  for (int threads : {2, 3, 0}) {
    absl::StatusOr<Literal> many =
        Run(*executable, buffers, ExecutableRunOptions().set_intra_op_threads(threads));
    ASSERT_TRUE(many.ok()) << many.status();
    absl::Status equal = LiteralsEqual(*one, *many);
    EXPECT_TRUE(equal.ok()) << threads << " threads: " << equal;
  }
  absl::StatusOr<Literal> reference = RunReference(kSoftmaxRows, args);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::Status near = LiteralsNear(*reference, *one, ErrorSpec(1e-4, 1e-4));
  EXPECT_TRUE(near.ok()) << near;
}

// A kernel that touches little memory (512 KiB) but computes long (an
// argmax's compare-and-select chain): its first runs are inline and timed,
// later ones split across the pool once those were long. Every run, either
// way, gives what one thread gives.
constexpr char kArgmaxRows[] = R"(
HloModule argmax_rows
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  a_nan = pred[] compare(a, a), direction=NE
  pick = pred[] or(gt, a_nan)
  v = f32[] select(pick, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  take = pred[] or(pick, tie)
  i = s32[] select(take, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[32,4096] parameter(0)
  iota = s32[32,4096] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT m = (f32[32], s32[32]) reduce(x, iota, ninf, zero), dimensions={1}, to_apply=argmax
}
)";

// The schedule of a kernel under 1 MiB from its timed inline runs: an RNN
// step's gates (a spinning candidate) split in blocks when a worker spins
// and they take a few microseconds, or when they take long enough to pay
// for waking one; any kernel of 40 us or more once per thread.
TEST(KernelThunkTest, SmallKernelsSplitWhenTheSplitPays) {
  using cpu::KernelThunk;
  using Split = KernelThunk::SmallSplit;
  constexpr int64_t kSpinning = KernelThunk::kMinSpinningSplitNanoseconds;
  constexpr int64_t kWaking = KernelThunk::kMinWakingSplitNanoseconds;
  constexpr int64_t kLong = KernelThunk::kMinSplitNanoseconds;
  static_assert(kSpinning < kWaking && kWaking < kLong);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kSpinning - 1, true, true), Split::kInline);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kSpinning, true, true), Split::kBlocks);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kSpinning, true, false), Split::kInline);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kWaking - 1, true, false), Split::kInline);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kWaking, true, false), Split::kBlocks);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kLong, true, false), Split::kBlocks);
  // Not a candidate (few expensive elements, or no SpinScope open).
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kWaking, false, true), Split::kInline);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kLong - 1, false, true), Split::kInline);
  EXPECT_EQ(KernelThunk::ChooseSmallSplit(kLong, false, false), Split::kOncePerThread);
}

TEST_F(ParallelTest, LongKernelsOnLittleMemorySplitAfterTimedRuns) {
  ASSERT_GE(ThreadPool::Default().num_threads(), 2) << "AXLE_NUM_THREADS=1 leaves nothing to test";
  std::vector<Literal> args;
  args.push_back(Filled(ShapeUtil::MakeShape(F32, {32, 4096}), 3));
  auto executable = Compile(kArgmaxRows);
  auto buffers = ToDevice(args);
  absl::StatusOr<Literal> one =
      Run(*executable, buffers, ExecutableRunOptions().set_intra_op_threads(1));
  ASSERT_TRUE(one.ok()) << one.status();
  for (int run = 0; run < 8; ++run) {
    absl::StatusOr<Literal> many = Run(*executable, buffers, ExecutableRunOptions());
    ASSERT_TRUE(many.ok()) << many.status();
    absl::Status equal = LiteralsEqual(*one, *many);
    EXPECT_TRUE(equal.ok()) << "run " << run << ": " << equal;
  }
  absl::StatusOr<Literal> reference = RunReference(kArgmaxRows, args);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::Status equal = LiteralsEqual(*reference, *one);
  EXPECT_TRUE(equal.ok()) << equal;
}

// An argmax of a whole 4 MiB vector (a fold to a scalar cut into chunks,
// loop_kernel_plan.h: FoldChunks) folds its chunks on the pool's threads
// and combines them after: with ties, NaNs of both signs and infinities
// in every chunk, one thread, several and the interpreter agree bit for bit.
constexpr char kArgmaxWhole[] = R"(
HloModule argmax_whole
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  a_nan = pred[] compare(a, a), direction=NE
  pick = pred[] or(gt, a_nan)
  v = f32[] select(pick, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  take = pred[] or(pick, tie)
  i = s32[] select(take, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[1048576] parameter(0)
  iota = s32[1048576] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT m = (f32[], s32[]) reduce(x, iota, ninf, zero), dimensions={0}, to_apply=argmax
}
)";

TEST_F(ParallelTest, ArgmaxOfAWholeVectorSplitsIntoChunks) {
  ASSERT_GE(ThreadPool::Default().num_threads(), 2) << "AXLE_NUM_THREADS=1 leaves nothing to test";
  auto executable = Compile(kArgmaxWhole);
  const Shape shape = ShapeUtil::MakeShape(F32, {1 << 20});
  // No NaN (the first infinity, a third of the way in, wins over those in
  // the later chunks), then NaNs from the middle on (the first NaN wins), then a NaN
  // in the last chunk only.
  std::vector<std::vector<Literal>> cases;
  for (int c = 0; c < 3; ++c) {
    Literal x(shape);
    auto data = x.data<float>();
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = static_cast<float>((i * 7919) % 997);
      if (i > data.size() / 3 && i % 65537 == 5) data[i] = std::numeric_limits<float>::infinity();
      if (i % 4099 == 7) data[i] = -std::numeric_limits<float>::infinity();
    }
    if (c == 1) {
      for (size_t i = data.size() / 2 + 3; i < data.size(); i += 1001) {
        data[i] = (i / 1001) % 2 == 0 ? std::nanf("") : -std::nanf("");
      }
    }
    if (c == 2) data[data.size() - 10] = std::nanf("");
    cases.emplace_back();
    cases.back().push_back(std::move(x));
  }
  for (const std::vector<Literal>& args : cases) {
    auto buffers = ToDevice(args);
    absl::StatusOr<Literal> one =
        Run(*executable, buffers, ExecutableRunOptions().set_intra_op_threads(1));
    ASSERT_TRUE(one.ok()) << one.status();
    for (int threads : {2, 3, 0}) {
      absl::StatusOr<Literal> many =
          Run(*executable, buffers, ExecutableRunOptions().set_intra_op_threads(threads));
      ASSERT_TRUE(many.ok()) << many.status();
      absl::Status equal = LiteralsEqual(*one, *many);
      EXPECT_TRUE(equal.ok()) << threads << " threads: " << equal;
    }
    absl::StatusOr<Literal> reference = RunReference(kArgmaxWhole, args);
    ASSERT_TRUE(reference.ok()) << reference.status();
    absl::Status equal = LiteralsEqual(*reference, *one);
    EXPECT_TRUE(equal.ok()) << equal;
  }
}

// Each thread alternates Run and RunAsync (the async runs queue on the
// device's stream, whose worker runs them while the sync runs go on).
TEST_F(ParallelTest, EightThreadsRunOneExecutableAtOnceSyncAndAsync) {
  constexpr char kChain[] = R"(
HloModule chain
ENTRY e {
  a = f32[262144] parameter(0)
  b = f32[262144] parameter(1)
  ab = f32[262144] multiply(a, b)
  zero = f32[] constant(0)
  zeros = f32[262144] broadcast(zero), dimensions={}
  relu = f32[262144] maximum(ab, zeros)
  ROOT out = f32[262144] subtract(relu, a)
})";
  auto executable = Compile(kChain);
  const Shape shape = ShapeUtil::MakeShape(F32, {262144});
  constexpr int kThreads = 8;
  std::vector<std::vector<Literal>> args(kThreads);
  std::vector<std::vector<ScopedShapedBuffer>> buffers;
  buffers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    args[t].push_back(Filled(shape, 3 * t));
    args[t].push_back(Filled(shape, 3 * t + 1));
    buffers.push_back(ToDevice(args[t]));
  }
  std::vector<absl::Status> outcomes(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        bool async = (t + round) % 2 == 1;
        absl::StatusOr<Literal> result =
            async ? RunAsync(*executable, buffers[t]) : Run(*executable, buffers[t], {});
        if (!result.ok()) {
          outcomes[t] = result.status();
          return;
        }
        auto a = args[t][0].data<float>();
        auto b = args[t][1].data<float>();
        auto out = result->data<float>();
        for (size_t i = 0; i < a.size(); ++i) {
          const float expected = std::max(a[i] * b[i], 0.0f) - a[i];
          if (out[i] != expected) {
            outcomes[t] = absl::InternalError(
                absl::StrCat("thread ", t, " round ", round, async ? " (async)" : " (sync)",
                             " element ", i, ": ", out[i], " != ", expected));
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(outcomes[t].ok()) << outcomes[t];
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>(executable->executable());
  ASSERT_NE(cpu, nullptr);
  // At most the 8 callers' sync runs and the stream's run at once.
  EXPECT_LE(cpu->arenas_allocated(), kThreads + 1);
}

TEST_F(ParallelTest, ArenaIsReusedAcrossRuns) {
  auto executable = Compile(kSoftmaxRows);
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>(executable->executable());
  ASSERT_NE(cpu, nullptr);
  // The row and column sums (and whatever the compiler does not fuse) are
  // temporaries.
  EXPECT_GE(cpu->arena_size_bytes(), (512 + 1024) * 4);
  EXPECT_EQ(cpu->arena_size_bytes() % 64, 0);
  const Shape shape = ShapeUtil::MakeShape(F32, {512, 1024});
  std::vector<Literal> args;
  args.push_back(Filled(shape, 5));
  args.push_back(Filled(shape, 6));
  auto buffers = ToDevice(args);
  CountingAllocator allocator(platform_);
  ExecutableRunOptions options;
  options.set_allocator(&allocator);
  absl::StatusOr<Literal> first = Run(*executable, buffers, options);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t first_run = allocator.allocations();
  // The result buffer; the temporaries do not come from the allocator.
  EXPECT_EQ(first_run, 1);
  EXPECT_EQ(cpu->arenas_allocated(), 1);
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<Literal> again = Run(*executable, buffers, options);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(LiteralsEqual(*first, *again).ok());
  }
  EXPECT_EQ(allocator.allocations(), 4 * first_run);
  EXPECT_EQ(cpu->arenas_allocated(), 1);
}

TEST_F(ParallelTest, DeadTemporariesShareTheArena) {
  // Three reductions in a row: the first sums are dead once the second
  // are computed, so the third may take their place.
  constexpr char kTwice[] = R"(
HloModule twice
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  a = f32[64] reduce(p, zero), dimensions={1}, to_apply=add
  a2 = f32[8,8] reshape(a)
  b = f32[8] reduce(a2, zero), dimensions={1}, to_apply=add
  b2 = f32[2,4] reshape(b)
  c = f32[2] reduce(b2, zero), dimensions={1}, to_apply=add
  ROOT d = f32[2] exponential(c)
})";
  auto executable = Compile(kTwice);
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>(executable->executable());
  ASSERT_NE(cpu, nullptr);
  EXPECT_LT(cpu->arena_size_bytes(), cpu->temporaries_bytes())
      << cpu->arena_size_bytes() << " vs " << cpu->temporaries_bytes();
  std::vector<Literal> args;
  args.push_back(Filled(ShapeUtil::MakeShape(F32, {64, 256}), 9));
  auto buffers = ToDevice(args);
  absl::StatusOr<Literal> result = Run(*executable, buffers, {});
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<Literal> reference = RunReference(kTwice, args);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::Status near = LiteralsNear(*reference, *result, ErrorSpec(1e-4, 1e-4));
  EXPECT_TRUE(near.ok()) << near;
}

TEST_F(ParallelTest, ProfileTimesEachThunk) {
  setenv("AXLE_PROFILE", "1", 1);
  auto executable = Compile(kSoftmaxRows);
  unsetenv("AXLE_PROFILE");
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>(executable->executable());
  ASSERT_NE(cpu, nullptr);
  const Shape shape = ShapeUtil::MakeShape(F32, {512, 1024});
  std::vector<Literal> args;
  args.push_back(Filled(shape, 5));
  args.push_back(Filled(shape, 6));
  auto buffers = ToDevice(args);
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<Literal> result = Run(*executable, buffers, ExecutableRunOptions());
    ASSERT_TRUE(result.ok()) << result.status();
  }
  const std::string report = cpu->ProfileReport();
  EXPECT_NE(report.find(": 2 runs, "), std::string::npos) << report;
  // One line per thunk after the header.
  const int64_t lines = std::count(report.begin(), report.end(), '\n');
  EXPECT_GE(lines, 2) << report;
  EXPECT_NE(report.find("% "), std::string::npos) << report;
  // Each thunk's fastest run, and their sum in the header.
  EXPECT_NE(report.find("  best "), std::string::npos) << report;
  EXPECT_NE(report.find(" ms: each thunk's best run)\n"), std::string::npos) << report;
  // The buffer assignment names the values and gives every thunk a line.
  const std::string assignment = cpu->BufferAssignmentText();
  EXPECT_NE(assignment.find("arena: "), std::string::npos) << assignment;
  EXPECT_NE(assignment.find("parameter 0 at {}"), std::string::npos) << assignment;
  EXPECT_NE(assignment.find(": reads %"), std::string::npos) << assignment;
  // Off by default.
  auto quiet = Compile(kSoftmaxRows);
  EXPECT_EQ(dynamic_cast<cpu::CpuExecutable*>(quiet->executable())->ProfileReport(), "");
}

}  // namespace
}  // namespace axle
