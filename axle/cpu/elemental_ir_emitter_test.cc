//===- elemental_ir_emitter_test.cc - Every elementwise op vs the interpreter =//
//
// For each element type, one module computes every op that applies to the
// type as one multi-output loop kernel (one LLVM compile per type), on
// inputs full of corner cases; each output is compared with the reference
// interpreter: exactly for integers, pred and IEEE-exact float ops, within
// a tolerance for the transcendental functions.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

namespace pu = primitive_util;
using testing::MakeTestLiteral;
using testing::RunAgainstInterpreter;

constexpr int kN = 96;

// Builds `ENTRY { x, y, (z), outputs..., ROOT tuple }` where each output is
// "<result type> <op>(<operands>)<attributes>".
struct ModuleText {
  std::string type;
  std::vector<std::string> lines;
  std::vector<std::string> outputs;

  explicit ModuleText(PrimitiveType t) : type(std::string(pu::LowercasePrimitiveTypeName(t))) {}
  std::string Array(absl::string_view element_type) const {
    return absl::StrCat(element_type, "[", kN, "]");
  }
  void Add(absl::string_view result_type, absl::string_view expression) {
    std::string name = absl::StrCat("r", outputs.size());
    lines.push_back(absl::StrCat("  ", name, " = ", Array(result_type), " ", expression));
    outputs.push_back(absl::StrCat(Array(result_type), " ", name));
  }
  std::string Text(int parameters) const {
    std::string text = "HloModule m\nENTRY e {\n";
    const char* names[] = {"x", "y", "z"};
    for (int i = 0; i < parameters; ++i) {
      absl::StrAppend(&text, "  ", names[i], " = ", Array(type), " parameter(", i, ")\n");
    }
    for (const std::string& line : lines) absl::StrAppend(&text, line, "\n");
    std::vector<std::string> types, names_out;
    for (const std::string& output : outputs) {
      types.push_back(output.substr(0, output.find(' ')));
      names_out.push_back(output.substr(output.find(' ') + 1));
    }
    absl::StrAppend(&text, "  ROOT t = (", absl::StrJoin(types, ", "), ") tuple(",
                    absl::StrJoin(names_out, ", "), ")\n}\n");
    return text;
  }
};

// Runs `module` and compares output i with `tolerance[i]` (nullopt: exact).
void ExpectMatches(const ModuleText& module, int parameters,
                   const std::vector<std::optional<ErrorSpec>>& tolerance) {
  auto run = RunAgainstInterpreter(module.Text(parameters));
  ASSERT_TRUE(run.ok()) << run.status() << "\n" << module.Text(parameters);
  ASSERT_EQ(run->actual.size(), tolerance.size());
  for (size_t i = 0; i < run->actual.size(); ++i) {
    const Literal& expected = run->expected[i];
    const Literal& actual = run->actual[i];
    const PrimitiveType type = expected.shape().element_type();
    absl::Status status;
    if (pu::IsFloatingPointType(type) || pu::IsComplexType(type)) {
      status = LiteralsNear(expected, actual, tolerance[i].value_or(ErrorSpec(0, 0)));
    } else {
      status = LiteralsEqual(expected, actual);
    }
    EXPECT_TRUE(status.ok()) << module.lines[i] << ": " << status;
  }
}

// The tolerance of transcendental functions for each float type: the f32
// result may differ by a few ulp, which the narrow types may round either way.
ErrorSpec TranscendentalTolerance(PrimitiveType type) {
  switch (type) {
    case F64:
      return ErrorSpec(1e-12, 1e-12);
    case F32:
      return ErrorSpec(1e-6, 1e-5);
    case F16:
      return ErrorSpec(1e-3, 1e-3);
    case BF16:
      return ErrorSpec(1e-2, 1e-2);
    default:
      return ErrorSpec(0.13, 0.13);
  }
}

class FloatOpsTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(FloatOpsTest, EveryOpMatchesTheInterpreter) {
  const PrimitiveType type = GetParam();
  ModuleText m(type);
  const std::string t = m.type;
  std::vector<std::optional<ErrorSpec>> tolerance;
  auto exact = [&](absl::string_view result_type, absl::string_view expression) {
    m.Add(result_type, expression);
    tolerance.push_back(std::nullopt);
  };
  auto approx = [&](absl::string_view expression) {
    m.Add(t, expression);
    tolerance.push_back(TranscendentalTolerance(type));
  };
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
    exact(t, absl::StrCat(op, "(x, y)"));
  }
  exact(t, "remainder(x, y)");
  for (const char* op : {"negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
                         "round-nearest-even", "sqrt", "copy"}) {
    exact(t, absl::StrCat(op, "(x)"));
  }
  exact("pred", "is-finite(x)");
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    exact("pred", absl::StrCat("compare(x, y), direction=", direction));
    exact("pred", absl::StrCat("compare(x, y), direction=", direction, ", type=TOTALORDER"));
  }
  for (const char* op : {"exponential", "log", "tanh", "logistic", "erf", "rsqrt", "cbrt",
                         "exponential-minus-one", "log-plus-one", "sine", "cosine", "tan"}) {
    approx(absl::StrCat(op, "(x)"));
  }
  approx("power(x, y)");
  approx("atan2(x, y)");
  exact(t, "clamp(y, x, z)");
  exact(t, "select(r25, x, y)");  // r25 = compare(x, y), direction=LT
  exact(t, "reduce-precision(x), exponent_bits=5, mantissa_bits=10");
  exact(t, "reduce-precision(x), exponent_bits=8, mantissa_bits=7");
  exact(t, "reduce-precision(x), exponent_bits=4, mantissa_bits=0");
  ExpectMatches(m, 3, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Types, FloatOpsTest,
                         ::testing::Values(F32, F64, F16, BF16, F8E4M3FN, F8E5M2),
                         [](const auto& info) {
                           return std::string(pu::LowercasePrimitiveTypeName(info.param));
                         });

class IntegerOpsTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(IntegerOpsTest, EveryOpMatchesTheInterpreter) {
  const PrimitiveType type = GetParam();
  ModuleText m(type);
  const std::string t = m.type;
  std::vector<std::optional<ErrorSpec>> tolerance;
  auto exact = [&](absl::string_view result_type, absl::string_view expression) {
    m.Add(result_type, expression);
    tolerance.push_back(std::nullopt);
  };
  for (const char* op :
       {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
        "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "power"}) {
    exact(t, absl::StrCat(op, "(x, y)"));
  }
  for (const char* op : {"negate", "abs", "sign", "not", "popcnt", "count-leading-zeros"}) {
    exact(t, absl::StrCat(op, "(x)"));
  }
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    exact("pred", absl::StrCat("compare(x, y), direction=", direction));
  }
  exact("pred", "compare(x, y), direction=LT, type=UNSIGNED");
  exact(t, "clamp(y, x, z)");
  exact(t, "select(r20, x, y)");  // r20 = compare(x, y), direction=EQ
  ExpectMatches(m, 3, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Types, IntegerOpsTest,
                         ::testing::Values(S8, S16, S32, S64, U8, U16, U32, U64, S4, U4, S2),
                         [](const auto& info) {
                           return std::string(pu::LowercasePrimitiveTypeName(info.param));
                         });

TEST(PredOpsTest, EveryOpMatchesTheInterpreter) {
  ModuleText m(PRED);
  std::vector<std::optional<ErrorSpec>> tolerance;
  for (const char* op : {"and", "or", "xor", "add", "multiply", "maximum", "minimum"}) {
    m.Add("pred", absl::StrCat(op, "(x, y)"));
  }
  m.Add("pred", "not(x)");
  for (const char* direction : {"EQ", "NE", "LT", "GT"}) {
    m.Add("pred", absl::StrCat("compare(x, y), direction=", direction));
  }
  m.Add("pred", "select(x, y, z)");
  tolerance.resize(m.outputs.size());
  ExpectMatches(m, 3, tolerance);
}

class ComplexOpsTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ComplexOpsTest, EveryOpMatchesTheInterpreter) {
  const PrimitiveType type = GetParam();
  ModuleText m(type);
  const std::string t = m.type;
  const std::string real = type == C64 ? "f32" : "f64";
  const ErrorSpec close = type == C64 ? ErrorSpec(1e-5, 1e-5) : ErrorSpec(1e-12, 1e-12);
  std::vector<std::optional<ErrorSpec>> tolerance;
  auto add = [&](absl::string_view result_type, absl::string_view expression,
                 std::optional<ErrorSpec> spec) {
    m.Add(result_type, expression);
    tolerance.push_back(spec);
  };
  for (const char* op : {"add", "subtract", "multiply"})
    add(t, absl::StrCat(op, "(x, y)"), std::nullopt);
  add(t, "divide(x, y)", close);
  add(t, "negate(x)", std::nullopt);
  add(real, "abs(x)", close);
  add(t, "sign(x)", close);
  add(t, "exponential(x)", close);
  add(t, "log(x)", close);
  add(real, "real(x)", std::nullopt);
  add(real, "imag(x)", std::nullopt);
  add("pred", "compare(x, y), direction=EQ", std::nullopt);
  add("pred", "compare(x, x), direction=NE", std::nullopt);
  add(t, "complex(r9, r10)", std::nullopt);
  // c64 sqrt inline (Kahan's formula in f64), c128's through a runtime helper.
  add(t, "sqrt(x)", type == C64 ? std::optional(close) : std::nullopt);
  // Through runtime helpers that compute as the interpreter does: exact.
  for (const char* op :
       {"rsqrt", "sine", "cosine", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh",
        "acosh", "atanh", "exponential-minus-one", "log-plus-one", "logistic"}) {
    add(t, absl::StrCat(op, "(x)"), std::nullopt);
  }
  add(t, "power(x, y)", std::nullopt);
  add(t, "atan2(x, y)", std::nullopt);
  ExpectMatches(m, 2, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Types, ComplexOpsTest, ::testing::Values(C64, C128), [](const auto& info) {
  return std::string(pu::LowercasePrimitiveTypeName(info.param));
});

// The switches over every opcode take the elementwise families
// (hlo_opcode_families.h) as whole lists; below them, the emitter's
// per-type switches (EmitFloatUnary, EmitIntegerBinary, ...) answer
// Unimplemented for an op they lack, since which types an op takes is not
// something a switch over opcodes can check at compile time. So that a new
// op of a list cannot go unnoticed there: every op of the unary and binary
// lists that the interpreter evaluates on the type must emit, and match it.
class FamiliesTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(FamiliesTest, EveryListedOpTheInterpreterEvaluatesEmits) {
  const PrimitiveType type = GetParam();
  ModuleText m(type);
  std::vector<std::optional<ErrorSpec>> tolerance;
  const std::vector<Literal> arguments = {MakeTestLiteral(ShapeUtil::MakeShape(type, {kN}), 1),
                                          MakeTestLiteral(ShapeUtil::MakeShape(type, {kN}), 2)};
  auto add_if_evaluated = [&](HloOpcode opcode, int arity) {
    const std::string expression =
        absl::StrCat(HloOpcodeString(opcode), arity == 1 ? "(x)" : "(x, y)");
    const std::string text = absl::StrCat("HloModule m\nENTRY e {\n  x = ", m.Array(m.type),
                                          " parameter(0)\n  y = ", m.Array(m.type),
                                          " parameter(1)\n  ROOT r = ", expression, "\n}\n");
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
    if (!module.ok() || !VerifyHloModule(**module).ok()) return;
    HloEvaluator evaluator;
    if (!evaluator.Evaluate(**module, {&arguments[0], &arguments[1]}).ok()) return;
    const PrimitiveType result =
        (*module)->entry_computation()->root_instruction()->shape().element_type();
    m.Add(pu::LowercasePrimitiveTypeName(result), expression);
    tolerance.push_back(pu::IsComplexType(type) ? std::optional(ErrorSpec(1e-5, 1e-5))
                        : pu::IsFloatingPointType(type)
                            ? std::optional(TranscendentalTolerance(type))
                            : std::nullopt);
  };
#define AXLE_ADD_UNARY_(e) add_if_evaluated(HloOpcode::e, 1);
#define AXLE_ADD_BINARY_(e) add_if_evaluated(HloOpcode::e, 2);
  AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_ADD_UNARY_)
  AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_ADD_BINARY_)
#undef AXLE_ADD_UNARY_
#undef AXLE_ADD_BINARY_
  ASSERT_GE(m.outputs.size(), 5u);
  ExpectMatches(m, 2, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Types, FamiliesTest, ::testing::Values(F32, S32, PRED, C64),
                         [](const auto& info) {
                           return std::string(pu::LowercasePrimitiveTypeName(info.param));
                         });

