//===- associative_selection_test.cc - Proving a reducer's fold can be split ===//
//
// JAX's argmax and argmin are associative selections, and so is an
// integer max; XLA's builder ArgMax is not (NaN); a sum, a float max, a total-order
// comparison, a comparison across slots and a selection that is not
// associative are not.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/associative_selection.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// Whether the computation `r` of a module made of `reducer` (a
// computation named r) is an associative selection.
bool Associative(const std::string& reducer) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(
      absl::StrCat("HloModule m\n", reducer, "\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n"));
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  for (const HloComputation* computation : (*module)->computations()) {
    if (computation->name() == "r") return IsAssociativeSelection(*computation);
  }
  ADD_FAILURE() << "no computation r";
  return false;
}

// JAX 0.11's argmax (direction=GT) and argmin (LT): NaN first, the lowest
// index on ties.
std::string JaxArgMinMax(const std::string& direction, const std::string& value = "f32",
                         const std::string& compare_attributes = "") {
  return absl::StrCat(R"(r {
  a = )",
                      value, R"([] parameter(0)
  b = )",
                      value, R"([] parameter(2)
  pick = pred[] compare(a, b), direction=)",
                      direction, compare_attributes, R"(
  a_nan = pred[] compare(a, a), direction=NE)",
                      compare_attributes, R"(
  first = pred[] or(pick, a_nan)
  v = )",
                      value, R"([] select(first, a, b)
  eq = pred[] compare(a, b), direction=EQ)",
                      compare_attributes, R"(
  i = s32[] parameter(1)
  j = s32[] parameter(3)
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lower)
  either = pred[] or(first, tie)
  k = s32[] select(either, i, j)
  ROOT t = ()",
                      value, R"([], s32[]) tuple(v, k)
})");
}

TEST(AssociativeSelectionTest, JaxArgmaxAndArgmin) {
  EXPECT_TRUE(Associative(JaxArgMinMax("GT")));
  EXPECT_TRUE(Associative(JaxArgMinMax("LT")));
  EXPECT_TRUE(Associative(JaxArgMinMax("GT", "bf16")));
  EXPECT_TRUE(Associative(JaxArgMinMax("LT", "s64")));
  // The IEEE order, spelled out, is the same.
  EXPECT_TRUE(Associative(JaxArgMinMax("GT", "f32", ", type=FLOAT")));
  // The total order is not modelled (-0 < +0, NaNs ordered).
  EXPECT_FALSE(Associative(JaxArgMinMax("GT", "f32", ", type=TOTALORDER")));
}

TEST(AssociativeSelectionTest, XlaBuilderArgMaxIsNotWithNaN) {
  // xla/hlo/builder/lib/arithmetic.cc: ties take the minimum index, but a
  // NaN loses on the left and wins on the right: for values 1, NaN, 0,
  // op(op(1, NaN), 0) picks 0 and op(1, op(NaN, 0)) picks 1.
  EXPECT_FALSE(Associative(R"(r {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = f32[] select(ge, a, b)
  k = s32[] select(ge, i, j)
  eq = pred[] compare(a, b), direction=EQ
  low = s32[] minimum(i, j)
  w = s32[] select(eq, low, k)
  ROOT t = (f32[], s32[]) tuple(v, w)
})"));
}

TEST(AssociativeSelectionTest, OneSlot) {
  EXPECT_TRUE(Associative(R"(r {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
})"));
  // Float max and a sum are outside the class.
  EXPECT_FALSE(Associative(R"(r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
})"));
  EXPECT_FALSE(Associative(R"(r {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] add(a, b)
})"));
}

TEST(AssociativeSelectionTest, ASelectionThatIsNotAssociative) {
  // The value of the right operand, the index of the left one when its value
  // is smaller: for values a > b < c with a < c, op(op(a, b), c) has b's
  // index and op(a, op(b, c)) a's.
  EXPECT_FALSE(Associative(R"(r {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  k = s32[] select(lt, i, j)
  ROOT t = (f32[], s32[]) tuple(b, k)
})"));
  // A comparison across slots.
  EXPECT_FALSE(Associative(R"(r {
  a = s32[] parameter(0)
  i = s32[] parameter(1)
  b = s32[] parameter(2)
  j = s32[] parameter(3)
  lt = pred[] compare(a, j), direction=LT
  v = s32[] select(lt, a, b)
  k = s32[] select(lt, i, j)
  ROOT t = (s32[], s32[]) tuple(v, k)
})"));
}

}  // namespace
}  // namespace axle
