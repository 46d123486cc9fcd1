//===- math_ir_test.cc - Accuracy of the inline transcendental functions ---===//
//
// Sweeps each f32 function over its interesting range (for log, every
// binade from the smallest denormal up; for atan2, a grid of both
// arguments) and measures the largest error in ulp against the
// double-precision libm result rounded to f32. The bounds
// asserted are the measured maxima rounded up; the sweep prints the
// measured values. Each function is JIT-compiled alone, as a loop over an
// array (LLVM only: no backend), at LLVM's O2.
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/math_ir.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "axle/llvm_ir/host_jit_for_tests.h"
#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::llvm_ir {
namespace {

using MathEmitter = llvm::Value* (*)(llvm::IRBuilderBase&, llvm::Value*);
using BinaryEmitter = llvm::Value* (*)(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*);
using ArrayFunction = void (*)(const float* in, const float* in2, float* out, int64_t n);

// A compiled `void f(const float* in, const float* in2, float* out,
// int64_t n)` that stores emit(in[i]) (or emit(in[i], in2[i])) to out[i]
// for every i < n.
class CompiledFunction {
 public:
  explicit CompiledFunction(MathEmitter emit)
      : CompiledFunction(
            [emit](llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value*) { return emit(b, x); }) {}
  explicit CompiledFunction(BinaryEmitter emit)
      : CompiledFunction([emit](llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
          return emit(b, x, y);
        }) {}

  std::vector<float> Run(const std::vector<float>& in) const { return Run(in, in); }
  std::vector<float> Run(const std::vector<float>& in, const std::vector<float>& in2) const {
    std::vector<float> out(in.size());
    if (function_ != nullptr) {
      function_(in.data(), in2.data(), out.data(), static_cast<int64_t>(in.size()));
    }
    return out;
  }

 private:
  explicit CompiledFunction(
      const std::function<llvm::Value*(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*)>& emit) {
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("math_ir_test", *context);
    llvm::IRBuilder<> b(*context);
    llvm::Type* ptr = b.getPtrTy();
    llvm::Function* function = llvm::Function::Create(
        llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt64Ty()}, false),
        llvm::Function::ExternalLinkage, "f", module.get());
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(*context, "entry", function);
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(*context, "loop", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(*context, "exit", function);
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateICmpSGT(function->getArg(3), b.getInt64(0)), loop, exit);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
    i->addIncoming(b.getInt64(0), entry);
    llvm::Value* x =
        b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), function->getArg(0), i));
    llvm::Value* y =
        b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), function->getArg(1), i));
    b.CreateStore(emit(b, x, y), b.CreateInBoundsGEP(b.getFloatTy(), function->getArg(2), i));
    llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpSLT(next, function->getArg(3)), loop, exit);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
    function_ =
        reinterpret_cast<ArrayFunction>(JitForHost(std::move(context), std::move(module), jit_));
  }

  // LLVM's O2 pipeline for the host, vectorizers included, as a backend
  // would run it.
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  ArrayFunction function_ = nullptr;
};

constexpr int64_t kPoints = 1 << 16;

// Distance in ulp between two finite floats of the same sign class.
int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return int64_t{1} << 40;
  if (a == b) return 0;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof(i));
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

struct Sweep {
  const char* name;
  MathEmitter emit;
  double (*reference)(double);
  std::vector<float> inputs;
  int64_t max_ulp_bound;
};

std::vector<float> Linear(double low, double high) {
  std::vector<float> v(kPoints);
  for (int64_t i = 0; i < kPoints; ++i)
    v[i] = static_cast<float>(low + (high - low) * i / (kPoints - 1));
  return v;
}

std::vector<float> PositiveBinades() {
  // Bit patterns from the smallest denormal to the largest finite float.
  std::vector<float> v(kPoints);
  const uint32_t last = 0x7f7fffff;
  for (int64_t i = 0; i < kPoints; ++i) {
    uint32_t bits = 1 + static_cast<uint32_t>((static_cast<uint64_t>(last) * i) / (kPoints - 1));
    std::memcpy(&v[i], &bits, sizeof(bits));
  }
  return v;
}

