//===- value_slot_test.cc ---------------------------------------------------===//
//
// Parameter and constant slots carry their sizes; plumbing forwards its
// operands' leaves (a tuple each operand at its index, get-tuple-element
// the element, bitcast-like ops the whole operand); other ops forward
// nothing.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/value_slot.h"

#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(ValueSlotTest, ParameterAndConstantSlots) {
  const Shape shape = ShapeUtil::MakeShape(F32, {2, 3});
  ValueSlot parameter = ParameterSlot(2, {1}, shape);
  EXPECT_EQ(parameter.kind, ValueSlot::Kind::kParameter);
  EXPECT_EQ(parameter.parameter, 2);
  EXPECT_EQ(parameter.parameter_index, ShapeIndex({1}));
  EXPECT_EQ(parameter.size_bytes, 24);
  ValueSlot constant = ConstantSlot(5, ShapeUtil::MakeShape(S8, {7}));
  EXPECT_EQ(constant.kind, ValueSlot::Kind::kConstant);
  EXPECT_EQ(constant.constant, 5);
  EXPECT_EQ(constant.size_bytes, 7);
}

TEST(ValueSlotTest, PlumbingForwardsItsOperandsLeaves) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = s32[2] parameter(1)
  t = (f32[4], s32[2]) tuple(a, b)
  g = s32[2] get-tuple-element(t), index=1
  c = f32[2,2] bitcast(a)
  ROOT n = f32[4] negate(a)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  auto find = [&](absl::string_view name) -> const HloInstruction& {
    for (const HloInstruction* instruction : entry.instructions()) {
      if (instruction->name() == name) return *instruction;
    }
    ADD_FAILURE() << "no " << name;
    return *entry.root_instruction();
  };
  std::optional<std::vector<ForwardedLeaf>> tuple = ForwardedLeaves(find("t"));
  ASSERT_TRUE(tuple.has_value());
  ASSERT_EQ(tuple->size(), 2u);
  EXPECT_EQ((*tuple)[1].operand, &find("b"));
  EXPECT_EQ((*tuple)[1].operand_index, ShapeIndex());
  EXPECT_EQ((*tuple)[1].index, ShapeIndex({1}));
  std::optional<std::vector<ForwardedLeaf>> element = ForwardedLeaves(find("g"));
  ASSERT_TRUE(element.has_value());
  ASSERT_EQ(element->size(), 1u);
  EXPECT_EQ((*element)[0].operand, &find("t"));
  EXPECT_EQ((*element)[0].operand_index, ShapeIndex({1}));
  EXPECT_EQ((*element)[0].index, ShapeIndex());
  std::optional<std::vector<ForwardedLeaf>> bitcast = ForwardedLeaves(find("c"));
  ASSERT_TRUE(bitcast.has_value());
  ASSERT_EQ(bitcast->size(), 1u);
  EXPECT_EQ((*bitcast)[0].operand, &find("a"));
  EXPECT_FALSE(ForwardedLeaves(find("n")).has_value());
  EXPECT_FALSE(ForwardedLeaves(find("a")).has_value());
}

}  // namespace
}  // namespace axle
