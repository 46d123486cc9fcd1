//===- ptxas.cc - PTX to a cubin with the toolkit's ptxas ------------------===//
#include "axle/gpu/ptxas.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

#ifndef AXLE_CUDA_PTXAS_PATH
#define AXLE_CUDA_PTXAS_PATH ""
#endif

extern char** environ;

namespace axle::gpu {
namespace {

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// A directory of its own for one run's files, removed when done.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/axle-ptxas-XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDirectory() {
    if (path_.empty()) return;
    for (const char* name : {"kernel.ptx", "kernel.cubin", "ptxas.log"}) {
      unlink(File(name).c_str());
    }
    rmdir(path_.c_str());
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  bool ok() const { return !path_.empty(); }
  std::string File(const char* name) const { return absl::StrCat(path_, "/", name); }

 private:
  std::string path_;
};

}  // namespace

absl::StatusOr<std::string> PtxasPath() {
  const char* from_environment = std::getenv("AXLE_CUDA_PTXAS");
  if (from_environment != nullptr && *from_environment != '\0') {
    if (!IsExecutable(from_environment)) {
      return absl::NotFoundError(
          absl::StrCat("AXLE_CUDA_PTXAS=", from_environment, " is not an executable"));
    }
    return std::string(from_environment);
  }
  const std::string built_with = AXLE_CUDA_PTXAS_PATH;
  if (!built_with.empty() && IsExecutable(built_with)) return built_with;
  return absl::NotFoundError(absl::StrCat("ptxas not found (the toolkit's ", built_with,
                                          "); set AXLE_CUDA_PTXAS to its path"));
}

absl::StatusOr<std::string> AssemblePtx(absl::string_view ptx, absl::string_view arch) {
  AXLE_ASSIGN_OR_RETURN(std::string ptxas, PtxasPath());
  ScratchDirectory scratch;
  if (!scratch.ok()) {
    return absl::InternalError(absl::StrCat("ptxas: no scratch directory: ", std::strerror(errno)));
  }
  const std::string input = scratch.File("kernel.ptx");
  const std::string output = scratch.File("kernel.cubin");
  const std::string log = scratch.File("ptxas.log");
  {
    std::ofstream file(input, std::ios::binary);
    file.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    if (!file) return absl::InternalError(absl::StrCat("ptxas: cannot write ", input));
  }
  std::vector<std::string> arguments = {ptxas, absl::StrCat("-arch=", arch), "-o", output, input};
  std::vector<char*> argv;
  argv.reserve(arguments.size() + 1);
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(
        absl::StrCat("ptxas: cannot run ", ptxas, ": ", std::strerror(spawned)));
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(absl::StrCat("ptxas: waitpid: ", std::strerror(errno)));
    }
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ptxas -arch=", arch, " rejected the PTX: ", ReadFile(log)));
  }
  return ReadFile(output);
}

}  // namespace axle::gpu
