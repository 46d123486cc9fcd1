//===- all_reduce_promotion_test.cc - Collective reductions widened -------===//
//
// What the pass promotes (bf16 all-reduce and reduce-scatter by add, max,
// a reversed subtract; the GPU's s16 list), what it leaves (f32, f16, the
// async start, tuple-shaped all-reduce, reducers other than one op of the
// parameters), and the values on the interpreter's participants: four
// bf16 terms that lose a bit each when folded in bf16 round once, and a
// single participant's value comes back unchanged.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/all_reduce_promotion.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/eval/participants.h"
#include "axle/hlo/transforms/cleanup_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::Parse;
using cleanup_test::RunPass;

// `op` of a `t` all-reduce (or reduce-scatter) over 4 replicas.
std::string Module(const std::string& t, const std::string& collective, const std::string& root) {
  const std::string result = collective == "reduce-scatter" ? "[2]" : "[8]";
  const std::string attributes = collective == "reduce-scatter" ? ", dimensions={0}" : "";
  return absl::StrCat("HloModule m, replica_count=4\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                      "[] parameter(1)\n  ROOT c = ", t, "[] ", root, "\n}\nENTRY e {\n  x = ", t,
                      "[8] parameter(0)\n  ROOT s = ", t, result, " ", collective,
                      "(x), replica_groups={}", attributes, ", to_apply=r\n}\n");
}

std::vector<std::pair<PrimitiveType, PrimitiveType>> Cpu() {
  return AllReducePromotion::CpuTypes();
}

TEST(AllReducePromotionTest, PromotesBf16AllReduceAndReduceScatter) {
  for (const std::string collective : {"all-reduce", "reduce-scatter"}) {
    for (const std::string root : {"add(a, b)", "maximum(a, b)", "subtract(b, a)"}) {
      SCOPED_TRACE(absl::StrCat(collective, " ", root));
      std::unique_ptr<HloModule> module = Parse(Module("bf16", collective, root));
      ASSERT_NE(module, nullptr);
      AllReducePromotion pass(Cpu());
      EXPECT_TRUE(RunPass(pass, module.get()));
      const HloInstruction* convert = module->entry_computation()->root_instruction();
      ASSERT_EQ(convert->opcode(), HloOpcode::kConvert);
      EXPECT_EQ(convert->shape().element_type(), BF16);
      const HloInstruction* wide = convert->operand(0);
      EXPECT_EQ(HloOpcodeString(wide->opcode()), collective);
      EXPECT_EQ(wide->shape().element_type(), F32);
      EXPECT_EQ(wide->shape().dimensions(), convert->shape().dimensions());
      ASSERT_EQ(wide->operand(0)->opcode(), HloOpcode::kConvert);
      EXPECT_EQ(wide->operand(0)->shape().element_type(), F32);
      EXPECT_EQ(wide->operand(0)->operand(0)->opcode(), HloOpcode::kParameter);
      // The same op on f32 scalars, its operands in the original order.
      const HloComputation* reducer = wide->to_apply();
      const HloInstruction* op = reducer->root_instruction();
      EXPECT_EQ(op->shape(), ShapeUtil::MakeScalarShape(F32));
      EXPECT_EQ(HloOpcodeString(op->opcode()), root.substr(0, root.find('(')));
      const bool reversed = root == "subtract(b, a)";
      EXPECT_EQ(op->operand(0), reducer->parameter_instruction(reversed ? 1 : 0));
      EXPECT_EQ(op->operand(1), reducer->parameter_instruction(reversed ? 0 : 1));
    }
  }
}

TEST(AllReducePromotionTest, LeavesOtherTypesAndShapes) {
  std::vector<std::string> modules = {
      Module("f32", "all-reduce", "add(a, b)"), Module("f16", "all-reduce", "add(a, b)"),
      Module("s16", "all-reduce", "add(a, b)"),
      // Not one op of the two parameters.
      Module("bf16", "all-reduce", "add(a, a)"),
      R"(HloModule m, replica_count=2
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  s = bf16[] add(a, b)
  ROOT c = bf16[] multiply(s, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  ROOT s = bf16[8] all-reduce(x), replica_groups={}, to_apply=r
})",
      // Tuple-shaped (variadic), and the async start: XLA leaves them too.
      R"(HloModule m, replica_count=2
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  y = bf16[4] parameter(1)
  ROOT s = (bf16[8], bf16[4]) all-reduce(x, y), replica_groups={}, to_apply=r
})",
      R"(HloModule m, replica_count=2
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  s = bf16[8] all-reduce-start(x), replica_groups={}, to_apply=r
  ROOT d = bf16[8] all-reduce-done(s)
})"};
  for (const std::string& text : modules) {
    SCOPED_TRACE(text);
    std::unique_ptr<HloModule> module = Parse(text);
    ASSERT_NE(module, nullptr);
    AllReducePromotion pass(Cpu());
    EXPECT_FALSE(RunPass(pass, module.get()));
    EXPECT_EQ(CountOpcode(*module, HloOpcode::kConvert), 0);
  }
}

