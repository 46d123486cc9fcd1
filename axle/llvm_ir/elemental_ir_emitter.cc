//===- elemental_ir_emitter.cc - Elementwise ops as LLVM IR ----------------===//
//
// Types, loads and stores, and the elementwise ops. The index-remapping ops
// are in elemental_indexing.cc. Semantics follow hlo_semantics.md exactly:
// integer division and shifts are guarded with selects (no UB, no branches),
// max/min propagate NaN, float->int converts saturate, narrow floats round
// after every op.
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/elemental_ir_emitter.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/types.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/llvm_ir/complex_call_ops.h"
#include "axle/llvm_ir/math_ir.h"
#include "axle/llvm_ir/narrow_float_ir.h"
#include "llvm/IR/Intrinsics.h"

namespace axle::llvm_ir {
namespace pu = primitive_util;

namespace {

bool IsNarrowFloat(PrimitiveType type) {
  return pu::IsFloatingPointType(type) && type != F32 && type != F64;
}

absl::Status UnimplementedFor(const HloInstruction& hlo, PrimitiveType type) {
  return absl::UnimplementedError(absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()), " of ",
                                               pu::LowercasePrimitiveTypeName(type),
                                               " is not implemented (", hlo.name(), ")"));
}

}  // namespace

absl::Status ElementalIrEmitter::CheckSupportedType(PrimitiveType type, const HloInstruction& hlo) {
  if (pu::IsArrayType(type)) return absl::OkStatus();
  return UnimplementedFor(hlo, type);
}

// --- Types, loads, stores ----------------------------------------------------

llvm::Type* ElementalIrEmitter::ValueType(PrimitiveType type) {
  llvm::LLVMContext& context = b_.getContext();
  switch (type) {
    case PRED:
      return b_.getInt1Ty();
    case F32:
      return b_.getFloatTy();
    case F64:
      return b_.getDoubleTy();
    case C64:
      return llvm::StructType::get(context, {b_.getFloatTy(), b_.getFloatTy()});
    case C128:
      return llvm::StructType::get(context, {b_.getDoubleTy(), b_.getDoubleTy()});
    default:
      if (IsNarrowFloat(type)) return b_.getFloatTy();
      return b_.getIntNTy(pu::BitWidth(type));
  }
}

llvm::Type* ElementalIrEmitter::StorageType(PrimitiveType type) {
  if (type == PRED || pu::IsSubByteType(type)) return b_.getInt8Ty();
  if (IsNarrowFloat(type)) return b_.getIntNTy(pu::ByteWidth(type) * 8);
  return ValueType(type);
}

llvm::Value* ElementalIrEmitter::LoadElement(llvm::Value* base, llvm::Value* linear_index,
                                             PrimitiveType type) {
  llvm::Type* storage = StorageType(type);
  llvm::Value* address = b_.CreateInBoundsGEP(storage, base, linear_index);
  llvm::Value* stored = b_.CreateLoad(storage, address);
  if (type == PRED) return b_.CreateICmpNE(stored, b_.getInt8(0));
  if (pu::IsIntegralType(type) && pu::IsSubByteType(type)) {
    return b_.CreateTrunc(stored, ValueType(type));
  }
  if (IsNarrowFloat(type)) return NarrowFloatToF32(stored, type);
  return stored;
}

void ElementalIrEmitter::StoreElement(llvm::Value* value, llvm::Value* base,
                                      llvm::Value* linear_index, PrimitiveType type) {
  llvm::Type* storage = StorageType(type);
  llvm::Value* address = b_.CreateInBoundsGEP(storage, base, linear_index);
  llvm::Value* stored = value;
  if (type == PRED) {
    stored = b_.CreateZExt(value, storage);
  } else if (pu::IsIntegralType(type) && pu::IsSubByteType(type)) {
    stored = pu::IsSignedIntegralType(type) ? b_.CreateSExt(value, storage)
                                            : b_.CreateZExt(value, storage);
  } else if (IsNarrowFloat(type)) {
    stored = F32ToNarrowFloat(value, type);
  }
  b_.CreateStore(stored, address);
}

llvm::Value* ElementalIrEmitter::Linearize(const IrIndex& index,
                                           absl::Span<const int64_t> dimensions) {
  llvm::Value* linear = I64(0);
  for (size_t i = 0; i < dimensions.size(); ++i) {
    linear = b_.CreateAdd(b_.CreateMul(linear, I64(dimensions[i])), index[i]);
  }
  return linear;
}

// --- Narrow floats -------------------------------------------------------------

llvm::Value* ElementalIrEmitter::NarrowFloatToF32(llvm::Value* bits, PrimitiveType type) {
  if (type == BF16) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16),
                            b_.getFloatTy());
  }
  if (type == F16) {
    return b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy());
  }
  // 8- and 4-bit formats: a 256-entry table of their f32 values.
  std::string name = absl::StrCat("axle_decode_", pu::LowercasePrimitiveTypeName(type));
  llvm::GlobalVariable* table = module_->getGlobalVariable(name, /*AllowInternal=*/true);
  if (table == nullptr) {
    std::vector<float> values(256);
    Literal scratch(Shape(type, {}));
    for (int i = 0; i < 256; ++i) {
      // Decode through the core types, so the table is the interpreter's.
      *static_cast<uint8_t*>(scratch.untyped_data()) = static_cast<uint8_t>(i);
      values[i] = static_cast<float>(scratch.GetAsDouble(0));
    }
    llvm::Constant* init = llvm::ConstantDataArray::get(b_.getContext(), values);
    table = new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
  }
  llvm::Value* address = b_.CreateInBoundsGEP(
      table->getValueType(), table, {b_.getInt64(0), b_.CreateZExt(bits, b_.getInt64Ty())});
  return b_.CreateLoad(b_.getFloatTy(), address);
}

