//===- cpu_target_hooks.cc - The host's answers to the elemental emitter ---===//
#include "axle/cpu/cpu_target_hooks.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/host_cache_sizes.h"
#include "axle/cpu/runtime_symbols.h"
#include "axle/llvm_ir/math_ir.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

using llvm_ir::MathFunction;

llvm::Module* ModuleOf(llvm::IRBuilderBase& b) { return b.GetInsertBlock()->getModule(); }

// A declaration of the pure function `name` of `type`.
llvm::FunctionCallee PureFunction(llvm::IRBuilderBase& b, const std::string& name,
                                  llvm::FunctionType* type) {
  llvm::FunctionCallee callee = ModuleOf(b)->getOrInsertFunction(name, type);
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotAccessMemory();
    function->setDoesNotThrow();
  }
  return callee;
}

llvm::Value* Real(llvm::IRBuilderBase& b, llvm::Value* z) { return b.CreateExtractValue(z, 0); }
llvm::Value* Imag(llvm::IRBuilderBase& b, llvm::Value* z) { return b.CreateExtractValue(z, 1); }

llvm::Value* MakeComplex(llvm::IRBuilderBase& b, llvm::Value* re, llvm::Value* im) {
  llvm::Type* type = llvm::StructType::get(b.getContext(), {re->getType(), im->getType()});
  llvm::Value* z = llvm::UndefValue::get(type);
  z = b.CreateInsertValue(z, re, 0);
  return b.CreateInsertValue(z, im, 1);
}

