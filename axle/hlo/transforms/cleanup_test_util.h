//===- cleanup_test_util.h - Shared helpers of the cleanup pass tests ------===//
//
// Parse HLO text, run a pass, count what is left, and check that the module
// computes the same values (bit for bit, on the interpreter) before and
// after.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_CLEANUP_TEST_UTIL_H_
#define AXLE_HLO_TRANSFORMS_CLEANUP_TEST_UTIL_H_

#include <memory>
#include <vector>

#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/pass/hlo_pass_interface.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cleanup_test {

inline std::unique_ptr<HloModule> Parse(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Runs `pass`, checks the result verifies, and returns whether it changed.
inline bool RunPass(HloPassInterface& pass, HloModule* module) {
  absl::StatusOr<bool> changed = pass.Run(module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  absl::Status verified = VerifyHloModule(*module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << module->ToString();
  return changed.ok() && *changed;
}

inline int64_t CountOpcode(const HloModule& module, HloOpcode opcode) {
  int64_t n = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      n += instruction->opcode() == opcode ? 1 : 0;
    }
  }
  return n;
}

// Arguments 1, 2, 3, ... (mod 7, as each element type allows) per element.
inline std::vector<Literal> MakeArguments(const HloModule& module) {
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : module.entry_computation()->parameter_instructions()) {
    Literal literal(parameter->shape());
    if (parameter->shape().IsArray()) {
      for (int64_t i = 0; i < literal.element_count(); ++i) {
        literal.SetFromDouble(i, static_cast<double>((i + arguments.size()) % 7 + 1));
      }
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

inline Literal Evaluate(const HloModule& module) {
  std::vector<Literal> arguments = MakeArguments(module);
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  absl::StatusOr<Literal> result = evaluator.Evaluate(module, pointers);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(result).value() : Literal();
}

// Runs `pass` on `text` and checks the values agree with the unoptimized
// module's. Returns the optimized module.
inline std::unique_ptr<HloModule> RunAndCompare(HloPassInterface& pass, absl::string_view text,
                                                bool expect_change = true) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (module == nullptr) return nullptr;
  Literal before = Evaluate(*module);
  EXPECT_EQ(RunPass(pass, module.get()), expect_change) << module->ToString();
  Literal after = Evaluate(*module);
  EXPECT_EQ(before, after) << "before: " << before.ToString() << "\nafter: " << after.ToString()
                           << "\n"
                           << module->ToString();
  return module;
}

}  // namespace axle::cleanup_test

#endif  // AXLE_HLO_TRANSFORMS_CLEANUP_TEST_UTIL_H_
