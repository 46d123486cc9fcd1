//===- lapack_test_util.h - Calling jaxlib's LAPACK targets, for tests -----===//
//
// The tests call each target the way a custom call does: through the global
// FfiHandlerRegistry ("lapack_spotrf_ffi" for "Host"), on buffers of
// column-major matrices with the batch dimensions leading, with attributes
// written as backend_config text. They check mathematical properties
// (reconstruction, orthogonality, ordering) with the helpers below, in
// double precision, against tolerances scaled by the type's epsilon.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JAXLIB_LAPACK_TEST_UTIL_H_
#define AXLE_CPU_JAXLIB_LAPACK_TEST_UTIL_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "axle/core/primitive_type.h"
#include "axle/runtime/host_ffi.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {

template <typename T>
struct Scalar;
template <>
struct Scalar<float> {
  using Real = float;
  static constexpr PrimitiveType kType = F32;
  static constexpr char kPrefix = 's';
  static constexpr bool kComplex = false;
};
template <>
struct Scalar<double> {
  using Real = double;
  static constexpr PrimitiveType kType = F64;
  static constexpr char kPrefix = 'd';
  static constexpr bool kComplex = false;
};
template <>
struct Scalar<std::complex<float>> {
  using Real = float;
  static constexpr PrimitiveType kType = C64;
  static constexpr char kPrefix = 'c';
  static constexpr bool kComplex = true;
};
template <>
struct Scalar<std::complex<double>> {
  using Real = double;
  static constexpr PrimitiveType kType = C128;
  static constexpr char kPrefix = 'z';
  static constexpr bool kComplex = true;
};
template <>
struct Scalar<int32_t> {
  using Real = int32_t;
  static constexpr PrimitiveType kType = S32;
  static constexpr char kPrefix = 'i';
  static constexpr bool kComplex = false;
};

template <typename T>
using RealOf = typename Scalar<T>::Real;

template <typename T>
double Eps() {
  return std::numeric_limits<RealOf<T>>::epsilon();
}

// "lapack_" + the type's prefix + `family` + "_ffi": Target<float>("potrf")
// is "lapack_spotrf_ffi"; `complex_family` names the c/z routine when it
// differs (orgqr -> ungqr, syevd -> heevd, sytrd -> hetrd).
template <typename T>
std::string Target(absl::string_view family, absl::string_view complex_family = "") {
  absl::string_view name = Scalar<T>::kComplex && !complex_family.empty() ? complex_family : family;
  return std::string("lapack_") + Scalar<T>::kPrefix + std::string(name) + "_ffi";
}

// A dense array of T with logical dimensions `dims`: for matrices
// [batch..., rows, cols], column-major per matrix, matrices one after another.
template <typename T>
struct Array {
  std::vector<int64_t> dims;
  std::vector<T> data;

  Array() = default;
  explicit Array(std::vector<int64_t> d) : dims(std::move(d)) {
    int64_t n = 1;
    for (int64_t x : dims) n *= x;
    data.assign(n, T());
  }
  int64_t rows() const { return dims[dims.size() - 2]; }
  int64_t cols() const { return dims[dims.size() - 1]; }
  int64_t batch() const {
    int64_t n = 1;
    for (size_t i = 0; i + 2 < dims.size(); ++i) n *= dims[i];
    return n;
  }
  T& operator()(int64_t b, int64_t i, int64_t j) { return data[(b * cols() + j) * rows() + i]; }
  const T& operator()(int64_t b, int64_t i, int64_t j) const {
    return data[(b * cols() + j) * rows() + i];
  }
  FfiBuffer Buffer() {
    FfiBuffer buffer;
    buffer.element_type = Scalar<T>::kType;
    buffer.dimensions = dims;
    buffer.data = data.data();
    return buffer;
  }
};

// One matrix as complex<double>, for the checks.
using CMatrix = std::vector<std::vector<std::complex<double>>>;

template <typename T>
CMatrix MatrixOf(const Array<T>& a, int64_t b) {
  CMatrix m(a.rows(), std::vector<std::complex<double>>(a.cols()));
  for (int64_t i = 0; i < a.rows(); ++i) {
    for (int64_t j = 0; j < a.cols(); ++j) m[i][j] = std::complex<double>(a(b, i, j));
  }
  return m;
}

inline CMatrix Zeros(int64_t rows, int64_t cols) {
  return CMatrix(rows, std::vector<std::complex<double>>(cols));
}
inline CMatrix Identity(int64_t n) {
  CMatrix m = Zeros(n, n);
  for (int64_t i = 0; i < n; ++i) m[i][i] = 1;
  return m;
}
inline int64_t Rows(const CMatrix& m) { return m.size(); }
inline int64_t Cols(const CMatrix& m) { return m.empty() ? 0 : m[0].size(); }

