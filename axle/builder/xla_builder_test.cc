//===- xla_builder_test.cc - XlaBuilder tests: every op family -------------===//
//
// Every op family is built, Build() is checked to verify, and the module is
// run on the evaluator against hand-computed values; plus implicit
// broadcasting and embedded computations. Errors, custom-call attributes and
// aliasing: xla_builder_errors_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/builder/xla_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "axle/builder/xla_builder_test_util.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using builder_test::BuildOk;
using builder_test::ScalarBinary;
using builder_test::ShapeF32;
using builder_test::ShapeS32;

// Builds `b` and evaluates it on `args`.
Literal BuildAndRun(XlaBuilder& b, std::vector<Literal> args = {}) {
  XlaComputation computation = BuildOk(b);
  if (computation.IsNull()) return Literal();
  std::vector<const Literal*> pointers;
  for (const Literal& arg : args) pointers.push_back(&arg);
  HloEvaluator evaluator;
  absl::StatusOr<Literal> result = evaluator.Evaluate(computation.module(), pointers);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << computation.ToString();
  if (!result.ok()) return Literal();
  return *std::move(result);
}

void ExpectNear(const Literal& literal, std::vector<double> expected, double tolerance = 1e-5) {
  ASSERT_EQ(literal.element_count(), static_cast<int64_t>(expected.size())) << literal.ToString();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(literal.GetAsDouble(i), expected[i], tolerance) << "element " << i;
  }
}

// (x, y) -> x < y or x >= y, for sort and select-and-scatter.
XlaComputation ScalarCompare(PrimitiveType type, ComparisonDirection direction, int operands = 1) {
  XlaBuilder b("compare");
  std::vector<XlaOp> params;
  for (int i = 0; i < 2 * operands; ++i) {
    params.push_back(Parameter(&b, i, ShapeUtil::MakeScalarShape(type), "p"));
  }
  Compare(params[0], params[1], direction);
  return BuildOk(b);
}

// --- Elementwise -------------------------------------------------------------------

TEST(XlaBuilderTest, UnaryOps) {
  XlaBuilder b("unary");
  XlaOp x = ConstantR1<float>(&b, {-2.5f, -0.5f, 0.5f, 1.5f});
  Tuple(&b, {Neg(x), Abs(x), Floor(x), Ceil(x), Round(x), RoundNearestEven(x), Sign(x), Exp(Abs(x)),
             Sqrt(Abs(x)), Tanh(x), Logistic(x)});
  Literal result = BuildAndRun(b);
  ASSERT_EQ(result.tuple_size(), 11);
  ExpectNear(result.tuple_element(0), {2.5, 0.5, -0.5, -1.5});
  ExpectNear(result.tuple_element(1), {2.5, 0.5, 0.5, 1.5});
  ExpectNear(result.tuple_element(2), {-3, -1, 0, 1});
  ExpectNear(result.tuple_element(3), {-2, -0.0, 1, 2});
  ExpectNear(result.tuple_element(4), {-3, -1, 1, 2});    // away from zero
  ExpectNear(result.tuple_element(5), {-2, -0.0, 0, 2});  // to even
  ExpectNear(result.tuple_element(6), {-1, -1, 1, 1});
  ExpectNear(result.tuple_element(7), {std::exp(2.5), std::exp(0.5), std::exp(0.5), std::exp(1.5)});
  ExpectNear(result.tuple_element(8),
             {std::sqrt(2.5), std::sqrt(0.5), std::sqrt(0.5), std::sqrt(1.5)});
  ExpectNear(result.tuple_element(9),
             {std::tanh(-2.5), std::tanh(-0.5), std::tanh(0.5), std::tanh(1.5)});
  ExpectNear(result.tuple_element(10), {1 / (1 + std::exp(2.5)), 1 / (1 + std::exp(0.5)),
                                        1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-1.5))});
}

