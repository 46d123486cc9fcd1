// while, conditional and call on the `cpu` platform: results agree with the
// interpreter (and, where easy to state, with values computed by hand);
// loop state swaps, nested loops, out-of-range branch indices, zero-trip
// loops, an executable reused sequentially and from several threads, and
// the profile of the thunks inside a loop.
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::ExpectCpuAgrees;
using testing::RunExecutable;
using testing::RunOn;

Literal Ramp(const Shape& shape, float scale, float offset) {
  Literal literal(shape);
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = scale * static_cast<float>(i % 37) + offset;
  return literal;
}

// A module compiled once for cpu and for the interpreter; Run checks that
// both agree exactly and returns the cpu result.
class Compiled {
 public:
  explicit Compiled(absl::string_view text) {
    auto cpu = CompileOn("cpu", text);
    EXPECT_TRUE(cpu.ok()) << cpu.status();
    if (cpu.ok()) cpu_ = std::move(*cpu);
    auto reference = CompileOn("interpreter", text);
    EXPECT_TRUE(reference.ok()) << reference.status();
    if (reference.ok()) reference_ = std::move(*reference);
  }

  Literal Run(const std::vector<Literal>& arguments) const {
    if (cpu_ == nullptr || reference_ == nullptr) return Literal();
    absl::StatusOr<Literal> cpu = RunExecutable("cpu", *cpu_, arguments);
    EXPECT_TRUE(cpu.ok()) << cpu.status();
    if (!cpu.ok()) return Literal();
    absl::StatusOr<Literal> reference = RunExecutable("interpreter", *reference_, arguments);
    EXPECT_TRUE(reference.ok()) << reference.status();
    if (reference.ok()) {
      EXPECT_EQ(*cpu, *reference) << *cpu << "\nvs\n" << *reference;
    }
    return std::move(*cpu);
  }

 private:
  std::unique_ptr<LocalExecutable> cpu_;
  std::unique_ptr<LocalExecutable> reference_;
};

Literal RunAndCompare(absl::string_view text, const std::vector<Literal>& arguments) {
  return Compiled(text).Run(arguments);
}

constexpr absl::string_view kCountingLoop = R"(
HloModule counting
cond {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  n = s32[] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  sum = s32[] add(acc, i)
  ROOT t = (s32[], s32[], s32[]) tuple(next, sum, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(zero, zero, n)
  w = (s32[], s32[], s32[]) while(init), condition=cond, body=body
  ROOT acc = s32[] get-tuple-element(w), index=1
})";

TEST(ControlFlowTest, CountingLoop) {
  Literal result = RunAndCompare(kCountingLoop, {LiteralUtil::CreateR0<int32_t>(10)});
  EXPECT_EQ(result, LiteralUtil::CreateR0<int32_t>(45));
}

// AXLE_PROFILE times the thunks a loop runs too: per run, each body thunk
// ran 10 times and each condition thunk 11, listed under the loop's name.
TEST(ControlFlowTest, ProfileShowsTheThunksInsideALoop) {
  setenv("AXLE_PROFILE", "1", 1);
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable = CompileOn("cpu", kCountingLoop);
  unsetenv("AXLE_PROFILE");
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>((*executable)->executable());
  ASSERT_NE(cpu, nullptr);
  for (int run = 0; run < 2; ++run) {
    std::vector<Literal> arguments;
    arguments.push_back(LiteralUtil::CreateR0<int32_t>(10));
    absl::StatusOr<Literal> result = RunExecutable("cpu", **executable, arguments);
    ASSERT_TRUE(result.ok()) << result.status();
  }
  const std::string report = cpu->ProfileReport();
  EXPECT_NE(report.find(": 2 runs, "), std::string::npos) << report;
  EXPECT_NE(report.find("inside control flow:\n"), std::string::npos) << report;
  EXPECT_NE(report.find(" 10.0 calls  w/"), std::string::npos) << report;
  EXPECT_NE(report.find(" 11.0 calls  w/"), std::string::npos) << report;
}