llvm::Value* ElementalIrEmitter::F32ToNarrowFloat(llvm::Value* value, PrimitiveType type) {
  if (type == BF16) {
    // Round to nearest even on the bits; NaN stays NaN (quieted).
    llvm::Value* bits = b_.CreateBitCast(value, b_.getInt32Ty());
    llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), b_.getInt32(1));
    llvm::Value* rounded = b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff)));
    llvm::Value* nan = b_.CreateOr(bits, b_.getInt32(0x00400000));
    llvm::Value* is_nan = b_.CreateFCmpUNO(value, value);
    return b_.CreateTrunc(b_.CreateLShr(b_.CreateSelect(is_nan, nan, rounded), 16),
                          b_.getInt16Ty());
  }
  if (type == F16) {
    return b_.CreateBitCast(b_.CreateFPTrunc(value, b_.getHalfTy()), b_.getInt16Ty());
  }
  return EmitF32ToNarrowFloatInline(b_, type, value);
}

llvm::Value* ElementalIrEmitter::RoundToType(llvm::Value* value, PrimitiveType type) {
  if (!IsNarrowFloat(type)) return value;
  return NarrowFloatToF32(F32ToNarrowFloat(value, type), type);
}

// --- Helpers -------------------------------------------------------------------

llvm::Value* ElementalIrEmitter::CallMath(MathFunction function, llvm::Value* x) {
  return hooks_->EmitMathCall(b_, function, {x});
}

llvm::Value* ElementalIrEmitter::CallMath(MathFunction function, llvm::Value* x, llvm::Value* y) {
  return hooks_->EmitMathCall(b_, function, {x, y});
}

llvm::Value* ElementalIrEmitter::MakeComplex(llvm::Value* re, llvm::Value* im) {
  llvm::Type* type = llvm::StructType::get(b_.getContext(), {re->getType(), im->getType()});
  llvm::Value* z = llvm::UndefValue::get(type);
  z = b_.CreateInsertValue(z, re, 0);
  return b_.CreateInsertValue(z, im, 1);
}

llvm::Value* ElementalIrEmitter::EmitMax(PrimitiveType type, llvm::Value* x, llvm::Value* y) {
  if (type == PRED) return b_.CreateOr(x, y);
  if (pu::IsSignedIntegralType(type)) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y);
  if (pu::IsUnsignedIntegralType(type)) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, x, y);
  }
  // NaN from x first, then y; otherwise x unless x < y (so max(-0, +0) = -0).
  llvm::Value* result = b_.CreateSelect(b_.CreateFCmpOLT(x, y), y, x);
  result = b_.CreateSelect(b_.CreateFCmpUNO(y, y), y, result);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* ElementalIrEmitter::EmitMin(PrimitiveType type, llvm::Value* x, llvm::Value* y) {
  if (type == PRED) return b_.CreateAnd(x, y);
  if (pu::IsSignedIntegralType(type)) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
  if (pu::IsUnsignedIntegralType(type)) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, y);
  }
  llvm::Value* result = b_.CreateSelect(b_.CreateFCmpOLT(y, x), y, x);
  result = b_.CreateSelect(b_.CreateFCmpUNO(y, y), y, result);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
}

// --- Dispatch ------------------------------------------------------------------

namespace {

absl::Status NotInLoopKernels(const HloInstruction& hlo) {
  return absl::UnimplementedError(absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()),
                                               " is not implemented in loop kernels (", hlo.name(),
                                               ")"));
}

// How EmitElement computes an element of an opcode.
enum class ElementRule {
  kNotInLoopKernels,  // a backend runs it otherwise, rewrites it first, or rejects it
  kUnary,
  kBinary,
  kGetTupleElement,
  kMap,
  kReduce,
  kReduceWindow,
  kSelect,
  kClamp,
  kConvert,
  kBitcastConvert,
  kReducePrecision,
  kStochasticConvert,
  kIndexing,  // elemental_indexing.cc
};

// The opcodes a loop kernel computes, and their rule; every other opcode is
// not an element of a loop kernel. The backends put the elementwise lists and
// AXLE_HLO_LOOP_FUSED_OPCODES in loop fusions without naming them one by one,
// so each of those must have a rule (the static_assert below); the others
// here appear inside fusions (constants, tuple elements, bitcasts, in-place
// updates) but a backend may run them otherwise at the top level.
constexpr ElementRule ElementRuleOf(HloOpcode opcode) {
  switch (opcode) {
    // clang-format off
    AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return ElementRule::kUnary;
    // clang-format on
    case HloOpcode::kCompare:
      AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return ElementRule::kBinary;
    case HloOpcode::kGetTupleElement:
      return ElementRule::kGetTupleElement;
    case HloOpcode::kMap:
      return ElementRule::kMap;
    case HloOpcode::kReduce:
      return ElementRule::kReduce;
    case HloOpcode::kReduceWindow:
      return ElementRule::kReduceWindow;
    case HloOpcode::kSelect:
      return ElementRule::kSelect;
    case HloOpcode::kClamp:
      return ElementRule::kClamp;
    case HloOpcode::kConvert:
      return ElementRule::kConvert;
    case HloOpcode::kBitcastConvert:
      return ElementRule::kBitcastConvert;
    case HloOpcode::kReducePrecision:
      return ElementRule::kReducePrecision;
    case HloOpcode::kStochasticConvert:
      return ElementRule::kStochasticConvert;
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kIota:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
      return ElementRule::kIndexing;
    default:
      return ElementRule::kNotInLoopKernels;
  }
}

// clang-format off
constexpr HloOpcode kLoopFusedOpcodes[] = {
#define AXLE_OPCODE_ELEMENT_(e) HloOpcode::e,
    AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_ELEMENT_)
    AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_ELEMENT_)
    AXLE_HLO_LOOP_FUSED_OPCODES(AXLE_OPCODE_ELEMENT_)
