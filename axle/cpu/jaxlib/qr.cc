//===- qr.cc - lapack_{s,d,c,z}geqrf_ffi, lapack_{s,d}orgqr_ffi, {c,z}ungqr -===//
//
// QR factorization (xGEQRF), as jaxlib's QrFactorization:
//   operand 0: x [batch..., m, n], column-major
//   result 0:  x_out [batch..., m, n]: R on and above the diagonal, the
//              Householder vectors below it
//   result 1:  tau [batch..., min(m, n)]: the Householder scalars
// and the explicit Q from it (xORGQR / xUNGQR), as jaxlib's OrthogonalQr:
//   operand 0: x [batch..., m, n], m >= n: Householder vectors (geqrf's x_out,
//              padded to n columns)
//   operand 1: tau [batch..., k], k <= n
//   result 0:  x_out [batch..., m, n]: the first n columns of
//              Q = H(1) ... H(k)
// Neither has an info output (jaxlib's have none: LAPACK cannot fail here).
// JAX aliases x_out to x.
//
//===----------------------------------------------------------------------===//
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack.h"
#include "axle/cpu/jaxlib/lapack_ffi.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Geqrf(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<dtype> tau) {
  using T = Native<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int k = std::min(m.rows, m.cols);
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (tau)", tau->dimensions(), m.Dims({k})));
  CopyIfDifferent(x, x_out);
  if (m.count == 0 || k == 0) return absl::OkStatus();
  T query = 0;
  lapack_int info = 0;
  lapack::Geqrf(m.rows, m.cols, nullptr, Ld(m.rows), nullptr, &query, -1, &info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Geqrf(m.rows, m.cols, x_out->typed_data() + b * m.size(), Ld(m.rows),
                  tau->typed_data() + b * k, work.data(), lwork, &info);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
absl::Status Orgqr(ffi::Buffer<dtype> x, ffi::Buffer<dtype> tau, ffi::ResultBuffer<dtype> x_out) {
  using T = Native<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 0 (x)", x.dimensions()));
  if (tau.dimensions().size() != m.batch_dims.size() + 1) {
    return CheckDims("operand 1 (tau)", tau.dimensions(), m.Dims({std::min(m.rows, m.cols)}));
  }
  const int64_t k = tau.dimensions().back();
  if (m.rows < m.cols || k > m.cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("operand 0 (x) [..., ", m.rows, ", ", m.cols, "] and operand 1 (tau) [..., ",
                     k, "]: need rows >= columns >= the number of reflectors"));
  }
  AXLE_RETURN_IF_ERROR(CheckDims("operand 1 (tau)", tau.dimensions(), m.Dims({k})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  CopyIfDifferent(x, x_out);
  if (m.count == 0 || m.cols == 0) return absl::OkStatus();
  T query = 0;
  lapack_int info = 0;
  const lapack_int reflectors = static_cast<lapack_int>(k);
  lapack::Orgqr(m.rows, m.cols, reflectors, nullptr, Ld(m.rows), nullptr, &query, -1, &info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Orgqr(m.rows, m.cols, reflectors, x_out->typed_data() + b * m.size(), Ld(m.rows),
                  tau.typed_data() + b * k, work.data(), lwork, &info);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GeqrfKernel(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                       ffi::ResultBuffer<dtype> tau) {
  return ToFfiError(Geqrf<dtype>(x, x_out, tau));
}

template <ffi::DataType dtype>
ffi::Error OrgqrKernel(ffi::Buffer<dtype> x, ffi::Buffer<dtype> tau,
                       ffi::ResultBuffer<dtype> x_out) {
  return ToFfiError(Orgqr<dtype>(x, tau, x_out));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_GEQRF(name, dtype)                                   \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::GeqrfKernel<dtype>,       \
                                ::axle::ffi::Ffi::Bind()                        \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)     \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*tau*/))
#define AXLE_JAXLIB_DEFINE_ORGQR(name, dtype)                                 \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::OrgqrKernel<dtype>,     \
                                ::axle::ffi::Ffi::Bind()                      \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)   \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*tau*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/))

AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_sgeqrf_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_dgeqrf_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_cgeqrf_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_zgeqrf_ffi, ::axle::ffi::C128);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_sorgqr_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_dorgqr_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_cungqr_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_zungqr_ffi, ::axle::ffi::C128);
