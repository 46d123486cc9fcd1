// The cpu platform's collectives among several devices (collective_thunk.cc):
// each device a thread of this process running the compiled executable with
// its place in the grid and an in-process communicator in its run options.
// Every result must equal the interpreter's multi-participant mode
// (axle/eval/participants.h) bit for bit: reductions with one op and with a
// computation, bf16 sums computed in f32 (XLA:CPU's promotion), odd element counts, tuples,
// dimensions other than the major one, iota groups, partitions, the -start/-done forms, collectives
// inside a while body; and a run without a communicator, or with another grid, fails saying so.
#include <vector>

#include "absl/strings/match.h"
#include "axle/collectives/communicator.h"
#include "axle/cpu/runtime/multi_device_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::RunBoth;
using testing::RunOnCpuDevices;

// args[d] = {f32 values 0.1 * (d + 1) * (i + 1) + d, ...} of `shape`'s
// element count, for `devices` devices.
std::vector<std::vector<Literal>> FloatArgs(int devices, const std::vector<int64_t>& dims) {
  std::vector<std::vector<Literal>> args(devices);
  for (int d = 0; d < devices; ++d) {
    Literal literal(ShapeUtil::MakeShape(F32, dims));
    auto data = literal.data<float>();
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = 0.1f * static_cast<float>((d + 1) * (i + 1)) + static_cast<float>(d) / 3.0f;
    }
    args[d].push_back(std::move(literal));
  }
  return args;
}

constexpr char kAdd[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
)";

TEST(CpuMultiDevice, AllReduceSumInGroupsAndIotaGroups) {
  std::vector<Literal> result = RunBoth(absl::StrCat("HloModule m, replica_count=4\n", kAdd, R"(
ENTRY e {
  p = f32[7] parameter(0)
  a = f32[7] all-reduce(p), replica_groups={{0,2},{3,1}}, to_apply=add
  b = f32[7] all-reduce(p), replica_groups=[1,4]<=[4], to_apply=add
  ROOT t = (f32[7], f32[7]) tuple(a, b)
})"),
                                        FloatArgs(4, {7}));
  ASSERT_EQ(result.size(), 4u);
  EXPECT_EQ(result[0].tuple_element(0), result[2].tuple_element(0));
  EXPECT_EQ(result[0].tuple_element(1), result[3].tuple_element(1));
}

TEST(CpuMultiDevice, AllReduceKindsTuplesAndAComputation) {
  RunBoth(R"(HloModule m, replica_count=3
mx {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT m = s32[] maximum(y, x)
}
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  s = f32[] multiply(x, y)
  ROOT a = f32[] add(s, x)
}
ENTRY e {
  p = f32[5,2] parameter(0)
  i = s32[5,2] convert(p)
  t = (s32[5,2], s32[5,2]) all-reduce(i, i), replica_groups={}, to_apply=mx
  c = f32[5,2] all-reduce(p), replica_groups={}, to_apply=f
  t0 = s32[5,2] get-tuple-element(t), index=0
  ROOT r = (s32[5,2], f32[5,2]) tuple(t0, c)
})",
          FloatArgs(3, {5, 2}));
  // bf16 sums go through the compiled computation.
  RunBoth(R"(HloModule m, replica_count=2
addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT a = bf16[] add(x, y)
}
ENTRY e {
  p = f32[9] parameter(0)
  b = bf16[9] convert(p)
  ROOT r = bf16[9] all-reduce(b), replica_groups={}, to_apply=addb
})",
          FloatArgs(2, {9}));
}

