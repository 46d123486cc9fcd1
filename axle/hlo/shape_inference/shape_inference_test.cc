//===- shape_inference_test.cc - Shapes XLA's rules give -------------------===//
#include "axle/hlo/shape_inference/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "axle/core/shape_util.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

Shape S(PrimitiveType type, const std::vector<int64_t>& dims) {
  return ShapeUtil::MakeShape(type, dims);
}

// The shape printed without layout, or the error message.
std::string Infer(const absl::StatusOr<Shape>& result) {
  return result.ok() ? result->ToString(false) : std::string(result.status().message());
}

ProgramShape Signature(std::vector<Shape> params, Shape result) {
  ProgramShape p;
  *p.mutable_parameters() = std::move(params);
  *p.mutable_result() = std::move(result);
  return p;
}

TEST(ShapeInferenceTest, Unary) {
  EXPECT_EQ(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kExp, S(F32, {2, 3}))), "f32[2,3]");
  EXPECT_EQ(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kAbs, S(C64, {4}))), "f32[4]");
  EXPECT_EQ(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kIsFinite, S(BF16, {4}))),
            "pred[4]");
  EXPECT_EQ(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kReal, S(C128, {}))), "f64[]");
  EXPECT_THAT(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kExp, S(S32, {2}))),
              HasSubstr("exponential: expected a floating-point or complex operand; got s32"));
  EXPECT_THAT(Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kNot, S(F32, {2}))),
              HasSubstr("not: expected a pred or integral operand"));
  EXPECT_THAT(
      Infer(ShapeInference::InferUnaryOpShape(HloOpcode::kNegate, ShapeUtil::MakeTupleShape({}))),
      HasSubstr("Expected array argument"));
}

TEST(ShapeInferenceTest, BinaryAndBroadcasting) {
  EXPECT_EQ(Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {2, 3}),
                                                     S(F32, {2, 3}), {})),
            "f32[2,3]");
  EXPECT_EQ(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kCompare, S(S32, {5}), S(S32, {5}), {})),
      "pred[5]");
  EXPECT_EQ(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kComplex, S(F32, {2}), S(F32, {2}), {})),
      "c64[2]");
  // Degenerate and in-dimension broadcasting (client semantics).
  EXPECT_EQ(Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kMultiply, S(F32, {2, 1}),
                                                     S(F32, {2, 3}), {})),
            "f32[2,3]");
  EXPECT_EQ(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {3}), S(F32, {4, 3}), {1})),
      "f32[4,3]");
  EXPECT_EQ(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {}), S(F32, {4, 3}), {})),
      "f32[4,3]");
  // Mixed float precision: the wider type wins.
  EXPECT_EQ(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(BF16, {2}), S(F32, {2}), {})),
      "f32[2]");
  EXPECT_THAT(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {2}), S(F32, {3}), {})),
      HasSubstr("Binary op add with incompatible shapes: f32[2] and f32[3]"));
  EXPECT_THAT(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {3}), S(F32, {4, 3}), {0})),
      HasSubstr("broadcast dimension 0 mismatch: 3 != 4"));
  EXPECT_THAT(
      Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, S(F32, {2}), S(S32, {2}), {})),
      HasSubstr("different element types"));
  EXPECT_THAT(Infer(ShapeInference::InferBinaryOpShape(HloOpcode::kSubtract, S(PRED, {2}),
                                                       S(PRED, {2}), {})),
              HasSubstr("subtract: expected arithmetic operands; got pred"));
}

TEST(ShapeInferenceTest, ClampSelect) {
  EXPECT_EQ(Infer(ShapeInference::InferClampShape(S(F32, {}), S(F32, {3}), S(F32, {}))), "f32[3]");
  EXPECT_THAT(Infer(ShapeInference::InferClampShape(S(F32, {2}), S(F32, {3}), S(F32, {}))),
              HasSubstr("clamp with incompatible shapes"));
  EXPECT_EQ(Infer(ShapeInference::InferSelectShape(S(PRED, {3}), S(S32, {3}), S(S32, {3}))),
            "s32[3]");
  EXPECT_THAT(Infer(ShapeInference::InferSelectShape(S(S32, {3}), S(S32, {3}), S(S32, {3}))),
              HasSubstr("predicate must have element type pred"));
}

