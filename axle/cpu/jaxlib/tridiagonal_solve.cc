//===- tridiagonal_solve.cc - lapack_{s,d,c,z}gtsv_ffi ---------------------===//
//
// Tridiagonal solve (xGTSV: Gaussian elimination with partial pivoting), as
// jaxlib's TridiagonalSolver:
//   operands 0-2: dl, d, du [batch..., m]: the sub-, main and
//              super-diagonal (dl[0] and du[m-1] are not used)
//   operand 3: b [batch..., m, n], column-major
//   results 0-2: dl_out, d_out, du_out [batch..., m]: LAPACK's factors
//   result 3:  b_out [batch..., m, n]: the solution
//   result 4:  info s32[batch...]: 0, or i > 0 when U(i, i) is exactly zero
// JAX aliases each result to its operand.
//
//===----------------------------------------------------------------------===//
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <ffi::DataType dtype>
absl::Status Gtsv(ffi::Buffer<dtype> dl, ffi::Buffer<dtype> d, ffi::Buffer<dtype> du,
                  ffi::Buffer<dtype> b, ffi::ResultBuffer<dtype> dl_out,
                  ffi::ResultBuffer<dtype> d_out, ffi::ResultBuffer<dtype> du_out,
                  ffi::ResultBuffer<dtype> b_out, ffi::ResultBuffer<ffi::S32> info) {
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 3 (b)", b.dimensions()));
  const std::vector<int64_t> diagonal = m.Dims({m.rows});
  AXLE_RETURN_IF_ERROR(CheckDims("operand 0 (dl)", dl.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("operand 1 (d)", d.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("operand 2 (du)", du.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (dl_out)", dl_out->dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (d_out)", d_out->dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (du_out)", du_out->dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(
      CheckDims("result 3 (b_out)", b_out->dimensions(), m.Dims({m.rows, m.cols})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 4 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(dl, dl_out);
  CopyIfDifferent(d, d_out);
  CopyIfDifferent(du, du_out);
  CopyIfDifferent(b, b_out);
  for (int64_t i = 0; i < m.count; ++i) {
    int32_t* info_i = info->typed_data() + i;
    if (m.rows == 0) {
      *info_i = 0;
      continue;
    }
    lapack::Gtsv(m.rows, m.cols, dl_out->typed_data() + i * m.rows + 1,
                 d_out->typed_data() + i * m.rows, du_out->typed_data() + i * m.rows,
                 b_out->typed_data() + i * m.size(), Ld(m.rows), info_i);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GtsvKernel(ffi::Buffer<dtype> dl, ffi::Buffer<dtype> d, ffi::Buffer<dtype> du,
                      ffi::Buffer<dtype> b, ffi::ResultBuffer<dtype> dl_out,
                      ffi::ResultBuffer<dtype> d_out, ffi::ResultBuffer<dtype> du_out,
                      ffi::ResultBuffer<dtype> b_out, ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(Gtsv<dtype>(dl, d, du, b, dl_out, d_out, du_out, b_out, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_GTSV(name, dtype)                                     \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::GtsvKernel<dtype>,         \
                                ::axle::ffi::Ffi::Bind()                         \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*dl*/)     \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*d*/)      \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*du*/)     \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*b*/)      \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*dl_out*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*d_out*/)  \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*du_out*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*b_out*/)  \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_GTSV(axle_jaxlib_lapack_sgtsv_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GTSV(axle_jaxlib_lapack_dgtsv_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GTSV(axle_jaxlib_lapack_cgtsv_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GTSV(axle_jaxlib_lapack_zgtsv_ffi, ::axle::ffi::C128);