TEST(MathIrTest, MaxUlpErrorOverSweeps) {
  std::vector<Sweep> sweeps = {
      {"exp", EmitExpF32, [](double x) { return std::exp(x); }, Linear(-104, 89), 1},
      {"log", EmitLogF32, [](double x) { return std::log(x); }, PositiveBinades(), 1},
      {"log1p", EmitLog1pF32, [](double x) { return std::log1p(x); }, Linear(-0.999, 10), 2},
      {"log1p", EmitLog1pF32, [](double x) { return std::log1p(x); }, Linear(-1e-3, 1e-3), 2},
      {"log1p", EmitLog1pF32, [](double x) { return std::log1p(x); }, PositiveBinades(), 2},
      {"tanh", EmitTanhF32, [](double x) { return std::tanh(x); }, Linear(-10, 10), 4},
      {"erf", EmitErfF32, [](double x) { return std::erf(x); }, Linear(-5, 5), 2},
      {"logistic", EmitLogisticF32, [](double x) { return 1.0 / (1.0 + std::exp(-x)); },
       Linear(-30, 30), 2},
      {"expm1", EmitExpm1F32, [](double x) { return std::expm1(x); }, Linear(-20, 89), 2},
      {"expm1", EmitExpm1F32, [](double x) { return std::expm1(x); }, Linear(-1e-3, 1e-3), 2},
      {"expm1", EmitExpm1F32, [](double x) { return std::expm1(x); }, PositiveBinades(), 2},
      {"cbrt", EmitCbrtF32, [](double x) { return std::cbrt(x); }, Linear(-1000, 1000), 1},
      {"cbrt", EmitCbrtF32, [](double x) { return std::cbrt(x); }, PositiveBinades(), 1},
  };
  std::vector<std::vector<float>> outputs;
  outputs.reserve(sweeps.size());
  for (const Sweep& sweep : sweeps) {
    outputs.push_back(CompiledFunction(sweep.emit).Run(sweep.inputs));
  }

  for (size_t s = 0; s < sweeps.size(); ++s) {
    int64_t max_ulp = 0;
    float worst = 0;
    for (int64_t i = 0; i < kPoints; ++i) {
      float x = sweeps[s].inputs[i];
      float expected = static_cast<float>(sweeps[s].reference(x));
      int64_t ulp = UlpDistance(expected, outputs[s][i]);
      if (ulp > max_ulp) {
        max_ulp = ulp;
        worst = x;
      }
    }
    std::cout << sweeps[s].name << ": max error " << max_ulp << " ulp (at x = " << worst << ")\n";
    EXPECT_LE(max_ulp, sweeps[s].max_ulp_bound) << sweeps[s].name << " at x = " << worst;
  }
}

std::vector<float> Negated(std::vector<float> v) {
  for (float& f : v) f = -f;
  return v;
}

TEST(MathIrTest, SinCosTanOverTheWholeRange) {
  // Every binade from the smallest denormal to FLT_MAX, both signs (the
  // reduction by pi/2 of arguments up to 2^128), and dense sweeps near
  // zero and over a few hundred periods: within 1 ulp of libm's f64
  // result rounded to f32.
  std::vector<Sweep> sweeps;
  const std::vector<std::vector<float>> ranges = {PositiveBinades(),   Negated(PositiveBinades()),
                                                  Linear(-10, 10),     Linear(-1000, 1000),
                                                  Linear(-1e-3, 1e-3), Linear(1e5, 1.1e5)};
  for (const std::vector<float>& inputs : ranges) {
    sweeps.push_back({"sin", EmitSinF32, [](double x) { return std::sin(x); }, inputs, 1});
    sweeps.push_back({"cos", EmitCosF32, [](double x) { return std::cos(x); }, inputs, 1});
    sweeps.push_back({"tan", EmitTanF32, [](double x) { return std::tan(x); }, inputs, 1});
  }
  for (const Sweep& sweep : sweeps) {
    const std::vector<float> out = CompiledFunction(sweep.emit).Run(sweep.inputs);
    int64_t max_ulp = 0;
    float worst = 0;
    for (size_t i = 0; i < sweep.inputs.size(); ++i) {
      const float x = sweep.inputs[i];
      const int64_t ulp = UlpDistance(static_cast<float>(sweep.reference(x)), out[i]);
      if (ulp > max_ulp) {
        max_ulp = ulp;
        worst = x;
      }
    }
    std::cout << sweep.name << ": max error " << max_ulp << " ulp (at x = " << worst << ")\n";
    EXPECT_LE(max_ulp, sweep.max_ulp_bound) << sweep.name << " at x = " << worst;
  }
  // NaN for NaN and +-inf; +-0 and denormals kept by sin and tan, cos of
  // them 1; the largest finite floats.
  const float inf = INFINITY;
  const std::vector<float> x = {NAN, inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f, FLT_MAX, -FLT_MAX};
  const std::vector<float> sin = CompiledFunction(EmitSinF32).Run(x);
  const std::vector<float> cos = CompiledFunction(EmitCosF32).Run(x);
  const std::vector<float> tan = CompiledFunction(EmitTanF32).Run(x);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(sin[i])) << x[i];
    EXPECT_TRUE(std::isnan(cos[i])) << x[i];
    EXPECT_TRUE(std::isnan(tan[i])) << x[i];
  }
  for (int i = 3; i < 7; ++i) {
    EXPECT_EQ(sin[i], x[i]);
    EXPECT_EQ(std::signbit(sin[i]), std::signbit(x[i])) << x[i];
    EXPECT_EQ(tan[i], x[i]);
    EXPECT_EQ(std::signbit(tan[i]), std::signbit(x[i])) << x[i];
    EXPECT_EQ(cos[i], 1.0f) << x[i];
  }
  for (int i = 7; i < 9; ++i) {
    EXPECT_EQ(sin[i], static_cast<float>(std::sin(static_cast<double>(x[i]))));
    EXPECT_EQ(cos[i], static_cast<float>(std::cos(static_cast<double>(x[i]))));
  }
}