TEST(ShapeInferenceTest, Conversions) {
  EXPECT_EQ(Infer(ShapeInference::InferConvertShape(S(F32, {2}), S8)), "s8[2]");
  EXPECT_EQ(Infer(ShapeInference::InferBitcastConvertShape(S(F32, {2}), U8)), "u8[2,4]");
  EXPECT_EQ(Infer(ShapeInference::InferBitcastConvertShape(S(U8, {2, 4}), F32)), "f32[2]");
  EXPECT_EQ(Infer(ShapeInference::InferBitcastConvertShape(S(F32, {2}), S32)), "s32[2]");
  EXPECT_THAT(Infer(ShapeInference::InferBitcastConvertShape(S(U8, {2, 3}), F32)),
              HasSubstr("the last dimension must equal the ratio of bit widths (4)"));
  EXPECT_THAT(Infer(ShapeInference::InferReducePrecisionShape(S(F32, {2}), 0, 3)),
              HasSubstr("exponent_bits >= 1"));
}

TEST(ShapeInferenceTest, DataMovement) {
  EXPECT_EQ(Infer(ShapeInference::InferBroadcastShape(S(F32, {3}), {2})), "f32[2,3]");
  EXPECT_EQ(Infer(ShapeInference::InferBroadcastShape(S(F32, {3}), S(F32, {2, 3}), {1})),
            "f32[2,3]");
  EXPECT_THAT(Infer(ShapeInference::InferBroadcastShape(S(F32, {3}), S(F32, {2, 3}), {0})),
              HasSubstr("operand dimension 0 has size 3 but output dimension 0 has size 2"));
  EXPECT_EQ(Infer(ShapeInference::InferReshapeShape(S(F32, {2, 6}), {3, 4})), "f32[3,4]");
  EXPECT_THAT(Infer(ShapeInference::InferReshapeShape(S(F32, {2, 6}), {5})),
              HasSubstr("mismatched element counts: from=12"));
  EXPECT_EQ(Infer(ShapeInference::InferTransposeShape(S(F32, {2, 3, 4}), {2, 0, 1})), "f32[4,2,3]");
  EXPECT_THAT(Infer(ShapeInference::InferTransposeShape(S(F32, {2, 3}), {0, 0})),
              HasSubstr("is not a permutation"));
  EXPECT_EQ(Infer(ShapeInference::InferSliceShape(S(F32, {10, 8}), {1, 0}, {9, 8}, {3, 2})),
            "f32[3,4]");
  EXPECT_THAT(Infer(ShapeInference::InferSliceShape(S(F32, {10}), {0}, {11}, {1})),
              HasSubstr("limit index (11) of dimension 0 must be at most the dimension size (10)"));
  EXPECT_EQ(Infer(ShapeInference::InferDynamicSliceShape(S(F32, {10, 8}), {S(S32, {}), S(S32, {})},
                                                         {2, 8})),
            "f32[2,8]");
  EXPECT_THAT(Infer(ShapeInference::InferDynamicSliceShape(S(F32, {10, 8}), {S(S32, {})}, {2, 8})),
              HasSubstr("there are 1 start indices but the operand has rank 2"));
  EXPECT_EQ(Infer(ShapeInference::InferDynamicUpdateSliceShape(S(F32, {10, 8}), S(F32, {2, 8}),
                                                               {S(S64, {}), S(S64, {})})),
            "f32[10,8]");
  Shape a = S(F32, {2, 3}), b = S(F32, {4, 3});
  EXPECT_EQ(Infer(ShapeInference::InferConcatOpShape({&a, &b}, 0)), "f32[6,3]");
  EXPECT_THAT(Infer(ShapeInference::InferConcatOpShape({&a, &b}, 1)),
              HasSubstr("dimension 0 differs"));
  PaddingConfig padding;
  auto* d0 = padding.add_dimensions();
  d0->set_edge_padding_low(1);
  d0->set_edge_padding_high(2);
  d0->set_interior_padding(1);
  EXPECT_EQ(Infer(ShapeInference::InferPadShape(S(F32, {3}), S(F32, {}), padding)), "f32[8]");
  Shape tuple = ShapeUtil::MakeTupleShape({S(F32, {2}), S(S32, {})});
  EXPECT_EQ(Infer(ShapeInference::InferGetTupleElementShape(tuple, 1)), "s32[]");
  EXPECT_THAT(Infer(ShapeInference::InferGetTupleElementShape(tuple, 2)),
              HasSubstr("index=2 is out of bounds"));
  EXPECT_EQ(Infer(ShapeInference::InferTopKShape(S(F32, {5, 10}), 3)), "(f32[5,3], s32[5,3])");
  EXPECT_EQ(Infer(ShapeInference::InferSetDimensionSizeShape(S(F32, {5}), S(S32, {}), 0)),
            "f32[<=5]");
  EXPECT_THAT(Infer(ShapeInference::InferIotaShape(S(F32, {5}), 1)),
              HasSubstr("iota_dimension=1 is out of range"));
}

