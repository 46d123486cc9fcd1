//===- hlo_printer_attributes_test.cc - Tests of the HLO printer: attributes ===//
//
// Each op's attributes as XLA's printer writes them: constants, shapes and
// data movement, comparisons, dot/convolution windows, gather/scatter,
// custom calls, collectives, and the generic attributes in XLA's order.
// The module as a whole: hlo_printer_test.cc.
//
//===----------------------------------------------------------------------===//
#include <memory>
#include <string>
#include <vector>

#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_printer.h"
#include "axle/hlo/text/hlo_printer_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using printer_test::AddComputation;
using printer_test::Arr;
using printer_test::Builder;
using printer_test::LineWith;

TEST(HloPrinterTest, ConstantsSmallLargeAndTuples) {
  Builder b("c");
  HloInstruction* scalar = b.Constant(LiteralUtil::CreateR0<int32_t>(-42), "s");
  HloInstruction* pred = b.Constant(LiteralUtil::CreateR0<bool>(true), "p");
  HloInstruction* matrix = b.Constant(LiteralUtil::CreateR2<float>({{1, 2.5f}, {3, 4}}), "m");
  std::vector<float> values(11);
  for (int i = 0; i < 11; ++i) values[i] = i;
  HloInstruction* large =
      b.Constant(LiteralUtil::CreateR1<float>(absl::Span<const float>(values)), "large");
  std::vector<Literal> elements;
  elements.push_back(LiteralUtil::CreateR2<float>({{1}, {2}}));
  elements.push_back(LiteralUtil::CreateR1<float>({2, 42}));
  HloInstruction* tuple = b.Constant(LiteralUtil::MakeTuple(std::move(elements)), "t");
  auto module = std::make_unique<HloModule>("m");
  module->AddEntryComputation(b.Build());

  HloPrintOptions canonical = HloPrintOptions::Canonical();
  EXPECT_EQ(ToString(*scalar, canonical), "%s = s32[] constant(-42)");
  EXPECT_EQ(ToString(*pred, canonical), "%p = pred[] constant(true)");
  EXPECT_EQ(ToString(*matrix, canonical), "%m = f32[2,2]{1,0} constant({ { 1, 2.5 }, { 3, 4 } })");
  EXPECT_EQ(ToString(*large, canonical),
            "%large = f32[11]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})");
  EXPECT_EQ(ToString(*large, HloPrintOptions()), "%large = f32[11]{0} constant({...})");
  EXPECT_EQ(ToString(*tuple, canonical),
            "%t = (f32[2,1]{1,0}, f32[2]{0}) constant(( { {1}, {2} }, {2, 42} ))");
  EXPECT_EQ(ToString(*tuple, HloPrintOptions()), "%t = (f32[2,1]{1,0}, f32[2]{0}) constant({...})");
  // The module prints constants in full; a lone instruction elides them.
  EXPECT_EQ(LineWith(module->ToString(), "%large"),
            "%large = f32[11]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})");
  EXPECT_EQ(large->ToString(), "%large = f32[11]{0} constant({...})");
}

