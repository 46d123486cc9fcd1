//===- ptxas.cc - PTX to a cubin with the toolkit's ptxas ------------------===//
#include "axle/gpu/ptxas.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/base/status_macros.h"
#include "axle/base/subprocess.h"

#ifndef AXLE_CUDA_PTXAS_PATH
#define AXLE_CUDA_PTXAS_PATH ""
#endif

namespace axle::gpu {
namespace {

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

absl::StatusOr<std::string> PtxasPath() {
  const std::string from_environment = EnvironmentOptions::Read().cuda_ptxas;
  if (!from_environment.empty()) {
    if (!IsExecutable(from_environment)) {
      return absl::NotFoundError(
          absl::StrCat("AXLE_CUDA_PTXAS=", from_environment, " is not an executable"));
    }
    return from_environment;
  }
  const std::string built_with = AXLE_CUDA_PTXAS_PATH;
  if (!built_with.empty() && IsExecutable(built_with)) return built_with;
  return absl::NotFoundError(absl::StrCat("ptxas not found (the toolkit's ", built_with,
                                          "); set AXLE_CUDA_PTXAS to its path"));
}

absl::StatusOr<std::string> AssemblePtx(absl::string_view ptx, absl::string_view arch) {
  AXLE_ASSIGN_OR_RETURN(std::string ptxas, PtxasPath());
  ScratchDirectory scratch("axle-ptxas");
  if (!scratch.ok()) {
    return absl::InternalError(absl::StrCat("ptxas: no scratch directory: ", std::strerror(errno)));
  }
  const std::string input = scratch.File("kernel.ptx");
  const std::string output = scratch.File("kernel.cubin");
  const std::string log = scratch.File("ptxas.log");
  AXLE_RETURN_IF_ERROR(WriteWholeFile(input, ptx));
  AXLE_ASSIGN_OR_RETURN(
      int exit_code, RunProgram(ptxas, {absl::StrCat("-arch=", arch), "-o", output, input}, log));
  if (exit_code != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ptxas -arch=", arch, " rejected the PTX: ", ReadFileOrEmpty(log)));
  }
  return ReadFileOrEmpty(output);
}

}  // namespace axle::gpu
