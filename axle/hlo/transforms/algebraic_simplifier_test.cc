#include "axle/hlo/transforms/algebraic_simplifier.h"

#include "absl/strings/str_cat.h"
#include "axle/hlo/transforms/simplification_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using test::RootStructure;
using test::RunPassAndCompare;

// One rule: an entry body (parameters p0.. as declared in `body`), and the
// structure of the root expected after algsimp.
struct RuleCase {
  const char* name;
  const char* body;
  const char* expected_root;
};

std::string Module(absl::string_view body) {
  return absl::StrCat(R"(
HloModule m

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}

sub_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}

ENTRY e {
)",
                      body, "}\n");
}

const RuleCase kRewrites[] = {
    {"AddZeroRight", R"(p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] add(p, zb))",
     "parameter"},
    {"AddZeroLeftInt", R"(p = s32[2,3] parameter(0)
  z = s32[2,3] constant({{0,0,0},{0,0,0}})
  ROOT r = s32[2,3] add(z, p))",
     "parameter"},
    {"SubtractZero", R"(p = f32[4] parameter(0)
  z = f32[4] constant({0,0,0,0})
  ROOT r = f32[4] subtract(p, z))",
     "parameter"},
    {"MultiplyOne", R"(p = f32[4] parameter(0)
  o = f32[] constant(1)
  ob = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] multiply(ob, p))",
     "parameter"},
    {"MultiplyIntZero", R"(p = s32[4] parameter(0)
  z = s32[] constant(0)
  zb = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] multiply(p, zb))",
     "broadcast(constant)"},
    {"DivideOne", R"(p = f64[3] parameter(0)
  o = f64[3] constant({1,1,1})
  ROOT r = f64[3] divide(p, o))",
     "parameter"},
    {"NegateNegate", R"(p = s8[5] parameter(0)
  n = s8[5] negate(p)
  ROOT r = s8[5] negate(n))",
     "parameter"},
    {"NotNot", R"(p = pred[5] parameter(0)
  n = pred[5] not(p)
  ROOT r = pred[5] not(n))",
     "parameter"},
    {"MaximumSelf", R"(p = f32[6] parameter(0)
  ROOT r = f32[6] maximum(p, p))",
     "parameter"},
    {"AndTrue", R"(p = pred[3] parameter(0)
  t = pred[3] constant({true,true,true})
  ROOT r = pred[3] and(p, t))",
     "parameter"},
    {"OrFalse", R"(p = pred[3] parameter(0)
  f = pred[] constant(false)
  fb = pred[3] broadcast(f), dimensions={}
  ROOT r = pred[3] or(fb, p))",
     "parameter"},
    {"SelectTrue", R"(p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = pred[] constant(true)
  tb = pred[4] broadcast(t), dimensions={}
  ROOT r = f32[4] select(tb, p, q))",
     "parameter"},
    {"SelectFalse", R"(p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  f = pred[4] constant({false,false,false,false})
  ROOT r = f32[4] select(f, p, q))",
     "parameter"},
    {"SelectSameBranches", R"(c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  ROOT r = f32[4] select(c, p, p))",
     "parameter"},
    {"CompareIntSelfEq", R"(p = s32[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=GE)",
     "broadcast(constant)"},
    {"CompareIntSelfLt", R"(p = u16[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=LT)",
     "broadcast(constant)"},
    {"ConvertSameType", R"(p = f32[4] parameter(0)
  ROOT r = f32[4] convert(p))",
     "parameter"},
    {"ConvertWidenThenBack", R"(p = s8[4] parameter(0)
  w = s32[4] convert(p)
  ROOT r = s8[4] convert(w))",
     "parameter"},
    {"ConvertWidenThenOther", R"(p = bf16[4] parameter(0)
  w = f32[4] convert(p)
  ROOT r = s32[4] convert(w))",
     "convert(parameter)"},
    {"ReshapeSameShape", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reshape(p))",
     "parameter"},
    {"ReshapeReshape", R"(p = f32[2,3] parameter(0)
  a = f32[6] reshape(p)
  ROOT r = f32[3,2] reshape(a))",
     "reshape(parameter)"},
    {"ReshapeOfScalarBroadcast", R"(p = f32[] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={}
  ROOT r = f32[6] reshape(b))",
     "broadcast(parameter)"},
    {"TransposeIdentity", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] transpose(p), dimensions={0,1})",
     "parameter"},
    {"TransposeTransposeCancel", R"(p = f32[2,3,4] parameter(0)
  t = f32[4,2,3] transpose(p), dimensions={2,0,1}
  ROOT r = f32[2,3,4] transpose(t), dimensions={1,2,0})",
     "parameter"},
    {"TransposeTransposeMerge", R"(p = f32[2,3,4] parameter(0)
  t = f32[3,2,4] transpose(p), dimensions={1,0,2}
  ROOT r = f32[4,2,3] transpose(t), dimensions={2,1,0})",
     "transpose(parameter)"},
    {"TransposeOfScalarBroadcast", R"(p = s32[] parameter(0)
  b = s32[2,3] broadcast(p), dimensions={}
  ROOT r = s32[3,2] transpose(b), dimensions={1,0})",
     "broadcast(parameter)"},
    {"BroadcastSameShape", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] broadcast(p), dimensions={0,1})",
     "parameter"},
    {"BroadcastBroadcast", R"(p = f32[3] parameter(0)
  a = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[2,4,3] broadcast(a), dimensions={0,2})",
     "broadcast(parameter)"},
    {"SliceFull", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] slice(p), slice={[0:2], [0:3]})",
     "parameter"},
    {"ReverseSizeOne", R"(p = f32[1,3] parameter(0)
  ROOT r = f32[1,3] reverse(p), dimensions={0})",
     "parameter"},
    {"ConcatenateOne", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] concatenate(p), dimensions={1})",
     "parameter"},
    {"PadNothing", R"(p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] pad(p, z), padding=0_0x0_0)",
     "parameter"},
    {"ReduceNoDimensions", R"(p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce(p, z), dimensions={}, to_apply=add_f32)",
     "parameter"},
    {"ReduceSizeOneDimension", R"(p = s32[2,1,3] parameter(0)
  m = s32[] constant(-2147483648)
  ROOT r = s32[2,3] reduce(p, m), dimensions={1}, to_apply=max_s32)",
     "reshape(parameter)"},
    {"CopySameLayout", R"(p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] copy(p))",
     "parameter"},
    {"BitcastBitcast", R"(p = f32[2,3] parameter(0)
  a = f32[6] bitcast(p)
  ROOT r = f32[3,2] bitcast(a))",
     "bitcast(parameter)"},
    {"PowerOne", R"(p = f32[4] parameter(0)
  o = f32[] constant(1)
  ob = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] power(p, ob))",
     "parameter"},
    {"PowerTwo", R"(p = f32[4] parameter(0)
  t = f32[4] constant({2,2,2,2})
  ROOT r = f32[4] power(p, t))",
     "multiply(parameter, parameter)"},
    {"PowerZero", R"(p = s32[4] parameter(0)
  z = s32[4] constant({0,0,0,0})
  ROOT r = s32[4] power(p, z))",
     "broadcast(constant)"},
    {"PowerZeroFloat", R"(p = bf16[4] parameter(0)
  z = bf16[] constant(0)
  zb = bf16[4] broadcast(z), dimensions={}
  ROOT r = bf16[4] power(p, zb))",
     "broadcast(constant)"},
    {"DynamicSliceConstantStarts", R"(p = f32[5,4] parameter(0)
  i = s32[] constant(1)
  j = s32[] constant(7)
  ROOT r = f32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2})",
     "slice(parameter)"},
    {"DynamicUpdateSliceWhole", R"(p = f32[2,3] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[2,3] dynamic-update-slice(p, u, i, i))",
     "parameter"},
    {"IotaSizeOne", R"(ROOT r = s32[3,1] iota(), iota_dimension=1)", "broadcast(constant)"},
    {"ChainCollapses", R"(p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  a = f32[4] add(p, zb)
  n = f32[4] negate(a)
  nn = f32[4] negate(n)
  c = f32[4] copy(nn)
  ROOT r = f32[4] reshape(c))",
     "parameter"},
};

class AlgebraicSimplifierRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(AlgebraicSimplifierRuleTest, RewritesAndKeepsValues) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, Module(GetParam().body));
  EXPECT_EQ(RootStructure(*module), GetParam().expected_root) << module->ToString();
  // A second run has nothing left to do.
  absl::StatusOr<bool> again = pass.Run(module.get());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << module->ToString();
}

INSTANTIATE_TEST_SUITE_P(Rules, AlgebraicSimplifierRuleTest, ::testing::ValuesIn(kRewrites),
                         [](const auto& info) { return std::string(info.param.name); });

// Rewrites that would change values (or layouts) must not happen.
const RuleCase kNonRewrites[] = {
    {"FloatMultiplyZero", R"(p = f32[4] parameter(0)
  z = f32[4] constant({0,0,0,0})
  ROOT r = f32[4] multiply(p, z))",
     "multiply(parameter, constant)"},
    {"FloatSubtractNegativeZero", R"(p = f32[4] parameter(0)
  z = f32[] constant(-0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] subtract(p, zb))",
     "subtract(parameter, broadcast(constant))"},
    {"FloatCompareSelf", R"(p = f32[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=EQ)",
     "compare(parameter, parameter)"},
    {"ExpOfLog", R"(p = f32[4] parameter(0)
  l = f32[4] log(p)
  ROOT r = f32[4] exponential(l))",
     "exponential(log(parameter))"},
    {"LossyConvertChain", R"(p = f32[4] parameter(0)
  n = bf16[4] convert(p)
  ROOT r = f32[4] convert(n))",
     "convert(convert(parameter))"},
    {"SignedToUnsignedChain", R"(p = s8[4] parameter(0)
  u = u16[4] convert(p)
  ROOT r = s32[4] convert(u))",
     "convert(convert(parameter))"},
    {"ReduceWithNonIdentityInit", R"(p = f32[2,3] parameter(0)
  one = f32[] constant(1)
  ROOT r = f32[2,3] reduce(p, one), dimensions={}, to_apply=add_f32)",
     "reduce(parameter, constant)"},
    {"ReduceWithNonCommutativeReducer", R"(p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce(p, z), dimensions={}, to_apply=sub_f32)",
     "reduce(parameter, constant)"},
    {"CopyChangingLayout", R"(p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[2,3]{0,1} copy(p))",
     "copy(parameter)"},
    {"DynamicSliceVariableStart", R"(p = f32[5] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2})",
     "dynamic-slice(parameter, parameter)"},
    {"PowerTwoComplex", R"(p = c64[2] parameter(0)
  t = c64[2] constant({(2,0), (2,0)})
  ROOT r = c64[2] power(p, t))",
     "power(parameter, constant)"},
};

class AlgebraicSimplifierKeepTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(AlgebraicSimplifierKeepTest, LeavesTheModuleAlone) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module =
      RunPassAndCompare(pass, Module(GetParam().body), /*expect_changed=*/false);
  EXPECT_EQ(RootStructure(*module), GetParam().expected_root) << module->ToString();
}

INSTANTIATE_TEST_SUITE_P(Rules, AlgebraicSimplifierKeepTest, ::testing::ValuesIn(kNonRewrites),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AlgebraicSimplifier, DynamicSliceStartsAreClampedLikeTheOp) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, Module(R"(p = f32[5,4] parameter(0)
  i = s32[] constant(-3)
  j = s32[] constant(100)
  ROOT r = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3})"));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kSlice);
  EXPECT_EQ(cast<HloSliceInstruction>(root)->slice_starts(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(cast<HloSliceInstruction>(root)->slice_limits(), (std::vector<int64_t>{2, 4}));
}

TEST(AlgebraicSimplifier, UnsignedStartsBeyondInt64AreHuge) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, Module(R"(p = f32[5] parameter(0)
  i = u64[] constant(18446744073709551615)
  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2})"));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kSlice);
  EXPECT_EQ(cast<HloSliceInstruction>(root)->slice_starts(), (std::vector<int64_t>{3}));
}

TEST(AlgebraicSimplifier, RemovesWhatTheRewritesLeftDeadAndPrintsCleanText) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, Module(R"(p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  tt = f32[2,3] transpose(t), dimensions={1,0}
  o = f32[] constant(1)
  ob = f32[2,3] broadcast(o), dimensions={}
  m = f32[2,3] multiply(tt, ob)
  ROOT r = f32[2,3] exponential(m))"));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 2);
  EXPECT_EQ(module->entry_computation()->root_instruction()->ToString(),
            "%r = f32[2,3]{1,0} exponential(%p)");
}

TEST(AlgebraicSimplifier, SimplifiesInsideCalledComputations) {
  AlgebraicSimplifier pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

body {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  one = f32[] constant(1)
  m = f32[] multiply(b, one)
  ROOT s = f32[] add(a, m)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=body
}
)");
  EXPECT_EQ(test::Structure(module->GetComputationWithName("body")->root_instruction()),
            "add(parameter, parameter)");
}

}  // namespace
}  // namespace axle
