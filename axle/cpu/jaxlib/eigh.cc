//===- eigh.cc - lapack_{s,d}syevd_ffi, lapack_{c,z}heevd_ffi --------------===//
//
// Symmetric / Hermitian eigendecomposition by divide and conquer (xSYEVD,
// xHEEVD), as jaxlib's EigenvalueDecompositionSymmetric / ...Hermitian:
//   operand 0: x [batch..., n, n], column-major; only the `uplo` triangle
//              is read
//   attribute uplo ('L' or 'U', ui8)
//   attribute mode ('V': eigenvectors too, 'N': eigenvalues only; ui8)
//   result 0:  x_out [batch..., n, n]: with 'V', the orthonormal
//              eigenvectors as columns (x = V diag(w) V^H); with 'N', the
//              triangle is destroyed
//   result 1:  eigenvalues [batch..., n], real, ascending
//   result 2:  info s32[batch...]: 0, or > 0 when the algorithm failed to
//              converge
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
absl::Status Syevd(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<ffi::ToReal(dtype)> eigenvalues,
                   ffi::ResultBuffer<ffi::S32> info, EigMode mode) {
  using T = Native<dtype>;
  using R = Real<dtype>;
  AXLE_RETURN_IF_ERROR(CheckEnum("uplo", uplo, "LU"));
  AXLE_RETURN_IF_ERROR(CheckEnum("mode", mode, "NV"));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int n = m.rows;
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (eigenvalues)", eigenvalues->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  const char jobz = static_cast<char>(mode);
  const char uplo_c = static_cast<char>(uplo);
  T work_query = 0;
  R rwork_query = 0;
  lapack_int iwork_query = 0, query_info = 0;
  lapack::Syevd(jobz, uplo_c, n, nullptr, Ld(n), nullptr, &work_query, -1, &rwork_query, -1,
                &iwork_query, -1, &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(work_query));
  AXLE_ASSIGN_OR_RETURN(lapack_int lrwork, QueriedSize(rwork_query));
  AXLE_ASSIGN_OR_RETURN(lapack_int liwork, QueriedSize(iwork_query));
  std::vector<T> work(lwork);
  std::vector<R> rwork(lrwork);
  std::vector<lapack_int> iwork(liwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Syevd(jobz, uplo_c, n, x_out->typed_data() + b * m.size(), Ld(n),
                  eigenvalues->typed_data() + b * n, work.data(), lwork, rwork.data(), lrwork,
                  iwork.data(), liwork, info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error SyevdKernel(ffi::Buffer<dtype> x, UpLo uplo, ffi::ResultBuffer<dtype> x_out,
                       ffi::ResultBuffer<ffi::ToReal(dtype)> eigenvalues,
                       ffi::ResultBuffer<ffi::S32> info, EigMode mode) {
  return ToFfiError(Syevd<dtype>(x, uplo, x_out, eigenvalues, info, mode));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_SYEVD(name, dtype)                                    \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                 \
      name, ::axle::jaxlib::SyevdKernel<dtype>,                                  \
      ::axle::ffi::Ffi::Bind()                                                   \
          .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                                \
          .Attr<::axle::jaxlib::UpLo>("uplo")                                    \
          .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)                            \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToReal(dtype)>>(/*eigenvalues*/) \
          .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/)                  \
          .Attr<::axle::jaxlib::EigMode>("mode"))

AXLE_JAXLIB_DEFINE_SYEVD(axle_jaxlib_lapack_ssyevd_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_SYEVD(axle_jaxlib_lapack_dsyevd_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_SYEVD(axle_jaxlib_lapack_cheevd_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_SYEVD(axle_jaxlib_lapack_zheevd_ffi, ::axle::ffi::C128);
