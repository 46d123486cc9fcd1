//===- hlo_parser_test.cc - Tests of the HLO text parser ------------------===//
#include "axle/hlo/text/hlo_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_lexer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(module).value() : nullptr;
}

std::string ParseError(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseAndReturnUnverifiedModule(text, "test.hlo");
  EXPECT_FALSE(module.ok());
  if (module.ok()) return "";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

TEST(HloLexerTest, TokensAndPatterns) {
  HloLexer lexer("%x = f32[2] b01f_01io->b01f 3x3 1_1x0_0_1 -7 1.5e3 \"a\\\"b\" -inf foo=");
  EXPECT_EQ(lexer.Lex(), TokKind::kName);
  EXPECT_EQ(lexer.str_val(), "x");
  EXPECT_EQ(lexer.Lex(), TokKind::kEqual);
  EXPECT_EQ(lexer.Lex(), TokKind::kPrimitiveType);
  EXPECT_EQ(lexer.primitive_type_val(), F32);
  EXPECT_EQ(lexer.Lex(), TokKind::kLsquare);
  EXPECT_EQ(lexer.Lex(), TokKind::kInt);
  EXPECT_EQ(lexer.Lex(), TokKind::kRsquare);
  EXPECT_EQ(lexer.Lex(), TokKind::kDimLabels);
  EXPECT_EQ(lexer.str_val(), "b01f_01io->b01f");
  EXPECT_EQ(lexer.Lex(), TokKind::kDxD);
  EXPECT_EQ(lexer.Lex(), TokKind::kPad);
  EXPECT_EQ(lexer.str_val(), "1_1x0_0_1");
  EXPECT_EQ(lexer.Lex(), TokKind::kInt);
  EXPECT_EQ(lexer.int64_val(), -7);
  EXPECT_EQ(lexer.Lex(), TokKind::kDecimal);
  EXPECT_EQ(lexer.decimal_val(), 1500.0);
  EXPECT_EQ(lexer.Lex(), TokKind::kString);
  EXPECT_EQ(lexer.str_val(), "a\"b");
  EXPECT_EQ(lexer.Lex(), TokKind::kNegInf);
  EXPECT_EQ(lexer.Lex(), TokKind::kAttributeName);
  EXPECT_EQ(lexer.str_val(), "foo");
  EXPECT_EQ(lexer.Lex(), TokKind::kEof);
}

TEST(HloLexerTest, IntegerOverflowIsAnError) {
  HloLexer lexer("99999999999999999999999");
  EXPECT_EQ(lexer.Lex(), TokKind::kError);
  EXPECT_THAT(lexer.error_message(), HasSubstr("out of range"));
  HloLexer u64_max("18446744073709551615");
  EXPECT_EQ(u64_max.Lex(), TokKind::kInt);
  EXPECT_EQ(u64_max.int64_val(), -1);  // wraps, as XLA's lexer does
}

TEST(HloParserTest, ModuleStructure) {
  auto module = Parse(R"(HloModule m, replica_count=2, num_partitions=4, is_scheduled=true

add {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}

ENTRY %main (p: f32[2,3]) -> f32[2] {
  /* a comment */ %p = f32[2,3] parameter(0)  // another
  zero = f32[] constant(0)
  ROOT r = f32[2]{0} reduce(p, zero), dimensions={1}, to_apply=add
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "m");
  EXPECT_EQ(module->config().replica_count, 2);
  EXPECT_EQ(module->config().num_partitions, 4);
  EXPECT_TRUE(module->config().is_scheduled);
  ASSERT_EQ(module->computation_count(), 2);
  HloComputation* entry = module->entry_computation();
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(entry->num_parameters(), 1);
  HloInstruction* p = entry->parameter_instruction(0);
  EXPECT_EQ(p->name(), "p");
  // Array shapes without a layout get the default one.
  EXPECT_EQ(p->shape().ToString(), "f32[2,3]{1,0}");
  HloInstruction* root = entry->root_instruction();
  EXPECT_EQ(root->name(), "r");
  EXPECT_EQ(root->opcode(), HloOpcode::kReduce);
  EXPECT_THAT(cast<HloDimensionsInstruction>(root)->dimensions(), ElementsAre(1));
  ASSERT_EQ(root->called_computations().size(), 1u);
  EXPECT_EQ(root->to_apply()->name(), "add");
  EXPECT_EQ(root->operand(0), p);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kConstant);
}

TEST(HloParserTest, ModuleHeaderAttributes) {
  auto module = Parse(
      R"(HloModule m, entry_computation_layout={(f32[2]{0}, s32[])->(f32[2]{0}, s32[])}, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}) }, buffer_donor={ (1, {}) }, alias_passthrough_params=true, frontend_attributes={k="v"}

ENTRY e {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[2], s32[]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  const HloModuleConfig& config = module->config();
  ASSERT_TRUE(config.entry_computation_layout.has_value());
  EXPECT_EQ(config.entry_computation_layout->ToString(), "(f32[2]{0}, s32[])->(f32[2]{0}, s32[])");
  ASSERT_EQ(config.input_output_alias.aliases().size(), 2u);
  EXPECT_EQ(config.input_output_alias.aliases()[0].kind,
            HloInputOutputAliasConfig::AliasKind::kMustAlias);
  EXPECT_EQ(config.input_output_alias.aliases()[1].parameter_number, 1);
  EXPECT_TRUE(config.buffer_donor.ParameterIsBufferDonor(1, {}));
  EXPECT_EQ(config.frontend_attributes.at("k"), "v");
  ASSERT_EQ(config.raw_attributes.size(), 1u);
  EXPECT_EQ(config.raw_attributes[0].name, "alias_passthrough_params");
  EXPECT_EQ(config.raw_attributes[0].value, "true");
}

TEST(HloParserTest, DotConvolutionAndWindowAttributes) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  dot = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={high,default}, algorithm=dot_bf16_bf16_f32
  in = f32[1,8,8,3] parameter(2)
  k = f32[3,3,3,16] parameter(3)
  ROOT conv = f32[1,4,4,16] convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
})");
  ASSERT_NE(module, nullptr);
  auto* dot = cast<HloDotInstruction>(Find(*module, "dot"));
  EXPECT_THAT(dot->dot_dimension_numbers().lhs_batch_dimensions(), ElementsAre(0));
  EXPECT_THAT(dot->dot_dimension_numbers().lhs_contracting_dimensions(), ElementsAre(2));
  EXPECT_THAT(dot->dot_dimension_numbers().rhs_contracting_dimensions(), ElementsAre(1));
  EXPECT_THAT(dot->precision_config().operand_precision(),
              ElementsAre(PrecisionConfig::HIGH, PrecisionConfig::DEFAULT));
  EXPECT_EQ(dot->precision_config().algorithm(), PrecisionConfig::ALG_DOT_BF16_BF16_F32);

  auto* conv = cast<HloConvolutionInstruction>(Find(*module, "conv"));
  ASSERT_EQ(conv->window().dimensions_size(), 2);
  const WindowDimension& w0 = conv->window().dimensions(0);
  const WindowDimension& w1 = conv->window().dimensions(1);
  EXPECT_EQ(w0.size(), 3);
  EXPECT_EQ(w0.stride(), 2);
  EXPECT_EQ(w0.padding_low(), 1);
  EXPECT_EQ(w0.padding_high(), 1);
  EXPECT_EQ(w1.padding_low(), 0);
  EXPECT_EQ(w1.padding_high(), 1);
  EXPECT_FALSE(w0.window_reversal());
  EXPECT_TRUE(w1.window_reversal());
  const ConvolutionDimensionNumbers& d = conv->convolution_dimension_numbers();
  EXPECT_EQ(d.input_batch_dimension(), 0);
  EXPECT_EQ(d.input_feature_dimension(), 3);
  EXPECT_THAT(d.input_spatial_dimensions(), ElementsAre(1, 2));
  EXPECT_EQ(d.kernel_input_feature_dimension(), 2);
  EXPECT_EQ(d.kernel_output_feature_dimension(), 3);
  EXPECT_THAT(d.kernel_spatial_dimensions(), ElementsAre(0, 1));
  EXPECT_EQ(d.output_feature_dimension(), 3);
  // Precision defaults to DEFAULT per operand.
  EXPECT_EQ(conv->precision_config().operand_precision_size(), 2);
}

