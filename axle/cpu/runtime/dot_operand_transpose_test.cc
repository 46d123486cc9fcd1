//===- dot_operand_transpose_test.cc - Dot operands the matmul reads in place ===//
//
// Which operand orders read in place; attention's scores and weighted sum
// (batch dims apart) get their operands transposed into [B, M, K] x
// [B, K, N] and still compute what the interpreter computes; dots that
// read in place already, and those the emitted loop runs, are left alone;
// a Linear layer's transposed weight and activations fold into its dots,
// and a transpose into another transpose of its operand (attention heads).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/dot_operand_transpose.h"

#include <string>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// q, k, v as JAX passes them: [batch, sequence, heads, head_dim].
constexpr const char* kAttention = R"(
HloModule m
ENTRY e {
  q = f32[2,64,4,32] parameter(0)
  k = f32[2,64,4,32] parameter(1)
  v = f32[2,64,4,32] parameter(2)
  s = f32[2,4,64,64] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  ROOT o = f32[2,4,32,64] dot(v, s), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
})";

using testing::SeededF32Values;

std::vector<const HloDotInstruction*> Dots(const HloModule& module) {
  std::vector<const HloDotInstruction*> dots;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kDot) {
      dots.push_back(cast<HloDotInstruction>(instruction));
    }
  }
  return dots;
}

TEST(DotOperandTransposeTest, InPlaceOrders) {
  const Shape shape = ShapeUtil::MakeShape(F32, {2, 3, 4, 5});
  EXPECT_TRUE(DotOperandReadsInPlace(shape, {0}, {1, 2}, {3}));
  EXPECT_TRUE(DotOperandReadsInPlace(shape, {0, 1}, {3}, {2}));   // [B, K, M]
  EXPECT_FALSE(DotOperandReadsInPlace(shape, {0, 2}, {1}, {3}));  // batch dims apart
  EXPECT_FALSE(DotOperandReadsInPlace(shape, {1, 0}, {2}, {3}));  // batch dims swapped
  EXPECT_FALSE(DotOperandReadsInPlace(shape, {0}, {1, 3}, {2}));  // a group split
  // Dims of size one go anywhere.
  const Shape ones = ShapeUtil::MakeShape(F32, {1, 2, 1, 5});
  EXPECT_TRUE(DotOperandReadsInPlace(ones, {0, 1}, {2}, {3}));
  EXPECT_TRUE(DotOperandReadsInPlace(ones, {1, 2}, {0}, {3}));
}

TEST(DotOperandTransposeTest, AttentionOperandsAreTransposedAndAgree) {
  auto module = ParseAndReturnUnverifiedModule(kAttention);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOperandTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const HloDotInstruction* dot : Dots(**module)) {
    SCOPED_TRACE(dot->ToString());
    const DotDimensionNumbers& numbers = dot->dot_dimension_numbers();
    EXPECT_EQ(numbers.lhs_batch_dimensions(), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(numbers.rhs_batch_dimensions(), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(dot->operand(0)->opcode(), HloOpcode::kTranspose);
  }
  // The scores' rhs (k) becomes [B, N, K] and the weighted sum's lhs (v)
  // [B, K, M]: every transpose keeps its operand's minor dimension (d)
  // minor. The weighted sum's rhs (the scores as [B, N, K]) reads in place
  // already.
  std::vector<const HloDotInstruction*> dots = Dots(**module);
  ASSERT_EQ(dots.size(), 2u);
  int transposed_rhs = 0;
  for (const HloDotInstruction* dot : dots) {
    transposed_rhs += dot->operand(1)->opcode() == HloOpcode::kTranspose;
    for (const HloInstruction* operand : dot->operands()) {
      if (operand->opcode() != HloOpcode::kTranspose) continue;
      EXPECT_EQ(cast<HloDimensionsInstruction>(operand)->dimensions().back(), 3)
          << operand->ToString();
    }
  }
  EXPECT_EQ(transposed_rhs, 1);
  const DotDimensionNumbers& scores = dots[0]->dot_dimension_numbers();
  const DotDimensionNumbers& sum = dots[1]->dot_dimension_numbers();
  EXPECT_EQ(scores.lhs_contracting_dimensions(), (std::vector<int64_t>{3}));
  EXPECT_EQ(scores.rhs_contracting_dimensions(), (std::vector<int64_t>{3}));
  EXPECT_EQ(sum.lhs_contracting_dimensions(), (std::vector<int64_t>{2}));
  // Run through the whole cpu pipeline against the interpreter.
  std::vector<Literal> arguments;
  arguments.reserve(3);
  for (int i = 0; i < 3; ++i) {
    arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {2, 64, 4, 32}), i));
  }
  testing::ExpectCpuAgrees(kAttention, arguments, ErrorSpec(1e-4, 1e-4));
}

