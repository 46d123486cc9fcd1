// A compiled cpu program serialized (program_serialization.h), loaded back
// without its HloModule (the kernels resolved by symbol), run, and compared
// bit for bit with the executable it came from: loop and reduction
// kernels (an argmax cut into chunks among them), the dot paths (emitted loop, small dot, oneDNN),
// convolutions (a weight gradient among them), while and conditional, dynamic-update-slice, topk, a
// sort by a native key order (JAX's argsort), fft (the thunks that call compiled scalar functions:
// scalar_function_serialization_test.cc); a program with a thunk that keeps its HLO is refused
// naming the op; a second run reads its own arguments; truncated bytes, a wrong magic, an unknown
// kernel and a thunk whose fields contradict its values are errors.
#include "axle/cpu/runtime/program_serialization.h"

#include <cmath>
#include <string>
#include <vector>

#include "axle/cpu/runtime/program_serialization_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using ::axle::testing::SeededF32Values;

TEST(ProgramSerializationTest, LoopAndReductionKernels) {
  const Shape shape = ShapeUtil::MakeShape(F32, {64, 32});
  std::vector<std::string> symbols = ExpectRoundTrip(R"(
HloModule kernels
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[64,32] parameter(0)
  x = f32[64,32] exponential(p)
  zero = f32[] constant(0)
  rows = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  cols = f32[32] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[64,32], f32[64], f32[32]) tuple(x, rows, cols)
})",
                                                     {SeededF32Values(shape, 1)});
  EXPECT_FALSE(symbols.empty());
}

// An argmax of a whole vector long enough to be cut into chunks
// (loop_kernel_plan.h: FoldChunks): the kernel's partial results' buffer
// size comes back with it.
TEST(ProgramSerializationTest, AnArgmaxCutIntoChunks) {
  const Shape shape = ShapeUtil::MakeShape(F32, {100003});
  std::vector<std::string> symbols = ExpectRoundTrip(R"(
HloModule argmax_whole
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  a_nan = pred[] compare(a, a), direction=NE
  pick = pred[] or(gt, a_nan)
  v = f32[] select(pick, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  take = pred[] or(pick, tie)
  i = s32[] select(take, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[100003] parameter(0)
  iota = s32[100003] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT m = (f32[], s32[]) reduce(x, iota, ninf, zero), dimensions={0}, to_apply=argmax
})",
                                                     {SeededF32Values(shape, 2)});
  EXPECT_FALSE(symbols.empty());
}

TEST(ProgramSerializationTest, Dots) {
  // [4,16]x[16,8] (emitted loop) with bias and relu; [8,256]x[256,64] (small
  // dot where the CPU has AVX-512, else oneDNN); [64,256]x[256,256] (oneDNN),
  // each with a constant rhs, and one with both operands parameters; and
  // [256,256]x[256] (small dot, as the vector times the transposed matrix).
  const Shape a = ShapeUtil::MakeShape(F32, {4, 16});
  const Shape b = ShapeUtil::MakeShape(F32, {8, 256});
  const Shape c = ShapeUtil::MakeShape(F32, {64, 256});
  const Shape w = ShapeUtil::MakeShape(F32, {256, 256});
  ExpectRoundTrip(
      R"(
HloModule dots
ENTRY e {
  a = f32[4,16] parameter(0)
  b = f32[8,256] parameter(1)
  c = f32[64,256] parameter(2)
  w = f32[256,256] parameter(3)
  v = f32[256] parameter(4)
  wa = f32[16,8] iota(), iota_dimension=1
  bias = f32[8] iota(), iota_dimension=0
  da = f32[4,8] dot(a, wa), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,8] broadcast(bias), dimensions={1}
  sum = f32[4,8] add(da, bb)
  zero = f32[] constant(0)
  zb = f32[4,8] broadcast(zero), dimensions={}
  relu = f32[4,8] maximum(sum, zb)
  wb = f32[256,64] iota(), iota_dimension=0
  db = f32[8,64] dot(b, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dc = f32[64,256] dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dv = f32[256] dot(w, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,8], f32[8,64], f32[64,256], f32[256]) tuple(relu, db, dc, dv)
})",
      {SeededF32Values(a, 1), SeededF32Values(b, 2), SeededF32Values(c, 3), SeededF32Values(w, 4),
       SeededF32Values(ShapeUtil::MakeShape(F32, {256}), 5)});
}

