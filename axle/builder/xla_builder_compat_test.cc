// A program written against XLA's headers and `xla::` names, as in XLA's
// custom-call and aliasing guides, built with compat/include on the include
// path: only the include paths differ from what one writes for XLA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "axle/eval/hlo_evaluator.h"
#include "tensorflow/compiler/xla/client/xla_builder.h"
#include "tensorflow/compiler/xla/client/xla_computation.h"
#include "xla/client/xla_builder.h"
#include "xla/hlo/builder/xla_builder.h"
#include "xla/hlo/builder/xla_computation.h"
#include "xla/literal.h"
#include "xla/literal_util.h"
#include "xla/shape.h"
#include "xla/shape_util.h"
#include "xla/xla_data.pb.h"

namespace {

using ::testing::HasSubstr;

// XLA's custom-call guide, "Create a custom call on CPU" (builder half).
absl::StatusOr<xla::XlaComputation> DoIt() {
  xla::XlaBuilder b("do_it");
  xla::XlaOp param0 = xla::Parameter(&b, 0, xla::ShapeUtil::MakeShape(xla::F32, {128}), "p0");
  xla::XlaOp param1 = xla::Parameter(&b, 1, xla::ShapeUtil::MakeShape(xla::F32, {2048}), "p1");
  xla::XlaOp custom_call =
      xla::CustomCall(&b, "do_custom_call", /*operands=*/{param0, param1},
                      /*shape=*/xla::ShapeUtil::MakeShape(xla::F32, {2048}),
                      /*opaque=*/"", /*has_side_effect=*/false,
                      /*output_operand_aliasing=*/{}, /*literal=*/nullptr,
                      /*schedule=*/xla::CustomCallSchedule::SCHEDULE_NONE,
                      /*api_version=*/xla::CustomCallApiVersion::API_VERSION_STATUS_RETURNING);
  (void)custom_call;
  return b.Build();
}

TEST(XlaCompatTest, CustomCallGuideExampleBuilds) {
  absl::StatusOr<xla::XlaComputation> computation = DoIt();
  ASSERT_TRUE(computation.ok()) << computation.status();
  std::string text = computation->ToString();
  EXPECT_THAT(text, HasSubstr("custom-call(%p0, %p1), custom_call_target=\"do_custom_call\", "
                              "api_version=API_VERSION_STATUS_RETURNING"));
  absl::StatusOr<xla::ProgramShape> shape = computation->GetProgramShape();
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->ToString(), "(f32[128]{0}, f32[2048]{0})->f32[2048]{0}");
}

// The tuple example of the same guide.
TEST(XlaCompatTest, CustomCallGuideTupleExampleBuilds) {
  xla::XlaBuilder b("do_it");
  xla::Shape p0_shape = xla::ShapeUtil::MakeTupleShape({
      xla::ShapeUtil::MakeShape(xla::F32, {32}),
      xla::ShapeUtil::MakeShape(xla::F32, {64}),
  });
  xla::XlaOp p0 = xla::Parameter(&b, 0, p0_shape, "p0");
  xla::Shape out_shape = xla::ShapeUtil::MakeTupleShape({
      xla::ShapeUtil::MakeShape(xla::F32, {512}),
      xla::ShapeUtil::MakeShape(xla::F32, {1024}),
  });
  xla::CustomCall(&b, "do_custom_call", /*operands=*/{p0}, out_shape);
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();
  EXPECT_THAT(computation->ToString(), HasSubstr("(f32[512]{0}, f32[1024]{0}) custom-call(%p0), "
                                                 "custom_call_target=\"do_custom_call\""));
}

// XLA's aliasing guide: `HloModule increment, input_output_alias={ {}: 0 }`.
TEST(XlaCompatTest, AliasingGuideIncrementRuns) {
  xla::XlaBuilder b("increment");
  xla::XlaOp p = xla::Parameter(&b, 0, xla::ShapeUtil::MakeShape(xla::F32, {}), "p");
  xla::XlaOp c = xla::ConstantR0<float>(&b, 1.0f);
  xla::Add(p, c);
  b.SetUpAlias(/*output_index=*/{}, /*param_number=*/0, /*param_index=*/{});
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();
  // XLA prints a may-alias entry without its kind: `{}: (0, {})`.
  EXPECT_THAT(computation->ToString(),
              HasSubstr("HloModule increment, input_output_alias={ {}: (0, {}) }"));

  xla::Literal arg = xla::LiteralUtil::CreateR0<float>(41.0f);
  axle::HloEvaluator evaluator;
  absl::StatusOr<xla::Literal> result = evaluator.Evaluate(computation->module(), {&arg});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<float>(), 42.0f);
}

// The builder API as XLA client code uses it: sub-builders, operators,
// implicit broadcasting, a reduction.
TEST(XlaCompatTest, ClientCodeWithSubBuildersRuns) {
  xla::XlaBuilder b("client");
  std::unique_ptr<xla::XlaBuilder> sum_builder = b.CreateSubBuilder("sum");
  {
    auto x = xla::Parameter(sum_builder.get(), 0, xla::ShapeUtil::MakeShape(xla::F32, {}), "x");
    auto y = xla::Parameter(sum_builder.get(), 1, xla::ShapeUtil::MakeShape(xla::F32, {}), "y");
    x + y;
  }
  xla::XlaComputation sum = sum_builder->BuildAndNoteError();
  auto m = xla::Parameter(&b, 0, xla::ShapeUtil::MakeShape(xla::F32, {2, 3}), "m");
  auto bias = xla::ConstantR1<float>(&b, {10, 20, 30});
  auto scaled = xla::Add(m * xla::ConstantR0<float>(&b, 2), bias, /*broadcast_dimensions=*/{1});
  xla::Reduce(scaled, xla::ConstantR0<float>(&b, 0), sum, /*dimensions_to_reduce=*/{1});
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();

  xla::Literal arg = xla::LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  axle::HloEvaluator evaluator;
  auto result = evaluator.Evaluate(computation->module(), {&arg});
  ASSERT_TRUE(result.ok()) << result.status();
  // Row sums of 2*m + bias: (2+4+6)+60 = 72, (8+10+12)+60 = 90.
  EXPECT_EQ(*result, xla::LiteralUtil::CreateR1<float>({72, 90}));
}

}  // namespace
