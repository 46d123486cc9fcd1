//===- buffer_allocation_test.cc - The core of buffer assignment ----------===//
//
// PackArena (the temp arena's first fit), LiveRangesOverSteps,
// TemporaryResultLeaves and AssignLogicalBuffers, as a backend whose steps
// are not HLO instructions (the cpu backend's thunks) uses them.
//
//===----------------------------------------------------------------------===//
#include <random>

#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// Every pair of blocks whose live ranges intersect gets disjoint bytes;
// offsets are aligned and inside the arena.
void ExpectValid(const std::vector<ArenaBlock>& blocks, const ArenaPacking& packing,
                 int64_t alignment) {
  ASSERT_EQ(packing.offsets.size(), blocks.size());
  for (size_t a = 0; a < blocks.size(); ++a) {
    EXPECT_EQ(packing.offsets[a] % alignment, 0);
    EXPECT_LE(packing.offsets[a] + blocks[a].size, packing.size);
    for (size_t b = a + 1; b < blocks.size(); ++b) {
      const bool live_together =
          blocks[a].first <= blocks[b].last && blocks[b].first <= blocks[a].last;
      if (!live_together || blocks[a].size == 0 || blocks[b].size == 0) continue;
      const bool disjoint = packing.offsets[a] + blocks[a].size <= packing.offsets[b] ||
                            packing.offsets[b] + blocks[b].size <= packing.offsets[a];
      EXPECT_TRUE(disjoint) << a << " and " << b;
    }
  }
  EXPECT_EQ(packing.size % alignment, 0);
}

TEST(PackArenaTest, ChainReusesDeadBlocks) {
  // b0 written at 0, read at 1; b1 written at 1, read at 2; b2 written at 2.
  // b0 and b2 may share; b1 overlaps both in time.
  std::vector<ArenaBlock> blocks = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  ArenaPacking packing = PackArena(blocks, 64);
  ExpectValid(blocks, packing, 64);
  EXPECT_EQ(packing.size, 2 * 1024);
  EXPECT_EQ(packing.offsets[0], packing.offsets[2]);
}

TEST(PackArenaTest, SameStepIsAConflict) {
  // Read last at 1 and written at 1: a kernel's input and output.
  std::vector<ArenaBlock> blocks = {{64, 0, 1}, {64, 1, 1}};
  ArenaPacking packing = PackArena(blocks, 64);
  EXPECT_NE(packing.offsets[0], packing.offsets[1]);
  EXPECT_EQ(packing.size, 128);
}

TEST(PackArenaTest, SmallFitsIntoAGapOfALargerDeadOne) {
  std::vector<ArenaBlock> blocks = {{4096, 0, 0}, {100, 0, 5}, {2000, 1, 5}};
  ArenaPacking packing = PackArena(blocks, 64);
  ExpectValid(blocks, packing, 64);
  EXPECT_EQ(packing.size, 4096 + 128);
}

TEST(PackArenaTest, EmptyAndZeroSized) {
  EXPECT_EQ(PackArena({}, 64).size, 0);
  std::vector<ArenaBlock> blocks = {{0, 0, 3}, {10, 0, 3}};
  ArenaPacking packing = PackArena(blocks, 64);
  EXPECT_EQ(packing.size, 64);
  EXPECT_EQ(packing.offsets[0], 0);
}

TEST(PackArenaTest, RandomProgramsAreValid) {
  std::mt19937 random(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(random() % 30);
    std::vector<ArenaBlock> blocks;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t size = static_cast<int64_t>(random() % 5000);
      const int64_t first = static_cast<int64_t>(random() % 20);
      blocks.push_back({size, first, first + static_cast<int64_t>(random() % 6)});
      total += (size + 63) / 64 * 64;
    }
    ArenaPacking packing = PackArena(blocks, 64);
    ExpectValid(blocks, packing, 64);
    EXPECT_LE(packing.size, total);
  }
}

