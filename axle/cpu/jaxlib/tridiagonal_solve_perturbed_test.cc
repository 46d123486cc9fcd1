//===- tridiagonal_solve_perturbed_test.cc - tridiagonal_solve_perturbed_ffi ===//
#include <cmath>
#include <complex>

#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class PerturbedSolveTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(PerturbedSolveTest, Types);

template <typename T>
CMatrix Tridiagonal(const Array<T>& dl, const Array<T>& d, const Array<T>& du, int64_t b,
                    int64_t m) {
  CMatrix t = Zeros(m, m);
  for (int64_t i = 0; i < m; ++i) {
    t[i][i] = std::complex<double>(d.data[b * m + i]);
    if (i > 0) t[i][i - 1] = std::complex<double>(dl.data[b * m + i]);
    if (i + 1 < m) t[i][i + 1] = std::complex<double>(du.data[b * m + i]);
  }
  return t;
}

// A regular system (small pivots, so that rows are exchanged) solves as
// gtsv would; one whose d has a zero with zero neighbours (exactly
// singular: gtsv reports info > 0) still gives a finite x; and a 1 x 1
// system with a zero pivot too.
TYPED_TEST(PerturbedSolveTest, SolvesRegularAndSingularSystems) {
  using T = TypeParam;
  const int64_t m = 7, n = 3;
  Array<T> dl = RandomArray<T>({2, m}, 11), d = RandomArray<T>({2, m}, 12),
           du = RandomArray<T>({2, m}, 13);
  for (T& v : d.data) v = FromComplex<T>(0.1 * std::complex<double>(v));
  d.data[m + 3] = T(0);
  dl.data[m + 3] = T(0);
  du.data[m + 2] = T(0);
  dl.data[m + 4] = T(0);
  du.data[m + 3] = T(0);
  Array<T> b = RandomArray<T>({2, m, n}, 14);
  Array<T> x({2, m, n});
  absl::Status status =
      CallTarget("tridiagonal_solve_perturbed_ffi", "",
                 {dl.Buffer(), d.Buffer(), du.Buffer(), b.Buffer()}, {x.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  const CMatrix t = Tridiagonal(dl, d, du, 0, m);
  const CMatrix solution = MatrixOf(x, 0);
  EXPECT_LE(Norm(Minus(Multiply(t, solution), MatrixOf(b, 0))) / (Norm(t) * Norm(solution)),
            30 * Eps<T>());
  for (const T& v : x.data) EXPECT_TRUE(std::isfinite(std::abs(v)));

  Array<T> dl1({1}), d1({1}), du1({1});
  Array<T> b1({1, 1}), x1({1, 1});
  b1.data[0] = T(2);
  status = CallTarget("tridiagonal_solve_perturbed_ffi", "",
                      {dl1.Buffer(), d1.Buffer(), du1.Buffer(), b1.Buffer()}, {x1.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(std::isfinite(std::abs(x1.data[0])));
}

// Inverse iteration, what eigh_tridiagonal uses the target for: T - lambda I
// with lambda an eigenvalue of T is singular; one solve from a random start
// gives a vector whose direction is lambda's eigenvector.
TEST(PerturbedSolveInverseIterationTest, FindsTheEigenvector) {
  const int64_t m = 8;
  // T = tridiag(1, 2, 1): eigenvalues 2 + 2 cos(pi k / (m + 1)), eigenvector
  // j-th entry sin(pi k j / (m + 1)).
  const double pi = std::acos(-1.0);
  const double lambda = 2 + 2 * std::cos(pi * 2 / (m + 1));
  Array<double> dl({m}), d({m}), du({m}), b({m, 1}), x({m, 1});
  for (int64_t i = 0; i < m; ++i) {
    dl.data[i] = i > 0 ? 1.0 : 0.0;
    du.data[i] = i + 1 < m ? 1.0 : 0.0;
    d.data[i] = 2.0 - lambda;
    b.data[i] = 1.0 + 0.1 * static_cast<double>(i);
  }
  absl::Status status =
      CallTarget("tridiagonal_solve_perturbed_ffi", "",
                 {dl.Buffer(), d.Buffer(), du.Buffer(), b.Buffer()}, {x.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  double norm = 0, dot = 0, expected_norm = 0;
  for (int64_t j = 0; j < m; ++j) {
    const double v = std::sin(pi * 2 * static_cast<double>(j + 1) / (m + 1));
    norm += x.data[j] * x.data[j];
    expected_norm += v * v;
    dot += x.data[j] * v;
  }
  EXPECT_NEAR(std::abs(dot) / std::sqrt(norm * expected_norm), 1.0, 1e-9);
}

TEST(PerturbedSolveErrorTest, DtypesAndDiagonalsMustMatch) {
  Array<double> dl({4}), d({5}), du({4});
  Array<double> b({4, 2}), x({4, 2});
  absl::Status status =
      CallTarget("tridiagonal_solve_perturbed_ffi", "",
                 {dl.Buffer(), d.Buffer(), du.Buffer(), b.Buffer()}, {x.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 1 (d)"));
  Array<float> df({4});
  status = CallTarget("tridiagonal_solve_perturbed_ffi", "",
                      {dl.Buffer(), df.Buffer(), du.Buffer(), b.Buffer()}, {x.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("one dtype"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
