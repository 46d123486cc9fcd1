#include "axle/hlo/text/attribute_text.h"

#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(AttributeTextTest, EnumNamesRoundTrip) {
  for (auto d : {ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kGe,
                 ComparisonDirection::kGt, ComparisonDirection::kLe, ComparisonDirection::kLt}) {
    EXPECT_EQ(*StringToComparisonDirection(ComparisonDirectionToString(d)), d);
  }
  EXPECT_EQ(ComparisonDirectionToString(ComparisonDirection::kLt), "LT");
  EXPECT_FALSE(StringToComparisonDirection("lt").ok());
  EXPECT_EQ(ComparisonTypeToString(ComparisonType::kFloatTotalOrder), "TOTALORDER");
  EXPECT_EQ(*StringToComparisonType("UNSIGNED"), ComparisonType::kUnsigned);
  EXPECT_EQ(DefaultComparisonType(F32), ComparisonType::kFloat);
  EXPECT_EQ(DefaultComparisonType(C64), ComparisonType::kFloat);
  EXPECT_EQ(DefaultComparisonType(S8), ComparisonType::kSigned);
  EXPECT_EQ(DefaultComparisonType(U32), ComparisonType::kUnsigned);
  EXPECT_EQ(DefaultComparisonType(PRED), ComparisonType::kUnsigned);

  EXPECT_EQ(FftTypeToString(IRFFT), "IRFFT");
  EXPECT_EQ(*StringToFftType("RFFT"), RFFT);
  EXPECT_EQ(RandomDistributionToString(RNG_NORMAL), "rng_normal");
  EXPECT_EQ(*StringToRandomDistribution("RNG_UNIFORM"), RNG_UNIFORM);
  EXPECT_EQ(RandomAlgorithmToString(RNG_THREE_FRY), "rng_three_fry");
  EXPECT_EQ(*StringToRandomAlgorithm("rng_philox"), RNG_PHILOX);
  EXPECT_EQ(PrecisionToString(PrecisionConfig::HIGHEST), "highest");
  EXPECT_EQ(*StringToPrecision("HIGH"), PrecisionConfig::HIGH);
  EXPECT_EQ(AlgorithmToString(PrecisionConfig::ALG_DOT_BF16_BF16_F32_X6), "dot_bf16_bf16_f32_x6");
  EXPECT_EQ(*StringToAlgorithm("dot_tf32_tf32_f32"), PrecisionConfig::ALG_DOT_TF32_TF32_F32);
  EXPECT_EQ(CustomCallApiVersionToString(API_VERSION_TYPED_FFI), "API_VERSION_TYPED_FFI");
  EXPECT_EQ(*StringToCustomCallApiVersion("api_version_status_returning"),
            API_VERSION_STATUS_RETURNING);
  EXPECT_EQ(CustomCallScheduleToString(SCHEDULE_EARLIEST), "SCHEDULE_EARLIEST");
  EXPECT_EQ(*StringToCustomCallSchedule("schedule_latest"), SCHEDULE_LATEST);
  EXPECT_EQ(FusionKindToString(FusionKind::kOutput), "kOutput");
  EXPECT_EQ(*StringToFusionKind("kCustom"), FusionKind::kCustom);
  EXPECT_FALSE(StringToFusionKind("loop").ok());
  EXPECT_EQ(TriangularSolveTransposeToString(TriangularSolveOptions::ADJOINT), "ADJOINT");
  EXPECT_EQ(*StringToTriangularSolveTranspose("NO_TRANSPOSE"),
            TriangularSolveOptions::NO_TRANSPOSE);
  absl::Status bad = StringToPrecision("fast").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("fast"), std::string::npos);
}

TEST(AttributeTextTest, EscapingAndJsonDicts) {
  EXPECT_EQ(CEscape("a\"b\n\\c'"), "a\\\"b\\n\\\\c\\'");
  EXPECT_EQ(QuotedString("x\ty"), "\"x\\ty\"");
  EXPECT_TRUE(LexesAsJsonDict("{}"));
  EXPECT_TRUE(LexesAsJsonDict("{\"a\":{\"b\":\"}\"}}"));
  EXPECT_TRUE(LexesAsJsonDict("{\"a\":\"\\\"}\"}"));
  EXPECT_FALSE(LexesAsJsonDict("{} "));
  EXPECT_FALSE(LexesAsJsonDict("{}{}"));
  EXPECT_FALSE(LexesAsJsonDict("{\"a}"));
  EXPECT_FALSE(LexesAsJsonDict("foo"));
  EXPECT_FALSE(LexesAsJsonDict(""));
}

