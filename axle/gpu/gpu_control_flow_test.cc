//===- gpu_control_flow_test.cc - Loops and conditionals on a CUDA device ---===//
//
// Without a device: while loops with known trip counts run their body
// alone (from the pattern or XLA's backend_config), body root leaves are
// written into the loop state in place where nothing reads the old value,
// conditionals on constant selectors are their branch. On a GPU: loops
// (swapping state leaves, data-dependent, counted, nested, in place) and
// conditionals on an index and a pred, compared with the interpreter.
// Skipped, with a message, where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/gpu_modules_test_util.h"
#include "axle/gpu/gpu_thunks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using test::MakeInput;
using ::testing::HasSubstr;

// Loops and conditionals kept as written (not unrolled, not made selects:
// gpu_graph_test.cc tests those passes), optimized or as given.
GpuPrepareOptions KeepControlFlow(bool run_backend_only) {
  GpuPrepareOptions prepare;
  prepare.run_backend_only = run_backend_only;
  prepare.unroll_loops = false;
  prepare.select_conditionals = false;
  return prepare;
}

// For the device tests: AXLE_GPU_UNROLL and AXLE_GPU_SELECT_CONDITIONALS
// set to 0 while it lives (`keep`), else to 1, so the loop and conditional
// thunks run on the device as well as what the unroller and selects make of
// them.
class ScopedKeepControlFlow {
 public:
  explicit ScopedKeepControlFlow(bool keep) {
    setenv("AXLE_GPU_UNROLL", keep ? "0" : "1", 1);
    setenv("AXLE_GPU_SELECT_CONDITIONALS", keep ? "0" : "1", 1);
  }
  ~ScopedKeepControlFlow() {
    unsetenv("AXLE_GPU_UNROLL");
    unsetenv("AXLE_GPU_SELECT_CONDITIONALS");
  }
  ScopedKeepControlFlow(const ScopedKeepControlFlow&) = delete;
  ScopedKeepControlFlow& operator=(const ScopedKeepControlFlow&) = delete;
};

const std::string kWhileSwap = test::WhileSwapModule(test::LoopResult::kState);

constexpr char kWhileDataDependent[] = R"(
HloModule loop
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (f32[64], s32[]) parameter(0)
  x = f32[64] get-tuple-element(s), index=0
  z = f32[] constant(0)
  sum = f32[] reduce(x, z), dimensions={0}, to_apply=add
  bound = f32[] constant(100000)
  ROOT lt = pred[] compare(sum, bound), direction=LT
}
body {
  s = (f32[64], s32[]) parameter(0)
  x = f32[64] get-tuple-element(s), index=0
  two = f32[] constant(2)
  b = f32[64] broadcast(two), dimensions={}
  d = f32[64] multiply(x, b)
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  n1 = s32[] add(n, one)
  ROOT t = (f32[64], s32[]) tuple(d, n1)
}
ENTRY e {
  x = f32[64] parameter(0)
  a = f32[64] abs(x)
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  p = f32[64] add(a, ob)
  zero = s32[] constant(0)
  t = (f32[64], s32[]) tuple(p, zero)
  ROOT w = (f32[64], s32[]) while(t), condition=cond, body=body
})";

constexpr char kConditional[] = R"(
HloModule branches
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
b2 {
  ROOT p = f32[8] parameter(0)
}
t {
  p = f32[8] parameter(0)
  c = f32[] constant(3)
  b = f32[8] broadcast(c), dimensions={}
  ROOT a = f32[8] add(p, b)
}
f {
  ROOT p = f32[8] parameter(0)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[8] parameter(1)
  q = pred[] parameter(2)
  c = f32[8] conditional(i, x, x, x), branch_computations={b0, b1, b2}
  d = f32[8] conditional(q, c, x), true_computation=t, false_computation=f
  ROOT m = (f32[8], f32[8]) tuple(c, d)
})";

