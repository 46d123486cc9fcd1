//===- hlo_printer_test.cc - Tests of the HLO printer: module structure ---===//
//
// The module as a whole: exact text of a small module, instruction and
// computation order, headers, index comments, schedules, fusion and async
// computations. Each op's own attributes: hlo_printer_attributes_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/text/hlo_printer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_printer_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using printer_test::AddComputation;
using printer_test::Arr;
using printer_test::Builder;
using printer_test::LineWith;

TEST(HloPrinterTest, SimpleModuleExactText) {
  auto module = std::make_unique<HloModule>("axpy_module");
  Builder b("axpy.v5");
  HloInstruction* alpha = b.Parameter(0, Arr(F32, {}), "alpha");
  auto* broadcast = b.Make<HloDimensionsInstruction>(HloOpcode::kBroadcast, Arr(F32, {2, 4}),
                                                     {alpha}, "broadcast");
  HloInstruction* x = b.Parameter(1, Arr(F32, {2, 4}), "x");
  HloInstruction* multiply =
      b.Op(HloOpcode::kMultiply, Arr(F32, {2, 4}), {broadcast, x}, "multiply");
  HloInstruction* y = b.Parameter(2, Arr(F32, {2, 4}), "y");
  b.Op(HloOpcode::kAdd, Arr(F32, {2, 4}), {multiply, y}, "add");
  module->AddEntryComputation(b.Build());

  EXPECT_EQ(module->ToString(),
            "HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, "
            "f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
            "\n"
            "ENTRY %axpy.v5 (alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4] {\n"
            "  %alpha = f32[] parameter(0)\n"
            "  %broadcast = f32[2,4]{1,0} broadcast(%alpha), dimensions={}\n"
            "  %x = f32[2,4]{1,0} parameter(1)\n"
            "  %multiply = f32[2,4]{1,0} multiply(%broadcast, %x)\n"
            "  %y = f32[2,4]{1,0} parameter(2)\n"
            "  ROOT %add = f32[2,4]{1,0} add(%multiply, %y)\n"
            "}\n"
            "\n");

  // XLA's parser-test form: operand shapes, as XLA printed them by default
  // until 2024.
  EXPECT_EQ(LineWith(ToString(*module, HloPrintOptions::Canonical().set_print_operand_shape(true)),
                     "multiply("),
            "%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)");
  // XLA's ShortParsable form, through XLA's member API.
  EXPECT_EQ(module->ToString(HloPrintOptions::ShortParsable()),
            "HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, "
            "f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
            "\n"
            "ENTRY axpy.v5 {\n"
            "  alpha = f32[] parameter(0)\n"
            "  broadcast = f32[2,4]{1,0} broadcast(alpha), dimensions={}\n"
            "  x = f32[2,4]{1,0} parameter(1)\n"
            "  multiply = f32[2,4]{1,0} multiply(broadcast, x)\n"
            "  y = f32[2,4]{1,0} parameter(2)\n"
            "  ROOT add = f32[2,4]{1,0} add(multiply, y)\n"
            "}\n"
            "\n");
}

TEST(HloPrinterTest, InstructionsInXlaPostOrder) {
  // Stored order p0, p1, c, sub(p1, p0), neg(c): XLA's post order starts from
  // the user-less instructions in stored order and visits operands first
  // operand first.
  auto module = std::make_unique<HloModule>("m");
  Builder b("e");
  HloInstruction* p0 = b.Parameter(0, Arr(F32, {}), "p0");
  HloInstruction* p1 = b.Parameter(1, Arr(F32, {}), "p1");
  HloInstruction* c = b.Constant(LiteralUtil::CreateR0<float>(2), "c");
  HloInstruction* sub = b.Op(HloOpcode::kSubtract, Arr(F32, {}), {p1, p0}, "sub");
  HloInstruction* neg = b.Op(HloOpcode::kNegate, Arr(F32, {}), {c}, "neg");
  HloInstruction* tuple = b.Op(
      HloOpcode::kTuple, ShapeUtil::MakeTupleShape({Arr(F32, {}), Arr(F32, {})}), {neg, sub}, "t");
  module->AddEntryComputation(b.Build(tuple));
  EXPECT_EQ(ToString(*module->entry_computation(), HloPrintOptions::ShortParsable()),
            "e {\n"
            "  c = f32[] constant(2)\n"
            "  neg = f32[] negate(c)\n"
            "  p1 = f32[] parameter(1)\n"
            "  p0 = f32[] parameter(0)\n"
            "  sub = f32[] subtract(p1, p0)\n"
            "  ROOT t = (f32[], f32[]) tuple(neg, sub)\n"
            "}");
}

