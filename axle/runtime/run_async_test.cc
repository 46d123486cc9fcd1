// LocalExecutable::RunAsync on the interpreter platform: it returns with the
// run enqueued on the device's stream; results, donation, copy protection
// and errors once the stream gets there; buffers and the executable stay
// alive while a run needs them; one executable run from 8 threads at once,
// synchronously and asynchronously. A custom call that waits at a gate the
// test opens holds a run back deterministically.
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_status.h"
#include "axle/runtime/local_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

// Runs of GatedCopy wait while the gate is closed, except on the thread
// that closed it (so a run that wrongly ran synchronously fails the test
// instead of waiting forever).
class Gate {
 public:
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
    closer_ = std::this_thread::get_id();
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    closer_ = std::thread::id();
    cv_.notify_all();
  }
  // Returns whether the caller ran on the thread that closed the gate.
  bool Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!open_ && std::this_thread::get_id() == closer_) return true;
    cv_.wait(lock, [&] { return open_; });
    return false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::thread::id closer_;
};

Gate& TheGate() {
  static Gate* gate = new Gate();
  return *gate;
}

// f32[4] -> f32[4], a copy made after passing the gate; a run on the
// thread that closed the gate writes NaNs.
void GatedCopy(void* out, const void** in, const char* opaque, size_t opaque_len,
               XlaCustomCallStatus* status) {
  bool synchronous = TheGate().Pass();
  std::memcpy(out, in[0], 4 * sizeof(float));
  if (synchronous) {
    for (int i = 0; i < 4; ++i) static_cast<float*>(out)[i] = std::nanf("");
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(GatedCopy, "Host");

void FailOnNegative(void* out, const void** in, const char* opaque, size_t opaque_len,
                    XlaCustomCallStatus* status) {
  float x = *static_cast<const float*>(in[0]);
  if (x < 0) {
    XlaCustomCallStatusSetFailure(status, "negative input", 14);
    return;
  }
  *static_cast<float*>(out) = x + 1;
}
XLA_REGISTER_CUSTOM_CALL_TARGET(FailOnNegative, "Host");

LocalClient* Client() {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("interpreter");
  CHECK(platform.ok()) << platform.status();
  return *ClientLibrary::GetOrCreateLocalClient(*platform);
}

se::Stream* Stream() { return *Client()->backend().BorrowStream(0); }

std::unique_ptr<LocalExecutable> CompileText(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto executable = Client()->Compile(std::move(*module), ExecutableBuildOptions());
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

Literal R1(std::vector<float> values) {
  Literal literal(ShapeUtil::MakeShape(F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  return literal;
}

ScopedShapedBuffer ToDevice(const Literal& literal) {
  auto buffer = Client()->LiteralToShapedBuffer(literal, 0);
  CHECK(buffer.ok()) << buffer.status();
  return std::move(*buffer);
}

Literal FromDevice(const ShapedBuffer& buffer) {
  auto literal = Client()->ShapedBufferToLiteral(buffer);
  CHECK(literal.ok()) << literal.status();
  return std::move(*literal);
}

constexpr char kGatedDouble[] = R"(
HloModule gated_double
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] custom-call(p), custom_call_target="GatedCopy",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED
  ROOT r = f32[4] add(c, c)
})";

TEST(RunAsyncTest, ReturnsWithTheRunEnqueued) {
  auto executable = CompileText(kGatedDouble);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  TheGate().Close();
  absl::StatusOr<ScopedShapedBuffer> result = executable->RunAsync({&argument}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(Stream()->IsIdle()) << "the run finished before RunAsync returned";
  TheGate().Open();
  EXPECT_EQ(FromDevice(*result), R1({2, 4, 6, 8}));
  EXPECT_TRUE(Stream()->IsIdle());
}

TEST(RunAsyncTest, RunsOnOneStreamRunInOrder) {
  auto executable = CompileText(kGatedDouble);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  TheGate().Close();
  ScopedShapedBuffer first = *executable->RunAsync({&argument}, {});
  ScopedShapedBuffer second = *executable->RunAsync({&first}, {});
  ScopedShapedBuffer third = *executable->RunAsync({&second}, {});
  TheGate().Open();
  ASSERT_TRUE(Stream()->BlockHostUntilDone().ok());
  EXPECT_EQ(FromDevice(third), R1({8, 16, 24, 32}));
  // A synchronous run of an asynchronous result waits for it, or runs it
  // (a thread waiting for the stream runs what the worker has not taken):
  // the gate is closed from another thread, so that that is no error.
  std::thread([] { TheGate().Close(); }).join();
  ScopedShapedBuffer fourth = *executable->RunAsync({&third}, {});
  std::thread opener([] { TheGate().Open(); });
  absl::StatusOr<ScopedShapedBuffer> fifth = executable->Run({&fourth}, {});
  opener.join();
  ASSERT_TRUE(fifth.ok()) << fifth.status();
  EXPECT_EQ(FromDevice(*fifth), R1({32, 64, 96, 128}));
}

TEST(RunAsyncTest, AnErrorSurfacesAtTheNextSynchronization) {
  auto executable = CompileText(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] custom-call(p), custom_call_target="FailOnNegative",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED
})");
  Literal negative(ShapeUtil::MakeShape(F32, {}));
  negative.data<float>()[0] = -1;
  Literal positive(ShapeUtil::MakeShape(F32, {}));
  positive.data<float>()[0] = 2;
  ScopedShapedBuffer bad = ToDevice(negative);
  ScopedShapedBuffer good = ToDevice(positive);

  // At BlockHostUntilDone, once.
  ASSERT_TRUE(executable->RunAsync({&bad}, {}).ok());
  absl::Status status = Stream()->BlockHostUntilDone();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("negative input"));
  EXPECT_THAT(status.message(), HasSubstr("asynchronous run of module 'm'"));
  EXPECT_TRUE(Stream()->BlockHostUntilDone().ok());

  // At the transfer that reads a result.
  ASSERT_TRUE(executable->RunAsync({&bad}, {}).ok());
  ScopedShapedBuffer ok_result = *executable->RunAsync({&good}, {});
  absl::Status read = Client()->ShapedBufferToLiteral(ok_result).status();
  EXPECT_THAT(read.message(), HasSubstr("negative input"));
  EXPECT_EQ(FromDevice(ok_result).data<float>()[0], 3);

  // At the next synchronous run, which then does not run.
  ASSERT_TRUE(executable->RunAsync({&bad}, {}).ok());
  absl::Status run = executable->Run({&good}, {}).status();
  EXPECT_THAT(run.message(), HasSubstr("negative input"));
  absl::StatusOr<ScopedShapedBuffer> again = executable->Run({&good}, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FromDevice(*again).data<float>()[0], 3);
}

