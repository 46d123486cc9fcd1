//===- lapack_programs_test.cc - JAX's LAPACK custom calls, end to end ----===//
//
// HLO that JAX emits for linear algebra, run on both platforms: the real
// program ../shared/jax/cholesky_solve.hlo (AXLE_JAX_DIR) against XLA:CPU's
// answer, and small modules with jaxlib's custom calls, their column-major
// layout constraints and batch dimensions.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/npy.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::axle::testing::RunOn;

std::string JaxDir() {
  if (const char* dir = std::getenv("AXLE_JAX_DIR")) return dir;
  return AXLE_DEFAULT_JAX_DIR;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ||a - b|| / ||b|| over f32 arrays of one shape.
double RelativeL2(const Literal& a, const Literal& b) {
  absl::Span<const float> x = a.data<float>();
  absl::Span<const float> y = b.data<float>();
  EXPECT_EQ(x.size(), y.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    diff += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    norm += double{y[i]} * y[i];
  }
  return std::sqrt(diff / norm);
}

class JaxProgramTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JaxProgramTest, CholeskySolveMatchesXla) {
  const std::string dir = JaxDir();
  const std::string text = ReadFile(dir + "/cholesky_solve.hlo");
  if (text.empty()) GTEST_SKIP() << "no " << dir << "/cholesky_solve.hlo";
  std::vector<Literal> args;
  for (const char* name : {"in0", "in1"}) {
    absl::StatusOr<Literal> arg = ReadNpy(absl::StrCat(dir, "/cholesky_solve.", name, ".npy"));
    ASSERT_TRUE(arg.ok()) << arg.status();
    args.push_back(*std::move(arg));
  }
  absl::StatusOr<Literal> expected = ReadNpy(dir + "/cholesky_solve.out0.npy");
  ASSERT_TRUE(expected.ok()) << expected.status();

  absl::StatusOr<Literal> result = RunOn(GetParam(), text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->shape().dimensions(), expected->shape().dimensions());
  EXPECT_LE(RelativeL2(*result, *expected), 1e-4);
}

// A batch of 2x3x3 Cholesky factorizations as JAX lowers jnp.linalg.cholesky
// (column-major operand and result, info per matrix); the second matrix is
// not positive definite.
constexpr char kBatchedPotrf[] = R"(
HloModule batched_potrf

ENTRY main {
  a = f64[2,3,3]{2,1,0} parameter(0)
  t = f64[2,3,3]{1,2,0} transpose(a), dimensions={0,2,1}
  potrf = (f64[2,3,3]{1,2,0}, s32[2]{0}) custom-call(t), custom_call_target="lapack_dpotrf_ffi",
      operand_layout_constraints={f64[2,3,3]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})},
      api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  l = f64[2,3,3]{1,2,0} get-tuple-element(potrf), index=0
  info = s32[2]{0} get-tuple-element(potrf), index=1
  l_row_major = f64[2,3,3]{2,1,0} copy(l)
  ROOT out = (f64[2,3,3]{2,1,0}, s32[2]{0}) tuple(l_row_major, info)
}
)";

TEST_P(JaxProgramTest, BatchedColumnMajorPotrf) {
  // Matrix 0: [[4,2,0],[2,5,3],[0,3,10]] = L L^T with L = [[2,0,0],[1,2,0],[0,1.5,~2.78]].
  // Matrix 1: the identity with a -1 in the middle: info = 2.
  const std::vector<double> values = {4, 2, 0, 2, 5, 3, 0, 3, 10, 1, 0, 0, 0, -1, 0, 0, 0, 1};
  Literal a = LiteralUtil::CreateFromDimensions<double>({2, 3, 3}, values);
  absl::StatusOr<Literal> result = RunOn(GetParam(), kBatchedPotrf, {a.Clone()});
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<Literal> parts = result->DecomposeTuple();
  EXPECT_EQ(parts[1].Get<int32_t>({0}), 0);
  EXPECT_EQ(parts[1].Get<int32_t>({1}), 2);
  // The lower triangle is L (row-major view of the column-major factor);
  // the strict upper triangle keeps a's values.
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 0, 0}), 2);
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 1, 0}), 1);
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 1, 1}), 2);
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 2, 1}), 1.5);
  EXPECT_NEAR(parts[0].Get<double>({0, 2, 2}), std::sqrt(10 - 2.25), 1e-12);
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 0, 1}), 2);
  EXPECT_DOUBLE_EQ(parts[0].Get<double>({0, 1, 2}), 3);
}

// jnp.linalg.svd of a batch of two 3x2 matrices as JAX lowers it: a tuple
// of column-major (u, vt, x_out) and row-major (s, info) results.
constexpr char kBatchedSvd[] = R"(
HloModule batched_svd

ENTRY main {
  a = f32[2,3,2]{2,1,0} parameter(0)
  svd = (f32[2,3,2]{1,2,0}, f32[2,2]{1,0}, f32[2,3,3]{1,2,0}, f32[2,2,2]{1,2,0}, s32[2]{0})
      custom-call(a), custom_call_target="lapack_sgesdd_ffi",
      operand_layout_constraints={f32[2,3,2]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})},
      api_version=API_VERSION_TYPED_FFI, backend_config={mode = 65 : ui8}
  s = f32[2,2]{1,0} get-tuple-element(svd), index=1
  u = f32[2,3,3]{1,2,0} get-tuple-element(svd), index=2
  vt = f32[2,2,2]{1,2,0} get-tuple-element(svd), index=3
  info = s32[2]{0} get-tuple-element(svd), index=4
  u_row_major = f32[2,3,3]{2,1,0} copy(u)
  vt_row_major = f32[2,2,2]{2,1,0} copy(vt)
  ROOT out = (f32[2,2]{1,0}, f32[2,3,3]{2,1,0}, f32[2,2,2]{2,1,0}, s32[2]{0})
      tuple(s, u_row_major, vt_row_major, info)
}
)";

TEST_P(JaxProgramTest, BatchedSvdReconstructs) {
  const std::vector<float> values = {3, 1, -2, 4, 0.5, 2, 1, 1, 1, 2, 1, 3};
  Literal a = LiteralUtil::CreateFromDimensions<float>({2, 3, 2}, values);
  absl::StatusOr<Literal> result = RunOn(GetParam(), kBatchedSvd, {a.Clone()});
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<Literal> parts = result->DecomposeTuple();
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_EQ(parts[3].Get<int32_t>({b}), 0);
    EXPECT_GE(parts[0].Get<float>({b, 0}), parts[0].Get<float>({b, 1}));
    // a[b] = u[:, :2] diag(s) vt, element by element.
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 2; ++k) {
          sum += double{parts[1].Get<float>({b, i, k})} * parts[0].Get<float>({b, k}) *
                 parts[2].Get<float>({b, k, j});
        }
        EXPECT_NEAR(sum, a.Get<float>({b, i, j}), 1e-5) << b << " " << i << " " << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, JaxProgramTest, ::testing::Values("interpreter", "cpu"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace axle