#undef AXLE_OPCODE_ELEMENT_
};
// clang-format on
constexpr bool LoopFusedOpcodesHaveRules() {
  for (HloOpcode opcode : kLoopFusedOpcodes) {
    if (ElementRuleOf(opcode) == ElementRule::kNotInLoopKernels) return false;
  }
  return true;
}
static_assert(LoopFusedOpcodesHaveRules(),
              "every opcode of AXLE_HLO_LOOP_FUSED_OPCODES (hlo_opcode_families.h) needs an "
              "ElementRule in ElementRuleOf");

}  // namespace

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitElement(const HloInstruction& hlo,
                                                             Generators operands,
                                                             const IrIndex& index) {
  absl::Status supported = absl::OkStatus();
  ShapeUtil::ForEachLeafShape(hlo.shape(), [&](const Shape& leaf, const ShapeIndex&) {
    if (supported.ok()) supported = CheckSupportedType(leaf.element_type(), hlo);
  });
  AXLE_RETURN_IF_ERROR(supported);
  // Scalar operands of clamp/select broadcast: they are read at index {}.
  auto operand_at = [&](int64_t i) -> absl::StatusOr<llvm::Value*> {
    if (hlo.operand(i)->shape().rank() == 0 && !index.empty()) return operands[i](IrIndex{});
    return operands[i](index);
  };
  const PrimitiveType type = hlo.shape().element_type();
  // One case per rule and no default (-Werror=switch).
  switch (ElementRuleOf(hlo.opcode())) {
    case ElementRule::kNotInLoopKernels:
      return NotInLoopKernels(hlo);
    case ElementRule::kUnary: {
      if (hlo.opcode() == HloOpcode::kCopy) return operand_at(0);
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      return EmitUnary(hlo, x);
    }
    case ElementRule::kBinary: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * y, operand_at(1));
      if (hlo.opcode() == HloOpcode::kCompare) return EmitCompare(hlo, x, y);
      return EmitBinary(hlo, x, y);
    }
    case ElementRule::kGetTupleElement: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * tuple, operands[0](index));
      const int64_t i = cast<HloGetTupleElementInstruction>(&hlo)->tuple_index();
      return b_.CreateExtractValue(tuple, {static_cast<unsigned>(i)});
    }
    case ElementRule::kMap:
      return EmitMap(hlo, operands, index);
    case ElementRule::kReduce:
      return EmitReduce(hlo, operands, index);
    case ElementRule::kReduceWindow:
      return EmitReduceWindow(hlo, operands, index);
    case ElementRule::kSelect: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * predicate, operand_at(0));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * on_true, operand_at(1));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * on_false, operand_at(2));
      return b_.CreateSelect(predicate, on_true, on_false);
    }
    case ElementRule::kClamp: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * low, operand_at(0));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(1));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * high, operand_at(2));
      if (pu::IsComplexType(type)) return UnimplementedFor(hlo, type);
      return EmitMin(type, high, EmitMax(type, x, low));
    }
    case ElementRule::kConvert: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      return EmitConvert(x, hlo.operand(0)->shape().element_type(), type);
    }
    case ElementRule::kBitcastConvert: {
      // Different widths change the rank: the operand's elements' bits form
      // one little-endian stream (elemental_indexing.cc).
      if (hlo.operand(0)->shape().rank() != hlo.shape().rank()) {
        return EmitBitcastConvertWidths(hlo, operands, index);
      }
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      return EmitBitcastConvert(hlo, x);
    }
    case ElementRule::kReducePrecision: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      const auto& rp = *cast<HloReducePrecisionInstruction>(&hlo);
      if (!pu::IsFloatingPointType(type)) return UnimplementedFor(hlo, type);
      return RoundToType(EmitReducePrecision(x, rp.exponent_bits(), rp.mantissa_bits()), type);
    }
    case ElementRule::kStochasticConvert: {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operand_at(0));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * random, operand_at(1));
      return EmitStochasticConvert(hlo, x, random);
    }
    case ElementRule::kIndexing:
      return EmitIndexing(hlo, operands, index);
  }
  return NotInLoopKernels(hlo);  // not an ElementRule
}