// A counted loop whose induction variable is state element 1: i = INIT,
// i += STEP while i DIR BOUND; a and b change each trip.
constexpr char kCountedLoop[] = R"(
HloModule counted
cond {
  s = (f32[16], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] constant(BOUND)
  ROOT c = pred[] compare(i, n), direction=DIR
}
body {
  s = (f32[16], s32[], f32[16]) parameter(0)
  a = f32[16] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
  step = s32[] constant(STEP)
  i1 = s32[] add(i, step)
  ab = f32[16] add(a, b)
  half = f32[] constant(0.5)
  hb = f32[16] broadcast(half), dimensions={}
  bh = f32[16] multiply(b, hb)
  ROOT t = (f32[16], s32[], f32[16]) tuple(ab, i1, bh)
}
ENTRY e {
  init = s32[] constant(INIT)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (f32[16], s32[], f32[16]) tuple(x, init, y)
  ROOT w = (f32[16], s32[], f32[16]) while(t), condition=cond, body=body
})";

struct CountedLoopCase {
  const char* name;
  int init;
  int bound;
  int step;
  const char* direction;
  int64_t trips;
};
constexpr CountedLoopCase kCountedLoopCases[] = {
    {"0 trips", 0, 0, 1, "LT", 0},
    {"1 trip", 0, 1, 1, "LT", 1},
    {"7 trips", 2, 23, 3, "LT", 7},
    {"7 trips down", 7, 0, -1, "GT", 7},
};

std::string CountedLoop(const CountedLoopCase& c) {
  return absl::StrReplaceAll(kCountedLoop, {{"INIT", absl::StrCat(c.init)},
                                            {"BOUND", absl::StrCat(c.bound)},
                                            {"STEP", absl::StrCat(c.step)},
                                            {"DIR", c.direction}});
}

// A loop of 3 trips inside a loop of 4.
constexpr char kNestedLoops[] = R"(
HloModule nested
inner_cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
inner_body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = f32[] constant(0.75)
  kb = f32[16] broadcast(k), dimensions={}
  y = f32[16] multiply(x, kb)
  c = f32[] constant(0.25)
  cb = f32[16] broadcast(c), dimensions={}
  z = f32[16] add(y, cb)
  ROOT t = (s32[], f32[16]) tuple(i1, z)
}
outer_cond {
  s = (s32[], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(j, n), direction=LT
}
outer_body {
  s = (s32[], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  it = (s32[], f32[16]) tuple(zero, x)
  w = (s32[], f32[16]) while(it), condition=inner_cond, body=inner_body
  x1 = f32[16] get-tuple-element(w), index=1
  x2 = f32[16] sine(x1)
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  ROOT t = (s32[], f32[16]) tuple(j1, x2)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  t = (s32[], f32[16]) tuple(zero, x)
  ROOT w = (s32[], f32[16]) while(t), condition=outer_cond, body=outer_body
})";

// a' = 2b reads only b, and nothing after it reads a: computed into the
// state in place; b' = b + 1 and i' read their own leaves: copied back.
constexpr char kInPlaceLoop[] = R"(
HloModule in_place
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[16] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  zero = f32[] constant(0)
  sa = f32[] reduce(a, zero), dimensions={0}, to_apply=add
  sab = f32[16] broadcast(sa), dimensions={}
  two = f32[] constant(2)
  tb = f32[16] broadcast(two), dimensions={}
  b2 = f32[16] multiply(b, tb)
  a1 = f32[16] add(b2, sab)
  c1 = f32[] constant(1)
  ob = f32[16] broadcast(c1), dimensions={}
  b1 = f32[16] add(b, ob)
  ROOT t = (s32[], f32[16], f32[16]) tuple(i1, a1, b1)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (s32[], f32[16], f32[16]) tuple(zero, x, y)
  ROOT w = (s32[], f32[16], f32[16]) while(t), condition=cond, body=body
})";

