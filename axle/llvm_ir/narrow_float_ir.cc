//===- narrow_float_ir.cc - f32 to 8- and 4-bit floats, inline -------------===//
#include "axle/llvm_ir/narrow_float_ir.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include "axle/base/logging.h"
#include "axle/core/narrow_float_format.h"
#include "axle/core/types.h"

namespace axle::llvm_ir {
namespace {

template <typename T>
NarrowFloatFormat FormatOf() {
  NarrowFloatFormat format{T::kExponent, T::kMantissa, 0, T::kEncodingKind};
  if (T::kEncodingKind == FloatEncoding::kExponentOnly) {
    format.bias = 127;
  } else {
    // The least normal value (exponent field 1) is 2^(1 - bias).
    const auto least_normal = static_cast<float>(T::FromBits(1u << T::kMantissa));
    format.bias = 1 - std::ilogb(least_normal);
  }
  return format;
}

std::optional<NarrowFloatFormat> FormatOf(PrimitiveType type) {
  switch (type) {
    case F4E2M1FN:
      return FormatOf<float4_e2m1fn>();
    case F8E3M4:
      return FormatOf<float8_e3m4>();
    case F8E4M3:
      return FormatOf<float8_e4m3>();
    case F8E4M3FN:
      return FormatOf<float8_e4m3fn>();
    case F8E4M3B11FNUZ:
      return FormatOf<float8_e4m3b11fnuz>();
    case F8E4M3FNUZ:
      return FormatOf<float8_e4m3fnuz>();
    case F8E5M2:
      return FormatOf<float8_e5m2>();
    case F8E5M2FNUZ:
      return FormatOf<float8_e5m2fnuz>();
    case F8E8M0FNU:
      return FormatOf<float8_e8m0fnu>();
    default:
      return std::nullopt;
  }
}

// f8e8m0fnu: field = the f32's exponent field, plus one where its
// significand is 1.5 or more; f32 subnormals give 1 from 0.75 * 2^-126 up,
// else 0.
llvm::Value* EncodeExponentOnly(llvm::IRBuilderBase& b, llvm::Value* bits) {
  llvm::Value* magnitude = b.CreateAnd(bits, b.getInt32(0x7fffffffu));
  llvm::Value* exponent_field = b.CreateLShr(magnitude, 23);
  llvm::Value* top = b.CreateAnd(b.CreateLShr(magnitude, 22), b.getInt32(1));
  llvm::Value* normal_field = b.CreateAdd(exponent_field, top);
  llvm::Value* subnormal_field =
      b.CreateZExt(b.CreateICmpUGE(magnitude, b.getInt32(0x00600000u)), b.getInt32Ty());
  llvm::Value* field =
      b.CreateSelect(b.CreateICmpEQ(exponent_field, b.getInt32(0)), subnormal_field, normal_field);
  llvm::Value* nan =
      b.CreateOr({b.CreateICmpUGE(magnitude, b.getInt32(0x7f800000u)),  // inf or NaN
                  b.CreateAnd(b.CreateICmpSLT(bits, b.getInt32(0)),
                              b.CreateICmpNE(magnitude, b.getInt32(0))),  // negative, not zero
                  b.CreateICmpUGT(field, b.getInt32(254))});
  return b.CreateTrunc(b.CreateSelect(nan, b.getInt32(0xff), field), b.getInt8Ty());
}

}  // namespace

bool IsInlineEncodableNarrowFloat(PrimitiveType type) { return FormatOf(type).has_value(); }

llvm::Value* EmitF32ToNarrowFloatInline(llvm::IRBuilderBase& b, PrimitiveType type,
                                        llvm::Value* value) {
  const std::optional<NarrowFloatFormat> format = FormatOf(type);
  CHECK(format.has_value()) << "not an 8- or 4-bit float type";
  const NarrowFloatFormat& f = *format;
  llvm::Value* bits = b.CreateBitCast(value, b.getInt32Ty());
  if (f.encoding == FloatEncoding::kExponentOnly) return EncodeExponentOnly(b, bits);
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  const int m = f.mantissa_bits;

  llvm::Value* negative = b.CreateICmpSLT(bits, i32(0));
  llvm::Value* magnitude = b.CreateAnd(bits, i32(0x7fffffff));
  llvm::Value* exponent_field = b.CreateLShr(magnitude, 23);
  llvm::Value* is_nan = b.CreateICmpUGT(magnitude, i32(0x7f800000));
  llvm::Value* is_inf = b.CreateICmpEQ(magnitude, i32(0x7f800000));

  // The f32's exponent, and the exponent of the result's leading bit.
  llvm::Value* exponent = b.CreateSub(exponent_field, i32(127));
  llvm::Value* quantum = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, exponent, i32(1 - f.bias));
  // The significand shifted down to the quantum: 20 or more places; 25 or
  // more leave less than half the least subnormal (zero).
  llvm::Value* shift = b.CreateAdd(b.CreateSub(quantum, exponent), i32(23 - m));
  llvm::Value* clamped = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, shift, i32(24));
  llvm::Value* significand = b.CreateOr(b.CreateAnd(magnitude, i32(0x7fffff)), i32(1 << 23));
  llvm::Value* truncated = b.CreateLShr(significand, clamped);
  llvm::Value* rest = b.CreateAnd(significand, b.CreateSub(b.CreateShl(i32(1), clamped), i32(1)));
  llvm::Value* half = b.CreateShl(i32(1), b.CreateSub(clamped, i32(1)));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(truncated, i32(1)), i32(0));
  llvm::Value* round_up =
      b.CreateOr(b.CreateICmpUGT(rest, half), b.CreateAnd(b.CreateICmpEQ(rest, half), odd));
  llvm::Value* rounded = b.CreateAdd(truncated, b.CreateZExt(round_up, b.getInt32Ty()));
  // Field and mantissa at once: a carry out of the mantissa moves to the
  // next binade, and a subnormal (quantum 1 - bias, rounded below the
  // hidden bit) keeps field 0.
  llvm::Value* encoded =
      b.CreateAdd(b.CreateShl(b.CreateAdd(quantum, i32(f.bias - 1)), i32(m)), rounded);

  const uint32_t infinity = f.max_exponent_field() << m;
  const uint32_t max_finite = f.max_finite_bits();
  llvm::Value* sign = b.CreateSelect(negative, i32(f.sign_bit()), i32(0));
  // NaN keeps the input's sign where the format's NaN has one.
  llvm::Value* nan = f.nan_bits(true) != f.nan_bits(false)
                         ? b.CreateOr(sign, i32(f.nan_bits(false)))
                         : i32(f.nan_bits(false));
  llvm::Value* overflow_bits = nullptr;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      overflow_bits = b.CreateOr(sign, i32(infinity));
      break;
    case FloatEncoding::kFiniteOnly:
      overflow_bits = b.CreateOr(sign, i32(max_finite));
      break;
    default:
      overflow_bits = nan;
      break;
  }
  llvm::Value* zero_bits = f.encoding == FloatEncoding::kFiniteUz ? i32(0) : sign;

  llvm::Value* is_zero =
      b.CreateOr({b.CreateICmpEQ(exponent_field, i32(0)), b.CreateICmpUGT(shift, i32(24)),
                  b.CreateICmpEQ(rounded, i32(0))});
  llvm::Value* overflows = b.CreateOr(is_inf, b.CreateICmpUGT(encoded, i32(max_finite)));
  llvm::Value* result = b.CreateOr(sign, encoded);
  result = b.CreateSelect(overflows, overflow_bits, result);
  result = b.CreateSelect(is_zero, zero_bits, result);
  result = b.CreateSelect(is_nan, nan, result);
  return b.CreateTrunc(result, b.getInt8Ty());
}

}  // namespace axle::llvm_ir
