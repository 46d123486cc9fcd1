//===- solver_thunk_test.cc - jaxlib's LAPACK-style targets on cuSOLVER ----===//
//
// SolverPlanTest (any machine): the plans of jaxlib's GPU and CPU targets
// (dimensions, batch, triangle, jobs, workspace), the refusals naming CUDA,
// cuSOLVER, the target and the instruction, and modules calling every
// target compiling for CUDA without a device (the CPU-named ones also run
// on the interpreter, through jaxlib's LAPACK handlers for "Host").
// SolverDeviceTest (a GPU; skipped, with a message, without one): each
// module run on CUDA against the interpreter running the CPU target on the
// same inputs: LU factors, pivots and info, QR's reflectors and tau, orgqr's
// Q, and the eigen and singular value decompositions through what does not
// depend on the vectors' signs (eigenvalues, singular values, absolute
// values of the vectors).
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/solver_thunk.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/lu_pivots_thunk.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

// A module whose root is custom-call `call` of parameter(s) `parameters`.
struct SolverCase {
  const char* name;
  std::string cpu;  // the CPU target (the interpreter runs it)
  std::string gpu;  // jaxlib's GPU target, where it has one of its own
};

constexpr char kGetrf[] = R"(HloModule getrf
ENTRY e {
  a = f32[3,5,4]{1,2,0} parameter(0)
  lu = (f32[3,5,4]{1,2,0}, s32[3,4]{1,0}, s32[3]{0}) custom-call(a), custom_call_target="TARGET", operand_layout_constraints={f32[3,5,4]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI
  f = f32[3,5,4]{1,2,0} get-tuple-element(lu), index=0
  p = s32[3,4]{1,0} get-tuple-element(lu), index=1
  i = s32[3]{0} get-tuple-element(lu), index=2
  ROOT t = (f32[3,5,4]{1,2,0}, s32[3,4]{1,0}, s32[3]{0}) tuple(f, p, i)
}
)";

// geqrf, then orgqr of its result: Q.
constexpr char kQr[] = R"(HloModule qr
ENTRY e {
  a = f64[2,6,4]{1,2,0} parameter(0)
  qr = (f64[2,6,4]{1,2,0}, f64[2,4]{1,0}) custom-call(a), custom_call_target="GEQRF", operand_layout_constraints={f64[2,6,4]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI
  r = f64[2,6,4]{1,2,0} get-tuple-element(qr), index=0
  tau = f64[2,4]{1,0} get-tuple-element(qr), index=1
  q = f64[2,6,4]{1,2,0} custom-call(r, tau), custom_call_target="ORGQR", operand_layout_constraints={f64[2,6,4]{1,2,0}, f64[2,4]{1,0}}, output_to_operand_aliasing={{}: (0, {})}, api_version=API_VERSION_TYPED_FFI
  ROOT t = (f64[2,6,4]{1,2,0}, f64[2,4]{1,0}, f64[2,6,4]{1,2,0}) tuple(r, tau, q)
}
)";

// The eigendecomposition of p + p^T: eigenvalues and |eigenvectors|.
constexpr char kEigh[] = R"(HloModule eigh
ENTRY e {
  p = f32[2,6,6]{1,2,0} parameter(0)
  pt = f32[2,6,6]{1,2,0} transpose(p), dimensions={0,2,1}
  a = f32[2,6,6]{1,2,0} add(p, pt)
  eigh = (f32[2,6,6]{1,2,0}, f32[2,6]{1,0}, s32[2]{0}) custom-call(a), custom_call_target="TARGET", operand_layout_constraints={f32[2,6,6]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config=CONFIG
  v = f32[2,6,6]{1,2,0} get-tuple-element(eigh), index=0
  w = f32[2,6]{1,0} get-tuple-element(eigh), index=1
  i = s32[2]{0} get-tuple-element(eigh), index=2
  av = f32[2,6,6]{1,2,0} abs(v)
  ROOT t = (f32[2,6,6]{1,2,0}, f32[2,6]{1,0}, s32[2]{0}) tuple(av, w, i)
}
)";