// convert from one type to every other type, in one kernel per source type.
class ConvertTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ConvertTest, ToEveryTypeMatchesTheInterpreter) {
  const PrimitiveType from = GetParam();
  ModuleText m(from);
  std::vector<std::optional<ErrorSpec>> tolerance;
  for (PrimitiveType to : {PRED, S4,  S8,   S16, S32, S64,      U4,     U8,         U16, U32,
                           U64,  F16, BF16, F32, F64, F8E4M3FN, F8E5M2, F8E4M3FNUZ, C64, C128}) {
    if (pu::IsComplexType(from) && !pu::IsComplexType(to)) continue;  // needs real/imag
    m.Add(pu::LowercasePrimitiveTypeName(to), "convert(x)");
    tolerance.push_back(std::nullopt);
  }
  ExpectMatches(m, 1, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Types, ConvertTest,
                         ::testing::Values(PRED, S4, S8, S32, S64, U8, U32, U64, F16, BF16, F32,
                                           F64, F8E4M3FN, F8E5M2, C64),
                         [](const auto& info) {
                           return std::string(pu::LowercasePrimitiveTypeName(info.param));
                         });

// f32 -> every 8- and 4-bit float the host rounds inline
// (cpu_target_hooks.cc), bit for bit the interpreter's encodings: every
// exponent from far below the least subnormal to past the largest finite
// value, each with the significand's top 9 bits in every combination and
// the bits below all zero, one, or all ones (ties to even at every
// position a format rounds at, and just either side of them), both signs;
// zeros, f32 subnormals, infinities, NaNs of either sign and payload; and
// random bit patterns.
TEST(NarrowFloatConvertTest, F32SweepIsTheInterpretersBitForBit) {
  std::vector<uint32_t> patterns = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu,
                                    0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                                    0x7f800001u, 0xffbfffffu, 0x7f7fffffu, 0xff7fffffu};
  for (uint32_t field = 90; field <= 160; ++field) {
    for (uint32_t top = 0; top < 512; ++top) {
      for (uint32_t low : {0u, 1u, 0x3fffu}) {
        const uint32_t bits = (field << 23) | (top << 14) | low;
        patterns.push_back(bits);
        patterns.push_back(bits | 0x80000000u);
      }
    }
  }
  uint64_t state = 7;
  for (int i = 0; i < 65536; ++i) {
    patterns.push_back(static_cast<uint32_t>(testing::NextRandom(state)));
  }
  const int64_t n = static_cast<int64_t>(patterns.size());
  const std::vector<PrimitiveType> types = {F8E5M2,        F8E4M3,     F8E3M4,     F8E4M3FN,
                                            F8E4M3B11FNUZ, F8E4M3FNUZ, F8E5M2FNUZ, F4E2M1FN};
  std::string text = absl::StrCat("HloModule m\nENTRY e {\n  x = f32[", n, "] parameter(0)\n");
  std::vector<std::string> outputs, names;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string array = absl::StrCat(pu::LowercasePrimitiveTypeName(types[i]), "[", n, "]");
    absl::StrAppend(&text, "  c", i, " = ", array, " convert(x)\n");
    outputs.push_back(array);
    names.push_back(absl::StrCat("c", i));
  }
  absl::StrAppend(&text, "  ROOT t = (", absl::StrJoin(outputs, ", "), ") tuple(",
                  absl::StrJoin(names, ", "), ")\n}\n");
  std::vector<Literal> inputs;
  inputs.emplace_back(Shape(F32, {n}));
  std::memcpy(inputs[0].untyped_data(), patterns.data(), patterns.size() * sizeof(uint32_t));
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t i = 0; i < types.size(); ++i) {
    const auto* expected = static_cast<const uint8_t*>(run->expected[i].untyped_data());
    const auto* actual = static_cast<const uint8_t*>(run->actual[i].untyped_data());
    int mismatches = 0;
    for (int64_t k = 0; k < run->expected[i].size_bytes(); ++k) {
      if (expected[k] == actual[k]) continue;
      if (++mismatches <= 5) {
        ADD_FAILURE() << pu::LowercasePrimitiveTypeName(types[i]) << " byte " << k << ": 0x"
                      << std::hex << static_cast<int>(actual[k]) << ", interpreter 0x"
                      << static_cast<int>(expected[k]) << " for f32 0x" << patterns[k] << std::dec;
      }
    }
    EXPECT_EQ(mismatches, 0) << pu::LowercasePrimitiveTypeName(types[i]);
  }
}

