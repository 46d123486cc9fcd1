//===- math_ir.cc - Transcendental functions as inline LLVM IR -------------===//
//
// exp: x = n*ln2 + r with |r| <= ln2/2, e^r by a degree-7 polynomial
// (Cephes' coefficients), times 2^n built in two exponent steps so that
// results in the denormal range come out right; overflow, underflow and NaN
// come out of the arithmetic itself, without selects (18 vector
// instructions with AVX-512).
// log: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 +
// f^3 P(f) with f = m - 1 (Cephes), plus e*ln2 in two parts.
// tanh: Eigen's odd rational approximation on [-7.9, 7.9] (XLA CPU uses it).
// erf: a polynomial in x^2 below 1, 1 - exp(-x^2) Q(|x|) above.
// expm1 and log1p: exp / log of the rounded 1 + x, corrected by the ratio
// that cancels its rounding error (Kahan's and Goldberg's tricks).
// cbrt: exp(log|x| / 3) with the sign of x, one Newton step.
// atan2: one quotient in [0, 1], Cephes' atanf polynomial, the octant by
// selects. hypot: glibc's, in f64.
// sin, cos, tan: |x| = k pi/2 + r, r from a per-exponent table of 2/pi's
// bits (exact enough for every f32, up to 2^128), sin r and cos r by
// Taylor polynomials in f64, the quadrant by selects.
// pow: 2^(y log2|x|) in f64 (log2 by an atanh series, 2^t by a Taylor
// polynomial and the exponent bits), powf's special cases by selects.
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/math_ir.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace axle::llvm_ir {
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

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Clamped above at 89 with a compare and select that keep a NaN (one
  // vminps on x86): past it the scaling below overflows to inf by itself
  // (e^89 > FLT_MAX). A NaN stays NaN through every step.
  //
  // Below kZero (just under ln(2^-150) = -103.97208, where e^x rounds to
  // 0) the result is 0 by a select, and the arithmetic runs on 0 instead:
  // an underflowing multiply costs a microcode assist of ~100 cycles on
  // Intel cores without flush-to-zero, and masked softmax feeds exp
  // -1e30 or -FLT_MAX in whole triangles (attention's kernel ran 3x slower
  // on them). Results in the denormal range stay exact (and pay the
  // assist).
  const double kZero = -103.9721, kHigh = 89.0;
  llvm::Value* is_zero = b.CreateFCmpOLT(x, F(b, kZero));
  llvm::Value* low = b.CreateSelect(is_zero, F(b, 0.0), x);
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(low, F(b, kHigh)), F(b, kHigh), low);
  // t = 1.5 * 2^23 + 254 + n with n = round(x / ln2) in [-150, 129]: adding
  // the shifter rounds to an integer (f32's ulp is 1 there), and the low
  // bits of t's representation hold n + 254.
  const double kShifter = 12582912.0 + 254.0;
  llvm::Value* t = Fma(b, clamped, F(b, 1.44269504088896341), F(b, kShifter));
  llvm::Value* n_float = b.CreateFSub(t, F(b, kShifter));
  // r = x - n*ln2 with ln2 split in a part exact in f32 and the rest.
  llvm::Value* r = Fma(b, n_float, F(b, -0.693359375), clamped);
  r = Fma(b, n_float, F(b, 2.12194440e-4), r);
  // e^r on [-ln2/2, ln2/2]: 1 + r + r^2 P(r), Cephes' degree-5 P evaluated
  // by Estrin's scheme (three independent pairs, then r^2 and r^4): about
  // half the latency of Horner's rule, which matters more than the two
  // extra multiplies in loops whose iterations the core cannot overlap far
  // enough to hide a long chain.
  // e^r on [-ln2/2, ln2/2]: 1 + r*Q(r) with Q of degree 5, a Chebyshev fit
  // of expm1(r)/r (relative error 4e-9, under 0.8 ulp in f32 arithmetic),
  // by Horner's rule: 6 fused multiply-adds. The core runs 512-bit
  // operations at two per cycle, so each one saved counts; Estrin's scheme
  // (shorter latency, two more multiplies) measured slower.
  llvm::Value* er = Horner(b, r,
                           {1.3933731243014336e-3, 8.369220420718193e-3, 4.1666463017463684e-2,
                            1.6666504740715027e-1, 0.5, 1.0, 1.0});
  // e^x = e^r * 2^floor(n/2) * 2^ceil(n/2): two normal scale factors, so a
  // result in the denormal range is rounded once. With m = n + 254 in t's
  // low bits, (bits >> 1) << 23 is the f32 2^floor(n/2) (bias 127 included;
  // the shifter's own bits shift out) and (bits - (bits >> 1)) << 23 is
  // 2^ceil(n/2).
  llvm::Value* bits = b.CreateBitCast(t, b.getInt32Ty());
  llvm::Value* half = b.CreateAShr(bits, I(b, 1));
  llvm::Value* scale_low = b.CreateBitCast(b.CreateShl(half, I(b, 23)), b.getFloatTy());
  llvm::Value* scale_high =
      b.CreateBitCast(b.CreateShl(b.CreateSub(bits, half), I(b, 23)), b.getFloatTy());
  return b.CreateSelect(is_zero, F(b, 0.0), b.CreateFMul(b.CreateFMul(er, scale_high), scale_low));
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

llvm::Value* EmitLog1pF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded (Goldberg's
  // trick: the rounding error of u cancels in the ratio), and x itself
  // where u rounds to 1 (|x| < 2^-24, -0 included).
  llvm::Type* f32 = b.getFloatTy();
  llvm::Value* u = b.CreateFAdd(F(b, 1.0), x);
  llvm::Value* u_minus_one = b.CreateFSub(u, F(b, 1.0));
  llvm::Value* result = b.CreateFMul(EmitLogF32(b, u), b.CreateFDiv(x, u_minus_one));
  result = b.CreateSelect(b.CreateFCmpOEQ(u, F(b, 1.0)), x, result);
  // +inf: inf / inf would make NaN. -1 -> -inf and below -> NaN come from
  // log itself; NaN stays NaN.
  return b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f32)), x, result);
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

