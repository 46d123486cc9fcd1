//===- in_place_test.cc - Arena reuse around dots, in-place updates --------===//
//
// Dots report their buffer uses, so programs with dots reuse arena memory;
// dynamic-update-slice and scatter write into their operand's memory when it
// is dead afterwards (hlo/analysis/in_place_sharing.h): in the entry, and on a while loop's state
// (the body's copy of the state leaf is gone). Values are checked against
// the interpreter, the sharing through the executable's temporaries bytes.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// The cpu executable of `text`, after checking it agrees with the
// interpreter on `arguments`.
std::unique_ptr<LocalExecutable> CompileAndCheck(const std::string& text,
                                                 const std::vector<Literal>& arguments) {
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

const cpu::CpuExecutable& Cpu(const LocalExecutable& executable) {
  auto* cpu = dynamic_cast<const cpu::CpuExecutable*>(executable.executable());
  CHECK(cpu != nullptr);
  return *cpu;
}

TEST(CpuArenaReuseTest, ProgramsWithDotsShareTheArena) {
  // Each dot's input is dead once the next dot has read it.
  const std::string text = R"(
HloModule dots
ENTRY e {
  x = f32[32,64] parameter(0)
  w = f32[64,64] parameter(1)
  d1 = f32[32,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1 = f32[32,64] exponential(d1)
  d2 = f32[32,64] dot(e1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e2 = f32[32,64] tanh(d2)
  d3 = f32[32,64] dot(e2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[32,64] negate(d3)
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  auto executable = CompileAndCheck(text, arguments);
  const cpu::CpuExecutable& cpu = Cpu(*executable);
  EXPECT_LT(cpu.arena_size_bytes(), cpu.temporaries_bytes())
      << cpu.arena_size_bytes() << " vs " << cpu.temporaries_bytes();
}

constexpr int64_t kRowsBytes = int64_t{64} * 16 * 4;  // f32[64,16]

TEST(CpuInPlaceTest, DynamicUpdateSliceOfADeadTemporaryWritesInPlace) {
  // x dies at d: d takes x's memory (one array of temporaries, not two).
  const std::string text = R"(
HloModule dus
ENTRY e {
  p = f32[64,16] parameter(0)
  u = f32[3,5] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  x = f32[64,16] add(p, p)
  ROOT d = f32[64,16] dynamic-update-slice(x, u, i, j)
})";
  for (int32_t i : {0, 7, 62, -3}) {
    std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
    arguments[2] = LiteralUtil::CreateR0<int32_t>(i);
    arguments[3] = LiteralUtil::CreateR0<int32_t>(i + 5);  // 12 and 67 clamp to 11
    auto executable = CompileAndCheck(text, arguments);
    EXPECT_EQ(Cpu(*executable).temporaries_bytes(), kRowsBytes);
  }
}

TEST(CpuInPlaceTest, AnOperandReadLaterIsCopied) {
  // x is still a result after d: d gets memory of its own.
  const std::string text = R"(
HloModule dus
ENTRY e {
  p = f32[64,16] parameter(0)
  u = f32[1,16] parameter(1)
  i = u32[] parameter(2)
  x = f32[64,16] add(p, p)
  zero = u32[] constant(0)
  d = f32[64,16] dynamic-update-slice(x, u, i, zero)
  d2 = f32[64,16] dynamic-update-slice(d, u, zero, zero)
  ROOT t = (f32[64,16], f32[64,16]) tuple(x, d2)
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  arguments[2] = LiteralUtil::CreateR0<uint32_t>(4000000000u);  // clamps to 63
  auto executable = CompileAndCheck(text, arguments);
  // x, and d with d2 in place on it.
  EXPECT_EQ(Cpu(*executable).temporaries_bytes(), 2 * kRowsBytes);
}

TEST(CpuInPlaceTest, WhileLoopUpdatesItsStateInPlace) {
  // The body writes row i of the state: the update goes straight into the
  // state leaf, no body temporary of the state's size and no copy.
  const std::string text = R"(
HloModule rows
cond {
  p = (s32[], f32[64,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64,16] get-tuple-element(p), index=1
  f = f32[] convert(i)
  row = f32[1,16] broadcast(f), dimensions={}
  zero = s32[] constant(0)
  d = f32[64,16] dynamic-update-slice(x, row, i, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[64,16]) tuple(next, d)
}
ENTRY e {
  x0 = f32[64,16] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[64,16]) tuple(i0, x0)
  w = (s32[], f32[64,16]) while(init), condition=cond, body=body
  ROOT r = f32[64,16] get-tuple-element(w), index=1
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  auto executable = CompileAndCheck(text, arguments);
  EXPECT_LT(Cpu(*executable).temporaries_bytes(), 2 * kRowsBytes);
}

TEST(CpuInPlaceTest, WhileLoopKeepsAStateLeafReadAfterTheUpdate) {
  // The body returns the old state beside the updated one: the update
  // must not clobber it.
  const std::string text = R"(
HloModule rows
cond {
  p = (s32[], f32[8,4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8,4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8,4] get-tuple-element(p), index=1
  f = f32[] convert(i)
  row = f32[1,4] broadcast(f), dimensions={}
  zero = s32[] constant(0)
  d = f32[8,4] dynamic-update-slice(x, row, i, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8,4], f32[8,4]) tuple(next, d, x)
}
ENTRY e {
  x0 = f32[8,4] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[8,4], f32[8,4]) tuple(i0, x0, x0)
  w = (s32[], f32[8,4], f32[8,4]) while(init), condition=cond, body=body
  a = f32[8,4] get-tuple-element(w), index=1
  b = f32[8,4] get-tuple-element(w), index=2
  ROOT s = f32[8,4] subtract(a, b)
})";
  CompileAndCheck(text, cpu::testing::MakeTestArguments(text));
}

TEST(CpuInPlaceTest, ScatterIntoADeadTemporary) {
  const std::string text = R"(
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[16,8] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3,8] parameter(2)
  x = f32[16,8] multiply(p, p)
  ROOT s = f32[16,8] scatter(x, idx, upd), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=add
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  arguments[1] = LiteralUtil::CreateFromDimensions<int32_t>({3, 1}, {2, 15, 2});
  auto executable = CompileAndCheck(text, arguments);
  EXPECT_EQ(Cpu(*executable).temporaries_bytes(), 16 * 8 * 4);
}

TEST(CpuInPlaceTest, ElementwiseKernelWritesOverADeadTemporary) {
  // The sort's result is read once, at the index being computed: the
  // kernel writes its result over it.
  const std::string text = R"(
HloModule elementwise
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[64,16] parameter(0)
  s = f32[64,16] sort(p), dimensions={1}, to_apply=less
  two = f32[] constant(2)
  b = f32[64,16] broadcast(two), dimensions={}
  m = f32[64,16] multiply(s, b)
  ROOT a = f32[64,16] add(m, s)
})";
  auto executable = CompileAndCheck(text, cpu::testing::MakeTestArguments(text));
  EXPECT_EQ(Cpu(*executable).temporaries_bytes(), kRowsBytes);
}

TEST(CpuInPlaceTest, AKernelReadingElsewhereThanItsIndexGetsItsOwnBuffer) {
  const std::string text = R"(
HloModule reversed
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[64,16] parameter(0)
  s = f32[64,16] sort(p), dimensions={1}, to_apply=less
  r = f32[64,16] reverse(s), dimensions={0}
  ROOT a = f32[64,16] add(r, s)
})";
  auto executable = CompileAndCheck(text, cpu::testing::MakeTestArguments(text));
  EXPECT_EQ(Cpu(*executable).temporaries_bytes(), 2 * kRowsBytes);
}

