// A small dot inside a while loop whose rhs the loop leaves unchanged packs
// it once per loop run (loop_run.h); results must equal the interpreter's
// exactly (quarter-valued inputs: every sum is exact) when the rhs is
// invariant, when the body replaces it, when the body updates it in place
// (same memory, new contents), and when an outer loop changes it between
// runs of an inner loop. Each executable runs twice (the second run's
// loop reuses the first's slots).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::RunExecutable;

// Quarters in [-1.25, 1.25] that differ from element to element.
Literal Quarters(absl::Span<const int64_t> dims, int seed) {
  Literal literal(ShapeUtil::MakeShape(F32, dims));
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = 0.25f * static_cast<float>(
                          static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5);
  }
  return literal;
}

// Runs `text` on cpu and on the interpreter, twice, and expects equal
// results.
void ExpectExact(const std::string& text, const std::vector<Literal>& arguments) {
  auto cpu = CompileOn("cpu", text);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto reference = CompileOn("interpreter", text);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<Literal> expected = RunExecutable("interpreter", **reference, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<Literal> actual = RunExecutable("cpu", **cpu, arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(*actual, *expected) << "run " << run;
  }
}

// A loop of 5 steps: acc += dot(x, w), x moves on each step, and w becomes
// w2, which `w_next` computes (from w, i and the state); without it, w
// passes through unchanged.
std::string DotLoop(int64_t m, int64_t k, int64_t n, absl::string_view w_next = "") {
  const std::string text =
      absl::StrReplaceAll(R"(
HloModule dot_loop
cond {
  p = (s32[], f32[$M,$K], f32[$K,$N], f32[$M,$N]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}
body {
  p = (s32[], f32[$M,$K], f32[$K,$N], f32[$M,$N]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[$M,$K] get-tuple-element(p), index=1
  w = f32[$K,$N] get-tuple-element(p), index=2
  acc = f32[$M,$N] get-tuple-element(p), index=3
  d = f32[$M,$N] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  acc2 = f32[$M,$N] add(acc, d)
  quarter = f32[] constant(0.25)
  qs = f32[$M,$K] broadcast(quarter), dimensions={}
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  xq = f32[$M,$K] add(x, qs)
  x2 = f32[$M,$K] clamp(lo, xq, hi)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  $W_NEXT
  ROOT t = (s32[], f32[$M,$K], f32[$K,$N], f32[$M,$N]) tuple(i2, x2, $W2, acc2)
}
ENTRY e {
  x = f32[$M,$K] parameter(0)
  w = f32[$K,$N] parameter(1)
  zero = f32[] constant(0)
  acc = f32[$M,$N] broadcast(zero), dimensions={}
  start = s32[] constant(0)
  init = (s32[], f32[$M,$K], f32[$K,$N], f32[$M,$N]) tuple(start, x, w, acc)
  loop = (s32[], f32[$M,$K], f32[$K,$N], f32[$M,$N]) while(init), condition=cond, body=body
  ROOT r = f32[$M,$N] get-tuple-element(loop), index=3
}
)",
                          {{"$W_NEXT", w_next}, {"$W2", w_next.empty() ? "w" : "w2"}});
  return absl::StrReplaceAll(
      text, {{"$M", absl::StrCat(m)}, {"$K", absl::StrCat(k)}, {"$N", absl::StrCat(n)}});
}

struct Shape3 {
  int64_t m, k, n;
};
// An RNN step's rows (32-column tiles) and a matrix-vector product's
// (128-column panels); column tails.
const Shape3 kShapes[] = {{16, 96, 160}, {2, 256, 300}};

TEST(LoopRunTest, InvariantRhsIsPackedOncePerLoopRun) {
  for (const Shape3& s : kShapes) {
    SCOPED_TRACE(s.m);
    ExpectExact(DotLoop(s.m, s.k, s.n), {Quarters({s.m, s.k}, 1), Quarters({s.k, s.n}, 2)});
  }
}

TEST(LoopRunTest, RhsReplacedByTheBodyIsReadAfresh) {
  for (const Shape3& s : kShapes) {
    SCOPED_TRACE(s.m);
    ExpectExact(DotLoop(s.m, s.k, s.n, R"(qw = f32[$K,$N] broadcast(quarter), dimensions={}
  w2 = f32[$K,$N] subtract(w, qw))"),
                {Quarters({s.m, s.k}, 1), Quarters({s.k, s.n}, 2)});
  }
}

TEST(LoopRunTest, RhsUpdatedInPlaceIsReadAfresh) {
  // dynamic-update-slice writes the state leaf's own memory: the rhs keeps
  // its address and changes its contents.
  for (const Shape3& s : kShapes) {
    SCOPED_TRACE(s.m);
    ExpectExact(DotLoop(s.m, s.k, s.n, R"(half = f32[] constant(0.5)
  row = f32[1,$N] broadcast(half), dimensions={}
  zi = s32[] constant(0)
  w2 = f32[$K,$N] dynamic-update-slice(w, row, i, zi))"),
                {Quarters({s.m, s.k}, 1), Quarters({s.k, s.n}, 2)});
  }
}

TEST(LoopRunTest, OuterLoopChangesTheRhsBetweenInnerLoopRuns) {
  // The inner loop leaves w unchanged (packed once per inner run); the
  // outer loop changes it between the inner runs, in the same memory.
  ExpectExact(R"(
HloModule nested
inner_cond {
  p = (s32[], f32[16,96], f32[96,160], f32[16,160]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
inner_body {
  p = (s32[], f32[16,96], f32[96,160], f32[16,160]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16,96] get-tuple-element(p), index=1
  w = f32[96,160] get-tuple-element(p), index=2
  acc = f32[16,160] get-tuple-element(p), index=3
  d = f32[16,160] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  acc2 = f32[16,160] add(acc, d)
  quarter = f32[] constant(0.25)
  qs = f32[16,96] broadcast(quarter), dimensions={}
  x2 = f32[16,96] subtract(x, qs)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[16,96], f32[96,160], f32[16,160]) tuple(i2, x2, w, acc2)
}
outer_cond {
  p = (s32[], f32[16,96], f32[96,160], f32[16,160]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
outer_body {
  p = (s32[], f32[16,96], f32[96,160], f32[16,160]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16,96] get-tuple-element(p), index=1
  w = f32[96,160] get-tuple-element(p), index=2
  acc = f32[16,160] get-tuple-element(p), index=3
  zero = s32[] constant(0)
  init = (s32[], f32[16,96], f32[96,160], f32[16,160]) tuple(zero, x, w, acc)
  inner = (s32[], f32[16,96], f32[96,160], f32[16,160]) while(init), condition=inner_cond, body=inner_body
  acc2 = f32[16,160] get-tuple-element(inner), index=3
  half = f32[] constant(0.5)
  row = f32[1,160] broadcast(half), dimensions={}
  w2 = f32[96,160] dynamic-update-slice(w, row, i, zero)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[16,96], f32[96,160], f32[16,160]) tuple(i2, x, w2, acc2)
}
ENTRY e {
  x = f32[16,96] parameter(0)
  w = f32[96,160] parameter(1)
  zero = f32[] constant(0)
  acc = f32[16,160] broadcast(zero), dimensions={}
  start = s32[] constant(0)
  init = (s32[], f32[16,96], f32[96,160], f32[16,160]) tuple(start, x, w, acc)
  loop = (s32[], f32[16,96], f32[96,160], f32[16,160]) while(init), condition=outer_cond, body=outer_body
  ROOT r = f32[16,160] get-tuple-element(loop), index=3
}
)",
              {Quarters({16, 96}, 1), Quarters({96, 160}, 2)});
}

}  // namespace
}  // namespace axle
