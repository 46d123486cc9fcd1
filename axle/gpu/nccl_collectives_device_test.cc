//===- nccl_collectives_device_test.cc - NCCL collective thunks on GPUs -----===//
//
// Without a GPU: the one-rank modules compile to NCCL thunks and run on the
// interpreter. On a GPU (skipped, with a message, without one or NCCL):
//  - one rank: each collective kind, kept in a one-device module
//    (AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE=1) and run by a one-rank NCCL
//    communicator, agrees with the interpreter;
//  - a peer that never joins: a module of two replicas run by rank 1 alone
//    fails with DeadlineExceeded within the collective timeout (one GPU
//    suffices: the unique id's exchange is what times out);
//  - two ranks (skipped unless there are 2 GPUs): all-reduce,
//    collective-permute and all-gather between two GPUs, one thread each.
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if AXLE_HAVE_NCCL_H
#include "axle/gpu/nccl_library.h"
#endif

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

// Skips unless NCCL opens (the message says why not).
#define AXLE_SKIP_WITHOUT_NCCL()                                   \
  do {                                                             \
    absl::Status nccl = NcclAvailable();                           \
    if (!nccl.ok()) GTEST_SKIP() << "no NCCL: " << nccl.message(); \
  } while (false)

absl::Status NcclAvailable() {
#if AXLE_HAVE_NCCL_H
  return NcclLibrary::Get().status();
#else
  return absl::UnimplementedError("built without nccl.h");
#endif
}

constexpr char kSum[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}
)";

// The one-rank modules (entries; the reducers above come first).
constexpr char kAllReduceSumAndMax[] = R"(ENTRY e {
  x = f32[1000] parameter(0)
  y = s32[64] parameter(1)
  two = f32[] constant(2)
  b = f32[1000] broadcast(two), dimensions={}
  m = f32[1000] multiply(x, b)
  s = f32[1000] all-reduce(m), replica_groups={{0}}, to_apply=add
  t = s32[64] all-reduce(y), replica_groups={}, to_apply=max
  n = f32[1000] negate(s)
  ROOT r = (f32[1000], s32[64]) tuple(n, t)
})";

constexpr char kAllReduceOfTwoOperands[] = R"(ENTRY e {
  x = f32[16] parameter(0)
  y = f32[3,5] parameter(1)
  ROOT s = (f32[16], f32[3,5]) all-reduce(x, y), replica_groups={{0}}, to_apply=add
})";

constexpr char kGatherScatterAllToAll[] = R"(ENTRY e {
  x = f32[4,3] parameter(0)
  g = f32[4,3] all-gather(x), replica_groups={{0}}, dimensions={0}
  s = f32[4,3] reduce-scatter(g), replica_groups={{0}}, dimensions={0}, to_apply=add
  ROOT a = f32[4,3] all-to-all(s), replica_groups={{0}}, dimensions={0}
})";

constexpr char kPermuteAndBroadcast[] = R"(ENTRY e {
  x = s32[33] parameter(0)
  p = s32[33] collective-permute(x), source_target_pairs={{0,0}}
  ROOT b = s32[33] collective-broadcast(p), replica_groups={{0}}
})";

constexpr const char* kOneRankModules[] = {kAllReduceSumAndMax, kAllReduceOfTwoOperands,
                                           kGatherScatterAllToAll, kPermuteAndBroadcast};

// Without a device: each one-rank module keeps an NCCL thunk per collective
// when compiled with collectives_on_one_device, and runs on the interpreter.
TEST(NcclOneRankModulesTest, CompileWithoutADeviceAndRunOnTheInterpreter) {
  std::vector<test::TestModule> modules;
  std::vector<std::string> texts;
  for (const char* entry : kOneRankModules)
    texts.push_back(absl::StrCat("HloModule m\n", kSum, entry));
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    GpuPrepareOptions keep;
    keep.collectives_on_one_device = true;
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions(), keep);
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_THAT(GpuProgramToString(*program), HasSubstr("nccl "));
    modules.push_back(test::TestModule{"one-rank", text.c_str(), /*on_interpreter=*/true});
  }
  test::ExpectModulesCompileWithoutADevice(modules);
}

class NcclOneRankDeviceTest : public test::GpuExecutableTest {
 protected:
  void SetUp() override {
    setenv("AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE", "1", 1);
    test::GpuExecutableTest::SetUp();
    if (IsSkipped()) return;
    AXLE_SKIP_WITHOUT_NCCL();
  }
  void TearDown() override { unsetenv("AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE"); }

  // Runs `entry` (with the reducers above) against the interpreter, after
  // checking that the program has an NCCL thunk.
  void ExpectNcclMatches(const char* entry) {
    const std::string text = absl::StrCat("HloModule m\n", kSum, entry);
    auto gpu = CompileFor(client_, text);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    const std::string program =
        GpuProgramToString(static_cast<const GpuExecutable*>((*gpu)->executable())->program());
    EXPECT_THAT(program, HasSubstr("nccl ")) << program;
    ExpectMatchesInterpreter(text);
  }
};

TEST_F(NcclOneRankDeviceTest, AllReduceSumAndMaxAroundKernels) {
  ExpectNcclMatches(kAllReduceSumAndMax);
}

