//===- bf16_reductions_in_f32_test.cc - bf16 reductions accumulated in f32 -===//
//
// Which reductions the pass widens (bf16 by add, multiply, max; variadic
// reductions in their bf16 parts; reduce-window), which it leaves (f16,
// f32, reducers that call computations, reducers that do not match the
// reduction), the excess-precision reads of converts, and the values on
// the interpreter: a long bf16 sum keeps its small terms, a cumulative sum
// as a reduce-window too, an argmax picks what it picked before, mean and
// variance are exact.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/transforms/bf16_reductions_test_util.h"
#include "axle/hlo/transforms/cleanup_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using bf16_reductions_test::AsF32;
using bf16_reductions_test::Bf16Values;
using bf16_reductions_test::WithBf16Add;
using cleanup_test::Parse;
using cleanup_test::RunPass;

std::string ReduceModule(const std::string& t, const std::string& op, int64_t n) {
  return absl::StrCat("HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                      "[] parameter(1)\n  ROOT c = ", t, "[] ", op,
                      "(a, b)\n}\nENTRY e {\n  x = ", t, "[4,", n, "] parameter(0)\n  z = ", t,
                      "[] constant(0)\n  ROOT s = ", t,
                      "[4] reduce(x, z), dimensions={1}, to_apply=r\n}\n");
}

// The entry's result on `arguments`, in f32.
std::vector<float> ValuesOf(const HloModule& module, const std::vector<Literal>& arguments) {
  std::vector<const Literal*> pointers;
  pointers.reserve(arguments.size());
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  absl::StatusOr<Literal> result = evaluator.Evaluate(module, pointers);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? AsF32(*std::move(result)) : std::vector<float>{};
}

// A bf16 argument for parameter 0 of `module` whose element i is
// values[i % values.size()].
Literal Bf16Argument(const HloModule& module, const std::vector<float>& values) {
  return Bf16Values(module.entry_computation()->parameter_instruction(0)->shape().dimensions(),
                    values);
}

TEST(Bf16ReductionsInF32Test, WidensBf16ReductionsOnly) {
  for (const auto& [type, op, widened] :
       std::vector<std::tuple<std::string, std::string, bool>>{{"bf16", "add", true},
                                                               {"bf16", "multiply", true},
                                                               {"bf16", "maximum", true},
                                                               {"f16", "add", false},
                                                               {"f32", "add", false}}) {
    SCOPED_TRACE(absl::StrCat(type, " ", op));
    std::unique_ptr<HloModule> module = Parse(ReduceModule(type, op, 8));
    ASSERT_NE(module, nullptr);
    Bf16ReductionsInF32 pass;
    EXPECT_EQ(RunPass(pass, module.get()), widened);
    const HloInstruction* root = module->entry_computation()->root_instruction();
    if (!widened) {
      EXPECT_EQ(root->opcode(), HloOpcode::kReduce);
      continue;
    }
    ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(root->shape().element_type(), BF16);
    const HloInstruction* reduce = root->operand(0);
    ASSERT_EQ(reduce->opcode(), HloOpcode::kReduce);
    EXPECT_EQ(reduce->shape().element_type(), F32);
    EXPECT_EQ(reduce->operand(0)->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(reduce->operand(1)->opcode(), HloOpcode::kConvert);
    const HloInstruction* combine = reduce->called_computations()[0]->root_instruction();
    EXPECT_EQ(combine->shape().element_type(), F32);
    EXPECT_EQ(HloOpcodeString(combine->opcode()), op);
  }
}

TEST(Bf16ReductionsInF32Test, ALongSumKeepsItsSmallTerms) {
  std::unique_ptr<HloModule> module = Parse(ReduceModule("bf16", "add", 1000));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> ones;
  ones.push_back(Bf16Argument(*module, {1}));
  // Folded in bf16, the sum stalls at 256 (256 + 1 rounds to 256).
  EXPECT_EQ(ValuesOf(*module, ones), std::vector<float>(4, 256.0f));
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  // 1000 is a bf16 value.
  EXPECT_EQ(ValuesOf(*module, ones), std::vector<float>(4, 1000.0f));
}

// A cumulative sum as JAX lowers it for cpu: a reduce-window over the whole
// prefix (window n, low padding n - 1).
TEST(Bf16ReductionsInF32Test, ACumulativeSumAsAReduceWindowKeepsItsSmallTerms) {
  std::unique_ptr<HloModule> module = Parse(WithBf16Add(R"(
  x = bf16[600] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[600] reduce-window(x, z), window={size=600 pad=599_0}, to_apply=add
)"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> ones;
  ones.push_back(Bf16Argument(*module, {1}));
  EXPECT_EQ(ValuesOf(*module, ones).back(), 256.0f);
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kReduceWindow);
  EXPECT_EQ(root->operand(0)->shape().element_type(), F32);
  const std::vector<float> sums = ValuesOf(*module, ones);
  ASSERT_EQ(sums.size(), 600u);
  // Prefix k + 1 rounded once to bf16 (8 significant bits).
  EXPECT_EQ(sums, bf16_reductions_test::RoundedPrefixSums(600));
}

TEST(Bf16ReductionsInF32Test, AnArgmaxPicksWhatItPickedBefore) {
  std::unique_ptr<HloModule> module = Parse(bf16_reductions_test::Bf16ArgmaxModule(3, 50));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  // Ties (3 at several places, the first index wins), negatives.
  arguments.push_back(Bf16Argument(*module, {0.5f, 3, -2, 1, 3, 1, -7, 2.5f, 3, 0.25f, 2}));
  const std::vector<float> before = ValuesOf(*module, arguments);
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kConvert);
  const HloInstruction* reduce = root->operand(0)->operand(0)->operand(0);
  ASSERT_EQ(reduce->opcode(), HloOpcode::kReduce);
  EXPECT_EQ(reduce->shape().tuple_shapes(0).element_type(), F32);
  EXPECT_EQ(reduce->shape().tuple_shapes(1).element_type(), S32);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(ValuesOf(*module, arguments), before);
}

