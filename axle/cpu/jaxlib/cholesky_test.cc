//===- cholesky_test.cc - lapack_{s,d,c,z}potrf_ffi ------------------------===//
#include <complex>
#include <string>

#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

using ::testing::HasSubstr;

template <typename T>
class PotrfTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(PotrfTest, Types);

// Runs potrf on `a` in place (x_out aliases x, as JAX lowers it).
template <typename T>
absl::Status Potrf(Array<T>& a, char uplo, Array<int32_t>& info) {
  return CallTarget(Target<T>("potrf"), "{uplo = " + std::to_string(int{uplo}) + " : ui8}",
                    {a.Buffer()}, {a.Buffer(), info.Buffer()});
}

// `factor`'s `uplo` triangle F reconstructs `a` as F F^H (lower) or F^H F.
template <typename T>
void ExpectReconstructs(const Array<T>& a, const Array<T>& factor, char uplo, double tolerance) {
  for (int64_t b = 0; b < a.batch(); ++b) {
    CMatrix f = Triangle(MatrixOf(factor, b), uplo == 'L');
    CMatrix product = uplo == 'L' ? Multiply(f, Adjoint(f)) : Multiply(Adjoint(f), f);
    EXPECT_LE(RelativeError(product, MatrixOf(a, b)), tolerance) << "matrix " << b;
  }
}

TYPED_TEST(PotrfTest, RandomBatchLowerAndUpper) {
  using T = TypeParam;
  for (char uplo : {'L', 'U'}) {
    const Array<T> a = RandomHpd<T>({2, 3, 6, 6}, 7, 1.0);
    Array<T> factor = a;
    Array<int32_t> info({2, 3});
    ASSERT_TRUE(Potrf(factor, uplo, info).ok());
    for (int32_t i : info.data) EXPECT_EQ(i, 0);
    ExpectReconstructs(a, factor, uplo, 50 * Eps<T>());
    // The other triangle keeps the input's values.
    for (int64_t b = 0; b < a.batch(); ++b) {
      EXPECT_EQ(factor(b, uplo == 'L' ? 0 : 5, uplo == 'L' ? 5 : 0),
                a(b, uplo == 'L' ? 0 : 5, uplo == 'L' ? 5 : 0));
    }
  }
}

TYPED_TEST(PotrfTest, IllConditionedHilbert) {
  using T = TypeParam;
  // The 5x5 Hilbert matrix (condition number ~5e5): factored with a small
  // backward error even so.
  Array<T> a({5, 5});
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 5; ++j) a(0, i, j) = FromComplex<T>(1.0 / (i + j + 1));
  }
  Array<T> factor = a;
  Array<int32_t> info(std::vector<int64_t>{});
  ASSERT_TRUE(Potrf(factor, 'L', info).ok());
  EXPECT_EQ(info.data[0], 0);
  ExpectReconstructs(a, factor, 'L', 50 * Eps<T>());
}

TYPED_TEST(PotrfTest, NotPositiveDefiniteReportsInfo) {
  using T = TypeParam;
  // Matrix 0 is the identity; matrix 1 has a negative third pivot, so its
  // leading minor of order 3 is not positive definite: info = 3 (LAPACK's).
  Array<T> a({2, 4, 4});
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 4; ++i) a(b, i, i) = FromComplex<T>(1.0);
  }
  a(1, 2, 2) = FromComplex<T>(-1.0);
  Array<int32_t> info({2});
  ASSERT_TRUE(Potrf(a, 'L', info).ok());
  EXPECT_EQ(info.data[0], 0);
  EXPECT_EQ(info.data[1], 3);
}

TYPED_TEST(PotrfTest, SeparateOutputAndEmptyMatrices) {
  using T = TypeParam;
  const Array<T> a = RandomHpd<T>({3, 3}, 11, 2.0);
  Array<T> x = a;
  Array<T> out({3, 3});
  Array<int32_t> info(std::vector<int64_t>{});
  ASSERT_TRUE(CallTarget(Target<T>("potrf"), "{uplo = 85 : ui8}", {x.Buffer()},
                         {out.Buffer(), info.Buffer()})
                  .ok());
  EXPECT_EQ(x.data, a.data);  // the input is not written
  EXPECT_EQ(info.data[0], 0);
  ExpectReconstructs(a, out, 'U', 50 * Eps<T>());

  Array<T> empty({4, 0, 0});
  Array<int32_t> empty_info({4});
  ASSERT_TRUE(Potrf(empty, 'L', empty_info).ok());
  for (int32_t i : empty_info.data) EXPECT_EQ(i, 0);
}

TEST(PotrfErrorTest, BadInputsAreInvalidArguments) {
  Array<float> a = RandomHpd<float>({3, 3}, 1, 1.0);
  Array<int32_t> info(std::vector<int64_t>{});
  // Wrong dtype: an f64 buffer for spotrf.
  Array<double> d({3, 3});
  absl::Status status = CallTarget("lapack_spotrf_ffi", "{uplo = 76 : ui8}", {d.Buffer()},
                                   {d.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  // Not square.
  Array<float> wide({3, 4});
  status = CallTarget("lapack_spotrf_ffi", "{uplo = 76 : ui8}", {wide.Buffer()},
                      {wide.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 0 (x)"));
  // Rank 1.
  Array<float> vector({3});
  status = CallTarget("lapack_spotrf_ffi", "{uplo = 76 : ui8}", {vector.Buffer()},
                      {vector.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 0 (x)"));
  // uplo must be 'L' or 'U'.
  status = CallTarget("lapack_spotrf_ffi", "{uplo = 88 : ui8}", {a.Buffer()},
                      {a.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'uplo'"));
  // Missing attribute.
  status = CallTarget("lapack_spotrf_ffi", "{}", {a.Buffer()}, {a.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("uplo"));
  // info of the wrong shape.
  Array<int32_t> bad_info({2});
  status = CallTarget("lapack_spotrf_ffi", "{uplo = 76 : ui8}", {a.Buffer()},
                      {a.Buffer(), bad_info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("result 1 (info)"));
  // Too few results.
  status = CallTarget("lapack_spotrf_ffi", "{uplo = 76 : ui8}", {a.Buffer()}, {a.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
