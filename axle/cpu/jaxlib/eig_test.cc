//===- eig_test.cc - lapack_{s,d,c,z}geev_ffi ------------------------------===//
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class GeevTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GeevTest, Types);

template <typename T>
using ComplexOf = std::complex<RealOf<T>>;

struct Eig {
  absl::Status status;
  std::vector<std::complex<double>> values;  // per matrix, n each
  CMatrix left, right;                       // of matrix 0
  std::vector<CMatrix> lefts, rights;
  std::vector<int32_t> info;
};

// geev on `a` with compute_left/right as given; real types' (wr, wi) are
// combined into complex eigenvalues.
template <typename T>
Eig Geev(const Array<T>& a, char left, char right) {
  const int64_t n = a.rows();
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  std::vector<int64_t> w_dims = batch;
  w_dims.push_back(n);
  std::vector<int64_t> v_dims = w_dims;
  v_dims.push_back(n);
  Array<T> x = a;
  Array<ComplexOf<T>> vl(v_dims), vr(v_dims);
  Array<int32_t> info(batch);
  const std::string attrs = absl::StrCat("{compute_left = ", int{left},
                                         " : ui8, compute_right = ", int{right}, " : ui8}");
  Eig eig;
  if constexpr (Scalar<T>::kComplex) {
    Array<T> w(w_dims);
    eig.status = CallTarget(Target<T>("geev"), attrs, {x.Buffer()},
                            {w.Buffer(), vl.Buffer(), vr.Buffer(), info.Buffer()});
    for (const T& v : w.data) eig.values.push_back(std::complex<double>(v));
  } else {
    Array<T> wr(w_dims), wi(w_dims);
    eig.status = CallTarget(Target<T>("geev"), attrs, {x.Buffer()},
                            {wr.Buffer(), wi.Buffer(), vl.Buffer(), vr.Buffer(), info.Buffer()});
    for (size_t i = 0; i < wr.data.size(); ++i) eig.values.push_back({wr.data[i], wi.data[i]});
  }
  EXPECT_EQ(x.data, a.data);  // x is not written
  for (int64_t b = 0; b < a.batch(); ++b) {
    eig.lefts.push_back(MatrixOf(vl, b));
    eig.rights.push_back(MatrixOf(vr, b));
  }
  eig.info = info.data;
  return eig;
}

// A V = V diag(w) and U^H A = diag(w) U^H with unit-length columns.
template <typename T>
void ExpectEigenpairs(const Array<T>& a, const Eig& eig, double tolerance) {
  const int64_t n = a.rows();
  for (int64_t b = 0; b < a.batch(); ++b) {
    EXPECT_EQ(eig.info[b], 0);
    CMatrix am = MatrixOf(a, b);
    CMatrix vw = eig.rights[b], uw = Adjoint(eig.lefts[b]);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        vw[i][j] *= eig.values[b * n + j];
        uw[i][j] *= eig.values[b * n + i];
      }
    }
    const double scale = Norm(am);
    EXPECT_LE(Norm(Minus(Multiply(am, eig.rights[b]), vw)) / scale, tolerance) << "matrix " << b;
    EXPECT_LE(Norm(Minus(Multiply(Adjoint(eig.lefts[b]), am), uw)) / scale, tolerance)
        << "matrix " << b;
    for (int64_t j = 0; j < n; ++j) {
      double right = 0, left = 0;
      for (int64_t i = 0; i < n; ++i) {
        right += std::norm(eig.rights[b][i][j]);
        left += std::norm(eig.lefts[b][i][j]);
      }
      EXPECT_NEAR(right, 1.0, tolerance);
      EXPECT_NEAR(left, 1.0, tolerance);
    }
  }
}

TYPED_TEST(GeevTest, RandomBatchLeftAndRight) {
  using T = TypeParam;
  // Random real matrices have complex conjugate pairs: their packed
  // eigenvectors are unpacked.
  const Array<T> a = RandomArray<T>({3, 6, 6}, 101);
  Eig eig = Geev(a, 'V', 'V');
  ASSERT_TRUE(eig.status.ok()) << eig.status;
  ExpectEigenpairs(a, eig, 100 * Eps<T>());
  // Eigenvalues only: the same values, zero vectors.
  Eig values = Geev(a, 'N', 'N');
  ASSERT_TRUE(values.status.ok()) << values.status;
  for (size_t i = 0; i < values.values.size(); ++i) {
    EXPECT_NEAR(std::abs(values.values[i] - eig.values[i]), 0, 100 * Eps<T>() * 6);
  }
  EXPECT_EQ(Norm(values.rights[0]), 0);
}

TYPED_TEST(GeevTest, DefectiveAndNonFinite) {
  using T = TypeParam;
  // Matrix 0: a Jordan-like block (eigenvalue 2, nearly defective): the
  // eigenvalues are still accurate to ~sqrt(eps). Matrix 1 has an infinity:
  // info = -4, as jaxlib reports.
  Array<T> a({2, 3, 3});
  for (int64_t i = 0; i < 3; ++i) {
    a(0, i, i) = FromComplex<T>(2.0);
    if (i + 1 < 3) a(0, i, i + 1) = FromComplex<T>(1.0);
    a(1, i, i) = FromComplex<T>(1.0);
  }
  a(1, 0, 2) = FromComplex<T>(std::numeric_limits<double>::infinity());
  Eig eig = Geev(a, 'N', 'V');
  ASSERT_TRUE(eig.status.ok()) << eig.status;
  EXPECT_EQ(eig.info[0], 0);
  EXPECT_EQ(eig.info[1], -4);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(std::abs(eig.values[i] - 2.0), 0, 10 * std::cbrt(Eps<T>()));
  }
}

TEST(GeevErrorTest, BadInputs) {
  Array<float> a = RandomArray<float>({3, 3}, 1);
  Array<float> wr({3}), wi({3});
  Array<std::complex<float>> vl({3, 3}), vr({3, 3});
  Array<int32_t> info(std::vector<int64_t>{});
  // Real eigenvectors are complex (c64 for sgeev): f32 ones are rejected.
  Array<float> real_vectors({3, 3});
  absl::Status status = CallTarget(
      "lapack_sgeev_ffi", "{compute_left = 86 : ui8, compute_right = 86 : ui8}", {a.Buffer()},
      {wr.Buffer(), wi.Buffer(), real_vectors.Buffer(), vr.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  status =
      CallTarget("lapack_sgeev_ffi", "{compute_left = 86 : ui8, compute_right = 1 : ui8}",
                 {a.Buffer()}, {wr.Buffer(), wi.Buffer(), vl.Buffer(), vr.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'compute_right'"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