// XLA:CPU promotes bf16 all-reduce and reduce-scatter to f32
// (all_reduce_promotion.h): 256 + 1 + 1 + 1 over 4 devices rounds once, to
// 260, where a bf16 fold stays at 256; groups of one keep their value.
TEST(CpuMultiDevice, Bf16SumsRoundOnce) {
  std::vector<std::vector<Literal>> args(4);
  for (int d = 0; d < 4; ++d) {
    args[d].push_back(LiteralUtil::CreateR1<float>(std::vector<float>(4, d == 0 ? 256.0f : 1.0f)));
  }
  std::vector<Literal> results = RunBoth(R"(HloModule m, replica_count=4
addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT a = bf16[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  b = bf16[4] convert(p)
  a = bf16[4] all-reduce(b), replica_groups={}, to_apply=addb
  s = bf16[1] reduce-scatter(b), replica_groups={}, dimensions={0}, to_apply=addb
  o = bf16[4] all-reduce(b), replica_groups={{0},{1},{2},{3}}, to_apply=addb
  wa = f32[4] convert(a)
  ws = f32[1] convert(s)
  wo = f32[4] convert(o)
  ROOT t = (f32[4], f32[1], f32[4]) tuple(wa, ws, wo)
})",
                                         args);
  ASSERT_EQ(results.size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(results[d].tuple_element(0), LiteralUtil::CreateR1<float>({260, 260, 260, 260}));
    EXPECT_EQ(results[d].tuple_element(1), LiteralUtil::CreateR1<float>({260}));
    EXPECT_EQ(results[d].tuple_element(2),
              LiteralUtil::CreateR1<float>(std::vector<float>(4, d == 0 ? 256.0f : 1.0f)));
  }
}

TEST(CpuMultiDevice, GatherScatterAllToAllAlongInnerDimensions) {
  RunBoth(absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
ENTRY e {
  p = f32[3,4] parameter(0)
  g0 = f32[6,4] all-gather(p), dimensions={0}, replica_groups={}
  g1 = f32[3,8] all-gather(p), dimensions={1}, replica_groups={}
  s0 = f32[3,2] reduce-scatter(p), dimensions={1}, replica_groups={}, to_apply=add
  a1 = f32[3,4] all-to-all(p), dimensions={1}, replica_groups={}
  q = f32[4,3] reshape(p)
  a0 = f32[4,3] all-to-all(q), dimensions={0}, replica_groups={{1,0}}
  ROOT t = (f32[6,4], f32[3,8], f32[3,2], f32[3,4], f32[4,3]) tuple(g0, g1, s0, a1, a0)
})"),
          FloatArgs(2, {3, 4}));
  RunBoth(absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
ENTRY e {
  p = f32[8] parameter(0)
  s = f32[4] reduce-scatter(p), dimensions={0}, replica_groups={}, to_apply=add
  x = f32[8] negate(p)
  a = (f32[8], f32[8]) all-to-all(p, x), replica_groups={}
  b = f32[8] collective-broadcast(p), replica_groups={{1,0}}
  ROOT t = (f32[4], (f32[8], f32[8]), f32[8]) tuple(s, a, b)
})"),
          FloatArgs(2, {8}));
}

TEST(CpuMultiDevice, PermuteIdsAndPartitions) {
  RunBoth(absl::StrCat("HloModule m, replica_count=2, num_partitions=2\n", kAdd, R"(
ENTRY e {
  p = f32[3] parameter(0)
  r = u32[] replica-id()
  q = u32[] partition-id()
  c = f32[3] collective-permute(p), source_target_pairs={{0,1}}
  d = f32[3] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
  s = f32[3] all-reduce(p), channel_id=2, replica_groups={{0,3},{2,1}}, use_global_device_ids=true,
      to_apply=add
  u = f32[3] all-reduce(p), channel_id=3, replica_groups={{0,1}}, to_apply=add
  o = f32[3] all-reduce(p), channel_id=4, replica_groups={{0},{1}}, to_apply=add
  ROOT t = (u32[], u32[], f32[3], f32[3], f32[3], f32[3], f32[3]) tuple(r, q, c, d, s, u, o)
})"),
          FloatArgs(4, {3}));
}

// collective-permute's in-place form: one buffer with a run per offset
// (offsets computed from the device's id, clamped past the end), a tuple
// of buffers, partitions with a channel, the -start form.
TEST(CpuMultiDevice, InPlacePermute) {
  std::vector<Literal> result = RunBoth(R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[2,4] parameter(0)
  z = f32[] constant(-1)
  out = f32[5,4] broadcast(z), dimensions={}
  r = u32[] replica-id()
  rs = s32[] convert(r)
  c0 = s32[] constant(0)
  c1 = s32[] constant(1)
  c9 = s32[] constant(9)
  i0 = (s32[], s32[]) tuple(c0, c0)
  i1 = (s32[], s32[]) tuple(c1, c0)
  o0 = (s32[], s32[]) tuple(rs, c0)
  o1 = (s32[], s32[]) tuple(c9, c0)
  in_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(i0, i1)
  out_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(o0, o1)
  ROOT cp = f32[5,4] collective-permute(p, out, in_offsets, out_offsets), source_target_pairs={{0,1},{1,2},{2,0},{1,0},{2,1},{0,2}}, slice_sizes={{1,4},{1,4}}
})",
                                        FloatArgs(3, {2, 4}));
  ASSERT_EQ(result.size(), 3u);
  // Device 1 got device 0's row 0 at its row 1 (its replica id).
  EXPECT_EQ(result[1].data<float>()[4], 0.1f);
  EXPECT_EQ(result[1].data<float>()[0], -1.0f);
}

