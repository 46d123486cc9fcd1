// The single-device ops on the `cpu` platform: replica-id / partition-id,
// every collective and its -start/-done forms, ragged-all-to-all (several
// updates, rows out of range), copy-start/-done, async wrappers, topk (ties,
// NaN of both signs, -0), tuple constants, optimization-barrier and domain.
// Results equal the interpreter's bit for bit and, where easy to state, the
// values worked out by hand; a module of several devices compiles and, run
// without a communicator, fails saying so (multi_device_test.cc runs them). The passes alone are
// tested in axle/hlo/transforms.
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::RunOn;

// Runs `text` on cpu and on the interpreter; both must succeed and agree
// bit for bit. Returns the cpu result.
Literal RunBoth(absl::string_view text, const std::vector<Literal>& arguments = {}) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    EXPECT_EQ(*cpu, *reference) << *cpu << "\nvs\n" << *reference;
  }
  return std::move(*cpu);
}

// The cpu compile fails with Unimplemented naming `op` and saying `what`.
void ExpectUnimplemented(absl::string_view text, absl::string_view op, absl::string_view what) {
  auto compiled = CompileOn("cpu", text);
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::IsUnimplemented(compiled.status())) << compiled.status();
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), op)) << compiled.status();
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), what)) << compiled.status();
}

TEST(CpuCollectives, ReplicaIdAndPartitionIdAreZero) {
  Literal result = RunBoth(R"(
HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ten = u32[] constant(10)
  ROOT t = (u32[], u32[], u32[]) tuple(add(r, ten), p, r)
})");
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<uint32_t>(10),
                                            LiteralUtil::CreateR0<uint32_t>(0),
                                            LiteralUtil::CreateR0<uint32_t>(0)}));
}

TEST(CpuCollectives, AllReduceGivesItsOperandsBack) {
  Literal result =
      RunBoth(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p0 = f32[3] parameter(0)
  p1 = f32[2] parameter(1)
  one = f32[3] all-reduce(p0), replica_groups={}, to_apply=add
  two = (f32[3], f32[2]) all-reduce(p0, p1), replica_groups={{0}}, to_apply=add
  b = f32[2] get-tuple-element(two), index=1
  ROOT t = (f32[3], f32[2]) tuple(one, multiply(b, b))
})",
              {LiteralUtil::CreateR1<float>({1, 2, 3}), LiteralUtil::CreateR1<float>({-2, 5})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({1, 2, 3}),
                                            LiteralUtil::CreateR1<float>({4, 25})}));
}

TEST(CpuCollectives, GatherScatterAllToAllBroadcastOfOneParticipant) {
  Literal result = RunBoth(R"(
HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT a = s32[] add(x, y)
}
ENTRY e {
  p = s32[2,3] parameter(0)
  ag = s32[2,3] all-gather(p), dimensions={1}, replica_groups={{0}}
  rs = s32[2,3] reduce-scatter(ag), dimensions={0}, replica_groups={}, to_apply=add
  a2a = s32[2,3] all-to-all(rs), dimensions={0}
  a2a_tuple = (s32[2,3], s32[2,3]) all-to-all(a2a, p)
  x = s32[2,3] get-tuple-element(a2a_tuple), index=0
  y = s32[2,3] get-tuple-element(a2a_tuple), index=1
  cb = s32[2,3] collective-broadcast(x), replica_groups={{0}}
  ROOT sum = s32[2,3] add(cb, y)
})",
                           {LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}})});
  EXPECT_EQ(result, LiteralUtil::CreateR2<int32_t>({{2, 4, 6}, {8, 10, 12}}));
}