TEST(XlaBuilderTest, IntegerAndPredicateUnaryOps) {
  XlaBuilder b("bits");
  XlaOp x = ConstantR1<int32_t>(&b, {0, 1, 7, -1});
  XlaOp f = ConstantR1<float>(&b, {1.0f, INFINITY, NAN, -3.0f});
  Tuple(&b, {Not(x), Clz(x), PopulationCount(x), IsFinite(f), Not(IsFinite(f))});
  Literal result = BuildAndRun(b);
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({-1, -2, -8, 0}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({32, 31, 29, 0}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<int32_t>({0, 1, 3, 32}));
  EXPECT_EQ(result.tuple_element(3), LiteralUtil::CreateR1<bool>({true, false, false, true}));
  EXPECT_EQ(result.tuple_element(4), LiteralUtil::CreateR1<bool>({false, true, true, false}));
}

TEST(XlaBuilderTest, BinaryOpsAndOperators) {
  XlaBuilder b("binary");
  XlaOp x = ConstantR1<int32_t>(&b, {7, -7, 12, 5});
  XlaOp y = ConstantR1<int32_t>(&b, {2, 2, 5, 1});
  Tuple(&b, {x + y, x - y, x * y, x / y, x % y, Max(x, y), Min(x, y), x & y, x | y, x ^ y, x << y,
             x >> y, ShiftRightLogical(x, y), -x, ~x, Pow(y, y)});
  Literal r = BuildAndRun(b);
  ASSERT_EQ(r.tuple_size(), 16);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR1<int32_t>({9, -5, 17, 6}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR1<int32_t>({5, -9, 7, 4}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR1<int32_t>({14, -14, 60, 5}));
  EXPECT_EQ(r.tuple_element(3), LiteralUtil::CreateR1<int32_t>({3, -3, 2, 5}));
  EXPECT_EQ(r.tuple_element(4), LiteralUtil::CreateR1<int32_t>({1, -1, 2, 0}));
  EXPECT_EQ(r.tuple_element(5), LiteralUtil::CreateR1<int32_t>({7, 2, 12, 5}));
  EXPECT_EQ(r.tuple_element(6), LiteralUtil::CreateR1<int32_t>({2, -7, 5, 1}));
  EXPECT_EQ(r.tuple_element(7), LiteralUtil::CreateR1<int32_t>({2, 0, 4, 1}));
  EXPECT_EQ(r.tuple_element(8), LiteralUtil::CreateR1<int32_t>({7, -5, 13, 5}));
  EXPECT_EQ(r.tuple_element(9), LiteralUtil::CreateR1<int32_t>({5, -5, 9, 4}));
  EXPECT_EQ(r.tuple_element(10), LiteralUtil::CreateR1<int32_t>({28, -28, 384, 10}));
  EXPECT_EQ(r.tuple_element(11), LiteralUtil::CreateR1<int32_t>({1, -2, 0, 2}));  // arithmetic
  EXPECT_EQ(r.tuple_element(12),
            LiteralUtil::CreateR1<int32_t>({1, static_cast<int32_t>(0xFFFFFFF9u >> 2), 0, 2}));
  EXPECT_EQ(r.tuple_element(13), LiteralUtil::CreateR1<int32_t>({-7, 7, -12, -5}));
  EXPECT_EQ(r.tuple_element(14), LiteralUtil::CreateR1<int32_t>({-8, 6, -13, -6}));
  EXPECT_EQ(r.tuple_element(15), LiteralUtil::CreateR1<int32_t>({4, 4, 3125, 1}));
}

TEST(XlaBuilderTest, FloatBinaryOpsAndComplex) {
  XlaBuilder b("float_binary");
  XlaOp y = ConstantR1<float>(&b, {1.0f, -1.0f});
  XlaOp x = ConstantR1<float>(&b, {1.0f, 1.0f});
  XlaOp z = Complex(x, y);
  Tuple(&b, {Atan2(y, x), Real(Conj(z)), Imag(Conj(z)), Square(y)});
  Literal r = BuildAndRun(b);
  ExpectNear(r.tuple_element(0), {M_PI / 4, -M_PI / 4});
  ExpectNear(r.tuple_element(1), {1, 1});
  ExpectNear(r.tuple_element(2), {-1, 1});
  ExpectNear(r.tuple_element(3), {1, 1});
}

TEST(XlaBuilderTest, ScalarBroadcastInsertsBroadcast) {
  XlaBuilder b("scalar");
  XlaOp m = Parameter(&b, 0, ShapeF32({2, 3}), "m");
  Add(m, ConstantR0<float>(&b, 10));
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(),
              HasSubstr("f32[2,3]{1,0} broadcast(%constant), dimensions={}"));
  HloEvaluator evaluator;
  Literal arg = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  absl::StatusOr<Literal> result = evaluator.Evaluate(computation.module(), {&arg});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<float>({{11, 12, 13}, {14, 15, 16}}));
}

TEST(XlaBuilderTest, BroadcastDimensionsMapLowerRankOperand) {
  XlaBuilder b("bdims");
  XlaOp m = Parameter(&b, 0, ShapeF32({2, 3}), "m");
  XlaOp row = ConstantR1<float>(&b, {10, 20, 30});
  XlaOp col = ConstantR1<float>(&b, {100, 200});
  Tuple(&b, {Add(m, row, {1}), Sub(col, m, {0})});
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(), HasSubstr("broadcast(%constant), dimensions={1}"));
  EXPECT_THAT(computation.ToString(), HasSubstr("broadcast(%constant.1), dimensions={0}"));
  HloEvaluator evaluator;
  Literal arg = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  absl::StatusOr<Literal> result = evaluator.Evaluate(computation.module(), {&arg});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->tuple_element(0), LiteralUtil::CreateR2<float>({{11, 22, 33}, {14, 25, 36}}));
  EXPECT_EQ(result->tuple_element(1),
            LiteralUtil::CreateR2<float>({{99, 98, 97}, {196, 195, 194}}));
}