TEST(CpuMultiDevice, InPlacePermuteTuplesPartitionsAndStart) {
  RunBoth(R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[2,3] parameter(0)
  n = f32[2,3] negate(p)
  z = f32[] constant(0)
  big = f32[4,3] broadcast(z), dimensions={}
  input = (f32[2,3], f32[2,3]) tuple(p, n)
  output = (f32[2,3], f32[4,3]) tuple(n, big)
  c0 = u32[] constant(0)
  c2 = u32[] constant(2)
  i0 = (u32[], u32[]) tuple(c0, c0)
  i2 = (u32[], u32[]) tuple(c2, c0)
  in_offsets = ((u32[], u32[]), (u32[], u32[])) tuple(i0, i0)
  out_offsets = ((u32[], u32[]), (u32[], u32[])) tuple(i0, i2)
  a = (f32[2,3], f32[4,3]) collective-permute(input, output, in_offsets, out_offsets), channel_id=1, source_target_pairs={{0,1},{1,0}}, slice_sizes={{1,3},{2,3}}
  s = ((f32[2,3], f32[2,3]), (f32[2,3], f32[4,3]), u32[], u32[]) collective-permute-start(input, output, in_offsets, out_offsets), source_target_pairs={{1,0}}, slice_sizes={{2,3},{2,3}}
  d = (f32[2,3], f32[4,3]) collective-permute-done(s)
  ROOT t = ((f32[2,3], f32[4,3]), (f32[2,3], f32[4,3])) tuple(a, d)
})",
          FloatArgs(4, {2, 3}));
}

// On one device the in-place form is a dynamic-slice and a
// dynamic-update-slice per run holding {0,0} (single-device-collectives).
TEST(CpuMultiDevice, InPlacePermuteOnOneDevice) {
  constexpr char kText[] = R"(HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  z = f32[] constant(-1)
  out = f32[5,4] broadcast(z), dimensions={}
  c0 = s32[] constant(0)
  c1 = s32[] constant(1)
  c7 = s32[] constant(7)
  i0 = (s32[], s32[]) tuple(c1, c0)
  i1 = (s32[], s32[]) tuple(c0, c1)
  o0 = (s32[], s32[]) tuple(c7, c0)
  o1 = (s32[], s32[]) tuple(c0, c0)
  in_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(i0, i1)
  out_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(o0, o1)
  a = f32[5,4] collective-permute(p, out, in_offsets, out_offsets), source_target_pairs={{0,0},{0,0}}, slice_sizes={{2,4},{1,3}}
  s = (f32[3,4], f32[5,4], u32[], u32[]) collective-permute-start(p, out, in_offsets, out_offsets), source_target_pairs={{0,0},{0,0}}, slice_sizes={{2,4},{1,3}}
  d = f32[5,4] collective-permute-done(s)
  ROOT t = (f32[5,4], f32[5,4]) tuple(a, d)
})";
  std::vector<std::vector<Literal>> args = FloatArgs(1, {3, 4});
  absl::StatusOr<Literal> cpu = testing::RunOn("cpu", kText, args[0]);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<Literal> reference = testing::RunOn("interpreter", kText, args[0]);
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(*cpu, *reference);
  // Rows 3-4 (the start 7 clamped) are input rows 1-2; row 0 starts with
  // input row 0, columns 1-3.
  EXPECT_EQ(cpu->tuple_element(0).data<float>()[12], args[0][0].data<float>()[4]);
  EXPECT_EQ(cpu->tuple_element(0).data<float>()[0], args[0][0].data<float>()[1]);
}