TEST(CpuCollectives, CollectivePermuteCopiesOnlyASelfPair) {
  Literal result = RunBoth(R"(
HloModule m
ENTRY e {
  p = u16[3] parameter(0)
  self = u16[3] collective-permute(p), source_target_pairs={{0,0}}
  away = u16[3] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  start = (u16[3], u16[3], u32[], u32[]) collective-permute-start(p),
      source_target_pairs={{1,2},{0,0}}
  done = u16[3] collective-permute-done(start)
  ROOT t = (u16[3], u16[3], u16[3]) tuple(self, away, done)
})",
                           {LiteralUtil::CreateR1<uint16_t>({7, 8, 9})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR1<uint16_t>({7, 8, 9}),
                                            LiteralUtil::CreateR1<uint16_t>({0, 0, 0}),
                                            LiteralUtil::CreateR1<uint16_t>({7, 8, 9})}));
}

TEST(CpuCollectives, StartDoneForms) {
  Literal result = RunBoth(R"(
HloModule m
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT a = u32[] add(x, y)
}
ENTRY e {
  id = u32[] replica-id()
  p = u32[4] parameter(0)
  ars = (u32[], u32[4]) all-reduce-start(id, p), to_apply=add
  ard = (u32[], u32[4]) all-reduce-done(ars)
  x = u32[4] get-tuple-element(ard), index=1
  ags = (u32[4], u32[4]) all-gather-start(x), dimensions={0}
  agd = u32[4] all-gather-done(ags)
  r = u32[] get-tuple-element(ard), index=0
  ROOT t = (u32[], u32[2,2]) tuple(r, u32[2,2] reshape(agd))
})",
                           {LiteralUtil::CreateR1<uint32_t>({1, 2, 3, 4})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<uint32_t>(0),
                                            LiteralUtil::CreateR2<uint32_t>({{1, 2}, {3, 4}})}));
}

TEST(CpuCollectives, AsyncStartRunsTheWrappedComputation) {
  Literal result = RunBoth(
      R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
wrapped {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] all-reduce(a), replica_groups={}, to_apply=add
  ROOT m = f32[4] multiply(s, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  start = ((f32[4], f32[4]), f32[4], s32[]) async-start(p, q), calls=wrapped
  update = ((f32[4], f32[4]), f32[4], s32[]) async-update(start), calls=wrapped
  ROOT done = f32[4] async-done(update), calls=wrapped
})",
      {LiteralUtil::CreateR1<float>({1, 2, 3, 4}), LiteralUtil::CreateR1<float>({2, 2, -1, 0.5f})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({2, 4, -3, 2}));
}

TEST(CpuCollectives, CollectivesInsideAWhileBody) {
  Literal result = RunBoth(R"(
HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT a = s32[] add(x, y)
}
cond {
  s = (s32[], s32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}
body {
  s = (s32[], s32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = s32[2] get-tuple-element(s), index=1
  r = s32[2] all-reduce(v), to_apply=add
  id = u32[] replica-id()
  one = s32[] add(s32[] convert(id), s32[] constant(1))
  ROOT n = (s32[], s32[2]) tuple(add(i, one), add(r, r))
}
ENTRY e {
  p = s32[2] parameter(0)
  init = (s32[], s32[2]) tuple(s32[] constant(0), p)
  w = (s32[], s32[2]) while(init), condition=cond, body=body
  ROOT v = s32[2] get-tuple-element(w), index=1
})",
                           {LiteralUtil::CreateR1<int32_t>({1, -3})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<int32_t>({8, -24}));
}

// A module of several devices compiles (its collectives become thunks that
// run through the run's communicator: multi_device_test.cc); run alone,
// without one, it fails saying so.
void ExpectNeedsCommunicator(absl::string_view text, absl::string_view op) {
  auto compiled = CompileOn("cpu", text);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<Literal> result = RunOn("cpu", text, {LiteralUtil::CreateR1<float>({1, 2, 3})});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "no communicator")) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), op)) << result.status();
}

