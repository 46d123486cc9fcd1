//===- gpu_graph_test.cc - CUDA graph plans, loop unrolling, graph runs ----===//
//
// Without a device: which thunk runs the executable records into CUDA
// graphs (GpuGraphPlan: kernels and copies together, a predicate loop or a
// conditional ending a segment and its sequences planned on their own, a
// known-trip-count loop captured whole or by its body, nothing with graphs
// off); which loops the GPU pipeline unrolls (GpuWhileLoopUnroller: small
// counted loops, not past XLA's limits), that unrolled modules compute what
// the loops did (on the interpreter), and what unrolling leaves of the JAX
// programs' loops. On a GPU: modules run with graphs and without give
// identical results, with fresh and reused buffers (graphs re-recorded for
// new addresses). Skipped, with a message, where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_graph.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/gpu/gpu_conditional_to_select.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/gpu_modules_test_util.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/gpu/gpu_while_unroller.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using test::MakeInput;
using ::testing::HasSubstr;

// Two kernels: the reduce is a kernel of its own.
constexpr char kTwoKernels[] = R"(
HloModule two
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,16] parameter(0)
  zero = f32[] constant(0)
  r = f32[16] reduce(x, zero), dimensions={0}, to_apply=add
  b = f32[64,16] broadcast(r), dimensions={1}
  ROOT o = f32[64,16] add(x, b)
})";

constexpr char kOneKernel[] = R"(
HloModule one
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  a = f32[1000] add(x, y)
  ROOT m = f32[1000] multiply(a, x)
})";

// Counted: 10 trips; the body swaps state leaves and reduces one.
const std::string kCounted = test::CountedSwapLoop(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
})",
                                                   R"(
  ab = f32[16] add(a, b)
  h = f32[16] constant({0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5})
  abh = f32[16] multiply(ab, h)
  zero = f32[] constant(0)
  total = f32[] reduce(a, zero), dimensions={0}, to_apply=add
  tiny = f32[] constant(0.001)
  t1 = f32[] multiply(total, tiny)
  tb = f32[16] broadcast(t1), dimensions={}
  next = f32[16] add(abh, tb)
)",
                                                   test::LoopResult::kNext);

// A scan-like loop: 100 trips, a dynamic slice of the input per step.
constexpr char kLongScan[] = R"(
HloModule scan
cond {
  s = (s32[], f32[8], f32[100,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8], f32[100,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[8] get-tuple-element(s), index=1
  xs = f32[100,8] get-tuple-element(s), index=2
  zero = s32[] constant(0)
  row = f32[1,8] dynamic-slice(xs, i, zero), dynamic_slice_sizes={1,8}
  r = f32[8] reshape(row)
  e = f32[8] exponential(r)
  acc1 = f32[8] add(acc, e)
  ROOT t = (s32[], f32[8], f32[100,8]) tuple(i1, acc1, xs)
}
ENTRY e {
  zero = s32[] constant(0)
  init = f32[8] parameter(0)
  xs = f32[100,8] parameter(1)
  t = (s32[], f32[8], f32[100,8]) tuple(zero, init, xs)
  w = (s32[], f32[8], f32[100,8]) while(t), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})";

// Runs until the sum passes a bound: a predicate read on the host.
constexpr char kDataDependent[] = R"(
HloModule data
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (f32[64], f32[]) parameter(0)
  total = f32[] get-tuple-element(s), index=1
  bound = f32[] constant(1000)
  ROOT lt = pred[] compare(total, bound), direction=LT
}
body {
  s = (f32[64], f32[]) parameter(0)
  v = f32[64] get-tuple-element(s), index=0
  a = f32[64] abs(v)
  one = f32[] constant(1)
  ones = f32[64] broadcast(one), dimensions={}
  v1 = f32[64] add(a, ones)
  zero = f32[] constant(0)
  total = f32[] reduce(v1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[64], f32[]) tuple(v1, total)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = f32[] constant(0)
  t = (f32[64], f32[]) tuple(x, zero)
  w = (f32[64], f32[]) while(t), condition=cond, body=body
  ROOT r = f32[64] get-tuple-element(w), index=0
})";