TEST(CpuMultiDevice, StartDoneFormsAndAWhileBody) {
  RunBoth(absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
ENTRY e {
  p = f32[4] parameter(0)
  rs = f32[4] all-reduce-start(p), replica_groups={}, to_apply=add
  rd = f32[4] all-reduce-done(rs)
  gs = (f32[4], f32[8]) all-gather-start(p), dimensions={0}, replica_groups={}
  gd = f32[8] all-gather-done(gs)
  cs = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cd = f32[4] collective-permute-done(cs)
  ROOT t = (f32[4], f32[8], f32[4]) tuple(rd, gd, cd)
})"),
          FloatArgs(2, {4}));
  RunBoth(absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[4] all-reduce(v), replica_groups={}, to_apply=add
  h = f32[] constant(0.5)
  hs = f32[4] broadcast(h), dimensions={}
  w = f32[4] multiply(r, hs)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  s = (s32[], f32[4]) tuple(z, p)
  w = (s32[], f32[4]) while(s), condition=cond, body=body
  ROOT v = f32[4] get-tuple-element(w), index=1
})"),
          FloatArgs(2, {4}));
}

// JAX's ragged_collective_test example: 2 devices, one update per peer.
TEST(CpuMultiDevice, RaggedAllToAll) {
  constexpr char kText[] = R"(HloModule m, replica_count=2
ENTRY e {
  x = s32[3] parameter(0)
  o = s32[4] parameter(1)
  a = s32[2] parameter(2)
  n = s32[2] parameter(3)
  b = s32[2] parameter(4)
  r = s32[2] parameter(5)
  ROOT y = s32[4] ragged-all-to-all(x, o, a, n, b, r), replica_groups={{0,1}}
})";
  auto v = [](const std::vector<int32_t>& values) {
    return LiteralUtil::CreateR1<int32_t>(values);
  };
  std::vector<std::vector<Literal>> args(2);
  args[0].push_back(v({1, 2, 2}));
  args[0].push_back(v({0, 0, 0, 0}));
  args[0].push_back(v({0, 1}));
  args[0].push_back(v({1, 2}));
  args[0].push_back(v({0, 0}));
  args[0].push_back(v({1, 1}));
  args[1].push_back(v({3, 4, 0}));
  args[1].push_back(v({0, 0, 0, 0}));
  args[1].push_back(v({0, 1}));
  args[1].push_back(v({1, 1}));
  args[1].push_back(v({1, 2}));
  args[1].push_back(v({2, 1}));
  std::vector<Literal> result = RunBoth(kText, args);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0], v({1, 3, 0, 0}));
  EXPECT_EQ(result[1], v({2, 2, 4, 0}));

  // Two updates per peer (update j * 2 + t goes to device j), rows out of
  // range skipped, the output operand kept where nothing lands.
  constexpr char kTwo[] = R"(HloModule m, replica_count=2
ENTRY e {
  x = f32[4,2] parameter(0)
  o = f32[5,2] parameter(1)
  a = s64[4] parameter(2)
  n = s64[4] parameter(3)
  b = s64[4] parameter(4)
  ROOT y = f32[5,2] ragged-all-to-all(x, o, a, n, b, n), replica_groups={}
})";
  auto s64 = [](const std::vector<int64_t>& values) {
    return LiteralUtil::CreateR1<int64_t>(values);
  };
  std::vector<std::vector<Literal>> two(2);
  for (int d = 0; d < 2; ++d) {
    two[d].push_back(std::move(FloatArgs(2, {4, 2})[d][0]));
    two[d].push_back(std::move(FloatArgs(2, {5, 2})[1 - d][0]));
  }
  two[0].push_back(s64({0, 2, 1, 3}));
  two[0].push_back(s64({1, 2, 2, 4}));
  two[0].push_back(s64({0, 1, 3, 0}));
  two[1].push_back(s64({3, 0, 1, 2}));
  two[1].push_back(s64({1, 1, 2, 1}));
  two[1].push_back(s64({4, 3, 0, -1}));
  RunBoth(kTwo, two);
}