TEST(HloPrinterTest, ControlPredecessorsComeFirstAndArePrinted) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {}), "p");
  HloInstruction* a = b.Op(HloOpcode::kNegate, Arr(F32, {}), {p}, "a");
  HloInstruction* c = b.Op(HloOpcode::kExp, Arr(F32, {}), {p}, "c");
  c->AddControlDependencyTo(a);
  HloInstruction* t =
      b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape({Arr(F32, {}), Arr(F32, {})}), {a, c}, "t");
  module->AddEntryComputation(b.Build(t));
  std::string text = ToString(*module->entry_computation(), HloPrintOptions::Canonical());
  EXPECT_EQ(text,
            "%e (p: f32[]) -> (f32[], f32[]) {\n"
            "  %p = f32[] parameter(0)\n"
            "  %c = f32[] exponential(%p)\n"
            "  %a = f32[] negate(%p), control-predecessors={%c}\n"
            "  ROOT %t = (f32[], f32[]) tuple(%a, %c)\n"
            "}");
  EXPECT_EQ(LineWith(ToString(*module, HloPrintOptions::ShortParsable()), "negate"),
            "a = f32[] negate(p)");
}

TEST(HloPrinterTest, ComputationsCalleesFirstWithAttributesPerCaller) {
  auto module = std::make_unique<HloModule>("m");
  HloComputation* add = module->AddEmbeddedComputation(AddComputation("add"));
  Builder cond_b("cond");
  HloInstruction* cp = cond_b.Parameter(0, Arr(S32, {}), "cp");
  HloInstruction* limit = cond_b.Constant(LiteralUtil::CreateR0<int32_t>(5), "limit");
  auto* lt =
      cond_b.Make<HloCompareInstruction>(HloOpcode::kCompare, Arr(PRED, {}), {cp, limit}, "lt");
  lt->mutable_attrs()->direction = ComparisonDirection::kLt;
  HloComputation* cond = module->AddEmbeddedComputation(cond_b.Build());
  Builder body_b("body");
  HloInstruction* bp = body_b.Parameter(0, Arr(S32, {}), "bp");
  HloInstruction* one = body_b.Constant(LiteralUtil::CreateR0<int32_t>(1), "one");
  body_b.Op(HloOpcode::kAdd, Arr(S32, {}), {bp, one}, "next");
  HloComputation* body = module->AddEmbeddedComputation(body_b.Build());

  Builder e("main");
  HloInstruction* v = e.Parameter(0, Arr(F32, {4}), "v");
  HloInstruction* zero = e.Constant(LiteralUtil::CreateR0<float>(0), "zero");
  auto* reduce =
      e.Make<HloDimensionsInstruction>(HloOpcode::kReduce, Arr(F32, {}), {v, zero}, "reduce");
  reduce->mutable_attrs()->dimensions = {0};
  reduce->set_to_apply(add);
  HloInstruction* i0 = e.Constant(LiteralUtil::CreateR0<int32_t>(0), "i0");
  HloInstruction* loop = e.Op(HloOpcode::kWhile, Arr(S32, {}), {i0}, "loop");
  loop->AppendCalledComputation(cond);
  loop->AppendCalledComputation(body);
  HloInstruction* call = e.Op(HloOpcode::kCall, Arr(F32, {}), {reduce, zero}, "call");
  call->set_to_apply(add);
  call->mutable_raw_attributes()->push_back({"is_composite", "true"});
  call->set_frontend_attributes({{"composite.name", "foo.bar"}, {"composite.version", "1"}});
  HloInstruction* pred = e.Parameter(1, Arr(PRED, {}), "pred");
  HloInstruction* cond_op = e.Op(HloOpcode::kConditional, Arr(F32, {}), {pred, zero, zero}, "if");
  cond_op->AppendCalledComputation(add);
  cond_op->AppendCalledComputation(add);
  HloInstruction* index = e.Parameter(2, Arr(S32, {}), "index");
  HloInstruction* switch_op =
      e.Op(HloOpcode::kConditional, Arr(F32, {}), {index, zero, zero}, "switch");
  switch_op->AppendCalledComputation(add);
  switch_op->AppendCalledComputation(add);
  HloInstruction* map =
      e.Make<HloDimensionsInstruction>(HloOpcode::kMap, Arr(F32, {4}), {v, v}, "map");
  map->set_to_apply(add);
  cast<HloDimensionsInstruction>(map)->mutable_attrs()->dimensions = {0};
  auto* sort = e.Make<HloSortInstruction>(HloOpcode::kSort, Arr(F32, {4}), {v}, "sort");
  sort->mutable_attrs()->is_stable = true;
  sort->set_to_apply(cond);
  HloInstruction* root =
      e.Op(HloOpcode::kTuple,
           ShapeUtil::MakeTupleShape({Arr(F32, {}), Arr(S32, {}), Arr(F32, {}), Arr(F32, {}),
                                      Arr(F32, {}), Arr(F32, {4}), Arr(F32, {4})}),
           {reduce, loop, call, cond_op, switch_op, map, sort}, "root");
  module->AddEntryComputation(e.Build(root));

  std::string text = module->ToString();
  // Callees first, in the order the entry's instructions call them (a
  // while's body before its condition, as XLA stores them); the entry last.
  size_t add_pos = text.find("\n%add ");
  size_t cond_pos = text.find("\n%cond ");
  size_t body_pos = text.find("\n%body ");
  size_t entry_pos = text.find("\nENTRY %main ");
  ASSERT_NE(add_pos, std::string::npos) << text;
  EXPECT_LT(add_pos, body_pos);
  EXPECT_LT(body_pos, cond_pos);
  EXPECT_LT(cond_pos, entry_pos);
  EXPECT_EQ(LineWith(text, "%add (x.add"), "%add (x.add: f32[], y.add: f32[]) -> f32[] {");
  EXPECT_EQ(LineWith(text, "reduce("),
            "%reduce = f32[] reduce(%v, %zero), dimensions={0}, to_apply=%add");
  EXPECT_EQ(LineWith(text, "while("), "%loop = s32[] while(%i0), condition=%cond, body=%body");
  EXPECT_EQ(LineWith(text, "call("),
            "%call = f32[] call(%reduce, %zero), to_apply=%add, is_composite=true, "
            "frontend_attributes={composite.name=\"foo.bar\",composite.version=\"1\"}");
  EXPECT_EQ(LineWith(text, "%if ="),
            "%if = f32[] conditional(%pred, %zero, %zero), true_computation=%add, "
            "false_computation=%add");
  EXPECT_EQ(LineWith(text, "%switch ="),
            "%switch = f32[] conditional(%index, %zero, %zero), branch_computations={%add, %add}");
  EXPECT_EQ(LineWith(text, "map("), "%map = f32[4]{0} map(%v, %v), dimensions={0}, to_apply=%add");
  EXPECT_EQ(LineWith(text, "sort("),
            "%sort = f32[4]{0} sort(%v), dimensions={0}, is_stable=true, to_apply=%cond");
  EXPECT_EQ(LineWith(text, "compare("), "ROOT %lt = pred[] compare(%cp, %limit), direction=LT");
  // Tuples with more than five elements carry index comments, in shapes and
  // in operand lists alike.
  EXPECT_EQ(LineWith(text, "%root ="),
            "ROOT %root = (f32[], s32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}, f32[4]{0}) "
            "tuple(%reduce, %loop, %call, %if, %switch, /*index=5*/%map, %sort)");
  EXPECT_EQ(LineWith(text, "ENTRY"),
            "ENTRY %main (v: f32[4], pred: pred[], index: s32[]) -> (f32[], s32[], f32[], f32[], "
            "f32[], /*index=5*/f32[4], f32[4]) {");
}