constexpr char kConditional[] = R"(
HloModule cond
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
left {
  p = f32[16,16] parameter(0)
  zero = f32[] constant(0)
  r = f32[16] reduce(p, zero), dimensions={0}, to_apply=add
  b = f32[16,16] broadcast(r), dimensions={1}
  ROOT o = f32[16,16] subtract(p, b)
}
right {
  p = f32[16,16] parameter(0)
  ROOT n = f32[16,16] negate(p)
}
ENTRY e {
  x = f32[16,16] parameter(0)
  k = s32[] parameter(1)
  ROOT c = f32[16,16] conditional(k, x, x), branch_computations={left, right}
})";

// Compiled with loops unrolled or not, conditionals kept (or made selects
// with `select`).
absl::StatusOr<GpuProgram> CompileText(const std::string& text, bool unroll,
                                       std::unique_ptr<HloModule>* kept = nullptr,
                                       bool select = false) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  GpuPrepareOptions prepare;
  prepare.unroll_loops = unroll;
  prepare.select_conditionals = select;
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions(), prepare);
  if (kept != nullptr) *kept = std::move(module).value();
  return program;
}

template <typename T>
const T* FindThunk(const GpuThunkSequence& sequence) {
  for (const auto& thunk : sequence) {
    if (const auto* found = dynamic_cast<const T*>(thunk.get())) return found;
  }
  return nullptr;
}

int64_t CountWhiles(const HloModule& module) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      count += instruction->opcode() == HloOpcode::kWhile;
    }
  }
  return count;
}

TEST(GpuGraphPlanTest, KernelsTogetherAreOneCapturedSegment) {
  auto program = CompileText(kTwoKernels, true);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_GE(program->thunks.size(), 2u) << GpuProgramToString(*program);
  const GpuGraphPlan plan = GpuGraphPlan::Make(program->thunks, GpuGraphOptions());
  EXPECT_EQ(plan.captured_segments(), 1) << plan.ToString(program->thunks);
  const GpuSequencePlan* top = plan.Find(program->thunks);
  ASSERT_NE(top, nullptr);
  ASSERT_EQ(top->segments.size(), 1u);
  EXPECT_TRUE(top->segments[0].captured);
  EXPECT_EQ(top->segments[0].end - top->segments[0].begin, program->thunks.size());
  // Every value the kernels touch is part of the graph's key.
  EXPECT_FALSE(top->segments[0].values.empty());
  EXPECT_THAT(plan.ToString(program->thunks), HasSubstr("graph of "));
}

TEST(GpuGraphPlanTest, OneKernelAndGraphsOffCaptureNothing) {
  auto one = CompileText(kOneKernel, true);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(GpuGraphPlan::Make(one->thunks, GpuGraphOptions()).captured_segments(), 0);
  auto two = CompileText(kTwoKernels, true);
  ASSERT_TRUE(two.ok()) << two.status();
  GpuGraphOptions off;
  off.enabled = false;
  const GpuGraphPlan plan = GpuGraphPlan::Make(two->thunks, off);
  EXPECT_FALSE(plan.enabled());
  EXPECT_EQ(plan.captured_segments(), 0);
  EXPECT_EQ(plan.Find(two->thunks), nullptr);
  EXPECT_EQ(plan.ToString(two->thunks), "graphs off\n");
}

TEST(GpuGraphPlanTest, EnvironmentTurnsGraphsOff) {
  setenv("AXLE_GPU_GRAPHS", "0", 1);
  EXPECT_FALSE(GpuGraphOptionsFromEnv().enabled);
  setenv("AXLE_GPU_GRAPHS", "1", 1);
  EXPECT_TRUE(GpuGraphOptionsFromEnv().enabled);
  unsetenv("AXLE_GPU_GRAPHS");
  EXPECT_TRUE(GpuGraphOptionsFromEnv().enabled);
}

