//===- npy.h - NumPy .npy files <-> literals ------------------------------===//
//
// Reads and writes array literals in NumPy's .npy format. Files are written
// as version 1.0 (2.0 when the header needs it), byte for byte as np.save
// writes them; versions 1.0, 2.0 and 3.0 are read, in C or Fortran order
// (Fortran-order data is transposed to Axle's row-major storage), little- or
// big-endian (big-endian data is byte-swapped).
//
// dtype descriptors: pred '|b1'; s8/s16/s32/s64 '|i1' '<i2' '<i4' '<i8';
// u8..u64 '|u1' '<u2' '<u4' '<u8'; f16/f32/f64 '<f2' '<f4' '<f8'; c64/c128
// '<c8' '<c16'. NumPy has no descriptor for the ml_dtypes types (np.save of
// a bfloat16 array writes the untyped '<V2'), so Axle writes their ml_dtypes
// names, which np.load understands once ml_dtypes is imported: 'bfloat16',
// 'float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz',
// 'float8_e4m3b11fnuz', 'float8_e4m3', 'float8_e3m4', 'float8_e8m0fnu',
// 'float4_e2m1fn', 'int4', 'uint4', 'int2', 'uint2', 'int1', 'uint1' (the
// sub-byte types one element per byte, low bits, as ml_dtypes stores them).
// Untyped 'V<n>' data is read when the caller names the element type.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_NPY_H_
#define AXLE_CORE_NPY_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/core/literal.h"

namespace axle {

// The .npy bytes of an array literal (not a tuple or token).
absl::StatusOr<std::string> EncodeNpy(const Literal& literal);

// The array in .npy bytes. With `expected`, the element type must be it (and
// untyped 'V<n>' data is taken as that type when n is its byte width).
absl::StatusOr<Literal> DecodeNpy(std::string_view bytes,
                                  std::optional<PrimitiveType> expected = std::nullopt);

absl::Status WriteNpy(const Literal& literal, const std::string& path);
absl::StatusOr<Literal> ReadNpy(const std::string& path,
                                std::optional<PrimitiveType> expected = std::nullopt);

// The dtype descriptor Axle writes for `type` ("<f4", "bfloat16"), or
// nullopt for non-array types.
std::optional<std::string> NpyDescr(PrimitiveType type);

}  // namespace axle

#endif  // AXLE_CORE_NPY_H_