TEST(RunAsyncTest, ArgumentErrorsAreReturnedAtOnce) {
  auto executable = CompileText(kGatedDouble);
  ScopedShapedBuffer wrong = ToDevice(R1({1, 2, 3}));
  absl::Status status = executable->RunAsync({&wrong}, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("f32[3]"));
  EXPECT_TRUE(Stream()->BlockHostUntilDone().ok());
}

constexpr char kGatedIncrement[] = R"(
HloModule gated_increment, input_output_alias={ {}: (0, {}) }
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] custom-call(p), custom_call_target="GatedCopy",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED
  one = f32[] constant(1)
  ones = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] add(c, ones)
})";

TEST(RunAsyncTest, DonatedArgumentsBelongToTheRun) {
  auto executable = CompileText(kGatedIncrement);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  const void* address = argument.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  TheGate().Close();
  absl::StatusOr<ExecutionOutput> output = executable->RunAsync(std::move(inputs), {});
  ASSERT_TRUE(output.ok()) << output.status();
  // The caller's handle is invalid at once; the run updates in place.
  EXPECT_TRUE(argument.root_buffer().is_null());
  TheGate().Open();
  ScopedShapedBuffer result = output->ConsumeResult();
  EXPECT_EQ(result.root_buffer().opaque(), address);
  EXPECT_EQ(FromDevice(result), R1({2, 3, 4, 5}));
}

TEST(RunAsyncTest, CopyProtectionGoesThroughTheStream) {
  auto executable = CompileText(kGatedIncrement);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  TheGate().Close();
  ScopedShapedBuffer result = *executable->RunAsync({&argument}, {});
  TheGate().Open();
  EXPECT_NE(result.root_buffer().opaque(), argument.root_buffer().opaque());
  EXPECT_EQ(FromDevice(result), R1({2, 3, 4, 5}));
  EXPECT_EQ(FromDevice(argument), R1({1, 2, 3, 4}));
}

TEST(RunAsyncTest, BuffersAndTheExecutableLiveUntilTheRunIsDone) {
  auto executable = CompileText(kGatedDouble);
  auto argument = std::make_unique<ScopedShapedBuffer>(ToDevice(R1({1, 2, 3, 4})));
  const void* freed = argument->root_buffer().opaque();
  TheGate().Close();
  ScopedShapedBuffer result = *executable->RunAsync({argument.get()}, {});
  // The caller frees the argument and the executable while the run waits:
  // the argument's memory is not handed out again before the run is done.
  argument.reset();
  executable.reset();
  ScopedShapedBuffer unrelated = ToDevice(R1({-1, -1, -1, -1}));
  EXPECT_NE(unrelated.root_buffer().opaque(), freed);
  TheGate().Open();
  EXPECT_EQ(FromDevice(result), R1({2, 4, 6, 8}));
}

// One executable from 8 threads at once; each thread alternates Run and
// RunAsync (reading its async results back through the transfer manager)
// and checks every result.
TEST(RunAsyncTest, OneExecutableFromEightThreadsSyncAndAsync) {
  auto executable = CompileText(R"(
HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  m = f32[64] multiply(p, q)
  ROOT r = f32[64] add(m, p)
})");
  constexpr int kThreads = 8;
  constexpr int kRounds = 6;
  std::vector<absl::Status> outcomes(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<float> p(64), q(64), expected(64);
        for (int i = 0; i < 64; ++i) {
          p[i] = static_cast<float>(t * 100 + round * 10 + i % 7);
          q[i] = static_cast<float>(i % 5 - 2);
          expected[i] = p[i] * q[i] + p[i];
        }
        ScopedShapedBuffer a = ToDevice(R1(p));
        ScopedShapedBuffer b = ToDevice(R1(q));
        bool async = (t + round) % 2 == 1;
        absl::StatusOr<ScopedShapedBuffer> result =
            async ? executable->RunAsync({&a, &b}, {}) : executable->Run({&a, &b}, {});
        absl::StatusOr<Literal> literal =
            result.ok() ? Client()->ShapedBufferToLiteral(*result) : result.status();
        if (!literal.ok()) {
          outcomes[t] = literal.status();
          return;
        }
        if (*literal != R1(expected)) {
          outcomes[t] = absl::InternalError(
              absl::StrCat("thread ", t, " round ", round, async ? " (async)" : " (sync)", ": got ",
                           literal->ToString(), "; expected ", R1(expected).ToString()));
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(outcomes[t].ok()) << outcomes[t];
}

}  // namespace
}  // namespace axle
