//===- evaluator_families_test.cc - Every listed elementwise op evaluates ---===//
//
// The switches over every opcode name the elementwise families
// (hlo_opcode_families.h) as whole lists, so a new op of a list compiles
// there without a line of its own; its computation is in the evaluator's
// per-type switches, which answer Unimplemented for an op they lack. This
// runs every op of the unary and binary lists on f32 and on s32 operands:
// each must evaluate on at least one of them.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

#define AXLE_OPCODE_ELEMENT_(e) HloOpcode::e,
const std::vector<HloOpcode> kUnary = {AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_ELEMENT_)};
const std::vector<HloOpcode> kBinary = {AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_ELEMENT_)};
#undef AXLE_OPCODE_ELEMENT_

// The errors of `opcode` on operands of `type` (empty: it evaluated), the
// result's shape inferred by the parser.
std::string EvaluateOn(HloOpcode opcode, int arity, absl::string_view type) {
  std::string text = absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, "[3] parameter(0)\n");
  absl::StrAppend(&text, "  ROOT r = ", HloOpcodeString(opcode), arity == 1 ? "(p)" : "(p, p)",
                  "\n}\n");
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return std::string(module.status().message());
  if (absl::Status verified = VerifyHloModule(**module); !verified.ok()) {
    return std::string(verified.message());
  }
  Literal input(ShapeUtil::MakeShape(type == "f32" ? F32 : S32, {3}));
  if (type == "f32") {
    input.data<float>()[0] = 0.5f;
    input.data<float>()[1] = 1.5f;
    input.data<float>()[2] = -2.0f;
  } else {
    input.data<int32_t>()[0] = 1;
    input.data<int32_t>()[1] = 2;
    input.data<int32_t>()[2] = 7;
  }
  HloEvaluator evaluator;
  absl::StatusOr<Literal> result = evaluator.Evaluate(**module, {&input});
  if (!result.ok()) return std::string(result.status().message());
  if (!ShapeUtil::Compatible(result->shape(),
                             (*module)->entry_computation()->root_instruction()->shape())) {
    return "a result of another shape";
  }
  return "";
}

void ExpectEachEvaluates(const std::vector<HloOpcode>& opcodes, int arity) {
  for (HloOpcode opcode : opcodes) {
    const std::string on_f32 = EvaluateOn(opcode, arity, "f32");
    const std::string on_s32 = EvaluateOn(opcode, arity, "s32");
    EXPECT_TRUE(on_f32.empty() || on_s32.empty())
        << HloOpcodeString(opcode) << ": f32: " << on_f32 << "; s32: " << on_s32;
  }
}

TEST(EvaluatorFamiliesTest, EveryUnaryElementwiseOpEvaluates) {
  ASSERT_GE(kUnary.size(), 30u);
  ExpectEachEvaluates(kUnary, 1);
}

TEST(EvaluatorFamiliesTest, EveryBinaryElementwiseOpEvaluates) {
  ASSERT_GE(kBinary.size(), 15u);
  ExpectEachEvaluates(kBinary, 2);
}

}  // namespace
}  // namespace axle
