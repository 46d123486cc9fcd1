// SplitLeadingDim's pieces and DotSplitOptionsFrom's reading of the
// AXLE_CPU_DOT_* knobs (dot_split.h).
#include "axle/cpu/runtime/dot_split.h"

#include "gtest/gtest.h"

namespace axle::cpu::dot {
namespace {

std::vector<std::pair<int64_t, int64_t>> Ranges(const std::vector<DotPiece>& pieces) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  ranges.reserve(pieces.size());
  for (const DotPiece& piece : pieces) ranges.emplace_back(piece.begin, piece.end);
  return ranges;
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST(DotSplitTest, PiecesPerThreadInUnits) {
  // 512 rows, 2 threads, 2 pieces each: 4 of 128.
  EXPECT_EQ(Ranges(SplitLeadingDim(512, 16, 32, 2, 2)),
            (Pairs{{0, 128}, {128, 256}, {256, 384}, {384, 512}}));
  // 1000 rows: 250 rounds up to 256, the last piece shorter.
  EXPECT_EQ(Ranges(SplitLeadingDim(1000, 16, 32, 2, 2)),
            (Pairs{{0, 256}, {256, 512}, {512, 768}, {768, 1000}}));
  // One piece per thread.
  EXPECT_EQ(Ranges(SplitLeadingDim(512, 16, 32, 2, 1)), (Pairs{{0, 256}, {256, 512}}));
  // A batch of 6 in units of 1, 3 threads x 2: one each.
  EXPECT_EQ(Ranges(SplitLeadingDim(6, 1, 1, 3, 2)).size(), 6u);
}

TEST(DotSplitTest, ShortDimsAndOneThreadAreNotSplit) {
  // 40 rows with pieces of at least 32: 32 + 8.
  EXPECT_EQ(Ranges(SplitLeadingDim(40, 16, 32, 2, 2)), (Pairs{{0, 32}, {32, 40}}));
  // 32 rows: one piece, no split.
  EXPECT_TRUE(SplitLeadingDim(32, 16, 32, 2, 2).empty());
  EXPECT_TRUE(SplitLeadingDim(512, 16, 32, 1, 4).empty());
  EXPECT_TRUE(SplitLeadingDim(1, 1, 1, 4, 2).empty());
  EXPECT_TRUE(SplitLeadingDim(0, 1, 1, 4, 2).empty());
}

TEST(DotSplitTest, OptionsFromTheEnvironment) {
  EnvironmentOptions environment;
  DotSplitOptions defaults = DotSplitOptionsFrom(environment);
  EXPECT_FALSE(defaults.rows);
  EXPECT_EQ(defaults.pieces_per_thread, 2);
  EXPECT_EQ(defaults.max_threads, 0);
  EXPECT_EQ(defaults.pack_rows, 0);
  environment.cpu_dot_split = "rows";
  environment.cpu_dot_pieces = 3;
  environment.cpu_dot_threads = 1;
  environment.cpu_dot_pack_rows = 1 << 30;
  DotSplitOptions set = DotSplitOptionsFrom(environment);
  EXPECT_TRUE(set.rows);
  EXPECT_EQ(set.pieces_per_thread, 3);
  EXPECT_EQ(set.max_threads, 1);
  EXPECT_EQ(set.pack_rows, 1 << 30);
}

}  // namespace
}  // namespace axle::cpu::dot
