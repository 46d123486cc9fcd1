//===- triangular_solve.cc - lapack_{s,d,c,z}trsm_ffi ----------------------===//
//
// Triangular solve with several right-hand sides (BLAS xTRSM, alpha = 1), as
// jaxlib's TriMatrixEquationSolver:
//   operand 0: x [batch..., k, k], column-major, triangular (k = m when
//              side is 'L', n when 'R')
//   operand 1: y [batch..., m, n], column-major
//   attributes side ('L': op(x) z = y, 'R': z op(x) = y), uplo ('L'/'U':
//              the triangle of x read), trans_x ('N', 'T', 'C': op), diag
//              ('N', or 'U': x's diagonal taken as ones), all ui8
//   result 0:  y_out [batch..., m, n]: the solution z
// JAX aliases y_out to y.
//
//===----------------------------------------------------------------------===//
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Trsm(ffi::Buffer<dtype> x, ffi::Buffer<dtype> y, ffi::ResultBuffer<dtype> y_out,
                  Side side, UpLo uplo, Transpose trans_x, Diag diag) {
  AXLE_RETURN_IF_ERROR(CheckEnum("side", side, "LR"));
  AXLE_RETURN_IF_ERROR(CheckEnum("uplo", uplo, "LU"));
  AXLE_RETURN_IF_ERROR(CheckEnum("trans_x", trans_x, "NTC"));
  AXLE_RETURN_IF_ERROR(CheckEnum("diag", diag, "NU"));
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 1 (y)", y.dimensions()));
  const lapack_int k = side == Side::kLeft ? m.rows : m.cols;
  AXLE_RETURN_IF_ERROR(CheckDims("operand 0 (x)", x.dimensions(), m.Dims({k, k})));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 0 (y_out)", y_out->dimensions(), m.Dims({m.rows, m.cols})));
  CopyIfDifferent(y, y_out);
  const Native<dtype>* a = x.typed_data();
  Native<dtype>* b = y_out->typed_data();
  for (int64_t i = 0; i < m.count; ++i) {
    lapack::Trsm(static_cast<char>(side), static_cast<char>(uplo), static_cast<char>(trans_x),
                 static_cast<char>(diag), m.rows, m.cols, Native<dtype>(1), a + i * int64_t{k} * k,
                 Ld(k), b + i * m.size(), Ld(m.rows));
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error TrsmKernel(ffi::Buffer<dtype> x, ffi::Buffer<dtype> y, ffi::ResultBuffer<dtype> y_out,
                      Side side, UpLo uplo, Transpose trans_x, Diag diag) {
  return ToFfiError(Trsm<dtype>(x, y, y_out, side, uplo, trans_x, diag));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_TRSM(name, dtype)                                    \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::TrsmKernel<dtype>,        \
                                ::axle::ffi::Ffi::Bind()                        \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)     \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*y*/)     \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*y_out*/) \
                                    .Attr<::axle::jaxlib::Side>("side")         \
                                    .Attr<::axle::jaxlib::UpLo>("uplo")         \
                                    .Attr<::axle::jaxlib::Transpose>("trans_x") \
                                    .Attr<::axle::jaxlib::Diag>("diag"))

AXLE_JAXLIB_DEFINE_TRSM(axle_jaxlib_lapack_strsm_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_TRSM(axle_jaxlib_lapack_dtrsm_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_TRSM(axle_jaxlib_lapack_ctrsm_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_TRSM(axle_jaxlib_lapack_ztrsm_ffi, ::axle::ffi::C128);