TEST(LiveRangesOverStepsTest, FirstToLastTouchAndUntouchedLiveThroughout) {
  std::vector<std::optional<StepUses>> steps = {StepUses{{}, {0}}, StepUses{{0}, {1}},
                                                StepUses{{1}, {2}}, StepUses{{0, 2}, {}}};
  auto live = LiveRangesOverSteps(4, steps);
  ASSERT_EQ(live.size(), 4u);
  EXPECT_EQ(live[0], std::make_pair(int64_t{0}, int64_t{3}));
  EXPECT_EQ(live[1], std::make_pair(int64_t{1}, int64_t{2}));
  EXPECT_EQ(live[2], std::make_pair(int64_t{2}, int64_t{3}));
  EXPECT_EQ(live[3], std::make_pair(int64_t{0}, int64_t{4}));  // no step touches it
}

TEST(LiveRangesOverStepsTest, AStepOfUnknownUsesKeepsEverythingLive) {
  std::vector<std::optional<StepUses>> steps = {StepUses{{}, {0}}, std::nullopt,
                                                StepUses{{0}, {1}}};
  auto live = LiveRangesOverSteps(2, steps);
  EXPECT_EQ(live[0], std::make_pair(int64_t{0}, int64_t{3}));
  EXPECT_EQ(live[1], std::make_pair(int64_t{0}, int64_t{3}));
}

