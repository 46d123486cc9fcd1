//===- complex_math_test.cc - Complex ops in IR against std::complex -------===//
//
// Each op of complex_math.h is JIT-compiled for the host (real functions
// from libm through a test TargetHooks) and compared with the C++
// library's std::complex function on a grid of finite points in all four
// quadrants, small and large, in double (c128) and float (c64).
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/complex_math.h"

#include <cmath>
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"

namespace axle::llvm_ir {
namespace {

// libm by name: `name` for double, `namef` for float.
class LibmHooks final : public TargetHooks {
 public:
  llvm::Value* EmitMathCall(llvm::IRBuilderBase& b, MathFunction function,
                            absl::Span<llvm::Value* const> args) const override {
    llvm::Type* type = args[0]->getType();
    std::string name(MathFunctionName(function));
    if (type->isFloatTy()) name += 'f';
    std::vector<llvm::Type*> parameters(args.size(), type);
    llvm::FunctionCallee callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(
        name, llvm::FunctionType::get(type, parameters, false));
    return b.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  }
  llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                               absl::Span<llvm::Value* const> args) const override {
    return EmitComplexMath(*this, b, opcode, args);
  }
  void EmitPrefetch(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*, int64_t) const override {}
  int PreferredVectorBits() const override { return 128; }
};

template <typename T>
using Function = void (*)(const T* x, const T* y, T* out);

// `void f(const T* x, const T* y, T* out)`: out = op(x[, y]) on one complex
// number each ({re, im} pairs).
template <typename T>
class Compiled {
 public:
  explicit Compiled(HloOpcode opcode) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("complex_math_test", *context);
    llvm::IRBuilder<> b(*context);
    llvm::Type* component = std::is_same_v<T, float> ? b.getFloatTy() : b.getDoubleTy();
    llvm::Type* pair = llvm::StructType::get(*context, {component, component});
    llvm::Type* ptr = b.getPtrTy();
    llvm::Function* function =
        llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr}, false),
                               llvm::Function::ExternalLinkage, "f", module.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", function));
    llvm::Value* x = b.CreateLoad(pair, function->getArg(0));
    llvm::Value* y = b.CreateLoad(pair, function->getArg(1));
    LibmHooks hooks;
    llvm::Value* z = EmitComplexMath(hooks, b, opcode, {x, y});
    b.CreateStore(z, function->getArg(2));
    b.CreateRetVoid();
    EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) {
      ADD_FAILURE() << llvm::toString(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit_->getDataLayout().getGlobalPrefix());
    if (!process) {
      ADD_FAILURE() << llvm::toString(process.takeError());
      return;
    }
    jit_->getMainJITDylib().addGenerator(std::move(*process));
    module->setDataLayout(jit_->getDataLayout());
    if (llvm::Error error =
            jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
      ADD_FAILURE() << llvm::toString(std::move(error));
      return;
    }
    auto address = jit_->lookup("f");
    if (!address) {
      ADD_FAILURE() << llvm::toString(address.takeError());
      return;
    }
    function_ = address->toPtr<Function<T>>();
  }

  std::complex<T> operator()(std::complex<T> x, std::complex<T> y = {}) const {
    T in_x[2] = {x.real(), x.imag()};
    T in_y[2] = {y.real(), y.imag()};
    T out[2] = {0, 0};
    if (function_ != nullptr) function_(in_x, in_y, out);
    return {out[0], out[1]};
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  Function<T> function_ = nullptr;
};

template <typename T>
std::vector<std::complex<T>> Points() {
  std::vector<std::complex<T>> points;
  for (double re : {-7.5, -2.0, -0.75, -0.1, 0.0, 0.03, 0.5, 1.0, 3.25, 9.0}) {
    for (double im : {-6.0, -1.5, -0.2, 0.0, 0.07, 0.9, 2.5, 8.0}) {
      points.emplace_back(static_cast<T>(re), static_cast<T>(im));
    }
  }
  return points;
}

// Within `ulps` units of T's precision of the larger of |expected| and 1e-3
// (for results near zero), component by component.
template <typename T>
void ExpectNear(std::complex<T> expected, std::complex<T> actual, double ulps,
                const std::string& where) {
  const double unit = std::is_same_v<T, float> ? 0x1p-23 : 0x1p-52;
  const double scale = std::max<double>(std::abs(expected), 1e-3);
  const double bound = ulps * unit * scale;
  EXPECT_LE(std::abs(static_cast<double>(expected.real()) - actual.real()), bound)
      << where << ": expected " << expected << ", got " << actual;
  EXPECT_LE(std::abs(static_cast<double>(expected.imag()) - actual.imag()), bound)
      << where << ": expected " << expected << ", got " << actual;
}

