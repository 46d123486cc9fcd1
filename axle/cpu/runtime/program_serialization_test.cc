// A compiled cpu program serialized (program_serialization.h), loaded back
// without its HloModule (the kernels resolved by symbol), run, and compared
// bit for bit with the executable it came from: loop and reduction
// kernels, the dot paths (emitted loop, small dot, oneDNN), convolutions,
// while and conditional; a program with a thunk that keeps its HLO is
// refused naming the op; truncated bytes, a wrong magic and an unknown
// kernel are errors.
#include "axle/cpu/runtime/program_serialization.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using ::axle::testing::CompileOn;
using ::axle::testing::RunExecutable;
using ::axle::testing::SeededF32Values;

struct Compiled {
  std::unique_ptr<LocalExecutable> executable;
  const CpuExecutable* cpu = nullptr;
};

Compiled Compile(absl::string_view text) {
  SetKeepSerializableState(true);
  Compiled compiled;
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable = CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return compiled;
  compiled.executable = std::move(*executable);
  compiled.cpu = dynamic_cast<const CpuExecutable*>(compiled.executable->executable());
  EXPECT_NE(compiled.cpu, nullptr);
  return compiled;
}

// A resolver over the symbols and addresses SerializeProgram reported.
KernelResolver ResolverOf(const SerializedProgram& serialized) {
  std::map<std::string, void*> table;
  for (size_t i = 0; i < serialized.symbols.size(); ++i) {
    table[serialized.symbols[i]] = serialized.addresses[i];
  }
  return [table](absl::string_view symbol) -> absl::StatusOr<void*> {
    auto it = table.find(std::string(symbol));
    if (it == table.end()) return absl::NotFoundError(std::string(symbol));
    return it->second;
  };
}

// The array leaves of `literal` in pre-order.
std::vector<Literal> Leaves(const Literal& literal) {
  std::vector<Literal> leaves;
  ShapeUtil::ForEachLeafShape(literal.shape(), [&](const Shape& shape, const ShapeIndex& index) {
    if (shape.IsArray()) leaves.push_back(literal.GetSubliteral(index).Clone());
  });
  return leaves;
}

// Serializes `text`'s program, loads it, runs both on `arguments` (twice
// for the loaded one) and expects the same bytes. Returns the serialized
// program's symbols.
std::vector<std::string> ExpectRoundTrip(absl::string_view text,
                                         const std::vector<Literal>& arguments) {
  Compiled compiled = Compile(text);
  if (compiled.cpu == nullptr) return {};
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  EXPECT_TRUE(serialized.ok()) << serialized.status();
  if (!serialized.ok()) return {};
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> runner =
      LoadProgram(serialized->bytes, ResolverOf(*serialized));
  EXPECT_TRUE(runner.ok()) << runner.status();
  if (!runner.ok()) return {};
  absl::StatusOr<Literal> expected = RunExecutable("cpu", *compiled.executable, arguments);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (!expected.ok()) return {};
  std::vector<Literal> expected_leaves = Leaves(*expected);
  EXPECT_EQ((*runner)->argument_bytes().size(), arguments.size());
  EXPECT_EQ((*runner)->result_bytes().size(), expected_leaves.size());
  if ((*runner)->result_bytes().size() != expected_leaves.size()) return {};
  std::vector<const void*> args;
  for (const Literal& argument : arguments) args.push_back(argument.untyped_data());
  for (int run = 0; run < 2; ++run) {
    std::vector<std::vector<char>> storage;
    std::vector<void*> results;
    for (int64_t bytes : (*runner)->result_bytes()) storage.emplace_back(bytes, '\x5a');
    for (auto& buffer : storage) results.push_back(buffer.data());
    absl::Status status = (*runner)->Run(args, results);
    EXPECT_TRUE(status.ok()) << status;
    for (size_t i = 0; i < expected_leaves.size(); ++i) {
      const Literal& leaf = expected_leaves[i];
      EXPECT_EQ(static_cast<int64_t>(storage[i].size()), leaf.size_bytes()) << "leaf " << i;
      if (static_cast<int64_t>(storage[i].size()) != leaf.size_bytes()) continue;
      EXPECT_EQ(std::memcmp(storage[i].data(), leaf.untyped_data(), leaf.size_bytes()), 0)
          << "leaf " << i << " of run " << run << " differs from the executable's " << leaf;
    }
  }
  return serialized->symbols;
}

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

TEST(ProgramSerializationTest, Dots) {
  // [4,16]x[16,8] (emitted loop) with bias and relu; [8,256]x[256,64] (small
  // dot where the CPU has AVX-512, else oneDNN); [64,256]x[256,256] (oneDNN),
  // each with a constant rhs, and one with both operands parameters.
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
  ROOT t = (f32[4,8], f32[8,64], f32[64,256]) tuple(relu, db, dc)
})",
      {SeededF32Values(a, 1), SeededF32Values(b, 2), SeededF32Values(c, 3), SeededF32Values(w, 4)});
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
  ROOT t = (f32[2,12,12,16], f32[1,4,4,1]) tuple(y, z)
})",
                  {SeededF32Values(input, 1), SeededF32Values(small, 2)});
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

}  // namespace
}  // namespace axle::cpu