// The reduced SVD of a tall matrix: s, |u| and |vt|.
constexpr char kSvd[] = R"(HloModule svd
ENTRY e {
  a = f32[2,7,4]{1,2,0} parameter(0)
  svd = (f32[2,7,4]{1,2,0}, f32[2,4]{1,0}, f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) custom-call(a), custom_call_target="TARGET", operand_layout_constraints={f32[2,7,4]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config=CONFIG
  s = f32[2,4]{1,0} get-tuple-element(svd), index=1
  u = f32[2,7,4]{1,2,0} get-tuple-element(svd), index=2
  vt = f32[2,4,4]{1,2,0} get-tuple-element(svd), index=3
  i = s32[2]{0} get-tuple-element(svd), index=4
  au = f32[2,7,4]{1,2,0} abs(u)
  avt = f32[2,4,4]{1,2,0} abs(vt)
  ROOT t = (f32[2,4]{1,0}, f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) tuple(s, au, avt, i)
}
)";

// jaxlib's Jacobi SVD: s, |u| and |v^T| (v transposed), what the CPU's
// reduced gesdd gives as s, |u| and |vt|.
constexpr char kSvdj[] = R"(HloModule svdj
ENTRY e {
  a = f32[2,7,4]{1,2,0} parameter(0)
  svd = (f32[2,7,4]{1,2,0}, f32[2,4]{1,0}, f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) custom-call(a), custom_call_target="cusolver_gesvdj_ffi", operand_layout_constraints={f32[2,7,4]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = true, full_matrices = false}
  s = f32[2,4]{1,0} get-tuple-element(svd), index=1
  u = f32[2,7,4]{1,2,0} get-tuple-element(svd), index=2
  v = f32[2,4,4]{1,2,0} get-tuple-element(svd), index=3
  i = s32[2]{0} get-tuple-element(svd), index=4
  vt = f32[2,4,4]{1,2,0} transpose(v), dimensions={0,2,1}
  au = f32[2,7,4]{1,2,0} abs(u)
  avt = f32[2,4,4]{1,2,0} abs(vt)
  ROOT t = (f32[2,4]{1,0}, f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) tuple(s, au, avt, i)
}
)";

// LU's pivots (0-based) as a permutation of 6 rows.
constexpr char kLuPivots[] = R"(HloModule pivots
ENTRY e {
  p = s32[3,4] parameter(0)
  ROOT q = s32[3,6] custom-call(p), custom_call_target="cu_lu_pivots_to_permutation", api_version=API_VERSION_TYPED_FFI
}
)";

std::string With(absl::string_view text, absl::string_view target, absl::string_view config) {
  return absl::StrReplaceAll(text, {{"TARGET", target}, {"CONFIG", config}});
}

std::vector<SolverCase> Cases() {
  return {
      {"getrf", With(kGetrf, "lapack_sgetrf_ffi", ""), With(kGetrf, "cusolver_getrf_ffi", "")},
      {"qr",
       absl::StrReplaceAll(kQr, {{"GEQRF", "lapack_dgeqrf_ffi"}, {"ORGQR", "lapack_dorgqr_ffi"}}),
       absl::StrReplaceAll(kQr,
                           {{"GEQRF", "cusolver_geqrf_ffi"}, {"ORGQR", "cusolver_orgqr_ffi"}})},
      {"eigh", With(kEigh, "lapack_ssyevd_ffi", "{mode = 86 : ui8, uplo = 76 : ui8}"),
       With(kEigh, "cusolver_syevd_ffi", "{algorithm = 0 : ui8, lower = true}")},
      {"svd", With(kSvd, "lapack_sgesdd_ffi", "{mode = 83 : ui8}"),
       With(kSvd, "cusolver_gesvd_ffi",
            "{compute_uv = true, full_matrices = false, transposed = false}")},
  };
}

const HloCustomCallInstruction* FindCall(const HloModule& module, absl::string_view prefix) {
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    const auto* call = dyn_cast<HloCustomCallInstruction>(instruction);
    if (call != nullptr && absl::StartsWith(call->custom_call_target(), prefix)) return call;
  }
  return nullptr;
}

absl::StatusOr<SolverPlan> PlanOf(const std::string& text, absl::string_view prefix) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  const HloCustomCallInstruction* call = FindCall(**module, prefix);
  if (call == nullptr) return absl::NotFoundError(absl::StrCat("no call to ", prefix));
  return MakeSolverPlan(*call);
}

