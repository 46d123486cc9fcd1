//===- triangular_solve_test.cc - lapack_{s,d,c,z}trsm_ffi -----------------===//
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
class TrsmTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(TrsmTest, Types);

std::string Attributes(char side, char uplo, char trans, char diag) {
  return absl::StrCat("{diag = ", int{diag}, " : ui8, side = ", int{side},
                      " : ui8, trans_x = ", int{trans}, " : ui8, uplo = ", int{uplo}, " : ui8}");
}

// op(t) as `trans` says.
CMatrix Op(const CMatrix& t, char trans) {
  if (trans == 'N') return t;
  return trans == 'T' ? Transposed(t) : Adjoint(t);
}

// Solves with every side, uplo, trans and diag on a batch of 2 and checks
// the residual op(x) z = y (or z op(x) = y) relative to ||x|| ||z||.
// `diagonal(i)` is the diagonal of the triangular matrices.
template <typename T>
void ExpectSolves(double (*diagonal)(int64_t), double tolerance) {
  const int64_t m = 5, n = 3;
  for (char side : {'L', 'R'}) {
    const int64_t k = side == 'L' ? m : n;
    for (char uplo : {'L', 'U'}) {
      for (char trans : {'N', 'T', 'C'}) {
        for (char diag : {'N', 'U'}) {
          SCOPED_TRACE(absl::StrCat("side ", std::string(1, side), " uplo ", std::string(1, uplo),
                                    " trans ", std::string(1, trans), " diag ",
                                    std::string(1, diag)));
          Array<T> x = RandomArray<T>({2, k, k}, 3);
          for (int64_t b = 0; b < 2; ++b) {
            for (int64_t i = 0; i < k; ++i) x(b, i, i) = FromComplex<T>(diagonal(i));
          }
          const Array<T> y = RandomArray<T>({2, m, n}, 4);
          Array<T> z = y;
          ASSERT_TRUE(CallTarget(Target<T>("trsm"), Attributes(side, uplo, trans, diag),
                                 {x.Buffer(), z.Buffer()}, {z.Buffer()})
                          .ok());
          for (int64_t b = 0; b < 2; ++b) {
            CMatrix t = Op(Triangle(MatrixOf(x, b), uplo == 'L', diag == 'U'), trans);
            CMatrix solution = MatrixOf(z, b);
            CMatrix product = side == 'L' ? Multiply(t, solution) : Multiply(solution, t);
            const double residual =
                Norm(Minus(product, MatrixOf(y, b))) / (Norm(t) * Norm(solution));
            EXPECT_LE(residual, tolerance) << "matrix " << b;
          }
        }
      }
    }
  }
}

TYPED_TEST(TrsmTest, RandomWellConditioned) {
  ExpectSolves<TypeParam>([](int64_t i) { return 4.0 + i; }, 20 * Eps<TypeParam>());
}

TYPED_TEST(TrsmTest, IllConditionedDiagonal) {
  // Diagonal entries from 1 down to 1e-4 (condition number >= 1e4).
  ExpectSolves<TypeParam>([](int64_t i) { return std::pow(10.0, -static_cast<double>(i)); },
                          20 * Eps<TypeParam>());
}

TEST(TrsmErrorTest, BadInputsAreInvalidArguments) {
  Array<float> x = RandomArray<float>({4, 4}, 1);
  Array<float> y = RandomArray<float>({4, 2}, 2);
  // x must be k x k with k = rows of y for side 'L'.
  Array<float> x3 = RandomArray<float>({3, 3}, 1);
  absl::Status status = CallTarget("lapack_strsm_ffi", Attributes('L', 'L', 'N', 'N'),
                                   {x3.Buffer(), y.Buffer()}, {y.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("operand 0 (x)"));
  // trans_x must be N, T or C.
  status = CallTarget("lapack_strsm_ffi", Attributes('L', 'L', 'X', 'N'), {x.Buffer(), y.Buffer()},
                      {y.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'trans_x'"));
  // The result must have y's shape.
  Array<float> out({2, 4});
  status = CallTarget("lapack_strsm_ffi", Attributes('L', 'L', 'N', 'N'), {x.Buffer(), y.Buffer()},
                      {out.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("result 0 (y_out)"));
  // A c64 operand for strsm.
  Array<std::complex<float>> c({4, 4});
  status = CallTarget("lapack_strsm_ffi", Attributes('L', 'L', 'N', 'N'), {c.Buffer(), y.Buffer()},
                      {y.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