// --- Unary -------------------------------------------------------------------
//
// EmitElement's rules (ElementRuleOf) take the unary and binary elementwise
// families as whole lists (hlo_opcode_families.h). The per-type switches below them (integer,
// float, complex; unary and binary) keep a `default:` answering Unimplemented: they take one
// family's opcodes for one kind of element, and which element types an op is defined on is not
// something a switch over opcodes can check at compile time (listing every other opcode in each of
// six switches would check only that the list was copied). elemental_ir_emitter_test's FamiliesTest
// checks them instead: every op of the lists that the interpreter evaluates on f32, s32, pred or
// c64 must emit and match it.

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitUnary(const HloInstruction& hlo,
                                                           llvm::Value* x) {
  const PrimitiveType in = hlo.operand(0)->shape().element_type();
  if (pu::IsComplexType(in)) return EmitComplexUnary(hlo, x);
  if (pu::IsFloatingPointType(in) && hlo.opcode() == HloOpcode::kReal) return x;
  if (pu::IsFloatingPointType(in) && hlo.opcode() == HloOpcode::kImag) {
    return llvm::Constant::getNullValue(x->getType());
  }
  if (pu::IsFloatingPointType(in)) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * result, EmitFloatUnary(hlo, x));
    return result->getType()->isIntegerTy(1) ? result
                                             : RoundToType(result, hlo.shape().element_type());
  }
  const bool is_signed = pu::IsSignedIntegralType(in);
  llvm::Type* type = x->getType();
  switch (hlo.opcode()) {
    case HloOpcode::kNot:
      return b_.CreateNot(x);
    case HloOpcode::kNegate:
      return b_.CreateNeg(x);
    case HloOpcode::kAbs:
      return is_signed ? b_.CreateSelect(b_.CreateICmpSLT(x, llvm::ConstantInt::get(type, 0)),
                                         b_.CreateNeg(x), x)
                       : x;
    case HloOpcode::kSign: {
      if (in == PRED || !is_signed) {
        return b_.CreateZExt(b_.CreateICmpNE(x, llvm::ConstantInt::get(type, 0)), type);
      }
      llvm::Value* positive =
          b_.CreateZExt(b_.CreateICmpSGT(x, llvm::ConstantInt::get(type, 0)), type);
      llvm::Value* negative =
          b_.CreateZExt(b_.CreateICmpSLT(x, llvm::ConstantInt::get(type, 0)), type);
      return b_.CreateSub(positive, negative);
    }
    case HloOpcode::kPopulationCount:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    case HloOpcode::kClz:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b_.getFalse());
    default:
      return UnimplementedFor(hlo, in);
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitFloatUnary(const HloInstruction& hlo,
                                                                llvm::Value* x) {
  llvm::Type* type = x->getType();
  const bool f32 = type->isFloatTy();
  auto unary = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
  switch (hlo.opcode()) {
    case HloOpcode::kNegate:
      return b_.CreateFNeg(x);
    case HloOpcode::kAbs:
      return unary(llvm::Intrinsic::fabs);
    case HloOpcode::kSign: {
      llvm::Value* zero = llvm::ConstantFP::get(type, 0.0);
      llvm::Value* result = b_.CreateSelect(b_.CreateFCmpOGT(x, zero), one, x);
      return b_.CreateSelect(b_.CreateFCmpOLT(x, zero), llvm::ConstantFP::get(type, -1.0), result);
    }
    case HloOpcode::kFloor:
      return unary(llvm::Intrinsic::floor);
    case HloOpcode::kCeil:
      return unary(llvm::Intrinsic::ceil);
    case HloOpcode::kRoundNearestAfz:
      return unary(llvm::Intrinsic::round);
    case HloOpcode::kRoundNearestEven:
      return unary(llvm::Intrinsic::roundeven);
    case HloOpcode::kIsFinite:
      return b_.CreateFCmpONE(unary(llvm::Intrinsic::fabs), llvm::ConstantFP::getInfinity(type));
    case HloOpcode::kSqrt:
      return unary(llvm::Intrinsic::sqrt);
    case HloOpcode::kRsqrt:
      return b_.CreateFDiv(one, unary(llvm::Intrinsic::sqrt));
    case HloOpcode::kCbrt:
      return f32 ? EmitCbrtF32(b_, x) : CallMath(MathFunction::kCbrt, x);
    case HloOpcode::kExp:
      return f32 ? EmitExpF32(b_, x) : CallMath(MathFunction::kExp, x);
    case HloOpcode::kExpm1:
      return f32 ? EmitExpm1F32(b_, x) : CallMath(MathFunction::kExpm1, x);
    case HloOpcode::kLog:
      return f32 ? EmitLogF32(b_, x) : CallMath(MathFunction::kLog, x);
    case HloOpcode::kLog1p:
      return f32 ? EmitLog1pF32(b_, x) : CallMath(MathFunction::kLog1p, x);
    case HloOpcode::kTanh:
      return f32 ? EmitTanhF32(b_, x) : CallMath(MathFunction::kTanh, x);
    case HloOpcode::kLogistic:
      if (f32) return EmitLogisticF32(b_, x);
      return b_.CreateFDiv(one, b_.CreateFAdd(one, CallMath(MathFunction::kExp, b_.CreateFNeg(x))));
    case HloOpcode::kErf:
      return f32 ? EmitErfF32(b_, x) : CallMath(MathFunction::kErf, x);
    case HloOpcode::kSin:
      return CallMath(MathFunction::kSin, x);
    case HloOpcode::kCos:
      return CallMath(MathFunction::kCos, x);
    case HloOpcode::kTan:
      return CallMath(MathFunction::kTan, x);
    case HloOpcode::kAcos:
      return CallMath(MathFunction::kAcos, x);
    case HloOpcode::kAcosh:
      return CallMath(MathFunction::kAcosh, x);
    case HloOpcode::kAsin:
      return CallMath(MathFunction::kAsin, x);
    case HloOpcode::kAsinh:
      return CallMath(MathFunction::kAsinh, x);
    case HloOpcode::kAtan:
      return f32 ? EmitAtan2F32(b_, x, one) : CallMath(MathFunction::kAtan, x);
    case HloOpcode::kAtanh:
      return CallMath(MathFunction::kAtanh, x);
    case HloOpcode::kCosh:
      return CallMath(MathFunction::kCosh, x);
    case HloOpcode::kSinh:
      return CallMath(MathFunction::kSinh, x);
    default:
      return UnimplementedFor(hlo, hlo.operand(0)->shape().element_type());
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexUnary(const HloInstruction& hlo,
                                                                  llvm::Value* z) {
  llvm::Value* re = Real(z);
  llvm::Value* im = Imag(z);
  llvm::Type* component = re->getType();
  switch (hlo.opcode()) {
    case HloOpcode::kReal:
      return re;
    case HloOpcode::kImag:
      return im;
    case HloOpcode::kNegate:
      return MakeComplex(b_.CreateFNeg(re), b_.CreateFNeg(im));
    case HloOpcode::kAbs:
      return CallMath(MathFunction::kHypot, re, im);
    case HloOpcode::kSign: {
      llvm::Value* magnitude = CallMath(MathFunction::kHypot, re, im);
      llvm::Value* is_zero = b_.CreateFCmpOEQ(magnitude, llvm::ConstantFP::get(component, 0.0));
      return b_.CreateSelect(
          is_zero, z, MakeComplex(b_.CreateFDiv(re, magnitude), b_.CreateFDiv(im, magnitude)));
    }
    case HloOpcode::kExp: {
      // e^re * (cos im + i sin im)
      // A zero imaginary part stays exact: exp(x + 0i) = exp(x) + 0i.
      const bool f32 = component->isFloatTy();
      llvm::Value* scale = f32 ? EmitExpF32(b_, re) : CallMath(MathFunction::kExp, re);
      llvm::Value* real_only = b_.CreateFCmpOEQ(im, llvm::ConstantFP::get(component, 0.0));
      llvm::Value* cos = f32 ? EmitCosF32(b_, im) : CallMath(MathFunction::kCos, im);
      llvm::Value* sin = f32 ? EmitSinF32(b_, im) : CallMath(MathFunction::kSin, im);
      llvm::Value* result_re = b_.CreateSelect(real_only, scale, b_.CreateFMul(scale, cos));
      llvm::Value* result_im = b_.CreateSelect(real_only, im, b_.CreateFMul(scale, sin));
      return MakeComplex(result_re, result_im);
    }
    case HloOpcode::kLog: {
      // log|z| + i arg z.
      llvm::Value* modulus = CallMath(MathFunction::kHypot, re, im);
      llvm::Value* arg = CallMath(MathFunction::kAtan2, im, re);
      if (!component->isFloatTy()) {
        return MakeComplex(CallMath(MathFunction::kLog, modulus), arg);
      }
      // f32, inline: log m + log1p((s / m)^2) / 2 with m and s the larger
      // and smaller of |re|, |im| (|z| itself overflows f32 past FLT_MAX);
      // log(hypot) (+inf, NaN) where either is not finite, -inf at zero.
      llvm::Value* zero = llvm::ConstantFP::get(component, 0.0);
      llvm::Value* inf = llvm::ConstantFP::get(component, INFINITY);
      llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, re);
      llvm::Value* ay = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, im);
      llvm::Value* x_larger = b_.CreateFCmpOGE(ax, ay);
      llvm::Value* larger = b_.CreateSelect(x_larger, ax, ay);
      llvm::Value* ratio = b_.CreateFDiv(b_.CreateSelect(x_larger, ay, ax), larger);
      llvm::Value* log_modulus = b_.CreateFAdd(
          EmitLogF32(b_, larger), b_.CreateFMul(llvm::ConstantFP::get(component, 0.5),
                                                EmitLog1pF32(b_, b_.CreateFMul(ratio, ratio))));
      llvm::Value* finite = b_.CreateAnd(b_.CreateFCmpOLT(ax, inf), b_.CreateFCmpOLT(ay, inf));
      log_modulus = b_.CreateSelect(finite, log_modulus, EmitLogF32(b_, modulus));
      llvm::Value* at_zero = b_.CreateAnd(b_.CreateFCmpOEQ(ax, zero), b_.CreateFCmpOEQ(ay, zero));
      log_modulus =
          b_.CreateSelect(at_zero, llvm::ConstantFP::get(component, -INFINITY), log_modulus);
      return MakeComplex(log_modulus, arg);
    }
    default:
      if (IsComplexCallOpcode(hlo.opcode())) return hooks_->EmitComplexCall(b_, hlo.opcode(), {z});
      return UnimplementedFor(hlo, hlo.operand(0)->shape().element_type());
  }
}