TEST(HloParserTest, SlicePadGatherCompareAndMore) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[10,8] parameter(0)
  s = f32[5,8] slice(p), slice={[0:10:2], [0:8]}
  zero = f32[] constant(0)
  pad = f32[13,9] pad(s, zero), padding=1_2_1x0_1
  idx = s32[4,1] parameter(1)
  g = f32[4,8] gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true
  c = pred[5,8] compare(s, s), direction=LT, type=TOTALORDER
  i = s32[4] iota(), iota_dimension=0
  ROOT gte = f32[4,8] get-tuple-element((f32[4,8], pred[5,8]) tuple(g, c)), index=0
})");
  ASSERT_NE(module, nullptr);
  auto* slice = cast<HloSliceInstruction>(Find(*module, "s"));
  EXPECT_THAT(slice->slice_starts(), ElementsAre(0, 0));
  EXPECT_THAT(slice->slice_limits(), ElementsAre(10, 8));
  EXPECT_THAT(slice->slice_strides(), ElementsAre(2, 1));
  auto* pad = cast<HloPadInstruction>(Find(*module, "pad"));
  EXPECT_EQ(pad->padding_config().dimensions(0).edge_padding_high(), 2);
  EXPECT_EQ(pad->padding_config().dimensions(0).interior_padding(), 1);
  EXPECT_EQ(pad->padding_config().dimensions(1).interior_padding(), 0);
  auto* gather = cast<HloGatherInstruction>(Find(*module, "g"));
  EXPECT_THAT(gather->gather_slice_sizes(), ElementsAre(1, 8));
  EXPECT_EQ(gather->gather_dimension_numbers().index_vector_dim(), 1);
  EXPECT_TRUE(gather->indices_are_sorted());
  auto* compare = cast<HloCompareInstruction>(Find(*module, "c"));
  EXPECT_EQ(compare->direction(), ComparisonDirection::kLt);
  EXPECT_EQ(compare->type(), ComparisonType::kFloatTotalOrder);
  EXPECT_EQ(cast<HloIotaInstruction>(Find(*module, "i"))->iota_dimension(), 0);
  // A nested instruction (no name in the text) gets a generated one.
  HloInstruction* gte = Find(*module, "gte");
  EXPECT_EQ(gte->operand(0)->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(gte->operand(0)->name(), "tuple.anon");
}

