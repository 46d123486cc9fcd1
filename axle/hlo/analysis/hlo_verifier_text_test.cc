//===- hlo_verifier_text_test.cc - Verifier on modules written as HLO text -===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

// Needs the HLO text parser; compiled only where it is present.
#if __has_include("axle/hlo/text/hlo_parser.h")

#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// "OK", or the parse or verification error.
std::string Verify(absl::string_view text, HloVerifierOptions options = {}) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return absl::StrCat("parse error: ", module.status().message());
  absl::Status status = VerifyHloModule(**module, options);
  return status.ok() ? "OK" : std::string(status.message());
}

TEST(HloVerifierTextTest, AcceptsWhileLoop) {
  EXPECT_EQ(Verify(R"(
HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] add(x, x)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)"),
            "OK");
}

TEST(HloVerifierTextTest, RejectsWhileConditionNotPred) {
  EXPECT_THAT(Verify(R"(
HloModule m
cond {
  p = s32[] parameter(0)
  ROOT c = s32[] constant(1)
}
body {
  p = s32[] parameter(0)
  ROOT q = s32[] add(p, p)
}
ENTRY main {
  x = s32[] parameter(0)
  ROOT w = s32[] while(x), condition=cond, body=body
}
)"),
              AllOf(HasSubstr("%w (while) in computation main"),
                    HasSubstr("the condition must return pred[]")));
}

TEST(HloVerifierTextTest, RejectsDotWithBadContractingDims) {
  EXPECT_THAT(Verify(R"(
HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"),
              AllOf(HasSubstr("%d (dot)"),
                    HasSubstr("contracting dimension sizes do not match: lhs dimension 1 is 3, "
                              "rhs dimension 0 is 4")));
}

TEST(HloVerifierTextTest, RejectsReduceWithWrongReducer) {
  EXPECT_THAT(Verify(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  z = f32[] parameter(2)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[4,5] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(a, zero), dimensions={1}, to_apply=add
}
)"),
              HasSubstr("reduce: the reduction computation must take 2 parameters, but takes 3"));
}

TEST(HloVerifierTextTest, RejectsBadSortComparator) {
  EXPECT_THAT(Verify(R"(
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=cmp
}
)"),
              HasSubstr("sort: the comparator must return pred[]"));
}

TEST(HloVerifierTextTest, RejectsConditionalBranchMismatch) {
  EXPECT_THAT(Verify(R"(
HloModule m
t {
  p = f32[] parameter(0)
  ROOT r = f32[] negate(p)
}
f {
  p = s32[] parameter(0)
  ROOT r = s32[] negate(p)
}
ENTRY main {
  c = pred[] parameter(0)
  x = f32[] parameter(1)
  y = s32[] parameter(2)
  ROOT r = f32[] conditional(c, x, y), true_computation=t, false_computation=f
}
)"),
              HasSubstr("all branches must return the same shape"));
}

TEST(HloVerifierTextTest, ChecksAliasingAndDonors) {
  EXPECT_EQ(Verify(R"(
HloModule m, input_output_alias={ {0}: (0, {}, must-alias) }, buffer_donor={ (1, {}) }
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT t = (f32[4], f32[4]) tuple(s, b)
}
)"),
            "OK");
  EXPECT_THAT(Verify(R"(
HloModule m, input_output_alias={ {0}: (0, {}) }
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(b, b)
  ROOT t = (f32[4]) tuple(s)
}
)"),
              HasSubstr("have different sizes"));
  // As in XLA, other shapes of the same byte size may alias.
  EXPECT_EQ(Verify(R"(
HloModule m, input_output_alias={ {}: (0, {}) }
ENTRY main {
  a = bf16[10,11,12] parameter(0)
  ROOT t = bf16[11,10,12] transpose(a), dimensions={1,0,2}
}
)"),
            "OK");
  EXPECT_THAT(Verify(R"(
HloModule m, input_output_alias={ {0}: (0, {}) }, buffer_donor={ (0, {}) }
ENTRY main {
  a = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(a)
}
)"),
              HasSubstr("also in input_output_alias"));
}

TEST(HloVerifierTextTest, ChecksReplicaGroups) {
  EXPECT_THAT(Verify(R"(
HloModule m, replica_count=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(a), replica_groups={{0,1},{1,2}}, to_apply=add
}
)"),
              HasSubstr("replica 1 is repeated in replica_groups"));
  EXPECT_THAT(
      Verify(R"(
HloModule m, replica_count=4
ENTRY main {
  a = f32[4] parameter(0)
  ROOT g = f32[12] all-gather(a), replica_groups={{0,1},{2,3}}, dimensions={0}
}
)"),
      HasSubstr("the shapes imply 3 shards along dimension 0 but each replica group has 2"));
}

TEST(HloVerifierTextTest, InferInstructionShapeOnParsedModule) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[4,2] transpose(d), dimensions={1,0}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  auto shape = ShapeInference::InferInstructionShape(*root);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->ToString(false), "f32[4,2]");
  auto dot = ShapeInference::InferInstructionShape(*root->operand(0));
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_EQ(dot->ToString(false), "f32[2,4]");
  auto parameter = ShapeInference::InferInstructionShape(*root->operand(0)->operand(0));
  EXPECT_TRUE(absl::IsUnimplemented(parameter.status()));
}

}  // namespace
}  // namespace axle

#endif  // __has_include("axle/hlo/text/hlo_parser.h")
