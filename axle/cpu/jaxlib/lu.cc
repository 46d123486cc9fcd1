//===- lu.cc - lapack_{s,d,c,z}getrf_ffi -----------------------------------===//
//
// LU factorization with partial pivoting (LAPACK's xGETRF), as jaxlib's
// LuDecomposition:
//   operand 0: x [batch..., m, n], column-major
//   result 0:  x_out [batch..., m, n]: L (unit diagonal, strictly below) and
//              U (on and above the diagonal) of P A = L U
//   result 1:  ipiv s32[batch..., min(m, n)]: LAPACK's 1-based pivots (row i
//              was interchanged with row ipiv[i])
//   result 2:  info s32[batch...]: 0, or k > 0 when U(k, k) is exactly zero
// JAX aliases x_out to x and turns ipiv into a permutation itself.
//
//===----------------------------------------------------------------------===//
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Getrf(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<ffi::S32> ipiv, ffi::ResultBuffer<ffi::S32> info) {
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int k = std::min(m.rows, m.cols);
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (ipiv)", ipiv->dimensions(), m.Dims({k})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(x, x_out);
  Native<dtype>* a = x_out->typed_data();
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Getrf(m.rows, m.cols, a + b * m.size(), Ld(m.rows), ipiv->typed_data() + b * k,
                  info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GetrfKernel(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                       ffi::ResultBuffer<ffi::S32> ipiv, ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(Getrf<dtype>(x, x_out, ipiv, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_GETRF(name, dtype)                                             \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::GetrfKernel<dtype>,                 \
                                ::axle::ffi::Ffi::Bind()                                  \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)               \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)           \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*ipiv*/) \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_GETRF(axle_jaxlib_lapack_sgetrf_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GETRF(axle_jaxlib_lapack_dgetrf_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GETRF(axle_jaxlib_lapack_cgetrf_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GETRF(axle_jaxlib_lapack_zgetrf_ffi, ::axle::ffi::C128);
