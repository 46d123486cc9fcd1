//===- tridiagonal_solve_test.cc - lapack_{s,d,c,z}gtsv_ffi ----------------===//
#include <complex>

#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class GtsvTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GtsvTest, Types);

// Solves T x = b for a batch of 2 tridiagonal 6x6 systems with 3 right-hand
// sides; system 1 has d[3] = 0 and zero neighbours: singular, info = 4.
TYPED_TEST(GtsvTest, SolvesAndReportsSingular) {
  using T = TypeParam;
  const int64_t m = 6, n = 3;
  Array<T> dl = RandomArray<T>({2, m}, 1), d = RandomArray<T>({2, m}, 2),
           du = RandomArray<T>({2, m}, 3);
  const Array<T> b = RandomArray<T>({2, m, n}, 4);
  // Small pivots: d scaled down, so partial pivoting matters.
  for (T& v : d.data) v = FromComplex<T>(0.1 * std::complex<double>(v));
  d.data[m + 3] = T(0);
  dl.data[m + 3] = T(0);
  du.data[m + 2] = T(0);
  dl.data[m + 4] = T(0);
  du.data[m + 3] = T(0);
  Array<T> dl_out = dl, d_out = d, du_out = du, x = b;
  Array<int32_t> info({2});
  absl::Status status = CallTarget(
      Target<T>("gtsv"), "", {dl_out.Buffer(), d_out.Buffer(), du_out.Buffer(), x.Buffer()},
      {dl_out.Buffer(), d_out.Buffer(), du_out.Buffer(), x.Buffer(), info.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(info.data[0], 0);
  EXPECT_GT(info.data[1], 0);
  CMatrix t = Zeros(m, m);
  for (int64_t i = 0; i < m; ++i) {
    t[i][i] = std::complex<double>(d.data[i]);
    if (i > 0) t[i][i - 1] = std::complex<double>(dl.data[i]);
    if (i + 1 < m) t[i][i + 1] = std::complex<double>(du.data[i]);
  }
  CMatrix solution = MatrixOf(x, 0);
  EXPECT_LE(Norm(Minus(Multiply(t, solution), MatrixOf(b, 0))) / (Norm(t) * Norm(solution)),
            30 * Eps<T>());
}

TEST(GtsvErrorTest, DiagonalsMustMatchB) {
  Array<double> dl({4}), d({5}), du({4});
  Array<double> b({4, 2});
  Array<int32_t> info(std::vector<int64_t>{});
  absl::Status status =
      CallTarget("lapack_dgtsv_ffi", "", {dl.Buffer(), d.Buffer(), du.Buffer(), b.Buffer()},
                 {dl.Buffer(), d.Buffer(), du.Buffer(), b.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 1 (d)"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