TEST(ProgramSerializationTest, Convolutions) {
  const Shape input = ShapeUtil::MakeShape(F32, {2, 12, 12, 8});
  const Shape small = ShapeUtil::MakeShape(F32, {1, 5, 5, 1});
  ExpectRoundTrip(R"(
HloModule convolutions
ENTRY e {
  x = f32[2,12,12,8] parameter(0)
  s = f32[1,5,5,1] parameter(1)
  k = f32[3,3,8,16] iota(), iota_dimension=3
  c = f32[2,12,12,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bias = f32[16] iota(), iota_dimension=0
  bb = f32[2,12,12,16] broadcast(bias), dimensions={3}
  y = f32[2,12,12,16] add(c, bb)
  k2 = f32[2,2,1,1] constant({{{{1}},{{2}}},{{{3}},{{4}}}})
  z = f32[1,4,4,1] convolution(s, k2), window={size=2x2}, dim_labels=b01f_01io->b01f
  g = f32[3,3,8,16] convolution(x, y), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT t = (f32[2,12,12,16], f32[1,4,4,1], f32[3,3,8,16]) tuple(y, z, g)
})",
                  {SeededF32Values(input, 1), SeededF32Values(small, 2)});
}

TEST(ProgramSerializationTest, AConvolutionChain) {
  // An expand, a depthwise and a project convolution with a residual: one
  // chain thunk (conv_chain.h) where the pool has two threads.
  const Shape input = ShapeUtil::MakeShape(F32, {1, 9, 7, 4});
  ExpectRoundTrip(R"(
HloModule chain
ENTRY e {
  x = f32[1,9,7,4] parameter(0)
  ek = f32[16,4,1,1] constant({{{{-0.75}}, {{1}}, {{0}}, {{-1}}}, {{{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}}, {{{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}}, {{{1}}, {{0}}, {{-1}}, {{0.75}}}, {{{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}}, {{{1.25}}, {{0.25}}, {{-0.75}}, {{1}}}, {{{0}}, {{-1}}, {{0.75}}, {{-0.25}}}, {{{-1.25}}, {{0.5}}, {{-0.5}}, {{1.25}}}, {{{0.25}}, {{-0.75}}, {{1}}, {{0}}}, {{{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}}, {{{0.5}}, {{-0.5}}, {{1.25}}, {{0.25}}}, {{{-0.75}}, {{1}}, {{0}}, {{-1}}}, {{{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}}, {{{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}}, {{{1}}, {{0}}, {{-1}}, {{0.75}}}, {{{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}}})
  ec = f32[1,9,7,16] convolution(x, ek), window={size=1x1}, dim_labels=b01f_oi01->b01f
  zero = f32[] constant(0)
  zeros = f32[1,9,7,16] broadcast(zero), dimensions={}
  e = f32[1,9,7,16] maximum(ec, zeros)
  dk = f32[16,1,3,3] constant({{{{-0.25, -1.25, 0.5}, {-0.5, 1.25, 0.25}, {-0.75, 1, 0}}}, {{{-1, 0.75, -0.25}, {-1.25, 0.5, -0.5}, {1.25, 0.25, -0.75}}}, {{{1, 0, -1}, {0.75, -0.25, -1.25}, {0.5, -0.5, 1.25}}}, {{{0.25, -0.75, 1}, {0, -1, 0.75}, {-0.25, -1.25, 0.5}}}, {{{-0.5, 1.25, 0.25}, {-0.75, 1, 0}, {-1, 0.75, -0.25}}}, {{{-1.25, 0.5, -0.5}, {1.25, 0.25, -0.75}, {1, 0, -1}}}, {{{0.75, -0.25, -1.25}, {0.5, -0.5, 1.25}, {0.25, -0.75, 1}}}, {{{0, -1, 0.75}, {-0.25, -1.25, 0.5}, {-0.5, 1.25, 0.25}}}, {{{-0.75, 1, 0}, {-1, 0.75, -0.25}, {-1.25, 0.5, -0.5}}}, {{{1.25, 0.25, -0.75}, {1, 0, -1}, {0.75, -0.25, -1.25}}}, {{{0.5, -0.5, 1.25}, {0.25, -0.75, 1}, {0, -1, 0.75}}}, {{{-0.25, -1.25, 0.5}, {-0.5, 1.25, 0.25}, {-0.75, 1, 0}}}, {{{-1, 0.75, -0.25}, {-1.25, 0.5, -0.5}, {1.25, 0.25, -0.75}}}, {{{1, 0, -1}, {0.75, -0.25, -1.25}, {0.5, -0.5, 1.25}}}, {{{0.25, -0.75, 1}, {0, -1, 0.75}, {-0.25, -1.25, 0.5}}}, {{{-0.5, 1.25, 0.25}, {-0.75, 1, 0}, {-1, 0.75, -0.25}}}})
  d = f32[1,9,7,16] convolution(e, dk), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f, feature_group_count=16
  pk = f32[4,16,1,1] constant({{{{0.25}}, {{-0.75}}, {{1}}, {{0}}, {{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}, {{1}}, {{0}}, {{-1}}}, {{{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}, {{1}}, {{0}}, {{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}}, {{{1.25}}, {{0.25}}, {{-0.75}}, {{1}}, {{0}}, {{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}, {{1}}, {{0}}}, {{{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}, {{-0.5}}, {{1.25}}, {{0.25}}, {{-0.75}}, {{1}}, {{0}}, {{-1}}, {{0.75}}, {{-0.25}}, {{-1.25}}, {{0.5}}}})
  pc = f32[1,9,7,4] convolution(d, pk), window={size=1x1}, dim_labels=b01f_oi01->b01f
  p = f32[1,9,7,4] add(pc, x)
  ROOT r = f32[1,9,7,4] negate(p)
})",
                  {SeededF32Values(input, 1)});
}

TEST(ProgramSerializationTest, ConvolutionsWritingTheirConcatSlices) {
  // Two convolutions write their slices of a concatenation (concat_in_place.h):
  // the slice's offset and strides travel in the plan.
  const Shape input = ShapeUtil::MakeShape(F32, {1, 6, 5, 4});
  ExpectRoundTrip(R"(
HloModule concat
ENTRY e {
  x = f32[1,6,5,4] parameter(0)
  k1 = f32[3,4,1,1] constant({{{{1}},{{2}},{{-1}},{{0.5}}},{{{0}},{{1}},{{1}},{{-2}}},{{{3}},{{-1}},{{0}},{{1}}}})
  c1 = f32[1,6,5,3] convolution(x, k1), window={size=1x1}, dim_labels=b01f_oi01->b01f
  k2 = f32[5,4,3,3] iota(), iota_dimension=0
  c2 = f32[1,6,5,5] convolution(x, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f
  cat = f32[1,6,5,8] concatenate(c1, c2), dimensions={3}
  k3 = f32[2,8,1,1] iota(), iota_dimension=1
  ROOT y = f32[1,6,5,2] convolution(cat, k3), window={size=1x1}, dim_labels=b01f_oi01->b01f
})",
                  {SeededF32Values(input, 1)});
}

constexpr absl::string_view kWhileAndConditional = R"(
HloModule control
cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  t = f32[16] tanh(v)
  h = f32[] constant(0.5)
  hb = f32[16] broadcast(h), dimensions={}
  u = f32[16] add(t, hb)
  ROOT r = (s32[], f32[16]) tuple(next, u)
}
on_true {
  x = f32[16] parameter(0)
  ROOT y = f32[16] multiply(x, x)
}
on_false {
  x = f32[16] parameter(0)
  ROOT y = f32[16] negate(x)
}
ENTRY e {
  v = f32[16] parameter(0)
  flag = pred[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[16]) tuple(zero, v)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  out = f32[16] get-tuple-element(w), index=1
  ROOT c = f32[16] conditional(flag, out, out), true_computation=on_true, false_computation=on_false
})";

TEST(ProgramSerializationTest, WhileAndConditional) {
  const Shape v = ShapeUtil::MakeShape(F32, {16});
  ExpectRoundTrip(kWhileAndConditional, {SeededF32Values(v, 1), LiteralUtil::CreateR0<bool>(true)});
  ExpectRoundTrip(kWhileAndConditional,
                  {SeededF32Values(v, 2), LiteralUtil::CreateR0<bool>(false)});
}

// The runner looks a value's buffer up in a table it fills at each run:
// a second run on other argument buffers reads those, not the first's.
TEST(ProgramSerializationTest, EachRunReadsItsOwnArguments) {
  Compiled compiled = Compile(R"(
HloModule add
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT m = f32[4] multiply(s, a)
})");
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> runner =
      LoadProgram(serialized->bytes, ResolverOf(*serialized));
  ASSERT_TRUE(runner.ok()) << runner.status();
  const float first_a[4] = {1, 2, 3, 4};
  const float first_b[4] = {10, 20, 30, 40};
  const float second_a[4] = {-1, 0.5f, 2, 0};
  const float second_b[4] = {3, 3, 3, 3};
  float first[4] = {};
  float second[4] = {};
  ASSERT_TRUE((*runner)->Run({first_a, first_b}, {first}).ok());
  ASSERT_TRUE((*runner)->Run({second_a, second_b}, {second}).ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(first[i], (first_a[i] + first_b[i]) * first_a[i]) << i;
    EXPECT_EQ(second[i], (second_a[i] + second_b[i]) * second_a[i]) << i;
  }
}

TEST(ProgramSerializationTest, AThunkThatKeepsItsHloIsRefusedNamingTheOp) {
  Compiled compiled = Compile(R"(
HloModule chol
ENTRY e {
  x = f32[3,3] parameter(0)
  ROOT r = f32[3,3] cholesky(x), lower=true
})");
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_FALSE(serialized.ok());
  EXPECT_EQ(serialized.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(serialized.status().message().find("cholesky"), std::string::npos)
      << serialized.status();
}

TEST(ProgramSerializationTest, MalformedBytesAreErrors) {
  Compiled compiled = Compile(R"(
HloModule small
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] exponential(x)
})");
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  EXPECT_FALSE(LoadProgram("not a program", resolver).ok());
  // Every truncation is an error.
  for (size_t size = 0; size < serialized->bytes.size(); size += 7) {
    EXPECT_FALSE(LoadProgram(serialized->bytes.substr(0, size), resolver).ok()) << size;
  }
  // A kernel the resolver does not know.
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> missing =
      LoadProgram(serialized->bytes, [](absl::string_view symbol) -> absl::StatusOr<void*> {
        return absl::NotFoundError(std::string(symbol));
      });
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(serialized->symbols.at(0)), std::string::npos)
      << missing.status();
}

constexpr absl::string_view kDynamicUpdateSlice = R"(
HloModule dus
ENTRY e {
  p = f32[64,16] parameter(0)
  u = f32[3,5] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  x = f32[64,16] add(p, p)
  ROOT update_window = f32[64,16] dynamic-update-slice(x, u, i, j)
})";

std::vector<Literal> DynamicUpdateSliceArguments(int32_t i, int32_t j) {
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {64, 16}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {3, 5}), 2));
  arguments.push_back(LiteralUtil::CreateR0<int32_t>(i));
  arguments.push_back(LiteralUtil::CreateR0<int32_t>(j));
  return arguments;
}

TEST(ProgramSerializationTest, DynamicUpdateSlice) {
  // Starts inside, clamped high and clamped low.
  for (auto [i, j] : {std::pair{7, 3}, std::pair{62, 40}, std::pair{-3, -1}}) {
    ExpectRoundTrip(kDynamicUpdateSlice, DynamicUpdateSliceArguments(i, j));
  }
}

TEST(ProgramSerializationTest, DynamicUpdateSliceInAWhileLoop) {
  // An RNN's output sequence: one row per step, written in place into the
  // loop state.
  ExpectRoundTrip(R"(
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
})",
                  {SeededF32Values(ShapeUtil::MakeShape(F32, {64, 16}), 3)});
}