// send/recv pairs (_xla_send_recv_source_target_pairs, read as XLA reads
// them) run as collective-permutes: a target gets its source's data, a
// device that is no target zeros. On a grid of replicas and partitions a
// channel id > 0 makes the pairs partition ids (in every replica), channel
// 0 replica ids (in every partition); two channels in flight at once.
TEST(CpuMultiDevice, SendRecvPairs) {
  RunBoth(R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[2] parameter(0)
  t0 = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t0), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  s = (f32[2], u32[], token[]) send(p, t0), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  rd = (f32[2], token[]) recv-done(r), channel_id=5
  sd = token[] send-done(s), channel_id=5
  d = f32[2] get-tuple-element(rd), index=0
  ROOT n = f32[2] negate(d)
})",
          FloatArgs(3, {2}));
}

TEST(CpuMultiDevice, SendRecvOnAGridOfReplicasAndPartitions) {
  std::vector<Literal> result = RunBoth(R"(HloModule m, replica_count=2, num_partitions=3
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] negate(p)
  t0 = token[] after-all()
  r1 = (f32[2], u32[], token[]) recv(t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,0}}"}
  r0 = (f32[2], u32[], token[]) recv(t0), channel_id=0,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  s1 = (f32[2], u32[], token[]) send(p, t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,0}}"}
  s0 = (f32[2], u32[], token[]) send(q, t0), channel_id=0,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  rd1 = (f32[2], token[]) recv-done(r1), channel_id=1
  rd0 = (f32[2], token[]) recv-done(r0), channel_id=0
  sd1 = token[] send-done(s1), channel_id=1
  sd0 = token[] send-done(s0), channel_id=0
  d1 = f32[2] get-tuple-element(rd1), index=0
  d0 = f32[2] get-tuple-element(rd0), index=0
  ROOT t = (f32[2], f32[2]) tuple(d1, d0)
})",
                                        FloatArgs(6, {2}));
  ASSERT_EQ(result.size(), 6u);
  // Device (replica 1, partition 2) = 5 got partition 1's data of replica
  // 1 (device 4) on channel 1, and nothing on channel 0 (it is no target).
  std::vector<std::vector<Literal>> args = FloatArgs(6, {2});
  EXPECT_EQ(result[5].tuple_element(0), args[4][0]);
  EXPECT_EQ(result[5].tuple_element(1), Literal(ShapeUtil::MakeShape(F32, {2})));
  // Device (replica 0, partition 2) = 2 got replica 1's negated data on
  // channel 0.
  EXPECT_EQ(result[2].tuple_element(1).data<float>()[0], -args[5][0].data<float>()[0]);
}

// _xla_send_recv_validation in the entry computation (its one execution is
// number 0): pair {0,1} moves data ({{0,0}}), pair {1,2} does not
// ({{1,3}}), so device 2 gets zeros; "invalid" moves nothing.
TEST(CpuMultiDevice, SendRecvValidation) {
  std::vector<Literal> result = RunBoth(R"(HloModule m, replica_count=3
ENTRY e {
  p = f32[2] parameter(0)
  t0 = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t0), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}",_xla_send_recv_validation="{{0,0},{1,3}}"}
  s = (f32[2], u32[], token[]) send(p, t0), channel_id=5,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}",_xla_send_recv_validation="{{0,0},{1,3}}"}
  rd = (f32[2], token[]) recv-done(r), channel_id=5
  sd = token[] send-done(s), channel_id=5
  r2 = (f32[2], u32[], token[]) recv(t0), channel_id=6,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="invalid"}
  s2 = (f32[2], u32[], token[]) send(p, t0), channel_id=6,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="invalid"}
  rd2 = (f32[2], token[]) recv-done(r2), channel_id=6
  sd2 = token[] send-done(s2), channel_id=6
  d = f32[2] get-tuple-element(rd), index=0
  d2 = f32[2] get-tuple-element(rd2), index=0
  ROOT t = (f32[2], f32[2]) tuple(d, d2)
})",
                                        FloatArgs(3, {2}));
  ASSERT_EQ(result.size(), 3u);
  std::vector<std::vector<Literal>> args = FloatArgs(3, {2});
  const Literal zeros(ShapeUtil::MakeShape(F32, {2}));
  EXPECT_EQ(result[1].tuple_element(0), args[0][0]);
  EXPECT_EQ(result[2].tuple_element(0), zeros);
  for (const Literal& device : result) EXPECT_EQ(device.tuple_element(1), zeros);
}