TEST(HloPrinterTest, ShapesAndDataMovementAttributes) {
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {4, 8}), "p");
  auto* slice = b.Make<HloSliceInstruction>(HloOpcode::kSlice, Arr(F32, {2, 4}), {p}, "slice");
  slice->mutable_attrs()->starts = {0, 1};
  slice->mutable_attrs()->limits = {2, 8};
  slice->mutable_attrs()->strides = {1, 2};
  auto* unit_slice =
      b.Make<HloSliceInstruction>(HloOpcode::kSlice, Arr(F32, {2, 4}), {p}, "slice1");
  unit_slice->mutable_attrs()->starts = {0, 4};
  unit_slice->mutable_attrs()->limits = {2, 8};
  unit_slice->mutable_attrs()->strides = {1, 1};
  HloInstruction* zero = b.Constant(LiteralUtil::CreateR0<float>(0), "zero");
  auto* pad = b.Make<HloPadInstruction>(HloOpcode::kPad, Arr(F32, {5, 17}), {p, zero}, "pad");
  auto* d0 = pad->mutable_attrs()->padding_config.add_dimensions();
  d0->set_edge_padding_low(1);
  auto* d1 = pad->mutable_attrs()->padding_config.add_dimensions();
  d1->set_edge_padding_low(0);
  d1->set_edge_padding_high(2);
  d1->set_interior_padding(1);
  auto* transpose =
      b.Make<HloDimensionsInstruction>(HloOpcode::kTranspose, Arr(F32, {8, 4}), {p}, "transpose");
  transpose->mutable_attrs()->dimensions = {1, 0};
  auto* reshape =
      b.Make<HloReshapeInstruction>(HloOpcode::kReshape, Arr(F32, {32}), {p}, "reshape");
  auto* inferred =
      b.Make<HloReshapeInstruction>(HloOpcode::kReshape, Arr(F32, {32}), {p}, "inferred");
  inferred->mutable_attrs()->inferred_dimension = 0;
  HloInstruction* i = b.Parameter(1, Arr(S32, {}), "i");
  auto* ds = b.Make<HloDynamicSliceInstruction>(HloOpcode::kDynamicSlice, Arr(F32, {1, 8}),
                                                {p, i, i}, "ds");
  ds->mutable_attrs()->dynamic_slice_sizes = {1, 8};
  auto* concat =
      b.Make<HloDimensionsInstruction>(HloOpcode::kConcatenate, Arr(F32, {8, 8}), {p, p}, "concat");
  concat->mutable_attrs()->dimensions = {0};
  auto* iota = b.Make<HloIotaInstruction>(HloOpcode::kIota, Arr(S32, {4, 3}), {}, "iota");
  iota->mutable_attrs()->iota_dimension = 1;
  HloInstruction* t =
      b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape({Arr(F32, {4, 8})}), {p}, "t");
  auto* gte = b.Make<HloGetTupleElementInstruction>(HloOpcode::kGetTupleElement, Arr(F32, {4, 8}),
                                                    {t}, "gte");
  gte->mutable_attrs()->tuple_index = 0;
  auto* rp = b.Make<HloReducePrecisionInstruction>(HloOpcode::kReducePrecision, Arr(F32, {4, 8}),
                                                   {p}, "rp");
  rp->mutable_attrs()->exponent_bits = 5;
  rp->mutable_attrs()->mantissa_bits = 10;
  auto* gds =
      b.Make<HloDimensionsInstruction>(HloOpcode::kGetDimensionSize, Arr(S32, {}), {p}, "gds");
  gds->mutable_attrs()->dimensions = {1};
  Shape dynamic = Arr(F32, {4, 8});
  dynamic.set_dynamic_dimension(1, true);
  auto* sds =
      b.Make<HloDimensionsInstruction>(HloOpcode::kSetDimensionSize, dynamic, {p, i}, "sds");
  sds->mutable_attrs()->dimensions = {1};
  auto* param_rep = cast<HloParameterInstruction>(b.Parameter(2, Arr(F32, {}), "rep"));
  param_rep->mutable_attrs()->parameter_replication = std::vector<bool>{true};

  HloPrintOptions o = HloPrintOptions::Canonical();
  EXPECT_EQ(ToString(*slice, o), "%slice = f32[2,4]{1,0} slice(%p), slice={[0:2:1], [1:8:2]}");
  EXPECT_EQ(ToString(*unit_slice, o), "%slice1 = f32[2,4]{1,0} slice(%p), slice={[0:2], [4:8]}");
  EXPECT_EQ(ToString(*pad, o), "%pad = f32[5,17]{1,0} pad(%p, %zero), padding=1_0_0x0_2_1");
  EXPECT_EQ(ToString(*transpose, o), "%transpose = f32[8,4]{1,0} transpose(%p), dimensions={1,0}");
  EXPECT_EQ(ToString(*reshape, o), "%reshape = f32[32]{0} reshape(%p)");
  EXPECT_EQ(ToString(*inferred, o), "%inferred = f32[32]{0} reshape(%p), inferred_dimension=0");
  EXPECT_EQ(ToString(*ds, o),
            "%ds = f32[1,8]{1,0} dynamic-slice(%p, %i, %i), dynamic_slice_sizes={1,8}");
  EXPECT_EQ(ToString(*concat, o), "%concat = f32[8,8]{1,0} concatenate(%p, %p), dimensions={0}");
  EXPECT_EQ(ToString(*iota, o), "%iota = s32[4,3]{1,0} iota(), iota_dimension=1");
  EXPECT_EQ(ToString(*gte, o), "%gte = f32[4,8]{1,0} get-tuple-element(%t), index=0");
  EXPECT_EQ(ToString(*rp, o),
            "%rp = f32[4,8]{1,0} reduce-precision(%p), exponent_bits=5, mantissa_bits=10");
  EXPECT_EQ(ToString(*gds, o), "%gds = s32[] get-dimension-size(%p), dimensions={1}");
  EXPECT_EQ(ToString(*sds, o), "%sds = f32[4,<=8]{1,0} set-dimension-size(%p, %i), dimensions={1}");
  EXPECT_EQ(ToString(*param_rep, o), "%rep = f32[] parameter(2), parameter_replication={true}");
}