TEST(ProgramSerializationTest, ACorruptedDynamicUpdateSliceIsAnError) {
  Compiled compiled = Compile(kDynamicUpdateSlice);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  // The thunk's fields follow its name: operand dims (count 2, 64, 16),
  // update dims (count 2, 3, 5), element bytes, start type, start vector,
  // operand, update, start values (count 2, i, j) and output.
  // (The last occurrence of its name: the values' names come first.)
  const std::string name = "update_window";
  const size_t at = serialized->bytes.rfind(name);
  ASSERT_NE(at, std::string::npos);
  const size_t fields = at + name.size();
  ASSERT_EQ(WordAt(serialized->bytes, fields), 2);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 8), 64);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 32), 3);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 48), 4);
  const size_t operand = fields + 72, output = fields + 112;
  const std::vector<Corruption> corruptions = {
      {fields + 8, 65, "values whose sizes"},    // an operand dim its value cannot hold
      {fields + 16, -1, "outside its operand"},  // a negative operand dim
      {fields + 32, 65, "outside its operand"},  // an update dim above the operand's
      {fields + 48, 3, "elements of 3 bytes"},   // element bytes
      {fields + 56, static_cast<int64_t>(F32), "start indices of type"},
      {fields + 56, 9999, "start indices of type"},
      {fields + 88, 1, "start index count"},  // one start for rank 2
      {operand, 1 << 20, "value 1048576"},    // a value id out of range
      {output, -1, "value -1"},
      {fields, 1 << 30, "count"},  // dims the bytes cannot hold
  };
  ExpectCorruptionsFail(serialized->bytes, resolver, corruptions);
  // Every truncation inside the thunk is an error too.
  for (size_t size = at; size < output + 8; ++size) {
    EXPECT_FALSE(LoadProgram(serialized->bytes.substr(0, size), resolver).ok()) << size;
  }
}

