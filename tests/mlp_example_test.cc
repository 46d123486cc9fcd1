//===- mlp_example_test.cc - The demo program computes the right numbers ---===//
//
// Runs examples/mlp.hlo on the interpreter and checks it against the same
// MLP written as plain loops.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <vector>

#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"

namespace axle {
namespace {

std::vector<float> Values(const Literal& l) {
  auto span = l.data<float>();
  return std::vector<float>(span.begin(), span.end());
}

TEST(MlpExample, MatchesAPlainLoopImplementation) {
  std::string text = testing::ReadWholeFile(std::string(AXLE_SOURCE_DIR) + "/examples/mlp.hlo");
  auto module = ParseAndReturnUnverifiedModule(text, "mlp.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(VerifyHloModule(**module).ok());

  auto arguments = MakeFakeArguments(**module, 3);
  ASSERT_TRUE(arguments.ok());
  std::vector<const Literal*> pointers;
  for (const Literal& a : *arguments) pointers.push_back(&a);
  HloEvaluator evaluator;
  auto result = evaluator.Evaluate(**module, pointers);
  ASSERT_TRUE(result.ok()) << result.status();

  std::vector<float> x = Values((*arguments)[0]), w1 = Values((*arguments)[1]),
                     b1 = Values((*arguments)[2]), w2 = Values((*arguments)[3]),
                     b2 = Values((*arguments)[4]);
  Literal expected(ShapeUtil::MakeShape(F32, {4, 3}));
  for (int r = 0; r < 4; ++r) {
    float h[16];
    for (int j = 0; j < 16; ++j) {
      float acc = 0;
      for (int k = 0; k < 8; ++k) acc += x[r * 8 + k] * w1[k * 16 + j];
      h[j] = std::max(acc + b1[j], 0.0f);
    }
    float logits[3], max_logit = -INFINITY, sum = 0;
    for (int j = 0; j < 3; ++j) {
      float acc = 0;
      for (int k = 0; k < 16; ++k) acc += h[k] * w2[k * 3 + j];
      logits[j] = acc + b2[j];
      max_logit = std::max(max_logit, logits[j]);
    }
    for (int j = 0; j < 3; ++j) sum += std::exp(logits[j] - max_logit);
    for (int j = 0; j < 3; ++j) expected.Set<float>({r, j}, std::exp(logits[j] - max_logit) / sum);
  }
  EXPECT_TRUE(LiteralsNear(expected, *result, ErrorSpec{1e-6, 1e-5}).ok())
      << LiteralsNear(expected, *result, ErrorSpec{1e-6, 1e-5});
  // Each row of probabilities sums to one.
  for (int r = 0; r < 4; ++r) {
    float total = 0;
    for (int j = 0; j < 3; ++j) total += result->Get<float>({r, j});
    EXPECT_NEAR(total, 1.0f, 1e-6);
  }
}

}  // namespace
}  // namespace axle