// The body lowers the bound as it raises i (5 trips from (0, 10)): the trip
// count is not a constant's, so the predicate is read each trip.
constexpr char kBoundModifiedLoop[] = R"(
HloModule moving_bound
cond {
  s = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  n1 = s32[] subtract(n, one)
  y = f32[16] cosine(x)
  ROOT t = (s32[], s32[], f32[16]) tuple(i1, n1, y)
}
ENTRY e {
  zero = s32[] constant(0)
  ten = s32[] constant(10)
  x = f32[16] parameter(0)
  t = (s32[], s32[], f32[16]) tuple(zero, ten, x)
  ROOT w = (s32[], s32[], f32[16]) while(t), condition=cond, body=body
})";

// Conditionals on constant selectors (in range, out of range, a pred).
constexpr char kConstantSelectors[] = R"(
HloModule constant_selectors
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  one = s32[] constant(1)
  nine = s32[] constant(9)
  f = pred[] constant(false)
  c = f32[8] conditional(one, x, x), branch_computations={b0, b1}
  d = f32[8] conditional(nine, c, x), branch_computations={b1, b0}
  g = f32[8] conditional(f, d, c), true_computation=b1, false_computation=b0
  ROOT m = (f32[8], f32[8], f32[8]) tuple(c, d, g)
})";

// The device tests' fixture (skipped without a GPU).
class GpuControlFlowTest : public test::GpuExecutableTest {};

TEST(GpuControlFlowModulesTest, ModulesCompileWithoutADevice) {
  const test::TestModule modules[] = {
      {"while swap", kWhileSwap.c_str(), true},
      {"while data dependent", kWhileDataDependent, true},
      {"conditional", kConditional, true},
      {"nested loops", kNestedLoops, true},
      {"bound modified", kBoundModifiedLoop, true},
      {"in place", kInPlaceLoop, true},
      {"constant selectors", kConstantSelectors, true},
  };
  test::ExpectModulesCompileWithoutADevice(modules);
}

// Every while thunk of `sequence` and the sequences nested in it, outer
// loops first.
void CollectLoops(const GpuThunkSequence& sequence, std::vector<const GpuWhileThunk*>& loops) {
  for (const auto& thunk : sequence) {
    if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      loops.push_back(loop);
      CollectLoops(loop->condition(), loops);
      CollectLoops(loop->body(), loops);
    } else if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(thunk.get())) {
      CollectLoops(call->sequence(), loops);
    } else if (const auto* conditional = dynamic_cast<const GpuConditionalThunk*>(thunk.get())) {
      for (const GpuThunkSequence& branch : conditional->branches()) CollectLoops(branch, loops);
    }
  }
}

// The trip count of each while thunk of `text` compiled for CUDA (-1: the
// predicate form), outer loops first.
std::vector<int64_t> LoopTripCounts(const std::string& text, bool run_backend_only,
                                    std::string* program_text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  absl::StatusOr<GpuProgram> program =
      CompileGpuProgram(module->get(), PtxOptions(), KeepControlFlow(run_backend_only));
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  *program_text = GpuProgramToString(*program);
  std::vector<const GpuWhileThunk*> loops;
  CollectLoops(program->thunks, loops);
  std::vector<int64_t> trips;
  for (const GpuWhileThunk* loop : loops) {
    trips.push_back(loop->trip_count().value_or(-1));
    if (loop->trip_count().has_value()) {
      // No condition: nothing computes or reads a predicate.
      EXPECT_TRUE(loop->condition().empty()) << *program_text;
    } else {
      EXPECT_FALSE(loop->condition().empty()) << *program_text;
    }
  }
  return trips;
}

