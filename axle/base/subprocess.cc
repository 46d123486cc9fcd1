#include "axle/base/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

extern char** environ;

namespace axle {

ScratchDirectory::ScratchDirectory(absl::string_view prefix) {
  std::string pattern =
      absl::StrCat(EnvironmentOptions::Read().temporary_directory, "/", prefix, "-XXXXXX");
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  if (path_.empty()) return;
  for (const std::string& file : files_) unlink(file.c_str());
  rmdir(path_.c_str());
}

std::string ScratchDirectory::File(absl::string_view name) {
  std::string file = absl::StrCat(path_, "/", name);
  files_.push_back(file);
  return file;
}

absl::StatusOr<int> RunProgram(const std::string& program,
                               const std::vector<std::string>& arguments,
                               const std::string& log_path) {
  std::vector<std::string> all = {program};
  all.insert(all.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  argv.reserve(all.size() + 1);
  for (std::string& argument : all) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::NotFoundError(absl::StrCat("cannot run ", program, ": ", std::strerror(spawned)));
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(absl::StrCat("waiting for ", program, ": ", std::strerror(errno)));
    }
  }
  if (!WIFEXITED(wait_status)) {
    return absl::InternalError(absl::StrCat(program, " was killed by signal ",
                                            WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0));
  }
  return WEXITSTATUS(wait_status);
}

}  // namespace axle