// --- Binary ------------------------------------------------------------------

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitBinary(const HloInstruction& hlo,
                                                            llvm::Value* x, llvm::Value* y) {
  const PrimitiveType in = hlo.operand(0)->shape().element_type();
  if (hlo.opcode() == HloOpcode::kComplex) return MakeComplex(x, y);
  if (pu::IsComplexType(in)) return EmitComplexBinary(hlo, x, y);
  if (pu::IsFloatingPointType(in)) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * result, EmitFloatBinary(hlo, x, y));
    return RoundToType(result, hlo.shape().element_type());
  }
  return EmitIntegerBinary(hlo, in, x, y);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitIntegerBinary(const HloInstruction& hlo,
                                                                   PrimitiveType type,
                                                                   llvm::Value* x, llvm::Value* y) {
  llvm::Type* ty = x->getType();
  const int bits = ty->getIntegerBitWidth();
  const bool is_signed = pu::IsSignedIntegralType(type);
  llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* all_ones = llvm::ConstantInt::get(ty, -1, /*isSigned=*/true);
  llvm::Value* min_value = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits));
  if (type == PRED) {
    switch (hlo.opcode()) {
      case HloOpcode::kAdd:
      case HloOpcode::kMaximum:
      case HloOpcode::kOr:
        return b_.CreateOr(x, y);
      case HloOpcode::kMultiply:
      case HloOpcode::kMinimum:
      case HloOpcode::kAnd:
        return b_.CreateAnd(x, y);
      case HloOpcode::kXor:
        return b_.CreateXor(x, y);
      case HloOpcode::kPower:
        return b_.CreateOr(x, b_.CreateNot(y));
      default:
        return UnimplementedFor(hlo, type);
    }
  }
  switch (hlo.opcode()) {
    case HloOpcode::kAdd:
      return b_.CreateAdd(x, y);
    case HloOpcode::kSubtract:
      return b_.CreateSub(x, y);
    case HloOpcode::kMultiply:
      return b_.CreateMul(x, y);
    case HloOpcode::kAnd:
      return b_.CreateAnd(x, y);
    case HloOpcode::kOr:
      return b_.CreateOr(x, y);
    case HloOpcode::kXor:
      return b_.CreateXor(x, y);
    case HloOpcode::kMaximum:
      return EmitMax(type, x, y);
    case HloOpcode::kMinimum:
      return EmitMin(type, x, y);
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder: {
      // As XLA: x / 0 is all ones and x % 0 is x; INT_MIN / -1 is INT_MIN
      // and INT_MIN % -1 is 0, which a divisor of 1 gives.
      const bool divide = hlo.opcode() == HloOpcode::kDivide;
      llvm::Value* by_zero = b_.CreateICmpEQ(y, zero);
      llvm::Value* unsafe = by_zero;
      if (is_signed) {
        llvm::Value* overflow =
            b_.CreateAnd(b_.CreateICmpEQ(x, min_value), b_.CreateICmpEQ(y, all_ones));
        unsafe = b_.CreateOr(by_zero, overflow);
      }
      llvm::Value* safe = b_.CreateSelect(unsafe, one, y);
      llvm::Value* result = nullptr;
      if (divide) {
        result = is_signed ? b_.CreateSDiv(x, safe) : b_.CreateUDiv(x, safe);
      } else {
        result = is_signed ? b_.CreateSRem(x, safe) : b_.CreateURem(x, safe);
      }
      return b_.CreateSelect(by_zero, divide ? all_ones : x, result);
    }
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic: {
      llvm::Value* too_far = b_.CreateICmpUGE(y, llvm::ConstantInt::get(ty, bits));
      if (hlo.opcode() == HloOpcode::kShiftRightArithmetic) {
        llvm::Value* amount = b_.CreateSelect(too_far, llvm::ConstantInt::get(ty, bits - 1), y);
        return b_.CreateAShr(x, amount);
      }
      llvm::Value* amount = b_.CreateSelect(too_far, zero, y);
      llvm::Value* shifted = hlo.opcode() == HloOpcode::kShiftLeft ? b_.CreateShl(x, amount)
                                                                   : b_.CreateLShr(x, amount);
      return b_.CreateSelect(too_far, zero, shifted);
    }
    case HloOpcode::kPower:
      return EmitIntegerPower(x, y, is_signed);
    default:
      return UnimplementedFor(hlo, type);
  }
}

