//===- xla_builder_errors_test.cc - XlaBuilder tests: errors, custom calls ===//
//
// What the builder records rather than computes: the first error of a bad
// call (naming the op and shapes), custom-call attributes and aliasing as
// they print in the HLO text. Each op family, evaluated: xla_builder_test.cc.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "axle/builder/xla_builder.h"
#include "axle/builder/xla_builder_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle {
namespace {

using builder_test::BuildOk;
using builder_test::ScalarBinary;
using builder_test::ShapeF32;
using builder_test::ShapeS32;
using ::testing::HasSubstr;

std::string ErrorOf(XlaBuilder& b) {
  absl::StatusOr<XlaComputation> computation = b.Build();
  EXPECT_FALSE(computation.ok());
  return computation.ok() ? "" : std::string(computation.status().message());
}

// --- Errors -------------------------------------------------------------------------------

TEST(XlaBuilderErrorTest, FirstErrorIsReturnedAndNamesOpAndShapes) {
  XlaBuilder b("errors");
  XlaOp x = Parameter(&b, 0, ShapeF32({2}), "x");
  XlaOp y = Parameter(&b, 1, ShapeF32({3}), "y");
  XlaOp bad = Add(x, y);
  EXPECT_FALSE(bad.valid());
  EXPECT_EQ(bad.builder(), &b);
  // Later ops are invalid too and do not replace the first error.
  XlaOp later = Transpose(x, {3});
  EXPECT_FALSE(later.valid());
  EXPECT_FALSE(Neg(bad).valid());
  std::string message = ErrorOf(b);
  EXPECT_THAT(message, HasSubstr("Add: "));
  EXPECT_THAT(message, HasSubstr("f32[2]"));
  EXPECT_THAT(message, HasSubstr("f32[3]"));
  EXPECT_EQ(b.first_error().message(), message);
  EXPECT_FALSE(b.GetProgramShape().ok());
}

TEST(XlaBuilderErrorTest, EachBadCallIsRecorded) {
  struct Case {
    std::string name;
    std::function<void(XlaBuilder&)> build;
    std::string expected;
  };
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  std::vector<Case> cases = {
      {"duplicate parameter",
       [](XlaBuilder& b) {
         Parameter(&b, 0, ShapeF32({}), "a");
         Parameter(&b, 0, ShapeF32({}), "b");
       },
       "Parameter: parameter 0 already registered"},
      {"negative parameter", [](XlaBuilder& b) { Parameter(&b, -1, ShapeF32({}), "a"); },
       "parameter number -1 is negative"},
      {"missing parameter",
       [](XlaBuilder& b) {
         Parameter(&b, 0, ShapeF32({}), "a");
         Parameter(&b, 2, ShapeF32({}), "c");
       },
       "parameter 1 is missing"},
      {"negative size", [](XlaBuilder& b) { Parameter(&b, 0, ShapeF32({-2}), "a"); },
       "negative dimension size"},
      // 2^80 elements: the count must not wrap to 0 (ONNX's ConstantOfShape
      // of [2^40, 2^40] broadcasts a scalar).
      {"broadcast too large",
       [](XlaBuilder& b) {
         Broadcast(ConstantR0<float>(&b, 0), {int64_t{1} << 40, int64_t{1} << 40});
       },
       "Broadcast: shape f32[1099511627776,1099511627776] is too large"},
      {"reshape too large",
       [](XlaBuilder& b) {
         Reshape(Broadcast(ConstantR0<float>(&b, 0), {0}), {int64_t{1} << 40, int64_t{1} << 40});
       },
       "Reshape: shape f32[1099511627776,1099511627776] is too large"},
      {"rank mismatch",
       [](XlaBuilder& b) {
         Add(Parameter(&b, 0, ShapeF32({2, 3}), "a"), Parameter(&b, 1, ShapeF32({3}), "b"));
       },
       "Add: Binary op add: shapes must be equal rank"},
      {"bad broadcast dimension",
       [](XlaBuilder& b) {
         Add(Parameter(&b, 0, ShapeF32({2, 3}), "a"), Parameter(&b, 1, ShapeF32({3}), "b"), {5});
       },
       "out of range"},
      {"element types differ",
       [](XlaBuilder& b) { Add(ConstantR0<float>(&b, 1), ConstantR0<int32_t>(&b, 1)); }, "Add: "},
      {"transpose permutation", [](XlaBuilder& b) { Transpose(Iota(&b, S32, 3), {1}); },
       "Transpose: "},
      {"reshape count",
       [](XlaBuilder& b) {
         Reshape(Iota(&b, S32, 3), {2, 2});
       },
       "Reshape: "},
      {"slice bounds", [](XlaBuilder& b) { Slice(Iota(&b, S32, 3), {0}, {4}, {1}); }, "Slice: "},
      {"slice dimno", [](XlaBuilder& b) { SliceInDim(Iota(&b, S32, 3), 0, 1, 1, 1); },
       "SliceInDim: dimno 1 is out of range"},
      {"dot contracting",
       [](XlaBuilder& b) {
         Dot(ConstantR2<float>(&b, {{1, 2}}), ConstantR2<float>(&b, {{1, 2}}));
       },
       "Dot"},
      {"gte on array", [](XlaBuilder& b) { GetTupleElement(Iota(&b, S32, 3), 0); },
       "GetTupleElement: "},
      {"reduce with null computation",
       [](XlaBuilder& b) {
         Reduce(Iota(&b, F32, 3), ConstantR0<float>(&b, 0), XlaComputation(), {0});
       },
       "Reduce: to_apply: the computation is null"},
      {"reduce dimension",
       [&add](XlaBuilder& b) { Reduce(Iota(&b, F32, 3), ConstantR0<float>(&b, 0), add, {1}); },
       "Reduce: "},
      {"sort comparator", [&add](XlaBuilder& b) { Sort({Iota(&b, F32, 3)}, add); },
       "Sort: the comparator must take two scalars"},
      {"conditional arity",
       [&add](XlaBuilder& b) {
         const XlaComputation* branches[] = {&add};
         Conditional(ConstantR0<int32_t>(&b, 0), branches, {});
       },
       "Conditional: expected one operand per branch"},
      {"map static operands",
       [&add](XlaBuilder& b) {
         XlaOp x = Iota(&b, F32, 3);
         Map(&b, {x, x}, add, {0}, {x});
       },
       "static_operands"},
      {"after-all without tokens", [](XlaBuilder& b) { AfterAll(&b, {}); },
       "AfterAll requires at least one operand"},
      {"after-all with an array", [](XlaBuilder& b) { AfterAll(&b, {Iota(&b, S32, 3)}); },
       "must be tokens"},
      {"conv ranks",
       [](XlaBuilder& b) {
         Conv(Iota(&b, F32, 3), Iota(&b, F32, 3), {1, 1}, Padding::kValid);
       },
       "Conv"},
      {"empty concat", [](XlaBuilder& b) { ConcatInDim(&b, {}, 0); },
       "ConcatInDim: expected at least one operand"},
      {"uninitialized operand", [](XlaBuilder& b) { Add(Iota(&b, S32, 3), XlaOp()); },
       "uninitialized XlaOp"},
      {"no ops", [](XlaBuilder& b) {}, "has no ops"},
      {"negative broadcast size", [](XlaBuilder& b) { Broadcast(Iota(&b, S32, 3), {-1}); },
       "Broadcast: "},
      {"broadcast-in-dim sizes",
       [](XlaBuilder& b) {
         BroadcastInDim(Iota(&b, S32, 3), {2, 4}, {1});
       },
       "BroadcastInDim: "},
      {"broadcast-in-dim dims",
       [](XlaBuilder& b) {
         BroadcastInDim(Iota(&b, S32, 3), {2, 3}, {7});
       },
       "BroadcastInDim: "},
      {"collapse order",
       [](XlaBuilder& b) {
         Collapse(Reshape(Iota(&b, S32, 6), {1, 2, 3}), {0, 2});
       },
       "Collapse: dimensions {0,2} must be consecutive"},
      {"dynamic-slice index count",
       [](XlaBuilder& b) {
         DynamicSlice(Reshape(Iota(&b, S32, 6), {2, 3}), {ConstantR0<int32_t>(&b, 0)}, {1, 1});
       },
       "DynamicSlice: "},
      {"pad dimno",
       [](XlaBuilder& b) { PadInDim(Iota(&b, S32, 3), ConstantR0<int32_t>(&b, 0), 4, 1, 1); },
       "PadInDim: dimno 4 is out of range"},
      {"constant count",
       [](XlaBuilder& b) {
         ConstantFromArray<int32_t>(&b, {2, 2}, std::vector<int32_t>{1, 2, 3});
       },
       "ConstantFromArray: the number of values does not match"},
      {"iota dimension", [](XlaBuilder& b) { Iota(&b, ShapeS32({2}), 3); }, "Iota: "},
      {"bad layout",
       [](XlaBuilder& b) {
         Shape shape = ShapeF32({2, 3});
         shape.set_layout(Layout(std::vector<int64_t>{0, 0}));
         Parameter(&b, 0, shape, "p");
       },
       "not a permutation"},
      {"select predicate type",
       [](XlaBuilder& b) { Select(Iota(&b, S32, 3), Iota(&b, S32, 3), Iota(&b, S32, 3)); },
       "Select: "},
      {"select shapes",
       [](XlaBuilder& b) {
         Select(ConstantR0<bool>(&b, true), Iota(&b, S32, 3), Iota(&b, S32, 4));
       },
       "Select: all non-scalar operands must have the same dimensions"},
      {"while body", [&add](XlaBuilder& b) { While(add, add, ConstantR0<float>(&b, 0)); },
       "While: "},
      {"call arity", [&add](XlaBuilder& b) { Call(&b, add, {ConstantR0<float>(&b, 0)}); },
       "Call: "},
      {"shift of floats",
       [](XlaBuilder& b) { ConstantR0<float>(&b, 1) >> ConstantR0<float>(&b, 1); },
       "operator>>: shifts need integral operands"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    XlaBuilder b("b");
    c.build(b);
    EXPECT_THAT(ErrorOf(b), HasSubstr(c.expected));
  }
}

TEST(XlaBuilderErrorTest, OpsFromAnotherBuilderAreRejected) {
  XlaBuilder a("a"), b("b");
  XlaOp x = Parameter(&a, 0, ShapeF32({}), "x");
  XlaOp y = Parameter(&b, 0, ShapeF32({}), "y");
  Add(y, x);
  EXPECT_THAT(ErrorOf(b), HasSubstr("is built by builder 'a', but is trying to use it in "
                                    "builder 'b'"));
  // A root from another builder.
  XlaBuilder c("c");
  Parameter(&c, 0, ShapeF32({}), "z");
  absl::StatusOr<XlaComputation> built = c.Build(x);
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.status().message(), HasSubstr("Build: bad root"));
  // Only uninitialized operands or no builder: nothing to record, nothing crashes.
  EXPECT_TRUE(Neg(XlaOp()).IsUninitialized());
  EXPECT_TRUE(ConstantR0<float>(nullptr, 1).IsUninitialized());
  EXPECT_TRUE(Parameter(nullptr, 0, ShapeF32({}), "p").IsUninitialized());
}

TEST(XlaBuilderErrorTest, SubBuilderErrorsReachTheParent) {
  XlaBuilder b("parent");
  std::unique_ptr<XlaBuilder> sub = b.CreateSubBuilder("child");
  Add(Parameter(sub.get(), 0, ShapeF32({2}), "a"), Parameter(sub.get(), 1, ShapeF32({3}), "b"));
  XlaComputation child = sub->BuildAndNoteError();
  EXPECT_TRUE(child.IsNull());
  Reduce(Iota(&b, F32, 3), ConstantR0<float>(&b, 0), child, {0});
  EXPECT_THAT(ErrorOf(b), HasSubstr("error from sub-builder 'child': Add: "));
}

// --- Custom calls -------------------------------------------------------------------------

TEST(XlaBuilderCustomCallTest, FullSignatureSetsEveryAttribute) {
  XlaBuilder b("custom");
  XlaOp p0 = Parameter(&b, 0, ShapeF32({4}), "p0");
  XlaOp p1 = Parameter(&b, 1, ShapeS32({}), "p1");
  Literal literal = LiteralUtil::CreateR1<int32_t>({1, 2});
  CustomCall(&b, "my_target", {p0, p1}, ShapeF32({4}), "opaque bytes", /*has_side_effect=*/true,
             /*output_operand_aliasing=*/{{{}, {0, {}}}}, &literal, SCHEDULE_LATEST,
             API_VERSION_STATUS_RETURNING_UNIFIED);
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(),
              HasSubstr("ROOT %custom-call = f32[4]{0} custom-call(%p0, %p1), "
                        "custom_call_target=\"my_target\", custom_call_has_side_effect=true, "
                        "literal=s32[2]{0} {1, 2}, output_to_operand_aliasing={{}: (0, {})}, "
                        "schedule=SCHEDULE_LATEST, "
                        "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, "
                        "backend_config=\"opaque bytes\""));
  const auto* instruction =
      cast<HloCustomCallInstruction>(computation.module().entry_computation()->root_instruction());
  EXPECT_EQ(instruction->opaque(), "opaque bytes");
  EXPECT_TRUE(instruction->custom_call_has_side_effect());
}

