//===- narrow_float_ir.h - f32 to 8- and 4-bit floats, inline --------------===//
//
// The encoding (an i8) of the 8- or 4-bit float type nearest to an f32
// value, as straight-line integer IR with no call and no table, which the
// loop vectorizer widens: the elemental emitter's rounding to those types
// on every target (no hook: cpu and NVPTX alike). The same bits as axle/core/types.h's
// EncodeNarrowFloat (the interpreter's): round to nearest, ties to even, on the f32's significand
// shifted to the format's quantum (its exponent's, or the subnormals' below
// the least normal exponent); values below half the least subnormal (f32
// subnormals among them) are zero (no negative zero in fnuz formats);
// overflow and infinities are infinity (IEEE formats), the largest finite
// value (f4e2m1fn) or NaN (fn and fnuz formats); NaN is the format's NaN
// with the f32's sign (fnuz: its one NaN; f4e2m1fn, which has none: zero).
// f8e8m0fnu (an exponent only) takes the nearest power of two, 1.5 * 2^e
// rounding up; zero is its least value, negatives and non-finite values
// NaN.
//
// This header includes LLVM: backends include it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_NARROW_FLOAT_IR_H_
#define AXLE_LLVM_IR_NARROW_FLOAT_IR_H_

#include "axle/core/primitive_type.h"
#include "llvm/IR/IRBuilder.h"

namespace axle::llvm_ir {

// Whether `type` is one of the 8- or 4-bit float types this encodes.
bool IsInlineEncodableNarrowFloat(PrimitiveType type);

// `value` (a float) as `type`'s bits in an i8; `type` must be one the
// predicate above accepts.
llvm::Value* EmitF32ToNarrowFloatInline(llvm::IRBuilderBase& b, PrimitiveType type,
                                        llvm::Value* value);

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_NARROW_FLOAT_IR_H_