llvm::Value* EmitExpm1F32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // expm1(x) = (u - 1) * x / log(u) with u = exp(x) rounded (Kahan): the
  // rounding error of u cancels in the ratio. x itself where u rounds to 1
  // (|x| < 2^-25, -0 included), -1 where u - 1 rounds to -1 (x below about
  // -17.3, -inf included), +inf where u overflows; NaN stays NaN.
  llvm::Type* f32 = b.getFloatTy();
  llvm::Value* u = EmitExpF32(b, x);
  llvm::Value* u_minus_one = b.CreateFSub(u, F(b, 1.0));
  llvm::Value* result = b.CreateFMul(u_minus_one, b.CreateFDiv(x, EmitLogF32(b, u)));
  result = b.CreateSelect(b.CreateFCmpOEQ(u, F(b, 1.0)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(u_minus_one, F(b, -1.0)), F(b, -1.0), result);
  return b.CreateSelect(b.CreateFCmpOEQ(u, llvm::ConstantFP::getInfinity(f32)), u, result);
}

llvm::Value* EmitCbrtF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // y = exp(log|x| / 3) is within ~2^-19 of the root (log's absolute error
  // grows with |log|x||); one Newton step y - (y - x / y^2) / 3 leaves the
  // rounding of its own arithmetic. 0, +-inf and NaN are their own roots.
  llvm::Type* f32 = b.getFloatTy();
  llvm::Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* y = EmitExpF32(b, b.CreateFMul(EmitLogF32(b, a), F(b, 1.0 / 3.0)));
  llvm::Value* step = b.CreateFSub(y, b.CreateFDiv(a, b.CreateFMul(y, y)));
  y = Fma(b, step, F(b, -1.0 / 3.0), y);
  llvm::Value* result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, y, x);
  llvm::Value* own_root = b.CreateOr(b.CreateFCmpOEQ(a, F(b, 0.0)),
                                     b.CreateFCmpUEQ(a, llvm::ConstantFP::getInfinity(f32)));
  return b.CreateSelect(own_root, x, result);
}