TEST(CpuCollectives, SeveralDevicesNeedACommunicator) {
  ExpectNeedsCommunicator(R"(
HloModule m, replica_count=2
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = u32[] replica-id()
})",
                          "r is a collective of a module compiled for 2 replicas x 1");
  ExpectNeedsCommunicator(R"(
HloModule m, num_partitions=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}},
      use_global_device_ids=true, to_apply=add
})",
                          "1 replicas x 4 partitions");
  // The shapes say there are two participants.
  ExpectUnimplemented(R"(
HloModule m
ENTRY e {
  p = u32[1,2] parameter(0)
  ROOT g = u32[2,2] all-gather(p), dimensions={0}
})",
                      "all-gather", "more than one participant");
}

TEST(CpuCollectives, CopyDoneIsTheCopiedValue) {
  Literal result = RunBoth(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  s = (f32[4], f32[4], u32[]) copy-start(n), cross_program_prefetch_index=0
  d = f32[4] copy-done(s)
  ROOT t = (f32[4], f32[4]) tuple(d, add(d, p))
})",
                           {LiteralUtil::CreateR1<float>({1.5f, -2, 0, 7})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({-1.5f, 2, -0.0f, -7}),
                                            LiteralUtil::CreateR1<float>({0, 0, 0, 0})}));
}

TEST(CpuCollectives, CopyStartDoneInsideAWhileBody) {
  Literal result = RunBoth(R"(
HloModule m
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT c = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  cs = (f32[3], f32[3], u32[]) copy-start(v)
  cd = f32[3] copy-done(cs)
  one = s32[] constant(1)
  ROOT t = (s32[], f32[3]) tuple(add(i, one), add(cd, v))
}
ENTRY e {
  p = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, p)
  w = (s32[], f32[3]) while(init), condition=cond, body=body
  ROOT r = f32[3] get-tuple-element(w), index=1
})",
                           {LiteralUtil::CreateR1<float>({1, -2, 0.25f})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({8, -16, 2}));
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes) with offsets and sizes given as parameters.
constexpr const char* kRaggedAllToAll = R"(
HloModule m
ENTRY e {
  x = f32[6,2] parameter(0)
  o = f32[5,2] parameter(1)
  io = $T[$K] parameter(2)
  ss = $T[$K] parameter(3)
  oo = $T[$K] parameter(4)
  rs = $T[$K] parameter(5)
  ROOT r = f32[5,2] ragged-all-to-all(x, o, io, ss, oo, rs), replica_groups={{0}}
})";

std::string RaggedModule(absl::string_view type, int64_t updates) {
  return absl::StrReplaceAll(kRaggedAllToAll, {{"$T", type}, {"$K", absl::StrCat(updates)}});
}

Literal RaggedInput() {
  return LiteralUtil::CreateR2<float>({{0, 1}, {10, 11}, {20, 21}, {30, 31}, {40, 41}, {50, 51}});
}
Literal RaggedOutput() {
  return LiteralUtil::CreateR2<float>({{-1, -1}, {-2, -2}, {-3, -3}, {-4, -4}, {-5, -5}});
}

TEST(CpuRaggedAllToAll, OneUpdateCopiesRowsIntoTheOutput) {
  // Rows 1..3 of the input go to rows 2..4 of the output.
  Literal result =
      RunBoth(RaggedModule("s64", 1),
              {RaggedInput(), RaggedOutput(), LiteralUtil::CreateR1<int64_t>({1}),
               LiteralUtil::CreateR1<int64_t>({3}), LiteralUtil::CreateR1<int64_t>({2}),
               LiteralUtil::CreateR1<int64_t>({3})});
  EXPECT_EQ(result,
            LiteralUtil::CreateR2<float>({{-1, -1}, {-2, -2}, {10, 11}, {20, 21}, {30, 31}}));
}