TEST(CpuInPlaceTest, WhileLoopStateUpdatedElementwiseStaysInPlace) {
  // A threefry-like round: both state arrays are updated from both by one
  // multi-output kernel, which writes them in place: no body temporaries
  // and no copies back into the state.
  const std::string text = R"(
HloModule rounds
cond {
  p = (s32[], u32[64,16], u32[64,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], u32[64,16], u32[64,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x0 = u32[64,16] get-tuple-element(p), index=1
  x1 = u32[64,16] get-tuple-element(p), index=2
  y0 = u32[64,16] add(x0, x1)
  c13 = u32[] constant(13)
  b13 = u32[64,16] broadcast(c13), dimensions={}
  c19 = u32[] constant(19)
  b19 = u32[64,16] broadcast(c19), dimensions={}
  l = u32[64,16] shift-left(x1, b13)
  r = u32[64,16] shift-right-logical(x1, b19)
  rot = u32[64,16] or(l, r)
  y1 = u32[64,16] xor(rot, y0)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], u32[64,16], u32[64,16]) tuple(next, y0, y1)
}
ENTRY e {
  a = u32[64,16] parameter(0)
  b = u32[64,16] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], u32[64,16], u32[64,16]) tuple(i0, a, b)
  w = (s32[], u32[64,16], u32[64,16]) while(init), condition=cond, body=body
  o0 = u32[64,16] get-tuple-element(w), index=1
  o1 = u32[64,16] get-tuple-element(w), index=2
  ROOT s = u32[64,16] xor(o0, o1)
})";
  auto executable = CompileAndCheck(text, cpu::testing::MakeTestArguments(text));
  // The two state arrays and the entry's result (the loop counter and the
  // condition take a few bytes).
  EXPECT_LT(Cpu(*executable).temporaries_bytes(), 3 * kRowsBytes + 1024);
}

