//===- evaluator_test_util.h - Running HLO text in evaluator tests ---------===//
#ifndef AXLE_EVAL_EVALUATOR_TEST_UTIL_H_
#define AXLE_EVAL_EVALUATOR_TEST_UTIL_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::testing_util {

// Parses `text` and evaluates its entry computation with `evaluator`.
inline absl::StatusOr<Literal> EvalWith(HloEvaluator& evaluator, absl::string_view text,
                                        std::vector<const Literal*> args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  return evaluator.Evaluate(**module, args);
}

inline absl::StatusOr<Literal> Eval(absl::string_view text, std::vector<const Literal*> args = {}) {
  HloEvaluator evaluator;
  return EvalWith(evaluator, text, std::move(args));
}

// Evaluates and fails the test (returning an empty literal) on an error.
inline Literal EvalOk(absl::string_view text, std::vector<const Literal*> args = {}) {
  absl::StatusOr<Literal> result = Eval(text, std::move(args));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return Literal();
  return *std::move(result);
}

}  // namespace axle::testing_util

#endif  // AXLE_EVAL_EVALUATOR_TEST_UTIL_H_
