//===- single_device_collectives_test.cc - Tests of single-device-collectives ===//
//
// The collectives of a one-device module become plumbing with the
// interpreter's values before and after; several devices are Unimplemented
// naming the op, or kept for a backend that runs them (keep_multi_device;
// keep_on_one_device keeps a one-device module's too).
// Runs of every collective on cpu are in
// cpu/runtime/collectives_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/single_device_collectives.h"

#include "absl/strings/match.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::RunAndCompare;

TEST(LowerSingleDeviceCollectives, LeavesPlumbingAndACall) {
  LowerSingleDeviceCollectives pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
wrapped {
  a = f32[4] parameter(0)
  ROOT s = f32[4] all-reduce(a), replica_groups={}, to_apply=add
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  start = ((f32[4]), f32[4]) async-start(p), calls=wrapped
  done = f32[4] async-done(start), calls=wrapped
  ROOT t = (u32[], f32[4]) tuple(id, done)
})");
  ASSERT_NE(module, nullptr);
  const std::string after = module->ToString();
  for (absl::string_view gone : {"replica-id", "all-reduce", "async-", "add {"}) {
    EXPECT_FALSE(absl::StrContains(after, gone)) << gone << " in\n" << after;
  }
  EXPECT_TRUE(absl::StrContains(after, "call(")) << after;
  EXPECT_TRUE(absl::StrContains(after, "u32[] constant(0)")) << after;
}

// An async computation of another thread is called on the caller's (the
// verifier's rule), and two ids all-reduced in an order a control edge
// fixes become one value without a control edge to itself.
TEST(LowerSingleDeviceCollectives, CallsOnTheCallersThreadWithoutSelfEdges) {
  LowerSingleDeviceCollectives pass;
  auto threads = RunAndCompare(pass, R"(
HloModule m
called {
  p0 = s32[8] parameter(0)
  p1 = s32[8] parameter(1)
  ROOT add = s32[8] add(p0, p1)
}, execution_thread="thread_1"
ENTRY e {
  p0 = s32[8] parameter(0)
  p1 = s32[8] parameter(1)
  start = ((s32[8], s32[8]), s32[8], u32[]) call-start(p0, p1), async_execution_thread="thread_1", to_apply=called
  ROOT done = s32[8] call-done(start)
}, execution_thread="thread_0")");
  ASSERT_NE(threads, nullptr);
  EXPECT_FALSE(absl::StrContains(threads->ToString(), "thread_1")) << threads->ToString();
  auto ordered = RunAndCompare(pass, R"(
HloModule m
sum {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}
ENTRY e {
  id = u32[] replica-id()
  start1 = u32[] all-reduce-start(id), to_apply=sum, channel_id=3
  done1 = u32[] all-reduce-done(start1)
  start2 = u32[] all-reduce-start(id), to_apply=sum, channel_id=4, control-predecessors={done1}
  done2 = u32[] all-reduce-done(start2)
  ROOT x = u32[] add(done1, done2)
})");
  ASSERT_NE(ordered, nullptr);
  for (const HloInstruction* instruction : ordered->entry_computation()->instructions()) {
    for (const HloInstruction* successor : instruction->control_successors()) {
      EXPECT_NE(successor, instruction) << instruction->name();
    }
  }
}

TEST(LowerSingleDeviceCollectives, SeveralDevicesAreUnimplementedNamingTheOp) {
  LowerSingleDeviceCollectives pass;
  std::unique_ptr<HloModule> module = cleanup_test::Parse(R"(
HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT s = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_FALSE(changed.ok());
  EXPECT_TRUE(absl::IsUnimplemented(changed.status())) << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "single-device-collectives: "))
      << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "(instruction %s, all-reduce)"))
      << changed.status();
}

