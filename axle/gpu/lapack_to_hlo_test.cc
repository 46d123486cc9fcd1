//===- lapack_to_hlo_test.cc - jaxlib's CPU LAPACK calls as HLO ops --------===//
#include "axle/gpu/lapack_to_hlo.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

int CountTargets(const HloModule& module, absl::string_view prefix) {
  int count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const auto* call = dyn_cast<HloCustomCallInstruction>(instruction);
      count += call != nullptr && absl::StartsWith(call->custom_call_target(), prefix);
    }
  }
  return count;
}

// A symmetric positive definite n x n matrix (row-major values).
Literal SpdMatrix(int64_t n) {
  Literal a(ShapeUtil::MakeShapeWithDescendingLayout(F32, {n, n}));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = i == j ? static_cast<double>(n) : 0.0;
      for (int64_t k = 0; k < 4; ++k) {
        sum += std::sin(0.3 * static_cast<double>(i + 1) * static_cast<double>(k + 1)) *
               std::sin(0.3 * static_cast<double>(j + 1) * static_cast<double>(k + 1));
      }
      a.Set<float>({i, j}, static_cast<float>(sum));
    }
  }
  return a;
}

// JAX's cho_factor + cho_solve lowered for the CPU (potrf, then two trsm):
// after the pass no LAPACK call is left, and the interpreter's solution x
// of A x = b satisfies it.
TEST(GpuLapackToHloTest, JaxCholeskySolveBecomesCholeskyAndTriangularSolves) {
  const std::string path = absl::StrCat(AXLE_GPU_JAX_DIR, "/cholesky_solve.hlo");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::stringstream text;
  text << file.rdbuf();
  auto module = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(CountTargets(**module, "lapack_"), 3);
  GpuLapackToHlo pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountTargets(**module, "lapack_"), 0) << (*module)->ToString();

  const int64_t n = 64;
  const Literal a = SpdMatrix(n);
  Literal b(ShapeUtil::MakeShapeWithDescendingLayout(F32, {n, 8}));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      b.Set<float>({i, j}, static_cast<float>((i * 7 + j * 3) % 11) - 5.0f);
    }
  }
  HloEvaluator evaluator;
  auto x = evaluator.Evaluate(**module, {&a, &b});
  ASSERT_TRUE(x.ok()) << x.status();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      double ax = 0;
      for (int64_t k = 0; k < n; ++k) {
        ax += static_cast<double>(a.Get<float>({i, k})) * x->Get<float>({k, j});
      }
      EXPECT_NEAR(ax, b.Get<float>({i, j}), 1e-3) << "row " << i << ", column " << j;
    }
  }
  // The CUDA pipeline takes the program whole now.
  auto prepared = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(prepared.ok());
  auto program = CompileGpuProgram(prepared->get(), PtxOptions());
  EXPECT_TRUE(program.ok()) << program.status();
  // What the CUDA compiler tells CheckModuleForPlatform it computes.
  auto original = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(original.ok());
  int computed = 0;
  for (const HloComputation* computation : (*original)->computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (const auto* call = dyn_cast<HloCustomCallInstruction>(instruction)) {
        EXPECT_TRUE(LapackCallIsAnHloOp(*call)) << call->ToString();
        ++computed;
      }
    }
  }
  EXPECT_EQ(computed, 3);
}

TEST(GpuLapackToHloTest, InfoIsOneWhereTheMatrixDoesNotFactor) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  a = f32[2,3,3]{1,2,0} parameter(0)
  ROOT c = (f32[2,3,3]{1,2,0}, s32[2]) custom-call(a), custom_call_target="lapack_spotrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 85 : ui8}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  GpuLapackToHlo pass;
  ASSERT_TRUE(pass.Run(module->get()).ok());
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kCholesky);
  EXPECT_FALSE(cast<HloCholeskyInstruction>(root->operand(0))->cholesky_options().lower());
  // The first matrix is positive definite, the second is not.
  Literal a(ShapeUtil::MakeShape(F32, {2, 3, 3}));
  const float values[2][3][3] = {{{4, 1, 0}, {1, 3, 1}, {0, 1, 2}},
                                 {{1, 2, 0}, {2, 1, 0}, {0, 0, -1}}};
  for (int64_t m = 0; m < 2; ++m) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 3; ++j) a.Set<float>({m, i, j}, values[m][i][j]);
    }
  }
  HloEvaluator evaluator;
  auto result = evaluator.Evaluate(**module, {&a});
  ASSERT_TRUE(result.ok()) << result.status();
  const Literal& info = result->GetSubliteral({1});
  EXPECT_EQ(info.Get<int32_t>({0}), 0);
  EXPECT_EQ(info.Get<int32_t>({1}), 1);
}

TEST(GpuLapackToHloTest, TrsmAttributesBecomeTheSolvesOptions) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  a = f64[4,4]{0,1} parameter(0)
  b = f64[3,4]{0,1} parameter(1)
  ROOT x = f64[3,4]{0,1} custom-call(a, b), custom_call_target="lapack_dtrsm_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={diag = 85 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  GpuLapackToHlo pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok() && *changed);
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTriangularSolve);
  const TriangularSolveOptions& options =
      cast<HloTriangularSolveInstruction>(root)->triangular_solve_options();
  EXPECT_FALSE(options.left_side());
  EXPECT_TRUE(options.lower());
  EXPECT_TRUE(options.unit_diagonal());
  EXPECT_EQ(options.transpose_a(), TriangularSolveOptions::ADJOINT);
  EXPECT_EQ(root->shape().ToString(true), "f64[3,4]{0,1}");
}

TEST(GpuLapackToHloTest, LeavesOtherCallsAlone) {
  for (
      const char* call : {
          // Another routine, a bad attribute, a missing one.
          R"(ROOT c = (f32[3,3], s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", api_version=API_VERSION_TYPED_FFI)",
          R"(ROOT c = (f32[3,3], s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 88 : ui8})",
          R"(ROOT c = f32[3,3] custom-call(a, a), custom_call_target="lapack_strsm_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={side = 76 : ui8})",
      }) {
    auto module = ParseAndReturnUnverifiedModule(
        absl::StrCat("HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  ", call, "\n}\n"));
    ASSERT_TRUE(module.ok()) << module.status();
    const auto* custom_call =
        cast<HloCustomCallInstruction>((*module)->entry_computation()->root_instruction());
    EXPECT_FALSE(LapackCallIsAnHloOp(*custom_call)) << call;
    GpuLapackToHlo pass;
    auto changed = pass.Run(module->get());
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << call;
  }
}

}  // namespace
}  // namespace axle::gpu