TEST(SolverPlanTest, PlansJaxlibsGpuAndCpuTargetsAlike) {
  for (const SolverCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto cpu = PlanOf(c.cpu, "lapack_");
    auto gpu = PlanOf(c.gpu, "cusolver_");
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(cpu->ToString(), gpu->ToString());
  }
  auto getrf = PlanOf(Cases()[0].cpu, "lapack_");
  ASSERT_TRUE(getrf.ok()) << getrf.status();
  EXPECT_EQ(getrf->ToString(), "getrf f32 batch=3 m=5 n=4 workspace=67860");
  auto orgqr = PlanOf(Cases()[1].cpu, "lapack_dorgqr");
  ASSERT_TRUE(orgqr.ok()) << orgqr.status();
  EXPECT_EQ(orgqr->ToString(), "orgqr f64 batch=2 m=6 n=4 k=4 workspace=68120");
  auto eigh = PlanOf(Cases()[2].cpu, "lapack_");
  ASSERT_TRUE(eigh.ok()) << eigh.status();
  EXPECT_EQ(eigh->ToString(), "syevd f32 batch=2 m=6 n=6 uplo=lower vectors=1 workspace=68716");
  auto svd = PlanOf(Cases()[3].cpu, "lapack_");
  ASSERT_TRUE(svd.ok()) << svd.status();
  EXPECT_EQ(svd->ToString(), "gesvd f32 batch=2 m=7 n=4 job=S u=7x4 vt=4x4 workspace=68440");
}

TEST(SolverPlanTest, JacobiSvdTakesAnyShapeAndWritesUAndV) {
  auto reduced = PlanOf(kSvdj, "cusolver_");
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->ToString(),
            "gesvdj f32 batch=2 m=7 n=4 job=S vectors=1 u=7x4 v=4x4 workspace=68468");
  // Wide and full: u [3, 3], v [5, 5].
  auto wide = PlanOf(R"(HloModule m
ENTRY e {
  a = f64[3,5]{0,1} parameter(0)
  ROOT svd = (f64[3,5]{0,1}, f64[3]{0}, f64[3,3]{0,1}, f64[5,5]{0,1}, s32[]) custom-call(a), custom_call_target="cusolver_gesvdj_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = false, full_matrices = true}
})",
                     "cusolver_");
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->ToString(),
            "gesvdj f64 batch=1 m=3 n=5 job=A vectors=0 u=3x3 v=5x5 workspace=67647");
}

TEST(SolverPlanTest, LuPivotsBecomeAPermutationKernel) {
  auto module = ParseAndReturnUnverifiedModule(kLuPivots);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloCustomCallInstruction* call = FindCall(**module, "cu_lu");
  ASSERT_NE(call, nullptr);
  auto plan = MakeLuPivotsPlan(*call);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->batch, 3);
  EXPECT_EQ(plan->pivots, 4);
  EXPECT_EQ(plan->permutation, 6);
  auto program = CompileGpuProgram(module->get());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_THAT(GpuProgramToString(*program), ::testing::Not(HasSubstr("custom-call")));
  // More pivots than rows, a permutation_size that disagrees: refused.
  for (const std::string& text :
       {absl::StrReplaceAll(kLuPivots, {{"s32[3,6] custom-call", "s32[3,3] custom-call"}}),
        absl::StrReplaceAll(kLuPivots, {{"API_VERSION_TYPED_FFI",
                                         "API_VERSION_TYPED_FFI, "
                                         "backend_config={permutation_size = 5 : "
                                         "i32}"}})}) {
    SCOPED_TRACE(text);
    auto bad = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(bad.ok()) << bad.status();
    auto refused = MakeLuPivotsPlan(*FindCall(**bad, "cu_lu"));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(refused.status().message(), HasSubstr("CUDA"));
    EXPECT_THAT(refused.status().message(), HasSubstr("(instruction %q)"));
  }
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(LuPivotsToPermutationPtx(), "sm_90");
  EXPECT_TRUE(cubin.ok()) << cubin.status() << "\n" << LuPivotsToPermutationPtx();
}