// The quotient t = min(|x|, |y|) / max(|x|, |y|) in [0, 1] (0 where both
// are zero, 1 where both are infinite: the limits atan2 takes there), past
// tan(pi/8) reduced to (t - 1) / (t + 1) with pi/4 added back, atan of
// the rest by Cephes' atanf polynomial (degree 9, odd); then the octant:
// pi/2 - r where |y| > |x|, pi - r where x has its sign bit (x = -0
// included: atan2(+-0, -0) = +-pi), and y's sign. A NaN in either gives
// NaN through the quotient.
llvm::Value* EmitAtan2F32(llvm::IRBuilderBase& b, llvm::Value* y, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  llvm::Value* swap = b.CreateFCmpOGT(ay, ax);
  llvm::Value* numerator = b.CreateSelect(swap, ax, ay);
  llvm::Value* denominator = b.CreateSelect(swap, ay, ax);
  llvm::Value* t = b.CreateFDiv(numerator, denominator);
  llvm::Value* inf = F(b, std::numeric_limits<float>::infinity());
  t = b.CreateSelect(b.CreateAnd(b.CreateFCmpOEQ(ax, F(b, 0)), b.CreateFCmpOEQ(ay, F(b, 0))),
                     F(b, 0), t);
  t = b.CreateSelect(b.CreateAnd(b.CreateFCmpOEQ(ax, inf), b.CreateFCmpOEQ(ay, inf)), F(b, 1), t);
  llvm::Value* reduce = b.CreateFCmpOGT(t, F(b, 0.4142135623730950));
  llvm::Value* u =
      b.CreateSelect(reduce, b.CreateFDiv(b.CreateFSub(t, F(b, 1)), b.CreateFAdd(t, F(b, 1))), t);
  llvm::Value* z = b.CreateFMul(u, u);
  llvm::Value* p =
      Horner(b, z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1});
  llvm::Value* r = Fma(b, b.CreateFMul(p, z), u, u);
  r = b.CreateSelect(reduce, b.CreateFAdd(r, F(b, std::numbers::pi / 4)), r);
  r = b.CreateSelect(swap, b.CreateFSub(F(b, std::numbers::pi / 2), r), r);
  llvm::Value* x_negative = b.CreateICmpSLT(b.CreateBitCast(x, b.getInt32Ty()), b.getInt32(0));
  r = b.CreateSelect(x_negative, b.CreateFSub(F(b, std::numbers::pi), r), r);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, y);
}

namespace {

// The first 256 bits of the fraction of 2/pi (2/pi = 0.b1 b2 b3 ...),
// as hexadecimal digits (computed with exact integer arithmetic).
constexpr char kTwoOverPiBits[] =
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561";

// b_i of 2/pi (0 past the 256 bits kept).
int TwoOverPiBit(int i) {
  if (i < 1 || i > 256) return 0;
  const char c = kTwoOverPiBits[(i - 1) / 4];
  const int digit = c <= '9' ? c - '0' : c - 'a' + 10;
  return (digit >> (3 - (i - 1) % 4)) & 1;
}

// The sum of b_i 2^(s - i) over the positions p = s - i in [low, high]
// (at most 53 of them: exact in f64).
double TwoOverPiWindow(int s, int low, int high) {
  double sum = 0;
  for (int p = high; p >= low; --p) {
    if (TwoOverPiBit(s - p) != 0) sum += std::ldexp(1.0, p);
  }
  return sum;
}

// Reduction table: an f32 |x| >= pi/4 of biased exponent E (126..254) is
// m * 2^s with m its 24-bit significand and s = E - 150, and x * 2/pi mod
// 8 = m * (2^s * 2/pi mod 8), since m is an integer. Per E, that factor
// in three parts: hi (its bits at 2^2 .. 2^-25), mid (2^-26 .. 2^-53) and
// lo (2^-54 .. 2^-106), so that m * hi and m * mid are exact in f64.
constexpr int kFirstReducedExponent = 126;
constexpr int kReducedExponents = 254 - kFirstReducedExponent + 1;

llvm::GlobalVariable* ReductionTable(llvm::Module& module) {
  const char* name = "axle_f32_two_over_pi_by_exponent";
  if (llvm::GlobalVariable* table = module.getNamedGlobal(name)) return table;
  std::vector<double> values;
  for (int e = kFirstReducedExponent; e <= 254; ++e) {
    const int s = e - 150;
    values.push_back(TwoOverPiWindow(s, -25, 2));
    values.push_back(TwoOverPiWindow(s, -53, -26));
    values.push_back(TwoOverPiWindow(s, -106, -54));
  }
  llvm::Constant* init = llvm::ConstantDataArray::get(module.getContext(), values);
  return new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init, name);
}