constexpr absl::string_view kTopK = R"(
HloModule topk
ENTRY e {
  x = f32[6,40] parameter(0)
  y = s32[3,9] parameter(1)
  largest = (f32[6,5], s32[6,5]) topk(x), k=5, largest=true
  smallest = (s32[3,4], s32[3,4]) topk(y), k=4, largest=false
  a = f32[6,5] get-tuple-element(largest), index=0
  b = s32[6,5] get-tuple-element(largest), index=1
  c = s32[3,4] get-tuple-element(smallest), index=0
  d = s32[3,4] get-tuple-element(smallest), index=1
  ROOT t = (f32[6,5], s32[6,5], s32[3,4], s32[3,4]) tuple(a, b, c, d)
})";

TEST(ProgramSerializationTest, TopK) {
  Literal ints(ShapeUtil::MakeShape(S32, {3, 9}));
  for (int64_t i = 0; i < 27; ++i) static_cast<int32_t*>(ints.untyped_data())[i] = (i * 7) % 5;
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {6, 40}), 4));
  arguments.push_back(std::move(ints));
  ExpectRoundTrip(kTopK, arguments);
}

TEST(ProgramSerializationTest, ACorruptedTopKIsAnError) {
  Compiled compiled = Compile(kTopK);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  // The fields after the name: type, rows, length, k, largest, input,
  // values, indices.
  const std::string name = "largest";
  const size_t at = serialized->bytes.rfind(name);
  ASSERT_NE(at, std::string::npos);
  const size_t fields = at + name.size();
  ASSERT_EQ(WordAt(serialized->bytes, fields), static_cast<int64_t>(F32));
  ASSERT_EQ(WordAt(serialized->bytes, fields + 8), 6);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 16), 40);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 24), 5);
  const std::vector<Corruption> corruptions = {
      {fields, static_cast<int64_t>(C64), "elements of type"},
      {fields, -7, "elements of type"},
      {fields + 8, 7, "sizes do not match"},
      {fields + 8, int64_t{1} << 40, "rows of"},
      {fields + 16, -1, "rows of"},
      {fields + 24, 41, "k=41"},
      {fields + 24, 4, "sizes do not match"},
      {fields + 40, 1 << 20, "value 1048576"},
  };
  ExpectCorruptionsFail(serialized->bytes, resolver, corruptions);
}