TEST(MathIrTest, SpecialValues) {
  const float inf = INFINITY;
  std::vector<float> x = {NAN, inf, -inf, 0.0f, -0.0f, -1.0f, 1e-45f, 200.0f};
  std::vector<std::vector<float>> out;
  for (MathEmitter emit :
       {EmitExpF32, EmitLogF32, EmitTanhF32, EmitErfF32, EmitLogisticF32, EmitLog1pF32}) {
    out.push_back(CompiledFunction(emit).Run(x));
  }
  for (int f = 0; f < 6; ++f) EXPECT_TRUE(std::isnan(out[f][0])) << f;
  // log1p: +inf, -inf -> NaN, +-0 kept with their signs, -1 -> -inf, the
  // smallest denormal itself, log1p(200).
  EXPECT_EQ(out[5][1], inf);
  EXPECT_TRUE(std::isnan(out[5][2]));
  EXPECT_EQ(out[5][3], 0.0f);
  EXPECT_FALSE(std::signbit(out[5][3]));
  EXPECT_TRUE(std::signbit(out[5][4]));
  EXPECT_EQ(out[5][5], -inf);
  EXPECT_EQ(out[5][6], 1e-45f);
  EXPECT_NEAR(out[5][7], std::log1p(200.0), 1e-5);
  EXPECT_EQ(out[0][1], inf);
  EXPECT_EQ(out[0][2], 0.0f);
  EXPECT_EQ(out[0][3], 1.0f);
  EXPECT_EQ(out[0][7], inf);
  EXPECT_EQ(out[1][1], inf);
  EXPECT_TRUE(std::isnan(out[1][2]));
  EXPECT_EQ(out[1][3], -inf);
  EXPECT_TRUE(std::isnan(out[1][5]));
  EXPECT_NEAR(out[1][6], std::log(static_cast<double>(1e-45f)), 1e-5);
  EXPECT_EQ(out[2][1], 1.0f);
  EXPECT_EQ(out[2][2], -1.0f);
  EXPECT_TRUE(std::signbit(out[2][4]));
  EXPECT_EQ(out[3][1], 1.0f);
  EXPECT_EQ(out[3][2], -1.0f);
  EXPECT_TRUE(std::signbit(out[3][4]));
  EXPECT_EQ(out[4][1], 1.0f);
  EXPECT_EQ(out[4][2], 0.0f);
  EXPECT_EQ(out[4][3], 0.5f);
}