// A computation called from two places, one of them a sibling callee that
// comes first (%x calls %y, and the conditional calls both): XLA's order
// would print %y after %x, which does not parse back; every callee must
// come before its callers.
TEST(HloPrinterTest, ComputationsCalledFromTwoPlacesComeBeforeEveryCaller) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(R"(
HloModule m
y {
  py = f32[] parameter(0)
  ROOT n = f32[] negate(py)
}
x {
  px = f32[] parameter(0)
  ROOT c = f32[] call(px), to_apply=y
}
w {
  pw = f32[] parameter(0)
  ROOT c2 = f32[] call(pw), to_apply=x
}
ENTRY e {
  i = s32[] parameter(0)
  a = f32[] parameter(1)
  ROOT r = f32[] conditional(i, a, a, a), branch_computations={w, x, y}
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::string text = (*module)->ToString();
  size_t y_pos = text.find("\n%y ");
  size_t x_pos = text.find("\n%x ");
  size_t w_pos = text.find("\n%w ");
  size_t entry_pos = text.find("\nENTRY %e ");
  ASSERT_NE(y_pos, std::string::npos) << text;
  EXPECT_LT(y_pos, x_pos) << text;
  EXPECT_LT(x_pos, w_pos) << text;
  EXPECT_LT(w_pos, entry_pos) << text;
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << text;
  EXPECT_EQ((*reparsed)->ToString(), text);
}

TEST(HloPrinterTest, ShapeAndProgramShapeIndexComments) {
  std::vector<Shape> elements(11, Arr(F32, {}));
  elements[10] = Arr(F32, {2});
  Shape tuple = ShapeUtil::MakeTupleShape(elements);
  EXPECT_EQ(ShapeToHloString(tuple),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[], f32[], f32[], f32[], "
            "/*index=10*/f32[2]{0})");
  EXPECT_EQ(ShapeToHloString(tuple, false),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[], f32[], f32[], f32[], "
            "/*index=10*/f32[2])");
  EXPECT_EQ(ShapeToHloString(ShapeUtil::MakeTupleShape({})), "()");
  ProgramShape program;
  *program.mutable_parameters() = std::vector<Shape>(6, Arr(S32, {3}));
  *program.mutable_result() =
      ShapeUtil::MakeTupleShape({Arr(F32, {}), ShapeUtil::MakeTokenShape()});
  EXPECT_EQ(ProgramShapeToLayoutString(program),
            "(s32[3]{0}, s32[3]{0}, s32[3]{0}, s32[3]{0}, s32[3]{0}, /*index=5*/s32[3]{0})->"
            "(f32[], token[])");
}

TEST(HloPrinterTest, ChannelOrderKeepsCollectivesOfOneChannelInOrder) {
  // %b (channel 1) is stored before %a (channel 1); XLA's post order keeps
  // the collectives of one channel in their stored order even though the
  // root uses %a first.
  auto module = std::make_unique<HloModule>("m");
  Builder b("e");
  HloInstruction* p = b.Parameter(0, Arr(F32, {8}), "p");
  auto* second = b.Make<HloCollectiveInstruction>(HloOpcode::kAllToAll, Arr(F32, {8}), {p}, "b");
  second->mutable_attrs()->channel_id = 1;
  auto* first = b.Make<HloCollectiveInstruction>(HloOpcode::kAllToAll, Arr(F32, {8}), {p}, "a");
  first->mutable_attrs()->channel_id = 1;
  HloInstruction* root =
      b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape({Arr(F32, {8}), Arr(F32, {8})}),
           {first, second}, "t");
  module->AddEntryComputation(b.Build(root));
  std::string text = ToString(*module->entry_computation(), HloPrintOptions::ShortParsable());
  EXPECT_LT(text.find("b = "), text.find("a = ")) << text;
}