TEST(GpuGraphPlanTest, PredicateLoopEndsSegmentsAndItsBodyIsCaptured) {
  auto program = CompileText(kDataDependent, true);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto* loop = FindThunk<GpuWhileThunk>(program->thunks);
  ASSERT_NE(loop, nullptr) << GpuProgramToString(*program);
  ASSERT_FALSE(loop->trip_count().has_value());
  EXPECT_FALSE(loop->CapturableInGraph());
  EXPECT_FALSE(CapturedLaunches(*loop).has_value());
  const GpuGraphPlan plan = GpuGraphPlan::Make(program->thunks, GpuGraphOptions());
  const std::string text = plan.ToString(program->thunks);
  const GpuSequencePlan* top = plan.Find(program->thunks);
  ASSERT_NE(top, nullptr) << text;
  for (const GpuSequencePlan::Segment& segment : top->segments) {
    for (size_t i = segment.begin; i < segment.end; ++i) {
      if (program->thunks[i].get() == loop) {
        EXPECT_FALSE(segment.captured) << text;
      }
    }
  }
  // The body (kernels and the state copies) is one graph per iteration.
  const GpuSequencePlan* body = plan.Find(loop->body());
  ASSERT_NE(body, nullptr) << text;
  ASSERT_EQ(body->segments.size(), 1u) << text;
  EXPECT_TRUE(body->segments[0].captured) << text;
  EXPECT_GE(body->segments[0].launches, 2) << text;
}

TEST(GpuGraphPlanTest, CountedLoopIsCapturedWholeOrByItsBody) {
  auto program = CompileText(kCounted, /*unroll=*/false);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto* loop = FindThunk<GpuWhileThunk>(program->thunks);
  ASSERT_NE(loop, nullptr) << GpuProgramToString(*program);
  ASSERT_EQ(loop->trip_count(), 10);
  EXPECT_TRUE(loop->CapturableInGraph());
  std::optional<int64_t> body_launches = 0;
  for (const auto& thunk : loop->body()) *body_launches += *CapturedLaunches(*thunk);
  EXPECT_EQ(CapturedLaunches(*loop),
            static_cast<int64_t>(loop->init().copies().size()) + 10 * *body_launches);
  // Whole: the loop is inside a captured top-level segment.
  const GpuGraphPlan whole = GpuGraphPlan::Make(program->thunks, GpuGraphOptions());
  EXPECT_GE(whole.captured_segments(), 1) << whole.ToString(program->thunks);
  EXPECT_EQ(whole.Find(loop->body()), nullptr);
  // Too many launches for one graph: the body is the graph.
  GpuGraphOptions small;
  small.max_nodes = *body_launches + 1;
  const GpuGraphPlan by_body = GpuGraphPlan::Make(program->thunks, small);
  const GpuSequencePlan* body = by_body.Find(loop->body());
  ASSERT_NE(body, nullptr) << by_body.ToString(program->thunks);
  EXPECT_EQ(body->segments.size(), 1u);
  EXPECT_EQ(body->segments[0].captured, *body_launches >= 2);
}

TEST(GpuGraphPlanTest, ConditionalBranchesArePlannedOnTheirOwn) {
  auto program = CompileText(kConditional, true);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto* conditional = FindThunk<GpuConditionalThunk>(program->thunks);
  ASSERT_NE(conditional, nullptr) << GpuProgramToString(*program);
  EXPECT_FALSE(conditional->CapturableInGraph());
  const GpuGraphPlan plan = GpuGraphPlan::Make(program->thunks, GpuGraphOptions());
  ASSERT_EQ(conditional->branches().size(), 2u);
  const GpuSequencePlan* left = plan.Find(conditional->branches()[0]);
  const GpuSequencePlan* right = plan.Find(conditional->branches()[1]);
  ASSERT_NE(left, nullptr);
  ASSERT_NE(right, nullptr);
  // The reduce and its consumer: a graph; the negate alone: not.
  EXPECT_EQ(left->segments.size(), 1u) << plan.ToString(program->thunks);
  EXPECT_TRUE(left->segments[0].captured) << plan.ToString(program->thunks);
  EXPECT_EQ(plan.captured_segments(), 1) << plan.ToString(program->thunks);
}