TEST(XlaBuilderTest, DegenerateDimensionsBroadcast) {
  XlaBuilder b("degenerate");
  XlaOp column = ConstantFromArray<float>(&b, {2, 1}, {1, 2});
  XlaOp row = ConstantFromArray<float>(&b, {1, 3}, {10, 20, 30});
  Mul(column, row);
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r, LiteralUtil::CreateR2<float>({{10, 20, 30}, {20, 40, 60}}));
}

TEST(XlaBuilderTest, Comparisons) {
  XlaBuilder b("compare");
  XlaOp x = ConstantR1<float>(&b, {1, 2, NAN});
  XlaOp y = ConstantR1<float>(&b, {2, 2, NAN});
  Tuple(&b, {Lt(x, y), Le(x, y), Eq(x, y), Ne(x, y), Gt(x, y), Ge(x, y), EqTotalOrder(x, y),
             Compare(x, y, {}, ComparisonDirection::kLt, Comparison::Type::kFloat)});
  XlaComputation computation = BuildOk(b);
  std::string text = computation.ToString();
  EXPECT_THAT(text, HasSubstr("direction=EQ, type=TOTALORDER"));
  // The element type's default comparison type is not printed.
  EXPECT_THAT(text, Not(HasSubstr("type=FLOAT")));
  HloEvaluator evaluator;
  absl::StatusOr<Literal> r = evaluator.Evaluate(computation.module(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_element(0), LiteralUtil::CreateR1<bool>({true, false, false}));
  EXPECT_EQ(r->tuple_element(1), LiteralUtil::CreateR1<bool>({true, true, false}));
  EXPECT_EQ(r->tuple_element(2), LiteralUtil::CreateR1<bool>({false, true, false}));
  EXPECT_EQ(r->tuple_element(3), LiteralUtil::CreateR1<bool>({true, false, true}));
  EXPECT_EQ(r->tuple_element(4), LiteralUtil::CreateR1<bool>({false, false, false}));
  EXPECT_EQ(r->tuple_element(5), LiteralUtil::CreateR1<bool>({false, true, false}));
  EXPECT_EQ(r->tuple_element(6), LiteralUtil::CreateR1<bool>({false, true, true}));
  EXPECT_EQ(r->tuple_element(7), LiteralUtil::CreateR1<bool>({true, false, false}));
}

TEST(XlaBuilderTest, SelectAndClampBroadcastScalars) {
  XlaBuilder b("select");
  XlaOp x = ConstantR1<int32_t>(&b, {-5, 0, 5, 10});
  XlaOp pred = Gt(x, ConstantR0<int32_t>(&b, 0));
  Tuple(&b, {Select(pred, x, ConstantR0<int32_t>(&b, -1)),
             Clamp(ConstantR0<int32_t>(&b, -2), x, ConstantR0<int32_t>(&b, 6)),
             Select(ConstantR0<bool>(&b, false), x, Neg(x))});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR1<int32_t>({-1, -1, 5, 10}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR1<int32_t>({-2, 0, 5, 6}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR1<int32_t>({5, 0, -5, -10}));
}

TEST(XlaBuilderTest, Conversions) {
  XlaBuilder b("convert");
  XlaOp x = ConstantR1<float>(&b, {1.0f, -2.75f});
  Tuple(&b, {ConvertElementType(x, S32), BitcastConvertType(x, U32), ReducePrecision(x, 5, 1)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR1<int32_t>({1, -2}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR1<uint32_t>({0x3f800000u, 0xc0300000u}));
  // 2.75 = 1.011b * 2: one mantissa bit rounds to 1.1b * 2 = 3 (ties to even).
  ExpectNear(r.tuple_element(2), {1.0, -3.0});
}

TEST(XlaBuilderTest, ConstantsOfEveryForm) {
  XlaBuilder b("constants");
  Tuple(&b, {ConstantR0<int32_t>(&b, 7), ConstantR1<int32_t>(&b, 3, 9),
             ConstantR2<int32_t>(&b, {{1, 2}, {3, 4}}),
             ConstantLiteral(&b, LiteralUtil::CreateR1<float>({0.5f})), Zero(&b, F32), One(&b, S32),
             MinValue(&b, S32), MaxValue(&b, U8), Zeros(&b, ShapeS32({2}))});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR0<int32_t>(7));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR1<int32_t>({9, 9, 9}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}}));
  EXPECT_EQ(r.tuple_element(3), LiteralUtil::CreateR1<float>({0.5f}));
  EXPECT_EQ(r.tuple_element(4), LiteralUtil::CreateR0<float>(0));
  EXPECT_EQ(r.tuple_element(5), LiteralUtil::CreateR0<int32_t>(1));
  EXPECT_EQ(r.tuple_element(6), LiteralUtil::CreateR0<int32_t>(INT32_MIN));
  EXPECT_EQ(r.tuple_element(7), LiteralUtil::CreateR0<uint8_t>(255));
  EXPECT_EQ(r.tuple_element(8), LiteralUtil::CreateR1<int32_t>({0, 0}));
}

// --- Data movement -----------------------------------------------------------------

