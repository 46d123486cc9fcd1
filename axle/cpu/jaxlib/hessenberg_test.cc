//===- hessenberg_test.cc - lapack_{s,d,c,z}gehrd_ffi ----------------------===//
#include <complex>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class GehrdTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GehrdTest, Types);

TYPED_TEST(GehrdTest, ReconstructsFromReflectors) {
  using T = TypeParam;
  const int64_t n = 6;
  const Array<T> a = RandomArray<T>({2, n, n}, 121);
  Array<T> h = a;
  Array<T> tau({2, n - 1});
  Array<int32_t> info({2});
  // As JAX calls it: low = 1, high = n.
  absl::Status status =
      CallTarget(Target<T>("gehrd"), absl::StrCat("{high = ", n, " : i32, low = 1 : i32}"),
                 {h.Buffer()}, {h.Buffer(), tau.Buffer(), info.Buffer()});
  ASSERT_TRUE(status.ok()) << status;
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_EQ(info.data[b], 0);
    CMatrix stored = MatrixOf(h, b);
    // Q = H(1) ... H(n-1); reflector i has v[i+1] = 1 and v[i+2:] below
    // the subdiagonal of column i.
    CMatrix q = Identity(n);
    for (int64_t i = 0; i + 1 < n; ++i) {
      std::vector<std::complex<double>> v(n);
      v[i + 1] = 1;
      for (int64_t r = i + 2; r < n; ++r) v[r] = stored[r][i];
      q = Multiply(q, Reflector(v, std::complex<double>(tau.data[b * (n - 1) + i])));
    }
    CMatrix hessenberg = stored;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j + 1 < i; ++j) hessenberg[i][j] = 0;
    }
    EXPECT_LE(OrthonormalityError(q), 50 * Eps<T>());
    EXPECT_LE(RelativeError(Multiply(Multiply(q, hessenberg), Adjoint(q)), MatrixOf(a, b)),
              50 * Eps<T>());
  }
}

TEST(GehrdErrorTest, BadBoundsAreInvalidArguments) {
  Array<double> a = RandomArray<double>({4, 4}, 1);
  Array<double> tau({3});
  Array<int32_t> info(std::vector<int64_t>{});
  absl::Status status = CallTarget("lapack_dgehrd_ffi", "{high = 5 : i32, low = 1 : i32}",
                                   {a.Buffer()}, {a.Buffer(), tau.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'low'"));
  status = CallTarget("lapack_dgehrd_ffi", "{high = 4 : i32}", {a.Buffer()},
                      {a.Buffer(), tau.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("low"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