TEST(GpuWhileUnrollerTest, SmallCountedLoopsAreUnrolledAndFused) {
  std::unique_ptr<HloModule> module;
  auto program = CompileText(kCounted, true, &module);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(CountWhiles(*module), 0) << module->ToString();
  EXPECT_EQ(FindThunk<GpuWhileThunk>(program->thunks), nullptr) << GpuProgramToString(*program);
  // No state copies: the iterations' values flow from kernel to kernel.
  EXPECT_EQ(FindThunk<GpuCopyThunk>(program->thunks), nullptr) << GpuProgramToString(*program);
  // On by default; AXLE_GPU_UNROLL=0 keeps the loops.
  setenv("AXLE_GPU_UNROLL", "1", 1);
  EXPECT_TRUE(GpuPrepareOptionsFromEnv().unroll_loops);
  setenv("AXLE_GPU_UNROLL", "0", 1);
  EXPECT_FALSE(GpuPrepareOptionsFromEnv().unroll_loops);
  unsetenv("AXLE_GPU_UNROLL");
  EXPECT_TRUE(GpuPrepareOptionsFromEnv().unroll_loops);
  EXPECT_TRUE(GpuPrepareOptionsFromEnv().select_conditionals);
}

TEST(GpuWhileUnrollerTest, LoopsPastTheLimitsAreKept) {
  auto scan = ParseAndReturnUnverifiedModule(kLongScan);
  ASSERT_TRUE(scan.ok()) << scan.status();
  const HloInstruction* loop = (*scan)->entry_computation()->root_instruction()->operand(0);
  ASSERT_EQ(loop->opcode(), HloOpcode::kWhile);
  EXPECT_EQ(UnrollableTripCount(*loop, WhileUnrollLimits()), std::nullopt);  // 100 > 64
  WhileUnrollLimits more;
  more.max_trips = 100;
  EXPECT_EQ(UnrollableTripCount(*loop, more), 100);
  more.max_unrolled_instructions = 100;
  EXPECT_EQ(UnrollableTripCount(*loop, more), std::nullopt);
  auto data = ParseAndReturnUnverifiedModule(kDataDependent);
  ASSERT_TRUE(data.ok()) << data.status();
  const HloInstruction* predicate = (*data)->entry_computation()->root_instruction()->operand(0);
  EXPECT_EQ(UnrollableTripCount(*predicate, WhileUnrollLimits()), std::nullopt);
  GpuWhileLoopUnroller unroller;
  absl::StatusOr<bool> changed = unroller.Run(scan->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountWhiles(**scan), 1);
}