TEST(XlaBuilderTest, IotaBroadcastReshapeTranspose) {
  XlaBuilder b("shapes");
  XlaOp iota = Iota(&b, S32, 6);    // 0..5
  XlaOp m = Reshape(iota, {2, 3});  // [[0,1,2],[3,4,5]]
  Tuple(&b, {Transpose(m, {1, 0}), Broadcast(ConstantR1<int32_t>(&b, {1, 2}), {2}),
             BroadcastInDim(ConstantR1<int32_t>(&b, {1, 2}), {2, 3}, {0}),
             BroadcastInDim(ConstantFromArray<int32_t>(&b, {1, 3}, {7, 8, 9}), {2, 3}, {0, 1}),
             Iota(&b, ShapeS32({2, 2}), 1), Rev(m, {1}), Collapse(Reshape(m, {1, 2, 3}), {1, 2}),
             Reshape(ShapeS32({3, 2}), m), ReshapeWithInferredDimension(m, {6}, 0)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR2<int32_t>({{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR2<int32_t>({{1, 2}, {1, 2}}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR2<int32_t>({{1, 1, 1}, {2, 2, 2}}));
  EXPECT_EQ(r.tuple_element(3), LiteralUtil::CreateR2<int32_t>({{7, 8, 9}, {7, 8, 9}}));
  EXPECT_EQ(r.tuple_element(4), LiteralUtil::CreateR2<int32_t>({{0, 1}, {0, 1}}));
  EXPECT_EQ(r.tuple_element(5), LiteralUtil::CreateR2<int32_t>({{2, 1, 0}, {5, 4, 3}}));
  EXPECT_EQ(r.tuple_element(6), LiteralUtil::CreateFromDimensions<int32_t>(
                                    {1, 6}, std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r.tuple_element(7), LiteralUtil::CreateR2<int32_t>({{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(r.tuple_element(8), LiteralUtil::CreateR1<int32_t>({0, 1, 2, 3, 4, 5}));
}

TEST(XlaBuilderTest, SlicesConcatAndPad) {
  XlaBuilder b("slices");
  XlaOp m = Reshape(Iota(&b, S32, 12), {3, 4});
  XlaOp start = ConstantR0<int32_t>(&b, 1);
  XlaOp zero = ConstantR0<int32_t>(&b, 0);
  PaddingConfig padding;
  auto* d0 = padding.add_dimensions();
  d0->set_edge_padding_low(1);
  auto* d1 = padding.add_dimensions();
  d1->set_interior_padding(1);
  XlaOp small = ConstantR2<int32_t>(&b, {{1, 2}, {3, 4}});
  Tuple(&b, {Slice(m, {0, 1}, {3, 4}, {2, 2}), SliceInDim(m, 1, 3, 1, 0),
             DynamicSlice(m, {start, start}, {2, 2}),
             DynamicUpdateSlice(m, ConstantR2<int32_t>(&b, {{-1, -2}}), {start, start}),
             ConcatInDim(&b, {small, small}, 1), Pad(small, zero, padding),
             PadInDim(small, ConstantR0<int32_t>(&b, 9), 1, 0, 1)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR2<int32_t>({{1, 3}, {9, 11}}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR2<int32_t>({{4, 5, 6, 7}, {8, 9, 10, 11}}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR2<int32_t>({{5, 6}, {9, 10}}));
  EXPECT_EQ(r.tuple_element(3),
            LiteralUtil::CreateR2<int32_t>({{0, 1, 2, 3}, {4, -1, -2, 7}, {8, 9, 10, 11}}));
  EXPECT_EQ(r.tuple_element(4), LiteralUtil::CreateR2<int32_t>({{1, 2, 1, 2}, {3, 4, 3, 4}}));
  EXPECT_EQ(r.tuple_element(5), LiteralUtil::CreateR2<int32_t>({{0, 0, 0}, {1, 0, 2}, {3, 0, 4}}));
  EXPECT_EQ(r.tuple_element(6), LiteralUtil::CreateR2<int32_t>({{1, 2, 9}, {3, 4, 9}}));
}

TEST(XlaBuilderTest, TuplesAndGetTupleElement) {
  XlaBuilder b("tuples");
  XlaOp p = Parameter(&b, 0, ShapeUtil::MakeTupleShape({ShapeF32({2}), ShapeS32({})}), "p");
  XlaOp t = Tuple(&b, {GetTupleElement(p, 1), GetTupleElement(p, 0)});
  GetTupleElement(t, 0);
  Literal arg = LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR1<float>({1, 2}), LiteralUtil::CreateR0<int32_t>(5)});
  std::vector<Literal> args;
  args.push_back(std::move(arg));
  EXPECT_EQ(BuildAndRun(b, std::move(args)), LiteralUtil::CreateR0<int32_t>(5));
}

TEST(XlaBuilderTest, GatherAndScatter) {
  XlaBuilder b("gather_scatter");
  XlaOp table = ConstantR2<float>(&b, {{1, 2}, {3, 4}, {5, 6}});
  XlaOp indices = ConstantR1<int32_t>(&b, {2, 0});
  GatherDimensionNumbers gather;
  gather.add_offset_dims(1);
  gather.add_collapsed_slice_dims(0);
  gather.add_start_index_map(0);
  gather.set_index_vector_dim(1);
  ScatterDimensionNumbers scatter;
  scatter.add_update_window_dims(1);
  scatter.add_inserted_window_dims(0);
  scatter.add_scatter_dims_to_operand_dims(0);
  scatter.set_index_vector_dim(1);
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  Tuple(&b, {Gather(table, indices, gather, {1, 2}),
             Scatter(table, indices, ConstantR2<float>(&b, {{10, 10}, {100, 100}}), add, scatter)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR2<float>({{5, 6}, {1, 2}}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR2<float>({{101, 102}, {3, 4}, {15, 16}}));
}

// --- Linear algebra ------------------------------------------------------------------

TEST(XlaBuilderTest, DotAndDotGeneral) {
  XlaBuilder b("dot");
  XlaOp a = ConstantR2<float>(&b, {{1, 2}, {3, 4}});
  XlaOp v = ConstantR1<float>(&b, {1, 1});
  DotDimensionNumbers batch;
  batch.add_lhs_batch_dimensions(0);
  batch.add_rhs_batch_dimensions(0);
  batch.add_lhs_contracting_dimensions(1);
  batch.add_rhs_contracting_dimensions(1);
  PrecisionConfig precision;
  precision.add_operand_precision(PrecisionConfig::HIGHEST);
  precision.add_operand_precision(PrecisionConfig::HIGHEST);
  XlaOp ai = ConstantR2<int8_t>(&b, {{1, 2}, {3, 4}});
  Tuple(&b, {Dot(a, v), Dot(a, a, &precision), DotGeneral(a, a, batch), Dot(ai, ai, nullptr, S32)});
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(), HasSubstr("operand_precision={highest,highest}"));
  EXPECT_THAT(computation.ToString(), HasSubstr("s32[2,2]{1,0} dot(%constant.2, %constant.2)"));
  HloEvaluator evaluator;
  absl::StatusOr<Literal> r = evaluator.Evaluate(computation.module(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_element(0), LiteralUtil::CreateR1<float>({3, 7}));
  EXPECT_EQ(r->tuple_element(1), LiteralUtil::CreateR2<float>({{7, 10}, {15, 22}}));
  EXPECT_EQ(r->tuple_element(2), LiteralUtil::CreateR1<float>({5, 25}));
  EXPECT_EQ(r->tuple_element(3), LiteralUtil::CreateR2<int32_t>({{7, 10}, {15, 22}}));
}

TEST(XlaBuilderTest, Convolutions) {
  XlaBuilder b("conv");
  // One 3x3 image of 0..8 (NCHW), one 2x2 kernel of ones (OIHW).
  XlaOp input = Reshape(ConvertElementType(Iota(&b, S32, 9), F32), {1, 1, 3, 3});
  XlaOp kernel = Broadcast(ConstantR0<float>(&b, 1), {1, 1, 2, 2});
  Tuple(&b,
        {Conv(input, kernel, {1, 1}, Padding::kValid), Conv(input, kernel, {1, 1}, Padding::kSame),
         ConvWithGeneralPadding(input, kernel, {2, 2}, {{1, 0}, {1, 0}}),
         ConvGeneralDilated(input, kernel, {1, 1}, {{0, 0}, {0, 0}}, {}, {2, 2},
                            XlaBuilder::CreateDefaultConvDimensionNumbers())});
  Literal r = BuildAndRun(b);
  // 2x2 window sums.
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateFromDimensions<float>(
                                    {1, 1, 2, 2}, std::vector<float>{8, 12, 20, 24}));
  // SAME: padding (0, 1) per spatial dimension.
  EXPECT_EQ(r.tuple_element(1),
            LiteralUtil::CreateFromDimensions<float>(
                {1, 1, 3, 3}, std::vector<float>{8, 12, 7, 20, 24, 13, 13, 15, 8}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateFromDimensions<float>(
                                    {1, 1, 2, 2}, std::vector<float>{0, 3, 9, 24}));
  // Kernel dilated by 2: the four corners.
  EXPECT_EQ(r.tuple_element(3),
            LiteralUtil::CreateFromDimensions<float>({1, 1, 1, 1}, std::vector<float>{16}));
}

TEST(XlaBuilderTest, FactorizationsAndFft) {
  XlaBuilder b("linalg");
  XlaOp a = ConstantR2<float>(&b, {{4, 2}, {2, 3}});
  XlaOp l = ConstantR2<float>(&b, {{2, 0}, {1, 1}});
  XlaOp rhs = ConstantR2<float>(&b, {{2}, {3}});
  XlaOp signal = Complex(ConstantR1<float>(&b, {1, 0, 0, 0}), ConstantR1<float>(&b, {0, 0, 0, 0}));
  Tuple(&b, {Cholesky(a, /*lower=*/true),
             TriangularSolve(l, rhs, /*left_side=*/true, /*lower=*/true, false,
                             TriangularSolveOptions::NO_TRANSPOSE),
             Real(Fft(signal, FFT, {4}))});
  Literal r = BuildAndRun(b);
  // The lower triangle (XLA leaves the other one unspecified).
  const Literal& l_result = r.tuple_element(0);
  EXPECT_NEAR(l_result.GetAsDouble(0), 2, 1e-5);
  EXPECT_NEAR(l_result.GetAsDouble(2), 1, 1e-5);
  EXPECT_NEAR(l_result.GetAsDouble(3), std::sqrt(2.0), 1e-5);
  ExpectNear(r.tuple_element(1), {1, 2});  // 2x = 2, x + y = 3
  ExpectNear(r.tuple_element(2), {1, 1, 1, 1});
}

TEST(XlaBuilderTest, BatchNorm) {
  XlaBuilder b("bn");
  XlaOp x = ConstantR2<float>(&b, {{1, 10}, {3, 30}});  // feature dimension 1
  XlaOp scale = ConstantR1<float>(&b, {1, 2});
  XlaOp offset = ConstantR1<float>(&b, {0, 1});
  XlaOp training = BatchNormTraining(x, scale, offset, 0.0f, 1);
  Tuple(&b, {GetTupleElement(training, 0), GetTupleElement(training, 1),
             BatchNormInference(x, scale, offset, ConstantR1<float>(&b, {2, 20}),
                                ConstantR1<float>(&b, {1, 100}), 0.0f, 1)});
  Literal r = BuildAndRun(b);
  ExpectNear(r.tuple_element(0), {-1, -1, 1, 3});
  ExpectNear(r.tuple_element(1), {2, 20});
  ExpectNear(r.tuple_element(2), {-1, -1, 1, 3});
}

// --- Computations ------------------------------------------------------------------------

TEST(XlaBuilderTest, ReduceSingleVariadicAndAll) {
  XlaBuilder b("reduce");
  XlaOp m = ConstantR2<float>(&b, {{1, 5, 2}, {7, 3, 4}});
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  // Argmax along dimension 1: a (value, index) reduction.
  XlaComputation argmax;
  {
    XlaBuilder rb("argmax");
    XlaOp v0 = Parameter(&rb, 0, ShapeUtil::MakeScalarShape(F32), "v0");
    XlaOp i0 = Parameter(&rb, 1, ShapeUtil::MakeScalarShape(S32), "i0");
    XlaOp v1 = Parameter(&rb, 2, ShapeUtil::MakeScalarShape(F32), "v1");
    XlaOp i1 = Parameter(&rb, 3, ShapeUtil::MakeScalarShape(S32), "i1");
    XlaOp take0 = Ge(v0, v1);
    Tuple(&rb, {Select(take0, v0, v1), Select(take0, i0, i1)});
    argmax = BuildOk(rb);
  }
  XlaOp indices = Iota(&b, ShapeS32({2, 3}), 1);
  XlaOp variadic =
      Reduce(&b, {m, indices}, {ConstantR0<float>(&b, -INFINITY), ConstantR0<int32_t>(&b, 0)},
             argmax, {1});
  Tuple(&b,
        {Reduce(m, ConstantR0<float>(&b, 0), add, {0}), ReduceAll(m, ConstantR0<float>(&b, 0), add),
         GetTupleElement(variadic, 0), GetTupleElement(variadic, 1)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR1<float>({8, 8, 6}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR0<float>(22));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR1<float>({5, 7}));
  EXPECT_EQ(r.tuple_element(3), LiteralUtil::CreateR1<int32_t>({1, 0}));
}

TEST(XlaBuilderTest, ReduceWindowAndSelectAndScatter) {
  XlaBuilder b("windows");
  XlaOp m = ConstantR2<float>(&b, {{1, 2, 3, 4}, {5, 6, 7, 8}});
  XlaComputation max = ScalarBinary(F32, &Max, "max");
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  XlaComputation ge = ScalarCompare(F32, ComparisonDirection::kGe);
  XlaOp row = ConstantR1<float>(&b, {1, 9, 4, 3});
  Tuple(&b,
        {ReduceWindow(m, ConstantR0<float>(&b, -INFINITY), max, {2, 2}, {2, 2}, Padding::kValid),
         ReduceWindowWithGeneralPadding(row, ConstantR0<float>(&b, 0), add, {2}, {1}, {}, {},
                                        {{1, 0}}),
         SelectAndScatter(row, ge, {2}, {2}, Padding::kValid, ConstantR1<float>(&b, {10, 20}),
                          ConstantR0<float>(&b, 0), add)});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR2<float>({{6, 8}}));
  EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR1<float>({1, 10, 13, 7}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR1<float>({0, 10, 20, 0}));
}

TEST(XlaBuilderTest, MapAndSort) {
  XlaBuilder b("map_sort");
  XlaComputation mul = ScalarBinary(S32, &Mul, "mul");
  XlaOp keys = ConstantR1<int32_t>(&b, {3, 1, 2});
  XlaOp values = ConstantR1<float>(&b, {30, 10, 20});
  XlaComputation less;
  {
    XlaBuilder cb("less");
    XlaOp k0 = Parameter(&cb, 0, ShapeUtil::MakeScalarShape(S32), "k0");
    XlaOp k1 = Parameter(&cb, 1, ShapeUtil::MakeScalarShape(S32), "k1");
    Parameter(&cb, 2, ShapeUtil::MakeScalarShape(F32), "v0");
    Parameter(&cb, 3, ShapeUtil::MakeScalarShape(F32), "v1");
    Lt(k0, k1);
    less = BuildOk(cb);
  }
  Tuple(&b, {Map(&b, {keys, keys}, mul, {0}), Sort({keys, values}, less, 0, /*is_stable=*/true),
             Sort({keys}, ScalarCompare(S32, ComparisonDirection::kGt))});
  Literal r = BuildAndRun(b);
  EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR1<int32_t>({9, 1, 4}));
  EXPECT_EQ(r.tuple_element(1).tuple_element(0), LiteralUtil::CreateR1<int32_t>({1, 2, 3}));
  EXPECT_EQ(r.tuple_element(1).tuple_element(1), LiteralUtil::CreateR1<float>({10, 20, 30}));
  EXPECT_EQ(r.tuple_element(2), LiteralUtil::CreateR1<int32_t>({3, 2, 1}));
}

TEST(XlaBuilderTest, WhileLoopSumsToTen) {
  Shape state = ShapeUtil::MakeTupleShape({ShapeS32({}), ShapeS32({})});
  XlaComputation condition, body;
  {
    XlaBuilder cb("condition");
    XlaOp s = Parameter(&cb, 0, state, "s");
    Lt(GetTupleElement(s, 0), ConstantR0<int32_t>(&cb, 10));
    condition = BuildOk(cb);
  }
  {
    XlaBuilder bb("body");
    XlaOp s = Parameter(&bb, 0, state, "s");
    XlaOp i = GetTupleElement(s, 0);
    Tuple(&bb, {i + ConstantR0<int32_t>(&bb, 1), GetTupleElement(s, 1) + i});
    body = BuildOk(bb);
  }
  XlaBuilder b("loop");
  XlaOp result =
      While(condition, body, Tuple(&b, {ConstantR0<int32_t>(&b, 0), ConstantR0<int32_t>(&b, 0)}));
  GetTupleElement(result, 1);
  EXPECT_EQ(BuildAndRun(b), LiteralUtil::CreateR0<int32_t>(45));  // 0 + 1 + ... + 9
}

TEST(XlaBuilderTest, ConditionalPredicatedAndIndexed) {
  auto unary = [](const std::string& name, bool negate) {
    XlaBuilder cb(name);
    XlaOp x = Parameter(&cb, 0, ShapeUtil::MakeScalarShape(F32), "x");
    if (negate) {
      Neg(x);
    } else {
      x* x;
    }
    return BuildOk(cb);
  };
  XlaComputation negate = unary("negate", true), square = unary("square", false);
  for (int32_t index : {0, 1, 7}) {
    XlaBuilder b("cond");
    XlaOp p = Parameter(&b, 0, ShapeUtil::MakeScalarShape(PRED), "p");
    XlaOp i = Parameter(&b, 1, ShapeUtil::MakeScalarShape(S32), "i");
    XlaOp three = ConstantR0<float>(&b, 3);
    const XlaComputation* branches[] = {&negate, &square};
    Tuple(&b,
          {Conditional(p, three, negate, three, square), Conditional(i, branches, {three, three})});
    std::vector<Literal> args;
    args.push_back(LiteralUtil::CreateR0<bool>(index == 0));
    args.push_back(LiteralUtil::CreateR0<int32_t>(index));
    Literal r = BuildAndRun(b, std::move(args));
    EXPECT_EQ(r.tuple_element(0), LiteralUtil::CreateR0<float>(index == 0 ? -3.0f : 9.0f));
    // Out-of-range indices run the last branch.
    EXPECT_EQ(r.tuple_element(1), LiteralUtil::CreateR0<float>(index == 0 ? -3.0f : 9.0f));
  }
}

TEST(XlaBuilderTest, CallAndNestedEmbeddedComputations) {
  // `sum_rows` itself calls `add` (a reduce inside); both get embedded.
  XlaComputation add = ScalarBinary(F32, &Add, "add");
  XlaComputation sum_rows;
  {
    XlaBuilder sb("sum_rows");
    XlaOp m = Parameter(&sb, 0, ShapeF32({2, 2}), "m");
    Reduce(m, ConstantR0<float>(&sb, 0), add, {1});
    sum_rows = BuildOk(sb);
  }
  XlaBuilder b("call");
  XlaOp m = ConstantR2<float>(&b, {{1, 2}, {3, 4}});
  // The same computation used twice is embedded once; a second "add" is
  // embedded under a fresh name.
  XlaComputation other_add = ScalarBinary(F32, &Add, "add");
  Tuple(&b, {Call(&b, sum_rows, {m}), Call(&b, sum_rows, {m}),
             Reduce(m, ConstantR0<float>(&b, 0), other_add, {0})});
  XlaComputation computation = BuildOk(b);
  const std::string text = computation.ToString();
  EXPECT_EQ(computation.module().computation_count(), 4) << text;
  int adds = 0;
  for (const HloComputation* c : computation.module().computations()) {
    if (c->name().rfind("add", 0) == 0) ++adds;
  }
  EXPECT_EQ(adds, 2) << text;
  HloEvaluator evaluator;
  absl::StatusOr<Literal> r = evaluator.Evaluate(computation.module(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_element(0), LiteralUtil::CreateR1<float>({3, 7}));
  EXPECT_EQ(r->tuple_element(2), LiteralUtil::CreateR1<float>({4, 6}));
  // The module prints and parses back to the same text.
  absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)->ToString(), text);
}

TEST(XlaBuilderTest, RandomNumbersAndTokens) {
  XlaBuilder b("rng");
  XlaOp uniform = RngUniform(ConstantR0<float>(&b, 2), ConstantR0<float>(&b, 3), ShapeF32({100}));
  XlaOp bits = RngBitGenerator(RNG_DEFAULT, ConstantR1<uint64_t>(&b, {1, 2}),
                               ShapeUtil::MakeShape(U32, {4}));
  XlaOp token = AfterAll(&b, {CreateToken(&b), CreateToken(&b)});
  Tuple(&b, {uniform, GetTupleElement(bits, 1),
             RngNormal(ConstantR0<float>(&b, 0), ConstantR0<float>(&b, 1), ShapeF32({3})), token});
  XlaComputation computation = BuildOk(b);
  absl::StatusOr<ProgramShape> shape = computation.GetProgramShape();
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->result().ToString(false), "(f32[100], u32[4], f32[3], token[])");
  HloEvaluator evaluator;
  absl::StatusOr<Literal> r = evaluator.Evaluate(computation.module(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  for (float v : r->tuple_element(0).data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 3.0f);
  }
}

TEST(XlaBuilderTest, DynamicDimensionSizes) {
  XlaBuilder b("dynamic");
  XlaOp m = Parameter(&b, 0, ShapeF32({4, 3}), "m");
  XlaOp padded = SetDimensionSize(m, ConstantR0<int32_t>(&b, 2), 0);
  Tuple(&b, {GetDimensionSize(m, 1), GetDimensionSize(padded, 0)});
  XlaComputation computation = BuildOk(b);
  EXPECT_THAT(computation.ToString(), HasSubstr("f32[<=4,3]{1,0} set-dimension-size"));
}

// --- Metadata, queries ------------------------------------------------------------------

TEST(XlaBuilderTest, MetadataAndFrontendAttributes) {
  XlaBuilder b("metadata");
  OpMetadata metadata;
  metadata.set_op_type("Add");
  metadata.set_op_name("model/add");
  b.SetOpMetadata(metadata);
  b.SetFrontendAttributes({{"key", "value"}});
  XlaOp p = Parameter(&b, 0, ShapeF32({}), "x");
  b.ClearOpMetadata();
  b.ClearFrontendAttributes();
  XlaOp n = Neg(p);
  ASSERT_TRUE(b.SetInstructionFrontendAttribute(n, "neg", "1").ok());
  XlaComputation computation = BuildOk(b);
  std::string text = computation.ToString();
  EXPECT_THAT(text, HasSubstr("%x = f32[] parameter(0), frontend_attributes={key=\"value\"}, "
                              "metadata={op_type=\"Add\" op_name=\"model/add\"}"));
  EXPECT_THAT(text, HasSubstr("negate(%x), frontend_attributes={neg=\"1\"}\n"));
}

TEST(XlaBuilderTest, QueriesAndBuildWithRoot) {
  XlaBuilder b("queries");
  XlaOp x = Parameter(&b, 0, ShapeF32({2}), "x");
  XlaOp c = ConstantR1<float>(&b, {1, 2});
  XlaOp sum = Add(x, c);
  Mul(sum, sum);
  EXPECT_EQ(b.GetShape(sum)->ToString(false), "f32[2]");
  EXPECT_EQ(*b.IsConstant(c), true);
  EXPECT_EQ(*b.IsConstant(Neg(c)), true);
  EXPECT_EQ(*b.IsConstant(sum), false);
  absl::StatusOr<ProgramShape> shape = b.GetProgramShape(sum);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->ToString(), "(f32[2]{0})->f32[2]{0}");
  absl::StatusOr<XlaComputation> built = b.Build(sum);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->module().entry_computation()->root_instruction()->opcode(), HloOpcode::kAdd);
  // The builder stays usable after Build().
  absl::StatusOr<XlaComputation> again = b.Build();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->module().entry_computation()->root_instruction()->opcode(), HloOpcode::kNegate);
  EXPECT_EQ(again->name(), "queries");
}

}  // namespace
}  // namespace axle
