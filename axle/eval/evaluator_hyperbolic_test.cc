// The inverse-trigonometric and hyperbolic opcodes (acos, acosh, asin,
// asinh, atan, atanh, cosh, sinh): parsed, shape-checked and evaluated like
// XLA, element by element with the C library's functions.
#include <cmath>

#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(EvaluatorHyperbolicTest, EveryOpMatchesTheCLibrary) {
  struct Case {
    const char* op;
    double (*fn)(double);
    float input;
  };
  const Case cases[] = {
      {"acos", std::acos, 0.25f},  {"acosh", std::acosh, 1.5f}, {"asin", std::asin, -0.5f},
      {"asinh", std::asinh, 2.0f}, {"atan", std::atan, 3.0f},   {"atanh", std::atanh, 0.75f},
      {"cosh", std::cosh, -1.25f}, {"sinh", std::sinh, 0.5f},
  };
  for (const Case& c : cases) {
    std::string text =
        std::string("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] ") +
        c.op + "(p)\n}\n";
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << c.op << ": " << module.status();
    ASSERT_TRUE(VerifyHloModule(**module).ok()) << c.op;
    EXPECT_NE((*module)->ToString().find(std::string(" ") + c.op + "("), std::string::npos);
    Literal input(ShapeUtil::MakeShape(F32, {2}));
    input.data<float>()[0] = c.input;
    input.data<float>()[1] = 2.5f;  // outside the domain of acos/asin/atanh: NaN
    HloEvaluator evaluator;
    auto result = evaluator.Evaluate(**module, {&input});
    ASSERT_TRUE(result.ok()) << c.op << ": " << result.status();
    EXPECT_FLOAT_EQ(result->data<float>()[0], static_cast<float>(c.fn(c.input))) << c.op;
    float outside = result->data<float>()[1];
    float expected = static_cast<float>(std::fpclassify(c.fn(2.5)) == FP_NAN ? NAN : c.fn(2.5));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(outside)) << c.op;
    } else {
      EXPECT_FLOAT_EQ(outside, expected) << c.op;
    }
  }
}

TEST(EvaluatorHyperbolicTest, IntegersAreRejected) {
  auto module = ParseAndReturnUnverifiedModule(
      "HloModule m\nENTRY e {\n  p = s32[2] parameter(0)\n  ROOT r = s32[2] acos(p)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_FALSE(VerifyHloModule(**module).ok());
}

}  // namespace
}  // namespace axle