TEST(CpuRaggedAllToAll, SeveralUpdatesInOrderEmptyAndOutOfRangeRows) {
  // Update 0: input rows 4,5 -> output 0,1. Update 1: nothing (size 0).
  // Update 2: input rows 0..2 -> output 1..3, overwriting row 1. Update 3:
  // input rows 4..7 -> output 3..6: only input rows 4,5 -> output 3,4 exist.
  // Update 4: input rows -2..0 -> output 0..2: only input 0 -> output 2.
  Literal result =
      RunBoth(RaggedModule("s32", 5),
              {RaggedInput(), RaggedOutput(), LiteralUtil::CreateR1<int32_t>({4, 3, 0, 4, -2}),
               LiteralUtil::CreateR1<int32_t>({2, 0, 3, 4, 3}),
               LiteralUtil::CreateR1<int32_t>({0, 0, 1, 3, 0}),
               LiteralUtil::CreateR1<int32_t>({2, 0, 3, 4, 3})});
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>({{40, 41}, {0, 1}, {0, 1}, {40, 41}, {50, 51}}));
}

TEST(CpuRaggedAllToAll, FarOutOfRangeOffsetsAndInt64Limits) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  // Updates 0-4 touch no row (offsets far out, or at the int64 limits);
  // update 5, of a huge size from input row -1, copies input rows 0..3 to
  // output rows 1..4.
  Literal result = RunBoth(
      RaggedModule("s64", 6),
      {RaggedInput(), RaggedOutput(), LiteralUtil::CreateR1<int64_t>({100, 0, kMax, kMin, 0, -1}),
       LiteralUtil::CreateR1<int64_t>({3, 2, kMax, kMax, kMax, kMax}),
       LiteralUtil::CreateR1<int64_t>({0, -50, -1, 0, kMin, 0}),
       LiteralUtil::CreateR1<int64_t>({3, 2, 1, 1, 1, 1})});
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>({{-1, -1}, {0, 1}, {10, 11}, {20, 21}, {30, 31}}));
}

TEST(CpuRaggedAllToAll, SeveralParticipantsNeedACommunicator) {
  auto compiled = CompileOn("cpu", R"(
HloModule m, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  o = f32[4] parameter(1)
  a = s64[2] constant({0, 2})
  n = s64[2] constant({2, 2})
  ROOT r = f32[4] ragged-all-to-all(x, o, a, n, a, n), replica_groups={{0,1}}
})");
  EXPECT_TRUE(compiled.ok()) << compiled.status();
}

TEST(CpuCollectives, GroupsOfOneRunOnAMultiReplicaModule) {
  Literal result = RunBoth(R"(
HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups={{0},{1}}, to_apply=add
})",
                           {LiteralUtil::CreateR1<float>({1.5f, -2})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({1.5f, -2}));
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CpuTopK, LargestWithTiesNaNsAndSignedZeros) {
  Literal result =
      RunBoth(R"(
HloModule m
ENTRY e {
  x = f32[2,10] parameter(0)
  ROOT t = (f32[2,6], s32[2,6]) topk(x), k=6, largest=true
})",
              {LiteralUtil::CreateR2<float>({{1, kNaN, -kInf, 3, -0.0f, 3, 0.0f, -kNaN, kInf, 1},
                                             {5, 4, 3, 2, 1, 0, -1, -2, -3, -4}})});
  // NaNs (either sign) first, in index order; ties keep the lower index.
  EXPECT_EQ(result.tuple_element(1),
            LiteralUtil::CreateR2<int32_t>({{1, 7, 8, 3, 5, 0}, {0, 1, 2, 3, 4, 5}}));
}

TEST(CpuTopK, SmallestPutsNaNsLastAndNegativeZeroBeforePositive) {
  Literal result =
      RunBoth(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT t = (f32[8], s32[8]) topk(x), k=8, largest=false
})",
              {LiteralUtil::CreateR1<float>({0.0f, kNaN, -0.0f, 2, -kNaN, -kInf, 2, 0.0f})});
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({5, 2, 0, 7, 3, 6, 1, 4}));
}

