//===- qr_test.cc - lapack_*geqrf_ffi and lapack_{s,d}orgqr/{c,z}ungqr_ffi -===//
#include <complex>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class QrTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(QrTest, Types);

// geqrf then orgqr, as jnp.linalg.qr(mode="reduced") lowers: checks Q R = A,
// Q^H Q = I and R upper triangular for every matrix of `a`.
template <typename T>
void ExpectReducedQr(const Array<T>& a, double tolerance) {
  const int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  std::vector<int64_t> tau_dims = batch;
  tau_dims.push_back(k);
  Array<T> r = a;
  Array<T> tau(tau_dims);
  ASSERT_TRUE(CallTarget(Target<T>("geqrf"), "", {r.Buffer()}, {r.Buffer(), tau.Buffer()}).ok());

  // Q is m x k: the first k columns of the reflectors (orgqr needs m >= n).
  std::vector<int64_t> q_dims = batch;
  q_dims.push_back(m);
  q_dims.push_back(k);
  Array<T> q(q_dims);
  for (int64_t b = 0; b < a.batch(); ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) q(b, i, j) = r(b, i, j);
    }
  }
  absl::Status status =
      CallTarget(Target<T>("orgqr", "ungqr"), "", {q.Buffer(), tau.Buffer()}, {q.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  for (int64_t b = 0; b < a.batch(); ++b) {
    CMatrix qm = MatrixOf(q, b);
    CMatrix rm = Block(Triangle(MatrixOf(r, b), /*lower=*/false), k, n);
    EXPECT_LE(RelativeError(Multiply(qm, rm), MatrixOf(a, b)), tolerance) << "matrix " << b;
    EXPECT_LE(OrthonormalityError(qm), tolerance) << "matrix " << b;
  }
}

TYPED_TEST(QrTest, RandomTallWideAndSquareBatches) {
  using T = TypeParam;
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{2, 6, 4}, {3, 4, 6}, {2, 2, 5, 5}, {3, 1}}) {
    ExpectReducedQr(RandomArray<T>(dims, 31), 30 * Eps<T>());
  }
}

TYPED_TEST(QrTest, NearlyDependentColumns) {
  using T = TypeParam;
  // Column 2 is column 0 plus 1e-5 times noise: R(2, 2) is tiny, Q stays
  // orthonormal and Q R = A.
  Array<T> a = RandomArray<T>({6, 3}, 41);
  const Array<T> noise = RandomArray<T>({6, 1}, 42);
  for (int64_t i = 0; i < 6; ++i) {
    a(0, i, 2) = a(0, i, 0) + FromComplex<T>(1e-5 * std::complex<double>(noise(0, i, 0)));
  }
  ExpectReducedQr(a, 30 * Eps<T>());
}

TYPED_TEST(QrTest, FullQOfATallMatrix) {
  using T = TypeParam;
  // jnp.linalg.qr(mode="complete") on 5x2: orgqr on the reflectors padded
  // to 5x5 with 2 taus gives a unitary 5x5 Q whose first 2 columns span A.
  const Array<T> a = RandomArray<T>({5, 2}, 51);
  Array<T> r = a;
  Array<T> tau({2});
  ASSERT_TRUE(CallTarget(Target<T>("geqrf"), "", {r.Buffer()}, {r.Buffer(), tau.Buffer()}).ok());
  Array<T> q({5, 5});
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 2; ++j) q(0, i, j) = r(0, i, j);
  }
  ASSERT_TRUE(
      CallTarget(Target<T>("orgqr", "ungqr"), "", {q.Buffer(), tau.Buffer()}, {q.Buffer()}).ok());
  CMatrix qm = MatrixOf(q, 0);
  EXPECT_LE(OrthonormalityError(qm), 30 * Eps<T>());
  CMatrix rm = Block(Triangle(MatrixOf(r, 0), false), 5, 2);
  for (int64_t i = 2; i < 5; ++i) rm[i] = std::vector<std::complex<double>>(2);
  EXPECT_LE(RelativeError(Multiply(qm, rm), MatrixOf(a, 0)), 30 * Eps<T>());
}

// Q = H(1) ... H(k) from geqrf's reflectors in the columns of `r` (m x n).
template <typename T>
CMatrix QFromReflectors(const Array<T>& r, const Array<T>& tau, int64_t b, int64_t k) {
  const int64_t m = r.rows();
  CMatrix q = Identity(m);
  for (int64_t i = 0; i < k; ++i) {
    std::vector<std::complex<double>> v(m);
    v[i] = 1;
    for (int64_t j = i + 1; j < m; ++j) v[j] = std::complex<double>(r(b, j, i));
    q = Multiply(q, Reflector(v, std::complex<double>(tau.data[b * k + i])));
  }
  return q;
}

