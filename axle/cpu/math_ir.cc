//===- math_ir.cc - Transcendental functions as inline LLVM IR -------------===//
//
// exp: x = n*ln2 + r with |r| <= ln2/2, e^r by a degree-7 polynomial
// (Cephes' coefficients), times 2^n built in two exponent steps so that
// results in the denormal range come out right.
// log: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 +
// f^3 P(f) with f = m - 1 (Cephes), plus e*ln2 in two parts.
// tanh: Eigen's odd rational approximation on [-7.9, 7.9] (XLA CPU uses it).
// erf: a polynomial in x^2 below 1, 1 - exp(-x^2) Q(|x|) above.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/math_ir.h"

#include <initializer_list>

#include "llvm/IR/Intrinsics.h"

namespace axle::cpu {
namespace {

llvm::Value* F(llvm::IRBuilderBase& b, double v) {
  return llvm::ConstantFP::get(b.getFloatTy(), v);
}
llvm::Value* I(llvm::IRBuilderBase& b, int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

// c[0]*x^(n-1) + ... + c[n-1] by Horner's rule with fused multiply-adds.
llvm::Value* Horner(llvm::IRBuilderBase& b, llvm::Value* x, std::initializer_list<double> c) {
  llvm::Value* acc = nullptr;
  for (double coefficient : c) {
    if (acc == nullptr) {
      acc = F(b, coefficient);
    } else {
      acc = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {acc, x, F(b, coefficient)});
    }
  }
  return acc;
}

llvm::Value* Fma(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {x, y, z});
}

llvm::Value* IsNan(llvm::IRBuilderBase& b, llvm::Value* x) { return b.CreateFCmpUNO(x, x); }

// 2^n for integer n in [-126, 127] as an f32 (i32 n).
llvm::Value* Pow2(llvm::IRBuilderBase& b, llvm::Value* n) {
  return b.CreateBitCast(b.CreateShl(b.CreateAdd(n, I(b, 127)), I(b, 23)), b.getFloatTy());
}

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Past these, the result is inf or 0.
  const double kMaxInput = 88.72283935546875;    // log(FLT_MAX) rounded up
  const double kMinInput = -103.97283935546875;  // below log(smallest denormal / 2)
  // Clamped with ordered compares and selects (one vmaxps / vminps each on
  // x86; llvm.maxnum/minnum add NaN fix-ups): a NaN becomes kMinInput here
  // either way, and the last select returns it.
  llvm::Value* low = b.CreateSelect(b.CreateFCmpOGT(x, F(b, kMinInput)), x, F(b, kMinInput));
  llvm::Value* clamped =
      b.CreateSelect(b.CreateFCmpOLT(low, F(b, kMaxInput)), low, F(b, kMaxInput));
  llvm::Value* n_float = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                                b.CreateFMul(clamped, F(b, 1.44269504088896341)));
  // r = x - n*ln2 with ln2 split in a part exact in f32 and the rest.
  llvm::Value* r = Fma(b, n_float, F(b, -0.693359375), clamped);
  r = Fma(b, n_float, F(b, 2.12194440e-4), r);
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* p = Horner(b, r,
                          {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                           1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* er = b.CreateFAdd(Fma(b, p, r2, r), F(b, 1.0));
  // e^x = e^r * 2^n; n is in [-150, 128]: scale in two steps.
  llvm::Value* n = b.CreateFPToSI(n_float, b.getInt32Ty());
  llvm::Value* half_n = b.CreateAShr(n, I(b, 1));
  llvm::Value* result =
      b.CreateFMul(b.CreateFMul(er, Pow2(b, half_n)), Pow2(b, b.CreateSub(n, half_n)));
  llvm::Value* inf = llvm::ConstantFP::getInfinity(b.getFloatTy());
  result = b.CreateSelect(b.CreateFCmpOGT(x, F(b, kMaxInput)), inf, result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, F(b, kMinInput)), F(b, 0.0), result);
  return b.CreateSelect(IsNan(b, x), x, result);
}

