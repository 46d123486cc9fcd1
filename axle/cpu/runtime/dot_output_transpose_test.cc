//===- dot_output_transpose_test.cc - A transposed dot as the swapped dot ---===//
//
// JAX's weight update `w - transpose(dot(dy, x) * lr)` becomes `w -
// dot(x, dy) * lr` with no transpose, so does a transposed gradient that is
// also a result (the PyTorch device's p.grad), and a dot whose users all
// end in that transpose (Adam's moments), batched dots too, and computes what
// the interpreter computes; attention's output transpose becomes the
// swapped dot and a transpose that keeps the minor dimension; transposes
// that move the swapped result's minor dimension too, or whose
// chain has another user or a non-scalar operand, and skinny results, are
// left alone.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/dot_output_transpose.h"

#include <string>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr const char* kWeightUpdate = R"(
HloModule m
ENTRY e {
  dy = f32[32,72] parameter(0)
  x = f32[32,80] parameter(1)
  w = f32[80,72] parameter(2)
  g = f32[72,80] dot(dy, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  lr = f32[] constant(0.01)
  b = f32[72,80] broadcast(lr), dimensions={}
  scaled = f32[72,80] multiply(g, b)
  negated = f32[72,80] negate(scaled)
  t = f32[80,72] transpose(negated), dimensions={1,0}
  ROOT w2 = f32[80,72] add(w, t)
})";

constexpr const char* kBatched = R"(
HloModule m
ENTRY e {
  a = f32[3,64,5] parameter(0)
  b = f32[3,5,66] parameter(1)
  d = f32[3,64,66] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = f32[3,66,64] transpose(d), dimensions={0,2,1}
})";

// JAX's attention output einsum('bkhd,bhqk->bqhd'): the dot gives
// [b, h, d, 1, q] and the transpose [b, q, h, 1, d] moves its minor
// dimension (q); the swapped dot gives [b, h, 1, q, d], from which the same
// result is a transpose that keeps d minor.
constexpr const char* kAttentionOutput = R"(
HloModule m
ENTRY e {
  v = f32[2,80,4,64] parameter(0)
  p = f32[1,2,4,96,80] parameter(1)
  d = f32[2,4,64,1,96] dot(v, p), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={1,2}, rhs_contracting_dims={4}
  c = bf16[2,4,64,1,96] convert(d)
  ROOT t = bf16[2,96,4,1,64] transpose(c), dimensions={0,4,1,3,2}
})";

// The PyTorch device's SGD step with momentum: a Linear weight's gradient
// is a result of the step itself (p.grad) and feeds the momentum buffer.
constexpr const char* kGradientAlsoResult = R"(
HloModule m
ENTRY e {
  x = f32[48,100] parameter(0)
  dy = f32[48,70] parameter(1)
  buf = f32[70,100] parameter(2)
  w = f32[70,100] parameter(3)
  g = f32[100,70] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  grad = f32[70,100] transpose(g), dimensions={1,0}
  m = f32[] constant(0.9)
  mb = f32[70,100] broadcast(m), dimensions={}
  kept = f32[70,100] multiply(buf, mb)
  buf2 = f32[70,100] add(kept, grad)
  lr = f32[] constant(0.01)
  lrb = f32[70,100] broadcast(lr), dimensions={}
  step = f32[70,100] multiply(buf2, lrb)
  w2 = f32[70,100] subtract(w, step)
  ROOT r = (f32[70,100], f32[70,100], f32[70,100]) tuple(w2, buf2, grad)
})";