TEST(TemporaryResultLeavesTest, OneLeafPerTemporaryOrNone) {
  // Values: 0 a parameter, 1 and 2 in temporary 0, 3 in temporary 1, 4 in
  // temporary 2. Result leaves: value 0 (a parameter), 3, 1 and 2 (both in
  // temporary 0, which is then copied out), and 3 again at a second index.
  auto temporary = [](int64_t t) {
    ValueSlot slot;
    slot.kind = ValueSlot::Kind::kTemporary;
    slot.temporary = t;
    return slot;
  };
  ValueSlot parameter;
  parameter.kind = ValueSlot::Kind::kParameter;
  const std::vector<ValueSlot> values = {parameter, temporary(0), temporary(0), temporary(1),
                                         temporary(2)};
  const std::vector<std::pair<ShapeIndex, int64_t>> one_each = {{{0}, 0}, {{1}, 3}, {{2}, 4}};
  EXPECT_EQ(TemporaryResultLeaves(values, 4, one_each), (std::vector<int64_t>{-1, 1, 2, -1}));
  const std::vector<std::pair<ShapeIndex, int64_t>> shared = {
      {{0}, 1}, {{1}, 2}, {{2}, 3}, {{3}, 3}};
  EXPECT_EQ(TemporaryResultLeaves(values, 3, shared), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_TRUE(TemporaryResultLeaves(values, 0, {}).empty());
}

TEST(AssignLogicalBuffersTest, BackendBuffersGetAllocationsAndAnArena) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  c = f32[16] constant({0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15})
  a = f32[16] add(p, c)
  b = f32[16] multiply(a, a)
  ROOT n = f32[16] negate(b)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation* entry = (*module)->entry_computation();
  auto named = [&](absl::string_view name) -> const HloInstruction* {
    for (const HloInstruction* instruction : entry->instructions()) {
      if (instruction->name() == name) return instruction;
    }
    return nullptr;
  };
  // Steps 0..2 compute a, b, n; a thunk of step 1 needs 100 bytes of
  // scratch. n may be written straight into the result (maybe live out).
  std::vector<LogicalBuffer> buffers(6);
  buffers[0] = {BufferAllocation::Kind::kTemp, 64, 0, 1, -1, {}, false, {{named("a"), {}}}, ""};
  buffers[1] = {BufferAllocation::Kind::kTemp, 64, 1, 2, -1, {}, false, {{named("b"), {}}}, ""};
  buffers[2] = {BufferAllocation::Kind::kTemp, 64, 2, 3, -1, {}, true, {{named("n"), {}}}, ""};
  buffers[3] = {BufferAllocation::Kind::kTemp, 100, 1, 1, -1, {}, false, {}, "scratch of b"};
  buffers[4] = {BufferAllocation::Kind::kParameter, 64, 0, 0, 0, {}, false, {{named("p"), {}}}, ""};
  buffers[5] = {BufferAllocation::Kind::kConstant, 64, 0, 0, -1, {}, false, {{named("c"), {}}}, ""};
  auto assignment = AssignLogicalBuffers(buffers);
  ASSERT_TRUE(assignment.ok()) << assignment.status();
  const BufferAssignment& out = **assignment;
  absl::Status verified = VerifyBufferAssignment(out);
  EXPECT_TRUE(verified.ok()) << verified;
  ASSERT_EQ(out.Allocations().size(), 3u);
  EXPECT_EQ(out.temp_allocation_index(), 2);
  // Largest first: the scratch (128 bytes rounded) at 0; a and b, live
  // with it at step 1, after it; n, written once the scratch is dead,
  // reuses its bytes.
  EXPECT_EQ(out.buffer_slice(3).offset, 0);
  EXPECT_EQ(out.buffer_slice(2).offset, 0);
  EXPECT_EQ(out.temp_allocation_total_size(), 256);
  EXPECT_FALSE(out.buffer_slice(0).Overlaps(out.buffer_slice(1)));
  EXPECT_FALSE(out.buffer_slice(1).Overlaps(out.buffer_slice(3)));
  EXPECT_EQ(out.buffer_slice(4).allocation, 0);
  EXPECT_EQ(out.buffer_slice(5).allocation, 1);
  EXPECT_TRUE(out.Allocations()[1].is_read_only());
  EXPECT_TRUE(out.Allocations()[2].is_live_out());
  EXPECT_EQ(out.buffer_live_range(3), std::make_pair(int64_t{1}, int64_t{1}));
  auto slice = out.GetUniqueSlice(named("n"));
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(*slice, out.buffer_slice(2));
  const std::string text = out.ToString();
  EXPECT_NE(text.find("allocation 0: parameter, size 64, parameter 0 at {}\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("allocation 2: temp, size 256, maybe live out\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  scratch of b: offset "), std::string::npos) << text;
  EXPECT_NE(text.find("  %n{} (e): offset 0, size 64, live [2, 3]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("temp arena: 256 bytes"), std::string::npos) << text;
}

TEST(AssignLogicalBuffersTest, RandomBuffersVerify) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<LogicalBuffer> buffers(1 + random() % 40);
    for (size_t b = 0; b < buffers.size(); ++b) {
      buffers[b].size = static_cast<int64_t>(random() % 3000);
      buffers[b].first = static_cast<int64_t>(random() % 30);
      buffers[b].last = buffers[b].first + static_cast<int64_t>(random() % 8);
      buffers[b].label = "b";
      if (random() % 5 == 0) {
        buffers[b].kind = BufferAllocation::Kind::kParameter;
        buffers[b].parameter_number = static_cast<int64_t>(b);
      }
    }
    auto assignment = AssignLogicalBuffers(buffers);
    ASSERT_TRUE(assignment.ok()) << assignment.status();
    absl::Status verified = VerifyBufferAssignment(**assignment);
    EXPECT_TRUE(verified.ok()) << verified << "\n" << (*assignment)->ToString();
  }
}

TEST(AssignLogicalBuffersTest, BadBuffersAreErrors) {
  std::vector<LogicalBuffer> negative(1);
  negative[0].size = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(AssignLogicalBuffers(negative).status()));
  std::vector<LogicalBuffer> backwards(1);
  backwards[0].first = 3;
  backwards[0].last = 1;
  EXPECT_TRUE(absl::IsInvalidArgument(AssignLogicalBuffers(backwards).status()));
  std::vector<LogicalBuffer> parameter(1);
  parameter[0].kind = BufferAllocation::Kind::kParameter;
  EXPECT_TRUE(absl::IsInvalidArgument(AssignLogicalBuffers(parameter).status()));
  BufferAssignmentOptions options;
  options.alignment = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(AssignLogicalBuffers({}, options).status()));
  // No buffers: no allocation, no arena.
  auto empty = AssignLogicalBuffers({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->temp_allocation_total_size(), 0);
  EXPECT_TRUE((*empty)->Allocations().empty());
}

}  // namespace
}  // namespace axle
