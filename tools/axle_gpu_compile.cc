//===- axle_gpu_compile.cc - HLO modules through the CUDA compiler, no GPU -===//
//
//   axle-gpu-compile FILE|DIR... [--no-ptxas] [--jobs=N] [--timeout=S]
//                    [--only=PREFIX...] [--shard=I/N] [--expected-failures=LIST]
//                    [--arch=sm_90] [--module-devices]
//
// Sweeps modules through the CUDA backend's compile-only path
// (axle/gpu/gpu_compiler.h: CompileGpuProgram: passes, thunks, PTX; no
// device), each in a child process of its own, so that a crash (a CHECK,
// an LLVM assertion, a segfault) is one module's result, not the sweep's
// end. Each kernel's PTX is then assembled by the toolkit's ptxas
// (axle/gpu/ptxas.h) unless --no-ptxas. Directories are searched for
// *.hlo recursively (*.opt.hlo excluded: XLA's own output); --only keeps
// the modules whose path under their directory starts with one of the
// prefixes (`exec/`), and --shard every N-th of those from the I-th.
//
// XLA's multi-device tests set the replica count in C++, not in the HLO
// text: a module whose collectives name more devices than its text gives
// (replica ids, source-target pairs, group sizes its shapes imply: an
// all-gather of u32[1,2] into u32[2,2]) compiles for the smallest grid
// that holds them (tools/multi_device_grid.h, as the interpreter's and the
// multi-process conformance tests pick it), its collectives on NCCL;
// --module-devices keeps the counts the text gives (as does a module that
// does not verify on that grid).
//
// One line a module, `RESULT<TAB>FILE<TAB>SECONDS<TAB>DETAIL`:
//   compiled       thunks and kernels built, ptxas accepted every kernel
//   unimplemented  Unimplemented or NotFound naming CUDA (what it lacks)
//   rejected       InvalidArgument naming CUDA (the module asks for what
//                  it cannot have: a replica it lacks, a custom call's
//                  config that contradicts its shapes)
//   not-a-module   the text does not parse or verify (not the backend's)
//   error          any other error, or one that does not name CUDA
//   ptxas          ptxas refused a kernel's PTX
//   crash          the child died (signal or exit without a result)
//   timeout        the child ran past --timeout seconds
// then the counts. Exit status 1 when any module is error, ptxas, crash or
// timeout, or when --expected-failures (a file of module paths, one a
// line, relative to the arguments' directories; `#` comments) disagrees
// with which of the modules swept were unimplemented or rejected, so a
// module that compiled and stops compiling (or the reverse: an entry to
// remove) fails a test.
//
//===----------------------------------------------------------------------===//
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "tools/multi_device_grid.h"
#include "tools/tool_io.h"

namespace axle {
namespace {

struct Options {
  std::vector<std::string> inputs;
  bool no_ptxas = false;
  int jobs = 1;
  double timeout_s = 300;
  std::vector<std::string> only;
  std::string shard = "0/1";
  std::string expected_failures;
  std::string arch = "sm_90";
  bool module_devices = false;
};

struct Module {
  std::string path;     // to open
  std::string display;  // relative to its argument's root
};

// The modules named by the arguments, sorted within each directory.
std::vector<Module> ListModules(const std::vector<std::string>& inputs) {
  std::vector<Module> modules;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (!std::filesystem::is_directory(input, error)) {
      modules.push_back({input, std::filesystem::path(input).filename().string()});
      continue;
    }
    std::vector<Module> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(input, error)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !name.ends_with(".hlo") || name.ends_with(".opt.hlo")) {
        continue;
      }
      found.push_back(
          {entry.path().string(), std::filesystem::relative(entry.path(), input, error).string()});
    }
    std::sort(found.begin(), found.end(),
              [](const Module& a, const Module& b) { return a.display < b.display; });
    modules.insert(modules.end(), found.begin(), found.end());
  }
  return modules;
}

