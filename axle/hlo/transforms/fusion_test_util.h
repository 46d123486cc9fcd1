//===- fusion_test_util.h - Checks the fusion pass tests share -------------===//
//
// RunAndCompare(text, pass): parses the module, runs the pass on a copy,
// verifies the result, prints and reparses it, and evaluates the original
// and the fused module on the same generated arguments; the results must be
// bit for bit equal. Returns the fused module for the test's own checks.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_FUSION_TEST_UTIL_H_
#define AXLE_HLO_TRANSFORMS_FUSION_TEST_UTIL_H_

#include <memory>
#include <vector>

#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/pass/hlo_pass_interface.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::fusion_test {

// Deterministic arguments: floats in [-1, 1), integers in [0, 10), pred
// alternating.
inline Literal MakeArgument(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seed + 1);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double unit = static_cast<double>(state >> 40) / static_cast<double>(1ull << 24);
    if (primitive_util::IsFloatingPointType(shape.element_type())) {
      literal.SetFromDouble(i, 2 * unit - 1);
    } else {
      literal.SetIntegral(i, static_cast<int64_t>(unit * 10));
    }
  }
  return literal;
}

inline absl::StatusOr<Literal> Evaluate(const HloModule& module) {
  std::vector<Literal> arguments;
  const HloComputation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    arguments.push_back(MakeArgument(entry->parameter_instruction(i)->shape(), i));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  return evaluator.Evaluate(module, pointers);
}

inline std::unique_ptr<HloModule> RunAndCompare(absl::string_view text, HloPassInterface& pass,
                                                bool expect_change = true) {
  auto original = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(original.ok()) << original.status();
  if (!original.ok()) return nullptr;
  std::unique_ptr<HloModule> fused = (*original)->Clone("fused");
  auto changed = pass.Run(fused.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok()) return nullptr;
  EXPECT_EQ(*changed, expect_change) << fused->ToString();
  absl::Status verified = VerifyHloModule(*fused);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << fused->ToString();
  auto reparsed = ParseAndReturnUnverifiedModule(fused->ToString());
  EXPECT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << fused->ToString();
  if (reparsed.ok()) {
    EXPECT_TRUE(VerifyHloModule(**reparsed).ok());
    EXPECT_EQ((*reparsed)->ToString(), fused->ToString());
  }
  auto expected = Evaluate(**original);
  auto actual = Evaluate(*fused);
  EXPECT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(actual.ok()) << actual.status();
  if (expected.ok() && actual.ok()) {
    EXPECT_TRUE(*expected == *actual) << "before: " << *expected << "\nafter: " << *actual;
  }
  return fused;
}

// The entry's instructions of `opcode`.
inline std::vector<HloInstruction*> EntryInstructions(const HloModule& module, HloOpcode opcode) {
  std::vector<HloInstruction*> out;
  for (HloInstruction* instruction : module.entry_computation()->MakeInstructionPostOrder()) {
    if (instruction->opcode() == opcode) out.push_back(instruction);
  }
  return out;
}

// The opcodes of a fusion's fused computation, in post order, parameters
// left out: "broadcast,add,exponential".
inline std::string FusedOpcodes(const HloInstruction& fusion) {
  std::string out;
  for (const HloInstruction* instruction : cast<HloFusionInstruction>(&fusion)
                                               ->fused_instructions_computation()
                                               ->MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    if (!out.empty()) out += ",";
    out += std::string(HloOpcodeString(instruction->opcode()));
  }
  return out;
}

}  // namespace axle::fusion_test

#endif  // AXLE_HLO_TRANSFORMS_FUSION_TEST_UTIL_H_