TEST(ShapeInferenceTest, Dot) {
  DotDimensionNumbers dnums;
  dnums.add_lhs_contracting_dimensions(1);
  dnums.add_rhs_contracting_dimensions(0);
  EXPECT_EQ(
      Infer(ShapeInference::InferDotOpShape(S(F32, {2, 3}), S(F32, {3, 4}), dnums, std::nullopt)),
      "f32[2,4]");
  EXPECT_EQ(Infer(ShapeInference::InferDotOpShape(S(S8, {2, 3}), S(S8, {3, 4}), dnums, S32)),
            "s32[2,4]");
  EXPECT_THAT(
      Infer(ShapeInference::InferDotOpShape(S(F32, {3}), S(F32, {3, 4}), dnums, std::nullopt)),
      HasSubstr("dot: lhs_contracting_dims={1} but lhs has rank 1"));
  EXPECT_THAT(
      Infer(ShapeInference::InferDotOpShape(S(F32, {2, 5}), S(F32, {3, 4}), dnums, std::nullopt)),
      HasSubstr("contracting dimension sizes do not match"));
  DotDimensionNumbers batched;
  batched.add_lhs_batch_dimensions(0);
  batched.add_rhs_batch_dimensions(0);
  batched.add_lhs_contracting_dimensions(2);
  batched.add_rhs_contracting_dimensions(1);
  EXPECT_EQ(Infer(ShapeInference::InferDotOpShape(S(F32, {7, 2, 3}), S(F32, {7, 3, 4}), batched,
                                                  std::nullopt)),
            "f32[7,2,4]");
}

TEST(ShapeInferenceTest, RaggedDot) {
  RaggedDotDimensionNumbers dnums;
  dnums.mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
  dnums.mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(1);
  dnums.add_lhs_ragged_dimensions(0);
  dnums.add_rhs_group_dimensions(0);
  // lhs [m,k], rhs [g,k,n], group_sizes [g] -> [m,n]
  EXPECT_EQ(Infer(ShapeInference::InferRaggedDotOpShape(S(F32, {11, 5}), S(F32, {3, 5, 7}),
                                                        S(S32, {3}), dnums, std::nullopt)),
            "f32[11,7]");
}

TEST(ShapeInferenceTest, Convolution) {
  ConvolutionDimensionNumbers dnums;  // b01f_01io->b01f
  dnums.set_input_batch_dimension(0);
  dnums.add_input_spatial_dimensions(1);
  dnums.add_input_spatial_dimensions(2);
  dnums.set_input_feature_dimension(3);
  dnums.add_kernel_spatial_dimensions(0);
  dnums.add_kernel_spatial_dimensions(1);
  dnums.set_kernel_input_feature_dimension(2);
  dnums.set_kernel_output_feature_dimension(3);
  dnums.set_output_batch_dimension(0);
  dnums.add_output_spatial_dimensions(1);
  dnums.add_output_spatial_dimensions(2);
  dnums.set_output_feature_dimension(3);
  Window window;
  for (int i = 0; i < 2; ++i) {
    auto* d = window.add_dimensions();
    d->set_size(3);
    d->set_stride(2);
    d->set_padding_low(1);
    d->set_padding_high(1);
  }
  EXPECT_EQ(Infer(ShapeInference::InferConvolveShape(S(F32, {1, 8, 8, 4}), S(F32, {3, 3, 4, 16}), 1,
                                                     1, window, dnums, std::nullopt)),
            "f32[1,4,4,16]");
  EXPECT_THAT(Infer(ShapeInference::InferConvolveShape(S(F32, {1, 8, 8, 4}), S(F32, {3, 3, 5, 16}),
                                                       1, 1, window, dnums, std::nullopt)),
              HasSubstr("must equal the kernel input feature dimension (5)"));
  EXPECT_EQ(Infer(ShapeInference::InferConvolveShape(S(F32, {1, 8, 8, 4}), S(F32, {3, 3, 2, 16}), 2,
                                                     1, window, dnums, std::nullopt)),
            "f32[1,4,4,16]");
}

