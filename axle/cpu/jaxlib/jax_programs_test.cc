//===- jax_programs_test.cc - JAX's LAPACK custom calls, end to end --------===//
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

INSTANTIATE_TEST_SUITE_P(Platforms, JaxProgramTest, ::testing::Values("interpreter", "cpu"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace axle
