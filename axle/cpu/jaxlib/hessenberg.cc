//===- hessenberg.cc - lapack_{s,d,c,z}gehrd_ffi ---------------------------===//
//
// Reduction to upper Hessenberg form x = Q H Q^H (xGEHRD), as jaxlib's
// HessenbergDecomposition:
//   operand 0: x [batch..., n, n], column-major
//   attributes low, high (i32): LAPACK's ILO and IHI, 1-based (JAX passes 1
//              and n); 1 <= low <= high <= n
//   result 0:  x_out [batch..., n, n]: H on and above the first
//              subdiagonal, the Householder vectors of Q below it
//   result 1:  tau [batch..., n - 1]: the Householder scalars
//   result 2:  info s32[batch...]: 0
// JAX aliases x_out to x.
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
absl::Status Gehrd(ffi::Buffer<dtype> x, int32_t low, int32_t high, ffi::ResultBuffer<dtype> x_out,
                   ffi::ResultBuffer<dtype> tau, ffi::ResultBuffer<ffi::S32> info) {
  using T = Native<dtype>;
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitSquareMatrices("operand 0 (x)", x.dimensions()));
  const lapack_int n = m.rows;
  if (low < 1 || low > std::max(n, 1) || high < std::min(low, n) || high > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attributes 'low' = ", low, " and 'high' = ", high, ": need 1 <= low <= high <= n = ", n));
  }
  const lapack_int taus = std::max(n - 1, 0);
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (x_out)", x_out->dimensions(), m.Dims({n, n})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 1 (tau)", tau->dimensions(), m.Dims({taus})));
  AXLE_RETURN_IF_ERROR(CheckDims("result 2 (info)", info->dimensions(), m.batch_dims));
  CopyIfDifferent(x, x_out);
  if (m.count == 0) return absl::OkStatus();
  T query = 0;
  lapack_int query_info = 0;
  lapack::Gehrd(n, low, high, nullptr, Ld(n), nullptr, &query, -1, &query_info);
  AXLE_ASSIGN_OR_RETURN(lapack_int lwork, QueriedSize(query));
  std::vector<T> work(lwork);
  // xGEHRD writes tau(1:ilo-1) and tau(ihi:n-1) as zeros: n - 1 entries in
  // all, through a buffer of at least one.
  std::vector<T> tau_scratch(std::max(n - 1, 1));
  for (int64_t b = 0; b < m.count; ++b) {
    lapack::Gehrd(n, low, high, x_out->typed_data() + b * m.size(), Ld(n), tau_scratch.data(),
                  work.data(), lwork, info->typed_data() + b);
    std::copy(tau_scratch.begin(), tau_scratch.begin() + taus, tau->typed_data() + b * taus);
  }
  return absl::OkStatus();
}

template <ffi::DataType dtype>
ffi::Error GehrdKernel(ffi::Buffer<dtype> x, int32_t low, int32_t high,
                       ffi::ResultBuffer<dtype> x_out, ffi::ResultBuffer<dtype> tau,
                       ffi::ResultBuffer<ffi::S32> info) {
  return ToFfiError(Gehrd<dtype>(x, low, high, x_out, tau, info));
}

}  // namespace
}  // namespace axle::jaxlib

#define AXLE_JAXLIB_DEFINE_GEHRD(name, dtype)                                   \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ::axle::jaxlib::GehrdKernel<dtype>,       \
                                ::axle::ffi::Ffi::Bind()                        \
                                    .Arg<::axle::ffi::Buffer<dtype>>(/*x*/)     \
                                    .Attr<int32_t>("low")                       \
                                    .Attr<int32_t>("high")                      \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*x_out*/) \
                                    .Ret<::axle::ffi::Buffer<dtype>>(/*tau*/)   \
                                    .Ret<::axle::ffi::Buffer<::axle::ffi::S32>>(/*info*/))

AXLE_JAXLIB_DEFINE_GEHRD(axle_jaxlib_lapack_sgehrd_ffi, ::axle::ffi::F32);
AXLE_JAXLIB_DEFINE_GEHRD(axle_jaxlib_lapack_dgehrd_ffi, ::axle::ffi::F64);
AXLE_JAXLIB_DEFINE_GEHRD(axle_jaxlib_lapack_cgehrd_ffi, ::axle::ffi::C64);
AXLE_JAXLIB_DEFINE_GEHRD(axle_jaxlib_lapack_zgehrd_ffi, ::axle::ffi::C128);