TEST(HloParserTest, GenericAttributes) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = (f32[2], f32[2]) parameter(0), parameter_replication={true,false}, sharding={replicated}
  a = f32[2] get-tuple-element(p), index=0, metadata={op_type="Add" op_name="x/y" source_file="f.py" source_line=7}, backend_config="raw \"text\""
  b = f32[2] get-tuple-element(p), index=1, backend_config={"key": {"n": 1}}, frontend_attributes={_k="v", j={"x":1}}, control-predecessors={a}
  ROOT c = f32[2] copy(b), sharding={devices=[2]<=[2] metadata={op_name="s"}}, origin={{"c"}}, statistics={visualizing_index=1,stat-1=0.5}
})");
  ASSERT_NE(module, nullptr);
  auto* p = cast<HloParameterInstruction>(Find(*module, "p"));
  EXPECT_THAT(*p->attrs().parameter_replication, ElementsAre(true, false));
  // A single sharding on a tuple shape applies to every leaf (XLA's
  // NormalizeTupleSharding).
  EXPECT_EQ(p->sharding().ToString(), "{{replicated}, {replicated}}");
  HloInstruction* a = Find(*module, "a");
  EXPECT_EQ(a->metadata().op_type(), "Add");
  EXPECT_EQ(a->metadata().op_name(), "x/y");
  EXPECT_EQ(a->metadata().source_line(), 7);
  EXPECT_EQ(a->raw_backend_config_string(), "raw \"text\"");
  HloInstruction* b = Find(*module, "b");
  EXPECT_EQ(b->raw_backend_config_string(), "{\"key\": {\"n\": 1}}");
  EXPECT_EQ(b->frontend_attributes().at("_k"), "v");
  EXPECT_EQ(b->frontend_attributes().at("j"), "{\"x\":1}");
  EXPECT_THAT(b->control_predecessors(), ElementsAre(a));
  HloInstruction* c = Find(*module, "c");
  EXPECT_EQ(c->sharding().ToString(), "{devices=[2]<=[2] metadata={op_name=\"s\"}}");
  ASSERT_EQ(c->raw_attributes().size(), 2u);
  EXPECT_EQ(c->raw_attributes()[0].name, "origin");
  EXPECT_EQ(c->raw_attributes()[0].value, "{{\"c\"}}");
  EXPECT_EQ(c->raw_attributes()[1].name, "statistics");
  EXPECT_EQ(c->raw_attributes()[1].value, "{visualizing_index=1,stat-1=0.5}");
}