// Without a device: loops whose trip count is a constant's (an induction
// variable anywhere in the state, counting up or down, nested) run their
// body that many times with no condition; with the optimizing passes, loops
// of 0 and 1 trips are gone (while-loop-simplifier); a loop whose body
// moves its bound, or whose predicate depends on data, keeps its condition.
TEST(GpuControlFlowModulesTest, KnownTripCountsRunTheBodyAlone) {
  using ::testing::ElementsAre;
  std::string text;
  for (const CountedLoopCase& c : kCountedLoopCases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(LoopTripCounts(CountedLoop(c), /*run_backend_only=*/true, &text),
                ElementsAre(c.trips))
        << text;
    std::vector<int64_t> optimized = LoopTripCounts(CountedLoop(c), false, &text);
    if (c.trips <= 1) {
      EXPECT_TRUE(optimized.empty()) << text;
    } else {
      EXPECT_THAT(optimized, ElementsAre(c.trips)) << text;
      EXPECT_THAT(text, HasSubstr(absl::StrCat("while trip_count=", c.trips)));
      EXPECT_THAT(text, ::testing::Not(HasSubstr("condition:")));
    }
  }
  for (bool backend_only : {true, false}) {
    SCOPED_TRACE(backend_only ? "run_backend_only" : "optimized");
    EXPECT_THAT(LoopTripCounts(kNestedLoops, backend_only, &text), ElementsAre(4, 3)) << text;
    EXPECT_THAT(LoopTripCounts(kBoundModifiedLoop, backend_only, &text), ElementsAre(-1)) << text;
    EXPECT_THAT(LoopTripCounts(kWhileDataDependent, backend_only, &text), ElementsAre(-1)) << text;
    EXPECT_THAT(LoopTripCounts(kWhileSwap, backend_only, &text), ElementsAre(10)) << text;
  }
}

// A count XLA wrote in the backend_config is taken where the pattern is not
// visible (here: a bound the body moves, so a wrong count would show); a
// condition with side effects is never skipped.
TEST(GpuControlFlowModulesTest, KnownTripCountFromBackendConfig) {
  std::string text = kBoundModifiedLoop;
  const std::string loop = "condition=cond, body=body";
  text.replace(text.find(loop), loop.size(),
               absl::StrCat(loop, R"(, backend_config={"known_trip_count":{"n":"5"}})"));
  std::string program;
  EXPECT_THAT(LoopTripCounts(text, true, &program), ::testing::ElementsAre(5)) << program;
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* w = (*module)->entry_computation()->root_instruction();
  EXPECT_EQ(KnownTripCount(*w), 5);
  HloInstruction* mutable_w = (*module)->entry_computation()->root_instruction();
  for (const char* config : {"", "{}", R"({"known_trip_count":{"n":"-1"}})",
                             R"({"known_trip_count":{}})", R"({"known_trip_count":{"n":"x"}})"}) {
    mutable_w->set_raw_backend_config_string(config);
    EXPECT_EQ(KnownTripCount(*w), std::nullopt) << config;
  }
  mutable_w->set_raw_backend_config_string(R"({"known_trip_count":{"n":7}})");
  EXPECT_EQ(KnownTripCount(*w), 7);
}

// A body's root leaf that a kernel computes after the last read of the
// state leaf it replaces shares that leaf's temporary: no copy back.
TEST(GpuControlFlowModulesTest, BodyRootLeavesWrittenInPlaceWhereNothingReadsTheOldValue) {
  for (bool backend_only : {true, false}) {
    SCOPED_TRACE(backend_only ? "run_backend_only" : "optimized");
    auto module = ParseAndReturnUnverifiedModule(kInPlaceLoop);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program =
        CompileGpuProgram(module->get(), PtxOptions(), KeepControlFlow(backend_only));
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string text = GpuProgramToString(*program);
    std::vector<const GpuWhileThunk*> loops;
    CollectLoops(program->thunks, loops);
    ASSERT_EQ(loops.size(), 1u) << text;
    const auto* copy = dynamic_cast<const GpuCopyThunk*>(loops[0]->body().back().get());
    ASSERT_NE(copy, nullptr) << text;
    // i and b are copied back; a is not (its value is the state's).
    std::vector<int64_t> copied;
    for (const auto& [from, to] : copy->copies()) copied.push_back(to);
    const GpuValue* state_a = nullptr;
    for (const GpuValue& value : program->values) {
      if (value.instruction != nullptr && value.instruction->opcode() == HloOpcode::kWhile &&
          value.index == ShapeIndex({1})) {
        state_a = &value;
      }
    }
    ASSERT_NE(state_a, nullptr) << text;
    EXPECT_EQ(copied.size(), 2u) << text;
    int sharing = 0;
    for (const GpuValue& value : program->values) {
      sharing += value.kind == GpuValue::Kind::kTemporary &&
                 value.temporary == state_a->temporary && &value != state_a;
    }
    EXPECT_EQ(sharing, 1) << text;
  }
}