TYPED_TEST(QrTest, OrmqrAppliesQFromEitherSide) {
  using T = TypeParam;
  const Array<T> a = RandomArray<T>({2, 5, 3}, 61);
  Array<T> r = a;
  Array<T> tau({2, 3});
  ASSERT_TRUE(CallTarget(Target<T>("geqrf"), "", {r.Buffer()}, {r.Buffer(), tau.Buffer()}).ok());
  for (bool left : {true, false}) {
    for (bool transpose : {false, true}) {
      SCOPED_TRACE(absl::StrCat("left ", left, " transpose ", transpose));
      const Array<T> c =
          RandomArray<T>(left ? std::vector<int64_t>{2, 5, 4} : std::vector<int64_t>{2, 4, 5}, 62);
      Array<T> out = c;
      absl::Status status =
          CallTarget(Target<T>("ormqr", "unmqr"),
                     absl::StrCat("{left = ", left ? "true" : "false",
                                  ", transpose = ", transpose ? "true" : "false", "}"),
                     {r.Buffer(), tau.Buffer(), out.Buffer()}, {out.Buffer()});
      ASSERT_TRUE(status.ok()) << status;
      for (int64_t b = 0; b < 2; ++b) {
        CMatrix q = QFromReflectors(r, tau, b, 3);
        if (transpose) q = Scalar<T>::kComplex ? Adjoint(q) : Transposed(q);
        CMatrix expected = left ? Multiply(q, MatrixOf(c, b)) : Multiply(MatrixOf(c, b), q);
        EXPECT_LE(RelativeError(MatrixOf(out, b), expected), 30 * Eps<T>()) << "matrix " << b;
      }
    }
  }
}

TYPED_TEST(QrTest, Geqp3PivotsColumnsByNorm) {
  using T = TypeParam;
  // Column 1 is the largest; jpvt[3] = 1 pins column 3 to the front.
  Array<T> a = RandomArray<T>({2, 6, 4}, 71);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 6; ++i)
      a(b, i, 1) = FromComplex<T>(10.0 * std::complex<double>(a(b, i, 1)));
  }
  Array<T> r = a;
  Array<int32_t> jpvt({2, 4});
  jpvt.data[4 + 3] = 1;
  Array<T> tau({2, 4});
  absl::Status status = CallTarget(Target<T>("geqp3"), "", {r.Buffer(), jpvt.Buffer()},
                                   {r.Buffer(), jpvt.Buffer(), tau.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(jpvt.data[0], 2);  // 1-based: column 1 first
  EXPECT_EQ(jpvt.data[4], 4);  // the pinned column 3
  for (int64_t b = 0; b < 2; ++b) {
    CMatrix ap = Zeros(6, 4);
    for (int64_t j = 0; j < 4; ++j) {
      const int32_t p = jpvt.data[b * 4 + j];
      ASSERT_GE(p, 1);
      ASSERT_LE(p, 4);
      for (int64_t i = 0; i < 6; ++i) ap[i][j] = std::complex<double>(a(b, i, p - 1));
    }
    CMatrix q = QFromReflectors(r, tau, b, 4);
    CMatrix rm = Triangle(MatrixOf(r, b), /*lower=*/false);
    EXPECT_LE(RelativeError(Multiply(q, rm), ap), 30 * Eps<T>());
    if (b == 0) {
      for (int64_t i = 1; i < 4; ++i)
        EXPECT_LE(std::abs(rm[i][i]), std::abs(rm[i - 1][i - 1]) * (1 + 1e-3));
    }
  }
}

TEST(QrErrorTest, BadShapesAreInvalidArguments) {
  Array<double> x = RandomArray<double>({3, 5}, 1);
  Array<double> tau({3});
  // orgqr needs rows >= columns.
  absl::Status status =
      CallTarget("lapack_dorgqr_ffi", "", {x.Buffer(), tau.Buffer()}, {x.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 1 (tau)"));
  // More reflectors than columns.
  Array<double> tall = RandomArray<double>({5, 2}, 2);
  status = CallTarget("lapack_dorgqr_ffi", "", {tall.Buffer(), tau.Buffer()}, {tall.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  // geqrf's tau must have min(m, n) entries.
  Array<double> tau2({2});
  status = CallTarget("lapack_dgeqrf_ffi", "", {x.Buffer()}, {x.Buffer(), tau2.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("result 1 (tau)"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