TEST_F(NcclOneRankDeviceTest, AllReduceOfTwoOperands) {
  ExpectNcclMatches(kAllReduceOfTwoOperands);
}

TEST_F(NcclOneRankDeviceTest, AllGatherReduceScatterAllToAll) {
  ExpectNcclMatches(kGatherScatterAllToAll);
}

TEST_F(NcclOneRankDeviceTest, CollectivePermuteAndBroadcast) {
  ExpectNcclMatches(kPermuteAndBroadcast);
}

// Rank 1 of two runs alone: the clique's unique id never comes from rank 0,
// so the run fails with DeadlineExceeded naming NCCL, within the timeout.
class NcclTimeoutDeviceTest : public test::GpuExecutableTest {};

TEST_F(NcclTimeoutDeviceTest, PeerThatNeverJoinsIsATimeout) {
  AXLE_SKIP_WITHOUT_NCCL();
  const std::string text = absl::StrCat("HloModule m, replica_count=2\n", kSum, R"(ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] all-reduce(x), replica_groups={}, to_apply=add
})");
  auto gpu = CompileFor(client_, text);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::vector<std::unique_ptr<Communicator>> hosts =
      MakeInProcessCommunicators(2, std::chrono::milliseconds(500));
  Literal x = test::MakeInput(ShapeUtil::MakeShape(F32, {8}), 1);
  auto buffer = client_->LiteralToShapedBuffer(x, 0);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ExecutableRunOptions options;
  // Rank 1 (it waits for rank 0's unique id, which never comes).
  options.set_participant(RunParticipant{2, 1, 1, 0, hosts[1].get()});
  auto result = (*gpu)->Run({&*buffer}, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("NCCL: exchanging the unique id"));
}

// Two GPUs, a thread each: rank r's input is x + 100 r.
TEST(NcclTwoRankDeviceTest, AllReducePermuteAllGather) {
  absl::StatusOr<int> devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "no CUDA device: " << devices.status().message();
  if (*devices < 2) {
    GTEST_SKIP() << "two-rank NCCL tests need 2 GPUs (NCCL refuses two ranks on one); found "
                 << *devices;
  }
  AXLE_SKIP_WITHOUT_NCCL();
  auto platform = PlatformUtil::GetPlatform("cuda");
  ASSERT_TRUE(platform.ok()) << platform.status();
  const std::string text = absl::StrCat("HloModule m, replica_count=2\n", kSum, R"(ENTRY e {
  x = f32[4] parameter(0)
  s = f32[4] all-reduce(x), replica_groups={}, to_apply=add
  p = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,0}}
  g = f32[8] all-gather(x), replica_groups={}, dimensions={0}
  ROOT r = (f32[4], f32[4], f32[8]) tuple(s, p, g)
})");
  std::vector<std::unique_ptr<Communicator>> hosts =
      MakeInProcessCommunicators(2, std::chrono::seconds(60));
  std::vector<absl::StatusOr<Literal>> results(2, absl::UnknownError("not run"));
  auto run_rank = [&](int rank) -> absl::StatusOr<Literal> {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Open(rank));
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> stream, CudaStream::Create(*device));
    CudaMemoryAllocator allocator(nullptr, *device);
    allocator.OrderFreesOn(stream.get());
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseAndReturnUnverifiedModule(text));
    AXLE_ASSIGN_OR_RETURN(GpuProgram program, CompileGpuProgram(module.get()));
    AXLE_ASSIGN_OR_RETURN(
        std::unique_ptr<GpuExecutable> executable,
        GpuExecutable::Create(std::shared_ptr<const HloModule>(std::move(module)), *platform,
                              *device, &allocator, std::move(program)));
    Literal x(ShapeUtil::MakeShape(F32, {4}));
    for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i + 100 * rank);
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer argument,
                          AllocateCudaShapedBuffer(x.shape(), &allocator, stream.get()));
    AXLE_RETURN_IF_ERROR(TransferLiteralToCuda(stream.get(), x, argument));
    AXLE_RETURN_IF_ERROR(stream->Synchronize());
    ExecutableRunOptions options;
    options.set_allocator(&allocator).set_device_ordinal(rank);
    options.set_participant(RunParticipant{2, 1, rank, 0, hosts[rank].get()});
    const ShapedBuffer* arguments[] = {&argument};
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable->Execute(options, arguments));
    absl::StatusOr<Literal> literal = TransferLiteralFromCuda(stream.get(), result);
    allocator.OrderFreesOn(nullptr);
    return literal;
  };
  std::thread other([&] { results[1] = run_rank(1); });
  results[0] = run_rank(0);
  other.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank].status();
    const Literal& r = *results[rank];
    std::vector<Literal> parts = r.Clone().DecomposeTuple();
    ASSERT_EQ(parts.size(), 3u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(parts[0].data<float>()[i], static_cast<float>(2 * i + 100)) << "all-reduce";
      EXPECT_EQ(parts[1].data<float>()[i], static_cast<float>(i + 100 * (1 - rank))) << "permute";
      EXPECT_EQ(parts[2].data<float>()[i], static_cast<float>(i)) << "all-gather";
      EXPECT_EQ(parts[2].data<float>()[4 + i], static_cast<float>(i + 100)) << "all-gather";
    }
  }
}

}  // namespace
}  // namespace axle::gpu