// Adam's moments after the algebraic simplifier sank the gradient's
// transpose below the elementwise ops: the dot has three users, each a
// chain over it and scalars that ends in the swap transpose.
constexpr const char* kAdamMoments = R"(
HloModule m
ENTRY e {
  x = f32[48,100] parameter(0)
  dy = f32[48,70] parameter(1)
  m = f32[70,100] parameter(2)
  v = f32[70,100] parameter(3)
  g = f32[100,70] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  c1 = f32[] constant(0.1)
  b1 = f32[100,70] broadcast(c1), dimensions={}
  scaled = f32[100,70] multiply(g, b1)
  t1 = f32[70,100] transpose(scaled), dimensions={1,0}
  c9 = f32[] constant(0.9)
  b9 = f32[70,100] broadcast(c9), dimensions={}
  kept = f32[70,100] multiply(m, b9)
  m2 = f32[70,100] add(kept, t1)
  squared = f32[100,70] multiply(g, g)
  c2 = f32[] constant(0.001)
  b2 = f32[100,70] broadcast(c2), dimensions={}
  scaled2 = f32[100,70] multiply(squared, b2)
  t2 = f32[70,100] transpose(scaled2), dimensions={1,0}
  v2 = f32[70,100] add(v, t2)
  grad = f32[70,100] transpose(g), dimensions={1,0}
  ROOT r = (f32[70,100], f32[70,100], f32[70,100]) tuple(m2, v2, grad)
})";

using testing::SeededF32Values;

int64_t Count(const HloModule& module, HloOpcode opcode) {
  int64_t count = 0;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    count += instruction->opcode() == opcode;
  }
  return count;
}

TEST(DotOutputTransposeTest, WeightUpdateDotIsSwappedAndAgrees) {
  auto module = ParseAndReturnUnverifiedModule(kWeightUpdate);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(**module, HloOpcode::kTranspose), 0);
  ASSERT_EQ(Count(**module, HloOpcode::kDot), 1);
  for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
    if (instruction->opcode() != HloOpcode::kDot) continue;
    EXPECT_EQ(instruction->shape().dimensions(), (std::vector<int64_t>{80, 72}));
    EXPECT_EQ(instruction->operand(0)->name(), "x");
    EXPECT_EQ(instruction->operand(1)->name(), "dy");
  }
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {32, 72}), 0));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {32, 80}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {80, 72}), 2));
  testing::ExpectCpuAgrees(kWeightUpdate, arguments, ErrorSpec(1e-5, 1e-5));
}

TEST(DotOutputTransposeTest, GradientThatIsAlsoAResultIsSwappedAndAgrees) {
  auto module = ParseAndReturnUnverifiedModule(kGradientAlsoResult);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(**module, HloOpcode::kTranspose), 0);
  ASSERT_EQ(Count(**module, HloOpcode::kDot), 1);
  for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
    if (instruction->opcode() != HloOpcode::kDot) continue;
    EXPECT_EQ(instruction->shape().dimensions(), (std::vector<int64_t>{70, 100}));
    EXPECT_EQ(instruction->operand(0)->name(), "dy");
    EXPECT_EQ(instruction->operand(1)->name(), "x");
  }
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {48, 100}), 0));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {48, 70}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {70, 100}), 2));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {70, 100}), 3));
  testing::ExpectCpuAgrees(kGradientAlsoResult, arguments, ErrorSpec(1e-5, 1e-5));
}