TEST(ShapeInferenceTest, ReduceAndWindows) {
  ProgramShape add = Signature({S(F32, {}), S(F32, {})}, S(F32, {}));
  Shape input = S(F32, {4, 5, 6}), init = S(F32, {});
  EXPECT_EQ(Infer(ShapeInference::InferReduceShape({&input, &init}, {0, 2}, add)), "f32[5]");
  EXPECT_THAT(Infer(ShapeInference::InferReduceShape({&input, &init}, {3}, add)),
              HasSubstr("reduce: dimensions={3} but the input f32[4,5,6] has rank 3"));
  ProgramShape bad = Signature({S(F32, {}), S(F32, {}), S(F32, {})}, S(F32, {}));
  EXPECT_THAT(Infer(ShapeInference::InferReduceShape({&input, &init}, {0}, bad)),
              HasSubstr("must take 2 parameters, but takes 3"));
  // Variadic reduce: (f32, s32) -> tuple.
  Shape idx = S(S32, {4, 5, 6}), idx_init = S(S32, {});
  ProgramShape argmax = Signature({S(F32, {}), S(S32, {}), S(F32, {}), S(S32, {})},
                                  ShapeUtil::MakeTupleShape({S(F32, {}), S(S32, {})}));
  EXPECT_EQ(Infer(ShapeInference::InferReduceShape({&input, &idx, &init, &idx_init}, {1}, argmax)),
            "(f32[4,6], s32[4,6])");

  Window window;
  for (int i = 0; i < 3; ++i) {
    auto* d = window.add_dimensions();
    d->set_size(i == 0 ? 2 : 1);
    d->set_stride(i == 0 ? 2 : 1);
  }
  EXPECT_EQ(Infer(ShapeInference::InferReduceWindowShape({&input}, {&init}, window, add)),
            "f32[2,5,6]");
  Shape source = S(F32, {2, 5, 6});
  ProgramShape ge = Signature({S(F32, {}), S(F32, {})}, S(PRED, {}));
  EXPECT_EQ(Infer(ShapeInference::InferSelectAndScatterShape(input, ge, window, source, init, add)),
            "f32[4,5,6]");
}

TEST(ShapeInferenceTest, GatherScatter) {
  GatherDimensionNumbers g;
  g.add_offset_dims(1);
  g.add_collapsed_slice_dims(0);
  g.add_start_index_map(0);
  g.set_index_vector_dim(1);
  EXPECT_EQ(Infer(ShapeInference::InferGatherShape(S(F32, {5, 3}), S(S32, {2, 1}), g, {1, 3})),
            "f32[2,3]");
  EXPECT_THAT(Infer(ShapeInference::InferGatherShape(S(F32, {5, 3}), S(S32, {2, 1}), g, {2, 3})),
              HasSubstr("collapsed dimension 0 has slice size 2"));

  ScatterDimensionNumbers s;
  s.add_update_window_dims(1);
  s.add_inserted_window_dims(0);
  s.add_scatter_dims_to_operand_dims(0);
  s.set_index_vector_dim(1);
  Shape operand = S(F32, {5, 3}), indices = S(S32, {2, 1}), updates = S(F32, {2, 3});
  ProgramShape add = Signature({S(F32, {}), S(F32, {})}, S(F32, {}));
  EXPECT_EQ(Infer(ShapeInference::InferScatterShape({&operand, &indices, &updates}, add, s)),
            "f32[5,3]");
  Shape bad_updates = S(F32, {3, 3});
  EXPECT_THAT(Infer(ShapeInference::InferScatterShape({&operand, &indices, &bad_updates}, add, s)),
              HasSubstr("scatter dimension 0 of the updates"));
}

