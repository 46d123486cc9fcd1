//===- cublas_library_test.cc - cuBLAS and cuSOLVER opened at run time ----===//
//
// Without a GPU: a missing library is Unavailable naming cuBLAS (cuSOLVER)
// and the variable that overrides its path; where the toolkit's libraries
// are installed, every function of the tables resolves by its real symbol
// (a misspelt or unversioned name fails here, not on the GPU machine), and
// statuses become errors naming the call and cuBLAS's name for the status.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/cublas_library.h"

#include <filesystem>
#include <string>

#include "axle/gpu/cusolver_library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

std::string ToolkitLibrary(const std::string& name) {
  return std::string(AXLE_CUDA_TOOLKIT_LIBRARY_DIR) + "/" + name;
}

TEST(CublasLibraryTest, MissingLibraryIsUnavailableNamingCublas) {
  auto library = CublasLibrary::Open("/nonexistent/libcublasLt.so.13", "libcublas.so.13");
  EXPECT_EQ(library.status().code(), absl::StatusCode::kUnavailable) << library.status();
  EXPECT_THAT(library.status().message(), HasSubstr("cuBLAS unavailable"));
  EXPECT_THAT(library.status().message(), HasSubstr("/nonexistent/libcublasLt.so.13"));
  EXPECT_THAT(library.status().message(), HasSubstr("AXLE_CUBLASLT"));
  auto solver = CusolverLibrary::Open("/nonexistent/libcusolver.so.12");
  EXPECT_EQ(solver.status().code(), absl::StatusCode::kUnavailable) << solver.status();
  EXPECT_THAT(solver.status().message(), HasSubstr("cuSOLVER unavailable"));
  EXPECT_THAT(solver.status().message(), HasSubstr("AXLE_CUSOLVER"));
}

TEST(CublasLibraryTest, LibraryPathPrefersTheVariableThenTheLoaderThenTheToolkit) {
  // The variable's value (EnvironmentOptions reads it): a path wins.
  EXPECT_EQ(CudaLibraryPath("/some/where/libx.so", "libcublas.so.13"), "/some/where/libx.so");
  // Unset: the soname, where the loader cannot find it either.
  EXPECT_EQ(CudaLibraryPath("", "libaxle_no_such_library.so.1"), "libaxle_no_such_library.so.1");
  const std::string found = CudaLibraryPath("", "libcublas.so.13");
  if (std::filesystem::exists(ToolkitLibrary("libcublas.so.13"))) {
    EXPECT_THAT(found, ::testing::AnyOf("libcublas.so.13", ToolkitLibrary("libcublas.so.13")));
  }
}

TEST(CublasLibraryTest, TheToolkitsLibrariesHaveEverySymbol) {
  const std::string lt = ToolkitLibrary("libcublasLt.so.13");
  const std::string blas = ToolkitLibrary("libcublas.so.13");
  if (!std::filesystem::exists(lt) || !std::filesystem::exists(blas)) {
    GTEST_SKIP() << "the toolkit's cuBLAS 13 is not at " << AXLE_CUDA_TOOLKIT_LIBRARY_DIR;
  }
  auto library = CublasLibrary::Open(lt, blas);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_GE((*library)->cublasLtGetVersion(), size_t{130000});
  absl::Status status = (*library)->ToStatus(CUBLAS_STATUS_NOT_SUPPORTED, "cublasGemmEx");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_THAT(status.message(), HasSubstr("cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED"));
  EXPECT_TRUE((*library)->ToStatus(CUBLAS_STATUS_SUCCESS, "x").ok());
  EXPECT_EQ((*library)->ToStatus(CUBLAS_STATUS_ALLOC_FAILED, "x").code(),
            absl::StatusCode::kResourceExhausted);

  const std::string solver_path = ToolkitLibrary("libcusolver.so.12");
  if (!std::filesystem::exists(solver_path)) GTEST_SKIP() << solver_path << " is absent";
  // libcusolver needs libcusparse and libnvJitLink from the same folder.
  auto solver = CusolverLibrary::Open(solver_path);
  if (!solver.ok() && absl::IsUnavailable(solver.status()) &&
      solver.status().message().find("lacks") == std::string::npos) {
    GTEST_SKIP() << "cuSOLVER's dependencies are not on the loader's path: "
                 << solver.status().message();
  }
  ASSERT_TRUE(solver.ok()) << solver.status();
  EXPECT_THAT((*solver)->ToStatus(CUSOLVER_STATUS_INVALID_VALUE, "cusolverDnSpotrf").message(),
              HasSubstr("cusolverDnSpotrf: CUSOLVER_STATUS_INVALID_VALUE"));
}

}  // namespace
}  // namespace axle::gpu