// _xla_send_recv_validation in a loop of 4 iterations: each permute counts
// its own executions in the run, and a pair moves data only on those its
// range names; the others give its target zeros. A second run of the
// executable counts from 0 again.
//  - send/recv {0->1} on executions 1-2, {1->0} on execution 0;
//  - collective-permute {0->1} on 0-3, {1->2} on 2, {2->0} on 1.
TEST(CpuMultiDevice, SendRecvValidationCountsExecutionsInALoop) {
  constexpr char kText[] = R"(HloModule m, replica_count=3
body {
  b = (s32[], f32[2], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  x = f32[2] get-tuple-element(b), index=1
  acc = f32[2] get-tuple-element(b), index=2
  acc2 = f32[2] get-tuple-element(b), index=3
  t0 = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}",_xla_send_recv_validation="{{1,2},{0,0}}"}
  s = (f32[2], u32[], token[]) send(x, t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}",_xla_send_recv_validation="{{1,2},{0,0}}"}
  rd = (f32[2], token[]) recv-done(r), channel_id=1
  sd = token[] send-done(s), channel_id=1
  d = f32[2] get-tuple-element(rd), index=0
  sum = f32[2] add(acc, d)
  cp = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0}},
       frontend_attributes={_xla_send_recv_validation="{{0,3},{2,2},{1,1}}"}
  sum2 = f32[2] add(acc2, cp)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT o = (s32[], f32[2], f32[2], f32[2]) tuple(n, x, sum, sum2)
}
cond {
  c = (s32[], f32[2], f32[2], f32[2]) parameter(0)
  k = s32[] get-tuple-element(c), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(k, four), direction=LT
}
ENTRY e {
  p = f32[2] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  zeros = f32[2] broadcast(z), dimensions={}
  init = (s32[], f32[2], f32[2], f32[2]) tuple(zero, p, zeros, zeros)
  w = (s32[], f32[2], f32[2], f32[2]) while(init), condition=cond, body=body
  a = f32[2] get-tuple-element(w), index=2
  a2 = f32[2] get-tuple-element(w), index=3
  ROOT t = (f32[2], f32[2]) tuple(a, a2)
})";
  const std::vector<std::vector<Literal>> args = FloatArgs(3, {2});
  // `times` additions of device `from`'s values to zeros.
  auto added = [&](int from, int times) {
    Literal sum(ShapeUtil::MakeShape(F32, {2}));
    for (int k = 0; k < times; ++k) {
      for (int i = 0; i < 2; ++i) sum.data<float>()[i] += args[from][0].data<float>()[i];
    }
    return sum;
  };
  std::vector<Literal> result = RunBoth(kText, args);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0].tuple_element(0), added(1, 1));
  EXPECT_EQ(result[1].tuple_element(0), added(0, 2));
  EXPECT_EQ(result[2].tuple_element(0), added(0, 0));
  EXPECT_EQ(result[0].tuple_element(1), added(2, 1));
  EXPECT_EQ(result[1].tuple_element(1), added(0, 4));
  EXPECT_EQ(result[2].tuple_element(1), added(1, 1));
  absl::StatusOr<std::vector<Literal>> again = RunOnCpuDevices(kText, args, /*runs=*/2);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, result);
}

TEST(CpuMultiDevice, ARunWithoutACommunicatorOrWithAnotherGridFails) {
  constexpr char kText[] = R"(HloModule m, replica_count=2
ENTRY e {
  ROOT r = u32[] replica-id()
})";
  absl::StatusOr<Literal> alone = testing::RunOn("cpu", kText, {});
  ASSERT_FALSE(alone.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(alone.status())) << alone.status();
  EXPECT_TRUE(absl::StrContains(alone.status().message(), "no communicator")) << alone.status();

  auto executable = testing::CompileOn("cpu", kText);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto communicators = MakeInProcessCommunicators(1, std::chrono::seconds(1));
  RunParticipant participant;
  participant.replica_count = 1;
  participant.communicator = communicators[0].get();
  ExecutableRunOptions options;
  options.set_participant(participant);
  auto result = (*executable)->Run({}, options);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(), "compiled for 2 replicas x 1"))
      << result.status();
}

}  // namespace
}  // namespace axle