// JAX's argsort of each row (NaNs to one NaN, -0 to +0, then a total-order
// LT on the keys, the indices carried along), and a descending s32 sort.
constexpr absl::string_view kKeySorts = R"(
HloModule sorts
cmp {
  a = f32[] parameter(0)
  ne.a = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq.a = pred[] compare(a, zero), direction=EQ
  s0.a = f32[] select(eq.a, zero, a)
  s1.a = f32[] select(ne.a, qnan, s0.a)
  b = f32[] parameter(1)
  ne.b = pred[] compare(b, b), direction=NE
  eq.b = pred[] compare(b, zero), direction=EQ
  s0.b = f32[] select(eq.b, zero, b)
  s1.b = f32[] select(ne.b, qnan, s0.b)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  ROOT lt = pred[] compare(s1.a, s1.b), direction=LT, type=TOTALORDER
}
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[6,37] parameter(0)
  y = s32[4,3,9] parameter(1)
  i = s32[6,37] iota(), iota_dimension=1
  argsort_rows = (f32[6,37], s32[6,37]) sort(x, i), dimensions={1}, to_apply=cmp, is_stable=true
  sorted = f32[6,37] get-tuple-element(argsort_rows), index=0
  order = s32[6,37] get-tuple-element(argsort_rows), index=1
  down = s32[4,3,9] sort(y), dimensions={1}, to_apply=gt
  ROOT t = (f32[6,37], s32[6,37], s32[4,3,9]) tuple(sorted, order, down)
})";