TEST(HloPrinterTest, CompareDirectionAndType) {
  Builder b("e");
  HloInstruction* f = b.Parameter(0, Arr(F32, {}), "f");
  HloInstruction* s = b.Parameter(1, Arr(S32, {}), "s");
  HloInstruction* u = b.Parameter(2, ShapeUtil::MakeShape(U8, {}), "u");
  auto compare = [&](HloInstruction* x, ComparisonDirection d, ComparisonType t, std::string name) {
    auto* c = b.Make<HloCompareInstruction>(HloOpcode::kCompare, Arr(PRED, {}), {x, x}, name);
    c->mutable_attrs()->direction = d;
    c->mutable_attrs()->type = t;
    return ToString(*c, HloPrintOptions::ShortParsable());
  };
  EXPECT_EQ(compare(f, ComparisonDirection::kGe, ComparisonType::kDefault, "a"),
            "a = pred[] compare(f, f), direction=GE");
  // A type equal to the one XLA infers from the operands is not printed.
  EXPECT_EQ(compare(f, ComparisonDirection::kEq, ComparisonType::kFloat, "b"),
            "b = pred[] compare(f, f), direction=EQ");
  EXPECT_EQ(compare(f, ComparisonDirection::kLt, ComparisonType::kFloatTotalOrder, "c"),
            "c = pred[] compare(f, f), direction=LT, type=TOTALORDER");
  EXPECT_EQ(compare(s, ComparisonDirection::kNe, ComparisonType::kSigned, "d"),
            "d = pred[] compare(s, s), direction=NE");
  EXPECT_EQ(compare(s, ComparisonDirection::kGt, ComparisonType::kUnsigned, "e"),
            "e = pred[] compare(s, s), direction=GT, type=UNSIGNED");
  EXPECT_EQ(compare(u, ComparisonDirection::kLe, ComparisonType::kUnsigned, "g"),
            "g = pred[] compare(u, u), direction=LE");
}

