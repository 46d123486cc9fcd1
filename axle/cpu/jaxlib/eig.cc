//===- eig.cc - lapack_{s,d,c,z}geev_ffi -----------------------------------===//
//
// General (non-symmetric) eigendecomposition (xGEEV), as jaxlib's
// EigenvalueDecomposition{,Complex}:
//   operand 0: x [batch..., n, n], column-major (not written)
//   attributes compute_left, compute_right (ui8 'V' or 'N'): whether the
//              left (u^H x = w u^H) and right (x v = w v) eigenvectors are
//              computed
// f32/f64 results:
//   0: eigvals_real [batch..., n]     1: eigvals_imag [batch..., n]
//   2: eigvecs_left, 3: eigvecs_right [batch..., n, n], c64/c128: columns
//      normalized to unit length (conjugate pairs unpacked from LAPACK's
//      real storage)
//   4: info s32[batch...]
// c64/c128 results:
//   0: eigvals [batch..., n]   1: eigvecs_left   2: eigvecs_right   3: info
// info is 0, > 0 when the QR algorithm did not converge, and -4 when x has a
// NaN or infinity (LAPACK is not called then; jaxlib's convention).
// Eigenvectors not asked for, and every output of a failed matrix, are 0.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <typename T>
bool AllFinite(const T* data, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(data[i])) return false;
    } else {
      if (!std::isfinite(data[i].real()) || !std::isfinite(data[i].imag())) return false;
    }
  }
  return true;
}

// LAPACK's real eigenvectors (a conjugate pair j, j+1 stored as the real
// and imaginary parts in columns j and j+1) as complex columns.
template <typename R>
void UnpackEigenvectors(lapack_int n, const R* imag, const R* packed, std::complex<R>* out) {
  for (int64_t j = 0; j < n;) {
    if (imag[j] == 0 || j + 1 == n) {
      for (int64_t i = 0; i < n; ++i) out[j * n + i] = {packed[j * n + i], 0};
      ++j;
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      const R re = packed[j * n + i], im = packed[(j + 1) * n + i];
      out[j * n + i] = {re, im};
      out[(j + 1) * n + i] = {re, -im};
    }
    j += 2;
  }
}

absl::Status CheckModes(EigMode left, EigMode right) {
  AXLE_RETURN_IF_ERROR(CheckEnum("compute_left", left, "NV"));
  return CheckEnum("compute_right", right, "NV");
}