TEST(HloPrinterTest, ManyOperandsGetIndexComments) {
  Builder b("e");
  HloInstruction* v = b.Parameter(0, Arr(F32, {}), "v");
  std::vector<HloInstruction*> operands(11, v);
  std::vector<Shape> shapes(11, Arr(F32, {}));
  HloInstruction* t = b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape(shapes), operands, "t");
  EXPECT_EQ(ToString(*t, HloPrintOptions().set_print_operand_shape(true)),
            "%t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[], f32[], f32[], "
            "f32[], /*index=10*/f32[]) tuple(f32[] %v, f32[] %v, f32[] %v, f32[] %v, f32[] %v, "
            "/*index=5*/f32[] %v, f32[] %v, f32[] %v, f32[] %v, f32[] %v, /*index=10*/f32[] %v)");
  EXPECT_EQ(ToString(*t, HloPrintOptions::ShortParsable()),
            "t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[], f32[], f32[], "
            "f32[], /*index=10*/f32[]) tuple(v, v, v, v, v, v, v, v, v, v, v)");
}

TEST(HloPrinterTest, ModuleHeader) {
  HloModuleConfig config;
  config.is_scheduled = true;
  ASSERT_TRUE(config.input_output_alias
                  .SetUpAlias({0}, 0, {}, HloInputOutputAliasConfig::AliasKind::kMustAlias)
                  .ok());
  ASSERT_TRUE(config.input_output_alias.SetUpAlias({1}, 1, {}).ok());
  ASSERT_TRUE(config.buffer_donor.AddBufferDonor(1, {}).ok());
  ASSERT_TRUE(config.buffer_donor.AddBufferDonor(0, {}).ok());
  config.replica_count = 8;
  config.num_partitions = 2;
  config.frontend_attributes = {{"attr", "v"}};
  config.raw_attributes.push_back({"allow_spmd_sharding_propagation_to_output", "{true}"});
  config.raw_attributes.push_back({"alias_passthrough_params", "true"});
  config.raw_attributes.push_back({"custom_field", "7"});
  auto module = std::make_unique<HloModule>("header", config);
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, Arr(F32, {2}), "p0");
  HloInstruction* p1 = b.Parameter(1, Arr(F32, {2}), "p1");
  b.Op(HloOpcode::kTuple, ShapeUtil::MakeTupleShape({Arr(F32, {2}), Arr(F32, {2})}), {p0, p1}, "t");
  module->AddEntryComputation(b.Build());
  std::string text = module->ToString();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule header, is_scheduled=true, input_output_alias={ {0}: (0, {}, must-alias), "
            "{1}: (1, {}) }, buffer_donor={ (0, {}), (1, {}) }, alias_passthrough_params=true, "
            "entry_computation_layout={(f32[2]{0}, f32[2]{0})->(f32[2]{0}, f32[2]{0})}, "
            "allow_spmd_sharding_propagation_to_output={true}, replica_count=8, num_partitions=2, "
            "frontend_attributes={attr=\"v\"}, custom_field=7");

  // An explicit entry layout wins over the entry computation's shapes.
  ProgramShape layout;
  *layout.mutable_parameters() = {ShapeUtil::MakeShapeWithDenseLayout(F32, {2}, {0}),
                                  ShapeUtil::MakeShapeWithDenseLayout(F32, {2}, {0})};
  *layout.mutable_result() = ShapeUtil::MakeTupleShape({Arr(F32, {2}), Arr(F32, {2})});
  module->mutable_config().entry_computation_layout = layout;
  module->mutable_config().raw_attributes.clear();
  module->mutable_config().frontend_attributes.clear();
  Shape tiled = Arr(F32, {2});
  tiled.mutable_layout()->set_memory_space(1);
  *module->mutable_config().entry_computation_layout->mutable_parameters(1) = tiled;
  text = module->ToString();
  EXPECT_NE(text.find("entry_computation_layout={(f32[2]{0}, f32[2]{0:S(1)})->(f32[2]{0}, "
                      "f32[2]{0})}, replica_count=8, num_partitions=2\n\n"),
            std::string::npos)
      << text;
}

