//===- hlo_text_compatibility_test.cc - Text that XLA and JAX write -------===//
//
// The HLO text that today's XLA printer and JAX write, and the inputs XLA's
// own parser tests expect to be accepted: each parses to the values it
// means and prints back to text that parses to the same module.
//
//===----------------------------------------------------------------------===//
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
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

// Today's XLA gives the inverse and hyperbolic functions a result_accuracy
// too (acos, acosh, asin, asinh, atanh, cosh, sinh, besides exp, log, ...).
TEST(HloTextCompatibilityTest, ResultAccuracyOnEveryTranscendentalXlaAccepts) {
  for (absl::string_view op :
       {"acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh", "exponential", "tanh"}) {
    SCOPED_TRACE(op);
    std::unique_ptr<HloModule> module = Parse(
        absl::StrCat("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] ", op,
                     "(x), result_accuracy={tolerance={atol=0.5, rtol=0.25, ulps=2}}\n}\n"));
    ASSERT_NE(module, nullptr);
    const RawAttribute* accuracy = Find(*module, "y")->FindRawAttribute("result_accuracy");
    ASSERT_NE(accuracy, nullptr);
    EXPECT_EQ(accuracy->value, "{tolerance={atol=0.5, rtol=0.25, ulps=2}}");
    EXPECT_THAT(PrintedFixedPoint(*module),
                HasSubstr(absl::StrCat(op,
                                       "(%x), result_accuracy={tolerance={atol=0.5, rtol=0.25, "
                                       "ulps=2}}\n")));
  }
  // Not on ops without one, as in XLA.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                         "  ROOT y = f32[4] abs(x), result_accuracy={mode=highest}\n}\n"),
              HasSubstr("unexpected attribute \"result_accuracy\""));
}

// XLA's parser test ConstantUnsignedUnderflow expects `u64[] constant(-1)` to
// parse: XLA reads the value as an int64 and converts it, so it is 2^64-1.
TEST(HloTextCompatibilityTest, NegativeU64ConstantWrapsAsInXla) {
  std::unique_ptr<HloModule> module =
      Parse("HloModule m\nENTRY e {\n  ROOT c = u64[2] constant({-1, -2})\n}\n");
  ASSERT_NE(module, nullptr);
  const Literal& literal = cast<HloConstantInstruction>(Find(*module, "c"))->literal();
  EXPECT_EQ(literal.data<uint64_t>()[0], 18446744073709551615u);
  EXPECT_EQ(literal.data<uint64_t>()[1], 18446744073709551614u);
  EXPECT_THAT(PrintedFixedPoint(*module),
              HasSubstr("constant({18446744073709551615, 18446744073709551614})"));
  // Narrower unsigned types still reject negatives, as XLA does.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT c = u32[] constant(-1)\n}\n"),
              HasSubstr("test.hlo:3:27: error: value -1 is out of range for literal's primitive "
                        "type U32 namely [0, 4294967295]."));
}

// An operand written as a shape alone (XLA's hlo_module_splitting_test has
// `add(f32[] %fusion, f32[], %res.23)`): XLA's parser goes on without it.
TEST(HloTextCompatibilityTest, OperandWithOnlyAShapeIsLeftOutAsInXla) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT sum = f32[] add(f32[] a, f32[], b)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* sum = Find(*module, "sum");
  ASSERT_EQ(sum->operand_count(), 2);
  EXPECT_EQ(sum->operand(0), Find(*module, "a"));
  EXPECT_EQ(sum->operand(1), Find(*module, "b"));
  EXPECT_THAT(PrintedFixedPoint(*module), HasSubstr("%sum = f32[] add(%a, %b)\n"));

  // The operands that remain are still counted.
  EXPECT_THAT(ParseError(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT sum = f32[] add(a, f32[])
})"),
              HasSubstr("test.hlo:4:23: error: expects 2 operands, but has 1 operands"));
}

}  // namespace
}  // namespace axle