// One line of text: tabs and newlines become spaces, at most 400 bytes.
std::string OneLine(absl::string_view text) {
  std::string line = absl::StrReplaceAll(text, {{"\n", " "}, {"\t", " "}, {"\r", " "}});
  if (line.size() > 400) line = absl::StrCat(line.substr(0, 400), "...");
  return line;
}

// What the child computes: "RESULT<TAB>DETAIL".
std::string CompileOne(const std::string& path, const Options& options) {
  absl::StatusOr<std::string> text = ReadFileOrStdin(path);
  if (!text.ok()) return absl::StrCat("not-a-module\t", OneLine(text.status().ToString()));
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(*text, path);
  if (!module.ok()) return absl::StrCat("not-a-module\t", OneLine(module.status().ToString()));
  if (absl::Status verified = VerifyHloModule(**module); !verified.ok()) {
    return absl::StrCat("not-a-module\t", OneLine(verified.ToString()));
  }
  if (!options.module_devices) {
    HloModuleConfig& config = (*module)->mutable_config();
    const DeviceGrid grid = testing::GridFor(**module, /*default_replicas=*/1);
    const DeviceGrid text{config.replica_count, config.num_partitions};
    if (grid.size() > text.size()) {
      config.replica_count = grid.replica_count;
      config.num_partitions = grid.partition_count;
      // A module its collectives contradict on that grid too (an all-gather
      // that keeps its size beside a permute to device 1) stays as written.
      if (!VerifyHloModule(**module).ok()) {
        config.replica_count = text.replica_count;
        config.num_partitions = text.partition_count;
      }
    }
  }
  gpu::PtxOptions ptx;
  ptx.arch = options.arch;
  absl::StatusOr<gpu::GpuProgram> program = gpu::CompileGpuProgram(module->get(), ptx);
  if (!program.ok()) {
    const absl::Status& status = program.status();
    const bool named = absl::StrContains(status.message(), "CUDA");
    if (named && (status.code() == absl::StatusCode::kUnimplemented ||
                  status.code() == absl::StatusCode::kNotFound)) {
      return absl::StrCat("unimplemented\t", OneLine(status.ToString()));
    }
    if (named && status.code() == absl::StatusCode::kInvalidArgument) {
      return absl::StrCat("rejected\t", OneLine(status.ToString()));
    }
    return absl::StrCat("error\t", OneLine(status.ToString()));
  }
  if (!options.no_ptxas) {
    for (const auto& kernel : program->kernels) {
      absl::StatusOr<std::string> cubin = gpu::AssemblePtx(kernel->ptx, options.arch);
      if (!cubin.ok()) {
        return absl::StrCat("ptxas\t", kernel->name, ": ", OneLine(cubin.status().ToString()));
      }
    }
  }
  return absl::StrCat("compiled\t", program->kernels.size(), " kernels");
}

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int result_fd = -1;
  int stderr_fd = -1;
  std::string result;
  std::string stderr_tail;
  std::chrono::steady_clock::time_point start;
  bool timed_out = false;
};

