//===- cpu_target_hooks.cc - The host's answers to the elemental emitter ---===//
#include "axle/cpu/cpu_target_hooks.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/types.h"
#include "axle/cpu/runtime_symbols.h"
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

// The layout of an 8- or 4-bit float that EmitF32ToNarrowBits rounds to
// inline (axle/core/types.h's formats; e8m0fnu, which has no mantissa and
// rounds differently, keeps the runtime call).
struct NarrowFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  FloatEncoding encoding;
};

std::optional<NarrowFormat> NarrowFormatOf(PrimitiveType type) {
  switch (type) {
    case F8E5M2:
      return NarrowFormat{5, 2, 15, FloatEncoding::kIeee};
    case F8E4M3:
      return NarrowFormat{4, 3, 7, FloatEncoding::kIeee};
    case F8E3M4:
      return NarrowFormat{3, 4, 3, FloatEncoding::kIeee};
    case F8E4M3FN:
      return NarrowFormat{4, 3, 7, FloatEncoding::kFiniteNan};
    case F8E4M3FNUZ:
      return NarrowFormat{4, 3, 8, FloatEncoding::kFiniteUz};
    case F8E4M3B11FNUZ:
      return NarrowFormat{4, 3, 11, FloatEncoding::kFiniteUz};
    case F8E5M2FNUZ:
      return NarrowFormat{5, 2, 16, FloatEncoding::kFiniteUz};
    case F4E2M1FN:
      return NarrowFormat{2, 1, 1, FloatEncoding::kFiniteOnly};
    default:
      return std::nullopt;
  }
}