TEST(CpuTopK, IntegersAndBf16AndHigherRank) {
  Literal ints = RunBoth(R"(
HloModule m
ENTRY e {
  x = u8[2,2,5] parameter(0)
  ROOT t = (u8[2,2,2], s32[2,2,2]) topk(x), k=2, largest=true
})",
                         {LiteralUtil::CreateR1<uint8_t>(
                              {200, 3, 255, 255, 0, 1, 1, 1, 1, 1, 9, 8, 7, 6, 5, 0, 0, 0, 0, 250})
                              .Reshape({2, 2, 5})
                              .value()});
  EXPECT_EQ(ints.tuple_element(1),
            LiteralUtil::CreateR1<int32_t>({2, 3, 0, 1, 0, 1, 4, 0}).Reshape({2, 2, 2}).value());
  RunBoth(R"(
HloModule m
ENTRY e {
  p = f32[4,6] parameter(0)
  x = bf16[4,6] convert(p)
  ROOT t = (bf16[4,3], s32[4,3]) topk(x), k=3, largest=false
})",
          {LiteralUtil::CreateR2<float>({{1, 2, 3, 4, 5, 6},
                                         {6, 5, 4, 3, 2, 1},
                                         {1.001f, 1.002f, 1, kNaN, -1, -1},
                                         {0, 0, 0, 0, 0, 0}})});
}

TEST(CpuTopK, NarrowFloatsThroughASort) {
  const Literal x =
      LiteralUtil::CreateR2<float>({{1, kNaN, -kInf, 3, -0.0f, 3, 0.0f, -kNaN, kInf, 1},
                                    {0.5f, 0.25f, 8, 8, -8, 1, 2, 3, 4, 5}});
  for (absl::string_view type : {"f8e5m2", "f8e4m3fn"}) {
    for (absl::string_view largest : {"true", "false"}) {
      std::string text = absl::StrCat(R"(
HloModule m
ENTRY e {
  p = f32[2,10] parameter(0)
  x = TYPE[2,10] convert(p)
  ROOT t = (TYPE[2,4], s32[2,4]) topk(x), k=4, largest=)",
                                      largest, "\n}");
      absl::StrReplaceAll({{"TYPE", type}}, &text);
      RunBoth(text, {x.Clone()});
    }
  }
}

TEST(CpuTopK, ComplexIsUnimplemented) {
  ExpectUnimplemented(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT t = (c64[2], s32[2]) topk(x), k=2, largest=true
})",
                      "topk", "complex numbers have no order");
}

TEST(CpuPlumbing, TupleConstantsOptimizationBarrierAndDomain) {
  Literal result = RunBoth(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c = (f32[2], (s32[], f32[2])) constant(({1, 2}, (7, {10, 20})))
  b = (f32[2], (s32[], f32[2])) opt-barrier(c)
  inner = (s32[], f32[2]) get-tuple-element(b), index=1
  v = f32[2] get-tuple-element(inner), index=1
  d = f32[2] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  c0 = f32[2] get-tuple-element(c), index=0
  ROOT t = (f32[2], (s32[], f32[2]), f32[2]) tuple(add(v, d), inner, c0)
})",
                           {LiteralUtil::CreateR1<float>({0.5f, -1})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple(
                        {LiteralUtil::CreateR1<float>({10.5f, 19}),
                         LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(7),
                                                 LiteralUtil::CreateR1<float>({10, 20})}),
                         LiteralUtil::CreateR1<float>({1, 2})}));
}

TEST(CpuPlumbing, TupleConstantAsWhileState) {
  Literal result = RunBoth(R"(
HloModule m
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(4)), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  ROOT n = (s32[], f32[3]) tuple(add(i, s32[] constant(1)), add(v, v))
}
ENTRY e {
  init = (s32[], f32[3]) constant((0, {1, -2, 0.25}))
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body
})");
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(4),
                                            LiteralUtil::CreateR1<float>({16, -32, 4})}));
}

}  // namespace
}  // namespace axle