TEST(HloPrinterTest, DotConvolutionAndWindows) {
  Builder b("e");
  HloInstruction* lhs = b.Parameter(0, Arr(F32, {2, 3, 4}), "lhs");
  HloInstruction* rhs = b.Parameter(1, Arr(F32, {2, 4, 5}), "rhs");
  auto* dot = b.Make<HloDotInstruction>(HloOpcode::kDot, Arr(F32, {2, 3, 5}), {lhs, rhs}, "dot");
  DotDimensionNumbers& dnums = dot->mutable_attrs()->dot_dimension_numbers;
  dnums.add_lhs_batch_dimensions(0);
  dnums.add_rhs_batch_dimensions(0);
  dnums.add_lhs_contracting_dimensions(2);
  dnums.add_rhs_contracting_dimensions(1);
  dot->mutable_attrs()->precision_config.add_operand_precision(PrecisionConfig::HIGH);
  dot->mutable_attrs()->precision_config.add_operand_precision(PrecisionConfig::DEFAULT);
  dot->mutable_attrs()->precision_config.set_algorithm(PrecisionConfig::ALG_DOT_F32_F32_F32);
  HloInstruction* groups = b.Parameter(2, Arr(S32, {2}), "groups");
  auto* ragged = b.Make<HloDotInstruction>(HloOpcode::kRaggedDot, Arr(F32, {2, 3, 5}),
                                           {lhs, rhs, groups}, "ragged");
  ragged->mutable_attrs()->dot_dimension_numbers = dnums;
  ragged->mutable_attrs()->lhs_ragged_dimensions = {1};
  ragged->mutable_attrs()->rhs_group_dimensions = {0};

  HloInstruction* input = b.Parameter(3, Arr(F32, {1, 5, 5, 2}), "input");
  HloInstruction* kernel = b.Parameter(4, Arr(F32, {3, 3, 2, 4}), "kernel");
  auto* conv = b.Make<HloConvolutionInstruction>(HloOpcode::kConvolution, Arr(F32, {1, 3, 3, 4}),
                                                 {input, kernel}, "conv");
  ConvolutionAttrs& ca = *conv->mutable_attrs();
  for (int i = 0; i < 2; ++i) {
    WindowDimension* w = ca.window.add_dimensions();
    w->set_size(3);
    w->set_stride(2);
    w->set_padding_low(1);
    w->set_padding_high(1);
  }
  ca.convolution_dimension_numbers.set_input_batch_dimension(0);
  ca.convolution_dimension_numbers.set_input_feature_dimension(3);
  ca.convolution_dimension_numbers.add_input_spatial_dimensions(1);
  ca.convolution_dimension_numbers.add_input_spatial_dimensions(2);
  ca.convolution_dimension_numbers.set_kernel_input_feature_dimension(2);
  ca.convolution_dimension_numbers.set_kernel_output_feature_dimension(3);
  ca.convolution_dimension_numbers.add_kernel_spatial_dimensions(0);
  ca.convolution_dimension_numbers.add_kernel_spatial_dimensions(1);
  ca.convolution_dimension_numbers.set_output_batch_dimension(0);
  ca.convolution_dimension_numbers.set_output_feature_dimension(3);
  ca.convolution_dimension_numbers.add_output_spatial_dimensions(1);
  ca.convolution_dimension_numbers.add_output_spatial_dimensions(2);
  ca.feature_group_count = 2;
  ca.precision_config.add_operand_precision(PrecisionConfig::HIGHEST);
  ca.precision_config.add_operand_precision(PrecisionConfig::HIGHEST);

  HloInstruction* init = b.Constant(LiteralUtil::CreateR0<float>(0), "init");
  auto* rw = b.Make<HloWindowInstruction>(HloOpcode::kReduceWindow, Arr(F32, {1, 2, 2, 2}),
                                          {input, init}, "rw");
  for (int64_t size : {1, 2, 2, 1}) {
    WindowDimension* w = rw->mutable_attrs()->window.add_dimensions();
    w->set_size(size);
    w->set_stride(size);
    w->set_base_dilation(size == 2 ? 2 : 1);
  }

  HloPrintOptions o = HloPrintOptions::ShortParsable();
  EXPECT_EQ(ToString(*dot, o),
            "dot = f32[2,3,5]{2,1,0} dot(lhs, rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
            "rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={high,default}, "
            "algorithm=dot_f32_f32_f32");
  EXPECT_EQ(ToString(*ragged, o),
            "ragged = f32[2,3,5]{2,1,0} ragged-dot(lhs, rhs, groups), lhs_batch_dims={0}, "
            "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
            "lhs_ragged_dims={1}, rhs_group_dims={0}");
  EXPECT_EQ(ToString(*conv, o),
            "conv = f32[1,3,3,4]{3,2,1,0} convolution(input, kernel), window={size=3x3 stride=2x2 "
            "pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2, "
            "operand_precision={highest,highest}");
  EXPECT_EQ(ToString(*rw, o),
            "rw = f32[1,2,2,2]{3,2,1,0} reduce-window(input, init), window={size=1x2x2x1 "
            "stride=1x2x2x1 lhs_dilate=1x2x2x1}");
}

TEST(HloPrinterTest, GatherScatterAndSelectAndScatter) {
  auto module = std::make_unique<HloModule>("m");
  HloComputation* add = module->AddEmbeddedComputation(AddComputation("add"));
  Builder b("e");
  HloInstruction* operand = b.Parameter(0, Arr(F32, {3, 3}), "operand");
  HloInstruction* indices = b.Parameter(1, Arr(S32, {2}), "indices");
  auto* gather = b.Make<HloGatherInstruction>(HloOpcode::kGather, Arr(F32, {2, 3}),
                                              {operand, indices}, "gather");
  GatherDimensionNumbers& g = gather->mutable_attrs()->gather_dimension_numbers;
  g.add_offset_dims(1);
  g.add_collapsed_slice_dims(0);
  g.add_start_index_map(0);
  g.set_index_vector_dim(1);
  gather->mutable_attrs()->slice_sizes = {1, 3};
  gather->mutable_attrs()->indices_are_sorted = true;
  HloInstruction* updates = b.Parameter(2, Arr(F32, {2, 3}), "updates");
  auto* scatter = b.Make<HloScatterInstruction>(HloOpcode::kScatter, Arr(F32, {3, 3}),
                                                {operand, indices, updates}, "scatter");
  ScatterDimensionNumbers& s = scatter->mutable_attrs()->scatter_dimension_numbers;
  s.add_update_window_dims(1);
  s.add_inserted_window_dims(0);
  s.add_scatter_dims_to_operand_dims(0);
  s.set_index_vector_dim(1);
  scatter->mutable_attrs()->unique_indices = true;
  scatter->set_to_apply(add);
  HloInstruction* init = b.Constant(LiteralUtil::CreateR0<float>(0), "init");
  auto* sas = b.Make<HloWindowInstruction>(HloOpcode::kSelectAndScatter, Arr(F32, {3, 3}),
                                           {operand, updates, init}, "sas");
  WindowDimension* w = sas->mutable_attrs()->window.add_dimensions();
  w->set_size(2);
  w = sas->mutable_attrs()->window.add_dimensions();
  w->set_size(1);
  sas->AppendCalledComputation(add);
  sas->AppendCalledComputation(add);
  module->AddEntryComputation(b.Build(sas));

  std::string text = module->ToString();
  EXPECT_EQ(LineWith(text, "gather("),
            "%gather = f32[2,3]{1,0} gather(%operand, %indices), offset_dims={1}, "
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, "
            "indices_are_sorted=true");
  EXPECT_EQ(LineWith(text, "scatter(%"),
            "%scatter = f32[3,3]{1,0} scatter(%operand, %indices, %updates), "
            "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, unique_indices=true, to_apply=%add");
  EXPECT_EQ(LineWith(text, "select-and-scatter("),
            "ROOT %sas = f32[3,3]{1,0} select-and-scatter(%operand, %updates, %init), "
            "window={size=2x1}, select=%add, scatter=%add");
}