TEST(CpuInPlaceTest, RecurrentStepOutputReshapedIntoTheSequenceIsABitcast) {
  // An LSTM-like step (lstm_scan's shape): the gates' kernel returns h and
  // c, and h, reshaped to one row of the output sequence, is written into
  // it by a dynamic-update-slice. The reshape fuses with neither side; it
  // is a bitcast (no kernel, no copy). The gates (tanh, logistic on 16 x
  // 128) are split across the pool while its workers spin in the loop.
  const std::string text = R"(
HloModule step
cond {
  p = (s32[], f32[16,128], f32[16,128], f32[8,16,128], f32[16,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16,128], f32[16,128], f32[8,16,128], f32[16,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[16,128] get-tuple-element(p), index=1
  c = f32[16,128] get-tuple-element(p), index=2
  seq = f32[8,16,128] get-tuple-element(p), index=3
  x = f32[16,512] get-tuple-element(p), index=4
  xh = f32[16,512] concatenate(h, h, h, h), dimensions={1}
  g = f32[16,512] add(x, xh)
  s0 = f32[16,128] slice(g), slice={[0:16], [0:128]}
  s1 = f32[16,128] slice(g), slice={[0:16], [128:256]}
  s2 = f32[16,128] slice(g), slice={[0:16], [256:384]}
  s3 = f32[16,128] slice(g), slice={[0:16], [384:512]}
  f = f32[16,128] logistic(s0)
  u = f32[16,128] logistic(s1)
  t = f32[16,128] tanh(s2)
  o = f32[16,128] logistic(s3)
  fc = f32[16,128] multiply(f, c)
  ut = f32[16,128] multiply(u, t)
  c1 = f32[16,128] add(fc, ut)
  tc = f32[16,128] tanh(c1)
  h1 = f32[16,128] multiply(o, tc)
  row = f32[1,16,128] reshape(h1)
  zero = s32[] constant(0)
  seq1 = f32[8,16,128] dynamic-update-slice(seq, row, i, zero, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], f32[16,128], f32[16,128], f32[8,16,128], f32[16,512]) tuple(next, h1, c1, seq1, x)
}
ENTRY e {
  x = f32[16,512] parameter(0)
  h0 = f32[16,128] parameter(1)
  z = f32[] constant(0)
  c0 = f32[16,128] broadcast(z), dimensions={}
  seq0 = f32[8,16,128] broadcast(z), dimensions={}
  i0 = s32[] constant(0)
  init = (s32[], f32[16,128], f32[16,128], f32[8,16,128], f32[16,512]) tuple(i0, h0, c0, seq0, x)
  w = (s32[], f32[16,128], f32[16,128], f32[8,16,128], f32[16,512]) while(init), condition=cond, body=body
  ROOT out = f32[8,16,128] get-tuple-element(w), index=3
})";
  auto executable = CompileAndCheck(text, cpu::testing::MakeTestArguments(text));
  int64_t reshapes = 0, bitcasts = 0;
  for (const HloComputation* computation : executable->executable()->module().computations()) {
    if (computation->IsFusionComputation()) continue;
    for (const HloInstruction* instruction : computation->instructions()) {
      reshapes += instruction->opcode() == HloOpcode::kReshape;
      bitcasts += instruction->opcode() == HloOpcode::kBitcast;
    }
  }
  EXPECT_EQ(reshapes, 0);
  EXPECT_GE(bitcasts, 1);
}

}  // namespace
}  // namespace axle