TEST(XlaBuilderCustomCallTest, DefaultsPrintNothingExtra) {
  XlaBuilder b("custom");
  XlaOp p0 = Parameter(&b, 0, ShapeF32({4}), "p0");
  CustomCall(&b, "t", {p0}, ShapeUtil::MakeTupleShape({ShapeF32({4}), ShapeS32({})}));
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(),
              HasSubstr("ROOT %custom-call = (f32[4]{0}, s32[]) custom-call(%p0), "
                        "custom_call_target=\"t\"\n"));
}

TEST(XlaBuilderCustomCallTest, WithLayoutAndWithComputation) {
  XlaBuilder b("custom");
  XlaOp p0 = Parameter(&b, 0, ShapeF32({2, 3}), "p0");
  CustomCallWithLayout(&b, "layout_target", {p0},
                       ShapeUtil::MakeShapeWithDenseLayout(F32, {3, 2}, {0, 1}),
                       {ShapeUtil::MakeShapeWithDenseLayout(F32, {2, 3}, {0, 1})});
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  CustomCallWithComputation(&b, "with_computation", {p0}, add, ShapeF32({2, 3}));
  XlaComputation computation = BuildOk(b);
  std::string text = computation.ToString();
  EXPECT_THAT(text,
              HasSubstr("f32[3,2]{0,1} custom-call(%p0), custom_call_target=\"layout_target\", "
                        "operand_layout_constraints={f32[2,3]{0,1}}"));
  EXPECT_THAT(text, HasSubstr("custom-call(%p0), custom_call_target=\"with_computation\", "
                              "called_computations={%add}"));
}

