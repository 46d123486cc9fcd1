//===- lu_test.cc - lapack_{s,d,c,z}getrf_ffi ------------------------------===//
#include <complex>
#include <utility>

#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class GetrfTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GetrfTest, Types);

struct Lu {
  absl::Status status;
  Array<int32_t> ipiv, info;
};

// getrf on `a` in place (as JAX aliases it).
template <typename T>
Lu Getrf(Array<T>& a) {
  const int64_t k = std::min(a.rows(), a.cols());
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  std::vector<int64_t> ipiv_dims = batch;
  ipiv_dims.push_back(k);
  Lu lu{absl::OkStatus(), Array<int32_t>(ipiv_dims), Array<int32_t>(batch)};
  lu.status = CallTarget(Target<T>("getrf"), "", {a.Buffer()},
                         {a.Buffer(), lu.ipiv.Buffer(), lu.info.Buffer()});
  return lu;
}

// P a = L U for every matrix of the batch, with 1-based pivots in range.
template <typename T>
void ExpectFactors(const Array<T>& a, const Array<T>& lu, const Array<int32_t>& ipiv,
                   double tolerance) {
  const int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  for (int64_t b = 0; b < a.batch(); ++b) {
    CMatrix pa = MatrixOf(a, b);
    for (int64_t i = 0; i < k; ++i) {
      const int32_t p = ipiv.data[b * k + i];
      ASSERT_GE(p, i + 1);
      ASSERT_LE(p, m);
      std::swap(pa[i], pa[p - 1]);
    }
    CMatrix factors = MatrixOf(lu, b);
    CMatrix l = Zeros(m, k), u = Zeros(k, n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (i > j && j < k) l[i][j] = factors[i][j];
        if (i <= j && i < k) u[i][j] = factors[i][j];
      }
    }
    for (int64_t i = 0; i < k; ++i) l[i][i] = 1;
    EXPECT_LE(RelativeError(Multiply(l, u), pa), tolerance) << "matrix " << b;
  }
}

TYPED_TEST(GetrfTest, RandomTallWideAndSquareBatches) {
  using T = TypeParam;
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{2, 6, 4}, {3, 4, 6}, {2, 2, 5, 5}, {1, 1}}) {
    const Array<T> a = RandomArray<T>(dims, 21);
    Array<T> lu = a;
    Lu result = Getrf(lu);
    ASSERT_TRUE(result.status.ok()) << result.status;
    for (int32_t i : result.info.data) EXPECT_EQ(i, 0);
    ExpectFactors(a, lu, result.ipiv, 30 * Eps<T>());
  }
}

TYPED_TEST(GetrfTest, IllConditionedStillFactorsWithSmallBackwardError) {
  using T = TypeParam;
  // A 6x6 Vandermonde matrix of points 1..6 (condition number ~1e6).
  Array<T> a({6, 6});
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 6; ++j) a(0, i, j) = FromComplex<T>(std::pow(i + 1.0, j));
  }
  Array<T> lu = a;
  Lu result = Getrf(lu);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.info.data[0], 0);
  ExpectFactors(a, lu, result.ipiv, 30 * Eps<T>());
}

TYPED_TEST(GetrfTest, ExactlySingularReportsInfo) {
  using T = TypeParam;
  // Column 1 is zero: U(2, 2) (1-based) is exactly zero, so info = 2.
  Array<T> a = RandomArray<T>({2, 3, 3}, 5);
  for (int64_t i = 0; i < 3; ++i) a(1, i, 1) = T(0);
  const Array<T> original = a;
  Lu result = Getrf(a);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.info.data[0], 0);
  EXPECT_EQ(result.info.data[1], 2);
  ExpectFactors(original, a, result.ipiv, 30 * Eps<T>());
}

TEST(GetrfErrorTest, BadShapesAreInvalidArguments) {
  Array<float> a = RandomArray<float>({4, 3}, 1);
  Array<int32_t> ipiv({4}), info(std::vector<int64_t>{});
  absl::Status status =
      CallTarget("lapack_sgetrf_ffi", "", {a.Buffer()}, {a.Buffer(), ipiv.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("result 1 (ipiv)"));
  Array<int32_t> ipiv3({3});
  Array<float> vector({4});
  status = CallTarget("lapack_sgetrf_ffi", "", {vector.Buffer()},
                      {vector.Buffer(), ipiv3.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 0 (x)"));
  // A float ipiv.
  Array<float> float_ipiv({3});
  status = CallTarget("lapack_sgetrf_ffi", "", {a.Buffer()},
                      {a.Buffer(), float_ipiv.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
