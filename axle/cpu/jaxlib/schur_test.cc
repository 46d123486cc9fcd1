//===- schur_test.cc - lapack_{s,d,c,z}gees_ffi ----------------------------===//
#include <complex>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jaxlib/lapack_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::jaxlib::testing {
namespace {

template <typename T>
class GeesTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GeesTest, Types);

template <typename T>
struct Schur {
  absl::Status status;
  Array<T> t, z;
  std::vector<std::complex<double>> eigenvalues;
  Array<int32_t> selected, info;
};

template <typename T>
Schur<T> Gees(const Array<T>& a, char mode, char sort = 'N') {
  const int64_t n = a.rows();
  std::vector<int64_t> batch(a.dims.begin(), a.dims.end() - 2);
  std::vector<int64_t> w_dims = batch;
  w_dims.push_back(n);
  Schur<T> schur{absl::OkStatus(),     a, Array<T>(a.dims), {}, Array<int32_t>(batch),
                 Array<int32_t>(batch)};
  const std::string attrs =
      absl::StrCat("{mode = ", int{mode}, " : ui8, sort = ", int{sort}, " : ui8}");
  if constexpr (Scalar<T>::kComplex) {
    Array<T> w(w_dims);
    schur.status = CallTarget(Target<T>("gees"), attrs, {schur.t.Buffer()},
                              {schur.t.Buffer(), schur.z.Buffer(), w.Buffer(),
                               schur.selected.Buffer(), schur.info.Buffer()});
    for (const T& v : w.data) schur.eigenvalues.push_back(std::complex<double>(v));
  } else {
    Array<T> wr(w_dims), wi(w_dims);
    schur.status = CallTarget(Target<T>("gees"), attrs, {schur.t.Buffer()},
                              {schur.t.Buffer(), schur.z.Buffer(), wr.Buffer(), wi.Buffer(),
                               schur.selected.Buffer(), schur.info.Buffer()});
    for (size_t i = 0; i < wr.data.size(); ++i)
      schur.eigenvalues.push_back({wr.data[i], wi.data[i]});
  }
  return schur;
}

TYPED_TEST(GeesTest, RandomBatchReconstructs) {
  using T = TypeParam;
  const Array<T> a = RandomArray<T>({2, 2, 5, 5}, 111);
  Schur<T> schur = Gees(a, 'V');
  ASSERT_TRUE(schur.status.ok()) << schur.status;
  const double tolerance = 50 * Eps<T>();
  for (int64_t b = 0; b < a.batch(); ++b) {
    EXPECT_EQ(schur.info.data[b], 0);
    EXPECT_EQ(schur.selected.data[b], 0);
    CMatrix t = MatrixOf(schur.t, b), z = MatrixOf(schur.z, b);
    EXPECT_LE(OrthonormalityError(z), tolerance);
    EXPECT_LE(RelativeError(Multiply(Multiply(z, t), Adjoint(z)), MatrixOf(a, b)), tolerance);
    // T is upper triangular (quasi-triangular, 2x2 blocks, for real types),
    // and the eigenvalues of its diagonal (blocks) are the ones reported.
    for (int64_t i = 0; i < 5; ++i) {
      for (int64_t j = 0; j + (Scalar<T>::kComplex ? 0 : 1) < i; ++j) EXPECT_EQ(t[i][j], 0.0);
      if (Scalar<T>::kComplex || schur.eigenvalues[b * 5 + i].imag() == 0) {
        EXPECT_NEAR(std::abs(schur.eigenvalues[b * 5 + i] - t[i][i]), 0, tolerance * Norm(t));
      }
    }
  }
  // Without Schur vectors: the same T, a zero Z.
  Schur<T> t_only = Gees(a, 'N');
  ASSERT_TRUE(t_only.status.ok()) << t_only.status;
  EXPECT_EQ(Norm(MatrixOf(t_only.z, 0)), 0);
  EXPECT_LE(RelativeError(MatrixOf(t_only.t, 0), MatrixOf(schur.t, 0)), tolerance);
}

TYPED_TEST(GeesTest, SortingIsUnimplemented) {
  const Array<TypeParam> a = RandomArray<TypeParam>({3, 3}, 1);
  EXPECT_EQ(Gees(a, 'V', 'S').status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Gees(a, 'X').status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::jaxlib::testing