llvm::Value* ElementalIrEmitter::EmitIntegerPower(llvm::Value* x, llvm::Value* y, bool is_signed) {
  // Square-and-multiply over every bit of y, unrolled (no loop, so the
  // enclosing loop still vectorizes). Negative y: 0 unless x == 1.
  llvm::Type* ty = x->getType();
  const int bits = ty->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* result = one;
  llvm::Value* base = x;
  for (int bit = 0; bit < bits; ++bit) {
    llvm::Value* set =
        b_.CreateTrunc(b_.CreateLShr(y, llvm::ConstantInt::get(ty, bit)), b_.getInt1Ty());
    result = b_.CreateSelect(set, b_.CreateMul(result, base), result);
    base = b_.CreateMul(base, base);
  }
  if (!is_signed) return result;
  llvm::Value* negative = b_.CreateICmpSLT(y, llvm::ConstantInt::get(ty, 0));
  llvm::Value* x_is_one = b_.CreateICmpEQ(x, one);
  llvm::Value* negative_result = b_.CreateSelect(x_is_one, one, llvm::ConstantInt::get(ty, 0));
  return b_.CreateSelect(negative, negative_result, result);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitFloatBinary(const HloInstruction& hlo,
                                                                 llvm::Value* x, llvm::Value* y) {
  const PrimitiveType type = hlo.shape().element_type();
  switch (hlo.opcode()) {
    case HloOpcode::kAdd:
      return b_.CreateFAdd(x, y);
    case HloOpcode::kSubtract:
      return b_.CreateFSub(x, y);
    case HloOpcode::kMultiply:
      return b_.CreateFMul(x, y);
    case HloOpcode::kDivide:
      return b_.CreateFDiv(x, y);
    case HloOpcode::kRemainder:
      return b_.CreateFRem(x, y);
    case HloOpcode::kMaximum:
      return EmitMax(type, x, y);
    case HloOpcode::kMinimum:
      return EmitMin(type, x, y);
    case HloOpcode::kPower:
      return CallMath(MathFunction::kPow, x, y);
    case HloOpcode::kAtan2:
      if (x->getType()->isFloatTy()) return EmitAtan2F32(b_, x, y);
      return CallMath(MathFunction::kAtan2, x, y);
    default:
      return UnimplementedFor(hlo, hlo.operand(0)->shape().element_type());
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexBinary(const HloInstruction& hlo,
                                                                   llvm::Value* x, llvm::Value* y) {
  if (IsComplexCallOpcode(hlo.opcode())) {
    // Division as C99 Annex G has it (scaling, inf and NaN recovery), power,
    // atan2.
    return hooks_->EmitComplexCall(b_, hlo.opcode(), {x, y});
  }
  llvm::Value* a = Real(x);
  llvm::Value* b = Imag(x);
  llvm::Value* c = Real(y);
  llvm::Value* d = Imag(y);
  switch (hlo.opcode()) {
    case HloOpcode::kAdd:
      return MakeComplex(b_.CreateFAdd(a, c), b_.CreateFAdd(b, d));
    case HloOpcode::kSubtract:
      return MakeComplex(b_.CreateFSub(a, c), b_.CreateFSub(b, d));
    case HloOpcode::kMultiply:
      return MakeComplex(b_.CreateFSub(b_.CreateFMul(a, c), b_.CreateFMul(b, d)),
                         b_.CreateFAdd(b_.CreateFMul(a, d), b_.CreateFMul(b, c)));
    default:
      return UnimplementedFor(hlo, hlo.operand(0)->shape().element_type());
  }
}

// --- Compare -----------------------------------------------------------------

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitCompare(const HloInstruction& hlo,
                                                             llvm::Value* x, llvm::Value* y) {
  const auto& compare = *cast<HloCompareInstruction>(&hlo);
  const PrimitiveType in = hlo.operand(0)->shape().element_type();
  const ComparisonDirection direction = compare.direction();
  using P = llvm::CmpInst::Predicate;
  if (pu::IsComplexType(in)) {
    if (direction == ComparisonDirection::kEq) {
      return b_.CreateAnd(b_.CreateFCmpOEQ(Real(x), Real(y)), b_.CreateFCmpOEQ(Imag(x), Imag(y)));
    }
    if (direction == ComparisonDirection::kNe) {
      return b_.CreateOr(b_.CreateFCmpUNE(Real(x), Real(y)), b_.CreateFCmpUNE(Imag(x), Imag(y)));
    }
    return UnimplementedFor(hlo, in);
  }
  bool is_signed = pu::IsSignedIntegralType(in);
  if (pu::IsFloatingPointType(in)) {
    if (compare.type() != ComparisonType::kFloatTotalOrder) {
      static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OGE,
                                     P::FCMP_OGT, P::FCMP_OLE, P::FCMP_OLT};
      return b_.CreateFCmp(kFloat[static_cast<int>(direction)], x, y);
    }
    // Total order: flip the magnitude bits of negative numbers, then compare
    // as signed integers.
    const int bits = x->getType()->getPrimitiveSizeInBits();
    llvm::Type* int_type = b_.getIntNTy(bits);
    auto key = [&](llvm::Value* v) {
      llvm::Value* i = b_.CreateBitCast(v, int_type);
      llvm::Value* sign = b_.CreateAShr(i, llvm::ConstantInt::get(int_type, bits - 1));
      return b_.CreateXor(i, b_.CreateLShr(sign, llvm::ConstantInt::get(int_type, 1)));
    };
    x = key(x);
    y = key(y);
    is_signed = true;
  } else if (compare.type() == ComparisonType::kUnsigned || in == PRED) {
    is_signed = false;
  } else if (compare.type() == ComparisonType::kSigned) {
    is_signed = true;
  }
  static constexpr P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SGE,
                                  P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SLT};
  static constexpr P kUnsigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_UGE,
                                    P::ICMP_UGT, P::ICMP_ULE, P::ICMP_ULT};
  return b_.CreateICmp((is_signed ? kSigned : kUnsigned)[static_cast<int>(direction)], x, y);
}