TEST(SolverPlanTest, ModesAndTrianglesFollowTheAttributes) {
  auto upper =
      PlanOf(With(kEigh, "lapack_ssyevd_ffi", "{mode = 78 : ui8, uplo = 85 : ui8}"), "lapack_");
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_FALSE(upper->lower);
  EXPECT_FALSE(upper->vectors);
  auto gpu_upper = PlanOf(With(kEigh, "cusolver_syevd_ffi", "{algorithm = 2 : ui8, lower = false}"),
                          "cusolver_");
  ASSERT_TRUE(gpu_upper.ok()) << gpu_upper.status();
  EXPECT_FALSE(gpu_upper->lower);
  EXPECT_TRUE(gpu_upper->vectors);
  // Mode N: u and vt are not referenced, whatever their shapes.
  const std::string no_uv = absl::StrReplaceAll(
      With(kSvd, "lapack_sgesdd_ffi", "{mode = 78 : ui8}"),
      {{"f32[2,7,4]{1,2,0} get-tuple-element(svd), index=2",
        "f32[2,1,1]{1,2,0} get-tuple-element(svd), index=2"},
       {"f32[2,4,4]{1,2,0} get-tuple-element(svd), index=3",
        "f32[2,1,1]{1,2,0} get-tuple-element(svd), index=3"},
       {"f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) custom-call",
        "f32[2,1,1]{1,2,0}, f32[2,1,1]{1,2,0}, s32[2]{0}) custom-call"},
       {"au = f32[2,7,4]{1,2,0}", "au = f32[2,1,1]{1,2,0}"},
       {"avt = f32[2,4,4]{1,2,0}", "avt = f32[2,1,1]{1,2,0}"},
       {"(f32[2,4]{1,0}, f32[2,7,4]{1,2,0}, f32[2,4,4]{1,2,0}, s32[2]{0}) tuple",
        "(f32[2,4]{1,0}, f32[2,1,1]{1,2,0}, f32[2,1,1]{1,2,0}, s32[2]{0}) tuple"}});
  auto values_only = PlanOf(no_uv, "lapack_");
  ASSERT_TRUE(values_only.ok()) << values_only.status() << "\n" << no_uv;
  EXPECT_EQ(values_only->job, 'N');
  EXPECT_FALSE(values_only->vectors);
}

TEST(SolverPlanTest, RefusalsNameCudaCusolverTheTargetAndTheInstruction) {
  struct Refusal {
    std::string text;
    const char* prefix;
    const char* why;
  };
  const std::vector<Refusal> refusals = {
      // Row-major matrices.
      {absl::StrReplaceAll(With(kGetrf, "cusolver_getrf_ffi", ""), {{"{1,2,0}", "{2,1,0}"}}),
       "cusolver_", "column-major"},
      // A wide SVD (cuSOLVER's gesvd needs m >= n).
      {absl::StrReplaceAll(
           With(kSvd, "lapack_sgesdd_ffi", "{mode = 83 : ui8}"),
           {{"a = f32[2,7,4]", "a = f32[2,4,7]"},
            {"(f32[2,7,4]{1,2,0}, f32[2,4]", "(f32[2,4,7]{1,2,0}, f32[2,4]"},
            {"operand_layout_constraints={f32[2,7,4]", "operand_layout_constraints={f32[2,4,7]"}}),
       "lapack_", "m >= n"},
      {With(kSvd, "cusolver_gesvd_ffi",
            "{compute_uv = true, full_matrices = false, transposed = true}"),
       "cusolver_", "transposed"},
      // The type letter and the operand disagree.
      {With(kGetrf, "lapack_dgetrf_ffi", ""), "lapack_", "not the target's type"},
      // Attributes missing.
      {With(kEigh, "lapack_ssyevd_ffi", "{mode = 86 : ui8}"), "lapack_", "uplo"},
      {With(kEigh, "cusolver_syevd_ffi", "{algorithm = 0 : ui8}"), "cusolver_", "lower"},
      // A result of the wrong shape.
      {absl::StrReplaceAll(
           With(kGetrf, "lapack_sgetrf_ffi", ""),
           {{"s32[3,4]{1,0}, s32[3]{0}) custom-call", "s32[3,5]{1,0}, s32[3]{0}) custom-call"},
            {"p = s32[3,4]{1,0}", "p = s32[3,5]{1,0}"},
            {"(f32[3,5,4]{1,2,0}, s32[3,4]{1,0}, s32[3]{0}) tuple",
             "(f32[3,5,4]{1,2,0}, s32[3,5]{1,0}, s32[3]{0}) tuple"}}),
       "lapack_", "pivots"},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.text);
    auto plan = PlanOf(refusal.text, refusal.prefix);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented) << plan.status();
    EXPECT_THAT(plan.status().message(), HasSubstr("CUDA cuSOLVER"));
    EXPECT_THAT(plan.status().message(), HasSubstr(refusal.prefix));
    EXPECT_THAT(plan.status().message(), HasSubstr("(instruction %"));
    EXPECT_THAT(plan.status().message(), HasSubstr(refusal.why));
  }
}

