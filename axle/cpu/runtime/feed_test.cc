// infeed and outfeed on the cpu platform and the interpreter, through XLA's
// LocalClient::TransferToInfeedLocal / TransferFromOutfeedLocal: tuple
// shapes, a while loop that reads the infeed and writes the outfeed each
// iteration (both platforms give the same bits), the devices of a
// multi-device run each with their own queues, and the errors (a value of
// another shape, an infeed the host never fills).
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "axle/collectives/communicator.h"
#include "axle/core/host_feed.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::ClientFor;
using testing::RunOn;

Literal F32s(std::vector<float> values) {
  Literal literal(ShapeUtil::MakeShape(F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  return literal;
}
Literal S32s(int32_t value) {
  Literal literal(ShapeUtil::MakeShape(S32, {}));
  literal.data<int32_t>()[0] = value;
  return literal;
}

constexpr char kTuple[] = R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = ((f32[2], s32[]), token[]) infeed(t)
  v = (f32[2], s32[]) get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  x = f32[2] get-tuple-element(v), index=0
  n = s32[] get-tuple-element(v), index=1
  c = f32[] convert(n)
  b = f32[2] broadcast(c), dimensions={}
  y = f32[2] multiply(x, b)
  o = (f32[2], s32[]) tuple(y, n)
  t2 = token[] outfeed(o, t1), outfeed_shape=(f32[2], s32[])
  ROOT r = f32[2] negate(y)
})";

// A loop of n = 3 iterations: each reads an f32[2] from the infeed, adds it
// to the sum and outfeeds the running sum.
constexpr char kLoop[] = R"(HloModule m
cond {
  s = (s32[], f32[2], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[2] get-tuple-element(s), index=1
  t = token[] get-tuple-element(s), index=2
  in = (f32[2], token[]) infeed(t)
  x = f32[2] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  h = f32[] constant(0.1)
  hs = f32[2] broadcast(h), dimensions={}
  xs = f32[2] multiply(x, hs)
  sum = f32[2] add(acc, xs)
  t2 = token[] outfeed(sum, t1), outfeed_shape=f32[2]
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[2], token[]) tuple(j, sum, t2)
}
ENTRY e {
  z = s32[] constant(0)
  zero = f32[] constant(0)
  a = f32[2] broadcast(zero), dimensions={}
  t = token[] after-all()
  s = (s32[], f32[2], token[]) tuple(z, a, t)
  w = (s32[], f32[2], token[]) while(s), condition=cond, body=body
  ROOT v = f32[2] get-tuple-element(w), index=1
})";

TEST(Feeds, TupleShapesOnBothPlatforms) {
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    LocalClient* client = ClientFor(platform);
    ASSERT_TRUE(
        client->TransferToInfeedLocal(Literal::MakeTuple({F32s({1.5f, -2.0f}), S32s(3)}), 0).ok());
    absl::StatusOr<Literal> result = RunOn(platform, kTuple, {});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(*result, F32s({-4.5f, 6.0f}));
    Literal out(
        ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {2}), ShapeUtil::MakeShape(S32, {})}));
    absl::Status status = client->TransferFromOutfeedLocal(0, &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(out, Literal::MakeTuple({F32s({4.5f, -6.0f}), S32s(3)}));
  }
}

TEST(Feeds, AWhileLoopReadsTheInfeedEachIteration) {
  std::vector<std::vector<Literal>> outfeeds;
  std::vector<Literal> results;
  outfeeds.reserve(2);
  results.reserve(2);
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    LocalClient* client = ClientFor(platform);
    for (float k : {1.0f, 2.0f, 3.0f}) {
      ASSERT_TRUE(client->TransferToInfeed(F32s({k, 0.3f * k})).ok());
    }
    absl::StatusOr<Literal> result = RunOn(platform, kLoop, {});
    ASSERT_TRUE(result.ok()) << result.status();
    results.push_back(*std::move(result));
    std::vector<Literal>& mine = outfeeds.emplace_back();
    mine.reserve(3);
    const Shape shape = ShapeUtil::MakeShape(F32, {2});
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<Literal> value = client->TransferFromOutfeed(&shape);
      ASSERT_TRUE(value.ok()) << value.status();
      mine.push_back(*std::move(value));
    }
    EXPECT_EQ(mine[2], results.back());
    EXPECT_EQ(HostFeed::Get(HostFeed::Direction::kInfeed, client->platform()->Name(), 0).size(), 0);
  }
  // Bit for bit alike.
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], results[1]);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(outfeeds[0][i], outfeeds[1][i]) << i;
}

