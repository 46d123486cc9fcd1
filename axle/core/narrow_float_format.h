//===- narrow_float_format.h - The bit layout of a narrow float ------------===//
//
// What both the interpreter's encoder and decoder (types.cc) and the
// emitted f32 -> 8- and 4-bit float conversion (llvm_ir/narrow_float_ir.cc)
// read of a narrow float format: its field widths, exponent bias and
// encoding (types.h: FloatEncoding), and the bit patterns that follow.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_NARROW_FLOAT_FORMAT_H_
#define AXLE_CORE_NARROW_FLOAT_FORMAT_H_

#include <cstdint>

#include "axle/core/types.h"

namespace axle {

struct NarrowFloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  FloatEncoding encoding;

  bool has_sign() const { return encoding != FloatEncoding::kExponentOnly; }
  uint32_t sign_bit() const { return has_sign() ? 1u << (exponent_bits + mantissa_bits) : 0; }
  uint32_t max_exponent_field() const { return (1u << exponent_bits) - 1; }
  uint32_t mantissa_mask() const { return (1u << mantissa_bits) - 1; }
  // The bit pattern of the largest finite value.
  uint32_t max_finite_bits() const;
  // The bit pattern of NaN: with the sign of `negative` where the format's
  // NaN has one; 0 for a format without NaN (f4e2m1fn).
  uint32_t nan_bits(bool negative) const;
};

}  // namespace axle

#endif  // AXLE_CORE_NARROW_FLOAT_FORMAT_H_
