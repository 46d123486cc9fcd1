//===- eigh_test.cc - lapack_{s,d}syevd_ffi, lapack_{c,z}heevd_ffi ---------===//
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
class SyevdTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(SyevdTest, Types);

template <typename T>
struct Eigh {
  absl::Status status;
  Array<T> vectors;
  Array<RealOf<T>> values;
  Array<int32_t> info;
};

template <typename T>
Eigh<T> Syevd(const Array<T>& a, char uplo, char mode) {
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  std::vector<int64_t> value_dims = batch;
  value_dims.push_back(a.rows());
  Eigh<T> result{absl::OkStatus(), a, Array<RealOf<T>>(value_dims), Array<int32_t>(batch)};
  result.status =
      CallTarget(Target<T>("syevd", "heevd"),
                 absl::StrCat("{mode = ", int{mode}, " : ui8, uplo = ", int{uplo}, " : ui8}"),
                 {result.vectors.Buffer()},
                 {result.vectors.Buffer(), result.values.Buffer(), result.info.Buffer()});
  return result;
}

// A V = V diag(w), V^H V = I, w ascending, for every matrix of `a`.
template <typename T>
void ExpectDecomposes(const Array<T>& a, const Eigh<T>& eigh, double tolerance) {
  const int64_t n = a.rows();
  for (int64_t b = 0; b < a.batch(); ++b) {
    EXPECT_EQ(eigh.info.data[b], 0);
    CMatrix v = MatrixOf(eigh.vectors, b);
    CMatrix vw = v;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) vw[i][j] *= eigh.values.data[b * n + j];
      if (i > 0) {
        EXPECT_LE(eigh.values.data[b * n + i - 1], eigh.values.data[b * n + i]);
      }
    }
    CMatrix am = MatrixOf(a, b);
    EXPECT_LE(Norm(Minus(Multiply(am, v), vw)) / Norm(am), tolerance) << "matrix " << b;
    EXPECT_LE(OrthonormalityError(v), tolerance) << "matrix " << b;
  }
}

template <typename T>
Array<T> RandomHermitian(std::vector<int64_t> dims, uint32_t seed) {
  Array<T> g = RandomArray<T>(dims, seed);
  Array<T> a(dims);
  for (int64_t b = 0; b < a.batch(); ++b) {
    for (int64_t i = 0; i < a.rows(); ++i) {
      for (int64_t j = 0; j < a.cols(); ++j) {
        a(b, i, j) = FromComplex<T>(std::complex<double>(g(b, i, j)) +
                                    std::conj(std::complex<double>(g(b, j, i))));
      }
    }
  }
  return a;
}

TYPED_TEST(SyevdTest, RandomHermitianBatchBothTriangles) {
  using T = TypeParam;
  const Array<T> a = RandomHermitian<T>({2, 3, 6, 6}, 61);
  for (char uplo : {'L', 'U'}) {
    // Only the `uplo` triangle may be read: poison the other one.
    Array<T> input = a;
    for (int64_t b = 0; b < a.batch(); ++b) {
      for (int64_t i = 0; i < 6; ++i) {
        for (int64_t j = 0; j < 6; ++j) {
          if (uplo == 'L' ? i < j : i > j) {
            input(b, i, j) = FromComplex<T>(std::numeric_limits<double>::quiet_NaN());
          }
        }
      }
    }
    Eigh<T> eigh = Syevd(input, uplo, 'V');
    ASSERT_TRUE(eigh.status.ok()) << eigh.status;
    ExpectDecomposes(a, eigh, 50 * Eps<T>());
    // Eigenvalues alone agree.
    Eigh<T> values = Syevd(input, uplo, 'N');
    ASSERT_TRUE(values.status.ok()) << values.status;
    for (size_t i = 0; i < values.values.data.size(); ++i) {
      EXPECT_NEAR(values.values.data[i], eigh.values.data[i], 50 * Eps<T>() * 12);
    }
  }
}

TYPED_TEST(SyevdTest, ClusteredAndTinyEigenvalues) {
  using T = TypeParam;
  // Q diag(1, 1, 1, 1e-6, 0) Q^H with Q unitary from a Householder
  // reflector: repeated and nearly zero eigenvalues.
  const Array<T> u = RandomArray<T>({5, 1}, 71);
  std::vector<std::complex<double>> v(5);
  double norm = 0;
  for (int64_t i = 0; i < 5; ++i) norm += std::norm(std::complex<double>(u(0, i, 0)));
  for (int64_t i = 0; i < 5; ++i) v[i] = std::complex<double>(u(0, i, 0)) / std::sqrt(norm);
  CMatrix q = Reflector(v, 2.0);
  CMatrix d = Zeros(5, 5);
  const double w[5] = {1, 1, 1, 1e-6, 0};
  for (int64_t i = 0; i < 5; ++i) d[i][i] = w[i];
  CMatrix am = Multiply(Multiply(q, d), Adjoint(q));
  Array<T> a({5, 5});
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 5; ++j) a(0, i, j) = FromComplex<T>(am[i][j]);
  }
  Eigh<T> eigh = Syevd(a, 'L', 'V');
  ASSERT_TRUE(eigh.status.ok()) << eigh.status;
  ExpectDecomposes(a, eigh, 50 * Eps<T>());
  EXPECT_NEAR(eigh.values.data[4], 1.0, 50 * Eps<T>());
  EXPECT_NEAR(eigh.values.data[0], 0.0, 50 * Eps<T>());
}

TEST(SyevdErrorTest, BadInputsAreInvalidArguments) {
  Array<float> a = RandomArray<float>({3, 3}, 1);
  Array<float> w({3});
  Array<int32_t> info(std::vector<int64_t>{});
  absl::Status status = CallTarget("lapack_ssyevd_ffi", "{mode = 86 : ui8, uplo = 66 : ui8}",
                                   {a.Buffer()}, {a.Buffer(), w.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'uplo'"));
  status = CallTarget("lapack_ssyevd_ffi", "{mode = 65 : ui8, uplo = 76 : ui8}", {a.Buffer()},
                      {a.Buffer(), w.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'mode'"));
  // cheevd's eigenvalues are real (f32), not c64.
  Array<std::complex<float>> c({3, 3});
  Array<std::complex<float>> cw({3});
  status = CallTarget("lapack_cheevd_ffi", "{mode = 86 : ui8, uplo = 76 : ui8}", {c.Buffer()},
                      {c.Buffer(), cw.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