TEST(AttributeTextTest, Window) {
  Window window;
  for (int i = 0; i < 2; ++i) {
    WindowDimension* d = window.add_dimensions();
    d->set_size(3);
  }
  EXPECT_EQ(WindowToString(window), "size=3x3");
  window.mutable_dimensions()->at(1).set_stride(2);
  window.mutable_dimensions()->at(0).set_padding_low(1);
  window.mutable_dimensions()->at(0).set_padding_high(2);
  window.mutable_dimensions()->at(1).set_base_dilation(2);
  window.mutable_dimensions()->at(0).set_window_dilation(3);
  window.mutable_dimensions()->at(1).set_window_reversal(true);
  EXPECT_EQ(WindowToString(window),
            "size=3x3 stride=1x2 pad=1_2x0_0 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1");
  EXPECT_EQ(WindowToString(Window()), "");
}

TEST(AttributeTextTest, DimLabels) {
  ConvolutionDimensionNumbers dnums;
  dnums.set_input_batch_dimension(0);
  dnums.set_input_feature_dimension(3);
  dnums.add_input_spatial_dimensions(1);
  dnums.add_input_spatial_dimensions(2);
  dnums.set_kernel_input_feature_dimension(2);
  dnums.set_kernel_output_feature_dimension(3);
  dnums.add_kernel_spatial_dimensions(0);
  dnums.add_kernel_spatial_dimensions(1);
  dnums.set_output_batch_dimension(0);
  dnums.set_output_feature_dimension(1);
  dnums.add_output_spatial_dimensions(3);
  dnums.add_output_spatial_dimensions(2);
  EXPECT_EQ(ConvolutionDimensionNumbersToString(dnums), "b01f_01io->bf10");
  absl::StatusOr<ConvolutionDimensionNumbers> parsed =
      StringToConvolutionDimensionNumbers("b01f_01io->bf10");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, dnums);
  EXPECT_FALSE(StringToConvolutionDimensionNumbers("b01f_01io").ok());
  EXPECT_FALSE(StringToConvolutionDimensionNumbers("b0f_01io->b01f").ok());
  EXPECT_FALSE(StringToConvolutionDimensionNumbers("b0xf_01io->b01f").ok());
  // 1-D convolution without spatial dimensions.
  absl::StatusOr<ConvolutionDimensionNumbers> no_spatial =
      StringToConvolutionDimensionNumbers("bf_io->bf");
  ASSERT_TRUE(no_spatial.ok());
  EXPECT_EQ(ConvolutionDimensionNumbersToString(*no_spatial), "bf_io->bf");
}