// A Linear layer's forward (x @ w.t()) and its weight's gradient
// (x.t() @ dy), as PyTorch records them.
constexpr const char* kLinear = R"(
HloModule linear
ENTRY e {
  x = f32[64,784] parameter(0)
  w = f32[256,784] parameter(1)
  dy = f32[64,256] parameter(2)
  wt = f32[784,256] transpose(w), dimensions={1,0}
  y = f32[64,256] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  xt = f32[784,64] transpose(x), dimensions={1,0}
  dw = f32[784,256] dot(xt, dy), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT o = (f32[64,256], f32[784,256]) tuple(y, dw)
})";

TEST(DotOperandTransposeTest, TransposedOperandsFoldIntoTheDot) {
  auto module = ParseAndReturnUnverifiedModule(kLinear);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOperandTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  std::vector<const HloDotInstruction*> dots = Dots(**module);
  ASSERT_EQ(dots.size(), 2u);
  for (const HloDotInstruction* dot : dots) {
    SCOPED_TRACE(dot->ToString());
    for (const HloInstruction* operand : dot->operands()) {
      EXPECT_EQ(operand->opcode(), HloOpcode::kParameter);
    }
  }
  // y reads w as [N, K]; dw reads x as [K, M].
  EXPECT_EQ(dots[0]->dot_dimension_numbers().rhs_contracting_dimensions(),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(dots[1]->dot_dimension_numbers().lhs_contracting_dimensions(),
            (std::vector<int64_t>{0}));
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {64, 784}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {256, 784}), 2));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {64, 256}), 3));
  testing::ExpectCpuAgrees(kLinear, arguments, ErrorSpec(1e-4, 1e-4));
}

// nn.MultiheadAttention's heads as PyTorch records them: q and k ([s,
// b*h, d]) each transposed to [b*h, s, d] for one dot and to [b*h, d, s]
// for another.
constexpr const char* kHeadCopies = R"(
HloModule heads
ENTRY e {
  pq = f32[64,32,32] parameter(0)
  pk = f32[64,32,32] parameter(1)
  g = f32[32,64,64] parameter(2)
  q = f32[32,64,32] transpose(pq), dimensions={1,0,2}
  qt = f32[32,32,64] transpose(pq), dimensions={1,2,0}
  k = f32[32,64,32] transpose(pk), dimensions={1,0,2}
  kt = f32[32,32,64] transpose(pk), dimensions={1,2,0}
  s = f32[32,64,64] dot(q, kt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  dq = f32[32,64,32] dot(g, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  dkt = f32[32,32,64] dot(qt, g), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT o = (f32[32,64,64], f32[32,64,32], f32[32,32,64]) tuple(s, dq, dkt)
})";

TEST(DotOperandTransposeTest, ATransposeFoldsIntoItsSiblingThatCopiesRows) {
  auto module = ParseAndReturnUnverifiedModule(kHeadCopies);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOperandTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  std::vector<const HloDotInstruction*> dots = Dots(**module);
  ASSERT_EQ(dots.size(), 3u);
  // Every dot reads q or k as [b*h, s, d]; qt and kt are left unread.
  for (const HloDotInstruction* dot : dots) {
    SCOPED_TRACE(dot->ToString());
    for (const HloInstruction* operand : dot->operands()) {
      EXPECT_NE(operand->name(), "qt");
      EXPECT_NE(operand->name(), "kt");
    }
  }
  const HloDotInstruction* scores = nullptr;
  const HloDotInstruction* dkt = nullptr;
  for (const HloDotInstruction* dot : dots) {
    if (dot->shape().dimensions(1) == 64 && dot->shape().dimensions(2) == 64) scores = dot;
    if (dot->shape().dimensions(1) == 32) dkt = dot;
  }
  ASSERT_NE(scores, nullptr);
  ASSERT_NE(dkt, nullptr);
  // The scores read k as [B, N, K]; dkt reads q as [B, K, M].
  EXPECT_EQ(scores->operand(1)->name(), "k");
  EXPECT_EQ(scores->dot_dimension_numbers().rhs_contracting_dimensions(),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(dkt->operand(0)->name(), "q");
  EXPECT_EQ(dkt->dot_dimension_numbers().lhs_contracting_dimensions(), (std::vector<int64_t>{1}));
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {64, 32, 32}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {64, 32, 32}), 2));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {32, 64, 64}), 3));
  testing::ExpectCpuAgrees(kHeadCopies, arguments, ErrorSpec(1e-4, 1e-4));
}

TEST(DotOperandTransposeTest, InPlaceAndSmallDotsAreLeftAlone) {
  for (const char* text : {R"(
HloModule in_place
ENTRY e {
  a = f32[8,64,128] parameter(0)
  b = f32[8,64,96] parameter(1)
  ROOT d = f32[8,128,96] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                           R"(
HloModule small
ENTRY e {
  a = f32[2,8,3,16] parameter(0)
  b = f32[2,8,3,16] parameter(1)
  ROOT d = f32[2,3,8,8] dot(a, b), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
})",
                           R"(
HloModule integers
ENTRY e {
  a = s32[4,64,4,64] parameter(0)
  b = s32[4,64,4,64] parameter(1)
  ROOT d = s32[4,4,64,64] dot(a, b), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
})"}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<bool> changed = DotOperandTranspose().Run(module->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
  }
}

}  // namespace
}  // namespace axle::cpu