std::vector<Literal> KeySortArguments() {
  Literal x = SeededF32Values(ShapeUtil::MakeShape(F32, {6, 37}), 5);
  auto* data = static_cast<float*>(x.untyped_data());
  // NaNs of both signs, both zeros and ties.
  data[3] = std::nanf("");
  data[5] = -std::nanf("");
  data[7] = 0.0F;
  data[9] = -0.0F;
  data[40] = data[41] = data[42];
  Literal y(ShapeUtil::MakeShape(S32, {4, 3, 9}));
  for (int64_t i = 0; i < 108; ++i) {
    static_cast<int32_t*>(y.untyped_data())[i] = static_cast<int32_t>((i * 37) % 11) - 5;
  }
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  arguments.push_back(std::move(y));
  return arguments;
}

TEST(ProgramSerializationTest, SortsByNativeKeys) {
  ExpectRoundTrip(kKeySorts, KeySortArguments());
}

TEST(ProgramSerializationTest, ACorruptedSortIsAnError) {
  Compiled compiled = Compile(kKeySorts);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  // The fields after the name: outer, length, inner, element bytes (count
  // 2, 4, 4), operands (count 2, two ids), outputs (count 2, two ids), the
  // key type, descending and the replacements (count 2, ...).
  const std::string name = "argsort_rows";
  const size_t at = serialized->bytes.rfind(name);
  ASSERT_NE(at, std::string::npos);
  const size_t fields = at + name.size();
  ASSERT_EQ(WordAt(serialized->bytes, fields), 6);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 8), 37);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 16), 1);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 24), 2);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 32), 4);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 96), static_cast<int64_t>(F32));
  const std::vector<Corruption> corruptions = {
      {fields, 7, "sizes do not match"},
      {fields + 8, -2, "slices of"},
      {fields + 16, int64_t{1} << 60, "slices of"},
      {fields + 32, 8, "another size than"},  // keys of 8 bytes for f32
      {fields + 40, 3, "elements of 3 bytes"},
      {fields + 56, 1 << 20, "value 1048576"},
      {fields + 96, static_cast<int64_t>(C64), "key order of type"},
      {fields + 96, static_cast<int64_t>(S64), "another size than"},
      {fields + 112, int64_t{1} << 40, "count"},  // replacements the bytes cannot hold
  };
  ExpectCorruptionsFail(serialized->bytes, resolver, corruptions);
}

// RFFT, FFT and IRFFT in f32 (the 16-lane lines and KISS FFT's odd
// lengths) and an RFFT in f64.
constexpr absl::string_view kFfts = R"(
HloModule ffts
ENTRY e {
  x = f32[3,16,12] parameter(0)
  spectrum = c64[3,16,7] fft(x), fft_type=RFFT, fft_length={16,12}
  rows = c64[3,16,7] fft(spectrum), fft_type=FFT, fft_length={7}
  back = f32[3,16,12] fft(rows), fft_type=IRFFT, fft_length={16,12}
  xd = f64[3,16,12] convert(x)
  wide = c128[3,16,7] fft(xd), fft_type=RFFT, fft_length={16,12}
  ROOT t = (f32[3,16,12], c128[3,16,7]) tuple(back, wide)
})";

TEST(ProgramSerializationTest, Ffts) {
  ExpectRoundTrip(kFfts, {SeededF32Values(ShapeUtil::MakeShape(F32, {3, 16, 12}), 6)});
}

TEST(ProgramSerializationTest, ACorruptedFftIsAnError) {
  Compiled compiled = Compile(kFfts);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  // The fields after the name: f64, type, lengths (count 2, 16, 12),
  // batch, operand and result.
  const std::string name = "spectrum";
  const size_t at = serialized->bytes.rfind(name);
  ASSERT_NE(at, std::string::npos);
  const size_t fields = at + name.size();
  ASSERT_EQ(WordAt(serialized->bytes, fields), 0);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 8), static_cast<int64_t>(RFFT));
  ASSERT_EQ(WordAt(serialized->bytes, fields + 16), 2);
  ASSERT_EQ(WordAt(serialized->bytes, fields + 40), 3);
  const std::vector<Corruption> corruptions = {
      {fields, 1, "sizes do not match"},  // f64 on f32 values
      {fields + 8, 4, "fft type 4"},
      {fields + 8, static_cast<int64_t>(FFT), "sizes do not match"},
      {fields + 24, 0, "a length of 0"},
      {fields + 24, int64_t{1} << 29, "a length of"},
      {fields + 32, 13, "sizes do not match"},
      {fields + 40, -1, "a batch of -1"},
      {fields + 40, int64_t{1} << 50, "a batch of"},
      {fields + 48, 1 << 20, "value 1048576"},
  };
  ExpectCorruptionsFail(serialized->bytes, resolver, corruptions);
}

}  // namespace
}  // namespace axle::cpu