TEST(AllReducePromotionTest, TheGpuListWidensSixteenBitIntegers) {
  std::unique_ptr<HloModule> module = Parse(Module("s16", "all-reduce", "add(a, b)"));
  ASSERT_NE(module, nullptr);
  AllReducePromotion pass(AllReducePromotion::GpuTypes());
  EXPECT_TRUE(RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->operand(0)->shape().element_type(), S32);
  EXPECT_EQ(root->operand(0)->to_apply()->root_instruction()->shape().element_type(), S32);
}

TEST(AllReducePromotionTest, OneReducerServesEveryCollectiveThatUsesIt) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m, replica_count=2
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  s = bf16[8] all-reduce(x), replica_groups={}, to_apply=r
  t = bf16[4] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=r
  ROOT u = (bf16[8], bf16[4]) tuple(s, t)
})");
  ASSERT_NE(module, nullptr);
  AllReducePromotion pass(Cpu());
  EXPECT_TRUE(RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0)->operand(0)->to_apply(), root->operand(1)->operand(0)->to_apply());
}

// Every participant's result of `text` with participant i's parameter
// bf16 values[i] in every element.
std::vector<std::vector<float>> RunParticipants(const HloModule& module, int64_t replicas,
                                                const std::vector<float>& values) {
  std::vector<Literal> inputs;
  const Shape& shape = module.entry_computation()->parameter_instruction(0)->shape();
  for (int64_t i = 0; i < replicas; ++i) {
    Literal wide(Shape(F32, shape.dimensions()));
    for (float& element : wide.data<float>()) element = values[i];
    absl::StatusOr<Literal> narrow = wide.Convert(BF16);
    EXPECT_TRUE(narrow.ok()) << narrow.status();
    if (!narrow.ok()) return {};
    inputs.push_back(*std::move(narrow));
  }
  std::vector<std::vector<const Literal*>> args(replicas);
  for (int64_t i = 0; i < replicas; ++i) args[i] = {&inputs[i]};
  ParticipantsOptions options;
  options.replica_count = replicas;
  absl::StatusOr<std::vector<Literal>> results = EvaluateParticipants(module, args, options);
  EXPECT_TRUE(results.ok()) << results.status();
  if (!results.ok()) return {};
  std::vector<std::vector<float>> out;
  for (const Literal& result : *results) {
    absl::StatusOr<Literal> wide = result.Convert(F32);
    EXPECT_TRUE(wide.ok()) << wide.status();
    if (!wide.ok()) return {};
    auto data = wide->data<float>();
    out.emplace_back(data.begin(), data.end());
  }
  return out;
}

TEST(AllReducePromotionTest, ABf16SumOverParticipantsRoundsOnce) {
  for (const std::string collective : {"all-reduce", "reduce-scatter"}) {
    SCOPED_TRACE(collective);
    std::unique_ptr<HloModule> module = Parse(Module("bf16", collective, "add(a, b)"));
    ASSERT_NE(module, nullptr);
    // 256 + 1 rounds back to 256 in bf16 (8 significant bits), three times;
    // in f32 the sum is 259, which rounds to 260 (ties to even).
    const std::vector<float> values = {256, 1, 1, 1};
    const size_t n = collective == "reduce-scatter" ? 2 : 8;
    EXPECT_EQ(RunParticipants(*module, 4, values),
              std::vector<std::vector<float>>(4, std::vector<float>(n, 256.0f)));
    AllReducePromotion pass(Cpu());
    ASSERT_TRUE(RunPass(pass, module.get()));
    EXPECT_EQ(RunParticipants(*module, 4, values),
              std::vector<std::vector<float>>(4, std::vector<float>(n, 260.0f)));
  }
}

TEST(AllReducePromotionTest, ASingleParticipantKeepsItsValue) {
  // One replica, and four replicas in groups of one.
  for (const auto& [replicas, groups] :
       std::vector<std::pair<int64_t, std::string>>{{1, "{}"}, {4, "{{0},{1},{2},{3}}"}}) {
    SCOPED_TRACE(groups);
    std::unique_ptr<HloModule> module = Parse(absl::StrCat("HloModule m, replica_count=", replicas,
                                                           R"(
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  ROOT s = bf16[8] all-reduce(x), replica_groups=)",
                                                           groups, ", to_apply=r\n}\n"));
    ASSERT_NE(module, nullptr);
    AllReducePromotion pass(Cpu());
    ASSERT_TRUE(RunPass(pass, module.get()));
    const std::vector<float> values = {257.5f, -3.25f, 1e30f, 0.1f};
    std::vector<std::vector<float>> expected;
    for (int64_t i = 0; i < replicas; ++i) {
      absl::StatusOr<Literal> rounded = LiteralUtil::CreateR0<float>(values[i]).Convert(BF16);
      ASSERT_TRUE(rounded.ok());
      absl::StatusOr<Literal> back = rounded->Convert(F32);
      ASSERT_TRUE(back.ok());
      expected.emplace_back(8, back->data<float>()[0]);
    }
    EXPECT_EQ(RunParticipants(*module, replicas, values), expected);
  }
}

}  // namespace
}  // namespace axle