TEST(DotOutputTransposeTest, DotWhoseUsersAllEndInTheSwapIsSwappedAndAgrees) {
  auto module = ParseAndReturnUnverifiedModule(kAdamMoments);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(**module, HloOpcode::kTranspose), 0);
  ASSERT_EQ(Count(**module, HloOpcode::kDot), 1);
  for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
    if (instruction->opcode() != HloOpcode::kDot) continue;
    EXPECT_EQ(instruction->shape().dimensions(), (std::vector<int64_t>{70, 100}));
    EXPECT_EQ(instruction->operand(0)->name(), "dy");
  }
  // The old region is gone: its dot, multiplies and their broadcasts.
  for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kMultiply ||
        instruction->opcode() == HloOpcode::kBroadcast) {
      EXPECT_EQ(instruction->shape().dimensions(), (std::vector<int64_t>{70, 100}))
          << instruction->name();
    }
  }
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {48, 100}), 0));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {48, 70}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {70, 100}), 2));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {70, 100}), 3));
  testing::ExpectCpuAgrees(kAdamMoments, arguments, ErrorSpec(1e-5, 1e-5));

  // With the dot's own orientation also a result, nothing changes.
  std::string also_dot = kAdamMoments;
  const std::string root = "tuple(m2, v2, grad)";
  also_dot.replace(also_dot.find(root), root.size(), "tuple(m2, v2, grad, g)");
  const std::string shape = "(f32[70,100], f32[70,100], f32[70,100])";
  also_dot.replace(also_dot.find(shape), shape.size(),
                   "(f32[70,100], f32[70,100], f32[70,100], f32[100,70])");
  auto kept = ParseAndReturnUnverifiedModule(also_dot);
  ASSERT_TRUE(kept.ok()) << kept.status();
  changed = DotOutputTranspose().Run(kept->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(DotOutputTransposeTest, BatchedDotIsSwappedAndAgrees) {
  auto module = ParseAndReturnUnverifiedModule(kBatched);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(**module, HloOpcode::kTranspose), 0);
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kDot);
  const DotDimensionNumbers& numbers = cast<HloDotInstruction>(root)->dot_dimension_numbers();
  EXPECT_EQ(numbers.lhs_contracting_dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(numbers.rhs_contracting_dimensions(), (std::vector<int64_t>{2}));
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {3, 64, 5}), 0));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {3, 5, 66}), 1));
  testing::ExpectCpuAgrees(kBatched, arguments, ErrorSpec(1e-5, 1e-5));
}

TEST(DotOutputTransposeTest, AttentionOutputIsSwappedWithMinorKeepingTransposeAndAgrees) {
  auto module = ParseAndReturnUnverifiedModule(kAttentionOutput);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(cast<HloDimensionsInstruction>(root)->dimensions(),
            (std::vector<int64_t>{0, 3, 1, 2, 4}));
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kConvert);
  const HloInstruction* dot = root->operand(0)->operand(0);
  ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dot->operand(0)->name(), "p");
  EXPECT_EQ(dot->shape().dimensions(), (std::vector<int64_t>{2, 4, 1, 96, 64}));
  EXPECT_EQ(root->shape().dimensions(), (std::vector<int64_t>{2, 96, 4, 1, 64}));
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {2, 80, 4, 64}), 0));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {1, 2, 4, 96, 80}), 1));
  testing::ExpectCpuAgrees(kAttentionOutput, arguments, ErrorSpec(1e-2, 1e-2));
}

TEST(DotOutputTransposeTest, OtherTransposesAreLeftAlone) {
  for (const char* text : {R"(
HloModule not_the_swap
ENTRY e {
  a = f32[3,64,5] parameter(0)
  b = f32[3,5,66] parameter(1)
  d = f32[3,64,66] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = f32[64,3,66] transpose(d), dimensions={1,0,2}
})",
                           R"(
HloModule skinny
ENTRY e {
  a = f32[256,10] parameter(0)
  b = f32[256,512] parameter(1)
  d = f32[10,512] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = f32[512,10] transpose(d), dimensions={1,0}
})",
                           R"(
HloModule dot_has_another_user
ENTRY e {
  a = f32[64,5] parameter(0)
  b = f32[5,66] parameter(1)
  d = f32[64,66] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[66,64] transpose(d), dimensions={1,0}
  ROOT r = (f32[64,66], f32[66,64]) tuple(d, t)
})",
                           R"(
HloModule tensor_operand
ENTRY e {
  a = f32[64,5] parameter(0)
  b = f32[5,66] parameter(1)
  c = f32[64,66] parameter(2)
  d = f32[64,66] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[64,66] add(d, c)
  ROOT t = f32[66,64] transpose(s), dimensions={1,0}
})"}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<bool> changed = DotOutputTranspose().Run(module->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
  }
}

}  // namespace
}  // namespace axle::cpu