template <typename T>
void CheckUnary(HloOpcode opcode, const std::function<std::complex<T>(std::complex<T>)>& reference,
                double ulps, bool skip_branch_cuts = false) {
  Compiled<T> compiled(opcode);
  for (std::complex<T> z : Points<T>()) {
    // On a branch cut (the axes, for the inverse functions) the library and
    // the formula may pick different sides, by the sign of a zero.
    if (skip_branch_cuts && (z.imag() == 0 || z.real() == 0)) continue;
    const std::complex<T> expected = reference(z);
    if (!std::isfinite(expected.real()) || !std::isfinite(expected.imag())) continue;
    ExpectNear(expected, compiled(z), ulps,
               absl::StrCat(HloOpcodeString(opcode), "(", z.real(), ", ", z.imag(), ")"));
  }
}

template <typename T>
void CheckAll(double ulps) {
  using C = std::complex<T>;
  CheckUnary<T>(
      HloOpcode::kSqrt, [](C z) { return std::sqrt(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kRsqrt, [](C z) { return C(1) / std::sqrt(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kSin, [](C z) { return std::sin(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kCos, [](C z) { return std::cos(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kTan, [](C z) { return std::tan(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kSinh, [](C z) { return std::sinh(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kCosh, [](C z) { return std::cosh(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kTanh, [](C z) { return std::tanh(z); }, ulps);
  CheckUnary<T>(
      HloOpcode::kAsinh, [](C z) { return std::asinh(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kAcosh, [](C z) { return std::acosh(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kAtanh, [](C z) { return std::atanh(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kAsin, [](C z) { return std::asin(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kAcos, [](C z) { return std::acos(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kAtan, [](C z) { return std::atan(z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kExpm1, [](C z) { return std::exp(z) - C(1); }, ulps);
  CheckUnary<T>(
      HloOpcode::kLog1p, [](C z) { return std::log(C(1) + z); }, ulps, true);
  CheckUnary<T>(
      HloOpcode::kLogistic, [](C z) { return C(1) / (C(1) + std::exp(-z)); }, ulps);

  Compiled<T> divide(HloOpcode::kDivide);
  Compiled<T> power(HloOpcode::kPower);
  Compiled<T> atan2(HloOpcode::kAtan2);
  for (C x : Points<T>()) {
    for (C y : {C(T(0.5), T(-1.25)), C(T(-3), T(0)), C(T(0), T(2)), C(T(1e-3), T(7))}) {
      ExpectNear(x / y, divide(x, y), ulps, "divide");
      // atan2(x, y) as XLA defines it (the interpreter's formula).
      const C i(0, 1);
      const C angle = -i * std::log((y + i * x) / std::sqrt(y * y + x * x));
      if (std::isfinite(angle.real()) && std::isfinite(angle.imag())) {
        ExpectNear(angle, atan2(x, y), 4 * ulps,
                   absl::StrCat("atan2((", x.real(), ", ", x.imag(), "), (", y.real(), ", ",
                                y.imag(), "))"));
      }
      if (x != C(0)) {
        const C expected = std::pow(x, y);
        if (std::isfinite(expected.real()) && std::isfinite(expected.imag())) {
          ExpectNear(expected, power(x, y), 64 * ulps, "power");
        }
      }
    }
  }
  // Division by zero is an infinity (C99 Annex G); 0^0 = 1, 0^y = 0 for
  // Re y > 0.
  const C infinite = divide(C(1, 2), C(0, 0));
  EXPECT_TRUE(std::isinf(infinite.real()) && std::isinf(infinite.imag())) << infinite;
  EXPECT_EQ(power(C(0), C(0)), C(1));
  EXPECT_EQ(power(C(0), C(T(2.5), T(1))), C(0));
}

TEST(ComplexMathTest, DoubleAgreesWithStdComplex) { CheckAll<double>(/*ulps=*/64); }

TEST(ComplexMathTest, FloatAgreesWithStdComplex) { CheckAll<float>(/*ulps=*/32); }

}  // namespace
}  // namespace axle::llvm_ir