TEST(HloPrinterTest, CustomCallWithEveryAttribute) {
  auto module = std::make_unique<HloModule>("m");
  HloComputation* add = module->AddEmbeddedComputation(AddComputation("add"));
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {2}), "p");
  auto* plain =
      b.Make<HloCustomCallInstruction>(HloOpcode::kCustomCall, Arr(F32, {2}), {p}, "plain");
  plain->mutable_attrs()->custom_call_target = "my\"target";
  plain->mutable_attrs()->opaque = "some opaque";
  auto* full = b.Make<HloCustomCallInstruction>(
      HloOpcode::kCustomCall, ShapeUtil::MakeTupleShape({Arr(F32, {2}), Arr(F32, {2})}), {p, p},
      "full");
  CustomCallAttrs& a = *full->mutable_attrs();
  a.custom_call_target = "fancy";
  a.api_version = API_VERSION_TYPED_FFI;
  a.custom_call_has_side_effect = true;
  a.output_to_operand_aliasing = {{{0}, 0, {}}, {{1}, 1, {}}};
  a.operand_layout_constraints = std::vector<Shape>{Arr(F32, {2}), Arr(F32, {2})};
  a.schedule = SCHEDULE_LATEST;
  a.literal = LiteralUtil::CreateR1<int32_t>({1, 2});
  full->set_raw_backend_config_string("{\"x\":1}");
  full->AppendCalledComputation(add);
  full->mutable_raw_attributes()->push_back({"padding_type", "PADDING_SAME"});
  module->AddEntryComputation(b.Build(full));

  std::string text = module->ToString();
  EXPECT_EQ(LineWith(text, "%plain"),
            "%plain = f32[2]{0} custom-call(%p), custom_call_target=\"my\\\"target\", "
            "backend_config=\"some opaque\"");
  EXPECT_EQ(LineWith(text, "%full"),
            "ROOT %full = (f32[2]{0}, f32[2]{0}) custom-call(%p, %p), padding_type=PADDING_SAME, "
            "custom_call_target=\"fancy\", operand_layout_constraints={f32[2]{0}, f32[2]{0}}, "
            "custom_call_has_side_effect=true, literal=s32[2]{0} {1, 2}, "
            "output_to_operand_aliasing={{0}: (0, {}), {1}: (1, {})}, schedule=SCHEDULE_LATEST, "
            "api_version=API_VERSION_TYPED_FFI, called_computations={%add}, "
            "backend_config={\"x\":1}");
}