// Loop state leaves the body passes through unchanged and that start as a
// parameter or a constant (an RNN's weights) are read in place: they get no
// temporary of the loop (no copy when the loop starts); the leaves the body
// updates do. The loop also returns a passed-through parameter.
TEST(ControlFlowTest, PassedThroughParametersAndConstantsAreNotCopied) {
  constexpr absl::string_view kText = R"(
HloModule passthrough
cond {
  p = (s32[], f32[8], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[8] get-tuple-element(p), index=1
  w = f32[8] get-tuple-element(p), index=2
  c = f32[8] get-tuple-element(p), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  m = f32[8] multiply(h, c)
  h2 = f32[8] add(m, w)
  ROOT t = (s32[], f32[8], f32[8], f32[8]) tuple(next, h2, w, c)
}
ENTRY e {
  w = f32[8] parameter(0)
  h0 = f32[8] parameter(1)
  c = f32[8] constant({0.5, -1, 2, 0.25, 1, -0.5, 3, 0})
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8], f32[8]) tuple(zero, h0, w, c)
  loop = (s32[], f32[8], f32[8], f32[8]) while(init), condition=cond, body=body
  hn = f32[8] get-tuple-element(loop), index=1
  wn = f32[8] get-tuple-element(loop), index=2
  ROOT r = (f32[8], f32[8]) tuple(hn, wn)
})";
  const Shape vector = ShapeUtil::MakeShape(F32, {8});
  std::vector<Literal> arguments;
  arguments.push_back(Ramp(vector, 0.5f, -2));
  arguments.push_back(Ramp(vector, -0.25f, 1));
  RunAndCompare(kText, arguments);
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable = CompileOn("cpu", kText);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>((*executable)->executable());
  ASSERT_NE(cpu, nullptr);
  const std::string assignment = cpu->BufferAssignmentText();
  // (The compiler's clone names the loop %loop.1.)
  EXPECT_NE(assignment.find("%loop.1{1} (e)"), std::string::npos) << assignment;
  EXPECT_EQ(assignment.find("%loop.1{2}"), std::string::npos) << assignment;
  EXPECT_EQ(assignment.find("%loop.1{3}"), std::string::npos) << assignment;
}

TEST(ControlFlowTest, ZeroTripLoopReturnsItsOperand) {
  Literal result = RunAndCompare(kCountingLoop, {LiteralUtil::CreateR0<int32_t>(-3)});
  EXPECT_EQ(result, LiteralUtil::CreateR0<int32_t>(0));
}

TEST(ControlFlowTest, LoopCarriesArraysThroughAFusionAndADot) {
  Shape matrix = ShapeUtil::MakeShape(F32, {16, 16});
  // x is live across the loop (read after it) while the body makes
  // temporaries of its own: they must not share memory.
  ExpectCpuAgrees(R"(
HloModule mlp_loop
cond {
  p = (s32[], f32[16,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}
body {
  p = (s32[], f32[16,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[16,16] get-tuple-element(p), index=1
  w = f32[16,16] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  d = f32[16,16] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[16,16] tanh(d)
  half = f32[] constant(0.5)
  halves = f32[16,16] broadcast(half), dimensions={}
  s = f32[16,16] multiply(t, halves)
  h2 = f32[16,16] add(s, h)
  ROOT r = (s32[], f32[16,16], f32[16,16]) tuple(next, h2, w)
}
ENTRY e {
  x = f32[16,16] parameter(0)
  w = f32[16,16] parameter(1)
  e = f32[16,16] exponential(x)
  zero = s32[] constant(0)
  init = (s32[], f32[16,16], f32[16,16]) tuple(zero, e, w)
  loop = (s32[], f32[16,16], f32[16,16]) while(init), condition=cond, body=body
  h = f32[16,16] get-tuple-element(loop), index=1
  ROOT out = f32[16,16] subtract(h, e)
})",
                  {Ramp(matrix, 0.01f, -0.2f), Ramp(matrix, -0.02f, 0.3f)}, ErrorSpec(1e-4, 1e-4));
}

TEST(ControlFlowTest, BodySwapsStateLeaves) {
  // An odd trip count leaves a and b swapped, and c = a + b each time.
  Literal result = RunAndCompare(
      R"(
HloModule swap
cond {
  p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[4] get-tuple-element(p), index=1
  b = f32[4] get-tuple-element(p), index=2
  c = f32[4] get-tuple-element(p), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ab = f32[4] add(a, b)
  c2 = f32[4] add(c, ab)
  ROOT t = (s32[], f32[4], f32[4], f32[4]) tuple(next, b, a, c2)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4], f32[4]) tuple(zero, a, b, a)
  ROOT w = (s32[], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
})",
      {LiteralUtil::CreateR1<float>({1, 2, 3, 4}), LiteralUtil::CreateR1<float>({10, 20, 30, 40})});
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(3),
                                            LiteralUtil::CreateR1<float>({10, 20, 30, 40}),
                                            LiteralUtil::CreateR1<float>({1, 2, 3, 4}),
                                            LiteralUtil::CreateR1<float>({34, 68, 102, 136})}));
}