// --- Convert -----------------------------------------------------------------

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitConvert(llvm::Value* x, PrimitiveType from,
                                                             PrimitiveType to) {
  if (from == to) return x;
  llvm::Type* to_type = ValueType(to);
  if (pu::IsComplexType(from)) {
    if (pu::IsComplexType(to)) {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(Real(x), pu::ComplexComponentType(from),
                                                          pu::ComplexComponentType(to)));
      AXLE_ASSIGN_OR_RETURN(llvm::Value * im, EmitConvert(Imag(x), pu::ComplexComponentType(from),
                                                          pu::ComplexComponentType(to)));
      return MakeComplex(re, im);
    }
    return EmitConvert(Real(x), pu::ComplexComponentType(from), to);
  }
  if (pu::IsComplexType(to)) {
    PrimitiveType component = pu::ComplexComponentType(to);
    AXLE_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(x, from, component));
    return MakeComplex(re, llvm::ConstantFP::get(ValueType(component), 0.0));
  }
  if (to == PRED) {
    if (pu::IsFloatingPointType(from)) {
      return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    }
    return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  const bool from_float = pu::IsFloatingPointType(from);
  const bool to_float = pu::IsFloatingPointType(to);
  const bool from_signed = pu::IsSignedIntegralType(from);
  if (!from_float && !to_float) return b_.CreateIntCast(x, to_type, from_signed);
  if (!from_float && to_float) {
    if (!IsNarrowFloat(to)) {
      return from_signed ? b_.CreateSIToFP(x, to_type) : b_.CreateUIToFP(x, to_type);
    }
    // Through f64 (exact for up to 53 bits), then rounded once to the type.
    llvm::Value* wide =
        from_signed ? b_.CreateSIToFP(x, b_.getDoubleTy()) : b_.CreateUIToFP(x, b_.getDoubleTy());
    return EmitConvert(wide, F64, to);
  }
  if (from_float && !to_float) {
    auto id =
        pu::IsSignedIntegralType(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {to_type, x->getType()}, {x});
  }
  // float -> float.
  if (from == F64 && to == F16) {
    return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getFloatTy());
  }
  if (from == F64 && IsNarrowFloat(to)) {
    // f64 -> f32 rounding to odd, then f32 -> the narrow type to nearest
    // even: one correct rounding, as converting directly would give.
    llvm::Value* narrowed = b_.CreateFPTrunc(x, b_.getFloatTy());
    llvm::Value* back = b_.CreateFPExt(narrowed, b_.getDoubleTy());
    llvm::Value* bits = b_.CreateBitCast(narrowed, b_.getInt32Ty());
    llvm::Value* rounded_up = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                               b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
    bits = b_.CreateSelect(rounded_up, b_.CreateSub(bits, b_.getInt32(1)), bits);
    llvm::Value* inexact = b_.CreateFCmpONE(back, x);
    bits = b_.CreateSelect(inexact, b_.CreateOr(bits, b_.getInt32(1)), bits);
    return RoundToType(b_.CreateBitCast(bits, b_.getFloatTy()), to);
  }
  llvm::Value* result = b_.CreateFPCast(x, to_type);
  return RoundToType(result, to);
}

// --- Stochastic convert --------------------------------------------------------

// float -> signed integer as the interpreter (and XLA) computes it: NaN is
// 0, values at or beyond the type's range saturate; otherwise |x| is
// truncated and rounded up when the random bits (as wide as x, read as an
// unsigned number) are below the dropped fraction scaled to 2^bits, then
// the sign is put back. Computed in f64, where every step is exact.
absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitStochasticConvert(const HloInstruction& hlo,
                                                                       llvm::Value* x,
                                                                       llvm::Value* random) {
  const PrimitiveType from = hlo.operand(0)->shape().element_type();
  const PrimitiveType bits_type = hlo.operand(1)->shape().element_type();
  const PrimitiveType to = hlo.shape().element_type();
  if (!pu::IsFloatingPointType(from) || pu::IsComplexType(from) ||
      !pu::IsUnsignedIntegralType(bits_type) || pu::BitWidth(bits_type) != pu::BitWidth(from) ||
      !pu::IsSignedIntegralType(to)) {
    return UnimplementedFor(hlo, from);
  }
  const int width = pu::BitWidth(to);
  const int64_t hi = static_cast<int64_t>((uint64_t{1} << (width - 1)) - 1);
  const int64_t lo = -hi - 1;
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Value* v = x->getType()->isDoubleTy() ? x : b_.CreateFPExt(x, f64);
  llvm::Value* magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
  // In range (lo, hi) here, so that the truncation fits an i64.
  llvm::Value* in_range =
      b_.CreateAnd(b_.CreateFCmpOLT(v, llvm::ConstantFP::get(f64, static_cast<double>(hi))),
                   b_.CreateFCmpOGT(v, llvm::ConstantFP::get(f64, static_cast<double>(lo))));
  magnitude = b_.CreateSelect(in_range, magnitude, llvm::ConstantFP::get(f64, 0.0));
  llvm::Value* truncated = b_.CreateFPToSI(magnitude, i64);
  llvm::Value* fraction = b_.CreateFSub(magnitude, b_.CreateSIToFP(truncated, f64));
  llvm::Value* scaled =
      b_.CreateFMul(fraction, llvm::ConstantFP::get(f64, std::ldexp(1.0, pu::BitWidth(bits_type))));
  llvm::Value* fixed_fraction = b_.CreateFPToUI(scaled, i64);
  llvm::Value* round_up = b_.CreateICmpULT(b_.CreateZExt(random, i64), fixed_fraction);
  llvm::Value* rounded = b_.CreateAdd(truncated, b_.CreateZExt(round_up, i64));
  llvm::Value* negative = b_.CreateICmpSLT(b_.CreateBitCast(v, i64), b_.getInt64(0));
  llvm::Value* result = b_.CreateSelect(negative, b_.CreateNeg(rounded), rounded);
  result = b_.CreateSelect(b_.CreateICmpSGT(result, b_.getInt64(hi)), b_.getInt64(hi), result);
  result = b_.CreateSelect(b_.CreateICmpSLT(result, b_.getInt64(lo)), b_.getInt64(lo), result);
  result = b_.CreateSelect(b_.CreateFCmpOGE(v, llvm::ConstantFP::get(f64, static_cast<double>(hi))),
                           b_.getInt64(hi), result);
  result = b_.CreateSelect(b_.CreateFCmpOLE(v, llvm::ConstantFP::get(f64, static_cast<double>(lo))),
                           b_.getInt64(lo), result);
  result = b_.CreateSelect(b_.CreateFCmpUNO(v, v), b_.getInt64(0), result);
  return b_.CreateTrunc(result, ValueType(to));
}