// The unrolled module computes what the loop did (on the interpreter).
TEST(GpuWhileUnrollerTest, UnrolledLoopsComputeWhatTheLoopsDid) {
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  LocalClient* client = *ClientLibrary::GetOrCreateLocalClient(*interpreter);
  for (const std::string& text : {kCounted, std::string(kLongScan)}) {
    auto original = ParseAndReturnUnverifiedModule(text);
    auto unrolled = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(original.ok() && unrolled.ok());
    WhileUnrollLimits limits;
    limits.max_trips = 100;
    limits.max_unrolled_instructions = 100000;
    absl::StatusOr<bool> changed = GpuWhileLoopUnroller(limits).Run(unrolled->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(CountWhiles(**unrolled), 0) << (*unrolled)->ToString();
    std::vector<Literal> results;
    for (auto* module : {&original, &unrolled}) {
      auto executable = client->Compile(std::move(*module).value(), {});
      ASSERT_TRUE(executable.ok()) << executable.status();
      std::vector<ScopedShapedBuffer> buffers;
      std::vector<const ShapedBuffer*> pointers;
      int seed = 1;
      for (const Shape& shape : (*executable)->executable()->parameter_shapes()) {
        buffers.push_back(*client->LiteralToShapedBuffer(MakeInput(shape, seed++), 0));
      }
      pointers.reserve(buffers.size());
      for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
      auto result = (*executable)->Run(pointers, {});
      ASSERT_TRUE(result.ok()) << result.status();
      auto literal = client->ShapedBufferToLiteral(*result);
      ASSERT_TRUE(literal.ok()) << literal.status();
      results.push_back(std::move(literal).value());
    }
    EXPECT_TRUE(LiteralsNear(results[0], results[1], ErrorSpec(1e-6, 1e-6)).ok())
        << results[0].ToString() << "\nvs\n"
        << results[1].ToString();
  }
}

TEST(GpuConditionalToSelectTest, CheapConditionalsBecomeSelects) {
  std::unique_ptr<HloModule> module;
  auto program = CompileText(kConditional, true, &module, /*select=*/true);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(FindThunk<GpuConditionalThunk>(program->thunks), nullptr)
      << GpuProgramToString(*program);
  // Past the limits: kept.
  auto parsed = ParseAndReturnUnverifiedModule(kConditional);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const HloInstruction* conditional = (*parsed)->entry_computation()->root_instruction();
  EXPECT_TRUE(CheapConditional(*conditional, ConditionalToSelectLimits()));
  ConditionalToSelectLimits few;
  few.max_elements = 100;
  EXPECT_FALSE(CheapConditional(*conditional, few));
  few = ConditionalToSelectLimits();
  few.max_instructions = 4;
  EXPECT_FALSE(CheapConditional(*conditional, few));
}

// Selects compute what the conditionals did (on the interpreter): an s32
// index in and out of range, a pred, tuple results.
TEST(GpuConditionalToSelectTest, SelectsComputeWhatTheConditionalsDid) {
  constexpr char kTupleOnPred[] = R"(
HloModule tuple
left {
  p = (f32[8], s32[]) parameter(0)
  a = f32[8] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  e = f32[8] exponential(a)
  ROOT t = (f32[8], s32[]) tuple(e, n)
}
right {
  p = (f32[8], s32[]) parameter(0)
  a = f32[8] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  m = s32[] negate(n)
  ROOT t = (f32[8], s32[]) tuple(a, m)
}
ENTRY e {
  b = pred[] parameter(0)
  x = f32[8] parameter(1)
  k = s32[] parameter(2)
  t = (f32[8], s32[]) tuple(x, k)
  ROOT c = (f32[8], s32[]) conditional(b, t, t), true_computation=left, false_computation=right
})";
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  LocalClient* client = *ClientLibrary::GetOrCreateLocalClient(*interpreter);
  for (const char* text : {kConditional, kTupleOnPred}) {
    for (int selector : {-1, 0, 1, 2}) {
      std::vector<Literal> results;
      for (const bool select : {false, true}) {
        auto module = ParseAndReturnUnverifiedModule(text);
        ASSERT_TRUE(module.ok()) << module.status();
        if (select) {
          absl::StatusOr<bool> changed = GpuConditionalToSelect().Run(module->get());
          ASSERT_TRUE(changed.ok()) << changed.status();
          EXPECT_TRUE(*changed) << text;
        }
        auto executable = client->Compile(std::move(module).value(), {});
        ASSERT_TRUE(executable.ok()) << executable.status();
        std::vector<ScopedShapedBuffer> buffers;
        int seed = 1;
        for (const Shape& shape : (*executable)->executable()->parameter_shapes()) {
          Literal argument = MakeInput(shape, seed++);
          if (shape.element_type() == S32) argument = LiteralUtil::CreateR0<int32_t>(selector);
          if (shape.element_type() == PRED) argument = LiteralUtil::CreateR0<bool>(selector > 0);
          buffers.push_back(*client->LiteralToShapedBuffer(argument, 0));
        }
        std::vector<const ShapedBuffer*> pointers;
        pointers.reserve(buffers.size());
        for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
        auto result = (*executable)->Run(pointers, {});
        ASSERT_TRUE(result.ok()) << result.status();
        auto literal = client->ShapedBufferToLiteral(*result);
        ASSERT_TRUE(literal.ok()) << literal.status();
        results.push_back(std::move(literal).value());
      }
      EXPECT_TRUE(results[0] == results[1]) << "selector " << selector << "\n"
                                            << results[0].ToString() << "\nvs\n"
                                            << results[1].ToString();
    }
  }
}