TEST(ControlFlowTest, NewLeafWrittenWhereTheOldValueMovesOn) {
  // a' = b + 1 does not read a, but a's old value moves on to b: a' must
  // not be written into a's memory before a is copied.
  Literal result = RunAndCompare(
      R"(
HloModule rotate
cond {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(i, two), direction=LT
}
body {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  f = f32[] constant(1)
  fs = f32[3] broadcast(f), dimensions={}
  b1 = f32[3] add(b, fs)
  ROOT t = (s32[], f32[3], f32[3]) tuple(next, b1, a)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3]) tuple(zero, a, b)
  ROOT w = (s32[], f32[3], f32[3]) while(init), condition=cond, body=body
})",
      {LiteralUtil::CreateR1<float>({1, 2, 3}), LiteralUtil::CreateR1<float>({10, 20, 30})});
  // (a, b) -> (b + 1, a) -> (a + 1, b + 1).
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(2),
                                            LiteralUtil::CreateR1<float>({2, 3, 4}),
                                            LiteralUtil::CreateR1<float>({11, 21, 31})}));
}

TEST(ControlFlowTest, NestedLoopsOverANestedTupleParameter) {
  // The entry parameter is a nested tuple; the inner loop runs i+1 times
  // in outer iteration i and adds x each time.
  Literal result =
      RunAndCompare(R"(
HloModule nested
inner_cond {
  p = (s32[], s32[], f32[3]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  limit = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(j, limit), direction=LT
}
inner_body {
  p = (s32[], s32[], f32[3]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  limit = s32[] get-tuple-element(p), index=1
  acc = f32[3] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(j, one)
  two = f32[] constant(2)
  twos = f32[3] broadcast(two), dimensions={}
  acc2 = f32[3] add(acc, twos)
  ROOT t = (s32[], s32[], f32[3]) tuple(next, limit, acc2)
}
outer_cond {
  p = (s32[], (f32[3], f32[3])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(i, four), direction=LT
}
outer_body {
  p = (s32[], (f32[3], f32[3])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  pair = (f32[3], f32[3]) get-tuple-element(p), index=1
  acc = f32[3] get-tuple-element(pair), index=0
  x = f32[3] get-tuple-element(pair), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  zero = s32[] constant(0)
  inner_init = (s32[], s32[], f32[3]) tuple(zero, next, acc)
  inner = (s32[], s32[], f32[3]) while(inner_init), condition=inner_cond, body=inner_body
  acc2 = f32[3] get-tuple-element(inner), index=2
  acc3 = f32[3] add(acc2, x)
  pair2 = (f32[3], f32[3]) tuple(acc3, x)
  ROOT t = (s32[], (f32[3], f32[3])) tuple(next, pair2)
}
ENTRY e {
  p = (s32[], (f32[3], f32[3])) parameter(0)
  ROOT w = (s32[], (f32[3], f32[3])) while(p), condition=outer_cond, body=outer_body
})",
                    {LiteralUtil::MakeTuple(
                        {LiteralUtil::CreateR0<int32_t>(0),
                         LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({0, 1, 2}),
                                                 LiteralUtil::CreateR1<float>({1, 1, 1})})})});
  // 1+2+3+4 = 10 inner trips of +2, four times +x.
  EXPECT_EQ(result, LiteralUtil::MakeTuple(
                        {LiteralUtil::CreateR0<int32_t>(4),
                         LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({24, 25, 26}),
                                                 LiteralUtil::CreateR1<float>({1, 1, 1})})}));
}