// expm1: -0 and the smallest denormal kept, -1 from about -17.3 down
// (-inf and -FLT_MAX included), +inf past exp's overflow; cbrt: +-0, +-inf
// and NaN are their own roots, negative inputs give negative roots.
TEST(MathIrTest, Expm1AndCbrtSpecialValues) {
  const float inf = INFINITY;
  std::vector<float> x = {NAN,    inf,    -inf,           0.0f,  -0.0f,
                          1e-45f, -17.5f, -3.4028235e38f, 89.0f, -8.0f};
  std::vector<float> expm1 = CompiledFunction(EmitExpm1F32).Run(x);
  std::vector<float> cbrt = CompiledFunction(EmitCbrtF32).Run(x);
  EXPECT_TRUE(std::isnan(expm1[0]));
  EXPECT_EQ(expm1[1], inf);
  EXPECT_EQ(expm1[2], -1.0f);
  EXPECT_EQ(expm1[3], 0.0f);
  EXPECT_TRUE(std::signbit(expm1[4]));
  EXPECT_EQ(expm1[5], 1e-45f);
  EXPECT_EQ(expm1[6], -1.0f);
  EXPECT_EQ(expm1[7], -1.0f);
  EXPECT_EQ(expm1[8], inf);
  EXPECT_NEAR(expm1[9], std::expm1(-8.0), 1e-6);
  EXPECT_TRUE(std::isnan(cbrt[0]));
  EXPECT_EQ(cbrt[1], inf);
  EXPECT_EQ(cbrt[2], -inf);
  EXPECT_EQ(cbrt[3], 0.0f);
  EXPECT_TRUE(std::signbit(cbrt[4]));
  EXPECT_LE(UlpDistance(cbrt[5], static_cast<float>(std::cbrt(static_cast<double>(1e-45f)))), 1);
  EXPECT_LE(UlpDistance(cbrt[7], static_cast<float>(std::cbrt(-3.4028235e38))), 1);
  EXPECT_EQ(cbrt[9], -2.0f);
}

// atan2 over a grid of (y, x) in all four quadrants, ratios from 1e-6 to
// 1e6, against double atan2 rounded to f32; atan (atan2(x, 1)) over a
// sweep; and the signed zeros, infinities and NaN of C's atan2.
TEST(MathIrTest, Atan2) {
  std::vector<float> y, x;
  y.reserve(size_t{512} * 128);
  x.reserve(size_t{512} * 128);
  for (int64_t i = 0; i < 512; ++i) {
    for (int64_t j = 0; j < 128; ++j) {
      const double angle = -3.2 + 6.4 * static_cast<double>(i) / 511;
      const double radius = std::pow(10.0, -6 + 12 * static_cast<double>(j) / 127);
      y.push_back(static_cast<float>(std::sin(angle) * radius));
      x.push_back(static_cast<float>(std::cos(angle)));
    }
  }
  std::vector<float> out = CompiledFunction(EmitAtan2F32).Run(y, x);
  int64_t max_ulp = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const float expected = static_cast<float>(std::atan2(double{y[i]}, double{x[i]}));
    max_ulp = std::max(max_ulp, UlpDistance(expected, out[i]));
  }
  std::cout << "atan2: max error " << max_ulp << " ulp\n";
  EXPECT_LE(max_ulp, 3);
  std::vector<float> t = Linear(-100, 100);
  std::vector<float> atan = CompiledFunction([](llvm::IRBuilderBase& b, llvm::Value* v) {
                              return EmitAtan2F32(b, v, llvm::ConstantFP::get(b.getFloatTy(), 1.0));
                            }).Run(t);
  max_ulp = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    max_ulp = std::max(max_ulp, UlpDistance(static_cast<float>(std::atan(double{t[i]})), atan[i]));
  }
  std::cout << "atan: max error " << max_ulp << " ulp\n";
  EXPECT_LE(max_ulp, 3);

  const float inf = INFINITY;
  const std::vector<float> sy = {0.0f, -0.0f, 0.0f, -0.0f, inf, -inf, inf,    -inf,
                                 1.0f, 1.0f,  inf,  -1.0f, NAN, 1.0f, 1e-45f, 3e38f};
  const std::vector<float> sx = {0.0f, 0.0f, -0.0f, -0.0f, inf,  inf, -inf,  -inf,
                                 inf,  -inf, 1.0f,  -0.0f, 1.0f, NAN, 3e38f, 1e-45f};
  std::vector<float> special = CompiledFunction(EmitAtan2F32).Run(sy, sx);
  for (size_t i = 0; i < sy.size(); ++i) {
    const float expected = std::atan2(sy[i], sx[i]);
    EXPECT_LE(UlpDistance(expected, special[i]), 1)
        << "atan2(" << sy[i] << ", " << sx[i] << ") = " << special[i] << ", expected " << expected;
    EXPECT_EQ(std::signbit(expected), std::signbit(special[i])) << sy[i] << ", " << sx[i];
  }
}