// Starts module `index` in a child that writes its result to a pipe.
absl::StatusOr<Child> Start(size_t index, const Module& module, const Options& options) {
  int result_pipe[2];
  int stderr_pipe[2];
  if (pipe(result_pipe) != 0 || pipe(stderr_pipe) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    close(result_pipe[0]);
    close(stderr_pipe[0]);
    dup2(stderr_pipe[1], STDERR_FILENO);
    const std::string result = CompileOne(module.path, options) + "\n";
    size_t written = 0;
    while (written < result.size()) {
      const ssize_t n = write(result_pipe[1], result.data() + written, result.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(result_pipe[1]);
  close(stderr_pipe[1]);
  Child child;
  child.index = index;
  child.pid = pid;
  child.result_fd = result_pipe[0];
  child.stderr_fd = stderr_pipe[0];
  child.start = std::chrono::steady_clock::now();
  return child;
}

// Reads what `fd` has; false at end of file.
bool Drain(int fd, std::string* into, size_t keep) {
  char buffer[4096];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n <= 0) return n < 0 && errno == EINTR;
  into->append(buffer, static_cast<size_t>(n));
  if (into->size() > keep) into->erase(0, into->size() - keep);
  return true;
}

struct Outcome {
  std::string result;
  std::string detail;
  double seconds = 0;
};

// Waits for `child` to end (killing it past the timeout) and says how.
Outcome Finish(Child& child, const Options& options) {
  std::vector<pollfd> fds;
  while (child.result_fd >= 0 || child.stderr_fd >= 0) {
    fds.clear();
    if (child.result_fd >= 0) fds.push_back({child.result_fd, POLLIN, 0});
    if (child.stderr_fd >= 0) fds.push_back({child.stderr_fd, POLLIN, 0});
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
    const int wait_ms = static_cast<int>(std::max(0.0, options.timeout_s - elapsed) * 1000);
    if (wait_ms == 0 && !child.timed_out) {
      kill(child.pid, SIGKILL);
      child.timed_out = true;
    }
    if (poll(fds.data(), fds.size(), child.timed_out ? 1000 : wait_ms) < 0 && errno != EINTR) {
      break;
    }
    for (const pollfd& fd : fds) {
      if ((fd.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const bool is_result = fd.fd == child.result_fd;
      if (!Drain(fd.fd, is_result ? &child.result : &child.stderr_tail,
                 is_result ? 1 << 20 : 2048)) {
        close(fd.fd);
        (is_result ? child.result_fd : child.stderr_fd) = -1;
      }
    }
  }
  int status = 0;
  waitpid(child.pid, &status, 0);
  Outcome outcome;
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
  const std::string tail = OneLine(absl::StripAsciiWhitespace(child.stderr_tail));
  if (child.timed_out) {
    outcome.result = "timeout";
    outcome.detail = absl::StrCat("past ", options.timeout_s, " s");
  } else if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
             child.result.empty()) {
    outcome.result = "crash";
    outcome.detail = WIFSIGNALED(status) ? absl::StrCat("signal ", strsignal(WTERMSIG(status)))
                                         : absl::StrCat("exit ", WEXITSTATUS(status));
    if (!tail.empty()) absl::StrAppend(&outcome.detail, ": ", tail);
  } else {
    std::vector<std::string> parts =
        absl::StrSplit(absl::StripSuffix(child.result, "\n"), absl::MaxSplits('\t', 1));
    outcome.result = parts[0];
    outcome.detail = parts.size() > 1 ? parts[1] : "";
  }
  return outcome;
}

absl::StatusOr<std::set<std::string>> ReadList(const std::string& path) {
  std::set<std::string> list;
  if (path.empty()) return list;
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string line;
  while (std::getline(file, line)) {
    const std::string before_comment = line.substr(0, line.find('#'));
    absl::string_view entry = absl::StripAsciiWhitespace(before_comment);
    if (!entry.empty()) list.insert(std::string(entry));
  }
  return list;
}

absl::StatusOr<std::pair<int, int>> ParseShard(const std::string& shard) {
  std::vector<std::string> parts = absl::StrSplit(shard, '/');
  int index = 0;
  int count = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &index) ||
      !absl::SimpleAtoi(parts[1], &count) || count < 1 || index < 0 || index >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard=", shard, ": expected I/N with 0 <= I < N"));
  }
  return std::make_pair(index, count);
}

absl::StatusOr<int> Run(const Options& options) {
  auto [shard, shards] = *ParseShard(options.shard);
  std::vector<Module> all = ListModules(options.inputs);
  std::vector<Module> modules;
  std::vector<Module> kept;
  for (const Module& module : all) {
    bool wanted = options.only.empty();
    for (const std::string& prefix : options.only) wanted |= module.display.starts_with(prefix);
    if (wanted) kept.push_back(module);
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shards)) == shard) modules.push_back(kept[i]);
  }
  std::set<std::string> expected;
  {
    absl::StatusOr<std::set<std::string>> list = ReadList(options.expected_failures);
    if (!list.ok()) return list.status();
    expected = *list;
  }
  std::map<std::string, int> counts;
  std::vector<std::string> surprises;
  std::vector<Child> running;
  size_t next = 0;
  bool failed = false;
  auto report = [&](Child& child) {
    const Module& module = modules[child.index];
    Outcome outcome = Finish(child, options);
    ++counts[outcome.result];
    std::printf("%s\t%s\t%.2f\t%s\n", outcome.result.c_str(), module.display.c_str(),
                outcome.seconds, outcome.detail.c_str());
    std::fflush(stdout);
    const bool bad = outcome.result == "error" || outcome.result == "ptxas" ||
                     outcome.result == "crash" || outcome.result == "timeout";
    failed |= bad;
    if (!options.expected_failures.empty() && !bad && outcome.result != "not-a-module") {
      const bool listed = expected.count(module.display) > 0;
      if (listed && outcome.result == "compiled") {
        surprises.push_back(absl::StrCat(module.display, ": compiles now; remove it from ",
                                         options.expected_failures));
      } else if (!listed && outcome.result != "compiled") {
        surprises.push_back(absl::StrCat(module.display, ": ", outcome.result, ", not in ",
                                         options.expected_failures, ": ", outcome.detail));
      }
    }
  };
  while (next < modules.size() || !running.empty()) {
    while (next < modules.size() && static_cast<int>(running.size()) < options.jobs) {
      absl::StatusOr<Child> child = Start(next, modules[next], options);
      if (!child.ok()) return child.status();
      running.push_back(*child);
      ++next;
    }
    // The oldest child first: results come out in the modules' order when
    // jobs is 1 and nearly so otherwise.
    report(running.front());
    running.erase(running.begin());
  }
  std::printf("# %zu modules (shard %d/%d):", modules.size(), shard, shards);
  for (const auto& [result, count] : counts) std::printf(" %s %d", result.c_str(), count);
  std::printf("\n");
  for (const std::string& surprise : surprises) std::printf("# %s\n", surprise.c_str());
  return failed || !surprises.empty() ? 1 : 0;
}

}  // namespace
}  // namespace axle

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): CLI11 reports errors itself
  axle::Options options;
  CLI::App app{"axle-gpu-compile: HLO modules through the CUDA compiler (no GPU), one child each"};
  app.add_option("inputs", options.inputs, "HLO text files, or directories of *.hlo")->required();
  app.add_flag("--no-ptxas", options.no_ptxas, "do not assemble the kernels' PTX");
  app.add_option("--jobs", options.jobs, "modules compiled at once")->check(CLI::Range(1, 64));
  app.add_option("--timeout", options.timeout_s, "seconds a module may take")
      ->check(CLI::PositiveNumber);
  app.add_option("--only", options.only,
                 "keep the modules whose path under their directory starts so (repeatable)");
  app.add_option("--shard", options.shard, "I/N: every N-th module from the I-th");
  app.add_option("--expected-failures", options.expected_failures,
                 "a file of the modules expected to be unimplemented or rejected (exactly those)");
  app.add_option("--arch", options.arch, "the GPU architecture of the PTX");
  app.add_flag("--module-devices", options.module_devices,
               "compile multi-device modules for the replica and partition counts of their "
               "text, not for their tests' grid");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (!axle::ParseShard(options.shard).ok()) {
    return axle::ReportError("axle-gpu-compile", axle::ParseShard(options.shard).status());
  }
  absl::StatusOr<int> code = axle::Run(options);
  if (!code.ok()) return axle::ReportError("axle-gpu-compile", code.status());
  return *code;
}
