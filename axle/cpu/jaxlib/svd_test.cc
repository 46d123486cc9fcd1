//===- svd_test.cc - lapack_{s,d,c,z}gesdd_ffi and lapack_*gesvd_ffi -------===//
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
class SvdTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(SvdTest, Types);

template <typename T>
struct Svd {
  absl::Status status;
  Array<RealOf<T>> s;
  Array<T> u, vt;
  Array<int32_t> info;
};

// `family` ("gesdd" or "gesvd") on a copy of `a` with `mode` ('A', 'S', 'N').
template <typename T>
Svd<T> RunSvd(const std::string& family, const Array<T>& a, char mode) {
  const int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  auto with = [&](std::initializer_list<int64_t> trailing) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), trailing);
    return dims;
  };
  const bool full = mode == 'A';
  Svd<T> svd{absl::OkStatus(), Array<RealOf<T>>(with({k})), Array<T>(with({m, full ? m : k})),
             Array<T>(with({full ? n : k, n})), Array<int32_t>(batch)};
  Array<T> x = a;
  svd.status =
      CallTarget(Target<T>(family), absl::StrCat("{mode = ", int{mode}, " : ui8}"), {x.Buffer()},
                 {x.Buffer(), svd.s.Buffer(), svd.u.Buffer(), svd.vt.Buffer(), svd.info.Buffer()});
  return svd;
}

// U diag(s) V^H = A with orthonormal U, V and s descending, >= 0.
template <typename T>
void ExpectDecomposes(const Array<T>& a, const Svd<T>& svd, double tolerance) {
  const int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  for (int64_t b = 0; b < a.batch(); ++b) {
    EXPECT_EQ(svd.info.data[b], 0);
    CMatrix u = Block(MatrixOf(svd.u, b), m, k);
    CMatrix vt = MatrixOf(svd.vt, b);
    vt.resize(k);
    for (int64_t i = 0; i < k; ++i) {
      const double s = svd.s.data[b * k + i];
      EXPECT_GE(s, 0);
      if (i > 0) {
        EXPECT_LE(s, svd.s.data[b * k + i - 1]);
      }
      for (auto& v : vt[i]) v *= s;
    }
    EXPECT_LE(RelativeError(Multiply(u, vt), MatrixOf(a, b)), tolerance) << "matrix " << b;
    EXPECT_LE(OrthonormalityError(MatrixOf(svd.u, b)), tolerance) << "matrix " << b;
    EXPECT_LE(OrthonormalityError(Adjoint(MatrixOf(svd.vt, b))), tolerance) << "matrix " << b;
  }
}

TYPED_TEST(SvdTest, RandomTallAndWideAllModes) {
  using T = TypeParam;
  for (const std::string family : {"gesdd", "gesvd"}) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 6, 4}, {3, 4, 6}}) {
      SCOPED_TRACE(family);
      const Array<T> a = RandomArray<T>(dims, 81);
      Svd<T> full = RunSvd(family, a, 'A');
      ASSERT_TRUE(full.status.ok()) << full.status;
      ExpectDecomposes(a, full, 50 * Eps<T>());
      Svd<T> reduced = RunSvd(family, a, 'S');
      ASSERT_TRUE(reduced.status.ok()) << reduced.status;
      ExpectDecomposes(a, reduced, 50 * Eps<T>());
      Svd<T> values = RunSvd(family, a, 'N');
      ASSERT_TRUE(values.status.ok()) << values.status;
      for (size_t i = 0; i < values.s.data.size(); ++i) {
        EXPECT_NEAR(values.s.data[i], full.s.data[i], 50 * Eps<T>() * full.s.data[0]);
      }
      for (const T& v : values.u.data) EXPECT_EQ(v, T(0));
    }
  }
}

TYPED_TEST(SvdTest, RankDeficient) {
  using T = TypeParam;
  // A rank-2 6x5 matrix: singular values 3..5 are ~0.
  const Array<T> x = RandomArray<T>({6, 2}, 91);
  const Array<T> y = RandomArray<T>({2, 5}, 92);
  CMatrix product = Multiply(MatrixOf(x, 0), MatrixOf(y, 0));
  Array<T> a({6, 5});
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 5; ++j) a(0, i, j) = FromComplex<T>(product[i][j]);
  }
  for (const std::string family : {"gesdd", "gesvd"}) {
    Svd<T> svd = RunSvd(family, a, 'S');
    ASSERT_TRUE(svd.status.ok()) << svd.status;
    ExpectDecomposes(a, svd, 50 * Eps<T>());
    for (int64_t i = 2; i < 5; ++i) EXPECT_LE(svd.s.data[i], 50 * Eps<T>() * svd.s.data[0]);
  }
}

TEST(SvdErrorTest, BadInputs) {
  Array<double> a = RandomArray<double>({3, 2}, 1);
  Array<double> s({2}), u({3, 3}), vt({2, 2});
  Array<int32_t> info(std::vector<int64_t>{});
  // Mode 'O' is not implemented (as in jaxlib).
  absl::Status status =
      CallTarget("lapack_dgesdd_ffi", "{mode = 79 : ui8}", {a.Buffer()},
                 {a.Buffer(), s.Buffer(), u.Buffer(), vt.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  // Full U of the wrong shape.
  Array<double> u2({3, 2});
  status = CallTarget("lapack_dgesvd_ffi", "{mode = 65 : ui8}", {a.Buffer()},
                      {a.Buffer(), s.Buffer(), u2.Buffer(), vt.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("result 2 (u)"));
  status = CallTarget("lapack_dgesdd_ffi", "{mode = 90 : ui8}", {a.Buffer()},
                      {a.Buffer(), s.Buffer(), u.Buffer(), vt.Buffer(), info.Buffer()});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'mode'"));
}

}  // namespace
}  // namespace axle::jaxlib::testing