TEST(HloPrinterTest, ScheduledModulesKeepStoredOrder) {
  HloModuleConfig config;
  config.is_scheduled = true;
  auto module = std::make_unique<HloModule>("s", config);
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, Arr(F32, {}), "p0");
  HloInstruction* p1 = b.Parameter(1, Arr(F32, {}), "p1");
  b.Op(HloOpcode::kSubtract, Arr(F32, {}), {p1, p0}, "sub");
  module->AddEntryComputation(b.Build());
  EXPECT_EQ(ToString(*module, HloPrintOptions::ShortParsable()),
            "HloModule s, is_scheduled=true, entry_computation_layout={(f32[], f32[])->f32[]}\n"
            "\n"
            "ENTRY main {\n"
            "  p0 = f32[] parameter(0)\n"
            "  p1 = f32[] parameter(1)\n"
            "  ROOT sub = f32[] subtract(p1, p0)\n"
            "}\n"
            "\n");
}

TEST(HloPrinterTest, FusionPrintsItsComputationSeparately) {
  auto module = std::make_unique<HloModule>("f");
  Builder fb("fused_computation");
  HloInstruction* fp0 = fb.Parameter(0, Arr(F32, {4}), "param_0");
  HloInstruction* fp1 = fb.Parameter(1, Arr(F32, {4}), "param_1");
  fb.Op(HloOpcode::kMultiply, Arr(F32, {4}), {fp0, fp1}, "mul");
  HloComputation* fused = module->AddEmbeddedComputation(fb.Build());
  Builder b("main");
  HloInstruction* a = b.Parameter(0, Arr(F32, {4}), "a");
  auto* fusion = b.Make<HloFusionInstruction>(HloOpcode::kFusion, Arr(F32, {4}), {a, a}, "fusion");
  fusion->mutable_attrs()->kind = FusionKind::kOutput;
  fusion->AppendCalledComputation(fused);
  fused->SetFusionInstruction(fusion);
  fusion->mutable_raw_attributes()->push_back({"output_to_operand_aliasing", "{{}: (0, {})}"});
  module->AddEntryComputation(b.Build());
  EXPECT_EQ(module->ToString(),
            "HloModule f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n"
            "\n"
            "%fused_computation (param_0: f32[4], param_1: f32[4]) -> f32[4] {\n"
            "  %param_0 = f32[4]{0} parameter(0)\n"
            "  %param_1 = f32[4]{0} parameter(1)\n"
            "  ROOT %mul = f32[4]{0} multiply(%param_0, %param_1)\n"
            "}\n"
            "\n"
            "ENTRY %main (a: f32[4]) -> f32[4] {\n"
            "  %a = f32[4]{0} parameter(0)\n"
            "  ROOT %fusion = f32[4]{0} fusion(%a, %a), kind=kOutput, "
            "output_to_operand_aliasing={{}: (0, {})}, calls=%fused_computation\n"
            "}\n"
            "\n");
}