TEST(HloPrinterTest, OtherOpAttributes) {
  Builder b("e");
  HloInstruction* c = b.Parameter(0, ShapeUtil::MakeShape(C64, {8}), "c");
  auto* fft =
      b.Make<HloFftInstruction>(HloOpcode::kFft, ShapeUtil::MakeShape(C64, {8}), {c}, "fft");
  fft->mutable_attrs()->fft_type = IFFT;
  fft->mutable_attrs()->fft_length = {8};
  HloInstruction* lo = b.Parameter(1, Arr(F32, {}), "lo");
  auto* rng = b.Make<HloRngInstruction>(HloOpcode::kRng, Arr(F32, {4}), {lo, lo}, "rng");
  rng->mutable_attrs()->distribution = RNG_NORMAL;
  HloInstruction* state = b.Parameter(2, ShapeUtil::MakeShape(U64, {2}), "state");
  auto* bits = b.Make<HloRngBitGeneratorInstruction>(
      HloOpcode::kRngBitGenerator,
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(U64, {2}), ShapeUtil::MakeShape(U32, {4})}),
      {state}, "bits");
  bits->mutable_attrs()->algorithm = RNG_PHILOX;
  HloInstruction* a = b.Parameter(3, Arr(F32, {3, 3}), "a");
  auto* ts = b.Make<HloTriangularSolveInstruction>(HloOpcode::kTriangularSolve, Arr(F32, {3, 3}),
                                                   {a, a}, "ts");
  ts->mutable_attrs()->options.set_left_side(true);
  ts->mutable_attrs()->options.set_lower(true);
  ts->mutable_attrs()->options.set_transpose_a(TriangularSolveOptions::ADJOINT);
  auto* chol = b.Make<HloCholeskyInstruction>(HloOpcode::kCholesky, Arr(F32, {3, 3}), {a}, "chol");
  chol->mutable_attrs()->options.set_lower(true);
  auto* chol_upper =
      b.Make<HloCholeskyInstruction>(HloOpcode::kCholesky, Arr(F32, {3, 3}), {a}, "cu");
  HloInstruction* v = b.Parameter(4, Arr(F32, {3}), "v");
  auto* bn = b.Make<HloBatchNormInstruction>(
      HloOpcode::kBatchNormTraining,
      ShapeUtil::MakeTupleShape({Arr(F32, {3, 3}), Arr(F32, {3}), Arr(F32, {3})}), {a, v, v}, "bn");
  bn->mutable_attrs()->epsilon = 0.001f;
  bn->mutable_attrs()->feature_index = 1;
  auto* topk = b.Make<HloTopKInstruction>(
      HloOpcode::kTopK, ShapeUtil::MakeTupleShape({Arr(F32, {2}), Arr(S32, {2})}), {v}, "topk");
  topk->mutable_attrs()->k = 2;
  topk->mutable_attrs()->largest = false;
  topk->mutable_raw_attributes()->push_back({"is_stable", "true"});
  HloInstruction* token = b.Op(HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), {}, "token");
  auto* infeed = b.Make<HloFeedInstruction>(
      HloOpcode::kInfeed, ShapeUtil::MakeTupleShape({Arr(F32, {3}), ShapeUtil::MakeTokenShape()}),
      {token}, "infeed");
  infeed->mutable_attrs()->config = "cfg\n";
  auto* outfeed = b.Make<HloFeedInstruction>(HloOpcode::kOutfeed, ShapeUtil::MakeTokenShape(),
                                             {v, token}, "outfeed");
  outfeed->mutable_attrs()->outfeed_shape = Arr(F32, {3});
  auto* copy_start = b.Make<HloCopyStartInstruction>(
      HloOpcode::kCopyStart,
      ShapeUtil::MakeTupleShape({Arr(F32, {3}), Arr(F32, {3}), ShapeUtil::MakeShape(U32, {})}), {v},
      "cs");
  copy_start->mutable_attrs()->cross_program_prefetch_index = 0;
  auto* send = b.Make<HloSendRecvInstruction>(
      HloOpcode::kSend,
      ShapeUtil::MakeTupleShape(
          {Arr(F32, {3}), ShapeUtil::MakeShape(U32, {}), ShapeUtil::MakeTokenShape()}),
      {v, token}, "send");
  send->mutable_attrs()->channel_id = 16;
  send->mutable_attrs()->is_host_transfer = true;
  HloInstruction* domain = b.Op(HloOpcode::kDomain, Arr(F32, {3}), {v}, "dom");
  domain->mutable_raw_attributes()->push_back(
      {"domain", "{kind=\"sharding\", entry={maximal device=0}, exit={maximal device=1}}"});

  HloPrintOptions o = HloPrintOptions::ShortParsable();
  EXPECT_EQ(ToString(*fft, o), "fft = c64[8]{0} fft(c), fft_type=IFFT, fft_length={8}");
  EXPECT_EQ(ToString(*rng, o), "rng = f32[4]{0} rng(lo, lo), distribution=rng_normal");
  EXPECT_EQ(ToString(*bits, o),
            "bits = (u64[2]{0}, u32[4]{0}) rng-bit-generator(state), algorithm=rng_philox");
  EXPECT_EQ(ToString(*ts, o),
            "ts = f32[3,3]{1,0} triangular-solve(a, a), left_side=true, lower=true, "
            "transpose_a=ADJOINT");
  EXPECT_EQ(ToString(*chol, o), "chol = f32[3,3]{1,0} cholesky(a), lower=true");
  EXPECT_EQ(ToString(*chol_upper, o), "cu = f32[3,3]{1,0} cholesky(a)");
  EXPECT_EQ(ToString(*bn, o),
            "bn = (f32[3,3]{1,0}, f32[3]{0}, f32[3]{0}) batch-norm-training(a, v, v), "
            "epsilon=0.001, feature_index=1");
  EXPECT_EQ(ToString(*topk, o),
            "topk = (f32[2]{0}, s32[2]{0}) topk(v), k=2, largest=false, is_stable=true");
  EXPECT_EQ(ToString(*token, o), "token = token[] after-all()");
  EXPECT_EQ(ToString(*infeed, o),
            "infeed = (f32[3]{0}, token[]) infeed(token), infeed_config=\"cfg\\n\"");
  EXPECT_EQ(ToString(*outfeed, o), "outfeed = token[] outfeed(v, token), outfeed_shape=f32[3]{0}");
  EXPECT_EQ(ToString(*copy_start, o),
            "cs = (f32[3]{0}, f32[3]{0}, u32[]) copy-start(v), cross_program_prefetch_index=0");
  EXPECT_EQ(ToString(*send, o),
            "send = (f32[3]{0}, u32[], token[]) send(v, token), channel_id=16, "
            "is_host_transfer=true");
  EXPECT_EQ(ToString(*domain, o),
            "dom = f32[3]{0} domain(v), domain={kind=\"sharding\", entry={maximal device=0}, "
            "exit={maximal device=1}}");
}