TEST(HloParserTest, ShardingCanonicalText) {
  auto canonical = [](absl::string_view text) {
    absl::StatusOr<HloSharding> sharding = ParseSharding(text);
    EXPECT_TRUE(sharding.ok()) << sharding.status().message();
    return sharding.ok() ? sharding->ToString() : "";
  };
  EXPECT_EQ(canonical("{replicated}"), "{replicated}");
  EXPECT_EQ(canonical("{maximal device=3}"), "{maximal device=3}");
  EXPECT_EQ(canonical("{devices=[2,2]0,1,2,3}"), "{devices=[2,2]0,1,2,3}");
  // Iota lists are canonical: merged dimensions, identity transposes dropped.
  EXPECT_EQ(canonical("{devices=[2,2]<=[2,2]T(0,1)}"), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(canonical("{devices=[4,2]<=[2,4]T(1,0)}"), "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_EQ(canonical("{devices=[2,1,2]<=[4] last_tile_dims={replicated}}"),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(canonical("{devices=[2,2]<=[4] last_tile_dims={manual}}"),
            "{devices=[2,2]<=[4] last_tile_dims={manual}}");
  EXPECT_EQ(canonical("{{replicated}, {maximal device=0}}"), "{{replicated}, {maximal device=0}}");
  EXPECT_EQ(canonical("{replicated shard_as 2}"), "{replicated shard_as 2}");
  EXPECT_EQ(canonical("{mesh['x'=2,'y'=2], [{'x'},{?}], replicated={'y'}}"),
            "{mesh['x'=2,'y'=2], [{'x'}, {?}], replicated={'y'}}");
  for (absl::string_view bad :
       {"{devices=[2,2]0,1,2}", "{devices=[2,2]<=[16]}", "{maximal}", "{replicated device=1}",
        "{devices=[2]<=[2,1]}", "{mesh['x'=2], [{'z'}]}"}) {
    EXPECT_FALSE(ParseSharding(bad).ok()) << bad;
  }
}

TEST(HloParserTest, Collectives) {
  auto module = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups={{0,1},{2,3}}, channel_id=5, use_global_device_ids=true, to_apply=add
  ag = f32[16] all-gather(p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
  ROOT cp = f32[8] collective-permute(p), source_target_pairs={{0,1},{1,0}}
})");
  ASSERT_NE(module, nullptr);
  auto* ar = cast<HloCollectiveInstruction>(Find(*module, "ar"));
  ASSERT_EQ(ar->replica_groups().size(), 2u);
  EXPECT_THAT(ar->replica_groups()[1].replica_ids(), ElementsAre(2, 3));
  EXPECT_EQ(ar->channel_id(), 5);
  EXPECT_TRUE(ar->attrs().use_global_device_ids);
  EXPECT_EQ(ar->to_apply()->name(), "add");
  auto* ag = cast<HloCollectiveInstruction>(Find(*module, "ag"));
  ASSERT_TRUE(ag->attrs().iota_replica_groups.has_value());
  EXPECT_EQ(ag->attrs().iota_replica_groups->ToString(), "[2,2]<=[2,2]T(1,0)");
  ASSERT_EQ(ag->replica_groups().size(), 2u);
  EXPECT_THAT(ag->replica_groups()[0].replica_ids(), ElementsAre(0, 2));
  EXPECT_THAT(ag->attrs().dimensions, ElementsAre(0));
  auto* cp = cast<HloCollectiveInstruction>(Find(*module, "cp"));
  EXPECT_THAT(cp->attrs().source_target_pairs,
              ElementsAre(std::pair<int64_t, int64_t>(0, 1), std::pair<int64_t, int64_t>(1, 0)));
}

TEST(HloParserTest, CustomCallFusionWhileConditional) {
  auto module = Parse(R"(HloModule m
fused {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  ROOT s = (s32[], f32[4]) parameter(0)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  cc = (f32[4]{0}, s8[16]{0}) custom-call(p), custom_call_target="my_target", api_version=API_VERSION_STATUS_RETURNING, custom_call_has_side_effect=true, output_to_operand_aliasing={{0}: (0, {})}, operand_layout_constraints={f32[4]{0}}, schedule=SCHEDULE_LATEST, backend_config="opaque bytes"
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, f)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  t = pred[] constant(true)
  ROOT c = f32[4] conditional(t, p, p), true_computation=fused, false_computation=fused
})");
  ASSERT_NE(module, nullptr);
  auto* cc = cast<HloCustomCallInstruction>(Find(*module, "cc"));
  EXPECT_EQ(cc->custom_call_target(), "my_target");
  EXPECT_EQ(cc->api_version(), API_VERSION_STATUS_RETURNING);
  EXPECT_TRUE(cc->custom_call_has_side_effect());
  ASSERT_EQ(cc->output_to_operand_aliasing().size(), 1u);
  EXPECT_EQ(cc->output_to_operand_aliasing()[0].output_index, ShapeIndex({0}));
  EXPECT_EQ(cc->attrs().schedule, SCHEDULE_LATEST);
  ASSERT_TRUE(cc->attrs().operand_layout_constraints.has_value());
  EXPECT_EQ(cc->raw_backend_config_string(), "opaque bytes");
  auto* fusion = cast<HloFusionInstruction>(Find(*module, "f"));
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(fusion->fused_instructions_computation()->FusionInstruction(), fusion);
  HloInstruction* w = Find(*module, "w");
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  HloInstruction* c = Find(*module, "c");
  ASSERT_EQ(c->branch_computations().size(), 2u);
}