// keep_multi_device (the cpu backend's collective thunks): on several
// devices the ids and collectives stay, a -start/-done pair becomes the
// synchronous op, a send/recv-done pair a collective-permute of the sent
// data, and groups of single devices are still lowered.
TEST(LowerSingleDeviceCollectives, KeepsTheCollectivesOfSeveralDevices) {
  LowerSingleDeviceCollectives pass(/*keep_multi_device=*/true);
  std::unique_ptr<HloModule> module = cleanup_test::Parse(R"(
HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  rs = f32[4] all-reduce-start(p), replica_groups={}, to_apply=add
  rd = f32[4] all-reduce-done(rs)
  one = f32[4] all-reduce(p), replica_groups={{0},{1}}, to_apply=add
  t0 = token[] after-all()
  r = (f32[4], u32[], token[]) recv(t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  s = (f32[4], u32[], token[]) send(p, t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  d = (f32[4], token[]) recv-done(r), channel_id=1
  sd = token[] send-done(s), channel_id=1
  got = f32[4] get-tuple-element(d), index=0
  ROOT t = (u32[], f32[4], f32[4], f32[4]) tuple(id, rd, one, got)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const std::string after = module->ToString();
  for (absl::string_view kept : {"replica-id()", "all-reduce(%p), replica_groups={}",
                                 "collective-permute(%p)", "source_target_pairs={{0,1}}"}) {
    EXPECT_TRUE(absl::StrContains(after, kept)) << kept << " not in\n" << after;
  }
  for (absl::string_view gone : {"-start", "-done", "send(", "recv(", "{{0},{1}}"}) {
    EXPECT_FALSE(absl::StrContains(after, gone)) << gone << " in\n" << after;
  }
}

// A scheduled module orders work after a -start with control edges: the
// synchronous op replaces the pair (one instruction of the start's name,
// the start gone), and what followed the -start is no longer tied to it.
TEST(LowerSingleDeviceCollectives, KeptPairWithControlEdgesBecomesOneOp) {
  LowerSingleDeviceCollectives pass(/*keep_multi_device=*/true);
  std::unique_ptr<HloModule> module = cleanup_test::Parse(R"(
HloModule m, replica_count=4
ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[5] parameter(1)
  before = f32[5] negate(p1)
  ags = (f32[2,3], f32[8,3]) all-gather-start(p0), replica_groups={{0,1,2,3}}, dimensions={0},
      control-predecessors={before}
  c0 = f32[5] exponential(p1), control-predecessors={ags}
  c1 = f32[5] sqrt(c0)
  agd = f32[8,3] all-gather-done(ags), control-predecessors={c1}
  ROOT t = (f32[5], f32[8,3], f32[5]) tuple(c0, agd, before)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloComputation* entry = module->entry_computation();
  int gathers = 0;
  for (const HloInstruction* instruction : entry->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kAllGatherStart);
    if (instruction->opcode() != HloOpcode::kAllGather) continue;
    ++gathers;
    EXPECT_EQ(instruction->name(), "ags");
    ASSERT_EQ(instruction->control_predecessors().size(), 2u);  // before, c1
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_TRUE(VerifyHloModule(*module).ok()) << module->ToString();
}

TEST(LowerSingleDeviceCollectives, KeepsOneDeviceCollectivesWhenAsked) {
  const char* text = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  rs = f32[4] all-reduce-start(p), replica_groups={{0}}, to_apply=add
  rd = f32[4] all-reduce-done(rs)
  ROOT g = f32[4] all-gather(rd), replica_groups={{0}}, dimensions={0}
})";
  // keep_on_one_device (the cuda backend's one-rank NCCL tests): kept, the
  // start/done pair made synchronous; without it: plumbing.
  std::unique_ptr<HloModule> kept = cleanup_test::Parse(text);
  ASSERT_NE(kept, nullptr);
  LowerSingleDeviceCollectives keep(/*keep_multi_device=*/true, /*keep_on_one_device=*/true);
  absl::StatusOr<bool> changed = keep.Run(kept.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  const std::string after = kept->ToString();
  for (absl::string_view present : {"all-reduce(%p), replica_groups={{0}}", "all-gather("}) {
    EXPECT_TRUE(absl::StrContains(after, present)) << present << " not in\n" << after;
  }
  EXPECT_FALSE(absl::StrContains(after, "-start")) << after;
  std::unique_ptr<HloModule> lowered = cleanup_test::Parse(text);
  ASSERT_NE(lowered, nullptr);
  LowerSingleDeviceCollectives lower(/*keep_multi_device=*/true);
  changed = lower.Run(lowered.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(absl::StrContains(lowered->ToString(), "all-")) << lowered->ToString();
}

}  // namespace
}  // namespace axle
