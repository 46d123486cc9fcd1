//===- participants_test.cc - The interpreter with several participants ----===//
//
// Each collective on a small grid with values worked out by hand, plus the
// failures: a participant at a different collective, a participant that
// fails, a participant that never arrives.
//
//===----------------------------------------------------------------------===//
#include "axle/eval/participants.h"

#include "absl/strings/str_cat.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Runs `text` on every participant; participant i gets parameter 0 =
// f32[4] {4i, 4i+1, 4i+2, 4i+3}.
absl::StatusOr<std::vector<Literal>> RunAll(
    absl::string_view text, int64_t replicas, int64_t partitions = 1,
    std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  int64_t size = replicas * partitions;
  std::vector<Literal> inputs;
  inputs.reserve(size);
  for (int64_t i = 0; i < size; ++i) {
    float base = 4.0f * i;
    inputs.push_back(LiteralUtil::CreateR1<float>({base, base + 1, base + 2, base + 3}));
  }
  std::vector<std::vector<const Literal*>> args(size);
  for (int64_t i = 0; i < size; ++i) {
    if ((*module)->entry_computation()->num_parameters() == 1) args[i] = {&inputs[i]};
  }
  ParticipantsOptions options;
  options.replica_count = replicas;
  options.partition_count = partitions;
  options.timeout = timeout;
  return EvaluateParticipants(**module, args, options);
}

std::vector<float> Values(const Literal& literal) {
  auto data = literal.data<float>();
  return {data.begin(), data.end()};
}

constexpr absl::string_view kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
)";

TEST(Participants, AllReduceInReplicaGroups) {
  auto results = RunAll(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=add
})"),
                        4);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0]), ElementsAre(8, 10, 12, 14));
  EXPECT_THAT(Values((*results)[3]), ElementsAre(16, 18, 20, 22));
}

TEST(Participants, AllGatherReduceScatterAllToAll) {
  auto results = RunAll(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  g = f32[8] all-gather(p), dimensions={0}, replica_groups={{1,0}}
  s = f32[2] reduce-scatter(p), dimensions={0}, replica_groups={}, to_apply=add
  a = f32[4] all-to-all(p), dimensions={0}, replica_groups={{0,1}}
  ROOT t = (f32[8], f32[2], f32[4]) tuple(g, s, a)
})"),
                        2);
  ASSERT_TRUE(results.ok()) << results.status();
  const Literal& r0 = (*results)[0];
  const Literal& r1 = (*results)[1];
  EXPECT_THAT(Values(r0.tuple_element(0)), ElementsAre(4, 5, 6, 7, 0, 1, 2, 3));
  EXPECT_THAT(Values(r0.tuple_element(1)), ElementsAre(4, 6));
  EXPECT_THAT(Values(r1.tuple_element(1)), ElementsAre(8, 10));
  EXPECT_THAT(Values(r0.tuple_element(2)), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(Values(r1.tuple_element(2)), ElementsAre(2, 3, 6, 7));
}

TEST(Participants, PermuteBroadcastAndIds) {
  auto results = RunAll(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  perm = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,2}}
  b = f32[4] collective-broadcast(p), replica_groups={{2,0,1}}
  id = u32[] replica-id()
  ROOT t = (f32[4], f32[4], u32[]) tuple(perm, b, id)
})",
                        3);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0].tuple_element(0)), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values((*results)[2].tuple_element(0)), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(Values((*results)[1].tuple_element(1)), ElementsAre(8, 9, 10, 11));
  EXPECT_EQ((*results)[2].tuple_element(2).data<uint32_t>()[0], 2u);
}

TEST(Participants, AsyncStartDoneForms) {
  auto results = RunAll(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  ars = f32[4] all-reduce-start(p), replica_groups={}, to_apply=add
  ar = f32[4] all-reduce-done(ars)
  ags = (f32[4], f32[8]) all-gather-start(p), dimensions={0}, replica_groups={}
  ag = f32[8] all-gather-done(ags)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cp = f32[4] collective-permute-done(cps)
  ROOT t = (f32[4], f32[8], f32[4]) tuple(ar, ag, cp)
})"),
                        2);
  ASSERT_TRUE(results.ok()) << results.status();
  const Literal& r1 = (*results)[1];
  EXPECT_THAT(Values(r1.tuple_element(0)), ElementsAre(4, 6, 8, 10));
  EXPECT_THAT(Values(r1.tuple_element(1)), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(Values(r1.tuple_element(2)), ElementsAre(0, 1, 2, 3));
}

TEST(Participants, SendRecvFollowSourceTargetPairs) {
  // 0 -> 1 and 1 -> 2 on channel 1; participant 0 receives nothing.
  auto results = RunAll(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  token = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  send = (f32[4], u32[], token[]) send(p, token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=1
  send-done = token[] send-done(send), channel_id=1
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
})",
                        3);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values((*results)[1]), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Values((*results)[2]), ElementsAre(4, 5, 6, 7));
}

TEST(Participants, SendRecvOnAGridOfReplicasAndPartitions) {
  // 2 replicas x 2 partitions: channel 1 names partitions (0 -> 1 in each
  // replica), so device 3 (replica 1, partition 1) gets device 2's data.
  auto results = RunAll(R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[4] parameter(0)
  token = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  send = (f32[4], u32[], token[]) send(p, token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=1
  send-done = token[] send-done(send), channel_id=1
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
})",
                        2, 2);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values((*results)[1]), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Values((*results)[2]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values((*results)[3]), ElementsAre(8, 9, 10, 11));
}

