//===- hlo_text_compatibility_test.cc - Text that XLA and JAX write -------===//
//
// The HLO text that today's XLA printer and JAX write, and the inputs XLA's
// own parser tests expect to be accepted: each parses to the values it
// means and prints back to text that parses to the same module.
//
//===----------------------------------------------------------------------===//
#include <memory>
#include <string>

#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseAndReturnUnverifiedModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(module).value() : nullptr;
}

std::string ParseError(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseAndReturnUnverifiedModule(text, "test.hlo");
  EXPECT_FALSE(module.ok());
  if (module.ok()) return "";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// The canonical text of `module`, checked to be a fixed point of
// print(parse(.)).
std::string PrintedFixedPoint(const HloModule& module) {
  std::string printed = module.ToString();
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed =
      ParseAndReturnUnverifiedModule(printed, "printed.hlo");
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << printed;
  if (reparsed.ok()) {
    EXPECT_EQ((*reparsed)->ToString(), printed);
  }
  return printed;
}

// A compare of two `type` scalars with `attributes` after its operands.
std::string CompareModule(absl::string_view type, absl::string_view attributes) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT lt = pred[] compare(a, b), ", attributes, "\n}\n");
}

ComparisonType TypeOf(const HloModule& module) {
  return cast<HloCompareInstruction>(module.entry_computation()->root_instruction())->type();
}

// JAX 0.11.2 writes `order=TOTAL` for its NaN-aware sorts; it is the total
// order on floats that XLA spells `type=TOTALORDER`, which the printer writes.
TEST(HloTextCompatibilityTest, CompareOrderTotalIsTheTotalOrderType) {
  std::unique_ptr<HloModule> module = Parse(CompareModule("f32", "direction=LT, order=TOTAL"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TypeOf(*module), ComparisonType::kFloatTotalOrder);
  EXPECT_EQ(cast<HloCompareInstruction>(Find(*module, "lt"))->direction(),
            ComparisonDirection::kLt);
  EXPECT_THAT(PrintedFixedPoint(*module),
              HasSubstr("%lt = pred[] compare(%a, %b), direction=LT, type=TOTALORDER\n"));

  // The same comparison, as XLA prints it.
  module = Parse(CompareModule("bf16", "direction=GE, type=TOTALORDER, order=TOTALORDER"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TypeOf(*module), ComparisonType::kFloatTotalOrder);
}

TEST(HloTextCompatibilityTest, CompareOrderOnIntegersAndPartialFloats) {
  // Integers are totally ordered by their default type: nothing to print.
  std::unique_ptr<HloModule> module = Parse(CompareModule("s32", "direction=LT, order=TOTAL"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TypeOf(*module), ComparisonType::kDefault);
  EXPECT_THAT(PrintedFixedPoint(*module), HasSubstr("compare(%a, %b), direction=LT\n"));
  module = Parse(CompareModule("u8", "direction=LT, type=UNSIGNED, order=TOTAL"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TypeOf(*module), ComparisonType::kUnsigned);

  // A partial order on floats is IEEE comparison, the default.
  module = Parse(CompareModule("f64", "direction=EQ, order=PARTIAL"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TypeOf(*module), ComparisonType::kDefault);
  EXPECT_THAT(PrintedFixedPoint(*module), HasSubstr("compare(%a, %b), direction=EQ\n"));
}

TEST(HloTextCompatibilityTest, CompareOrderThatContradictsIsLocated) {
  EXPECT_THAT(ParseError(CompareModule("f32", "direction=LT, type=FLOAT, order=TOTAL")),
              HasSubstr("test.hlo:5:67: error: order=TOTAL contradicts type=FLOAT"));
  EXPECT_THAT(ParseError(CompareModule("s32", "direction=LT, order=PARTIAL")),
              HasSubstr("error: order=PARTIAL needs a FLOAT comparison, but this one is SIGNED "
                        "(the default for s32)"));
  EXPECT_THAT(ParseError(CompareModule("f32", "direction=LT, type=TOTALORDER, order=PARTIAL")),
              HasSubstr("but this one is TOTALORDER"));
  EXPECT_THAT(ParseError(CompareModule("f32", "direction=LT, order=total")),
              HasSubstr("unknown value total"));
}

}  // namespace
}  // namespace axle
