//===- complex_math.cc - The complex ops a target has no helpers for, in IR ===//
#include "axle/llvm_ir/complex_math.h"

#include <limits>
#include <numbers>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace axle::llvm_ir {
namespace {

struct Complex {
  llvm::Value* re;
  llvm::Value* im;
};

class ComplexEmitter {
 public:
  ComplexEmitter(const TargetHooks& hooks, llvm::IRBuilderBase& b, llvm::Type* component)
      : hooks_(hooks), b_(b), type_(component) {}

  Complex Unpack(llvm::Value* z) {
    return {b_.CreateExtractValue(z, 0), b_.CreateExtractValue(z, 1)};
  }
  llvm::Value* Pack(Complex z) {
    llvm::Value* value =
        llvm::UndefValue::get(llvm::StructType::get(b_.getContext(), {type_, type_}));
    value = b_.CreateInsertValue(value, z.re, 0);
    return b_.CreateInsertValue(value, z.im, 1);
  }

  llvm::Value* C(double value) { return llvm::ConstantFP::get(type_, value); }
  llvm::Value* Add(llvm::Value* x, llvm::Value* y) { return b_.CreateFAdd(x, y); }
  llvm::Value* Sub(llvm::Value* x, llvm::Value* y) { return b_.CreateFSub(x, y); }
  llvm::Value* Mul(llvm::Value* x, llvm::Value* y) { return b_.CreateFMul(x, y); }
  llvm::Value* Div(llvm::Value* x, llvm::Value* y) { return b_.CreateFDiv(x, y); }
  llvm::Value* Neg(llvm::Value* x) { return b_.CreateFNeg(x); }
  llvm::Value* Abs(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value* Sqrt(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); }
  llvm::Value* CopySign(llvm::Value* magnitude, llvm::Value* sign) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
  }
  llvm::Value* Select(llvm::Value* condition, llvm::Value* x, llvm::Value* y) {
    return b_.CreateSelect(condition, x, y);
  }
  Complex Select(llvm::Value* condition, Complex x, Complex y) {
    return {Select(condition, x.re, y.re), Select(condition, x.im, y.im)};
  }
  llvm::Value* Math(MathFunction function, llvm::Value* x) {
    return hooks_.EmitMathCall(b_, function, {x});
  }
  llvm::Value* Math(MathFunction function, llvm::Value* x, llvm::Value* y) {
    return hooks_.EmitMathCall(b_, function, {x, y});
  }
  llvm::Value* IsZero(Complex z) {
    return b_.CreateAnd(b_.CreateFCmpOEQ(z.re, C(0)), b_.CreateFCmpOEQ(z.im, C(0)));
  }
  // Whether |x| is past where cosh/sinh/exp overflow (a little under it).
  llvm::Value* Huge(llvm::Value* x) {
    return b_.CreateFCmpOGT(Abs(x), C(type_->isFloatTy() ? 40.0 : 350.0));
  }

  Complex Add(Complex x, Complex y) { return {Add(x.re, y.re), Add(x.im, y.im)}; }
  Complex Sub(Complex x, Complex y) { return {Sub(x.re, y.re), Sub(x.im, y.im)}; }
  Complex Mul(Complex x, Complex y) {
    return {Sub(Mul(x.re, y.re), Mul(x.im, y.im)), Add(Mul(x.re, y.im), Mul(x.im, y.re))};
  }
  Complex Scale(Complex x, llvm::Value* s) { return {Mul(x.re, s), Mul(x.im, s)}; }
  // i z and -i z.
  Complex TimesI(Complex z) { return {Neg(z.im), z.re}; }
  Complex TimesMinusI(Complex z) { return {z.im, Neg(z.re)}; }

  Complex Divide(Complex x, Complex y) {
    llvm::Value* c_larger = b_.CreateFCmpOGE(Abs(y.re), Abs(y.im));
    // |c| >= |d|: r = d / c, den = c + d r, ((a + b r), (b - a r)) / den.
    llvm::Value* r1 = Div(y.im, y.re);
    llvm::Value* den1 = Add(y.re, Mul(y.im, r1));
    Complex q1{Div(Add(x.re, Mul(x.im, r1)), den1), Div(Sub(x.im, Mul(x.re, r1)), den1)};
    // else: r = c / d, den = c r + d, ((a r + b), (b r - a)) / den.
    llvm::Value* r2 = Div(y.re, y.im);
    llvm::Value* den2 = Add(Mul(y.re, r2), y.im);
    Complex q2{Div(Add(Mul(x.re, r2), x.im), den2), Div(Sub(Mul(x.im, r2), x.re), den2)};
    Complex q = Select(c_larger, q1, q2);
    // A nonzero, non-NaN numerator over zero: infinity of the numerator's
    // signs (C99 Annex G), where Smith's ratio is 0/0.
    llvm::Value* inf = CopySign(C(std::numeric_limits<double>::infinity()), y.re);
    llvm::Value* numerator_ok = b_.CreateAnd(b_.CreateFCmpORD(x.re, x.im), b_.CreateNot(IsZero(x)));
    return Select(b_.CreateAnd(IsZero(y), numerator_ok), Complex{Mul(inf, x.re), Mul(inf, x.im)},
                  q);
  }