// An entry computation calling a custom call asynchronously.
std::unique_ptr<HloModule> AsyncModule(bool single_instruction, std::string thread) {
  auto module = std::make_unique<HloModule>("async");
  Builder wb("wrapped");
  HloInstruction* wp = wb.Parameter(0, Arr(F32, {10}), "wp");
  HloInstruction* body = wp;
  if (!single_instruction) body = wb.Op(HloOpcode::kNegate, Arr(F32, {10}), {wp}, "neg");
  auto* cc =
      wb.Make<HloCustomCallInstruction>(HloOpcode::kCustomCall, Arr(F32, {20}), {body}, "cc");
  cc->mutable_attrs()->custom_call_target = "foo";
  HloComputation* wrapped = module->AddEmbeddedComputation(wb.Build());
  wrapped->SetExecutionThread(thread);
  Builder b("main");
  HloInstruction* p = b.Parameter(0, Arr(F32, {10}), "p0");
  Shape context = ShapeUtil::MakeTupleShape(
      {ShapeUtil::MakeTupleShape({Arr(F32, {10})}), Arr(F32, {20}), Arr(S32, {})});
  auto* start = b.Make<HloAsyncInstruction>(HloOpcode::kAsyncStart, context, {p}, "start");
  start->AppendCalledComputation(wrapped);
  start->mutable_attrs()->async_execution_thread = thread;
  auto* update = b.Make<HloAsyncInstruction>(HloOpcode::kAsyncUpdate, context, {start}, "update");
  b.Make<HloAsyncInstruction>(HloOpcode::kAsyncDone, Arr(F32, {20}), {update}, "done");
  module->AddEntryComputation(b.Build());
  return module;
}

