//===- value_slot_test.cc ---------------------------------------------------===//
//
// Parameter and constant slots carry their sizes, one per array leaf (the
// leaves ArrayLeaves lists); plumbing forwards its operands' leaves (a tuple
// each operand at its index, get-tuple-element the element, bitcast-like ops
// the whole operand); other ops forward nothing.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/value_slot.h"

#include "axle/core/literal.h"
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

TEST(ValueSlotTest, ArrayLeavesSkipTokensAndTupleNodes) {
  const Shape shape =
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {2}), ShapeUtil::MakeTokenShape(),
                                 ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(S8, {3})})});
  std::vector<std::pair<ShapeIndex, Shape>> leaves = ArrayLeaves(shape);
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].first, ShapeIndex({0}));
  EXPECT_EQ(leaves[0].second, ShapeUtil::MakeShape(F32, {2}));
  EXPECT_EQ(leaves[1].first, ShapeIndex({2, 0}));
  EXPECT_EQ(leaves[1].second, ShapeUtil::MakeShape(S8, {3}));
  EXPECT_TRUE(ArrayLeaves(ShapeUtil::MakeTokenShape()).empty());
}

TEST(ValueSlotTest, SourceSlotsOfParametersAndConstantsPerArrayLeaf) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = (f32[2], s32[3]) parameter(0)
  c = (s8[4], f32[]) constant(({1, 2, 3, 4}, 5))
  ROOT t = ((f32[2], s32[3]), (s8[4], f32[])) tuple(p, c)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& tuple = *(*module)->entry_computation()->root_instruction();
  std::vector<Literal> constants;
  constants.push_back(LiteralUtil::CreateR0<float>(0));  // one the program had already
  std::vector<std::pair<ShapeIndex, ValueSlot>> parameter =
      SourceSlots(*tuple.operand(0), constants);
  ASSERT_EQ(parameter.size(), 2u);
  EXPECT_EQ(parameter[1].first, ShapeIndex({1}));
  EXPECT_EQ(parameter[1].second.kind, ValueSlot::Kind::kParameter);
  EXPECT_EQ(parameter[1].second.parameter, 0);
  EXPECT_EQ(parameter[1].second.parameter_index, ShapeIndex({1}));
  EXPECT_EQ(parameter[1].second.size_bytes, 12);
  EXPECT_EQ(constants.size(), 1u);
  std::vector<std::pair<ShapeIndex, ValueSlot>> constant =
      SourceSlots(*tuple.operand(1), constants);
  ASSERT_EQ(constant.size(), 2u);
  ASSERT_EQ(constants.size(), 3u);
  EXPECT_EQ(constant[0].first, ShapeIndex({0}));
  EXPECT_EQ(constant[0].second.kind, ValueSlot::Kind::kConstant);
  EXPECT_EQ(constant[0].second.constant, 1);
  EXPECT_EQ(constant[0].second.size_bytes, 4);
  EXPECT_EQ(constants[1], LiteralUtil::CreateR1<int8_t>({1, 2, 3, 4}));
  EXPECT_EQ(constant[1].second.constant, 2);
  EXPECT_EQ(constants[2], LiteralUtil::CreateR0<float>(5));
  EXPECT_TRUE(SourceSlots(tuple, constants).empty());  // neither
  EXPECT_EQ(constants.size(), 3u);
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