// The special values of the ops the host computes inline on c64 and f32
// (cpu_target_hooks.cc, math_ir.h): every pair of {+-0, 1, -2.5, 1e-40,
// 3e38, +-inf, NaN} as real and imaginary parts (and as numerator and
// denominator for divide), against the interpreter (std::complex, libm):
// a NaN where it has one, the same infinity, the same zero (with its sign
// for sqrt, atan2 and abs: C99 Annex G defines them), and within a few ulp
// otherwise; abs (glibc's hypotf) bit for bit.
TEST(ComplexInlineTest, SpecialValuesAreTheInterpreters) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {
      0.0f, -0.0f, 1.0f, -2.5f, 1e-40f, 3e38f, inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  std::vector<std::complex<float>> zs;
  for (float re : values) {
    for (float im : values) zs.emplace_back(re, im);
  }
  std::vector<std::complex<float>> xs, ys;
  for (const std::complex<float>& x : zs) {
    for (const std::complex<float>& y : zs) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  const std::string text = absl::StrCat(R"(
HloModule m
ENTRY e {
  x = c64[N] parameter(0)
  y = c64[N] parameter(1)
  q = c64[N] divide(x, y)
  s = c64[N] sqrt(x)
  l = c64[N] log(x)
  a = f32[N] abs(x)
  re = f32[N] real(x)
  im = f32[N] imag(x)
  t = f32[N] atan2(im, re)
  ROOT r = (c64[N], c64[N], c64[N], f32[N], f32[N]) tuple(q, s, l, a, t)
})");
  std::vector<Literal> inputs;
  for (const auto* source : {&xs, &ys}) {
    inputs.emplace_back(Shape(C64, {n}));
    std::memcpy(inputs.back().untyped_data(), source->data(), source->size() * sizeof(xs[0]));
  }
  auto run = RunAgainstInterpreter(absl::StrReplaceAll(text, {{"[N]", absl::StrCat("[", n, "]")}}),
                                   {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  // `ulps` < 0: bit for bit.
  auto check = [&](const char* what, float expected, float actual, int64_t i, int ulps,
                   bool zero_sign) {
    const std::string where = absl::StrCat(what, " of x=(", xs[i].real(), ",", xs[i].imag(),
                                           ") y=(", ys[i].real(), ",", ys[i].imag(), ")");
    if (std::isnan(expected) || std::isnan(actual)) {
      EXPECT_EQ(std::isnan(expected), std::isnan(actual)) << where << ": " << actual;
      return;
    }
    if (ulps < 0 || std::isinf(expected) || expected == 0) {
      if (expected == 0 && !zero_sign && ulps >= 0) {
        EXPECT_EQ(actual, 0.0f) << where;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(expected), std::bit_cast<uint32_t>(actual))
            << where << ": " << actual << ", interpreter " << expected;
      }
      return;
    }
    // Relative, or in units of the least denormal for denormal results.
    const float bound =
        std::max(std::abs(expected) * 1.2e-7f, std::numeric_limits<float>::denorm_min()) *
        static_cast<float>(ulps);
    EXPECT_LE(std::abs(actual - expected), bound)
        << where << ": " << actual << ", interpreter " << expected;
  };
  const auto* quotient = static_cast<const std::complex<float>*>(run->actual[0].untyped_data());
  const auto* quotient_ref =
      static_cast<const std::complex<float>*>(run->expected[0].untyped_data());
  const auto* root = static_cast<const std::complex<float>*>(run->actual[1].untyped_data());
  const auto* root_ref = static_cast<const std::complex<float>*>(run->expected[1].untyped_data());
  const auto* log = static_cast<const std::complex<float>*>(run->actual[2].untyped_data());
  const auto* log_ref = static_cast<const std::complex<float>*>(run->expected[2].untyped_data());
  const auto* abs = static_cast<const float*>(run->actual[3].untyped_data());
  const auto* abs_ref = static_cast<const float*>(run->expected[3].untyped_data());
  const auto* angle = static_cast<const float*>(run->actual[4].untyped_data());
  const auto* angle_ref = static_cast<const float*>(run->expected[4].untyped_data());
  for (int64_t i = 0; i < n; ++i) {
    // Finite quotients of values this far apart over- or underflow in
    // Smith's algorithm as in XLA's (3e38 / 3e38): checked for the
    // moderate values and every non-finite case.
    const bool extreme = std::abs(xs[i].real()) == 3e38f || std::abs(xs[i].imag()) == 3e38f ||
                         std::abs(ys[i].real()) == 3e38f || std::abs(ys[i].imag()) == 3e38f ||
                         std::abs(xs[i].real()) == 1e-40f || std::abs(xs[i].imag()) == 1e-40f ||
                         std::abs(ys[i].real()) == 1e-40f || std::abs(ys[i].imag()) == 1e-40f;
    if (!extreme) {
      check("divide.re", quotient_ref[i].real(), quotient[i].real(), i, 4, false);
      check("divide.im", quotient_ref[i].imag(), quotient[i].imag(), i, 4, false);
    }
    if (i % static_cast<int64_t>(zs.size()) != 0) continue;  // one-operand ops: each x once
    check("sqrt.re", root_ref[i].real(), root[i].real(), i, 2, true);
    check("sqrt.im", root_ref[i].imag(), root[i].imag(), i, 2, true);
    check("log.re", log_ref[i].real(), log[i].real(), i, 4, false);
    check("log.im", log_ref[i].imag(), log[i].imag(), i, 3, true);
    check("abs", abs_ref[i], abs[i], i, -1, true);
    check("atan2", angle_ref[i], angle[i], i, 3, true);
  }
}

// f32 atan2 and abs of c64 (hypot) over 2^16 random pairs of every sign
// and of magnitudes 2^-30 to 2^30 (quotients from far below to far above
// 1): atan2 within 2 ulp of the correctly rounded result (libm in
// double, rounded), abs bit for bit glibc's hypotf.
TEST(ComplexInlineTest, Atan2AndHypotSweep) {
  constexpr int64_t kPairs = 65536;
  std::vector<float> ys(kPairs), xs(kPairs);
  uint64_t state = 11;
  for (int64_t i = 0; i < kPairs; ++i) {
    auto draw = [&] {
      const uint64_t r = testing::NextRandom(state);
      const double mantissa = 1.0 + static_cast<double>(r >> 40) / 16777216.0;
      const int exponent = static_cast<int>((r >> 8) % 61) - 30;
      return static_cast<float>(((r & 1) != 0 ? -1.0 : 1.0) * std::ldexp(mantissa, exponent));
    };
    ys[i] = draw();
    xs[i] = draw();
  }
  const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  y = f32[N] parameter(0)
  x = f32[N] parameter(1)
  t = f32[N] atan2(y, x)
  z = c64[N] complex(x, y)
  a = f32[N] abs(z)
  ROOT r = (f32[N], f32[N]) tuple(t, a)
})",
                                               {{"[N]", absl::StrCat("[", kPairs, "]")}});
  std::vector<Literal> inputs;
  for (const auto* source : {&ys, &xs}) {
    inputs.emplace_back(Shape(F32, {kPairs}));
    std::memcpy(inputs.back().untyped_data(), source->data(), kPairs * sizeof(float));
  }
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto* angle = static_cast<const float*>(run->actual[0].untyped_data());
  const auto* modulus = static_cast<const float*>(run->actual[1].untyped_data());
  int64_t worst_ulps = 0, hypot_mismatches = 0;
  for (int64_t i = 0; i < kPairs; ++i) {
    const auto exact = static_cast<float>(std::atan2(static_cast<double>(ys[i]), xs[i]));
    const int64_t ulps = std::abs(static_cast<int64_t>(std::bit_cast<int32_t>(exact)) -
                                  std::bit_cast<int32_t>(angle[i]));
    worst_ulps = std::max(worst_ulps, ulps);
    if (std::bit_cast<uint32_t>(modulus[i]) != std::bit_cast<uint32_t>(std::hypot(xs[i], ys[i]))) {
      ++hypot_mismatches;
    }
  }
  std::cout << "atan2: max " << worst_ulps << " ulp\n";
  EXPECT_LE(worst_ulps, 2);
  EXPECT_EQ(hypot_mismatches, 0);
}

TEST(BitcastConvertTest, SameWidthReinterpretsBits) {
  const std::string text =
      absl::StrCat(R"(
HloModule m
ENTRY e {
  x = f32[)",
                   kN, R"(] parameter(0)
  i = s32[)",
                   kN, R"(] bitcast-convert(x)
  u = u32[)",
                   kN, R"(] bitcast-convert(x)
  h = bf16[)",
                   kN, R"(] convert(x)
  s = s16[)",
                   kN, R"(] bitcast-convert(h)
  back = f16[)",
                   kN, R"(] bitcast-convert(s)
  ROOT t = (s32[)",
                   kN, "], u32[", kN, "], s16[", kN, "], f16[", kN, R"(]) tuple(i, u, s, back)
})");
  auto run = RunAgainstInterpreter(text);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t i = 0; i < run->actual.size(); ++i) {
    if (run->expected[i].shape().element_type() == F16) {
      EXPECT_TRUE(LiteralsNear(run->expected[i], run->actual[i], ErrorSpec(0, 0)).ok());
    } else {
      EXPECT_TRUE(LiteralsEqual(run->expected[i], run->actual[i]).ok()) << run->names[i];
    }
  }
}

}  // namespace
}  // namespace axle::cpu