llvm::Value* D(llvm::IRBuilderBase& b, double v) {
  return llvm::ConstantFP::get(b.getDoubleTy(), v);
}

llvm::Value* FmaD(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getDoubleTy()}, {x, y, z});
}

// c[0]*z^(n-1) + ... + c[n-1] in f64.
llvm::Value* HornerD(llvm::IRBuilderBase& b, llvm::Value* z, std::initializer_list<double> c) {
  llvm::Value* acc = nullptr;
  for (double coefficient : c)
    acc = acc == nullptr ? D(b, coefficient) : FmaD(b, acc, z, D(b, coefficient));
  return acc;
}

// |x| = k pi/2 + r with |r| <= pi/4 (a little more where k rounds the
// other way), r in f64 and k mod 4; and sin r, cos r (Taylor polynomials
// in f64: their truncation is below 2^-36 relative on |r| <= 0.8).
struct ReducedF32 {
  llvm::Value* quadrant;  // i32, k mod 4
  llvm::Value* sin_r;     // f64
  llvm::Value* cos_r;     // f64
};

ReducedF32 ReduceByHalfPi(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Value* abs_bits = b.CreateAnd(b.CreateBitCast(x, i32), I(b, 0x7fffffff));
  llvm::Value* a = b.CreateBitCast(abs_bits, b.getFloatTy());
  // Below pi/4: r = |x|, k = 0 (denormals and zeros exact).
  llvm::Value* small = b.CreateFCmpOLT(a, F(b, std::numbers::pi / 4));
  // The table: t = m * hi mod 8 (exact), k = the integer nearest to
  // t + m * mid, then (t - k) + m * mid is exact (a multiple of 2^-53
  // below 1) and m * lo adds the last bits, rounded once.
  llvm::Value* exponent = b.CreateLShr(abs_bits, I(b, 23));
  llvm::Value* index = b.CreateSub(exponent, I(b, kFirstReducedExponent));
  index = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index, I(b, 0));
  index = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, index, I(b, kReducedExponents - 1));
  llvm::GlobalVariable* table = ReductionTable(*b.GetInsertBlock()->getModule());
  llvm::Value* first = b.CreateMul(b.CreateZExt(index, b.getInt64Ty()), b.getInt64(3));
  auto entry = [&](int part) {
    llvm::Value* at = b.CreateAdd(first, b.getInt64(part));
    return b.CreateLoad(f64, b.CreateInBoundsGEP(f64, table, at));
  };
  llvm::Value* m =
      b.CreateSIToFP(b.CreateOr(b.CreateAnd(abs_bits, I(b, 0x007fffff)), I(b, 0x00800000)), f64);
  llvm::Value* mh = b.CreateFMul(m, entry(0));
  llvm::Value* t = b.CreateFSub(
      mh, b.CreateFMul(D(b, 8.0), b.CreateUnaryIntrinsic(llvm::Intrinsic::floor,
                                                         b.CreateFMul(mh, D(b, 0.125)))));
  llvm::Value* mm = b.CreateFMul(m, entry(1));
  llvm::Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b.CreateFAdd(t, mm));
  llvm::Value* w = FmaD(b, m, entry(2), b.CreateFAdd(b.CreateFSub(t, k), mm));
  llvm::Value* r =
      b.CreateSelect(small, b.CreateFPExt(a, f64), b.CreateFMul(w, D(b, std::numbers::pi / 2)));
  llvm::Value* quadrant =
      b.CreateSelect(small, I(b, 0), b.CreateAnd(b.CreateFPToSI(k, i32), I(b, 3)));
  llvm::Value* z = b.CreateFMul(r, r);
  llvm::Value* sin_r = FmaD(
      b, b.CreateFMul(r, z),
      HornerD(b, z, {-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0}),
      r);
  llvm::Value* cos_r = FmaD(
      b, z,
      HornerD(b, z,
              {1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5}),
      D(b, 1.0));
  return {quadrant, sin_r, cos_r};
}