// The JAX programs whose loops XLA:GPU unrolls: no loop is left, except
// lstm_scan's, whose body has a dot (kept: faster as a loop on the GPU);
// the kernels and launches (with and without unrolling) are printed, and
// threefry_random (a split and three random arrays, 20 rounds each) is a
// kernel for the split's keys and one per array.
TEST(GpuWhileUnrollerTest, JaxLoopsAreUnrolled) {
  int examined = 0;
  for (const std::string name : {"lstm_scan", "fori_cond_dynamic", "threefry_random"}) {
    std::ifstream file(absl::StrCat(AXLE_GPU_JAX_DIR, "/", name, ".hlo"));
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    std::string line = name + ":";
    for (const bool unroll : {false, true}) {
      std::unique_ptr<HloModule> module;
      auto program = CompileText(text.str(), unroll, &module, /*select=*/unroll);
      ASSERT_TRUE(program.ok()) << name << ": " << program.status();
      if (unroll) {
        if (name == "lstm_scan") {
          EXPECT_GT(CountWhiles(*module), 0) << name;
        } else {
          EXPECT_EQ(CountWhiles(*module), 0) << name;
        }
        // The split's keys in four one-block kernels (the fusions'
        // code-duplication bound keeps them apart), then one per array.
        if (name == "threefry_random") {
          EXPECT_LE(program->thunks.size(), 7u) << GpuProgramToString(*program);
        }
      }
      const GpuGraphPlan plan = GpuGraphPlan::Make(program->thunks, GpuGraphOptions());
      absl::StrAppend(&line, unroll ? " unrolled: " : " loops kept: ", program->thunks.size(),
                      " top-level thunks, ", program->kernels.size(), " kernels, ",
                      plan.captured_segments(), " graph segments of ", plan.captured_launches(),
                      " launches;");
    }
    std::printf("%s\n", line.c_str());
    ++examined;
  }
  if (examined == 0) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
}

// On a GPU: with graphs and without, the same results, bit for bit, over
// runs with fresh argument buffers (new addresses: graphs recorded again)
// and repeated ones (graphs replayed).
class GpuGraphDeviceTest : public test::GpuExecutableTest {
 protected:
  absl::StatusOr<std::unique_ptr<LocalExecutable>> CompileWith(const std::string& text, bool graphs,
                                                               bool unroll) {
    setenv("AXLE_GPU_GRAPHS", graphs ? "1" : "0", 1);
    setenv("AXLE_GPU_UNROLL", unroll ? "1" : "0", 1);
    setenv("AXLE_GPU_SELECT_CONDITIONALS", unroll ? "1" : "0", 1);
    auto executable = CompileFor(client_, text);
    unsetenv("AXLE_GPU_GRAPHS");
    unsetenv("AXLE_GPU_UNROLL");
    unsetenv("AXLE_GPU_SELECT_CONDITIONALS");
    return executable;
  }
};