TEST(HloPrinterTest, Collectives) {
  auto module = std::make_unique<HloModule>("m");
  HloComputation* add = module->AddEmbeddedComputation(AddComputation("add"));
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {8}), "p");
  auto* ar = b.Make<HloCollectiveInstruction>(HloOpcode::kAllReduce, Arr(F32, {8}), {p}, "ar");
  ar->mutable_attrs()->replica_groups.resize(2);
  ar->mutable_attrs()->replica_groups[0].add_replica_ids(0);
  ar->mutable_attrs()->replica_groups[0].add_replica_ids(2);
  ar->mutable_attrs()->replica_groups[1].add_replica_ids(1);
  ar->mutable_attrs()->replica_groups[1].add_replica_ids(3);
  ar->mutable_attrs()->channel_id = 1;
  ar->mutable_attrs()->use_global_device_ids = true;
  ar->set_to_apply(add);
  auto* ag = b.Make<HloCollectiveInstruction>(HloOpcode::kAllGather, Arr(F32, {32}), {p}, "ag");
  ag->mutable_attrs()->iota_replica_groups = IotaReplicaGroupList{2, 4, {4, 2}, {1, 0}};
  ag->mutable_attrs()->dimensions = {0};
  ag->mutable_attrs()->constrain_layout = true;
  ag->mutable_attrs()->use_global_device_ids = true;
  ag->mutable_attrs()->channel_id = 2;
  auto* rs = b.Make<HloCollectiveInstruction>(HloOpcode::kReduceScatter, Arr(F32, {2}), {p}, "rs");
  rs->mutable_attrs()->dimensions = {0};
  rs->mutable_attrs()->use_global_device_ids = true;
  rs->mutable_attrs()->channel_id = 3;
  rs->set_to_apply(add);
  auto* a2a = b.Make<HloCollectiveInstruction>(HloOpcode::kAllToAll, Arr(F32, {8}), {p}, "a2a");
  auto* a2a_dim =
      b.Make<HloCollectiveInstruction>(HloOpcode::kAllToAll, Arr(F32, {8}), {p}, "a2ad");
  a2a_dim->mutable_attrs()->dimensions = {0};
  a2a_dim->mutable_attrs()->iota_replica_groups = IotaReplicaGroupList{1, 4, {4}, {}};
  auto* cp =
      b.Make<HloCollectiveInstruction>(HloOpcode::kCollectivePermute, Arr(F32, {8}), {p}, "cp");
  cp->mutable_attrs()->source_target_pairs = {{0, 1}, {1, 0}};
  cp->mutable_attrs()->channel_id = 4;
  auto* ars =
      b.Make<HloCollectiveInstruction>(HloOpcode::kAllReduceStart, Arr(F32, {8}), {p}, "ars");
  ars->set_to_apply(add);
  auto* ard =
      b.Make<HloCollectiveInstruction>(HloOpcode::kAllReduceDone, Arr(F32, {8}), {ars}, "ard");
  ard->mutable_attrs()->channel_id = 9;  // not printed: -done ops have no attributes in XLA
  auto* cb =
      b.Make<HloCollectiveInstruction>(HloOpcode::kCollectiveBroadcast, Arr(F32, {8}), {p}, "cb");
  HloInstruction* root = b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape({}),
                              {ar, ag, rs, a2a, a2a_dim, cp, ard, cb}, "root");
  module->AddEntryComputation(b.Build(root));

  std::string text = module->ToString();
  EXPECT_EQ(LineWith(text, "%ar ="),
            "%ar = f32[8]{0} all-reduce(%p), channel_id=1, replica_groups={{0,2},{1,3}}, "
            "use_global_device_ids=true, to_apply=%add");
  EXPECT_EQ(LineWith(text, "%ag ="),
            "%ag = f32[32]{0} all-gather(%p), channel_id=2, replica_groups=[2,4]<=[4,2]T(1,0), "
            "constrain_layout=true, dimensions={0}, use_global_device_ids=true");
  EXPECT_EQ(LineWith(text, "%rs ="),
            "%rs = f32[2]{0} reduce-scatter(%p), channel_id=3, replica_groups={}, "
            "use_global_device_ids=true, dimensions={0}, to_apply=%add");
  EXPECT_EQ(LineWith(text, "%a2a ="), "%a2a = f32[8]{0} all-to-all(%p), replica_groups={}");
  EXPECT_EQ(LineWith(text, "%a2ad ="),
            "%a2ad = f32[8]{0} all-to-all(%p), replica_groups=[1,4]<=[4], dimensions={0}");
  EXPECT_EQ(
      LineWith(text, "%cp ="),
      "%cp = f32[8]{0} collective-permute(%p), channel_id=4, source_target_pairs={{0,1},{1,0}}");
  EXPECT_EQ(LineWith(text, "%ars ="),
            "%ars = f32[8]{0} all-reduce-start(%p), replica_groups={}, to_apply=%add");
  EXPECT_EQ(LineWith(text, "%ard ="), "%ard = f32[8]{0} all-reduce-done(%ars)");
  EXPECT_EQ(LineWith(text, "%cb ="), "%cb = f32[8]{0} collective-broadcast(%p), replica_groups={}");
}