  Complex Exp(Complex z) {
    llvm::Value* e = Math(MathFunction::kExp, z.re);
    return {Mul(e, Math(MathFunction::kCos, z.im)), Mul(e, Math(MathFunction::kSin, z.im))};
  }
  Complex Log(Complex z) {
    return {Math(MathFunction::kLog, Math(MathFunction::kHypot, z.re, z.im)),
            Math(MathFunction::kAtan2, z.im, z.re)};
  }
  // Kahan: t = sqrt((|a| + |z|) / 2); a >= 0: (t, b / 2t); else
  // (|b| / 2t, copysign(t, b)); zero stays (0, b).
  Complex SquareRoot(Complex z) {
    llvm::Value* t = Sqrt(Mul(Add(Abs(z.re), Math(MathFunction::kHypot, z.re, z.im)), C(0.5)));
    llvm::Value* half = Div(z.im, Mul(C(2), t));
    Complex positive{t, half};
    Complex negative{Abs(half), CopySign(t, z.im)};
    Complex root = Select(b_.CreateFCmpOGE(z.re, C(0)), positive, negative);
    return Select(IsZero(z), Complex{C(0), z.im}, root);
  }
  Complex One() { return {C(1), C(0)}; }

  Complex Power(Complex x, Complex y) {
    Complex general = Exp(Mul(y, Log(x)));
    llvm::Value* zero_base = IsZero(x);
    Complex zero_power = Select(IsZero(y), One(),
                                Select(b_.CreateFCmpOGT(y.re, C(0)), Complex{C(0), C(0)}, general));
    return Select(zero_base, zero_power, general);
  }

  Complex Sin(Complex z) {
    return {Mul(Math(MathFunction::kSin, z.re), Math(MathFunction::kCosh, z.im)),
            Mul(Math(MathFunction::kCos, z.re), Math(MathFunction::kSinh, z.im))};
  }
  Complex Cos(Complex z) {
    return {Mul(Math(MathFunction::kCos, z.re), Math(MathFunction::kCosh, z.im)),
            Neg(Mul(Math(MathFunction::kSin, z.re), Math(MathFunction::kSinh, z.im)))};
  }
  Complex Sinh(Complex z) {
    return {Mul(Math(MathFunction::kSinh, z.re), Math(MathFunction::kCos, z.im)),
            Mul(Math(MathFunction::kCosh, z.re), Math(MathFunction::kSin, z.im))};
  }
  Complex Cosh(Complex z) {
    return {Mul(Math(MathFunction::kCosh, z.re), Math(MathFunction::kCos, z.im)),
            Mul(Math(MathFunction::kSinh, z.re), Math(MathFunction::kSin, z.im))};
  }
  // tanh(a + bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b); past
  // overflow, copysign(1, a) + 0i.
  Complex Tanh(Complex z) {
    llvm::Value* a2 = Mul(z.re, C(2));
    llvm::Value* b2 = Mul(z.im, C(2));
    llvm::Value* den = Add(Math(MathFunction::kCosh, a2), Math(MathFunction::kCos, b2));
    Complex value{Div(Math(MathFunction::kSinh, a2), den), Div(Math(MathFunction::kSin, b2), den)};
    return Select(Huge(a2), Complex{CopySign(C(1), z.re), Mul(C(0), Math(MathFunction::kSin, b2))},
                  value);
  }
  // tan z = -i tanh(i z).
  Complex Tan(Complex z) { return TimesMinusI(Tanh(TimesI(z))); }

