//===- lapack_ffi_internal.h - What jaxlib's LAPACK targets share ----------===//
//
// The attribute enums of jaxlib's LAPACK targets (chars passed as `ui8`
// attributes: `uplo = 76 : ui8` is 'L'), their decoding for Axle's typed FFI
// API, and the checks every target makes before LAPACK sees an argument:
// operand and result shapes (a batch of column-major matrices, batch
// dimensions leading), enum values, sizes that fit LAPACK's 32-bit integers.
// A failed check is an InvalidArgument naming the operand, result or
// attribute; LAPACK is never called with an argument it would reject.
//
// Private to axle/cpu/jaxlib/ (not installed).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JAXLIB_LAPACK_FFI_INTERNAL_H_
#define AXLE_CPU_JAXLIB_LAPACK_FFI_INTERNAL_H_

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/runtime/ffi/ffi_api.h"

namespace axle::jaxlib {

namespace ffi = ::axle::ffi;

// jaxlib's MatrixParams, svd::, eig:: and schur:: enums, with its values.
enum class Side : char { kLeft = 'L', kRight = 'R' };
enum class UpLo : char { kLower = 'L', kUpper = 'U' };
enum class Diag : char { kNonUnit = 'N', kUnit = 'U' };
enum class Transpose : char { kNoTrans = 'N', kTrans = 'T', kConjTrans = 'C' };
enum class SvdMode : char { kFull = 'A', kReduced = 'S', kOverwrite = 'O', kNoUV = 'N' };
enum class EigMode : char { kNoVectors = 'N', kVectors = 'V' };
enum class SchurMode : char { kNoVectors = 'N', kVectors = 'V' };
enum class SchurSort : char { kNoSort = 'N', kSort = 'S' };

}  // namespace axle::jaxlib

XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::Side);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::UpLo);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::Diag);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::Transpose);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::SvdMode);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::EigMode);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::SchurMode);
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(axle::jaxlib::SchurSort);

namespace axle::jaxlib {

// LAPACK's integer (LP64).
using lapack_int = int;

template <ffi::DataType dtype>
using Native = ffi::NativeType<dtype>;
template <ffi::DataType dtype>
using Real = ffi::NativeType<ffi::ToReal(dtype)>;

// `value` (an attribute named `name`) is one of the characters in `allowed`.
template <typename Enum>
absl::Status CheckEnum(absl::string_view name, Enum value, absl::string_view allowed) {
  const char c = static_cast<char>(value);
  if (allowed.find(c) != absl::string_view::npos && c != '\0') return absl::OkStatus();
  std::string want;
  for (char a : allowed) {
    if (!want.empty()) want += ", ";
    want += std::string("'") + a + "' (" + std::to_string(static_cast<int>(a)) + ")";
  }
  return absl::InvalidArgumentError("attribute '" + std::string(name) + "' = " +
                                    std::to_string(static_cast<int>(static_cast<uint8_t>(c))) +
                                    " is not one of " + want);
}

// An operand of shape [batch..., rows, cols].
struct MatrixBatch {
  std::vector<int64_t> batch_dims;
  int64_t count = 1;  // the product of batch_dims
  lapack_int rows = 0;
  lapack_int cols = 0;

  int64_t size() const { return int64_t{rows} * cols; }
  // batch_dims followed by `trailing`.
  std::vector<int64_t> Dims(std::initializer_list<int64_t> trailing) const;
};

// `dims` (of the operand or result described by `what`, e.g. "operand 0
// (x)") as a batch of matrices: rank >= 2, every matrix dimension and
// product of them small enough for LAPACK's int.
absl::StatusOr<MatrixBatch> SplitMatrices(absl::string_view what, ffi::Span<const int64_t> dims);
// SplitMatrices, and rows == cols.
absl::StatusOr<MatrixBatch> SplitSquareMatrices(absl::string_view what,
                                                ffi::Span<const int64_t> dims);

// `dims` equals `expected`, else InvalidArgument naming `what`.
absl::Status CheckDims(absl::string_view what, ffi::Span<const int64_t> dims,
                       const std::vector<int64_t>& expected);

// A LAPACK leading dimension: at least 1.
inline lapack_int Ld(lapack_int rows) { return std::max(rows, 1); }

// The size a LAPACK workspace query (lwork = -1) returned in `query`, with
// room to spare (single-precision queries round large sizes down), at least 1;
// InvalidArgument when it does not fit LAPACK's int.
template <typename T>
absl::StatusOr<lapack_int> QueriedSize(T query) {
  const double size = static_cast<double>(std::real(query)) * 1.000001 + 1;
  if (size > static_cast<double>(std::numeric_limits<lapack_int>::max())) {
    return absl::InvalidArgumentError("LAPACK workspace too large for a 32-bit LAPACK");
  }
  return std::max(static_cast<lapack_int>(size), 1);
}

// Copies `x` into `x_out` unless they are one buffer (output_to_operand_aliasing).
template <ffi::DataType dtype>
void CopyIfDifferent(const ffi::Buffer<dtype>& x, ffi::Result<ffi::Buffer<dtype>>& x_out) {
  if (x.untyped_data() != x_out->untyped_data()) {
    std::memcpy(x_out->untyped_data(), x.untyped_data(), x.size_bytes());
  }
}

inline ffi::Error ToFfiError(const absl::Status& status) {
  if (status.ok()) return ffi::Error::Success();
  return ffi::Error(static_cast<ffi::ErrorCode>(status.code()), std::string(status.message()));
}

}  // namespace axle::jaxlib

#endif  // AXLE_CPU_JAXLIB_LAPACK_FFI_INTERNAL_H_
