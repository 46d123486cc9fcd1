//===- qr.cc - QR: geqrf, geqp3, orgqr/ungqr, ormqr/unmqr ------------------===//
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
// the product with Q (xORMQR / xUNMQR), as jaxlib's OrthogonalQrMultiply:
//   operand 0: a [batch..., q, r]: Householder vectors (q = m when left,
//              n when right)
//   operand 1: tau [batch..., k], k <= min(q, r)
//   operand 2: c [batch..., m, n]
//   attributes left, transpose (bool): c_out = op(Q) c (left) or c op(Q),
//              op(Q) = Q^T / Q^H when transpose
//   result 0:  c_out [batch..., m, n]
// and QR with column pivoting (xGEQP3), as jaxlib's PivotingQrFactorization:
//   operand 0: x [batch..., m, n]
//   operand 1: jpvt s32[batch..., n]: a nonzero entry moves that column to
//              the front (LAPACK's JPVT on entry)
//   results:   x_out (as geqrf's), jpvt_out s32[batch..., n] (column j of
//              x P is column jpvt_out[j] of x, 1-based), tau [batch..., min(m, n)]
// None has an info output (jaxlib's have none: LAPACK cannot fail here).
// JAX aliases x_out to x (c_out to c, jpvt_out to jpvt).
//
//===----------------------------------------------------------------------===//
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
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
absl::Status Ormqr(ffi::Buffer<dtype> a, ffi::Buffer<dtype> tau, ffi::Buffer<dtype> c, bool left,
                   bool transpose, ffi::ResultBuffer<dtype> c_out) {
  using T = Native<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch cm, SplitMatrices("operand 2 (c)", c.dimensions()));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch am, SplitMatrices("operand 0 (a)", a.dimensions()));
  const lapack_int q = left ? cm.rows : cm.cols;
  AXLE_RETURN_IF_ERROR(CheckDims("operand 0 (a)", a.dimensions(), cm.Dims({q, am.cols})));
  if (tau.dimensions().size() != cm.batch_dims.size() + 1) {
    return CheckDims("operand 1 (tau)", tau.dimensions(), cm.Dims({std::min(q, am.cols)}));
  }
  const int64_t k = tau.dimensions().back();
  if (k > q || k > am.cols) {
    return absl::InvalidArgumentError(absl::StrCat("operand 1 (tau) has ", k,
                                                   " reflectors but operand 0 (a) is [..., ", q,
                                                   ", ", am.cols, "]"));
  }
  AXLE_RETURN_IF_ERROR(CheckDims("operand 1 (tau)", tau.dimensions(), cm.Dims({k})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (c_out)", c_out->dimensions(), cm.Dims({cm.rows, cm.cols})));
  CopyIfDifferent(c, c_out);
  if (cm.count == 0 || cm.size() == 0) return absl::OkStatus();
  const char side = left ? 'L' : 'R';
  const char trans = transpose ? (ffi::IsComplexType<dtype>() ? 'C' : 'T') : 'N';
  const lapack_int reflectors = static_cast<lapack_int>(k);
  T query = 0;
  lapack_int info = 0;
  lapack::Ormqr(side, trans, cm.rows, cm.cols, reflectors, nullptr, Ld(q), nullptr, nullptr,
                Ld(cm.rows), &query, -1, &info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < cm.count; ++b) {
    lapack::Ormqr(side, trans, cm.rows, cm.cols, reflectors, a.typed_data() + b * am.size(), Ld(q),
                  tau.typed_data() + b * k, c_out->typed_data() + b * cm.size(), Ld(cm.rows),
                  work.data(), lwork, &info);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
absl::Status Geqp3(ffi::Buffer<dtype> x, ffi::Buffer<ffi::S32> jpvt, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<ffi::S32> jpvt_out, ffi::ResultBuffer<dtype> tau) {
  using T = Native<dtype>;
  using R = Real<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int k = std::min(m.rows, m.cols);
  AXLE_RETURN_IF_ERROR(CheckDims("operand 1 (jpvt)", jpvt.dimensions(), m.Dims({m.cols})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (jpvt_out)", jpvt_out->dimensions(), m.Dims({m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (tau)", tau->dimensions(), m.Dims({k})));
  CopyIfDifferent(x, x_out);
  CopyIfDifferent(jpvt, jpvt_out);
  if (m.count == 0 || m.cols == 0) return absl::OkStatus();
  std::vector<R> rwork(std::max<int64_t>(2 * int64_t{m.cols}, 1));
  T query = 0;
  lapack_int info = 0;
  lapack::Geqp3(m.rows, m.cols, nullptr, Ld(m.rows), nullptr, nullptr, &query, -1, rwork.data(),
                &info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Geqp3(m.rows, m.cols, x_out->typed_data() + b * m.size(), Ld(m.rows),
                  jpvt_out->typed_data() + b * m.cols, tau->typed_data() + b * k, work.data(),
                  lwork, rwork.data(), &info);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error OrmqrKernel(ffi::Buffer<dtype> a, ffi::Buffer<dtype> tau, ffi::Buffer<dtype> c,
                       bool left, bool transpose, ffi::ResultBuffer<dtype> c_out) {
  return ToFfiError(Ormqr<dtype>(a, tau, c, left, transpose, c_out));
}

template <ffi::DataType dtype>
ffi::Error Geqp3Kernel(ffi::Buffer<dtype> x, ffi::Buffer<ffi::S32> jpvt,
                       ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<ffi::S32> jpvt_out,
                       ffi::ResultBuffer<dtype> tau) {
  return ToFfiError(Geqp3<dtype>(x, jpvt, x_out, jpvt_out, tau));
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

#define AXLE_JAXLIB_DEFINE_ORMQR(name, dtype)                                 \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::OrmqrKernel<dtype>,     \
                                ::axle::ffi::Ffi::Bind()                      \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*a*/)   \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*tau*/) \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*c*/)   \
                                    .Attr<bool>("left")                       \
                                    .Attr<bool>("transpose")                  \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*c_out*/))
#define AXLE_JAXLIB_DEFINE_GEQP3(name, dtype)                                                 \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::Geqp3Kernel<dtype>,                     \
                                ::axle::ffi::Ffi::Bind()                                      \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                   \
                                    .Arg<::axle::ffi::Buffer<::axle::ffi::S32>>(/*jpvt*/)     \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)               \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*jpvt_out*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*tau*/))

AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_sgeqrf_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_dgeqrf_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_cgeqrf_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEQRF(axle_jaxlib_lapack_zgeqrf_ffi, ::axle::ffi::C128);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_sorgqr_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_dorgqr_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_cungqr_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_ORGQR(axle_jaxlib_lapack_zungqr_ffi, ::axle::ffi::C128);
AXLE_JAXLIB_DEFINE_ORMQR(axle_jaxlib_lapack_sormqr_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_ORMQR(axle_jaxlib_lapack_dormqr_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_ORMQR(axle_jaxlib_lapack_cunmqr_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_ORMQR(axle_jaxlib_lapack_zunmqr_ffi, ::axle::ffi::C128);
AXLE_JAXLIB_DEFINE_GEQP3(axle_jaxlib_lapack_sgeqp3_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEQP3(axle_jaxlib_lapack_dgeqp3_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEQP3(axle_jaxlib_lapack_cgeqp3_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEQP3(axle_jaxlib_lapack_zgeqp3_ffi, ::axle::ffi::C128);
