// fft on the cpu platform (fft_thunk.cc) agrees with the interpreter's
// direct DFT (axle/eval/fft.cc): every fft_type, fft_length of rank 1-3
// with odd, even and prime extents, batch dimensions, c64 and c128; RFFT
// then IRFFT gives the input back; a batch large enough to be split across
// the pool, and single transforms whose passes are split; one executable
// run from several threads at once.
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// A literal of `shape` with entries uniform in [-1, 1] (both parts).
Literal RandomLiteral(const Shape& shape, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (primitive_util::IsComplexType(shape.element_type())) {
      const double re = uniform(rng);
      literal.SetFromComplex128(i, complex128(re, uniform(rng)));
    } else {
      literal.SetFromDouble(i, uniform(rng));
    }
  }
  return literal;
}

struct FftCase {
  const char* type;  // FFT, IFFT, RFFT, IRFFT
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
  bool wide;  // c128 / f64
};

// The module `p = operand; ROOT fft(p)` of `c`, and its operand's shape.
std::string FftModule(const FftCase& c, Shape* operand) {
  const std::string type = c.type;
  const bool real_in = type == "RFFT", real_out = type == "IRFFT";
  std::vector<int64_t> in_dims = c.batch, out_dims = c.batch;
  for (int64_t l : c.lengths) {
    in_dims.push_back(l);
    out_dims.push_back(l);
  }
  if (real_in) out_dims.back() = c.lengths.back() / 2 + 1;
  if (real_out) in_dims.back() = c.lengths.back() / 2 + 1;
  const PrimitiveType complex_type = c.wide ? C128 : C64, real_type = c.wide ? F64 : F32;
  *operand = ShapeUtil::MakeShape(real_in ? real_type : complex_type, in_dims);
  const Shape result = ShapeUtil::MakeShape(real_out ? real_type : complex_type, out_dims);
  return absl::StrCat("HloModule fft\nENTRY e {\n  p = ", operand->ToString(),
                      " parameter(0)\n  ROOT f = ", result.ToString(), " fft(p), fft_type=", type,
                      ", fft_length={", absl::StrJoin(c.lengths, ","), "}\n}\n");
}

ErrorSpec FftError(const FftCase& c) {
  return c.wide ? ErrorSpec(1e-9, 1e-9) : ErrorSpec(1e-4, 1e-4);
}

TEST(CpuFftTest, AgreesWithTheInterpreter) {
  const std::vector<std::vector<int64_t>> lengths = {
      {1},    {5},     {7},     {12},      {64},      {97},     {2, 3},
      {5, 7}, {12, 4}, {97, 6}, {3, 5, 7}, {4, 6, 8}, {2, 1, 3}};
  const std::vector<std::vector<int64_t>> batches = {{}, {3}, {2, 2}};
  int seed = 0;
  for (const char* type : {"FFT", "IFFT", "RFFT", "IRFFT"}) {
    for (size_t i = 0; i < lengths.size(); ++i) {
      for (bool wide : {false, true}) {
        FftCase c{type, batches[(i + wide) % batches.size()], lengths[i], wide};
        Shape operand;
        const std::string text = FftModule(c, &operand);
        SCOPED_TRACE(text);
        std::vector<Literal> arguments;
        arguments.push_back(RandomLiteral(operand, ++seed));
        testing::ExpectCpuAgrees(text, arguments, FftError(c));
      }
    }
  }
}

// IRFFT(RFFT(x)) = x, on the cpu platform alone, 1-3 d, f32 and f64.
TEST(CpuFftTest, RealRoundTrip) {
  for (const char* type : {"f32", "f64"}) {
    for (const char* dims : {"[4,10]", "[2,9,6]", "[3,5,7]"}) {
      const bool wide = std::string(type) == "f64";
      const std::string x = absl::StrCat(type, dims);
      std::string lengths, spectrum;
      if (std::string(dims) == "[4,10]") {
        lengths = "{10}";
        spectrum = "[4,6]";
      } else if (std::string(dims) == "[2,9,6]") {
        lengths = "{9,6}";
        spectrum = "[2,9,4]";
      } else {
        lengths = "{3,5,7}";
        spectrum = "[3,5,4]";
      }
      const std::string text =
          absl::StrCat("HloModule roundtrip\nENTRY e {\n  x = ", x,
                       " parameter(0)\n  f = ", wide ? "c128" : "c64", spectrum,
                       " fft(x), fft_type=RFFT, fft_length=", lengths, "\n  ROOT y = ", x,
                       " fft(f), fft_type=IRFFT, fft_length=", lengths, "\n}\n");
      SCOPED_TRACE(text);
      std::vector<Literal> arguments;
      absl::StatusOr<Shape> shape = ParseShape(x);
      ASSERT_TRUE(shape.ok()) << shape.status();
      arguments.push_back(RandomLiteral(*shape, 3));
      absl::StatusOr<Literal> back = testing::RunOn("cpu", text, arguments);
      ASSERT_TRUE(back.ok()) << back.status();
      absl::Status near =
          LiteralsNear(arguments[0], *back, wide ? ErrorSpec(1e-12, 1e-12) : ErrorSpec(1e-5, 1e-5));
      EXPECT_TRUE(near.ok()) << near;
    }
  }
}