// _xla_send_recv_validation: in a loop of 4 iterations the pair {0,1}
// moves data on the send's executions 1 and 2 only. Each iteration adds
// what arrived (zeros when nothing moves) to an accumulator, so participant
// 1 ends with twice participant 0's data; participant 0 is no target.
TEST(Participants, SendRecvValidationCountsExecutions) {
  auto results = RunAll(R"(HloModule m
body {
  b = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  x = f32[4] get-tuple-element(b), index=1
  acc = f32[4] get-tuple-element(b), index=2
  t0 = token[] after-all()
  r = (f32[4], u32[], token[]) recv(t0), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="{{1,2}}"}
  s = (f32[4], u32[], token[]) send(x, t0), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="{{1,2}}"}
  rd = (f32[4], token[]) recv-done(r), channel_id=1
  sd = token[] send-done(s), channel_id=1
  d = f32[4] get-tuple-element(rd), index=0
  sum = f32[4] add(acc, d)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT o = (s32[], f32[4], f32[4]) tuple(n, x, sum)
}
cond {
  c = (s32[], f32[4], f32[4]) parameter(0)
  k = s32[] get-tuple-element(c), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(k, four), direction=LT
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  zeros = f32[4] broadcast(z), dimensions={}
  init = (s32[], f32[4], f32[4]) tuple(zero, p, zeros)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT acc = f32[4] get-tuple-element(w), index=2
})",
                        2);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values((*results)[1]), ElementsAre(0, 2, 4, 6));
}

TEST(Participants, SendRecvValidationOfTheWrongLengthIsAnError) {
  auto results = RunAll(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  token = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="{{0,1},{2,3}}"}
  send = (f32[4], u32[], token[]) send(p, token), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="{{0,1},{2,3}}"}
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=1
  send-done = token[] send-done(send), channel_id=1
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
})",
                        2);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(), HasSubstr("2 ranges for 1 source-target pairs"));
}

TEST(Participants, InPlacePermuteWritesSlicesIntoTheOutput) {
  // Replica i sends elements [1, 3) of its input to replica i + 1, which
  // writes them at [2, 4) of an output of -1s; replica 0 keeps its -1s.
  auto results = RunAll(R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[4] parameter(0)
  m = f32[] constant(-1)
  out = f32[4] broadcast(m), dimensions={}
  one = s32[] constant(1)
  two = s32[] constant(2)
  i = (s32[]) tuple(one)
  o = (s32[]) tuple(two)
  ROOT cp = f32[4] collective-permute(p, out, i, o), source_target_pairs={{0,1},{1,2}}, slice_sizes={{2}}
})",
                        3);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0]), ElementsAre(-1, -1, -1, -1));
  EXPECT_THAT(Values((*results)[1]), ElementsAre(-1, -1, 1, 2));
  EXPECT_THAT(Values((*results)[2]), ElementsAre(-1, -1, 5, 6));
}

TEST(Participants, InPlacePermuteOnOneDevice) {
  auto module = ParseAndReturnUnverifiedModule(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  out = f32[4] broadcast(z), dimensions={}
  zero = s32[] constant(0)
  nine = s32[] constant(9)
  i = (s32[]) tuple(zero)
  o = (s32[]) tuple(nine)
  ROOT cp = f32[4] collective-permute(p, out, i, o), source_target_pairs={{0,0}}, slice_sizes={{3}}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  Literal input = LiteralUtil::CreateR1<float>({1, 2, 3, 4});
  HloEvaluator evaluator;
  const Literal* args[] = {&input};
  absl::StatusOr<Literal> result = evaluator.Evaluate(**module, args);
  ASSERT_TRUE(result.ok()) << result.status();
  // The output start 9 clamps to 1.
  EXPECT_THAT(Values(*result), ElementsAre(0, 1, 2, 3));
}

TEST(Participants, CrossPartitionWithGlobalIds) {
  // 2 replicas x 2 partitions; flattened ids {0,3} and {1,2}.
  auto results = RunAll(absl::StrCat("HloModule m, replica_count=2, num_partitions=2\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  r = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  pid = u32[] partition-id()
  ROOT t = (f32[4], u32[]) tuple(r, pid)
})"),
                        2, 2);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Values((*results)[0].tuple_element(0)), ElementsAre(12, 14, 16, 18));
  EXPECT_THAT(Values((*results)[2].tuple_element(0)), ElementsAre(12, 14, 16, 18));
  EXPECT_EQ((*results)[3].tuple_element(1).data<uint32_t>()[0], 1u);
}

// Replica 1 takes the other branch, with another all-reduce.
constexpr absl::string_view kDiverging = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
one {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add
}
other {
  p = f32[4] parameter(0)
  s = f32[2] slice(p), slice={[0:2]}
  r = f32[2] all-reduce(s), replica_groups={}, to_apply=add
  ROOT c = f32[4] concatenate(r, r), dimensions={0}
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[4] conditional(first, p, p), true_computation=one, false_computation=other
})";

TEST(Participants, DifferentCollectivesAreReported) {
  auto results = RunAll(kDiverging, 2);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()),
              HasSubstr("at a different collective or operand shapes"));
}

TEST(Participants, AParticipantThatNeverArrivesTimesOut) {
  auto results = RunAll(absl::StrCat("HloModule m\n", kAdd, R"(
skip {
  ROOT p = f32[4] parameter(0)
}
reduce {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[4] conditional(first, p, p), true_computation=reduce, false_computation=skip
})"),
                        2, 1, std::chrono::milliseconds(300));
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kDeadlineExceeded) << results.status();
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("participant 0"));
}

TEST(Participants, BadGroupsNameTheOp) {
  auto results = RunAll(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
})"),
                        3);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("r (all-reduce)"));
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("in no replica group"));
}

}  // namespace
}  // namespace axle