// `value` (f64) rounded to f32, negated where `negate`; NaN where x is
// infinite or NaN.
llvm::Value* FinishF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* value,
                       llvm::Value* negate) {
  llvm::Value* result = b.CreateFPTrunc(value, b.getFloatTy());
  result = b.CreateSelect(negate, b.CreateFNeg(result), result);
  llvm::Value* not_finite = b.CreateFCmpUGE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                            F(b, std::numeric_limits<float>::infinity()));
  return b.CreateSelect(not_finite, b.CreateFSub(x, x), result);
}

llvm::Value* IsNegative(llvm::IRBuilderBase& b, llvm::Value* x) {
  return b.CreateICmpSLT(b.CreateBitCast(x, b.getInt32Ty()), I(b, 0));
}

}  // namespace

// sin(|x|) by quadrant: sin r, cos r, -sin r, -cos r; odd in x.
llvm::Value* EmitSinF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  const ReducedF32 reduced = ReduceByHalfPi(b, x);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(reduced.quadrant, I(b, 1)), I(b, 0));
  llvm::Value* value = b.CreateSelect(odd, reduced.cos_r, reduced.sin_r);
  llvm::Value* negate = b.CreateICmpNE(b.CreateAnd(reduced.quadrant, I(b, 2)), I(b, 0));
  return FinishF32(b, x, value, b.CreateXor(negate, IsNegative(b, x)));
}

// cos(|x|) by quadrant: cos r, -sin r, -cos r, sin r.
llvm::Value* EmitCosF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  const ReducedF32 reduced = ReduceByHalfPi(b, x);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(reduced.quadrant, I(b, 1)), I(b, 0));
  llvm::Value* value = b.CreateSelect(odd, reduced.sin_r, reduced.cos_r);
  llvm::Value* negate =
      b.CreateICmpNE(b.CreateAnd(b.CreateAdd(reduced.quadrant, I(b, 1)), I(b, 2)), I(b, 0));
  return FinishF32(b, x, value, negate);
}

// tan(|x|) = sin r / cos r in even quadrants, -cos r / sin r in odd ones
// (one f64 division); odd in x.
llvm::Value* EmitTanF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  const ReducedF32 reduced = ReduceByHalfPi(b, x);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(reduced.quadrant, I(b, 1)), I(b, 0));
  llvm::Value* value = b.CreateFDiv(b.CreateSelect(odd, reduced.cos_r, reduced.sin_r),
                                    b.CreateSelect(odd, reduced.sin_r, reduced.cos_r));
  return FinishF32(b, x, value, b.CreateXor(odd, IsNegative(b, x)));
}

