//===- hlo_instruction_test.cc - HloInstruction::Create and its guard -------===//
#include "axle/hlo/ir/hlo_instruction.h"

#include "axle/core/shape_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(HloInstruction, CreateMakesAnOpWithoutAttributes) {
  const Shape shape = ShapeUtil::MakeShape(F32, {4});
  std::unique_ptr<HloInstruction> a = HloInstruction::Create(HloOpcode::kTuple, shape, {});
  std::unique_ptr<HloInstruction> sum =
      HloInstruction::Create(HloOpcode::kAdd, shape, {a.get(), a.get()});
  EXPECT_EQ(sum->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(sum->operand_count(), 2);
  EXPECT_EQ(sum->operand(0), a.get());
}

TEST(HloInstructionDeathTest, CreateRefusesAnOpWhoseAttributesNeedASubclass) {
  const Shape shape = ShapeUtil::MakeShape(F32, {4});
  EXPECT_DEATH(HloInstruction::Create(HloOpcode::kParameter, shape, {}),
               "parameter has attributes");
  EXPECT_DEATH(HloInstruction::Create(HloOpcode::kBroadcast, shape, {}),
               "broadcast has attributes");
}

}  // namespace
}  // namespace axle