TEST(ControlFlowTest, TokenLeavesOfTheStateHaveNoBuffer) {
  Literal result = RunAndCompare(R"(
HloModule token_state
cond {
  p = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  p = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  t = token[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], token[]) tuple(next, t)
}
ENTRY e {
  t = token[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], token[]) tuple(zero, t)
  w = (s32[], token[]) while(init), condition=cond, body=body
  ROOT i = s32[] get-tuple-element(w), index=0
})",
                                 {LiteralUtil::CreateToken()});
  EXPECT_EQ(result, LiteralUtil::CreateR0<int32_t>(3));
}

TEST(ControlFlowTest, ResultsWrittenInPlaceThroughNestedLoops) {
  // y is made by a kernel that does not read the state leaf it replaces, so
  // the inner body writes it straight into the inner loop's state, which in
  // turn lives in the outer loop's state (nothing reads the outer y after
  // the inner loop starts).
  Literal result = RunAndCompare(R"(
HloModule in_place
inner_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(j, two), direction=LT
}
inner_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(j, one)
  x2 = f32[4] add(x, x)
  yy = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, x2, yy)
}
outer_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
outer_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  y = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ny = f32[4] negate(y)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, ny)
  inner = (s32[], f32[4], f32[4]) while(init), condition=inner_cond, body=inner_body
  y2 = f32[4] get-tuple-element(inner), index=2
  xx = f32[4] add(x, x)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, xx, y2)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, x)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=outer_cond, body=outer_body
})",
                                 {LiteralUtil::CreateR1<float>({1, 2, 3, 4})});
  // Each outer trip: x -> 2x, y -> (2x)^2 (the inner loop's last x*x).
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(3),
                                            LiteralUtil::CreateR1<float>({8, 16, 24, 32}),
                                            LiteralUtil::CreateR1<float>({64, 256, 576, 1024})}));
}

TEST(ControlFlowTest, ConditionReadsAValueTheBodyComputes) {
  Shape vector = ShapeUtil::MakeShape(F32, {64});
  ExpectCpuAgrees(R"(
HloModule grow
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (f32[64], f32[]) parameter(0)
  total = f32[] get-tuple-element(p), index=1
  limit = f32[] constant(1000)
  ROOT lt = pred[] compare(total, limit), direction=LT
}
body {
  p = (f32[64], f32[]) parameter(0)
  x = f32[64] get-tuple-element(p), index=0
  k = f32[] constant(1.5)
  ks = f32[64] broadcast(k), dimensions={}
  x2 = f32[64] multiply(x, ks)
  zero = f32[] constant(0)
  total = f32[] reduce(x2, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[64], f32[]) tuple(x2, total)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = f32[] constant(0)
  init = (f32[64], f32[]) tuple(x, zero)
  ROOT w = (f32[64], f32[]) while(init), condition=cond, body=body
})",
                  {Ramp(vector, 0.1f, 0.5f)});
}

constexpr absl::string_view kIndexedConditional = R"(
HloModule switch
b0 {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4] get-tuple-element(p), index=1
  ROOT s = f32[4] add(a, b)
}
b1 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b2 {
  p = f32[4] parameter(0)
  ROOT same = f32[4] copy(p)
}
ENTRY e {
  i = s32[] parameter(0)
  a = f32[4] parameter(1)
  b = f32[4] parameter(2)
  ab = (f32[4], f32[4]) tuple(a, b)
  ROOT c = f32[4] conditional(i, ab, a, b), branch_computations={b0, b1, b2}
})";

TEST(ControlFlowTest, IndexedConditionalRunsTheLastBranchOutOfRange) {
  const std::vector<std::pair<int32_t, std::vector<float>>> cases = {
      {0, {11, 22, 33, 44}}, {1, {-1, -2, -3, -4}},  {2, {10, 20, 30, 40}},
      {3, {10, 20, 30, 40}}, {-1, {10, 20, 30, 40}}, {1000, {10, 20, 30, 40}}};
  Compiled compiled(kIndexedConditional);
  for (const auto& [index, expected] : cases) {
    SCOPED_TRACE(index);
    Literal result = compiled.Run({LiteralUtil::CreateR0<int32_t>(index),
                                   LiteralUtil::CreateR1<float>({1, 2, 3, 4}),
                                   LiteralUtil::CreateR1<float>({10, 20, 30, 40})});
    EXPECT_EQ(result, LiteralUtil::CreateR1<float>(expected));
  }
}