TEST(HloParserTest, AsyncShorthandMakesAWrappedComputation) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target="foo", metadata={op_name="x"}
  u = ((f32[10]), f32[20], s32[]) custom-call-update(s)
  ROOT d = f32[20] custom-call-done(u)
})");
  ASSERT_NE(module, nullptr);
  auto* start = cast<HloAsyncInstruction>(Find(*module, "s"));
  EXPECT_EQ(start->opcode(), HloOpcode::kAsyncStart);
  HloComputation* wrapped = start->async_wrapped_computation();
  EXPECT_EQ(wrapped->name(), "async_wrapped");
  EXPECT_EQ(wrapped->num_parameters(), 1);
  EXPECT_EQ(wrapped->parameter_instruction(0)->shape().ToString(), "f32[10]{0}");
  auto* call = cast<HloCustomCallInstruction>(wrapped->root_instruction());
  EXPECT_EQ(call->custom_call_target(), "foo");
  EXPECT_EQ(call->shape().ToString(), "f32[20]{0}");
  EXPECT_EQ(call->metadata().op_name(), "x");
  EXPECT_EQ(Find(*module, "u")->opcode(), HloOpcode::kAsyncUpdate);
  auto* done = cast<HloAsyncInstruction>(Find(*module, "d"));
  EXPECT_EQ(done->opcode(), HloOpcode::kAsyncDone);
  EXPECT_EQ(done->async_wrapped_computation(), wrapped);
}

// XLA's late binding: `dot-start()` leaves both operands to the updates;
// the wrapped dot has a parameter for each, typed once an update binds it,
// and the module prints back in the same shorthand.
TEST(HloParserTest, AsyncShorthandBindsOperandsInUpdates) {
  const char* text = R"(HloModule m
ENTRY e {
  lhs = f32[4,4] parameter(0)
  rhs = f32[4,2] parameter(1)
  s = ((), (), u32[]) dot-start(), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  u0 = ((f32[4,4]), (), u32[]) dot-update(s, lhs)
  u1 = ((f32[4,4], f32[4,2]), f32[4,2], u32[]) dot-update(u0, rhs)
  ROOT d = f32[4,2] dot-done(u1)
})";
  auto module = Parse(text);
  ASSERT_NE(module, nullptr);
  auto* start = cast<HloAsyncInstruction>(Find(*module, "s"));
  EXPECT_EQ(start->operand_count(), 0);
  EXPECT_EQ(Find(*module, "u1")->operand_count(), 2);
  HloComputation* wrapped = start->async_wrapped_computation();
  ASSERT_EQ(wrapped->num_parameters(), 2);
  EXPECT_EQ(wrapped->parameter_instruction(0)->shape().ToString(), "f32[4,4]{1,0}");
  EXPECT_EQ(wrapped->parameter_instruction(1)->shape().ToString(), "f32[4,2]{1,0}");
  const HloInstruction* dot = wrapped->root_instruction();
  EXPECT_EQ(dot->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dot->operand(1), wrapped->parameter_instruction(1));
  std::string printed = module->ToString();
  EXPECT_THAT(printed,
              HasSubstr("dot-start(), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  EXPECT_THAT(printed, HasSubstr("dot-update(%u0, %rhs)"));
  EXPECT_THAT(printed, Not(HasSubstr("async_wrapped")));
  auto reparsed = Parse(printed);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), printed);

  // A chain that never binds them keeps placeholder (empty tuple) parameters.
  auto unbound = Parse(R"(HloModule m
ENTRY e {
  ROOT s = ((), (), s32[]) dot-start()
})");
  ASSERT_NE(unbound, nullptr);
  HloComputation* placeholders =
      cast<HloAsyncInstruction>(Find(*unbound, "s"))->async_wrapped_computation();
  ASSERT_EQ(placeholders->num_parameters(), 2);
  EXPECT_EQ(placeholders->parameter_instruction(1)->shape().ToString(), "()");
  EXPECT_THAT(unbound->ToString(),
              HasSubstr("%s = ((), (), s32[]) dot-start(), lhs_contracting_dims={}"));
}

TEST(HloParserTest, CompactTupleElementsAndInferredShapes) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p0 = (f32[10], (f32[20], s32[])) parameter(0)
  a = negate(f32[20] %p0#1#0)
  b = f32[20] add(a, f32[20] %p0#1#0)
  d = dot(f32[2,3] parameter(1), f32[3,4] parameter(2)), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = tuple(b, d)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* a = Find(*module, "a");
  EXPECT_EQ(a->shape().ToString(), "f32[20]{0}");
  const HloInstruction* gte = a->operand(0);
  EXPECT_EQ(gte->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(cast<HloGetTupleElementInstruction>(gte)->tuple_index(), 0);
  EXPECT_EQ(gte->name(), "p0_1_0");
  // The same `#` path is one instruction.
  EXPECT_EQ(Find(*module, "b")->operand(1), gte);
  EXPECT_EQ(Find(*module, "d")->shape().ToString(), "f32[2,4]{1,0}");
  EXPECT_EQ(Find(*module, "t")->shape().ToString(), "(f32[20]{0}, f32[2,4]{1,0})");
}

TEST(HloParserTest, NamesAreUniqueInTheModule) {
  auto module = Parse(R"(HloModule m
f {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=f
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->GetComputationWithName("f")->root_instruction()->name(), "y");
  EXPECT_EQ(module->entry_computation()->root_instruction()->name(), "y.1");
  EXPECT_EQ(module->entry_computation()->parameter_instruction(0)->name(), "x.1");
}

TEST(HloParserTest, ConstantsGoThroughTheLiteralParser) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  a = s32[2,2] constant({{1, 2}, {3, 4}})
  ROOT b = f32[3] constant(1.5)
})");
  ASSERT_NE(module, nullptr);
  const Literal& a = cast<HloConstantInstruction>(Find(*module, "a"))->literal();
  EXPECT_EQ(a.Get<int32_t>({1, 0}), 3);
  const Literal& b = cast<HloConstantInstruction>(Find(*module, "b"))->literal();
  EXPECT_EQ(b.Get<float>({2}), 1.5f);  // one value fills the array
}