TEST(XlaBuilderCustomCallTest, BadArgumentsAreErrors) {
  {
    XlaBuilder b("c");
    CustomCall(&b, "$internal", {}, ShapeF32({}));
    EXPECT_THAT(ErrorOf(b), HasSubstr("reserved for internal use"));
  }
  {
    XlaBuilder b("c");
    XlaOp p = Parameter(&b, 0, ShapeF32({4}), "p");
    CustomCall(&b, "t", {p}, ShapeF32({4}), "", false, {{{}, {1, {}}}});
    EXPECT_THAT(ErrorOf(b), HasSubstr("CustomCall: output_operand_aliasing: operand 1 does not "
                                      "exist"));
  }
  {
    XlaBuilder b("c");
    XlaOp p = Parameter(&b, 0, ShapeF32({4}), "p");
    CustomCall(&b, "t", {p}, ShapeF32({5}), "", false, {{{}, {0, {}}}});
    EXPECT_THAT(ErrorOf(b), HasSubstr("must have the same shape"));
  }
  {
    XlaBuilder b("c");
    XlaOp p = Parameter(&b, 0, ShapeF32({4}), "p");
    CustomCallWithLayout(&b, "t", {p}, ShapeF32({4}), {});
    EXPECT_THAT(ErrorOf(b), HasSubstr("expected 1 operand shapes with layout, got 0"));
  }
  {
    XlaBuilder b("c");
    XlaOp p = Parameter(&b, 0, ShapeF32({4}), "p");
    CustomCallWithLayout(&b, "t", {p}, Shape(F32, {4}), {ShapeF32({4})});
    EXPECT_THAT(ErrorOf(b), HasSubstr("must have a layout"));
  }
}