// pow against libm: random bases over the whole f32 range (both signs)
// with random real and integer exponents, results within 1 ulp of libm's
// f64 pow rounded to f32; and every pair of special values bit for bit as
// powf (sign included; NaN for NaN).
TEST(MathIrTest, PowAgainstLibm) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> log2_base(-149, 128);
  std::uniform_real_distribution<float> exponent(-40, 40);
  std::uniform_int_distribution<int> integer_exponent(-300, 300);
  std::uniform_real_distribution<float> near_one(0.5f, 2.0f);
  std::vector<float> x, y;
  for (int i = 0; i < (1 << 17); ++i) {
    const float sign = (i & 1) != 0 ? -1.0f : 1.0f;
    float base = std::exp2(log2_base(rng));
    if (i % 3 == 0) base = near_one(rng);
    x.push_back(sign * base);
    // Negative bases only with integer exponents (else NaN, checked below).
    y.push_back((i & 2) != 0 || sign < 0
                    ? static_cast<float>(integer_exponent(rng)) / (i % 5 == 0 ? 1 : 8)
                    : exponent(rng) * (i % 7 == 0 ? 1e-3f : 1.0f));
    if (sign < 0) y.back() = std::round(y.back());
  }
  const std::vector<float> out = CompiledFunction(EmitPowF32).Run(x, y);
  int64_t max_ulp = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(std::pow(double{x[i]}, double{y[i]}));
    const int64_t ulp = UlpDistance(expected, out[i]);
    EXPECT_LE(ulp, 1) << "pow(" << x[i] << ", " << y[i] << ") = " << out[i] << ", expected "
                      << expected;
    max_ulp = std::max(max_ulp, ulp);
  }
  std::cout << "pow: max error " << max_ulp << " ulp\n";

  const float inf = INFINITY;
  const std::vector<float> values = {0.0f,     -0.0f,       1.0f,         -1.0f,  0.5f,    -0.5f,
                                     2.0f,     -2.0f,       3.0f,         -3.0f,  2.5f,    -2.5f,
                                     inf,      -inf,        NAN,          1e-45f, -1e-45f, FLT_MAX,
                                     -FLT_MAX, 16777216.0f, -16777215.0f, 1e-3f};
  std::vector<float> sx, sy;
  for (float a : values) {
    for (float c : values) {
      sx.push_back(a);
      sy.push_back(c);
    }
  }
  const std::vector<float> special = CompiledFunction(EmitPowF32).Run(sx, sy);
  for (size_t i = 0; i < sx.size(); ++i) {
    const float expected = std::pow(sx[i], sy[i]);
    EXPECT_LE(UlpDistance(expected, special[i]), 1)
        << "pow(" << sx[i] << ", " << sy[i] << ") = " << special[i] << ", expected " << expected;
    if (!std::isnan(expected)) {
      EXPECT_EQ(std::signbit(expected), std::signbit(special[i])) << sx[i] << ", " << sy[i];
    }
  }
}

// exp's clamp bounds and scaling: the largest finite results, the first
// infinite ones, the denormal range down to where results round to 0, and
// the inputs whose scale factors sit at the ends of their range, and the
// inputs below ln(2^-150) (exactly 0 through a select, without computing
// an underflow), -FLT_MAX included.
TEST(MathIrTest, ExpOverflowAndUnderflowBoundaries) {
  std::vector<float> x = {88.72283f, 88.7228394f, 88.72284f,  88.8f,          89.0f,
                          89.1f,     1e30f,       -87.33654f, -87.4f,         -100.0f,
                          -103.0f,   -103.9f,     -104.0f,    -104.1f,        -1e30f,
                          88.376f,   -103.97f,    -103.9722f, -3.4028235e38f, -103.9720f};
  std::vector<float> out = CompiledFunction(EmitExpF32).Run(x);
  for (size_t i = 0; i < x.size(); ++i) {
    float expected = static_cast<float>(std::exp(static_cast<double>(x[i])));
    EXPECT_LE(UlpDistance(expected, out[i]), 1)
        << "exp(" << x[i] << ") = " << out[i] << ", expected " << expected;
  }
  EXPECT_EQ(out[4], INFINITY);
  EXPECT_EQ(out[6], INFINITY);
  EXPECT_EQ(out[13], 0.0f);
  EXPECT_GT(out[16], 0.0f);  // e^-103.97: the smallest denormal, 2^-149
  EXPECT_EQ(out[17], 0.0f);
  EXPECT_EQ(out[18], 0.0f);
  EXPECT_FALSE(std::signbit(out[18]));
  EXPECT_EQ(out[14], 0.0f);
  EXPECT_GT(out[10], 0.0f);  // a denormal
}

}  // namespace
}  // namespace axle::llvm_ir