TEST(HloParserTest, ShapesAndLayouts) {
  absl::StatusOr<Shape> shape = ParseShape("(f32[2,<=3]{0,1}, token[], s4[?])");
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_EQ(shape->ToString(), "(f32[2,<=3]{0,1}, token[], s4[?]{0})");
  absl::StatusOr<Layout> layout = ParseLayout("{1,0:T(8,128)(2,1)S(1)}");
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_THAT(layout->minor_to_major(), ElementsAre(1, 0));
  ASSERT_EQ(layout->tiles().size(), 2u);
  EXPECT_THAT(layout->tiles()[0].dimensions, ElementsAre(8, 128));
  EXPECT_EQ(layout->memory_space(), 1);
  EXPECT_FALSE(ParseShape("f32[2]{0,1}").ok());
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[4294967296,4294967296,4294967296]").ok());  // overflows int64
  EXPECT_FALSE(ParseShape("f32[2] junk").ok());
}

// --- Errors: FILE:LINE:COL, the line, a caret -----------------------------------

TEST(HloParserErrorTest, UnknownOpcodeIsLocated) {
  std::string error = ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] frobnicate()\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:3:18: error: unknown opcode: frobnicate\n"
                               "  ROOT p = f32[] frobnicate()\n"
                               "                 ^"));
}

TEST(HloParserErrorTest, UnknownOperand) {
  std::string error = ParseError("HloModule m\nENTRY e {\n  ROOT a = f32[] negate(q)\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:3:25: error: instruction does not exist: q"));
}

TEST(HloParserErrorTest, BadShape) {
  std::string error = ParseError("HloModule m\nENTRY e {\n  ROOT a = f32[2,x] parameter(0)\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:3:18: error: expects integer"));
}

TEST(HloParserErrorTest, UnexpectedAttribute) {
  std::string error = ParseError(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] negate(p), "
      "index=3\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:4:30: error: unexpected attribute \"index\""));
  EXPECT_THAT(error, HasSubstr("Allowed attributes: backend_config"));
}

TEST(HloParserErrorTest, MissingRequiredAttribute) {
  std::string error = ParseError(
      "HloModule m\nENTRY e {\n  p = (f32[2]) parameter(0)\n  ROOT a = f32[2] "
      "get-tuple-element(p)\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:4:39: error: attribute index is expected but not seen"));
}

TEST(HloParserErrorTest, UnterminatedString) {
  std::string error = ParseError(
      "HloModule m\nENTRY e {\n  ROOT a = f32[2] custom-call(), custom_call_target=\"abc\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:3:53: error: unterminated string"));
}

TEST(HloParserErrorTest, DuplicateNameAndRoot) {
  std::string duplicate =
      ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n");
  EXPECT_THAT(duplicate, HasSubstr("test.hlo:4:3: error: instruction already exists: a"));
  EXPECT_THAT(duplicate, HasSubstr("test.hlo:3:3: note: instruction previously defined here"));
  std::string roots = ParseError(
      "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n");
  EXPECT_THAT(roots, HasSubstr("test.hlo:4:3: error: one computation should have only one ROOT"));
}

TEST(HloParserErrorTest, ParametersMustBeUniqueAndDense) {
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] "
                         "parameter(0)\n}\n"),
              HasSubstr("test.hlo:4:28: error: parameter number 0 already used by a"));
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT b = f32[] parameter(1)\n}\n"),
              HasSubstr("parameter numbers must be dense"));
}

TEST(HloParserErrorTest, UnknownComputationAndBadSharding) {
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] "
                         "call(p), to_apply=nowhere\n}\n"),
              HasSubstr("test.hlo:4:36: error: computation does not exist: nowhere"));
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0), "
                         "sharding={devices=[2,2]0,1,2}\n}\n"),
              HasSubstr("needs 4 devices but lists 3"));
}