// powf: |x|^y = 2^(y log2|x|) in f64. log2 m (m in [sqrt(1/2), sqrt(2)))
// as 2 atanh(f) / ln2 with f = (m - 1) / (m + 1), |f| <= 0.172, the
// series to f^19 (truncation below 2^-50); 2^t as 2^n 2^g with n the
// integer nearest t, 2^g = e^(g ln2) by a Taylor polynomial to g^11. t
// is clamped to [-200, 200] (the f32 result is then 0 or inf either way).
// The IEEE special cases as C's powf: y = 0 or x = 1 give 1 (even with a
// NaN); x < 0 with a non-integer finite y gives NaN; a negative x (-0 and
// -inf included) with an odd integer y negates; y = +-inf with |x| = 1
// gives 1; log2 0 = -inf and log2 inf = inf give the zeros and infinities.
llvm::Value* EmitPowF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* ad = b.CreateFPExt(ax, f64);
  // log2 |x|: ad = m 2^e (f64 bits, exact for f32 denormals too).
  llvm::Value* bits = b.CreateBitCast(ad, i64);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, b.getInt64(52)), b.getInt64(1023));
  llvm::Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt64(0x000fffffffffffffLL)),
                                              b.getInt64(0x3ff0000000000000LL)),
                                   f64);
  llvm::Value* above = b.CreateFCmpOGT(m, D(b, std::numbers::sqrt2));
  m = b.CreateSelect(above, b.CreateFMul(m, D(b, 0.5)), m);
  e = b.CreateAdd(e, b.CreateZExt(above, i64));
  llvm::Value* f = b.CreateFDiv(b.CreateFSub(m, D(b, 1.0)), b.CreateFAdd(m, D(b, 1.0)));
  llvm::Value* f2 = b.CreateFMul(f, f);
  llvm::Value* series = HornerD(
      b, f2,
      {1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
  llvm::Value* log2_m = b.CreateFMul(b.CreateFMul(f, series), D(b, 2 / std::numbers::ln2));
  llvm::Value* log2_x = b.CreateFAdd(b.CreateSIToFP(e, f64), log2_m);
  const double inf = std::numeric_limits<double>::infinity();
  log2_x = b.CreateSelect(b.CreateFCmpOEQ(ad, D(b, 0.0)), D(b, -inf), log2_x);
  log2_x = b.CreateSelect(b.CreateFCmpUEQ(ad, D(b, inf)), ad, log2_x);  // inf or NaN
  llvm::Value* yd = b.CreateFPExt(y, f64);
  llvm::Value* t = b.CreateFMul(yd, log2_x);  // NaN where x or y is (or 0 * inf)
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(t, D(b, 200.0)), D(b, 200.0), t);
  clamped = b.CreateSelect(b.CreateFCmpOLT(clamped, D(b, -200.0)), D(b, -200.0), clamped);
  llvm::Value* is_nan = b.CreateFCmpUNO(t, t);
  clamped = b.CreateSelect(is_nan, D(b, 0.0), clamped);
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, clamped);
  llvm::Value* g = b.CreateFMul(b.CreateFSub(clamped, n), D(b, std::numbers::ln2));
  llvm::Value* exp_g =
      HornerD(b, g,
              {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
               1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0});
  llvm::Value* scale = b.CreateBitCast(
      b.CreateShl(b.CreateAdd(b.CreateFPToSI(n, i64), b.getInt64(1023)), b.getInt64(52)), f64);
  llvm::Value* result = b.CreateFPTrunc(b.CreateFMul(exp_g, scale), b.getFloatTy());
  result = b.CreateSelect(is_nan, F(b, std::numeric_limits<float>::quiet_NaN()), result);
  // The sign: y an integer (+-inf count as even ones), odd below 2^24.
  llvm::Value* ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  llvm::Value* integer = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, y), y);
  llvm::Value* below = b.CreateFCmpOLT(ay, F(b, 0x1p24f));
  llvm::Value* odd = b.CreateAnd(
      b.CreateAnd(integer, below),
      b.CreateICmpNE(
          b.CreateAnd(b.CreateFPToSI(b.CreateSelect(below, y, F(b, 0.0)), b.getInt32Ty()), I(b, 1)),
          I(b, 0)));
  result = b.CreateSelect(b.CreateAnd(odd, IsNegative(b, x)), b.CreateFNeg(result), result);
  llvm::Value* negative_finite =
      b.CreateAnd(b.CreateFCmpOLT(x, F(b, 0.0)),
                  b.CreateFCmpOGT(x, F(b, -std::numeric_limits<float>::infinity())));
  result = b.CreateSelect(b.CreateAnd(negative_finite, b.CreateNot(integer)),
                          F(b, std::numeric_limits<float>::quiet_NaN()), result);
  llvm::Value* one = b.CreateOr(b.CreateFCmpOEQ(y, F(b, 0.0)), b.CreateFCmpOEQ(x, F(b, 1.0)));
  one = b.CreateOr(one,
                   b.CreateAnd(b.CreateFCmpOEQ(ax, F(b, 1.0)),
                               b.CreateFCmpOEQ(ay, F(b, std::numeric_limits<float>::infinity()))));
  return b.CreateSelect(one, F(b, 1.0), result);
}

// glibc's hypotf: sqrt(x^2 + y^2) in f64 (the squares exact, one rounding
// of the sum, of the root and to f32), +inf where either is infinite (even
// with a NaN), else a NaN propagates.
llvm::Value* EmitHypotF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
  llvm::Value* dx = b.CreateFPExt(x, b.getDoubleTy());
  llvm::Value* dy = b.CreateFPExt(y, b.getDoubleTy());
  llvm::Value* sum = b.CreateFAdd(b.CreateFMul(dx, dx), b.CreateFMul(dy, dy));
  llvm::Value* root =
      b.CreateFPTrunc(b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, sum), b.getFloatTy());
  llvm::Value* inf = F(b, std::numeric_limits<float>::infinity());
  llvm::Value* infinite =
      b.CreateOr(b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf),
                 b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y), inf));
  return b.CreateSelect(infinite, inf, root);
}

}  // namespace axle::llvm_ir