TEST(HloPrinterTest, AsyncOpsUseXlaSyntaxSugar) {
  std::unique_ptr<HloModule> module = AsyncModule(true, "parallel_thread");
  EXPECT_EQ(module->ToString(),
            "HloModule async, entry_computation_layout={(f32[10]{0})->f32[20]{0}}\n"
            "\n"
            "ENTRY %main (p0: f32[10]) -> f32[20] {\n"
            "  %p0 = f32[10]{0} parameter(0)\n"
            "  %start = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(%p0), "
            "async_execution_thread=\"parallel_thread\", custom_call_target=\"foo\"\n"
            "  %update = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-update(%start)\n"
            "  ROOT %done = f32[20]{0} custom-call-done(%update)\n"
            "}\n"
            "\n");
  std::string plain =
      ToString(*module, HloPrintOptions::Canonical().set_syntax_sugar_async_ops(false));
  EXPECT_EQ(LineWith(plain, "%start ="),
            "%start = ((f32[10]{0}), f32[20]{0}, s32[]) async-start(%p0), "
            "async_execution_thread=\"parallel_thread\", calls=%wrapped");
  EXPECT_EQ(LineWith(plain, "%done ="), "ROOT %done = f32[20]{0} async-done(%update)");
  EXPECT_EQ(LineWith(plain, "%wrapped"), "%wrapped (wp: f32[10]) -> f32[20] {");
  EXPECT_NE(plain.find("}, execution_thread=\"parallel_thread\"\n\nENTRY"), std::string::npos)
      << plain;

  // A wrapped computation of more than one instruction is printed and called.
  std::unique_ptr<HloModule> complex = AsyncModule(false, "main");
  std::string text = complex->ToString();
  EXPECT_EQ(LineWith(text, "%start ="),
            "%start = ((f32[10]{0}), f32[20]{0}, s32[]) async-start(%p0), calls=%wrapped");
  EXPECT_EQ(LineWith(text, "%update ="),
            "%update = ((f32[10]{0}), f32[20]{0}, s32[]) async-update(%start)");
  EXPECT_NE(text.find("%wrapped (wp: f32[10]) -> f32[20] {"), std::string::npos) << text;
}

// `text` parsed, printed, parsed and printed again: the canonical text,
// checked to be a fixed point.
std::string CanonicalText(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return "";
  std::string printed = (*module)->ToString();
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseAndReturnUnverifiedModule(printed);
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << printed;
  if (reparsed.ok()) {
    EXPECT_EQ((*reparsed)->ToString(), printed);
  }
  return printed;
}