  // asinh on the right half-plane (no cancellation), odd: asinh(-z) =
  // -asinh(z).
  Complex Asinh(Complex z) {
    llvm::Value* negative = b_.CreateFCmpOLT(z.re, C(0));
    Complex w = Select(negative, Complex{Neg(z.re), Neg(z.im)}, z);
    Complex r = Log(Add(w, SquareRoot(Add(Mul(w, w), One()))));
    return Select(negative, Complex{Neg(r.re), Neg(r.im)}, r);
  }
  Complex Acosh(Complex z) {
    return Log(Add(z, Mul(SquareRoot(Add(z, One())), SquareRoot(Sub(z, One())))));
  }
  Complex Atanh(Complex z) {
    return Scale(Sub(Log1p(z), Log1p(Complex{Neg(z.re), Neg(z.im)})), C(0.5));
  }
  Complex Asin(Complex z) { return TimesMinusI(Asinh(TimesI(z))); }
  Complex Acos(Complex z) {
    Complex s = Asin(z);
    return {Sub(C(std::numbers::pi / 2), s.re), Neg(s.im)};
  }
  Complex Atan(Complex z) { return TimesMinusI(Atanh(TimesI(z))); }

  Complex Expm1(Complex z) {
    llvm::Value* half_sin = Math(MathFunction::kSin, Mul(z.im, C(0.5)));
    return {Sub(Mul(Math(MathFunction::kExpm1, z.re), Math(MathFunction::kCos, z.im)),
                Mul(C(2), Mul(half_sin, half_sin))),
            Mul(Math(MathFunction::kExp, z.re), Math(MathFunction::kSin, z.im))};
  }
  Complex Log1p(Complex z) {
    llvm::Value* t = Add(Mul(C(2), z.re), Add(Mul(z.re, z.re), Mul(z.im, z.im)));
    return {Mul(C(0.5), Math(MathFunction::kLog1p, t)),
            Math(MathFunction::kAtan2, z.im, Add(C(1), z.re))};
  }
  // atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), as XLA defines it.
  Complex Atan2(Complex y, Complex x) {
    return TimesMinusI(Log(Divide(Add(x, TimesI(y)), SquareRoot(Add(Mul(x, x), Mul(y, y))))));
  }
  Complex Logistic(Complex z) {
    return Divide(One(), Add(One(), Exp(Complex{Neg(z.re), Neg(z.im)})));
  }

 private:
  const TargetHooks& hooks_;
  llvm::IRBuilderBase& b_;
  llvm::Type* type_;
};

}  // namespace

llvm::Value* EmitComplexMath(const TargetHooks& hooks, llvm::IRBuilderBase& b, HloOpcode opcode,
                             absl::Span<llvm::Value* const> args) {
  ComplexEmitter e(hooks, b, b.CreateExtractValue(args[0], 0)->getType());
  const Complex z = e.Unpack(args[0]);
  switch (opcode) {
    case HloOpcode::kDivide:
      return e.Pack(e.Divide(z, e.Unpack(args[1])));
    case HloOpcode::kPower:
      return e.Pack(e.Power(z, e.Unpack(args[1])));
    case HloOpcode::kAtan2:
      return e.Pack(e.Atan2(z, e.Unpack(args[1])));
    case HloOpcode::kSqrt:
      return e.Pack(e.SquareRoot(z));
    case HloOpcode::kRsqrt:
      return e.Pack(e.Divide(e.One(), e.SquareRoot(z)));
    case HloOpcode::kSin:
      return e.Pack(e.Sin(z));
    case HloOpcode::kCos:
      return e.Pack(e.Cos(z));
    case HloOpcode::kTan:
      return e.Pack(e.Tan(z));
    case HloOpcode::kTanh:
      return e.Pack(e.Tanh(z));
    case HloOpcode::kSinh:
      return e.Pack(e.Sinh(z));
    case HloOpcode::kCosh:
      return e.Pack(e.Cosh(z));
    case HloOpcode::kAsin:
      return e.Pack(e.Asin(z));
    case HloOpcode::kAcos:
      return e.Pack(e.Acos(z));
    case HloOpcode::kAtan:
      return e.Pack(e.Atan(z));
    case HloOpcode::kAsinh:
      return e.Pack(e.Asinh(z));
    case HloOpcode::kAcosh:
      return e.Pack(e.Acosh(z));
    case HloOpcode::kAtanh:
      return e.Pack(e.Atanh(z));
    case HloOpcode::kExpm1:
      return e.Pack(e.Expm1(z));
    case HloOpcode::kLog1p:
      return e.Pack(e.Log1p(z));
    case HloOpcode::kLogistic:
      return e.Pack(e.Logistic(z));
    default:
      return llvm::PoisonValue::get(args[0]->getType());
  }
}

}  // namespace axle::llvm_ir
