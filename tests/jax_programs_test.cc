//===- jax_programs_test.cc - Real JAX programs against XLA:CPU's outputs -===//
//
// `../shared/jax/` holds programs lowered by JAX (NAME.hlo, before XLA's
// passes) with their inputs (NAME.inK.npy) and XLA:CPU's outputs
// (NAME.outK.npy). Each program with outputs is one test: parse, compile for
// the `cpu` platform, run on the inputs and compare every output leaf with
// XLA's, as the issue that brought these programs asks: relative L2 error
// at most 1e-4 for f32/f64/complex, 2e-2 for bf16 and f16 (their rounding
// differs from op to op), integers and pred exactly, NaNs in the same
// places. The directory is AXLE_JAX_DIR (CMake cache variable, environment
// overrides); without it the tests are skipped.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/core/npy.h"
#include "axle/core/primitive_type.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/compilation_cache.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"

namespace axle {
namespace {

std::string JaxDir() {
  if (const char* dir = std::getenv("AXLE_JAX_DIR")) return dir;
  return AXLE_DEFAULT_JAX_DIR;
}

// The programs that come with XLA's outputs, by name, sorted.
std::vector<std::string> ProgramNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(JaxDir(), error)) {
    std::string file = entry.path().filename().string();
    constexpr std::string_view kSuffix = ".hlo";
    if (file.size() <= kSuffix.size() || !file.ends_with(kSuffix) || file.ends_with(".opt.hlo")) {
      continue;
    }
    std::string name = file.substr(0, file.size() - kSuffix.size());
    if (std::filesystem::exists(absl::StrCat(JaxDir(), "/", name, ".out0.npy"))) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool IsNarrowFloat(PrimitiveType type) { return type == BF16 || type == F16; }

// Compares one output leaf with XLA's; an empty string when they agree.
std::string Disagreement(const Literal& expected, const Literal& actual) {
  if (expected.shape().dimensions() != actual.shape().dimensions()) {
    return absl::StrCat("shape ", ShapeUtil::HumanString(actual.shape()), " vs XLA's ",
                        ShapeUtil::HumanString(expected.shape()));
  }
  PrimitiveType type = expected.shape().element_type();
  int64_t count = expected.element_count();
  if (!primitive_util::IsFloatingPointType(type) && !primitive_util::IsComplexType(type)) {
    int64_t differ = 0;
    for (int64_t i = 0; i < count; ++i) {
      differ += expected.GetIntegralAsS64(i) != actual.GetIntegralAsS64(i);
    }
    return differ == 0 ? "" : absl::StrCat(differ, " of ", count, " integers differ");
  }
  double error = 0, norm = 0;
  int64_t expected_nans = 0, actual_nans = 0;
  for (int64_t i = 0; i < count; ++i) {
    complex128 e = expected.GetAsComplex128(i), a = actual.GetAsComplex128(i);
    bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
    bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
    expected_nans += e_nan;
    actual_nans += a_nan;
    if (e_nan) continue;
    error += std::norm(a - e);
    norm += std::norm(e);
  }
  if (expected_nans != actual_nans) {
    return absl::StrCat(actual_nans, " NaNs vs XLA's ", expected_nans);
  }
  double relative = std::sqrt(error) / std::max(std::sqrt(norm), 1e-30);
  double tolerance = IsNarrowFloat(type) ? 2e-2 : 1e-4;
  if (!(relative <= tolerance)) {
    return absl::StrFormat("relative L2 error %.3g > %.0e", relative, tolerance);
  }
  return "";
}

class JaxProgramTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JaxProgramTest, AgreesWithXlaCpu) {
  const std::string base = absl::StrCat(JaxDir(), "/", GetParam());
  auto module =
      ParseAndReturnUnverifiedModule(testing::ReadWholeFile(base + ".hlo"), base + ".hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation* entry = (*module)->entry_computation();
  std::vector<Literal> arguments;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& shape = entry->parameter_instruction(i)->shape();
    absl::StatusOr<Literal> argument =
        ReadNpy(absl::StrCat(base, ".in", i, ".npy"), shape.element_type());
    ASSERT_TRUE(argument.ok()) << argument.status();
    ASSERT_EQ(argument->shape().dimensions(), shape.dimensions()) << "argument " << i;
    arguments.push_back(std::move(*argument));
  }
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
      testing::ClientFor("cpu")->Compile(std::move(*module), ExecutableBuildOptions());
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<Literal> result = testing::RunExecutable("cpu", **executable, arguments);
  ASSERT_TRUE(result.ok()) << result.status();

  int leaf = 0;
  ShapeUtil::ForEachLeafShape(result->shape(), [&](const Shape& shape, const ShapeIndex& index) {
    if (!shape.IsArray()) return;
    std::string path = absl::StrCat(base, ".out", leaf, ".npy");
    absl::StatusOr<Literal> expected = ReadNpy(path, shape.element_type());
    ASSERT_TRUE(expected.ok()) << "output " << leaf << ": " << expected.status();
    EXPECT_EQ(Disagreement(*expected, result->GetSubliteral(index)), "") << "output " << leaf;
    ++leaf;
  });
  EXPECT_FALSE(std::filesystem::exists(absl::StrCat(base, ".out", leaf, ".npy")))
      << "XLA has more outputs than the " << leaf << " Axle returned";
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Programs, JaxProgramTest, ::testing::ValuesIn(ProgramNames()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JaxProgramTest);

// A later process finds a training step's compilation in AXLE_CACHE_DIR
// and uses it. The module it parses back lays out its kernels in another
// order than the first process did; that must not reject the file.
TEST(JaxPrograms, TrainStepServesALaterProcessFromDisk) {
  const std::string path = absl::StrCat(JaxDir(), "/mlp_train_step.hlo");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const std::string dir = absl::StrCat(::testing::TempDir(), "/axle_jax_disk_cache");
  std::filesystem::remove_all(dir);
  ::setenv("AXLE_CACHE_DIR", dir.c_str(), 1);
  auto compile = [&] {
    // A new process: nothing in memory.
    CompilationCache::Global().Clear();
    auto module = ParseAndReturnUnverifiedModule(testing::ReadWholeFile(path), path);
    EXPECT_TRUE(module.ok()) << module.status();
    return testing::ClientFor("cpu")->Compile(std::move(*module), ExecutableBuildOptions());
  };
  const CompilationCacheStats before = CompilationCache::Global().stats();
  ASSERT_TRUE(compile().ok());
  ASSERT_TRUE(compile().ok());
  const CompilationCacheStats after = CompilationCache::Global().stats();
  ::unsetenv("AXLE_CACHE_DIR");
  CompilationCache::Global().Clear();
  std::filesystem::remove_all(dir);
  EXPECT_EQ(after.disk_writes, before.disk_writes + 1);
  EXPECT_EQ(after.disk_hits, before.disk_hits + 1);
  EXPECT_EQ(after.disk_rejected, before.disk_rejected);
}

TEST(JaxPrograms, DirectoryHasPrograms) {
  if (!std::filesystem::exists(JaxDir())) GTEST_SKIP() << "no JAX programs at " << JaxDir();
  EXPECT_FALSE(ProgramNames().empty()) << JaxDir();
}

}  // namespace
}  // namespace axle