// The shorthand `op-start` stands for an async-start whose wrapped op the
// parser rebuilds from the start alone; an async chain it would rebuild
// differently prints in full, so that the text reads back the same.
TEST(HloPrinterTest, AsyncSugarOnlyWhereTheParserRebuildsTheSameOps) {
  constexpr absl::string_view kWrapped = R"(HloModule m
w {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo"%s
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = ((f32[4]), f32[4], u32[]) async-start(a), calls=w%s
  %s
  ROOT d = f32[4] async-done(%s)
})";
  auto module_text = [&](absl::string_view root_attrs, absl::string_view start_attrs,
                         absl::string_view update, absl::string_view done_operand) {
    return absl::StrFormat(kWrapped, root_attrs, start_attrs, update, done_operand);
  };

  // Nothing that the shorthand loses: printed as custom-call-start.
  std::string text = CanonicalText(module_text("", "", "", "s"));
  EXPECT_EQ(LineWith(text, "%s ="),
            "%s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(%a), "
            "custom_call_target=\"foo\"");

  // The async-start's own output_to_operand_aliasing next to the custom
  // call's: the shorthand would give the call one of them and drop the other.
  text = CanonicalText(module_text(", output_to_operand_aliasing={{}: (0, {})}",
                                   ", output_to_operand_aliasing={{0}: (0, {})}", "", "s"));
  EXPECT_EQ(LineWith(text, "%s ="),
            "%s = ((f32[4]{0}), f32[4]{0}, u32[]) async-start(%a), "
            "output_to_operand_aliasing={{0}: (0, {})}, calls=%w");
  EXPECT_EQ(LineWith(text, "custom-call("),
            "ROOT %c = f32[4]{0} custom-call(%p), custom_call_target=\"foo\", "
            "output_to_operand_aliasing={{}: (0, {})}");

  // The wrapped op's own sharding: the shorthand's sharding is the start's.
  text = CanonicalText(module_text(", sharding={maximal device=1}", "", "", "s"));
  EXPECT_EQ(LineWith(text, "%s ="),
            "%s = ((f32[4]{0}), f32[4]{0}, u32[]) async-start(%a), calls=%w");
  EXPECT_EQ(LineWith(text, "custom-call("),
            "ROOT %c = f32[4]{0} custom-call(%p), custom_call_target=\"foo\", "
            "sharding={maximal device=1}");

  // An async-update that passes one more operand: in the shorthand the
  // custom call (variadic) would take it.
  text =
      CanonicalText(module_text("", "", "u = ((f32[4]), f32[4], u32[]) async-update(s, b)", "u"));
  EXPECT_EQ(LineWith(text, "%u ="), "%u = ((f32[4]{0}), f32[4]{0}, u32[]) async-update(%s, %b)");
  EXPECT_EQ(LineWith(text, "custom-call("),
            "ROOT %c = f32[4]{0} custom-call(%p), custom_call_target=\"foo\"");

  // Operands that the start's state does not list: the shorthand's
  // parameters follow the state, so the explicit form stays, and the
  // shorthand itself is rejected.
  text = CanonicalText(R"(HloModule m
w {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo"
}
ENTRY e {
  a = f32[4] parameter(0)
  s = ((), f32[4], u32[]) async-start(a), calls=w
  ROOT d = f32[4] async-done(s)
})");
  EXPECT_EQ(LineWith(text, "%s ="), "%s = ((), f32[4]{0}, u32[]) async-start(%a), calls=%w");
  absl::StatusOr<std::unique_ptr<HloModule>> shorthand = ParseAndReturnUnverifiedModule(
      R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = ((), f32[4], u32[]) custom-call-start(a), custom_call_target="foo"
  ROOT d = f32[4] custom-call-done(s)
})",
      "m.hlo");
  ASSERT_FALSE(shorthand.ok());
  EXPECT_THAT(std::string(shorthand.status().message()),
              ::testing::HasSubstr("m.hlo:4:27: error: async-start has 1 operands, but its state "
                                   "lists 0 async operands: ()"));
}

TEST(HloPrinterTest, UnreachableComputationsAndThreads) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  b.Parameter(0, Arr(F32, {}), "p");
  module->AddEntryComputation(b.Build());
  module->AddEmbeddedComputation(AddComputation("dead"));
  // XLA prints every computation nobody calls in stored order: the entry
  // first here, since it was added first.
  std::string text = module->ToString();
  EXPECT_LT(text.find("ENTRY %main"), text.find("%dead ("));
  EXPECT_EQ(text.substr(text.size() - 3), "}\n\n");
}

TEST(HloPrinterTest, StringsReadBackWhateverTheyHold) {
  std::unique_ptr<HloModule> module = AsyncModule(false, "odd \"thread\"\n");
  HloInstruction* root = module->entry_computation()->root_instruction();
  OpMetadata metadata;
  metadata.set_op_name("a\\b");
  metadata.set_scheduling_name("s\"1");
  root->set_metadata(metadata);
  root->set_frontend_attributes({{"k", "v\"}"}});
  root->set_raw_backend_config_string("{\"unclosed\": \"}");
  std::string printed = module->ToString();
  EXPECT_NE(printed.find("async_execution_thread=\"odd \\\"thread\\\"\\n\""), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("metadata={op_name=\"a\\\\b\" scheduling_name=\"s\\\"1\"}"),
            std::string::npos)
      << printed;
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseAndReturnUnverifiedModule(printed);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << printed;
  EXPECT_EQ((*reparsed)->ToString(), printed);
  EXPECT_EQ((*reparsed)->entry_computation()->root_instruction()->raw_backend_config_string(),
            "{\"unclosed\": \"}");
}

}  // namespace
}  // namespace axle