template <ffi::DataType dtype>
absl::Status GeevReal(ffi::Buffer<dtype> x, EigMode compute_left, EigMode compute_right,
                      ffi::ResultBuffer<dtype> eigvals_real, ffi::ResultBuffer<dtype> eigvals_imag,
                      ffi::ResultBuffer<ffi::ToComplex(dtype)> eigvecs_left,
                      ffi::ResultBuffer<ffi::ToComplex(dtype)> eigvecs_right,
                      ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  AXLE_RETURN_IF_ERROR(CheckModes(compute_left, compute_right));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int n = m.rows;
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (eigvals_real)", eigvals_real->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 1 (eigvals_imag)", eigvals_imag->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 2 (eigvecs_left)", eigvecs_left->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 3 (eigvecs_right)", eigvecs_right->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 4 (info)", info->dimensions(), m.batch_dims));
  for (auto* r : {&eigvals_real, &eigvals_imag})
    std::memset((*r)->untyped_data(), 0, (*r)->size_bytes());
  for (auto* r : {&eigvecs_left, &eigvecs_right})
    std::memset((*r)->untyped_data(), 0, (*r)->size_bytes());
  if (m.count == 0) return absl::OkStatus();
  const char jobvl = static_cast<char>(compute_left), jobvr = static_cast<char>(compute_right);
  T query = 0;
  lapack_int query_info = 0;
  lapack::Geev(jobvl, jobvr, n, nullptr, Ld(n), nullptr, nullptr, nullptr, Ld(n), nullptr, Ld(n),
               &query, -1, &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork), a(m.size()), vl(m.size()), vr(m.size());
  for (int64_t b = 0; b < m.count; ++b) {
    const T* x_b = x.typed_data() + b * m.size();
    T* wr = eigvals_real->typed_data() + b * n;
    T* wi = eigvals_imag->typed_data() + b * n;
    int32_t* info_b = info->typed_data() + b;
    if (!AllFinite(x_b, m.size())) {
      *info_b = -4;
      continue;
    }
    std::copy(x_b, x_b + m.size(), a.begin());
    lapack::Geev(jobvl, jobvr, n, a.data(), Ld(n), wr, wi, vl.data(), Ld(n), vr.data(), Ld(n),
                 work.data(), lwork, info_b);
    if (*info_b != 0) continue;
    if (jobvl == 'V')
      UnpackEigenvectors(n, wi, vl.data(), eigvecs_left->typed_data() + b * m.size());
    if (jobvr == 'V')
      UnpackEigenvectors(n, wi, vr.data(), eigvecs_right->typed_data() + b * m.size());
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
absl::Status GeevComplex(ffi::Buffer<dtype> x, EigMode compute_left, EigMode compute_right,
                         ffi::ResultBuffer<dtype> eigvals, ffi::ResultBuffer<dtype> eigvecs_left,
                         ffi::ResultBuffer<dtype> eigvecs_right, ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  using R = Real<dtype>;
  AXLE_RETURN_IF_ERROR(CheckModes(compute_left, compute_right));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int n = m.rows;
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (eigvals)", eigvals->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 1 (eigvecs_left)", eigvecs_left->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 2 (eigvecs_right)", eigvecs_right->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 3 (info)", info->dimensions(), m.batch_dims));
  for (auto* r : {&eigvals, &eigvecs_left, &eigvecs_right}) {
    std::memset((*r)->untyped_data(), 0, (*r)->size_bytes());
  }
  if (m.count == 0) return absl::OkStatus();
  const char jobvl = static_cast<char>(compute_left), jobvr = static_cast<char>(compute_right);
  std::vector<R> rwork(std::max<int64_t>(2 * int64_t{n}, 1));
  T query = 0;
  lapack_int query_info = 0;
  lapack::Geev(jobvl, jobvr, n, nullptr, Ld(n), nullptr, nullptr, Ld(n), nullptr, Ld(n), &query, -1,
               rwork.data(), &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork), a(m.size()), scratch(std::max<int64_t>(m.size(), 1));
  for (int64_t b = 0; b < m.count; ++b) {
    const T* x_b = x.typed_data() + b * m.size();
    int32_t* info_b = info->typed_data() + b;
    if (!AllFinite(x_b, m.size())) {
      *info_b = -4;
      continue;
    }
    std::copy(x_b, x_b + m.size(), a.begin());
    T* vl = jobvl == 'V' ? eigvecs_left->typed_data() + b * m.size() : scratch.data();
    T* vr = jobvr == 'V' ? eigvecs_right->typed_data() + b * m.size() : scratch.data();
    lapack::Geev(jobvl, jobvr, n, a.data(), Ld(n), eigvals->typed_data() + b * n, vl, Ld(n), vr,
                 Ld(n), work.data(), lwork, rwork.data(), info_b);
    if (*info_b != 0) {
      std::fill_n(eigvals->typed_data() + b * n, n, T(0));
      if (jobvl == 'V') std::fill_n(vl, m.size(), T(0));
      if (jobvr == 'V') std::fill_n(vr, m.size(), T(0));
    }
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GeevRealKernel(ffi::Buffer<dtype> x, EigMode compute_left, EigMode compute_right,
                          ffi::ResultBuffer<dtype> eigvals_real,
                          ffi::ResultBuffer<dtype> eigvals_imag,
                          ffi::ResultBuffer<ffi::ToComplex(dtype)> eigvecs_left,
                          ffi::ResultBuffer<ffi::ToComplex(dtype)> eigvecs_right,
                          ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(GeevReal<dtype>(x, compute_left, compute_right, eigvals_real, eigvals_imag,
                                    eigvecs_left, eigvecs_right, info));
}

template <ffi::DataType dtype>
ffi::Error GeevComplexKernel(ffi::Buffer<dtype> x, EigMode compute_left, EigMode compute_right,
                             ffi::ResultBuffer<dtype> eigvals,
                             ffi::ResultBuffer<dtype> eigvecs_left,
                             ffi::ResultBuffer<dtype> eigvecs_right,
                             ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(GeevComplex<dtype>(x, compute_left, compute_right, eigvals, eigvecs_left,
                                       eigvecs_right, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_GEEV(name, dtype)                                          \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                      \
      name, ::axle::jaxlib::GeevRealKernel<dtype>,                                    \
      ::axle::ffi::Ffi::Bind()                                                        \
          .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                                     \
          .Attr<::axle::jaxlib::EigMode>("compute_left")                              \
          .Attr<::axle::jaxlib::EigMode>("compute_right")                             \
          .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals_real*/)                          \
          .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals_imag*/)                          \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToComplex(dtype)>>(/*eigvecs_left*/)  \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToComplex(dtype)>>(/*eigvecs_right*/) \
          .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))
#define AXLE_JAXLIB_DEFINE_GEEV_COMPLEX(name, dtype)                                    \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::GeevComplexKernel<dtype>,         \
                                ::axle::ffi::Ffi::Bind()                                \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)             \
                                    .Attr<::axle::jaxlib::EigMode>("compute_left")      \
                                    .Attr<::axle::jaxlib::EigMode>("compute_right")     \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals*/)       \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*eigvecs_left*/)  \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*eigvecs_right*/) \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_GEEV(axle_jaxlib_lapack_sgeev_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEEV(axle_jaxlib_lapack_dgeev_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEEV_COMPLEX(axle_jaxlib_lapack_cgeev_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEEV_COMPLEX(axle_jaxlib_lapack_zgeev_ffi, ::axle::ffi::C128);
