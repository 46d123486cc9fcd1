//===- cholesky.cc - lapack_{s,d,c,z}potrf_ffi -----------------------------===//
//
// Cholesky factorization, as jaxlib's CholeskyFactorization:
//   operand 0: x [batch..., n, n], column-major
//   attribute uplo ('L' or 'U', ui8): which triangle is read and factored
//   result 0:  x_out [batch..., n, n]: the factor in that triangle (A = L L^H
//              or U^H U); the other triangle keeps x's values
//   result 1:  info s32[batch...]: 0, or k > 0 when the leading minor of
//              order k is not positive definite (LAPACK's xPOTRF)
// JAX aliases x_out to x and replaces a matrix whose info is not 0 by NaNs.
//
//===----------------------------------------------------------------------===//
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Potrf(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<ffi::S32> info) {
  AXLE_RETURN_IF_ERROR(CheckEnum("uplo", uplo, "LU"));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(x, x_out);
  Native<dtype>* a = x_out->typed_data();
  int32_t* info_data = info->typed_data();
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Potrf(static_cast<char>(uplo), m.rows, a + b * m.size(), Ld(m.rows), &info_data[b]);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error PotrfKernel(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                       ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(Potrf<dtype>(x, uplo, x_out, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_POTRF(name, dtype)                                   \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::PotrfKernel<dtype>,       \
                                ::axle::ffi::Ffi::Bind()                        \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)     \
                                    .Attr<::axle::jaxlib::UpLo>("uplo")         \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/) \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_POTRF(axle_jaxlib_lapack_spotrf_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_POTRF(axle_jaxlib_lapack_dpotrf_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_POTRF(axle_jaxlib_lapack_cpotrf_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_POTRF(axle_jaxlib_lapack_zpotrf_ffi, ::axle::ffi::C128);
