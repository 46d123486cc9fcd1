//===- tridiagonal.cc - lapack_{s,d}sytrd_ffi, lapack_{c,z}hetrd_ffi -------===//
//
// Reduction of a symmetric / Hermitian matrix to real tridiagonal form
// x = Q T Q^H (xSYTRD, xHETRD), as jaxlib's TridiagonalReduction:
//   operand 0: x [batch..., n, n], column-major; only the `uplo` triangle
//              is read
//   attribute uplo ('L' or 'U', ui8)
//   result 0:  x_out [batch..., n, n]: T's diagonals and the Householder
//              vectors of Q in the `uplo` triangle
//   result 1:  diagonal [batch..., n], real: T's diagonal
//   result 2:  off_diagonal [batch..., n - 1], real: T's off-diagonal
//   result 3:  tau [batch..., n - 1]: the Householder scalars
//   result 4:  info s32[batch...]: 0
// JAX aliases x_out to x.
//
//===----------------------------------------------------------------------===//
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Sytrd(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<ffi::ToReal(dtype)> diagonal,
                   ffi::ResultBuffer<ffi::ToReal(dtype)> off_diagonal, ffi::ResultBuffer<dtype> tau,
                   ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  AXLE_RETURN_IF_ERROR(CheckEnum("uplo", uplo, "LU"));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int n = m.rows;
  const lapack_int off = std::max(n - 1, 0);
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (diagonal)", diagonal->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 2 (off_diagonal)", off_diagonal->dimensions(), m.Dims({off})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 3 (tau)", tau->dimensions(), m.Dims({off})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 4 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  const char uplo_c = static_cast<char>(uplo);
  T query = 0;
  lapack_int query_info = 0;
  lapack::Sytrd(uplo_c, n, nullptr, Ld(n), nullptr, nullptr, nullptr, &query, -1, &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Sytrd(uplo_c, n, x_out->typed_data() + b * m.size(), Ld(n),
                  diagonal->typed_data() + b * n, off_diagonal->typed_data() + b * off,
                  tau->typed_data() + b * off, work.data(), lwork, info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error SytrdKernel(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                       ffi::ResultBuffer<ffi::ToReal(dtype)> diagonal,
                       ffi::ResultBuffer<ffi::ToReal(dtype)> off_diagonal,
                       ffi::ResultBuffer<dtype> tau, ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(Sytrd<dtype>(x, uplo, x_out, diagonal, off_diagonal, tau, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_SYTRD(name, dtype)                                     \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                  \
      name, ::axle::jaxlib::SytrdKernel<dtype>,                                   \
      ::axle::ffi::Ffi::Bind()                                                    \
          .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                                 \
          .Attr<::axle::jaxlib::UpLo>("uplo")                                     \
          .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)                             \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToReal(dtype)>>(/*diagonal*/)     \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToReal(dtype)>>(/*off_diagonal*/) \
          .Ret<::axle::ffi::Buffer<dtype>>(/*tau*/)                               \
          .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_SYTRD(axle_jaxlib_lapack_ssytrd_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_SYTRD(axle_jaxlib_lapack_dsytrd_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_SYTRD(axle_jaxlib_lapack_chetrd_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_SYTRD(axle_jaxlib_lapack_zhetrd_ffi, ::axle::ffi::C128);
