//===- primitive_type.h - XLA's element types ------------------------------===//
//
// Every element type XLA names, with its proto number, text name and width.
// PRIMITIVE_TYPE_LIST is the single table: the enum, the names and the
// properties below are all generated from it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_PRIMITIVE_TYPE_H_
#define AXLE_CORE_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace axle {

// V(ENUM, proto number, text name, bit width, kind)
// kind: P = pred, S = signed int, U = unsigned int, F = float, C = complex,
//       X = not an array element (tuple, token, opaque, buffer).
#define AXLE_PRIMITIVE_TYPE_LIST(V)           \
  V(PRED, 1, "pred", 8, P)                    \
  V(S1, 30, "s1", 1, S)                       \
  V(S2, 26, "s2", 2, S)                       \
  V(S4, 21, "s4", 4, S)                       \
  V(S8, 2, "s8", 8, S)                        \
  V(S16, 3, "s16", 16, S)                     \
  V(S32, 4, "s32", 32, S)                     \
  V(S64, 5, "s64", 64, S)                     \
  V(U1, 31, "u1", 1, U)                       \
  V(U2, 27, "u2", 2, U)                       \
  V(U4, 22, "u4", 4, U)                       \
  V(U8, 6, "u8", 8, U)                        \
  V(U16, 7, "u16", 16, U)                     \
  V(U32, 8, "u32", 32, U)                     \
  V(U64, 9, "u64", 64, U)                     \
  V(F16, 10, "f16", 16, F)                    \
  V(BF16, 16, "bf16", 16, F)                  \
  V(F32, 11, "f32", 32, F)                    \
  V(F64, 12, "f64", 64, F)                    \
  V(F4E2M1FN, 32, "f4e2m1fn", 4, F)           \
  V(F8E3M4, 29, "f8e3m4", 8, F)               \
  V(F8E4M3, 28, "f8e4m3", 8, F)               \
  V(F8E4M3FN, 20, "f8e4m3fn", 8, F)           \
  V(F8E4M3B11FNUZ, 23, "f8e4m3b11fnuz", 8, F) \
  V(F8E4M3FNUZ, 25, "f8e4m3fnuz", 8, F)       \
  V(F8E5M2, 19, "f8e5m2", 8, F)               \
  V(F8E5M2FNUZ, 24, "f8e5m2fnuz", 8, F)       \
  V(F8E8M0FNU, 33, "f8e8m0fnu", 8, F)         \
  V(C64, 15, "c64", 64, C)                    \
  V(C128, 18, "c128", 128, C)                 \
  V(TUPLE, 13, "tuple", 0, X)                 \
  V(OPAQUE_TYPE, 14, "opaque", 0, X)          \
  V(TOKEN, 17, "token", 0, X)                 \
  V(BUFFER, 34, "buffer", 0, X)

enum PrimitiveType : int {
  PRIMITIVE_TYPE_INVALID = 0,
#define AXLE_ENUM_ENTRY_(e, n, s, w, k) e = n,
  AXLE_PRIMITIVE_TYPE_LIST(AXLE_ENUM_ENTRY_)
#undef AXLE_ENUM_ENTRY_
};

namespace primitive_util {

// "f32", "bf16", "pred", ... ; "invalid" for PRIMITIVE_TYPE_INVALID.
absl::string_view LowercasePrimitiveTypeName(PrimitiveType type);
// The inverse of LowercasePrimitiveTypeName (array and tuple/token/opaque names).
std::optional<PrimitiveType> StringToPrimitiveType(absl::string_view name);

bool IsArrayType(PrimitiveType type);     // everything but tuple/token/opaque/buffer
bool IsIntegralType(PrimitiveType type);  // signed or unsigned (not pred)
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);  // real floats, incl. f8/f4
bool IsComplexType(PrimitiveType type);
bool IsF8Type(PrimitiveType type);       // the 8- and 4-bit float family
bool IsSubByteType(PrimitiveType type);  // s1/s2/s4, u1/u2/u4, f4e2m1fn

// Bits one element occupies in a dense array (s4 is 4, pred is 8).
int BitWidth(PrimitiveType type);
// Bytes one element occupies in Axle's host storage (sub-byte types use a
// whole byte, as XLA's literals do); 0 for non-array types.
int ByteWidth(PrimitiveType type);

// For complex types, the component type (c64 -> f32); otherwise `type`.
PrimitiveType ComplexComponentType(PrimitiveType type);
// The significand bits (incl. implicit bit) and exponent bits of float types.
int SignificandWidth(PrimitiveType type);
int ExponentWidth(PrimitiveType type);

// Higher-precision type of two floats: used by convert-free comparisons.
PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b);

}  // namespace primitive_util
}  // namespace axle

#endif  // AXLE_CORE_PRIMITIVE_TYPE_H_
