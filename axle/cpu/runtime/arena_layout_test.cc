//===- arena_layout_test.cc - Tests of LayOutArena -------------------------===//
#include "axle/cpu/runtime/arena_layout.h"

#include <random>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// No two temporaries with intersecting live ranges share a byte; all are
// aligned and inside the arena.
void ExpectValid(const std::vector<int64_t>& sizes, const std::vector<LiveRange>& live,
                 const ArenaLayout& layout, int64_t alignment) {
  ASSERT_EQ(layout.offsets.size(), sizes.size());
  EXPECT_EQ(layout.size_bytes % alignment, 0);
  for (size_t a = 0; a < sizes.size(); ++a) {
    EXPECT_EQ(layout.offsets[a] % alignment, 0) << a;
    EXPECT_LE(layout.offsets[a] + sizes[a], layout.size_bytes) << a;
    for (size_t b = a + 1; b < sizes.size(); ++b) {
      if (!live[a].Intersects(live[b]) || sizes[a] == 0 || sizes[b] == 0) continue;
      const bool disjoint = layout.offsets[a] + sizes[a] <= layout.offsets[b] ||
                            layout.offsets[b] + sizes[b] <= layout.offsets[a];
      EXPECT_TRUE(disjoint) << a << " and " << b;
    }
  }
}

TEST(ArenaLayoutTest, ChainReusesDeadTemporaries) {
  // t0 written at 0, read at 1; t1 written at 1, read at 2; t2 written at 2.
  // t0 and t2 may share; t1 overlaps both in time.
  std::vector<int64_t> sizes = {1000, 1000, 1000};
  std::vector<LiveRange> live = {{0, 1}, {1, 2}, {2, 3}};
  ArenaLayout layout = LayOutArena(sizes, live, 64);
  ExpectValid(sizes, live, layout, 64);
  EXPECT_EQ(layout.size_bytes, 2 * 1024);
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
}

TEST(ArenaLayoutTest, SameIndexIsAConflict) {
  // Read last at 1 and written at 1: a kernel's input and output.
  std::vector<int64_t> sizes = {64, 64};
  std::vector<LiveRange> live = {{0, 1}, {1, 1}};
  ArenaLayout layout = LayOutArena(sizes, live, 64);
  EXPECT_NE(layout.offsets[0], layout.offsets[1]);
  EXPECT_EQ(layout.size_bytes, 128);
}

TEST(ArenaLayoutTest, SmallFitsIntoAGapOfALargerDeadOne) {
  std::vector<int64_t> sizes = {4096, 100, 2000};
  std::vector<LiveRange> live = {{0, 0}, {0, 5}, {1, 5}};
  ArenaLayout layout = LayOutArena(sizes, live, 64);
  ExpectValid(sizes, live, layout, 64);
  EXPECT_EQ(layout.size_bytes, 4096 + 128);
}

TEST(ArenaLayoutTest, EmptyAndZeroSized) {
  EXPECT_EQ(LayOutArena({}, {}, 64).size_bytes, 0);
  std::vector<int64_t> sizes = {0, 10};
  std::vector<LiveRange> live = {{0, 3}, {0, 3}};
  ArenaLayout layout = LayOutArena(sizes, live, 64);
  EXPECT_EQ(layout.size_bytes, 64);
}

TEST(ArenaLayoutTest, RandomProgramsAreValid) {
  std::mt19937 random(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(random() % 30);
    std::vector<int64_t> sizes;
    std::vector<LiveRange> live;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      sizes.push_back(static_cast<int64_t>(random() % 5000));
      const int64_t first = static_cast<int64_t>(random() % 20);
      live.push_back({first, first + static_cast<int64_t>(random() % 6)});
      total += (sizes.back() + 63) / 64 * 64;
    }
    ArenaLayout layout = LayOutArena(sizes, live, 64);
    ExpectValid(sizes, live, layout, 64);
    EXPECT_LE(layout.size_bytes, total);
  }
}

}  // namespace
}  // namespace axle::cpu
