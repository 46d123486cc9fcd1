// The rng thunks serialized (program_serialization.h), loaded back without
// their module and run: rng-bit-generator (Philox and threefry, XLA's
// bits), rng (uniform floats and integers, normal floats) and
// rng-get-and-update-state agree bit for bit with the executable they
// came from and with the interpreter (one engine per run, seeded with 0,
// drawn in the interpreter's order). Truncations and corrupted fields are
// errors that say what is wrong.
#include <string>
#include <vector>

#include "axle/cpu/runtime/program_serialization_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr absl::string_view kRngs = R"(
HloModule rngs
ENTRY e {
  s = u64[2] parameter(0)
  philox_bits = (u64[2], u32[8,6]) rng-bit-generator(s), algorithm=rng_philox
  threefry_bits = (u64[2], f32[5,4]) rng-bit-generator(s), algorithm=rng_three_fry
  p0 = u64[2] get-tuple-element(philox_bits), index=0
  p1 = u32[8,6] get-tuple-element(philox_bits), index=1
  t0 = u64[2] get-tuple-element(threefry_bits), index=0
  t1 = f32[5,4] get-tuple-element(threefry_bits), index=1
  lo = f32[] constant(-1)
  hi = f32[] constant(2)
  uniform = f32[30] rng(lo, hi), distribution=rng_uniform
  ilo = s32[] constant(-5)
  ihi = s32[] constant(100)
  ints = s32[20] rng(ilo, ihi), distribution=rng_uniform
  normal = f32[9] rng(lo, hi), distribution=rng_normal
  counter = u64[2] rng-get-and-update-state(), delta=5
  ROOT t = (u64[2], u32[8,6], u64[2], f32[5,4], f32[30], s32[20], f32[9], u64[2]) tuple(p0, p1, t0, t1, uniform, ints, normal, counter)
})";

std::vector<Literal> RngArguments() {
  Literal state(ShapeUtil::MakeShape(U64, {2}));
  static_cast<uint64_t*>(state.untyped_data())[0] = 0x0123456789abcdefULL;
  static_cast<uint64_t*>(state.untyped_data())[1] = 42;
  std::vector<Literal> arguments;
  arguments.push_back(std::move(state));
  return arguments;
}

TEST(RngSerializationTest, RngThunksRoundTrip) {
  ExpectRoundTrip(kRngs, RngArguments());
  ExpectInterpreterAgrees(kRngs, RngArguments());
}

TEST(RngSerializationTest, CorruptedRngThunksAreErrors) {
  Compiled compiled = Compile(kRngs);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  const std::string& bytes = serialized->bytes;
  // rng-bit-generator: the algorithm, the state's size, the bits' shape
  // (type, dims count 2, 8, 6, has layout, layout count 2, 1, 0) and the
  // values (count 3, state, new state, bits).
  const size_t bits_at = bytes.rfind("philox_bits");
  ASSERT_NE(bits_at, std::string::npos);
  const size_t b = bits_at + std::string("philox_bits").size();
  ASSERT_EQ(WordAt(bytes, b), static_cast<int64_t>(RNG_PHILOX));
  ASSERT_EQ(WordAt(bytes, b + 8), 2);
  ASSERT_EQ(WordAt(bytes, b + 16), static_cast<int64_t>(U32));
  ASSERT_EQ(WordAt(bytes, b + 24), 2);
  ASSERT_EQ(WordAt(bytes, b + 32), 8);
  const size_t bits_values = b + 56 + (WordAt(bytes, b + 48) != 0 ? 24 : 0);
  ASSERT_EQ(WordAt(bytes, bits_values), 3);
  // rng: the distribution, the shape (f32, dims count 1, 30, layout) and
  // the values (count 3, low, high, output).
  const size_t rng_at = bytes.rfind("uniform");
  ASSERT_NE(rng_at, std::string::npos);
  const size_t r = rng_at + std::string("uniform").size();
  ASSERT_EQ(WordAt(bytes, r), static_cast<int64_t>(RNG_UNIFORM));
  ASSERT_EQ(WordAt(bytes, r + 8), static_cast<int64_t>(F32));
  ASSERT_EQ(WordAt(bytes, r + 24), 30);
  // rng-get-and-update-state: delta, elements, output.
  const size_t state_at = bytes.rfind("counter");
  ASSERT_NE(state_at, std::string::npos);
  const size_t c = state_at + std::string("counter").size();
  ASSERT_EQ(WordAt(bytes, c), 5);
  ASSERT_EQ(WordAt(bytes, c + 8), 2);
  const std::vector<Corruption> corruptions = {
      {b, 7, "algorithm 7"},
      {b + 8, 0, "a state of 0"},
      {b + 8, 3, "values whose sizes"},
      {b + 16, 9999, "element type 9999"},
      {b + 32, 9, "values whose sizes"},
      {b + 32, -8, "negative dimension"},
      {bits_values + 8, 1 << 20, "value 1048576"},
      {r, 0, "distribution 0"},
      {r, static_cast<int64_t>(RNG_NORMAL) + 5, "distribution 7"},
      {r + 8, static_cast<int64_t>(PRED), "distribution 1 of pred"},
      {r + 8, static_cast<int64_t>(F64), "values whose sizes"},
      {r + 24, 31, "values whose sizes"},
      {c + 8, 0, "0 elements"},
      {c + 8, 3, "3 elements"},
      {c + 16, -1, "value -1"},
  };
  ExpectCorruptionsFail(bytes, resolver, corruptions);
  for (size_t at : {bits_at, rng_at, state_at}) {
    for (size_t size = at; size < at + 48; ++size) {
      EXPECT_FALSE(LoadProgram(bytes.substr(0, size), resolver).ok()) << size;
    }
  }
}

}  // namespace
}  // namespace axle::cpu