// mean = sum(x) / n and variance = sum(x * x) / n - mean^2, in bf16 over
// 1024 elements alternating 1 and 3: 2 and 1 exactly once the sums are f32.
TEST(Bf16ReductionsInF32Test, MeanAndVarianceAreExact) {
  std::unique_ptr<HloModule> module = Parse(WithBf16Add(R"(
  x = bf16[2,1024] parameter(0)
  z = bf16[] constant(0)
  n = bf16[2] constant({1024, 1024})
  s = bf16[2] reduce(x, z), dimensions={1}, to_apply=add
  mean = bf16[2] divide(s, n)
  xx = bf16[2,1024] multiply(x, x)
  ss = bf16[2] reduce(xx, z), dimensions={1}, to_apply=add
  m2 = bf16[2] divide(ss, n)
  mm = bf16[2] multiply(mean, mean)
  var = bf16[2] subtract(m2, mm)
  ROOT r = (bf16[2], bf16[2]) tuple(mean, var)
)"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Argument(*module, {1, 3}));
  const std::vector<float> folded = ValuesOf(*module, arguments);
  EXPECT_NE(folded, (std::vector<float>{2, 2, 1, 1}));
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  EXPECT_EQ(ValuesOf(*module, arguments), (std::vector<float>{2, 2, 1, 1}));
}

// Under XLA's default excess precision an operand converted from f32 is read
// unrounded, and a convert of the result back to f32 reads the f32 sum.
TEST(Bf16ReductionsInF32Test, ConvertsAroundTheReductionAreSkipped) {
  std::unique_ptr<HloModule> module = Parse(WithBf16Add(R"(
  p = f32[8] parameter(0)
  x = bf16[8] convert(p)
  z = bf16[] constant(0)
  s = bf16[] reduce(x, z), dimensions={0}, to_apply=add
  ROOT w = f32[] convert(s)
)"));
  ASSERT_NE(module, nullptr);
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kReduce) << module->ToString();
  EXPECT_EQ(root->shape().element_type(), F32);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kParameter);
  Literal p(Shape(F32, {8}));
  for (float& value : p.data<float>()) value = 1.00390625f;  // not a bf16 value
  std::vector<Literal> arguments;
  arguments.push_back(std::move(p));
  EXPECT_EQ(ValuesOf(*module, arguments), (std::vector<float>{8.03125f}));
}

TEST(Bf16ReductionsInF32Test, ReducersItCannotRetypeAreLeftAlone) {
  // A reducer that calls a computation, and one (in an unverified module)
  // whose parameters do not match the reduction's types.
  for (const char* text : {R"(
HloModule m
inner {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] call(a, b), to_apply=inner
}
ENTRY e {
  x = bf16[8] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[] reduce(x, z), dimensions={0}, to_apply=r
})",
                           R"(
HloModule m
r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = bf16[8] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[] reduce(x, z), dimensions={0}, to_apply=r
})"}) {
    std::unique_ptr<HloModule> module = Parse(text);
    ASSERT_NE(module, nullptr);
    Bf16ReductionsInF32 pass;
    absl::StatusOr<bool> changed = pass.Run(module.get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed);
  }
}

TEST(Bf16ReductionsInF32Test, Bf16ConstantsInTheReducerBecomeF32) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
r {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  half = bf16[] constant(0.5)
  h = bf16[] multiply(b, half)
  ROOT c = bf16[] add(a, h)
}
ENTRY e {
  x = bf16[1000] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[] reduce(x, z), dimensions={0}, to_apply=r
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> ones;
  ones.push_back(Bf16Argument(*module, {1}));
  Bf16ReductionsInF32 pass;
  ASSERT_TRUE(RunPass(pass, module.get()));
  EXPECT_EQ(ValuesOf(*module, ones), (std::vector<float>{500}));
}

}  // namespace
}  // namespace axle