llvm::Value* EmitLogF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  // Denormals: scale by 2^23 first.
  llvm::Value* is_denormal = b.CreateFCmpOLT(x, F(b, 1.17549435e-38));
  llvm::Value* scaled = b.CreateSelect(is_denormal, b.CreateFMul(x, F(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(scaled, i32);
  llvm::Value* exponent = b.CreateSub(b.CreateLShr(bits, I(b, 23)), I(b, 126));
  exponent = b.CreateSub(exponent, b.CreateSelect(is_denormal, I(b, 23), I(b, 0)));
  // m in [0.5, 1).
  llvm::Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, I(b, 0x007fffff)), I(b, 0x3f000000)), b.getFloatTy());
  llvm::Value* below = b.CreateFCmpOLT(m, F(b, 0.707106781186547524));
  exponent = b.CreateSub(exponent, b.CreateZExt(below, i32));
  // f = m - 1 (or 2m - 1 when m < sqrt(1/2)).
  llvm::Value* f = b.CreateFSub(b.CreateSelect(below, b.CreateFAdd(m, m), m), F(b, 1.0));
  llvm::Value* e = b.CreateSIToFP(exponent, b.getFloatTy());
  llvm::Value* z = b.CreateFMul(f, f);
  llvm::Value* p =
      Horner(b, f,
             {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
              -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, f), z);
  y = Fma(b, e, F(b, -2.12194440e-4), y);
  y = Fma(b, z, F(b, -0.5), y);
  llvm::Value* result = b.CreateFAdd(f, y);
  result = Fma(b, e, F(b, 0.693359375), result);
  // Special inputs: negative -> NaN, 0 -> -inf, inf -> inf, NaN -> NaN.
  llvm::Type* f32 = b.getFloatTy();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f32)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, F(b, 0.0)), llvm::ConstantFP::getInfinity(f32, true),
                          result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, F(b, 0.0)), llvm::ConstantFP::getNaN(f32), result);
  return b.CreateSelect(IsNan(b, x), x, result);
}

llvm::Value* EmitTanhF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  const double kClamp = 7.90531110763549805;  // tanh rounds to +-1 past this
  llvm::Value* clamped = b.CreateMinNum(b.CreateMaxNum(x, F(b, -kClamp)), F(b, kClamp));
  llvm::Value* x2 = b.CreateFMul(clamped, clamped);
  llvm::Value* p = Horner(
      b, x2,
      {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
       1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03});
  p = b.CreateFMul(clamped, p);
  llvm::Value* q = Horner(
      b, x2,
      {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03});
  llvm::Value* result = b.CreateFDiv(p, q);
  // Past 9, tanh rounds to +-1 in f32; the rational function stays a few
  // ulp short of it near its clamp point.
  llvm::Value* abs_x = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  result = b.CreateSelect(b.CreateFCmpOGT(abs_x, F(b, 9.0)),
                          b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, F(b, 1.0), x), result);
  // Tiny inputs: tanh(x) = x (keeps -0 and denormals exact).
  result = b.CreateSelect(b.CreateFCmpOLT(abs_x, F(b, 0.0004)), x, result);
  return b.CreateSelect(IsNan(b, x), x, result);
}

llvm::Value* EmitErfF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // |x| < 1: erf(x) = x * P(x^2). 1 <= |x|: erf(x) = 1 - exp(-x^2) * Q(|x| - 2.5)
  // with Q ~ erfc(x) e^(x^2) on [1, 4] (past 3.92 erf rounds to 1 in f32).
  // Both are Chebyshev-node interpolants (relative error below 4e-8).
  llvm::Value* a = b.CreateMinNum(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), F(b, 4.0));
  llvm::Value* u = b.CreateFMul(a, a);
  llvm::Value* small =
      b.CreateFMul(a, Horner(b, u,
                             {-9.667044370198383e-06, 0.0001126595895293435, -0.0008484080395169225,
                              0.0052210318071215026, -0.026865430727402512, 0.11283782495232382,
                              -0.376126384680285, 1.1283791670615435}));
  llvm::Value* q = Horner(b, b.CreateFSub(a, F(b, 2.5)),
                          {-4.123142817819525e-07, 1.6698367594470779e-06, -3.834632180825558e-06,
                           1.436468237245649e-05, -5.932730340733912e-05, 0.0002129504691783271,
                           -0.0007333448751406284, 0.002465999634275659, -0.008001617248246001,
                           0.02493819891421082, -0.07434734529148741, 0.2108063577431363});
  llvm::Value* large = b.CreateFSub(F(b, 1.0), b.CreateFMul(EmitExpF32(b, b.CreateFNeg(u)), q));
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOLT(a, F(b, 1.0)), small, large);
  result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
  return b.CreateSelect(IsNan(b, x), x, result);
}

llvm::Value* EmitLogisticF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Value* e = EmitExpF32(b, b.CreateFNeg(x));
  return b.CreateFDiv(F(b, 1.0), b.CreateFAdd(F(b, 1.0), e));
}

}  // namespace axle::cpu