TEST_F(GpuGraphDeviceTest, GraphsAndDirectRunsGiveIdenticalResults) {
  const std::vector<std::string> texts = {kTwoKernels, kCounted, kLongScan, kDataDependent,
                                          kConditional};
  for (const std::string& text : texts) {
    for (const bool unroll : {false, true}) {
      SCOPED_TRACE(absl::StrCat(text, unroll ? " unrolled" : " loops kept"));
      auto direct = CompileWith(text, false, unroll);
      ASSERT_TRUE(direct.ok()) << direct.status();
      auto graphs = CompileWith(text, true, unroll);
      ASSERT_TRUE(graphs.ok()) << graphs.status();
      const auto* executable = dynamic_cast<const GpuExecutable*>((*graphs)->executable());
      ASSERT_NE(executable, nullptr);
      for (int seed = 1; seed <= 3; ++seed) {
        std::vector<Literal> arguments;
        for (const Shape& shape : (*graphs)->executable()->parameter_shapes()) {
          Literal argument = MakeInput(shape, seed);
          if (shape.element_type() == S32 && shape.rank() == 0) {
            argument =
                LiteralUtil::CreateR0<int32_t>(seed % 3 - 1);  // a branch, in and out of range
          }
          arguments.push_back(std::move(argument));
        }
        auto expected = RunWith(client_, **direct, arguments);
        ASSERT_TRUE(expected.ok()) << expected.status();
        for (int repeat = 0; repeat < 2; ++repeat) {
          auto actual = RunWith(client_, **graphs, arguments);
          ASSERT_TRUE(actual.ok()) << actual.status();
          EXPECT_TRUE(*expected == *actual)
              << "seed " << seed << "\n"
              << expected->ToString() << "\nvs\n"
              << actual->ToString() << "\n"
              << executable->graph_plan().ToString(executable->program().thunks);
        }
      }
      if (executable->graph_plan().captured_segments() > 0) {
        EXPECT_GT(executable->graphs_launched(), 0)
            << executable->graph_plan().ToString(executable->program().thunks);
      }
      std::printf("%s: %lld graph segments, %lld recordings, %lld graph launches\n",
                  (*graphs)->executable()->module().name().c_str(),
                  static_cast<long long>(executable->graph_plan().captured_segments()),
                  static_cast<long long>(executable->graphs_recorded()),
                  static_cast<long long>(executable->graphs_launched()));
    }
  }
}

// AXLE_PROFILE: the report names the segments run, with device times; the
// first run on a stream apart.
TEST_F(GpuGraphDeviceTest, ProfileReportsSegments) {
  setenv("AXLE_PROFILE", "1", 1);
  auto compiled = CompileWith(kDataDependent, true, true);
  unsetenv("AXLE_PROFILE");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto* executable = dynamic_cast<const GpuExecutable*>((*compiled)->executable());
  ASSERT_NE(executable, nullptr);
  std::vector<Literal> arguments = {MakeInput(ShapeUtil::MakeShape(F32, {64}), 1)};
  // The first run (on the executable's one stream) is reported apart.
  auto first = RunWith(client_, **compiled, arguments);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(executable->ProfileReport(), HasSubstr("1 runs"));
  for (int run = 0; run < 2; ++run) {
    auto result = RunWith(client_, **compiled, arguments);
    ASSERT_TRUE(result.ok()) << result.status();
  }
  const std::string report = executable->ProfileReport();
  std::printf("%s", report.c_str());
  EXPECT_THAT(report, HasSubstr("AXLE_PROFILE"));
  EXPECT_THAT(report, HasSubstr("2 runs"));
  EXPECT_THAT(report, HasSubstr("not in the table: the first run on each of 1 streams"));
  EXPECT_THAT(report, HasSubstr("inside control flow:"));
  EXPECT_THAT(report, HasSubstr("graph of "));
}

}  // namespace
}  // namespace axle::gpu