// c64[16,64,64] FFT {64,64}: enough work for the batch to be split across
// the intra-op pool.
constexpr char kBatched[] = R"(
HloModule batched
ENTRY e {
  p = c64[16,64,64] parameter(0)
  ROOT f = c64[16,64,64] fft(p), fft_type=FFT, fft_length={64,64}
})";

TEST(CpuFftTest, ParallelBatch) {
  std::vector<Literal> arguments;
  arguments.push_back(RandomLiteral(ShapeUtil::MakeShape(C64, {16, 64, 64}), 5));
  testing::ExpectCpuAgrees(kBatched, arguments, ErrorSpec(1e-3, 1e-4));
}

// Single transforms large enough for their passes to be split across the
// pool (fewer batch elements than threads): 2-d FFT, 2-d RFFT with a
// Bluestein length and an odd-factor real length, 3-d IRFFT.
TEST(CpuFftTest, ParallelWithinOneTransform) {
  const std::vector<FftCase> cases = {
      {"FFT", {}, {128, 128}, false},
      {"RFFT", {}, {97, 98}, true},
      {"IRFFT", {}, {24, 20, 32}, false},
  };
  int seed = 100;
  for (const FftCase& c : cases) {
    Shape operand;
    const std::string text = FftModule(c, &operand);
    SCOPED_TRACE(text);
    std::vector<Literal> arguments;
    arguments.push_back(RandomLiteral(operand, ++seed));
    testing::ExpectCpuAgrees(text, arguments,
                             c.wide ? ErrorSpec(1e-9, 1e-9) : ErrorSpec(1e-3, 1e-4));
  }
}

// Many f32 power-of-two lines (fft_lines.h, 16 at a time): whole blocks,
// tails, columns and rows, real lines through their half-length transform.
TEST(CpuFftTest, ManyPowerOfTwoLinesAgreeWithTheInterpreter) {
  struct Case {
    const char* operand;
    const char* result;
    const char* fft;
  };
  const Case cases[] = {
      {"c64[3,32,64]", "c64[3,32,64]", "fft_type=FFT, fft_length={32,64}"},
      {"c64[2,16,8,32]", "c64[2,16,8,32]", "fft_type=IFFT, fft_length={16,8,32}"},
      {"f32[8,64,64]", "c64[8,64,33]", "fft_type=RFFT, fft_length={64,64}"},
      {"c64[8,64,33]", "f32[8,64,64]", "fft_type=IRFFT, fft_length={64,64}"},
      {"f32[37,256]", "c64[37,129]", "fft_type=RFFT, fft_length={256}"},
      {"c64[21,129]", "f32[21,256]", "fft_type=IRFFT, fft_length={256}"},
      {"c64[5,40,16]", "c64[5,40,16]", "fft_type=FFT, fft_length={40,16}"},
  };
  int seed = 0;
  for (const Case& c : cases) {
    const std::string text =
        absl::StrCat("HloModule fft\nENTRY e {\n  p = ", c.operand,
                     " parameter(0)\n  ROOT f = ", c.result, " fft(p), ", c.fft, "\n}\n");
    SCOPED_TRACE(text);
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const Shape& operand = (*module)->entry_computation()->parameter_instruction(0)->shape();
    std::vector<Literal> arguments;
    arguments.push_back(RandomLiteral(operand, ++seed));
    testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-3, 1e-4));
  }
}

// The plans are shared by concurrent runs of one executable; each run's
// scratch is its own.
TEST(CpuFftTest, ConcurrentRuns) {
  auto executable = testing::CompileOn("cpu", kBatched);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<Literal>> arguments(4);
  std::vector<Literal> expected;
  for (int t = 0; t < 4; ++t) {
    arguments[t].push_back(RandomLiteral(ShapeUtil::MakeShape(C64, {16, 64, 64}), 10 + t));
    absl::StatusOr<Literal> alone = testing::RunExecutable("cpu", **executable, arguments[t]);
    ASSERT_TRUE(alone.ok()) << alone.status();
    expected.push_back(std::move(*alone));
  }
  std::vector<absl::Status> results(4);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 3 && results[t].ok(); ++repeat) {
        absl::StatusOr<Literal> got = testing::RunExecutable("cpu", **executable, arguments[t]);
        results[t] = got.ok() ? LiteralsEqual(expected[t], *got) : got.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(results[t].ok()) << "thread " << t << ": " << results[t];
}

}  // namespace
}  // namespace axle