TEST(Feeds, EachDeviceOfARunHasItsQueues) {
  constexpr char kText[] = R"(HloModule m, replica_count=2
ENTRY e {
  t = token[] after-all()
  in = (s32[], token[]) infeed(t)
  x = s32[] get-tuple-element(in), index=0
  r = u32[] replica-id()
  c = s32[] convert(r)
  y = s32[] add(x, c)
  t1 = token[] get-tuple-element(in), index=1
  t2 = token[] outfeed(y, t1), outfeed_shape=s32[]
  ROOT s = s32[] multiply(y, y)
})";
  LocalClient* client = ClientFor("cpu");
  auto module = ParseAndReturnUnverifiedModule(kText);
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = client->Compile(*std::move(module), {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_TRUE(client->TransferToInfeedLocal(S32s(10), 0).ok());
  ASSERT_TRUE(client->TransferToInfeedLocal(S32s(20), 1).ok());
  auto communicators = MakeInProcessCommunicators(2, std::chrono::seconds(60));
  std::vector<absl::StatusOr<Literal>> results(2, absl::UnknownError("did not run"));
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int d = 0; d < 2; ++d) {
    threads.emplace_back([&, d] {
      RunParticipant participant;
      participant.replica_count = 2;
      participant.replica_id = d;
      participant.communicator = communicators[d].get();
      ExecutableRunOptions options;
      options.set_participant(participant);
      absl::StatusOr<ScopedShapedBuffer> buffer =
          (*executable)->Run(absl::Span<const ShapedBuffer* const>{}, options);
      results[d] = buffer.ok() ? client->ShapedBufferToLiteral(*buffer)
                               : absl::StatusOr<Literal>(buffer.status());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int d = 0; d < 2; ++d) ASSERT_TRUE(results[d].ok()) << d << ": " << results[d].status();
  EXPECT_EQ(*results[0], S32s(100));
  EXPECT_EQ(*results[1], S32s(21 * 21));
  const Shape shape = ShapeUtil::MakeShape(S32, {});
  EXPECT_EQ(*client->TransferFromOutfeed(&shape, 1), S32s(21));
  EXPECT_EQ(*client->TransferFromOutfeed(&shape, 0), S32s(10));
}

TEST(Feeds, AValueOfAnotherShapeOrNoneIsAnError) {
  constexpr char kText[] = R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[2], token[]) infeed(t)
  ROOT x = f32[2] get-tuple-element(in), index=0
})";
  ::setenv("AXLE_FEED_TIMEOUT", "100", 1);
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    LocalClient* client = ClientFor(platform);
    ASSERT_TRUE(client->TransferToInfeedLocal(S32s(1), 0).ok());
    absl::StatusOr<Literal> wrong = RunOn(platform, kText, {});
    ASSERT_FALSE(wrong.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(wrong.status())) << wrong.status();
    EXPECT_TRUE(absl::StrContains(wrong.status().message(), "holds s32[] where f32[2]"))
        << wrong.status();
    EXPECT_TRUE(absl::StrContains(wrong.status().message(), "infeed")) << wrong.status();
    absl::StatusOr<Literal> none = RunOn(platform, kText, {});
    ASSERT_FALSE(none.ok());
    EXPECT_TRUE(absl::IsDeadlineExceeded(none.status())) << none.status();
    EXPECT_TRUE(absl::StrContains(none.status().message(), "AXLE_FEED_TIMEOUT")) << none.status();
    Literal out(ShapeUtil::MakeShape(F32, {2}));
    EXPECT_TRUE(absl::IsDeadlineExceeded(client->TransferFromOutfeedLocal(0, &out)));
  }
  ::unsetenv("AXLE_FEED_TIMEOUT");
}

}  // namespace
}  // namespace axle