inline CMatrix Multiply(const CMatrix& a, const CMatrix& b) {
  CMatrix c = Zeros(Rows(a), Cols(b));
  for (int64_t i = 0; i < Rows(a); ++i) {
    for (int64_t k = 0; k < Cols(a); ++k) {
      for (int64_t j = 0; j < Cols(b); ++j) c[i][j] += a[i][k] * b[k][j];
    }
  }
  return c;
}
// The conjugate transpose.
inline CMatrix Adjoint(const CMatrix& a) {
  CMatrix t = Zeros(Cols(a), Rows(a));
  for (int64_t i = 0; i < Rows(a); ++i) {
    for (int64_t j = 0; j < Cols(a); ++j) t[j][i] = std::conj(a[i][j]);
  }
  return t;
}
inline CMatrix Transposed(const CMatrix& a) {
  CMatrix t = Zeros(Cols(a), Rows(a));
  for (int64_t i = 0; i < Rows(a); ++i) {
    for (int64_t j = 0; j < Cols(a); ++j) t[j][i] = a[i][j];
  }
  return t;
}
inline double Norm(const CMatrix& a) {
  double s = 0;
  for (const auto& row : a) {
    for (const auto& v : row) s += std::norm(v);
  }
  return std::sqrt(s);
}
inline CMatrix Minus(const CMatrix& a, const CMatrix& b) {
  CMatrix c = a;
  for (int64_t i = 0; i < Rows(a); ++i) {
    for (int64_t j = 0; j < Cols(a); ++j) c[i][j] -= b[i][j];
  }
  return c;
}
// ||a - b|| / max(||b||, tiny): the relative Frobenius distance.
inline double RelativeError(const CMatrix& a, const CMatrix& b) {
  return Norm(Minus(a, b)) / std::max(Norm(b), 1e-300);
}
// Rows [0, r) and columns [0, c) of `a`.
inline CMatrix Block(const CMatrix& a, int64_t r, int64_t c) {
  CMatrix m = Zeros(r, c);
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) m[i][j] = a[i][j];
  }
  return m;
}
// The lower (or upper) triangle of `a`, the rest zero; with `unit`, a unit
// diagonal.
inline CMatrix Triangle(const CMatrix& a, bool lower, bool unit = false) {
  CMatrix t = Zeros(Rows(a), Cols(a));
  for (int64_t i = 0; i < Rows(a); ++i) {
    for (int64_t j = 0; j < Cols(a); ++j) {
      if (i == j) {
        t[i][j] = unit ? 1.0 : a[i][j];
      } else if (lower ? i > j : i < j) {
        t[i][j] = a[i][j];
      }
    }
  }
  return t;
}

// The elementary reflector I - tau v v^H (n x n).
inline CMatrix Reflector(const std::vector<std::complex<double>>& v, std::complex<double> tau) {
  const int64_t n = v.size();
  CMatrix h = Identity(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) h[i][j] -= tau * v[i] * std::conj(v[j]);
  }
  return h;
}
// Whether the columns of `q` are orthonormal: ||Q^H Q - I|| <= tolerance.
inline double OrthonormalityError(const CMatrix& q) {
  return Norm(Minus(Multiply(Adjoint(q), q), Identity(Cols(q))));
}

// Random values (complex ones with both parts random), from a fixed seed.
template <typename T>
T RandomValue(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  if constexpr (Scalar<T>::kComplex) {
    return T(normal(rng), normal(rng));
  } else {
    return static_cast<T>(normal(rng));
  }
}
template <typename T>
Array<T> RandomArray(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  Array<T> a(std::move(dims));
  for (T& v : a.data) v = RandomValue<T>(rng);
  return a;
}
// A batch of Hermitian positive definite matrices G G^H + shift I.
template <typename T>
Array<T> RandomHpd(std::vector<int64_t> dims, uint32_t seed, double shift) {
  Array<T> g = RandomArray<T>(dims, seed);
  Array<T> a(dims);
  const int64_t n = a.rows();
  for (int64_t b = 0; b < a.batch(); ++b) {
    CMatrix m = MatrixOf(g, b);
    CMatrix h = Multiply(m, Adjoint(m));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        std::complex<double> v = h[i][j] + (i == j ? shift : 0.0);
        if constexpr (Scalar<T>::kComplex) {
          a(b, i, j) = T(v);
        } else {
          a(b, i, j) = static_cast<T>(v.real());
        }
      }
    }
  }
  return a;
}
// Writes a complex<double> into a T (the real part for real T).
template <typename T>
T FromComplex(std::complex<double> v) {
  if constexpr (Scalar<T>::kComplex) {
    return T(v);
  } else {
    return static_cast<T>(v.real());
  }
}

// Calls the handler registered for `target` on "Host" with `attributes`
// (backend_config text).
inline absl::Status CallTarget(const std::string& target, absl::string_view attributes,
                               std::vector<FfiBuffer> args, std::vector<FfiBuffer> rets) {
  absl::StatusOr<FfiHandler> handler = FfiHandlerRegistry::Global()->Find(target, "Host");
  if (!handler.ok()) return handler.status();
  absl::StatusOr<FfiAttributes> attrs = ParseFfiAttributes(attributes);
  if (!attrs.ok()) return attrs.status();
  return (*handler)(FfiCallFrame{args, rets, *attrs});
}

}  // namespace axle::jaxlib::testing

#endif  // AXLE_CPU_JAXLIB_LAPACK_TEST_UTIL_H_