class CpuHooks final : public llvm_ir::TargetHooks {
 public:
  llvm::Value* EmitMathCall(llvm::IRBuilderBase& b, MathFunction function,
                            absl::Span<llvm::Value* const> args) const override {
    switch (function) {
      case MathFunction::kExp:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, args[0]);
      case MathFunction::kLog:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::log, args[0]);
      // f32 sin and cos stay with libm: its sinf and cosf take a fast path
      // below pi/4 (1.9 ns per element here) that the inline versions
      // (2.6 ns at any argument: three gathers from the reduction table)
      // do not beat; tests/jax_kinds/switch_seven_branches_loop, sin of
      // values in [-1, 1], ran 0.035 -> 0.043 ms with them.
      case MathFunction::kSin:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::sin, args[0]);
      case MathFunction::kCos:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::cos, args[0]);
      case MathFunction::kTan:
        if (args[0]->getType()->isFloatTy()) return llvm_ir::EmitTanF32(b, args[0]);
        break;
      case MathFunction::kPow:
        if (args[0]->getType()->isFloatTy()) return llvm_ir::EmitPowF32(b, args[0], args[1]);
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
      case MathFunction::kAtan2:
        if (args[0]->getType()->isFloatTy()) return llvm_ir::EmitAtan2F32(b, args[0], args[1]);
        break;
      case MathFunction::kHypot:
        if (args[0]->getType()->isFloatTy()) return llvm_ir::EmitHypotF32(b, args[0], args[1]);
        break;
      default:
        break;
    }
    // libm: `name` for double, `namef` for float.
    llvm::Type* type = args[0]->getType();
    std::string name(llvm_ir::MathFunctionName(function));
    if (type->isFloatTy()) name += 'f';
    std::vector<llvm::Type*> parameters(args.size(), type);
    llvm::FunctionCallee callee =
        PureFunction(b, name, llvm::FunctionType::get(type, parameters, false));
    return b.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  }

  llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                               absl::Span<llvm::Value* const> args) const override {
    if (opcode == HloOpcode::kDivide) return EmitDivide(b, args[0], args[1]);
    // c64 sqrt inline (vectorized); c128 and the other ops through the
    // runtime helpers.
    if (opcode == HloOpcode::kSqrt && Real(b, args[0])->getType()->isFloatTy()) {
      return EmitSqrtC64(b, args[0]);
    }
    // runtime_symbols.h's helper: `void f(const T* z, [const T* w,] T* out)`
    // on pairs in entry-block allocas.
    llvm::Type* component = Real(b, args[0])->getType();
    const PrimitiveType type = component->isFloatTy() ? C64 : C128;
    const std::string name = ComplexMathName(HloOpcodeString(opcode), type);
    llvm::Type* pair = llvm::ArrayType::get(component, 2);
    llvm::Function* function = b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    std::vector<llvm::Value*> pointers;
    for (llvm::Value* z : args) {
      llvm::Value* slot = entry.CreateAlloca(pair);
      b.CreateStore(Real(b, z), b.CreateConstInBoundsGEP2_32(pair, slot, 0, 0));
      b.CreateStore(Imag(b, z), b.CreateConstInBoundsGEP2_32(pair, slot, 0, 1));
      pointers.push_back(slot);
    }
    llvm::Value* out = entry.CreateAlloca(pair);
    pointers.push_back(out);
    std::vector<llvm::Type*> parameters(pointers.size(), b.getPtrTy());
    llvm::FunctionCallee callee = ModuleOf(b)->getOrInsertFunction(
        name, llvm::FunctionType::get(b.getVoidTy(), parameters, false));
    b.CreateCall(callee, pointers);
    return MakeComplex(b, b.CreateLoad(component, b.CreateConstInBoundsGEP2_32(pair, out, 0, 0)),
                       b.CreateLoad(component, b.CreateConstInBoundsGEP2_32(pair, out, 0, 1)));
  }

  void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* base, llvm::Value* byte_offset,
                    int64_t bytes) const override {
    llvm::Function* prefetch =
        llvm::Intrinsic::getDeclaration(ModuleOf(b), llvm::Intrinsic::prefetch, {b.getPtrTy()});
    for (int64_t line = 0; line < bytes; line += kCacheLineBytes) {
      llvm::Value* address =
          b.CreateGEP(b.getInt8Ty(), base, b.CreateAdd(byte_offset, b.getInt64(line)), "prefetch");
      // Read, into L2 (prefetcht1): a row reduction's current row, its row
      // buffers and the next row do not all fit in L1, and prefetcht0
      // evicted the ones being worked on (softmax 4096x4096: 8.1 -> 6.3 ms).
      b.CreateCall(prefetch, {address, b.getInt32(0), b.getInt32(2), b.getInt32(1)});
    }
  }

  int PreferredVectorBits() const override { return 512; }

 private:
  // The principal square root of a c64 by Kahan's formula in f64 (no
  // overflow, underflow or cancellation for any f32 input; rounded once
  // to f32 at the end): t = sqrt((|a| + |z|) / 2), then (t, b / 2t) where
  // a >= 0, else (|b| / 2t, copysign(t, b)). C99 Annex G's special
  // values: sqrt(+-0 + bi) = +0 + bi for b zero, sqrt(x +- inf i) =
  // +inf +- inf i (even for a NaN x), sqrt(+inf + bi) = +inf + 0i (NaN i
  // for a NaN b), sqrt(-inf + bi) = 0 + copysign(inf, b) i (NaN real part
  // for a NaN b); other NaNs give NaN.
  static llvm::Value* EmitSqrtC64(llvm::IRBuilderBase& b, llvm::Value* z) {
    llvm::Value* a = Real(b, z);
    llvm::Value* a_im = Imag(b, z);
    llvm::Type* f64 = b.getDoubleTy();
    llvm::Type* f32 = b.getFloatTy();
    auto constant = [&](llvm::Type* type, double v) { return llvm::ConstantFP::get(type, v); };
    auto abs = [&](llvm::Value* v) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    auto sqrt = [&](llvm::Value* v) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, v); };
    auto copysign = [&](llvm::Value* magnitude, llvm::Value* sign) {
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
    };
    llvm::Value* x = b.CreateFPExt(a, f64);
    llvm::Value* y = b.CreateFPExt(a_im, f64);
    llvm::Value* modulus = sqrt(b.CreateFAdd(b.CreateFMul(x, x), b.CreateFMul(y, y)));
    llvm::Value* t = sqrt(b.CreateFMul(b.CreateFAdd(abs(x), modulus), constant(f64, 0.5)));
    llvm::Value* half = b.CreateFDiv(y, b.CreateFMul(t, constant(f64, 2)));
    llvm::Value* nonnegative = b.CreateFCmpOGE(x, constant(f64, 0));
    llvm::Value* re = b.CreateFPTrunc(b.CreateSelect(nonnegative, t, abs(half)), f32);
    llvm::Value* im = b.CreateFPTrunc(b.CreateSelect(nonnegative, half, copysign(t, y)), f32);
    llvm::Value* inf = constant(f32, INFINITY);
    // -inf real part (finite or NaN b); +inf; a zero; an infinite b.
    llvm::Value* minus_inf = b.CreateFCmpOEQ(a, constant(f32, -INFINITY));
    re = b.CreateSelect(minus_inf, abs(b.CreateFMul(a_im, constant(f32, 0))), re);
    im = b.CreateSelect(minus_inf, copysign(inf, a_im), im);
    llvm::Value* plus_inf = b.CreateFCmpOEQ(a, inf);
    re = b.CreateSelect(plus_inf, inf, re);
    im = b.CreateSelect(plus_inf, b.CreateFMul(a_im, constant(f32, 0)), im);
    llvm::Value* zero =
        b.CreateAnd(b.CreateFCmpOEQ(a, constant(f32, 0)), b.CreateFCmpOEQ(a_im, constant(f32, 0)));
    re = b.CreateSelect(zero, constant(f32, 0), re);
    im = b.CreateSelect(zero, a_im, im);
    llvm::Value* infinite_im = b.CreateFCmpOEQ(abs(a_im), inf);
    re = b.CreateSelect(infinite_im, inf, re);
    im = b.CreateSelect(infinite_im, a_im, im);
    return MakeComplex(b, re, im);
  }

  // Complex division as XLA's elemental emitter computes it, inline (the
  // loop vectorizes it): Smith's algorithm (the larger of |c|, |d|
  // divides), then, where that gives NaN + NaN i, C99 Annex G's
  // recoveries: a numerator not all NaN over zero is an infinity of
  // copysign(inf, c) times it; an infinite numerator over a finite
  // denominator an infinity; a finite numerator over an infinite one a
  // zero (with the signs the product rule gives).
  static llvm::Value* EmitDivide(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
    llvm::Value* a = Real(b, x);
    llvm::Value* a_im = Imag(b, x);
    llvm::Value* c = Real(b, y);
    llvm::Value* d = Imag(b, y);
    llvm::Type* type = a->getType();
    auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
    auto abs = [&](llvm::Value* v) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    auto copysign = [&](llvm::Value* magnitude, llvm::Value* sign) {
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
    };
    auto is_nan = [&](llvm::Value* v) { return b.CreateFCmpUNO(v, v); };
    auto is_inf = [&](llvm::Value* v) { return b.CreateFCmpOEQ(abs(v), constant(INFINITY)); };
    auto is_finite = [&](llvm::Value* v) { return b.CreateFCmpOLT(abs(v), constant(INFINITY)); };
    // |c| < |d|: r = c / d, den = d + c r, ((a r + b), (b r - a)) / den.
    llvm::Value* d_larger = b.CreateFCmpOLT(abs(c), abs(d));
    llvm::Value* r1 = b.CreateFDiv(c, d);
    llvm::Value* den1 = b.CreateFAdd(d, b.CreateFMul(c, r1));
    llvm::Value* re1 = b.CreateFDiv(b.CreateFAdd(b.CreateFMul(a, r1), a_im), den1);
    llvm::Value* im1 = b.CreateFDiv(b.CreateFSub(b.CreateFMul(a_im, r1), a), den1);
    // else: r = d / c, den = c + d r, ((a + b r), (b - a r)) / den.
    llvm::Value* r2 = b.CreateFDiv(d, c);
    llvm::Value* den2 = b.CreateFAdd(c, b.CreateFMul(d, r2));
    llvm::Value* re2 = b.CreateFDiv(b.CreateFAdd(a, b.CreateFMul(a_im, r2)), den2);
    llvm::Value* im2 = b.CreateFDiv(b.CreateFSub(a_im, b.CreateFMul(a, r2)), den2);
    llvm::Value* re = b.CreateSelect(d_larger, re1, re2);
    llvm::Value* im = b.CreateSelect(d_larger, im1, im2);
    llvm::Value* both_nan = b.CreateAnd(is_nan(re), is_nan(im));
    // 1: zero denominator, numerator not all NaN.
    llvm::Value* zero_denominator =
        b.CreateAnd(b.CreateAnd(b.CreateFCmpOEQ(c, constant(0)), b.CreateFCmpOEQ(d, constant(0))),
                    b.CreateOr(b.CreateNot(is_nan(a)), b.CreateNot(is_nan(a_im))));
    llvm::Value* signed_inf = copysign(constant(INFINITY), c);
    llvm::Value* re_1 = b.CreateFMul(signed_inf, a);
    llvm::Value* im_1 = b.CreateFMul(signed_inf, a_im);
    // 2: infinite numerator, finite denominator.
    llvm::Value* infinite_numerator =
        b.CreateAnd(b.CreateOr(is_inf(a), is_inf(a_im)), b.CreateAnd(is_finite(c), is_finite(d)));
    llvm::Value* a_unit = copysign(b.CreateSelect(is_inf(a), constant(1), constant(0)), a);
    llvm::Value* b_unit = copysign(b.CreateSelect(is_inf(a_im), constant(1), constant(0)), a_im);
    llvm::Value* re_2 = b.CreateFMul(
        constant(INFINITY), b.CreateFAdd(b.CreateFMul(a_unit, c), b.CreateFMul(b_unit, d)));
    llvm::Value* im_2 = b.CreateFMul(
        constant(INFINITY), b.CreateFSub(b.CreateFMul(b_unit, c), b.CreateFMul(a_unit, d)));
    // 3: finite numerator, infinite denominator.
    llvm::Value* infinite_denominator =
        b.CreateAnd(b.CreateOr(is_inf(c), is_inf(d)), b.CreateAnd(is_finite(a), is_finite(a_im)));
    llvm::Value* c_unit = copysign(b.CreateSelect(is_inf(c), constant(1), constant(0)), c);
    llvm::Value* d_unit = copysign(b.CreateSelect(is_inf(d), constant(1), constant(0)), d);
    llvm::Value* re_3 = b.CreateFMul(
        constant(0), b.CreateFAdd(b.CreateFMul(a, c_unit), b.CreateFMul(a_im, d_unit)));
    llvm::Value* im_3 = b.CreateFMul(
        constant(0), b.CreateFSub(b.CreateFMul(a_im, c_unit), b.CreateFMul(a, d_unit)));
    llvm::Value* case3 = b.CreateAnd(both_nan, infinite_denominator);
    re = b.CreateSelect(case3, re_3, re);
    im = b.CreateSelect(case3, im_3, im);
    llvm::Value* case2 = b.CreateAnd(both_nan, infinite_numerator);
    re = b.CreateSelect(case2, re_2, re);
    im = b.CreateSelect(case2, im_2, im);
    llvm::Value* case1 = b.CreateAnd(both_nan, zero_denominator);
    re = b.CreateSelect(case1, re_1, re);
    im = b.CreateSelect(case1, im_1, im);
    return MakeComplex(b, re, im);
  }
};

}  // namespace

const llvm_ir::TargetHooks& CpuTargetHooks() {
  static const CpuHooks* const hooks = new CpuHooks();
  return *hooks;
}

}  // namespace axle::cpu
