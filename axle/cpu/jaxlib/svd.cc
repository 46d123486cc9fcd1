//===- svd.cc - lapack_{s,d,c,z}gesdd_ffi and lapack_{s,d,c,z}gesvd_ffi ----===//
//
// Singular value decomposition x = U diag(s) V^H, by divide and conquer
// (xGESDD, jax's default) or by QR iteration (xGESVD), as jaxlib's
// SingularValueDecomposition{,Complex,QR,QRComplex}:
//   operand 0: x [batch..., m, n], column-major
//   attribute mode (ui8): 'A' full U [m, m] and V^H [n, n]; 'S' reduced U
//              [m, k] and V^H [k, n] (k = min(m, n)); 'N' singular values
//              only (u and vt are zero-filled; their shapes are not used)
//   result 0:  x_out [batch..., m, n]: x, destroyed
//   result 1:  s [batch..., k], real, descending, >= 0
//   result 2:  u [batch..., m, m or k]
//   result 3:  vt [batch..., n or k, n]
//   result 4:  info s32[batch...]: 0, or > 0 when the iteration did not
//              converge
// Mode 'O' (overwrite x with U) is Unimplemented, as in jaxlib. JAX aliases
// x_out to x.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

enum class Algorithm { kDivideAndConquer, kQr };

template <ffi::DataType dtype, Algorithm algorithm>
absl::Status Svd(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                 ffi::ResultBuffer<ffi::ToReal(dtype)> s, ffi::ResultBuffer<dtype> u,
                 ffi::ResultBuffer<dtype> vt, ffi::ResultBuffer<ffi::S32> info, SvdMode mode) {
  using T = Native<dtype>;
  using R = Real<dtype>;
  AXLE_RETURN_IF_ERROR(CheckEnum("mode", mode, "ASON"));
  if (mode == SvdMode::kOverwrite) {
    return absl::UnimplementedError("attribute 'mode' = 'O' (overwrite x with U) is not supported");
  }
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int k = std::min(m.rows, m.cols);
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (s)", s->dimensions(), m.Dims({k})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 4 (info)", info->dimensions(), m.batch_dims));
  lapack_int u_cols = m.rows, vt_rows = m.cols;
  if (mode == SvdMode::kReduced) u_cols = vt_rows = k;
  if (mode == SvdMode::kNoUV) {
    // Not referenced: any shape with x's batch dimensions.
    AXLE_ASSIGN_OR_RETURN(MatrixBatch um, SplitMatrices("result 2 (u)", u->dimensions()));
    AXLE_ASSIGN_OR_RETURN(MatrixBatch vm, SplitMatrices("result 3 (vt)", vt->dimensions()));
    AXLE_RETURN_IF_ERROR(CheckDims("result 2 (u)", u->dimensions(), m.Dims({um.rows, um.cols})));
    AXLE_RETURN_IF_ERROR(CheckDims("result 3 (vt)", vt->dimensions(), m.Dims({vm.rows, vm.cols})));
    std::memset(u->untyped_data(), 0, u->size_bytes());
    std::memset(vt->untyped_data(), 0, vt->size_bytes());
  } else {
    AXLE_RETURN_IF_ERROR(CheckDims("result 2 (u)", u->dimensions(), m.Dims({m.rows, u_cols})));
    AXLE_RETURN_IF_ERROR(CheckDims("result 3 (vt)", vt->dimensions(), m.Dims({vt_rows, m.cols})));
  }
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  const char job = static_cast<char>(mode);
  const bool vectors = mode != SvdMode::kNoUV;
  const lapack_int lda = Ld(m.rows), ldu = Ld(m.rows), ldvt = vectors ? Ld(vt_rows) : 1;
  const int64_t u_step = vectors ? int64_t{m.rows} * u_cols : 0;
  const int64_t vt_step = vectors ? int64_t{vt_rows} * m.cols : 0;
  // Real workspaces of the complex routines (LAPACK's documented minimums)
  // and gesdd's integer one.
  const int64_t mn = k, mx = std::max(m.rows, m.cols);
  int64_t lrwork = 1;
  if constexpr (ffi::IsComplexType<dtype>()) {
    if (algorithm == Algorithm::kQr) {
      lrwork = std::max<int64_t>(5 * mn, 1);
    } else if (!vectors) {
      lrwork = std::max<int64_t>(7 * mn, 1);
    } else {
      lrwork = std::max<int64_t>({5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn, 1});
    }
  }
  std::vector<R> rwork(lrwork);
  std::vector<lapack_int> iwork(std::max<int64_t>(8 * mn, 1));
  // A scratch U/V^H for mode 'N' (not referenced, but LAPACK wants a pointer).
  T unused[1] = {};
  T* u_data = vectors ? u->typed_data() : unused;
  T* vt_data = vectors ? vt->typed_data() : unused;

  auto call = [&](T* a, R* s_out, T* u_out, T* vt_out, T* work, lapack_int lwork, lapack_int* i) {
    if constexpr (algorithm == Algorithm::kDivideAndConquer) {
      lapack::Gesdd(job, m.rows, m.cols, a, lda, s_out, u_out, ldu, vt_out, ldvt, work, lwork,
                    rwork.data(), iwork.data(), i);
    } else {
      lapack::Gesvd(job, job, m.rows, m.cols, a, lda, s_out, u_out, ldu, vt_out, ldvt, work, lwork,
                    rwork.data(), i);
    }
  };
  T query = 0;
  lapack_int query_info = 0;
  call(nullptr, nullptr, nullptr, nullptr, &query, -1, &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    call(x_out->typed_data() + b * m.size(), s->typed_data() + b * k, u_data + b * u_step,
         vt_data + b * vt_step, work.data(), lwork, info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype, Algorithm algorithm>
ffi::Error SvdKernel(ffi::Buffer<dtype> x, ffi::ResultBuffer<dtype> x_out,
                     ffi::ResultBuffer<ffi::ToReal(dtype)> s, ffi::ResultBuffer<dtype> u,
                     ffi::ResultBuffer<dtype> vt, ffi::ResultBuffer<ffi::S32> info, SvdMode mode) {
  return ToFfiError(Svd<dtype, algorithm>(x, x_out, s, u, vt, info, mode));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_SVD(name, dtype, algorithm)                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                      \
      name, (::axle::jaxlib::SvdKernel<dtype, ::axle::jaxlib::Algorithm::algorithm>), \
      ::axle::ffi::Ffi::Bind()                                                        \
          .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                                     \
          .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)                                 \
          .Ret<::axle::ffi::Buffer<::axle::ffi::ToReal(dtype)>>(/*s*/)                \
          .Ret<::axle::ffi::Buffer<dtype>>(/*u*/)                                     \
          .Ret<::axle::ffi::Buffer<dtype>>(/*vt*/)                                    \
          .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/)                       \
          .Attr<::axle::jaxlib::SvdMode>("mode"))

AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_sgesdd_ffi, ::axle::ffi::F32, kDivideAndConquer);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_dgesdd_ffi, ::axle::ffi::F64, kDivideAndConquer);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_cgesdd_ffi, ::axle::ffi::C64, kDivideAndConquer);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_zgesdd_ffi, ::axle::ffi::C128, kDivideAndConquer);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_sgesvd_ffi, ::axle::ffi::F32, kQr);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_dgesvd_ffi, ::axle::ffi::F64, kQr);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_cgesvd_ffi, ::axle::ffi::C64, kQr);
AXLE_JAXLIB_DEFINE_SVD(axle_jaxlib_lapack_zgesvd_ffi, ::axle::ffi::C128, kQr);