TEST(SolverPlanTest, ModulesCompileWithoutADevice) {
  std::vector<std::string> texts;
  std::vector<test::TestModule> modules;
  for (const SolverCase& c : Cases()) {
    texts.push_back(c.cpu);
    texts.push_back(c.gpu);
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    // The CPU targets run on the interpreter ("Host" handlers).
    modules.push_back({Cases()[i / 2].name, texts[i].c_str(), i % 2 == 0});
  }
  test::ExpectModulesCompileWithoutADevice(modules);
  // Each call is a cuSOLVER thunk, no custom-call thunk.
  for (const std::string& text : texts) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto program = CompileGpuProgram(module->get());
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_THAT(GpuProgramToString(*program), ::testing::Not(HasSubstr("custom-call")))
        << GpuProgramToString(*program);
  }
}

class SolverDeviceTest : public test::GpuExecutableTest {
 protected:
  // `gpu` on CUDA against `cpu` on the interpreter, on the same inputs.
  void ExpectAgrees(const std::string& gpu, const std::string& cpu, ErrorSpec error) {
    auto on_gpu = CompileFor(client_, gpu);
    ASSERT_TRUE(on_gpu.ok()) << "compiling for CUDA: " << on_gpu.status();
    auto on_interpreter = CompileFor(reference_, cpu);
    ASSERT_TRUE(on_interpreter.ok()) << on_interpreter.status();
    std::vector<Literal> arguments;
    const auto& parameters = (*on_gpu)->executable()->parameter_shapes();
    for (size_t i = 0; i < parameters.size(); ++i) {
      arguments.push_back(test::MakeInput(parameters[i], static_cast<int>(i) + 3));
    }
    auto expected = RunWith(reference_, **on_interpreter, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int run = 0; run < 2; ++run) {
      auto actual = RunWith(client_, **on_gpu, arguments);
      ASSERT_TRUE(actual.ok()) << "run " << run << " on CUDA: " << actual.status();
      absl::Status near = LiteralsNear(*expected, *actual, error);
      EXPECT_TRUE(near.ok()) << "run " << run << ": " << near << "\nexpected "
                             << expected->ToString() << "\nactual   " << actual->ToString();
    }
  }
};

TEST_F(SolverDeviceTest, JacobiSvdMatchesLapacksReducedSvd) {
  ExpectAgrees(kSvdj, With(kSvd, "lapack_sgesdd_ffi", "{mode = 83 : ui8}"), ErrorSpec(1e-4, 1e-4));
}

TEST_F(SolverDeviceTest, LuPivotsBecomeJaxlibsPermutation) {
  auto gpu = CompileFor(client_, kLuPivots);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  // Rows of 4 pivots into 6 rows, one out of range (skipped) and a negative.
  const std::vector<int32_t> pivots = {2, 5, 2, 3, 0, 0, 7, 1, -1, 4, 5, 3};
  Literal input(ShapeUtil::MakeShape(S32, {3, 4}));
  absl::c_copy(pivots, input.data<int32_t>().begin());
  std::vector<int32_t> expected;
  for (int row = 0; row < 3; ++row) {
    std::vector<int32_t> permutation = {0, 1, 2, 3, 4, 5};
    for (int i = 0; i < 4; ++i) {
      const int32_t j = pivots[row * 4 + i];
      if (j >= 0 && j < 6) std::swap(permutation[i], permutation[j]);
    }
    expected.insert(expected.end(), permutation.begin(), permutation.end());
  }
  std::vector<Literal> arguments;
  arguments.push_back(std::move(input));
  auto actual = RunWith(client_, **gpu, arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  const auto got = actual->data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), expected);
}

TEST_F(SolverDeviceTest, JaxlibsGpuAndCpuTargetsMatchLapack) {
  for (const SolverCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectAgrees(c.gpu, c.cpu, ErrorSpec(1e-4, 1e-4));
    ExpectAgrees(c.cpu, c.cpu, ErrorSpec(1e-4, 1e-4));
  }
}

}  // namespace
}  // namespace axle::gpu
