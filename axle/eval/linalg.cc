//===- linalg.cc - cholesky and triangular-solve on host literals ----------===//
//
// Both work on batches of matrices in the two minor dimensions and compute
// in complex128 (real types are the special case with zero imaginary parts),
// rounding once to the element type.
//
// cholesky: lower=true gives L with a = L L^H, reading only a's lower
// triangle; lower=false gives U with a = U^H U, reading only the upper
// triangle. The other triangle of the result is zero. When a matrix is not
// positive definite (a pivot's square root is NaN), that whole matrix of the
// result is NaN, as XLA's CholeskyExpander makes it.
//
// triangular-solve: solves op(a) x = b (left_side) or x op(a) = b, op being
// identity, transpose or adjoint, by forward or back substitution. Only the
// `lower` (or upper) triangle of a is read; with unit_diagonal its diagonal
// is taken as 1 and not read. A zero pivot divides by zero (inf/NaN), as
// substitution does.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using kernel_util::CheckArray;
using kernel_util::InvalidArgument;
using kernel_util::NextIndex;
using kernel_util::Product;

bool IsFloatOrComplex(PrimitiveType type) {
  return primitive_util::IsFloatingPointType(type) || primitive_util::IsComplexType(type);
}

// A rank >= 2 float or complex array whose two minor dimensions are
// [rows, cols]; `square` additionally requires rows == cols.
absl::Status CheckMatrices(const Shape& shape, bool square, absl::string_view op,
                           absl::string_view what) {
  if (!shape.IsArray() || shape.rank() < 2 || !IsFloatOrComplex(shape.element_type())) {
    return InvalidArgument(op, ": ", what, " must be a float or complex array of rank >= 2, got ",
                           shape.ToString());
  }
  if (square && shape.dimensions(shape.rank() - 1) != shape.dimensions(shape.rank() - 2)) {
    return InvalidArgument(op, ": ", what, " ", shape.ToString(), " must hold square matrices");
  }
  return absl::OkStatus();
}

// Calls fn(offset) with the flat offset of every matrix of `shape`.
template <typename Fn>
void ForEachMatrix(const Shape& shape, Fn fn) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> batch(shape.dimensions().begin(), shape.dimensions().end() - 2);
  const int64_t matrix_size = shape.dimensions(rank - 1) * shape.dimensions(rank - 2);
  const int64_t count = Product(batch);
  for (int64_t m = 0; m < count; ++m) fn(m * matrix_size);
}

}  // namespace

absl::StatusOr<Literal> EvaluateCholesky(const HloCholeskyInstruction& cholesky, const Literal& a) {
  constexpr absl::string_view op = "cholesky";
  AXLE_RETURN_IF_ERROR(CheckArray(a, op, "a"));
  AXLE_RETURN_IF_ERROR(CheckMatrices(a.shape(), /*square=*/true, op, "a"));
  if (!ShapeUtil::Compatible(cholesky.shape(), a.shape())) {
    return InvalidArgument(op, ": result ", cholesky.shape().ToString(), " must match a ",
                           a.shape().ToString());
  }
  const bool lower = cholesky.cholesky_options().lower();
  const int64_t n = a.shape().dimensions(a.shape().rank() - 1);
  Literal result(cholesky.shape());
  std::vector<complex128> l(n * n);
  ForEachMatrix(a.shape(), [&](int64_t base) {
    // The Hermitian matrix, read from the chosen triangle as lower: A(i, j)
    // for i >= j.
    auto A = [&](int64_t i, int64_t j) {
      return lower ? a.GetAsComplex128(base + i * n + j)
                   : std::conj(a.GetAsComplex128(base + j * n + i));
    };
    std::fill(l.begin(), l.end(), complex128(0));
    bool failed = false;
    for (int64_t j = 0; j < n && !failed; ++j) {
      double pivot = A(j, j).real();
      for (int64_t k = 0; k < j; ++k) pivot -= std::norm(l[j * n + k]);
      double root = std::sqrt(pivot);
      if (std::isnan(root)) {
        failed = true;
        break;
      }
      l[j * n + j] = root;
      for (int64_t i = j + 1; i < n; ++i) {
        complex128 sum = A(i, j);
        for (int64_t k = 0; k < j; ++k) sum -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = sum / root;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        complex128 v;
        if (failed) {
          v = complex128(std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::quiet_NaN());
        } else {
          v = lower ? l[i * n + j] : std::conj(l[j * n + i]);
        }
        result.SetFromComplex128(base + i * n + j, v);
      }
    }
  });
  return result;
}