// --- Aliasing -----------------------------------------------------------------------------

TEST(XlaBuilderAliasTest, AliasingGuideIncrementPrintsAlias) {
  XlaBuilder b("increment");
  XlaOp p = Parameter(&b, 0, ShapeF32({}), "p");
  Add(p, ConstantR0<float>(&b, 1));
  b.SetUpAlias({}, 0, {});
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(),
              HasSubstr("HloModule increment, input_output_alias={ {}: (0, {}) }, "
                        "entry_computation_layout={(f32[])->f32[]}"));
  const HloModule& module = computation.module();
  EXPECT_TRUE(module.input_output_alias_config().ParameterHasAlias(0, {}));
  // The text parses back with the same alias.
  absl::StatusOr<std::unique_ptr<HloModule>> parsed =
      ParseAndReturnUnverifiedModule(computation.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)->input_output_alias_config(), module.input_output_alias_config());
}

TEST(XlaBuilderAliasTest, TupleAliasesMustAliasAndDonors) {
  XlaBuilder b("tuple_alias");
  XlaOp p0 = Parameter(&b, 0, ShapeUtil::MakeTupleShape({ShapeF32({2}), ShapeS32({})}), "p0");
  XlaOp p1 = Parameter(&b, 1, ShapeF32({2}), "p1");
  Tuple(&b, {GetTupleElement(p0, 1), Add(GetTupleElement(p0, 0), p1)});
  b.SetUpAlias({1}, 0, {0}, HloInputOutputAliasConfig::AliasKind::kMustAlias);
  b.SetUpAlias({0}, 0, {1});
  b.AddBufferDonor(1, {});
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(),
              HasSubstr("input_output_alias={ {0}: (0, {1}), {1}: (0, {0}, must-alias) }, "
                        "buffer_donor={ (1, {}) }"));
}