TEST(ShapeInferenceTest, ControlFlowAndCollectives) {
  Shape state = ShapeUtil::MakeTupleShape({S(S32, {}), S(F32, {4})});
  ProgramShape cond = Signature({state}, S(PRED, {}));
  ProgramShape body = Signature({state}, state);
  EXPECT_EQ(Infer(ShapeInference::InferWhileShape(cond, body, state)), "(s32[], f32[4])");
  ProgramShape bad_cond = Signature({state}, S(S32, {}));
  EXPECT_THAT(Infer(ShapeInference::InferWhileShape(bad_cond, body, state)),
              HasSubstr("the condition must return pred[]"));

  ProgramShape b0 = Signature({S(F32, {})}, S(F32, {2}));
  ProgramShape b1 = Signature({S(S32, {})}, S(F32, {2}));
  EXPECT_EQ(
      Infer(ShapeInference::InferConditionalShape(S(PRED, {}), {b0, b1}, {S(F32, {}), S(S32, {})})),
      "f32[2]");
  EXPECT_THAT(
      Infer(ShapeInference::InferConditionalShape(S(F32, {}), {b0, b1}, {S(F32, {}), S(S32, {})})),
      HasSubstr("branch index must be pred[] or s32[]"));

  Shape x = S(F32, {4, 8});
  EXPECT_EQ(Infer(ShapeInference::InferAllGatherShape({&x}, 0, 2)), "f32[8,8]");
  EXPECT_EQ(Infer(ShapeInference::InferReduceScatterShape({&x}, 1, 4)), "f32[4,2]");
  EXPECT_THAT(Infer(ShapeInference::InferReduceScatterShape({&x}, 1, 3)),
              HasSubstr("not divisible by the shard count 3"));
  EXPECT_EQ(Infer(ShapeInference::InferAllToAllShape(x, 1, 0, 2)), "f32[8,4]");
}

TEST(ShapeInferenceTest, Scan) {
  Shape input = S(F32, {10, 3}), init = S(F32, {3});
  ProgramShape body =
      Signature({S(F32, {3}), S(F32, {3})}, ShapeUtil::MakeTupleShape({S(F32, {3}), S(F32, {3})}));
  EXPECT_EQ(Infer(ShapeInference::InferScanShape({&input, &init}, 0, 1, body)),
            "(f32[10,3], f32[3])");
  Shape bad_init = S(F32, {4});
  EXPECT_THAT(Infer(ShapeInference::InferScanShape({&input, &bad_init}, 0, 1, body)),
              HasSubstr("carry 0 returned by to_apply (f32[3]) differs from its init value"));
}

TEST(ShapeInferenceTest, LinearAlgebra) {
  EXPECT_EQ(Infer(ShapeInference::InferFftShape(S(F32, {4, 8}), RFFT, {8})), "c64[4,5]");
  EXPECT_EQ(Infer(ShapeInference::InferFftShape(S(C64, {4, 5}), IRFFT, {8})), "f32[4,8]");
  EXPECT_EQ(Infer(ShapeInference::InferCholeskyShape(S(F32, {2, 3, 3}))), "f32[2,3,3]");
  EXPECT_THAT(Infer(ShapeInference::InferCholeskyShape(S(F32, {3, 4}))),
              HasSubstr("two minor dimensions must be equal"));
  TriangularSolveOptions options;
  options.set_left_side(true);
  EXPECT_EQ(
      Infer(ShapeInference::InferTriangularSolveShape(S(F32, {3, 3}), S(F32, {3, 5}), options)),
      "f32[3,5]");
  EXPECT_EQ(Infer(ShapeInference::InferBatchNormTrainingShape(S(F32, {2, 4, 6}), S(F32, {4}),
                                                              S(F32, {4}), 1)),
            "(f32[2,4,6], f32[4], f32[4])");
  EXPECT_THAT(Infer(ShapeInference::InferBatchNormTrainingShape(S(F32, {2, 4, 6}), S(F32, {5}),
                                                                S(F32, {4}), 1)),
              HasSubstr("scale has size 5 but the feature count is 4"));
}

}  // namespace
}  // namespace axle