// Conditionals on constant selectors are their selected branch: no
// conditional thunk, nothing read on the host.
TEST(GpuControlFlowModulesTest, ConstantSelectorsPickTheirBranchAtCompileTime) {
  for (bool backend_only : {true, false}) {
    auto module = ParseAndReturnUnverifiedModule(kConstantSelectors);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program =
        CompileGpuProgram(module->get(), PtxOptions(), KeepControlFlow(backend_only));
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string text = GpuProgramToString(*program);
    EXPECT_THAT(text, ::testing::Not(HasSubstr("conditional"))) << text;
  }
}
TEST_F(GpuControlFlowTest, WhileLoopSwappingStateLeaves) {
  // Fibonacci-like: each iteration (a, b) <- (a + b, a); ten iterations.
  ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5));
}

TEST_F(GpuControlFlowTest, WhileLoopWithDataDependentTripCount) {
  // Doubles x until its sum exceeds the bound: the predicate is computed on
  // the device each iteration.
  ExpectMatchesInterpreter(kWhileDataDependent, ErrorSpec(1e-3, 1e-5));
}

TEST_F(GpuControlFlowTest, LoopsWithKnownTripCounts) {
  ExecutableBuildOptions backend_only;
  backend_only.set_run_backend_only(true);
  for (const bool keep : {false, true}) {
    ScopedKeepControlFlow scoped(keep);
    SCOPED_TRACE(keep ? "loops kept" : "small loops unrolled");
    for (const ExecutableBuildOptions& options : {ExecutableBuildOptions(), backend_only}) {
      SCOPED_TRACE(options.run_backend_only() ? "run_backend_only" : "optimized");
      for (const CountedLoopCase& c : kCountedLoopCases) {
        SCOPED_TRACE(c.name);
        ExpectMatchesInterpreter(CountedLoop(c), ErrorSpec(1e-5, 1e-5), {}, options);
      }
      ExpectMatchesInterpreter(kNestedLoops, ErrorSpec(1e-5, 1e-5), {}, options);
      ExpectMatchesInterpreter(kBoundModifiedLoop, ErrorSpec(1e-5, 1e-5), {}, options);
      ExpectMatchesInterpreter(kInPlaceLoop, ErrorSpec(1e-4, 1e-5), {}, options);
      ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5), {}, options);
      ExpectMatchesInterpreter(kConstantSelectors, ErrorSpec(1e-5, 1e-5), {}, options);
    }
  }
}

TEST_F(GpuControlFlowTest, LoopsAndConditionalsAsGiven) {
  // run_backend_only: no inlining, no fusion.
  ExecutableBuildOptions backend_only;
  backend_only.set_run_backend_only(true);
  ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5), {}, backend_only);
  ExpectMatchesInterpreter(kConditional, ErrorSpec(1e-5, 1e-5), {}, backend_only);
}

TEST_F(GpuControlFlowTest, ConditionalOnIndexAndPred) {
  const std::string text = kConditional;
  const Shape f8 = ShapeUtil::MakeShape(F32, {8});
  for (int32_t index : {0, 1, 2, 7, -1}) {
    for (bool pred : {true, false}) {
      for (const bool keep : {false, true}) {
        ScopedKeepControlFlow scoped(keep);
        SCOPED_TRACE(absl::StrCat("index ", index, ", pred ", pred, keep ? ", kept" : ", selects"));
        std::vector<Literal> arguments;
        arguments.push_back(LiteralUtil::CreateR0<int32_t>(index));
        arguments.push_back(MakeInput(f8, 3));
        arguments.push_back(LiteralUtil::CreateR0<bool>(pred));
        ExpectMatchesInterpreter(text, ErrorSpec(1e-5, 1e-5), std::move(arguments));
      }
    }
  }
}

}  // namespace
}  // namespace axle::gpu
