//===- schur.cc - lapack_{s,d,c,z}gees_ffi ---------------------------------===//
//
// Schur decomposition x = Z T Z^H (xGEES), as jaxlib's
// SchurDecomposition{,Complex}:
//   operand 0: x [batch..., n, n], column-major
//   attribute mode (ui8 'V' or 'N'): whether the Schur vectors Z are
//              computed (else result 1 is zero)
//   attribute sort (ui8 'N'): eigenvalue ordering; 'S' is Unimplemented, as
//              in jaxlib (it has no way to pass a selection function)
// f32/f64 results:
//   0: x_out [batch..., n, n]: T, quasi-upper-triangular (2x2 blocks for
//      complex conjugate pairs)
//   1: schur_vectors [batch..., n, n]: Z, orthogonal
//   2: eigvals_real [batch..., n]   3: eigvals_imag [batch..., n]
//   4: selected_eigvals s32[batch...]: LAPACK's SDIM (0 without sorting)
//   5: info s32[batch...]
// c64/c128 results: x_out (upper triangular T), schur_vectors,
// eigvals [batch..., n], selected_eigvals, info.
// JAX aliases x_out to x.
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

// The checks of the attributes, x, x_out and schur_vectors; returns x's batch.
template <ffi::DataType dtype>
absl::StatusOr<MatrixBatch> CheckGees(const ffi::Buffer<dtype>& x, SchurMode mode, SchurSort sort,
                                      ffi::ResultBuffer<dtype>& x_out,
                                      ffi::ResultBuffer<dtype>& schur_vectors) {
  AXLE_RETURN_IF_ERROR(CheckEnum("mode", mode, "NV"));
  AXLE_RETURN_IF_ERROR(CheckEnum("sort", sort, "NS"));
  if (sort != SchurSort::kNoSort) {
    return absl::UnimplementedError(
        "attribute 'sort' = 'S': ordering eigenvalues is not supported");
  }
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({m.rows, m.rows})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 1 (schur_vectors)", schur_vectors->dimensions(), m.Dims({m.rows, m.rows})));
  return m;
}

template <ffi::DataType dtype>
absl::Status GeesReal(ffi::Buffer<dtype> x, SchurMode mode, SchurSort sort,
                      ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<dtype> schur_vectors,
                      ffi::ResultBuffer<dtype> eigvals_real, ffi::ResultBuffer<dtype> eigvals_imag,
                      ffi::ResultBuffer<ffi::S32> selected, ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, CheckGees<dtype>(x, mode, sort, x_out, schur_vectors));
  const lapack_int n = m.rows;
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 2 (eigvals_real)", eigvals_real->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 3 (eigvals_imag)", eigvals_imag->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 4 (selected_eigvals)", selected->dimensions(), m.batch_dims));
  AXLE_RETURN_IF_ERROR(CheckDims("result 5 (info)", info->dimensions(), m.batch_dims));
  std::memset(schur_vectors->untyped_data(), 0, schur_vectors->size_bytes());
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  const char jobvs = static_cast<char>(mode);
  T query = 0;
  lapack_int sdim = 0, query_info = 0;
  lapack::Gees(jobvs, n, nullptr, Ld(n), &sdim, nullptr, nullptr, nullptr, Ld(n), &query, -1,
               &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Gees(jobvs, n, x_out->typed_data() + b * m.size(), Ld(n), selected->typed_data() + b,
                 eigvals_real->typed_data() + b * n, eigvals_imag->typed_data() + b * n,
                 schur_vectors->typed_data() + b * m.size(), Ld(n), work.data(), lwork,
                 info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
absl::Status GeesComplex(ffi::Buffer<dtype> x, SchurMode mode, SchurSort sort,
                         ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<dtype> schur_vectors,
                         ffi::ResultBuffer<dtype> eigvals, ffi::ResultBuffer<ffi::S32> selected,
                         ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  using R = Real<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, CheckGees<dtype>(x, mode, sort, x_out, schur_vectors));
  const lapack_int n = m.rows;
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (eigvals)", eigvals->dimensions(), m.Dims({n})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 3 (selected_eigvals)", selected->dimensions(), m.batch_dims));
  AXLE_RETURN_IF_ERROR(CheckDims("result 4 (info)", info->dimensions(), m.batch_dims));
  std::memset(schur_vectors->untyped_data(), 0, schur_vectors->size_bytes());
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  const char jobvs = static_cast<char>(mode);
  std::vector<R> rwork(std::max<lapack_int>(n, 1));
  T query = 0;
  lapack_int sdim = 0, query_info = 0;
  lapack::Gees(jobvs, n, nullptr, Ld(n), &sdim, nullptr, nullptr, Ld(n), &query, -1, rwork.data(),
               &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Gees(jobvs, n, x_out->typed_data() + b * m.size(), Ld(n), selected->typed_data() + b,
                 eigvals->typed_data() + b * n, schur_vectors->typed_data() + b * m.size(), Ld(n),
                 work.data(), lwork, rwork.data(), info->typed_data() + b);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GeesRealKernel(ffi::Buffer<dtype> x, SchurMode mode, SchurSort sort,
                          ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<dtype> schur_vectors,
                          ffi::ResultBuffer<dtype> eigvals_real,
                          ffi::ResultBuffer<dtype> eigvals_imag,
                          ffi::ResultBuffer<ffi::S32> selected, ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(GeesReal<dtype>(x, mode, sort, x_out, schur_vectors, eigvals_real, eigvals_imag,
                                    selected, info));
}

template <ffi::DataType dtype>
ffi::Error GeesComplexKernel(ffi::Buffer<dtype> x, SchurMode mode, SchurSort sort,
                             ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<dtype> schur_vectors,
                             ffi::ResultBuffer<dtype> eigvals, ffi::ResultBuffer<ffi::S32> selected,
                             ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(
      GeesComplex<dtype>(x, mode, sort, x_out, schur_vectors, eigvals, selected, info));
}

}  // namespace
}  // namespace axle::jaxlib

// The bindings of the real and complex handlers: x, mode and sort, then
// x_out and schur_vectors, the eigenvalues (`EIGVALS`), selected and info.
#define AXLE_JAXLIB_GEES_BINDING(dtype, EIGVALS)                           \
  ::axle::ffi::Ffi::Bind()                                                 \
      .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)                              \
      .Attr<::axle::jaxlib::SchurMode>("mode")                             \
      .Attr<::axle::jaxlib::SchurSort>("sort")                             \
      .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/)                          \
      .Ret<::axle::ffi::Buffer<dtype>>(/*schur_vectors*/)                  \
          EIGVALS.Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*selected*/) \
      .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/)
#define AXLE_JAXLIB_DEFINE_GEES(name, dtype)                                             \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                                                         \
      name, ::axle::jaxlib::GeesRealKernel<dtype>,                                       \
      AXLE_JAXLIB_GEES_BINDING(dtype, .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals_real*/) \
                                          .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals_imag*/)))
#define AXLE_JAXLIB_DEFINE_GEES_COMPLEX(name, dtype)  \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(                      \
      name, ::axle::jaxlib::GeesComplexKernel<dtype>, \
      AXLE_JAXLIB_GEES_BINDING(dtype, .Ret<::axle::ffi::Buffer<dtype>>(/*eigvals*/)))

AXLE_JAXLIB_DEFINE_GEES(axle_jaxlib_lapack_sgees_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEES(axle_jaxlib_lapack_dgees_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEES_COMPLEX(axle_jaxlib_lapack_cgees_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEES_COMPLEX(axle_jaxlib_lapack_zgees_ffi, ::axle::ffi::C128);