TEST(ControlFlowTest, PredConditionalWithTupleResults) {
  constexpr absl::string_view kText = R"(
HloModule if_else
on_true {
  p = f32[2,3] parameter(0)
  e = f32[2,3] exponential(p)
  ROOT t = (f32[2,3], f32[2,3]) tuple(e, p)
}
on_false {
  p = (f32[2,3], s32[]) parameter(0)
  x = f32[2,3] get-tuple-element(p), index=0
  n = f32[2,3] negate(x)
  ROOT t = (f32[2,3], f32[2,3]) tuple(x, n)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[2,3] parameter(1)
  k = s32[] constant(7)
  xk = (f32[2,3], s32[]) tuple(x, k)
  ROOT r = (f32[2,3], f32[2,3]) conditional(c, x, xk), true_computation=on_true, false_computation=on_false
})";
  Literal x = LiteralUtil::CreateR2<float>({{0.25f, 1, 2}, {-1, -2, 0.5f}});
  Compiled compiled(kText);
  for (bool c : {true, false}) {
    SCOPED_TRACE(c);
    std::vector<Literal> arguments;
    arguments.push_back(LiteralUtil::CreateR0<bool>(c));
    arguments.push_back(x.Clone());
    Literal result = compiled.Run(arguments);
    if (!c) {
      EXPECT_EQ(result,
                LiteralUtil::MakeTuple(
                    {x.Clone(), LiteralUtil::CreateR2<float>({{-0.25f, -1, -2}, {1, 2, -0.5f}})}));
    }
  }
}

TEST(ControlFlowTest, NestedCalls) {
  Literal result = RunAndCompare(
      R"(
HloModule calls
inner {
  a = f32[3] parameter(0)
  ROOT d = f32[3] add(a, a)
}
outer {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  c = f32[3] call(a), to_apply=inner
  ROOT t = (f32[3], f32[3]) tuple(c, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  r = (f32[3], f32[3]) call(x, y), to_apply=outer
  r0 = f32[3] get-tuple-element(r), index=0
  r1 = f32[3] get-tuple-element(r), index=1
  again = f32[3] call(r1), to_apply=inner
  ROOT s = f32[3] subtract(r0, again)
})",
      {LiteralUtil::CreateR1<float>({1, 2, 3}), LiteralUtil::CreateR1<float>({5, 5, 5})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({-8, -6, -4}));
}

TEST(ControlFlowTest, CallsLeftByTheInlinerRunTheirComputationInPlace) {
  // The callee holds a fusion and has two call sites: call-inliner keeps
  // both calls, and each runs the callee's thunks on its own operands.
  Literal result = RunAndCompare(
      R"(
HloModule kept_calls
fused {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT m = f32[3] multiply(a, b)
}
square_plus {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  sq = f32[3] fusion(x, x), kind=kLoop, calls=fused
  s = f32[3] add(sq, y)
  ROOT t = (f32[3], f32[3]) tuple(s, x)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  c1 = (f32[3], f32[3]) call(x, y), to_apply=square_plus
  r1 = f32[3] get-tuple-element(c1), index=0
  c2 = (f32[3], f32[3]) call(r1, x), to_apply=square_plus
  r2 = f32[3] get-tuple-element(c2), index=0
  k = f32[3] get-tuple-element(c2), index=1
  ROOT d = f32[3] subtract(r2, k)
})",
      {LiteralUtil::CreateR1<float>({1, 2, 3}), LiteralUtil::CreateR1<float>({1, 0, -1})});
  // r1 = x*x + y = {2, 4, 8}; r2 = r1*r1 + x = {5, 18, 67}; minus r1.
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({3, 14, 59}));
}

TEST(ControlFlowTest, WhileInsideABranch) {
  constexpr absl::string_view kText = R"(
HloModule loop_in_branch
cond {
  p = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[5] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x2 = f32[5] add(x, x)
  ROOT t = (s32[], f32[5]) tuple(next, x2)
}
looping {
  x = f32[5] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[5]) tuple(zero, x)
  w = (s32[], f32[5]) while(init), condition=cond, body=body
  ROOT r = f32[5] get-tuple-element(w), index=1
}
plain {
  x = f32[5] parameter(0)
  ROOT n = f32[5] negate(x)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[5] parameter(1)
  ROOT r = f32[5] conditional(c, x, x), true_computation=looping, false_computation=plain
})";
  Literal result = RunAndCompare(kText, [] {
    std::vector<Literal> arguments;
    arguments.push_back(LiteralUtil::CreateR0<bool>(true));
    arguments.push_back(LiteralUtil::CreateR1<float>({1, 2, 3, 4, 0.5f}));
    return arguments;
  }());
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({64, 128, 192, 256, 32}));
}

