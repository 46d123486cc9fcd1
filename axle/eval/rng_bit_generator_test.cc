// rng_bit_generator.h: Random123's known-answer vectors for threefry2x32-20
// and philox4x32-10 (tests/kat_vectors in Random123), and XLA's layout of
// the blocks in rng-bit-generator's output and new state.
#include "axle/eval/rng_bit_generator.h"

#include <vector>

#include "axle/core/shape_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using U2 = std::array<uint32_t, 2>;
using U4 = std::array<uint32_t, 4>;

TEST(Threefry2x32, Random123KnownAnswers) {
  EXPECT_EQ(Threefry2x32({0, 0}, {0, 0}), (U2{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(Threefry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (U2{0x1cb996fc, 0xbb002be7}));
  // Random123 lists the counter (243f6a88 85a308d3) before the key.
  EXPECT_EQ(Threefry2x32({0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}),
            (U2{0xc4923a9c, 0x483df7a0}));
}

TEST(Philox4x32, Random123KnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0}, {0, 0, 0, 0}), (U4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}),
            (U4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0xa4093822, 0x299f31d0}, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}),
            (U4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Runs GenerateRandomBits on `state` for `shape`; returns the bits as u64.
template <typename T>
std::vector<uint64_t> Generate(RandomAlgorithm algorithm, std::vector<uint64_t>& state,
                               const Shape& shape) {
  EXPECT_TRUE(CheckRandomBitsShape(algorithm, static_cast<int64_t>(state.size()), shape).ok());
  std::vector<T> bits(ShapeUtil::ElementsIn(shape));
  std::vector<uint64_t> new_state(state.size());
  GenerateRandomBits(algorithm, state, shape, bits.data(), absl::MakeSpan(new_state));
  state = new_state;
  return std::vector<uint64_t>(bits.begin(), bits.end());
}

TEST(RngBitGenerator, ThreefryU32SplitsTheFirstEvenDimensionInHalves) {
  const uint64_t key = 0x0123456789abcdefu, counter = 41;
  std::vector<uint64_t> state = {key, counter};
  // u32[3,4]: dimension 1 is split; element (r, 2j + w) is word w of the
  // block for counter + (r * 2 + j).
  std::vector<uint64_t> bits =
      Generate<uint32_t>(RNG_THREE_FRY, state, ShapeUtil::MakeShape(U32, {3, 4}));
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 2; ++j) {
      U2 block =
          Threefry2x32({0x89abcdef, 0x01234567}, {static_cast<uint32_t>(counter + r * 2 + j), 0});
      EXPECT_EQ(bits[r * 4 + 2 * j], block[0]);
      EXPECT_EQ(bits[r * 4 + 2 * j + 1], block[1]);
    }
  }
  EXPECT_EQ(state, (std::vector<uint64_t>{key, counter + 6}));
}

TEST(RngBitGenerator, ThreefryOddDimensionsSplitTheLargestAndDropTheLastWord) {
  std::vector<uint64_t> state = {7, 0};
  // u16[3,5]: no even dimension; dimension 1 (5) becomes 3 halves.
  std::vector<uint64_t> bits =
      Generate<uint16_t>(RNG_THREE_FRY, state, ShapeUtil::MakeShape(U16, {3, 5}));
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 5; ++c) {
      U2 block = Threefry2x32({7, 0}, {static_cast<uint32_t>(r * 3 + c / 2), 0});
      EXPECT_EQ(bits[r * 5 + c], block[c % 2] & 0xffff) << r << "," << c;
    }
  }
  EXPECT_EQ(state, (std::vector<uint64_t>{7, 9}));
}

TEST(RngBitGenerator, ThreefryU64TakesOneBlockPerElement) {
  std::vector<uint64_t> state = {0, 0xffffffffu};
  std::vector<uint64_t> bits =
      Generate<uint64_t>(RNG_THREE_FRY, state, ShapeUtil::MakeShape(U64, {2}));
  U2 first = Threefry2x32({0, 0}, {0xffffffff, 0});
  U2 second = Threefry2x32({0, 0}, {0, 1});  // the counter carries into its high word
  EXPECT_EQ(bits[0], first[0] | (uint64_t{first[1]} << 32));
  EXPECT_EQ(bits[1], second[0] | (uint64_t{second[1]} << 32));
  EXPECT_EQ(state, (std::vector<uint64_t>{0, 0x100000001u}));
}

TEST(RngBitGenerator, PhiloxThreeWordStateIsKeyAnd128BitCounter) {
  std::vector<uint64_t> state = {0x299f31d0a4093822u, 0x85a308d3243f6a88u, 0x0370734413198a2eu};
  std::vector<uint64_t> bits =
      Generate<uint32_t>(RNG_PHILOX, state, ShapeUtil::MakeShape(U32, {2, 3}));
  // The Random123 vector's block, then the next counter's.
  EXPECT_EQ(bits[0], 0xd16cfe09u);
  EXPECT_EQ(bits[1], 0x94fdccebu);
  EXPECT_EQ(bits[2], 0x5001e420u);
  EXPECT_EQ(bits[3], 0x24126ea1u);
  U4 next = Philox4x32({0xa4093822, 0x299f31d0}, {0x243f6a89, 0x85a308d3, 0x13198a2e, 0x03707344});
  EXPECT_EQ(bits[4], next[0]);
  EXPECT_EQ(bits[5], next[1]);
  EXPECT_EQ(state,
            (std::vector<uint64_t>{0x299f31d0a4093822u, 0x85a308d3243f6a8au, 0x0370734413198a2eu}));
}

TEST(RngBitGenerator, PhiloxTwoWordStateUsesTheKeyAsCounterHighAndDefaultIsPhilox) {
  std::vector<uint64_t> state = {0xffffffffffffffffu, 0xffffffffffffffffu};
  std::vector<uint64_t> bits =
      Generate<uint64_t>(RNG_DEFAULT, state, ShapeUtil::MakeShape(U64, {3}));
  // Counter (state[1], state[0]) = all ones: the Random123 vector; the next
  // counter wraps to zero.
  EXPECT_EQ(bits[0], 0x41c83b0e408f276du);
  EXPECT_EQ(bits[1], 0x6d5451fda20bc7c6u);
  U4 next = Philox4x32({0xffffffff, 0xffffffff}, {0, 0, 0, 0});
  EXPECT_EQ(bits[2], next[0] | (uint64_t{next[1]} << 32));
  // Two blocks used; only the counter's low word is kept.
  EXPECT_EQ(state, (std::vector<uint64_t>{0xffffffffffffffffu, 1}));
}

TEST(RngBitGenerator, RejectsBadStatesAndTypes) {
  EXPECT_FALSE(CheckRandomBitsShape(RNG_THREE_FRY, 3, ShapeUtil::MakeShape(U32, {4})).ok());
  EXPECT_FALSE(CheckRandomBitsShape(RNG_PHILOX, 1, ShapeUtil::MakeShape(U32, {4})).ok());
  EXPECT_FALSE(CheckRandomBitsShape(RNG_PHILOX, 2, ShapeUtil::MakeShape(PRED, {4})).ok());
  EXPECT_FALSE(CheckRandomBitsShape(RNG_PHILOX, 2, ShapeUtil::MakeShape(S4, {4})).ok());
  EXPECT_TRUE(CheckRandomBitsShape(RNG_PHILOX, 3, ShapeUtil::MakeShape(F32, {4})).ok());
}

}  // namespace
}  // namespace axle