TEST(HloPrinterTest, GenericAttributesInXlaOrder) {
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {}), "p");
  HloInstruction* q = b.Parameter(1, Arr(F32, {}), "q");
  HloInstruction* neg = b.Op(HloOpcode::kNegate, Arr(F32, {}), {p}, "neg");
  neg->set_sharding(HloSharding("{maximal device=1}"));
  neg->set_frontend_attributes({{"b", "2"}, {"a", "{\"json\":true}"}});
  q->AddControlDependencyTo(neg);
  neg->mutable_raw_attributes()->push_back({"origin", "{{\"neg\"}}"});
  neg->mutable_raw_attributes()->push_back({"statistics", "{visualizing_index=1,stat-1=33}"});
  neg->mutable_raw_attributes()->push_back({"result_accuracy", "{mode=highest}"});
  OpMetadata metadata;
  metadata.set_op_type("Neg");
  metadata.set_op_name("jit(f)/neg");
  metadata.set_source_file("f.py");
  metadata.set_source_line(12);
  neg->set_metadata(metadata);
  neg->set_raw_backend_config_string("foo\" bar");
  EXPECT_EQ(ToString(*neg, HloPrintOptions()),
            "%neg = f32[] negate(%p), sharding={maximal device=1}, "
            "frontend_attributes={a={\"json\":true},b=\"2\"}, control-predecessors={%q}, "
            "statistics={visualizing_index=1,stat-1=33}, result_accuracy={mode=highest}, "
            "origin={{\"neg\"}}, metadata={op_type=\"Neg\" op_name=\"jit(f)/neg\" "
            "source_file=\"f.py\" source_line=12}, backend_config=\"foo\\\" bar\"");
  EXPECT_EQ(ToString(*neg, HloPrintOptions()
                               .set_print_metadata(false)
                               .set_print_backend_config(false)
                               .set_print_control_dependencies(false)),
            "%neg = f32[] negate(%p), sharding={maximal device=1}, "
            "frontend_attributes={a={\"json\":true},b=\"2\"}, "
            "statistics={visualizing_index=1,stat-1=33}, result_accuracy={mode=highest}, "
            "origin={{\"neg\"}}");
  neg->set_raw_backend_config_string("{\"operation_queue_id\":\"0\"}");
  EXPECT_EQ(LineWith(ToString(*neg, HloPrintOptions()), "backend_config"),
            ToString(*neg, HloPrintOptions()));
  EXPECT_NE(
      ToString(*neg, HloPrintOptions()).find(", backend_config={\"operation_queue_id\":\"0\"}"),
      std::string::npos);
}

}  // namespace
}  // namespace axle