// f32 -> the encoding of `f`, rounded to nearest even, in straight-line i32
// arithmetic the loop vectorizer widens (variable shifts, compares and
// selects; no table, no call): the same bits as axle/core/types.cc's
// Encode, and so as the interpreter. The f32's significand (hidden bit
// set) shifts down to the result's quantum: its exponent's, or the
// subnormals' below the least normal exponent; with q that quantum's
// exponent, ((q + bias - 1) << mantissa_bits) + the rounded significand is
// the encoding of a normal result, a subnormal one (q + bias - 1 = 0) and a
// carry into the next binade alike. f32 zeros and subnormals shift out
// entirely (shift clamped to 31: zero). Past the largest finite value
// (infinity included) the format's overflow rule; NaN its NaN.
llvm::Value* EmitF32ToNarrowBits(llvm::IRBuilderBase& b, const NarrowFormat& f,
                                 llvm::Value* value) {
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  const int m = f.mantissa_bits;
  const uint32_t sign_bit = 1u << (f.exponent_bits + m);
  const uint32_t max_field = (1u << f.exponent_bits) - 1;
  const uint32_t max_finite = NarrowFloatMaxFiniteBits(f.exponent_bits, m, f.encoding);
  llvm::Value* bits = b.CreateBitCast(value, b.getInt32Ty());
  llvm::Value* magnitude = b.CreateAnd(bits, i32(0x7fffffff));
  llvm::Value* sign = b.CreateSelect(b.CreateICmpSLT(bits, i32(0)), i32(sign_bit), i32(0));
  llvm::Value* exponent = b.CreateSub(b.CreateLShr(magnitude, 23), i32(127));
  llvm::Value* quantum = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, exponent, i32(1 - f.bias));
  llvm::Value* shift = b.CreateAdd(b.CreateSub(quantum, exponent), i32(23 - m));
  shift = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, shift, i32(31));
  llvm::Value* significand = b.CreateOr(b.CreateAnd(magnitude, i32(0x7fffff)), i32(0x800000));
  llvm::Value* rounded = b.CreateLShr(significand, shift);
  llvm::Value* rest = b.CreateSub(significand, b.CreateShl(rounded, shift));
  llvm::Value* half = b.CreateShl(i32(1), b.CreateSub(shift, i32(1)));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(rounded, i32(1)), i32(0));
  llvm::Value* up =
      b.CreateOr(b.CreateICmpUGT(rest, half), b.CreateAnd(b.CreateICmpEQ(rest, half), odd));
  rounded = b.CreateAdd(rounded, b.CreateZExt(up, b.getInt32Ty()));
  llvm::Value* encoded =
      b.CreateAdd(b.CreateShl(b.CreateAdd(quantum, i32(f.bias - 1)), m), rounded);
  llvm::Value* result = b.CreateOr(sign, encoded);
  llvm::Value* overflow = nullptr;
  llvm::Value* nan = nullptr;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      overflow = b.CreateOr(sign, i32(max_field << m));
      nan = b.CreateOr(sign, i32((max_field << m) | (1u << (m - 1))));
      break;
    case FloatEncoding::kFiniteNan:
      overflow = nan = b.CreateOr(sign, i32((max_field << m) | ((1u << m) - 1)));
      break;
    case FloatEncoding::kFiniteUz:
      // No -0: a zero result is +0, and -0's pattern is the NaN.
      result = b.CreateSelect(b.CreateICmpEQ(encoded, i32(0)), i32(0), result);
      overflow = nan = i32(sign_bit);
      break;
    case FloatEncoding::kFiniteOnly:
      overflow = b.CreateOr(sign, i32(max_finite));
      nan = i32(0);
      break;
    case FloatEncoding::kExponentOnly:
      return nullptr;
  }
  result = b.CreateSelect(b.CreateICmpUGT(encoded, i32(max_finite)), overflow, result);
  result = b.CreateSelect(b.CreateICmpUGT(magnitude, i32(0x7f800000)), nan, result);
  return b.CreateTrunc(result, b.getInt8Ty());
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
      case MathFunction::kSin:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::sin, args[0]);
      case MathFunction::kCos:
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::cos, args[0]);
      case MathFunction::kPow:
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
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

  llvm::Value* EmitF32ToNarrowFloat(llvm::IRBuilderBase& b, PrimitiveType type,
                                    llvm::Value* value) const override {
    if (std::optional<NarrowFormat> format = NarrowFormatOf(type)) {
      return EmitF32ToNarrowBits(b, *format, value);
    }
    llvm::FunctionCallee encoder =
        PureFunction(b, NarrowFloatEncoderName(type),
                     llvm::FunctionType::get(b.getInt8Ty(), {b.getFloatTy()}, false));
    return b.CreateCall(encoder, {value});
  }

  llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                               absl::Span<llvm::Value* const> args) const override {
    if (opcode == HloOpcode::kDivide) return EmitDivide(b, args[0], args[1]);
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
  static constexpr int64_t kCacheLineBytes = 64;

  // C99 Annex G division (scaling, inf and NaN recovery) as the C++ library
  // does it: the compiler runtime's __divsc3 / __divdc3.
  static llvm::Value* EmitDivide(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
    llvm::Value* a = Real(b, x);
    llvm::Value* b_im = Imag(b, x);
    llvm::Value* c = Real(b, y);
    llvm::Value* d = Imag(b, y);
    const bool f32 = a->getType()->isFloatTy();
    llvm::Type* component = a->getType();
    llvm::Type* returned = f32 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(component, 2))
                               : llvm::StructType::get(b.getContext(), {component, component});
    llvm::FunctionCallee divide = ModuleOf(b)->getOrInsertFunction(
        f32 ? "__divsc3" : "__divdc3",
        llvm::FunctionType::get(returned, {component, component, component, component}, false));
    llvm::Value* quotient = b.CreateCall(divide, {a, b_im, c, d});
    if (!f32) return quotient;
    return MakeComplex(b, b.CreateExtractElement(quotient, uint64_t{0}),
                       b.CreateExtractElement(quotient, uint64_t{1}));
  }
};

}  // namespace

const llvm_ir::TargetHooks& CpuTargetHooks() {
  static const CpuHooks* const hooks = new CpuHooks();
  return *hooks;
}

}  // namespace axle::cpu
