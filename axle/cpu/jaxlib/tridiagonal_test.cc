//===- tridiagonal_test.cc - lapack_{s,d}sytrd_ffi, lapack_{c,z}hetrd_ffi --===//
#include <complex>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

template <typename T>
class SytrdTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(SytrdTest, Types);

TYPED_TEST(SytrdTest, ReconstructsFromReflectorsBothTriangles) {
  using T = TypeParam;
  using R = RealOf<T>;
  const int64_t n = 5;
  // A Hermitian batch: G + G^H.
  const Array<T> g = RandomArray<T>({2, n, n}, 131);
  Array<T> a({2, n, n});
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        a(b, i, j) = FromComplex<T>(std::complex<double>(g(b, i, j)) +
                                    std::conj(std::complex<double>(g(b, j, i))));
      }
    }
  }
  for (char uplo : {'L', 'U'}) {
    SCOPED_TRACE(std::string(1, uplo));
    Array<T> x = a;
    Array<R> d({2, n}), e({2, n - 1});
    Array<T> tau({2, n - 1});
    Array<int32_t> info({2});
    absl::Status status =
        CallTarget(Target<T>("sytrd", "hetrd"), absl::StrCat("{uplo = ", int{uplo}, " : ui8}"),
                   {x.Buffer()}, {x.Buffer(), d.Buffer(), e.Buffer(), tau.Buffer(), info.Buffer()});
    ASSERT_TRUE(status.ok()) << status;
    for (int64_t b = 0; b < 2; ++b) {
      EXPECT_EQ(info.data[b], 0);
      CMatrix stored = MatrixOf(x, b);
      CMatrix t = Zeros(n, n);
      for (int64_t i = 0; i < n; ++i) t[i][i] = d.data[b * n + i];
      for (int64_t i = 0; i + 1 < n; ++i) t[i + 1][i] = t[i][i + 1] = e.data[b * (n - 1) + i];
      CMatrix q = Identity(n);
      if (uplo == 'L') {
        // Q = H(1) ... H(n-1), v[i+1] = 1, v[i+2:] in column i below it.
        for (int64_t i = 0; i + 1 < n; ++i) {
          std::vector<std::complex<double>> v(n);
          v[i + 1] = 1;
          for (int64_t r = i + 2; r < n; ++r) v[r] = stored[r][i];
          q = Multiply(q, Reflector(v, std::complex<double>(tau.data[b * (n - 1) + i])));
        }
      } else {
        // Q = H(n-1) ... H(1), v[i] = 1, v[:i] in column i+1 above it.
        for (int64_t i = n - 2; i >= 0; --i) {
          std::vector<std::complex<double>> v(n);
          v[i] = 1;
          for (int64_t r = 0; r < i; ++r) v[r] = stored[r][i + 1];
          q = Multiply(q, Reflector(v, std::complex<double>(tau.data[b * (n - 1) + i])));
        }
      }
      EXPECT_LE(OrthonormalityError(q), 50 * Eps<T>());
      EXPECT_LE(RelativeError(Multiply(Multiply(q, t), Adjoint(q)), MatrixOf(a, b)), 50 * Eps<T>());
    }
  }
}

TEST(SytrdErrorTest, OffDiagonalShape) {
  Array<float> a({3, 3});
  Array<float> d({3}), e({3}), tau({2});
  Array<int32_t> info(std::vector<int64_t>{});
  absl::Status status =
      CallTarget("lapack_ssytrd_ffi", "{uplo = 76 : ui8}", {a.Buffer()},
                 {a.Buffer(), d.Buffer(), e.Buffer(), tau.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