TEST(ControlFlowTest, ComputationsSharedByTwoLoopsAndTwoBranches) {
  // Each use builds the computation again over its own values.
  Literal result =
      RunAndCompare(R"(
HloModule shared
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x2 = f32[2] multiply(x, x)
  ROOT t = (s32[], f32[2]) tuple(next, x2)
}
twice {
  p = f32[2] parameter(0)
  ROOT d = f32[2] add(p, p)
}
ENTRY e {
  x = f32[2] parameter(0)
  k = s32[] parameter(1)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  w1 = (s32[], f32[2]) while((s32[], f32[2]) tuple(zero, x)), condition=cond, body=body
  w2 = (s32[], f32[2]) while((s32[], f32[2]) tuple(one, x)), condition=cond, body=body
  a = f32[2] get-tuple-element(w1), index=1
  b = f32[2] get-tuple-element(w2), index=1
  c = f32[2] conditional(k, a, b), branch_computations={twice, twice}
  ROOT r = (f32[2], f32[2], f32[2]) tuple(a, b, c)
})",
                    {LiteralUtil::CreateR1<float>({2, -1}), LiteralUtil::CreateR0<int32_t>(1)});
  // x^8 and x^4; branch 1 doubles b.
  EXPECT_EQ(result, LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({256, 1}),
                                            LiteralUtil::CreateR1<float>({16, 1}),
                                            LiteralUtil::CreateR1<float>({32, 2})}));
}

TEST(ControlFlowTest, ExecutableIsReusedSequentiallyAndFromSeveralThreads) {
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable = CompileOn("cpu", kCountingLoop);
  ASSERT_TRUE(executable.ok()) << executable.status();
  for (int32_t n : {7, 3}) {
    std::vector<Literal> arguments;
    arguments.push_back(LiteralUtil::CreateR0<int32_t>(n));
    absl::StatusOr<Literal> result = RunExecutable("cpu", **executable, arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(*result, LiteralUtil::CreateR0<int32_t>(n * (n - 1) / 2));
  }
  // Threads run the loop and a conditional over arrays (each run has its
  // own temporaries), each with its own arguments.
  absl::StatusOr<std::unique_ptr<LocalExecutable>> conditional =
      CompileOn("cpu", kIndexedConditional);
  ASSERT_TRUE(conditional.ok()) << conditional.status();
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<Literal>> sums(kThreads, absl::UnknownError("not run"));
  std::vector<absl::StatusOr<Literal>> branches(kThreads, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        std::vector<Literal> arguments;
        arguments.push_back(LiteralUtil::CreateR0<int32_t>(100 + t));
        sums[t] = RunExecutable("cpu", **executable, arguments);
        const float f = static_cast<float>(t);
        arguments.back() = LiteralUtil::CreateR0<int32_t>(t % 2);
        arguments.push_back(LiteralUtil::CreateR1<float>({f, f, f, f}));
        arguments.push_back(LiteralUtil::CreateR1<float>({1, 2, 3, 4}));
        branches[t] = RunExecutable("cpu", **conditional, arguments);
        if (!sums[t].ok() || !branches[t].ok()) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(sums[t].ok()) << sums[t].status();
    EXPECT_EQ(*sums[t], LiteralUtil::CreateR0<int32_t>((100 + t) * (99 + t) / 2));
    ASSERT_TRUE(branches[t].ok()) << branches[t].status();
    const float f = static_cast<float>(t);
    EXPECT_EQ(*branches[t], t % 2 == 0 ? LiteralUtil::CreateR1<float>({f + 1, f + 2, f + 3, f + 4})
                                       : LiteralUtil::CreateR1<float>({-f, -f, -f, -f}));
  }
}

}  // namespace
}  // namespace axle
