//===- tridiagonal_solve_perturbed.cc - tridiagonal_solve_perturbed_ffi ----===//
//
// jaxlib's tridiagonal solve that tolerates a (numerically) singular
// matrix: `lax.linalg.tridiagonal_solve(..., perturb_singular=True)`, which
// `jax.scipy.linalg.eigh_tridiagonal` runs for its eigenvectors (inverse
// iteration on T - lambda I, singular by construction). Not LAPACK: jaxlib's
// own kernel (jaxlib/tridiagonal_solve_perturbed.h), after LAPACK's xLAGTF
// and xLAGTS: Gaussian elimination with row pivoting, the forward solve
// fused into the factorization, and in the back substitution every pivot
// of magnitude below 1 that would overflow the solution moved away from
// zero by eps * max|U| (doubled until it does not) or scaled up.
//   operands 0-2: dl, d, du [batch..., m] (any dtype of f32, f64, c64, c128,
//                 all alike; dl[0] and du[m-1] are not used)
//   operand 3:    b [batch..., m, n], column-major
//   result 0:     x [batch..., m, n], column-major
// No info output and no aliasing: the result is always finite for finite
// inputs.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"
#include "axle/cpu/jaxlib/lapack_targets.h"

namespace axle::jaxlib {
namespace {

template <typename T>
struct RealOf {
  using type = T;
};
template <typename T>
struct RealOf<std::complex<T>> {
  using type = T;
};

template <typename T>
typename RealOf<T>::type RealPart(T x) {
  return std::real(x);
}

// xLAGTS's guard on `pivot` for the row `row` (n values) it divides: while
// |pivot| < 1 and dividing would overflow, move the pivot by `perturb`
// (doubling it), or scale pivot and row up when the pivot is tiny but the
// row small enough.
template <typename T>
void MaybePerturbPivot(typename RealOf<T>::type perturb, T& pivot, T* row, int64_t n) {
  using R = typename RealOf<T>::type;
  const R one(1);
  const R tiny = std::numeric_limits<R>::min();
  const R small = one / std::numeric_limits<R>::max();
  const R safemin = small < tiny ? tiny : small * (one + std::numeric_limits<R>::epsilon());
  const R bignum = one / safemin;
  R abs_pivot = std::abs(pivot);
  if (abs_pivot >= one) return;
  perturb = std::copysign(std::max(std::abs(perturb), safemin), RealPart(pivot));
  R max_factor = 0;
  for (int64_t j = 0; j < n; ++j) max_factor = std::max(max_factor, R(std::abs(row[j])));
  bool stop = false;
  while (abs_pivot < one && !stop) {
    if (abs_pivot < safemin) {
      if (abs_pivot == R(0) || max_factor * safemin > abs_pivot) {
        pivot += perturb;
        perturb *= R(2);
      } else {
        pivot *= bignum;
        for (int64_t j = 0; j < n; ++j) row[j] *= bignum;
        stop = true;
      }
    } else if (max_factor > abs_pivot * bignum) {
      pivot += perturb;
      perturb *= R(2);
    } else {
      stop = true;
    }
    abs_pivot = std::abs(pivot);
  }
}

// One system: x (column-major [m, n], rows `m` apart column to column) =
// T^-1 rhs. `u` holds 3 * m values, `row` n.
template <typename T>
void SolvePerturbed(int64_t m, int64_t n, const T* dl, const T* d, const T* du, const T* rhs, T* x,
                    T* u_data, T* row) {
  using R = typename RealOf<T>::type;
  if (m == 0) return;
  auto X = [&](int64_t i, int64_t j) -> T& { return x[i + j * m]; };
  auto B = [&](int64_t i, int64_t j) { return rhs[i + j * m]; };
  const R eps = std::numeric_limits<R>::epsilon();
  if (m == 1) {
    T p = d[0];
    for (int64_t j = 0; j < n; ++j) row[j] = B(0, j);
    MaybePerturbPivot(eps * std::abs(p), p, row, n);
    for (int64_t j = 0; j < n; ++j) X(0, j) = row[j] / p;
    return;
  }
  // U's diagonal and two superdiagonals (row exchanges make the second).
  T* u0 = u_data;
  T* u1 = u_data + m;
  T* u2 = u_data + 2 * m;
  std::fill(u_data, u_data + 3 * m, T(0));
  u0[0] = d[0];
  u1[0] = du[0];
  R max_abs_u = std::max(std::abs(u0[0]), std::abs(u1[0]));
  R scale1 = std::abs(u0[0]) + std::abs(u1[0]);
  for (int64_t j = 0; j < n; ++j) X(0, j) = B(0, j);
  for (int64_t k = 0; k + 1 < m; ++k) {
    u0[k + 1] = d[k + 1];
    R scale2 = std::abs(dl[k + 1]) + std::abs(u0[k + 1]);
    if (k < m - 2) scale2 += std::abs(du[k + 1]);
    if (dl[k + 1] == T(0)) {
      scale1 = scale2;
      u1[k + 1] = du[k + 1];
      u2[k] = T(0);
      for (int64_t j = 0; j < n; ++j) X(k + 1, j) = B(k + 1, j);
    } else {
      const R piv1 = u0[k] == T(0) ? R(0) : std::abs(u0[k]) / scale1;
      const R piv2 = std::abs(dl[k + 1]) / scale2;
      if (piv2 <= piv1) {
        scale1 = scale2;
        const T factor = dl[k + 1] / u0[k];
        u0[k + 1] -= factor * u1[k];
        u1[k + 1] = du[k + 1];
        u2[k] = T(0);
        for (int64_t j = 0; j < n; ++j) X(k + 1, j) = B(k + 1, j) - factor * X(k, j);
      } else {
        // Rows k and k + 1 exchanged.
        const T factor = u0[k] / dl[k + 1];
        const T utmp = u1[k];
        u0[k] = dl[k + 1];
        u0[k + 1] = utmp - factor * d[k + 1];
        u1[k] = d[k + 1];
        if (k < m - 2) {
          u2[k] = du[k + 1];
          u1[k + 1] = -factor * du[k + 1];
        }
        for (int64_t j = 0; j < n; ++j) {
          const T xk = X(k, j);
          X(k + 1, j) = xk - factor * B(k + 1, j);
          X(k, j) = B(k + 1, j);
        }
        scale1 = std::abs(u0[k + 1]) + std::abs(u1[k + 1]);
      }
    }
    if (k < m - 2) {
      max_abs_u = std::max({max_abs_u, R(std::abs(u0[k])), R(std::abs(u1[k])), R(std::abs(u2[k]))});
    }
  }
  max_abs_u = std::max(max_abs_u, R(std::abs(u0[m - 1])));
  const R perturb = eps * max_abs_u;
  // Back substitution, U x = z, each row through MaybePerturbPivot.
  for (int64_t k = m - 1; k >= 0; --k) {
    T p = u0[k];
    for (int64_t j = 0; j < n; ++j) {
      T value = X(k, j);
      if (k + 1 < m) value -= u1[k] * X(k + 1, j);
      if (k + 2 < m) value -= u2[k] * X(k + 2, j);
      row[j] = value;
    }
    MaybePerturbPivot(perturb, p, row, n);  // (its sign is the pivot's there)
    const T inverse = T(1) / p;
    for (int64_t j = 0; j < n; ++j) X(k, j) = row[j] * inverse;
  }
}

template <typename T>
void SolveAll(const MatrixBatch& m, const ffi::AnyBuffer& dl, const ffi::AnyBuffer& d,
              const ffi::AnyBuffer& du, const ffi::AnyBuffer& b, ffi::AnyBuffer& x) {
  std::vector<T> u(3 * static_cast<size_t>(m.rows));
  std::vector<T> row(static_cast<size_t>(m.cols));
  const T* dl_data = static_cast<const T*>(dl.untyped_data());
  const T* d_data = static_cast<const T*>(d.untyped_data());
  const T* du_data = static_cast<const T*>(du.untyped_data());
  const T* b_data = static_cast<const T*>(b.untyped_data());
  T* x_data = static_cast<T*>(x.untyped_data());
  for (int64_t i = 0; i < m.count; ++i) {
    SolvePerturbed<T>(m.rows, m.cols, dl_data + i * m.rows, d_data + i * m.rows,
                      du_data + i * m.rows, b_data + i * m.size(), x_data + i * m.size(), u.data(),
                      row.data());
  }
}

absl::Status TridiagonalSolvePerturbed(ffi::AnyBuffer dl, ffi::AnyBuffer d, ffi::AnyBuffer du,
                                       ffi::AnyBuffer b, ffi::AnyBuffer x) {
  const ffi::DataType dtype = d.element_type();
  if (dl.element_type() != dtype || du.element_type() != dtype || b.element_type() != dtype ||
      x.element_type() != dtype) {
    return absl::InvalidArgumentError(
        "tridiagonal_solve_perturbed_ffi: dl, d, du, b and the result must have one dtype");
  }
  AXLE_ASSIGN_OR_RETURN(MatrixBatch m, SplitMatrices("operand 3 (b)", b.dimensions()));
  const std::vector<int64_t> diagonal = m.Dims({m.rows});
  AXLE_RETURN_IF_ERROR(CheckDims("operand 0 (dl)", dl.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("operand 1 (d)", d.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("operand 2 (du)", du.dimensions(), diagonal));
  AXLE_RETURN_IF_ERROR(CheckDims("result 0 (x)", x.dimensions(), m.Dims({m.rows, m.cols})));
  switch (dtype) {
    case ffi::DataType::F32:
      SolveAll<float>(m, dl, d, du, b, x);
      return absl::OkStatus();
    case ffi::DataType::F64:
      SolveAll<double>(m, dl, d, du, b, x);
      return absl::OkStatus();
    case ffi::DataType::C64:
      SolveAll<std::complex<float>>(m, dl, d, du, b, x);
      return absl::OkStatus();
    case ffi::DataType::C128:
      SolveAll<std::complex<double>>(m, dl, d, du, b, x);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("tridiagonal_solve_perturbed_ffi: dtype ",
                                                     static_cast<int>(dtype),
                                                     " is not one of f32, f64, c64, c128"));
  }
}

ffi::Error TridiagonalSolvePerturbedKernel(ffi::AnyBuffer dl, ffi::AnyBuffer d, ffi::AnyBuffer du,
                                           ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> x) {
  return ToFfiError(TridiagonalSolvePerturbed(dl, d, du, b, *x));
}

}  // namespace
}  // namespace axle::jaxlib

XLA_FFI_DEFINE_HANDLER_SYMBOL(axle_jaxlib_tridiagonal_solve_perturbed_ffi,
                              ::axle::jaxlib::TridiagonalSolvePerturbedKernel,
                              ::axle::ffi::Ffi::Bind()
                                  .Arg<::axle::ffi::AnyBuffer>(/*dl*/)
                                  .Arg<::axle::ffi::AnyBuffer>(/*d*/)
                                  .Arg<::axle::ffi::AnyBuffer>(/*du*/)
                                  .Arg<::axle::ffi::AnyBuffer>(/*b*/)
                                  .Ret<::axle::ffi::AnyBuffer>(/*x*/));