absl::Status ElementalIrEmitter::CheckBitcastTypes(const HloInstruction& hlo) {
  const PrimitiveType from = hlo.operand(0)->shape().element_type();
  const PrimitiveType to = hlo.shape().element_type();
  const bool same_width = pu::BitWidth(from) == pu::BitWidth(to);
  auto packed = [](PrimitiveType t) { return !pu::IsSubByteType(t); };
  // pred is one byte wide, as in XLA (0 or 1 when written; as in the
  // interpreter, a nonzero byte reads as true).
  if (pu::IsComplexType(from) || pu::IsComplexType(to) ||
      (!same_width && (!packed(from) || !packed(to)))) {
    return absl::UnimplementedError(
        absl::StrCat("codegen: bitcast-convert from ", pu::LowercasePrimitiveTypeName(from), " to ",
                     pu::LowercasePrimitiveTypeName(to), " is not implemented (", hlo.name(), ")"));
  }
  return absl::OkStatus();
}

llvm::Value* ElementalIrEmitter::ToBits(llvm::Value* x, PrimitiveType type) {
  if (IsNarrowFloat(type)) return F32ToNarrowFloat(x, type);
  if (pu::IsFloatingPointType(type)) return b_.CreateBitCast(x, b_.getIntNTy(pu::BitWidth(type)));
  if (type == PRED) return b_.CreateZExt(x, b_.getInt8Ty());
  return x;
}

llvm::Value* ElementalIrEmitter::FromBits(llvm::Value* bits, PrimitiveType type) {
  bits = b_.CreateZExtOrTrunc(
      bits, b_.getIntNTy(pu::IsSubByteType(type) ? pu::BitWidth(type) : pu::ByteWidth(type) * 8));
  if (IsNarrowFloat(type)) return NarrowFloatToF32(bits, type);
  if (pu::IsFloatingPointType(type)) return b_.CreateBitCast(bits, ValueType(type));
  if (type == PRED) return b_.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0));
  return b_.CreateTrunc(bits, ValueType(type));
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitBitcastConvert(const HloInstruction& hlo,
                                                                    llvm::Value* x) {
  AXLE_RETURN_IF_ERROR(CheckBitcastTypes(hlo));
  // Through the bits in storage form.
  return FromBits(ToBits(x, hlo.operand(0)->shape().element_type()), hlo.shape().element_type());
}

llvm::Value* ElementalIrEmitter::EmitReducePrecision(llvm::Value* x, int exponent_bits,
                                                     int mantissa_bits) {
  llvm::Type* float_type = x->getType();
  const bool f64 = float_type->isDoubleTy();
  const int bits = f64 ? 64 : 32;
  const int src_mantissa = f64 ? 52 : 23;
  const int src_exponent = f64 ? 11 : 8;
  llvm::Type* int_type = b_.getIntNTy(bits);
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(int_type, v); };
  llvm::Value* x_bits = b_.CreateBitCast(x, int_type);
  if (mantissa_bits < src_mantissa) {
    const int shift = src_mantissa - mantissa_bits;
    const uint64_t last_bit_mask = uint64_t{1} << shift;
    const uint64_t base_bias = (last_bit_mask >> 1) - 1;
    llvm::Value* last_bit = b_.CreateLShr(b_.CreateAnd(x_bits, c(last_bit_mask)), c(shift));
    llvm::Value* bias = b_.CreateAdd(last_bit, c(base_bias));
    x_bits = b_.CreateAnd(b_.CreateAdd(x_bits, bias), c(~(last_bit_mask - 1)));
  }
  if (exponent_bits < src_exponent) {
    const uint64_t sign_mask = uint64_t{1} << (bits - 1);
    const uint64_t exponent_mask = ((uint64_t{1} << src_exponent) - 1) << src_mantissa;
    const uint64_t bias = (uint64_t{1} << (src_exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t max_exponent = bias + reduced_bias;
    const uint64_t min_exponent = bias - reduced_bias;
    llvm::Value* exponent = b_.CreateAnd(x_bits, c(exponent_mask));
    llvm::Value* overflows = b_.CreateICmpUGT(exponent, c(max_exponent << src_mantissa));
    llvm::Value* underflows = b_.CreateICmpULE(exponent, c(min_exponent << src_mantissa));
    llvm::Value* signed_zero = b_.CreateAnd(x_bits, c(sign_mask));
    llvm::Value* signed_inf = b_.CreateOr(signed_zero, c(exponent_mask));
    x_bits =
        b_.CreateSelect(overflows, signed_inf, b_.CreateSelect(underflows, signed_zero, x_bits));
  }
  llvm::Value* result = b_.CreateBitCast(x_bits, float_type);
  // NaN stays NaN, or becomes +inf when no mantissa bits are left.
  llvm::Value* nan_result = mantissa_bits > 0 ? x : llvm::ConstantFP::getInfinity(float_type);
  result = b_.CreateSelect(b_.CreateFCmpUNO(x, x), nan_result, result);
  return result;
}

}  // namespace axle::llvm_ir
