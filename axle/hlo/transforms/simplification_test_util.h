//===- simplification_test_util.h - Checks shared by the simplifier tests --===//
//
// For the tests of algsimp, reshape-mover and layout-normalization: parse HLO
// text, run a pass on a copy, verify the result, and check that the reference
// interpreter gives the same values before and after on arguments that
// include the awkward floats (-0, NaN, infinities).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_SIMPLIFICATION_TEST_UTIL_H_
#define AXLE_HLO_TRANSFORMS_SIMPLIFICATION_TEST_UTIL_H_

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/pass/hlo_pass_interface.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::test {

// Deterministic arguments: small integers (negative ones too), alternating
// pred, and floats cycling through ordinary and special values.
inline Literal MakeTestArgument(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  static const double kFloats[] = {1.5,
                                   -0.0,
                                   2.0,
                                   -3.25,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   0.0,
                                   7.0,
                                   std::numeric_limits<double>::infinity(),
                                   0.5,
                                   -1.0,
                                   -std::numeric_limits<double>::infinity(),
                                   3.0};
  PrimitiveType type = shape.element_type();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    int64_t k = i * 7 + seed * 3;
    if (type == PRED) {
      literal.SetIntegral(i, k % 2);
    } else if (primitive_util::IsIntegralType(type)) {
      literal.SetIntegral(i, primitive_util::IsUnsignedIntegralType(type) ? k % 11 : k % 11 - 5);
    } else if (primitive_util::IsComplexType(type)) {
      literal.SetFromComplex128(i, complex128(kFloats[k % 12], kFloats[(k + 5) % 12]));
    } else {
      literal.SetFromDouble(i, kFloats[k % 12]);
    }
  }
  return literal;
}

inline absl::StatusOr<Literal> EvaluateWithTestArguments(const HloModule& module, int64_t seed) {
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : module.entry_computation()->parameter_instructions()) {
    arguments.push_back(MakeTestArgument(parameter->shape(), seed + parameter->unique_id()));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  return evaluator.Evaluate(module, pointers);
}

inline std::unique_ptr<HloModule> ParseOrDie(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  return std::move(module).value();
}

// Runs `pass` on the module parsed from `text`, expecting `expect_changed`;
// verifies the result and compares its values with the original's (floats
// within a tight bound, -0 == +0 and NaN == NaN; everything else exactly).
// Returns the rewritten module.
inline std::unique_ptr<HloModule> RunPassAndCompare(HloPassInterface& pass, absl::string_view text,
                                                    bool expect_changed = true) {
  std::unique_ptr<HloModule> original = ParseOrDie(text);
  absl::Status original_ok = VerifyHloModule(*original);
  EXPECT_TRUE(original_ok.ok()) << original_ok;
  std::unique_ptr<HloModule> module = original->Clone("");
  absl::StatusOr<bool> changed = pass.Run(module.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (changed.ok()) {
    EXPECT_EQ(*changed, expect_changed) << module->ToString();
  }
  absl::Status verified = VerifyHloModule(*module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << module->ToString();
  for (int64_t seed : {0, 5}) {
    absl::StatusOr<Literal> before = EvaluateWithTestArguments(*original, seed);
    absl::StatusOr<Literal> after = EvaluateWithTestArguments(*module, seed);
    EXPECT_TRUE(before.ok()) << before.status();
    EXPECT_TRUE(after.ok()) << after.status() << "\n" << module->ToString();
    if (before.ok() && after.ok()) {
      absl::Status near = LiteralsNear(*before, *after, ErrorSpec(1e-6, 1e-6));
      EXPECT_TRUE(near.ok()) << near << "\n" << module->ToString();
    }
  }
  return module;
}

// The root's operand chain printed as "opcode(opcode(...), ...)", names and
// shapes left out: a compact structural expectation.
inline std::string Structure(const HloInstruction* instruction) {
  std::string out(HloOpcodeString(instruction->opcode()));
  if (instruction->operand_count() == 0) return out;
  out += "(";
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    if (i > 0) out += ", ";
    out += Structure(instruction->operand(i));
  }
  return out + ")";
}
inline std::string RootStructure(const HloModule& module) {
  return Structure(module.entry_computation()->root_instruction());
}

}  // namespace axle::test

#endif  // AXLE_HLO_TRANSFORMS_SIMPLIFICATION_TEST_UTIL_H_