TEST(XlaBuilderAliasTest, InvalidAliasesAreRejectedAtBuild) {
  struct Case {
    std::string name;
    std::function<void(XlaBuilder&)> alias;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"output index", [](XlaBuilder& b) { b.SetUpAlias({1}, 0, {}); },
       "SetUpAlias: output index {1} does not exist in the result shape f32[2]"},
      {"parameter", [](XlaBuilder& b) { b.SetUpAlias({}, 2, {}); },
       "SetUpAlias: parameter 2 does not exist (the computation has 2 parameters)"},
      {"parameter index", [](XlaBuilder& b) { b.SetUpAlias({}, 0, {0}); },
       "SetUpAlias: index {0} does not exist in parameter 0"},
      {"shapes differ", [](XlaBuilder& b) { b.SetUpAlias({}, 1, {}); },
       "cannot alias parameter 1 at {} of shape f32[3]"},
      {"aliased twice",
       [](XlaBuilder& b) {
         b.SetUpAlias({}, 0, {});
         b.SetUpAlias({}, 0, {});
       },
       "is aliased more than once"},
      {"donor does not exist", [](XlaBuilder& b) { b.AddBufferDonor(5, {}); },
       "AddBufferDonor: parameter 5 does not exist"},
      {"donor also aliased",
       [](XlaBuilder& b) {
         b.SetUpAlias({}, 0, {});
         b.AddBufferDonor(0, {});
       },
       "is also aliased"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    XlaBuilder b("alias");
    XlaOp p0 = Parameter(&b, 0, ShapeF32({2}), "p0");
    Parameter(&b, 1, ShapeF32({3}), "p1");
    Neg(p0);
    c.alias(b);
    EXPECT_THAT(ErrorOf(b), HasSubstr(c.expected));
  }
}

}  // namespace
}  // namespace axle