absl::StatusOr<Literal> EvaluateTriangularSolve(const HloTriangularSolveInstruction& solve,
                                                const Literal& a, const Literal& b) {
  constexpr absl::string_view op = "triangular-solve";
  AXLE_RETURN_IF_ERROR(CheckArray(a, op, "a"));
  AXLE_RETURN_IF_ERROR(CheckArray(b, op, "b"));
  AXLE_RETURN_IF_ERROR(CheckMatrices(a.shape(), /*square=*/true, op, "a"));
  AXLE_RETURN_IF_ERROR(CheckMatrices(b.shape(), /*square=*/false, op, "b"));
  const TriangularSolveOptions& options = solve.triangular_solve_options();
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const int64_t rank = bs.rank();
  if (as.rank() != rank ||
      !std::equal(as.dimensions().begin(), as.dimensions().end() - 2, bs.dimensions().begin())) {
    return InvalidArgument(op, ": a ", as.ToString(), " and b ", bs.ToString(),
                           " must have the same batch dimensions");
  }
  const int64_t m = as.dimensions(rank - 1);
  const int64_t rows = bs.dimensions(rank - 2), cols = bs.dimensions(rank - 1);
  if ((options.left_side() ? rows : cols) != m) {
    return InvalidArgument(op, ": b ", bs.ToString(), " does not fit a ", as.ToString(),
                           options.left_side() ? " on the left" : " on the right");
  }
  if (options.transpose_a() == TriangularSolveOptions::TRANSPOSE_INVALID) {
    return InvalidArgument(op, ": transpose_a is not set");
  }
  if (!ShapeUtil::Compatible(solve.shape(), bs)) {
    return InvalidArgument(op, ": result ", solve.shape().ToString(), " must match b ",
                           bs.ToString());
  }
  const bool transposed = options.transpose_a() != TriangularSolveOptions::NO_TRANSPOSE;
  const bool conjugate = options.transpose_a() == TriangularSolveOptions::ADJOINT;
  // op(a) is lower triangular when a's lower triangle is read untransposed
  // or its upper triangle transposed.
  const bool op_lower = options.lower() != transposed;

  Literal result(solve.shape());
  const int64_t a_size = m * m, b_size = rows * cols;
  std::vector<complex128> t(a_size), x(b_size);
  ForEachMatrix(bs, [&](int64_t b_base) {
    const int64_t a_base = b_base / std::max<int64_t>(b_size, 1) * a_size;
    // t = op(a), restricted to its triangle, unit diagonal applied.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        bool in_triangle = op_lower ? i >= j : i <= j;
        complex128 v = 0;
        if (i == j && options.unit_diagonal()) {
          v = 1;
        } else if (in_triangle) {
          v = transposed ? a.GetAsComplex128(a_base + j * m + i)
                         : a.GetAsComplex128(a_base + i * m + j);
          if (conjugate) v = std::conj(v);
        }
        t[i * m + j] = v;
      }
    }
    for (int64_t i = 0; i < b_size; ++i) x[i] = b.GetAsComplex128(b_base + i);
    if (options.left_side()) {
      // t x = b, column by column.
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t s = 0; s < m; ++s) {
          int64_t i = op_lower ? s : m - 1 - s;
          complex128 sum = x[i * cols + c];
          for (int64_t s2 = 0; s2 < s; ++s2) {
            int64_t j = op_lower ? s2 : m - 1 - s2;
            sum -= t[i * m + j] * x[j * cols + c];
          }
          x[i * cols + c] = sum / t[i * m + i];
        }
      }
    } else {
      // x t = b, row by row: x[r][j] depends on x[r][i] for the i that t's
      // column j reaches (i > j when t is lower, i < j when upper).
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t s = 0; s < m; ++s) {
          int64_t j = op_lower ? m - 1 - s : s;
          complex128 sum = x[r * cols + j];
          for (int64_t s2 = 0; s2 < s; ++s2) {
            int64_t i = op_lower ? m - 1 - s2 : s2;
            sum -= x[r * cols + i] * t[i * m + j];
          }
          x[r * cols + j] = sum / t[j * m + j];
        }
      }
    }
    for (int64_t i = 0; i < b_size; ++i) result.SetFromComplex128(b_base + i, x[i]);
  });
  return result;
}

}  // namespace axle
