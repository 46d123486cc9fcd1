//===- rewrite_each_instruction_test.cc - Tests of a pass's walk ----------===//
#include "axle/hlo/pass/rewrite_each_instruction.h"

#include <memory>
#include <string>
#include <vector>

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// A negate in a fusion, in a called computation and twice in the entry.
constexpr absl::string_view kModule = R"(
HloModule walked

fused_negate {
  fp = f32[4] parameter(0)
  ROOT fn = f32[4] negate(fp)
}

callee {
  cp = f32[4] parameter(0)
  ROOT cn = f32[4] negate(cp)
}

ENTRY e {
  x = f32[4] parameter(0)
  n1 = f32[4] negate(x)
  n2 = f32[4] negate(n1)
  f = f32[4] fusion(n2), kind=kLoop, calls=fused_negate
  ROOT c = f32[4] call(f), to_apply=callee
}
)";

std::unique_ptr<HloModule> Parse() {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

int CountOpcode(const HloComputation& computation, HloOpcode opcode) {
  int count = 0;
  for (const HloInstruction* instruction : computation.instructions()) {
    count += instruction->opcode() == opcode ? 1 : 0;
  }
  return count;
}

// Each negate outside fusions becomes an abs of its operand.
absl::StatusOr<HloInstruction*> NegateToAbs(HloInstruction* instruction) {
  if (instruction->opcode() != HloOpcode::kNegate) return nullptr;
  return instruction->parent()->AddInstruction(HloInstruction::Create(
      HloOpcode::kAbs, instruction->shape(), {instruction->mutable_operand(0)}));
}

TEST(RewriteEachInstructionTest, VisitsCalleesFirstAndSkipsFusions) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  std::vector<std::string> visited;
  absl::StatusOr<bool> changed = RewriteEachInstruction(
      module.get(), [&](HloComputation* computation, HloInstruction* instruction) {
        visited.push_back(computation->name() + "." + instruction->name());
        return false;
      });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  const std::vector<std::string> expected = {"callee.cp", "callee.cn", "e.x", "e.n1",
                                             "e.n2",      "e.f",       "e.c"};
  EXPECT_EQ(visited, expected);
}

TEST(RewriteEachInstructionTest, TheFirstErrorStopsTheWalk) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  int calls = 0;
  absl::StatusOr<bool> changed = RewriteEachInstruction(
      module.get(), [&](HloComputation*, HloInstruction* instruction) -> absl::StatusOr<bool> {
        ++calls;
        if (instruction->opcode() == HloOpcode::kNegate) {
          return absl::InvalidArgumentError(instruction->name());
        }
        return true;
      });
  EXPECT_EQ(changed.status(), absl::InvalidArgumentError("cn"));
  EXPECT_EQ(calls, 2);  // cp, then cn
}

TEST(ReplaceEachInstructionTest, ReplacesWhatItLowersOutsideFusions) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = ReplaceEachInstruction(module.get(), NegateToAbs);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const HloComputation* computation : module->computations()) {
    const bool fusion = computation->IsFusionComputation();
    EXPECT_EQ(CountOpcode(*computation, HloOpcode::kNegate), fusion ? 1 : 0) << computation->name();
    EXPECT_EQ(CountOpcode(*computation, HloOpcode::kAbs),
              fusion ? 0 : (computation == module->entry_computation() ? 2 : 1))
        << computation->name();
  }
  // The entry's abs(abs(x)) feeds the fusion; the callee's root is its abs.
  const HloInstruction* fusion = module->entry_computation()->root_instruction()->operand(0);
  ASSERT_EQ(fusion->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(fusion->operand(0)->opcode(), HloOpcode::kAbs);
  EXPECT_EQ(fusion->operand(0)->operand(0)->opcode(), HloOpcode::kAbs);
  EXPECT_EQ(fusion->operand(0)->operand(0)->operand(0)->opcode(), HloOpcode::kParameter);
  const HloComputation* callee = module->entry_computation()->root_instruction()->to_apply();
  EXPECT_EQ(callee->root_instruction()->opcode(), HloOpcode::kAbs);
}

TEST(ReplaceEachInstructionTest, NothingLoweredIsNoChange) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  const std::string before = module->ToString();
  absl::StatusOr<bool> changed = ReplaceEachInstruction(
      module.get(), [](HloInstruction*) -> absl::StatusOr<HloInstruction*> { return nullptr; });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(module->ToString(), before);
}

TEST(ReplaceEachInstructionTest, ALoweringErrorIsReturned) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = ReplaceEachInstruction(
      module.get(), [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
        if (instruction->opcode() == HloOpcode::kCall) return absl::UnimplementedError("call");
        return nullptr;
      });
  EXPECT_EQ(changed.status(), absl::UnimplementedError("call"));
}

}  // namespace
}  // namespace axle