TEST(AttributeTextTest, PaddingSliceAndDimensionNumbers) {
  PaddingConfig padding;
  auto* d0 = padding.add_dimensions();
  d0->set_edge_padding_low(0);
  d0->set_edge_padding_high(1);
  auto* d1 = padding.add_dimensions();
  d1->set_edge_padding_low(-2);
  d1->set_edge_padding_high(3);
  EXPECT_EQ(PaddingConfigToString(padding), "0_1x-2_3");
  padding.mutable_dimensions()->at(1).set_interior_padding(1);
  EXPECT_EQ(PaddingConfigToString(padding), "0_1_0x-2_3_1");

  EXPECT_EQ(SliceToString({0, 1}, {2, 5}, {1, 1}), "{[0:2], [1:5]}");
  EXPECT_EQ(SliceToString({0, 1}, {2, 5}, {1, 2}), "{[0:2:1], [1:5:2]}");

  DotDimensionNumbers dot;
  dot.add_lhs_contracting_dimensions(1);
  dot.add_rhs_contracting_dimensions(0);
  EXPECT_EQ(DotDimensionNumbersToString(dot), "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  dot.add_lhs_batch_dimensions(0);
  dot.add_rhs_batch_dimensions(0);
  EXPECT_EQ(DotDimensionNumbersToString(dot),
            "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
            "rhs_contracting_dims={0}");
  EXPECT_EQ(DotDimensionNumbersToString(DotDimensionNumbers()),
            "lhs_contracting_dims={}, rhs_contracting_dims={}");

  GatherDimensionNumbers gather;
  gather.add_offset_dims(1);
  gather.add_collapsed_slice_dims(0);
  gather.add_start_index_map(0);
  gather.set_index_vector_dim(1);
  EXPECT_EQ(GatherDimensionNumbersToString(gather),
            "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1");
  gather.add_operand_batching_dims(2);
  gather.add_start_indices_batching_dims(0);
  EXPECT_EQ(GatherDimensionNumbersToString(gather),
            "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "operand_batching_dims={2}, start_indices_batching_dims={0}, index_vector_dim=1");

  ScatterDimensionNumbers scatter;
  scatter.add_update_window_dims(1);
  scatter.add_inserted_window_dims(0);
  scatter.add_scatter_dims_to_operand_dims(0);
  scatter.set_index_vector_dim(1);
  EXPECT_EQ(ScatterDimensionNumbersToString(scatter),
            "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1");

  PrecisionConfig precision;
  EXPECT_TRUE(PrecisionConfigToStrings(precision).empty());
  precision.add_operand_precision(PrecisionConfig::DEFAULT);
  precision.add_operand_precision(PrecisionConfig::DEFAULT);
  EXPECT_TRUE(PrecisionConfigToStrings(precision).empty());
  precision.set_operand_precision(1, PrecisionConfig::HIGHEST);
  precision.set_algorithm(PrecisionConfig::ALG_DOT_BF16_BF16_F32);
  EXPECT_EQ(PrecisionConfigToStrings(precision),
            (std::vector<std::string>{"operand_precision={default,highest}",
                                      "algorithm=dot_bf16_bf16_f32"}));
}

TEST(AttributeTextTest, MetadataGroupsAndFrontendAttributes) {
  OpMetadata metadata;
  EXPECT_FALSE(OpMetadataIsPrinted(metadata));
  metadata.set_source_line(3);
  EXPECT_FALSE(OpMetadataIsPrinted(metadata));
  metadata.set_op_type("const");
  metadata.set_op_name("\"it's\n");
  metadata.set_source_file("a.cc");
  metadata.add_profile_type(1);
  metadata.add_profile_type(2);
  EXPECT_TRUE(OpMetadataIsPrinted(metadata));
  EXPECT_EQ(OpMetadataToString(metadata),
            "op_type=\"const\" op_name=\"\\\"it\\'s\\n\" source_file=\"a.cc\" source_line=3 "
            "profile_type={1,2}");

  std::vector<ReplicaGroup> groups(2);
  groups[0].add_replica_ids(0);
  groups[0].add_replica_ids(1);
  groups[1].add_replica_ids(2);
  groups[1].add_replica_ids(3);
  EXPECT_EQ(ReplicaGroupsToString(groups), "{{0,1},{2,3}}");
  EXPECT_EQ(ReplicaGroupsToString({}), "{}");
  EXPECT_EQ(SourceTargetPairsToString({{0, 1}, {1, 0}}), "{{0,1},{1,0}}");

  FrontendAttributes attrs = {{"b", "x\"y"}, {"a", "{\"k\":1}"}};
  EXPECT_EQ(FrontendAttributesToString(attrs), "{a={\"k\":1},b=\"x\\\"y\"}");
  EXPECT_EQ(FrontendAttributesToString({}), "{}");

  std::vector<OutputOperandAlias> aliasing = {{{0}, 0, {}}, {{1}, 1, {2}}};
  EXPECT_EQ(OutputOperandAliasingToString(aliasing), "{{0}: (0, {}), {1}: (1, {2})}");
}

TEST(AttributeTextTest, SendRecvSourceTargetPairs) {
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  absl::StatusOr<Pairs> pairs = ParseSendRecvSourceTargetPairs("{{1,0},{0, 12}}");
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ(*pairs, (Pairs{{1, 0}, {0, 12}}));
  EXPECT_TRUE(ParseSendRecvSourceTargetPairs("{}").value().empty());
  absl::StatusOr<Pairs> bad = ParseSendRecvSourceTargetPairs("{{1,x}}");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bad _xla_send_recv_source_target_pairs \"{{1,x}}\""),
            absl::string_view::npos)
      << bad.status();
  absl::StatusOr<Pairs> odd = ParseSendRecvSourceTargetPairs("{{1,0},{2}}");
  EXPECT_EQ(odd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd.status().message().find("odd _xla_send_recv_source_target_pairs"),
            absl::string_view::npos)
      << odd.status();
  absl::StatusOr<Pairs> negative = ParseSendRecvSourceTargetPairs("{{0,-1}}");
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("a negative id"), absl::string_view::npos)
      << negative.status();
  EXPECT_FALSE(ParseSendRecvSourceTargetPairs("{{0,1}").ok());
}

}  // namespace
}  // namespace axle
