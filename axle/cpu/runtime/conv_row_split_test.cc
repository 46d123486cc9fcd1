// SplitConvRows (conv_row_split.h): each piece's input rows and padding
// give exactly its output rows, and the pieces tile the output.
#include "axle/cpu/runtime/conv_row_split.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// Checks that `pieces` tile `window`'s output rows in order, and that each
// piece, as a convolution of its own, has its own number of output rows.
void ExpectTiles(const ConvRowWindow& window, const std::vector<ConvRowPiece>& pieces) {
  ASSERT_FALSE(pieces.empty());
  int64_t next = 0;
  for (const ConvRowPiece& piece : pieces) {
    EXPECT_EQ(piece.out_begin, next);
    EXPECT_LT(piece.out_begin, piece.out_end);
    EXPECT_GE(piece.in_begin, 0);
    EXPECT_LE(piece.in_end, window.in_rows);
    EXPECT_LE(piece.pad_low, window.pad_low);
    EXPECT_LE(piece.pad_high, window.pad_high);
    ConvRowWindow own = window;
    own.in_rows = piece.in_end - piece.in_begin;
    own.pad_low = piece.pad_low;
    own.pad_high = piece.pad_high;
    EXPECT_EQ(own.OutRows(), piece.out_end - piece.out_begin);
    // The first input row of the piece is the first its first window reads.
    EXPECT_EQ(piece.in_begin - piece.pad_low, piece.out_begin * window.stride - window.pad_low);
    next = piece.out_end;
  }
  EXPECT_EQ(next, window.OutRows());
}

TEST(ConvRowSplit, SameConvolutionInTwo) {
  // 3x3, stride 1, pad 1 over 14 rows: 7 + 7, padded at the outer edges only.
  ConvRowWindow window{14, 3, 1, 1, 1, 1};
  std::vector<ConvRowPiece> pieces = SplitConvRows(window, 2);
  ExpectTiles(window, pieces);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].out_end, 7);
  EXPECT_EQ(pieces[0].in_begin, 0);
  EXPECT_EQ(pieces[0].in_end, 8);
  EXPECT_EQ(pieces[0].pad_low, 1);
  EXPECT_EQ(pieces[0].pad_high, 0);
  EXPECT_EQ(pieces[1].in_begin, 6);
  EXPECT_EQ(pieces[1].in_end, 14);
  EXPECT_EQ(pieces[1].pad_low, 0);
  EXPECT_EQ(pieces[1].pad_high, 1);
}

TEST(ConvRowSplit, StridedDilatedAndUneven) {
  // 7x7 stride 2 pad 3 (a ResNet stem), 3x3 stride 2 pad 1, dilation 2, a
  // stride that leaves input rows unread, and pieces of unequal sizes.
  for (const ConvRowWindow& window :
       {ConvRowWindow{224, 7, 2, 1, 3, 3}, ConvRowWindow{112, 3, 2, 1, 1, 1},
        ConvRowWindow{20, 3, 1, 2, 2, 2}, ConvRowWindow{10, 2, 3, 1, 0, 0},
        ConvRowWindow{7, 1, 1, 1, 0, 0}}) {
    // Up to one piece per output row (10 rows, size 2, stride 3: 3 rows).
    for (int64_t pieces = 1; pieces <= std::min<int64_t>(4, window.OutRows()); ++pieces) {
      ExpectTiles(window, SplitConvRows(window, pieces));
    }
  }
  // 7 rows in 3: 3 + 2 + 2.
  std::vector<ConvRowPiece> pieces = SplitConvRows(ConvRowWindow{7, 1, 1, 1, 0, 0}, 3);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].out_end - pieces[0].out_begin, 3);
  EXPECT_EQ(pieces[2].out_end - pieces[2].out_begin, 2);
}

TEST(ConvRowSplit, ImpossibleSplitsAreEmpty) {
  // Fewer output rows than pieces.
  EXPECT_TRUE(SplitConvRows(ConvRowWindow{3, 3, 1, 1, 0, 0}, 2).empty());
  // A piece all padding: 1 input row padded by 4 on each side, 1x1 window.
  EXPECT_TRUE(SplitConvRows(ConvRowWindow{1, 1, 1, 1, 4, 4}, 3).empty());
  EXPECT_TRUE(SplitConvRows(ConvRowWindow{8, 3, 1, 1, 1, 1}, 0).empty());
}

}  // namespace
}  // namespace axle::cpu