TEST(HloParserErrorTest, NeverCrashesOnDeepNestingOrGarbage) {
  std::string deep_shape = "HloModule m\nENTRY e {\n  ROOT p = " + std::string(100000, '(') +
                           "f32[]" + std::string(100000, ')') + " parameter(0)\n}\n";
  EXPECT_THAT(ParseError(deep_shape), HasSubstr("nesting is too deep"));
  std::string deep_operands = "HloModule m\nENTRY e {\n  ROOT p = f32[] ";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&deep_operands, "negate(");
  EXPECT_THAT(ParseError(deep_operands), HasSubstr("nesting is too deep"));
  EXPECT_THAT(ParseError(std::string("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\x01")),
              HasSubstr("error:"));
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] constant(1) /* open"),
              HasSubstr("unterminated /* comment"));
  EXPECT_THAT(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[1000000000,1000] constant({...})\n}"),
      HasSubstr("larger than"));
}

}  // namespace
}  // namespace axle

namespace axle {
namespace {

TEST(HloParserBufferShapeTest, BufferShapesParseAndPrint) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  pin = b(f32[16]{0}) custom-call(p), custom_call_target="Pin",
    output_to_operand_aliasing={{}:(0, {})}
  call = (b(f32[16]), token[]) custom-call(pin), custom_call_target="update"
  g = b(f32[16]) get-tuple-element(call), index=0
  ROOT unpin = f32[16] custom-call(g), custom_call_target="Unpin"
})");
  ASSERT_NE(module, nullptr);
  const Shape& pin = Find(*module, "pin")->shape();
  EXPECT_TRUE(pin.IsBuffer());
  EXPECT_FALSE(pin.IsArray());
  EXPECT_EQ(pin.buffer_shape(), ShapeUtil::MakeShapeWithDescendingLayout(F32, {16}));
  EXPECT_EQ(pin.ToString(), "b(f32[16]{0})");
  const Shape& call = Find(*module, "call")->shape();
  ASSERT_TRUE(call.IsTuple());
  EXPECT_TRUE(call.tuple_shapes(0).IsBuffer());
  EXPECT_EQ(call.ToString(/*print_layout=*/false), "(b(f32[16]), token[])");
  std::string printed = module->ToString();
  EXPECT_THAT(printed, HasSubstr("g = b(f32[16]{0}) get-tuple-element("));
  std::unique_ptr<HloModule> reparsed = Parse(printed);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), printed);
}

TEST(HloParserBufferShapeTest, StandAloneAndErrors) {
  absl::StatusOr<Shape> shape = ParseShape("b(s32[2,8])");
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_TRUE(shape->IsBuffer());
  EXPECT_EQ(shape->buffer_shape().dimensions(), (std::vector<int64_t>{2, 8}));
  EXPECT_NE(*shape, *ParseShape("b(s32[2,9])"));
  EXPECT_THAT(ParseShape("b((f32[]))").status().message(), HasSubstr("holds an array shape"));
  EXPECT_FALSE(ParseShape("b(f32[2]").ok());
  // "buffer" is no type name in the text; an instruction may be called `b`.
  std::unique_ptr<HloModule> module = Parse(R"(
ENTRY e {
  b = f32[] parameter(0)
  buffer = f32[] parameter(1)
  ROOT r = f32[] add(b, buffer)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry_computation()->root_instruction()->operand(1)->name(), "buffer");
}

TEST(HloParserNamesTest, InstructionsNamedLikeTypes) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  s1 = s32[] parameter(0)
  f32 = f32[] parameter(1)
  pred = pred[] constant(true)
  c = f32[] convert(s1)
  sum = f32[] add(f32, c)
  ROOT u1 = f32[] select(pred, sum, f32[] f32)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->name(), "u1");
  EXPECT_EQ(root->operand(0)->name(), "pred");
  EXPECT_EQ(root->operand(2)->name(), "f32");
  EXPECT_EQ(Find(*module, "c")->operand(0)->name(), "s1");
  std::string printed = module->ToString();
  std::unique_ptr<HloModule> reparsed = Parse(printed);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), printed);
  // A type still needs its brackets where a shape is expected.
  EXPECT_THAT(ParseError("ENTRY e {\n  ROOT p = f32 parameter(0)\n}"), HasSubstr("expects opcode"));
}

TEST(HloParserAsyncTest, AsyncDoneThroughTransparentOps) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  ROOT cc = f32[3,2] custom-call(p0), custom_call_target="foo"
}
ENTRY e {
  p0 = f32[2,3] parameter(0)
  start = ((f32[2,3]), f32[3,2], s32[]) async-start(p0), calls=wrapped
  barrier = ((f32[2,3]), f32[3,2], s32[]) opt-barrier(start)
  tup = (((f32[2,3]), f32[3,2], s32[])) tuple(barrier)
  gte = ((f32[2,3]), f32[3,2], s32[]) get-tuple-element(tup), index=0
  copy = ((f32[2,3]), f32[3,2], s32[]) copy(gte)
  ROOT done = f32[3,2] async-done(copy)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* done = module->entry_computation()->root_instruction();
  ASSERT_EQ(done->called_computations().size(), 1u);
  EXPECT_EQ(done->called_computations()[0]->name(), "wrapped");
  // The printer follows the same chain: the done names no computation.
  std::string printed = module->ToString();
  EXPECT_THAT(printed, HasSubstr("custom-call-done(%copy)\n"));
  std::unique_ptr<HloModule> reparsed = Parse(printed);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), printed);
  // Through anything else the computation must be named.
  EXPECT_THAT(ParseError(R"(
wrapped {
  p0 = f32[2,3] parameter(0)
  ROOT cc = f32[3,2] custom-call(p0), custom_call_target="foo"
}
ENTRY e {
  p0 = f32[2,3] parameter(0)
  start = ((f32[2,3]), f32[3,2], s32[]) async-start(p0), calls=wrapped
  n = ((f32[2,3]), f32[3,2], s32[]) negate(start)
  ROOT done = f32[3,2] async-done(n)
})"),
              HasSubstr("calls"));
}

TEST(HloParserAsyncTest, ShorthandDoneOfATupleIsRejectedAsByXla) {
  // XLA's parser tests (AsyncDoneNoAsyncStart) expect this exact failure.
  EXPECT_THAT(ParseError(R"(
HloModule m
ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = u32[] parameter(1)
  tuple = ((f32[2,3]), f32[2,3], u32[]) tuple(p0, p0, p1)
  ROOT done = f32[2,3] custom-call-done(tuple)
})"),
              HasSubstr("test.hlo:7:24: error: AsyncUpdate and AsyncDone expect a single async op "
                        "as their operand."));
}

TEST(HloParserSingleInstructionTest, OperandsBecomeParameters) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseSingleInstruction("ROOT r = f32[2] add(f32[2] x, f32[2] multiply(f32[2] y, f32[2] x))");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloComputation* entry = (*module)->entry_computation();
  EXPECT_EQ(entry->name(), "single_instruction");
  ASSERT_EQ(entry->num_parameters(), 2);
  EXPECT_EQ(entry->parameter_instruction(0)->name(), "x");
  EXPECT_EQ(entry->parameter_instruction(1)->name(), "y");
  const HloInstruction* root = entry->root_instruction();
  EXPECT_EQ(root->name(), "r");
  EXPECT_EQ(root->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(root->operand(1)->operand(1), entry->parameter_instruction(0));

  EXPECT_THAT(ParseSingleInstruction("r = f32[] negate(x)").status().message(),
              HasSubstr("instruction does not exist: x"));
  EXPECT_THAT(ParseSingleInstruction("r = f32[] negate(f32[] x) junk").status().message(),
              HasSubstr("extra text"));
}

// Where the text leaves a shape out, the parser infers it with ShapeInference
// (the rules the verifier and the builder use).
TEST(HloParserInferenceTest, OmittedShapesComeFromShapeInference) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  r = reduce(p, z), dimensions={0}, to_apply=add
  x = exponential(p)
  c = complex(p, p)
  t = transpose(p), dimensions={1,0}
  l = compare(p, p), direction=LT
  ROOT out = tuple(r, x, c, t, l)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "r")->shape().ToString(false), "f32[3]");
  EXPECT_EQ(Find(*module, "x")->shape().ToString(false), "f32[2,3]");
  EXPECT_EQ(Find(*module, "c")->shape().ToString(false), "c64[2,3]");
  EXPECT_EQ(Find(*module, "t")->shape().ToString(false), "f32[3,2]");
  EXPECT_EQ(Find(*module, "l")->shape().ToString(false), "pred[2,3]");
  EXPECT_EQ(Find(*module, "out")->shape().ToString(false),
            "(f32[3], f32[2,3], c64[2,3], f32[3,2], pred[2,3])");
}

// scaled-dot's operands are (lhs, rhs, lhs_scale, rhs_scale), as in XLA.
TEST(HloParserInferenceTest, ScaledDotShapeFromLhsAndRhs) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,4] parameter(0)
  b = f32[4,3] parameter(1)
  sa = f32[2,1] parameter(2)
  sb = f32[1,3] parameter(3)
  ROOT r = scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "r")->shape().ToString(false), "f32[2,3]");
}

TEST(HloParserInferenceTest, InferenceErrorNamesTheOpcodeAndWhere) {
  std::string error = ParseError(
      "HloModule m\nENTRY e {\n  p = s32[2] parameter(0)\n"
      "  ROOT t = (f32[2]) tuple(exponential(p))\n}\n");
  EXPECT_THAT(error, HasSubstr("test.hlo:4:27: error: failed to infer shape for opcode: "
                               "exponential, error: exponential: expected a floating-point or "
                               "complex operand"));
}

}  // namespace
}  // namespace axle
