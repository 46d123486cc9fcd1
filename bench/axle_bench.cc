//===- axle_bench.cc - Compile and run time of one HLO module on a platform -===//
//
//   axle-bench FILE [--platform=cpu] [--compiles=3] [--min_runs=5]
//              [--max_runs=50] [--min_seconds=1] [--input=a.npy ...]
//              [--compile_only] [--warm_with=OTHER.hlo]
//
// The driver behind bench/run.sh. It compiles the module through LocalClient
// `--compiles` times (the first compile pays for one-time set-up such as
// target initialization; both it and the best are reported; the
// compilation cache is cleared before each, so none is a cache hit), transfers
// the arguments once (the --input .npy files in parameter order, else
// seeded random ones), runs once to warm up, then runs at least
// `--min_runs` and at most `--max_runs` times, stopping once
// `--min_seconds` have passed. A run is `LocalExecutable::Run`: the result
// buffers are allocated and freed by the runtime as a user would see it, but
// not read back. The thread count is the runtime's (AXLE_NUM_THREADS).
// `--warm_with=OTHER.hlo` compiles another module first, untimed, so that
// the first compile is one of a process that compiled before (LLVM's
// one-time set-up and first touch of its code already paid);
// `--compile_only` stops after the compiles (no arguments, no runs).
//
// Prints one line, key=value pairs for run.sh to parse:
//   ok compile_first_ms=.. compile_best_ms=.. runs=.. min_ms=.. median_ms=..
//      compile_first_cpu_ms=.. compile_best_cpu_ms=..
// or, when the platform cannot compile or run the module (exit status 3):
//   unsupported <the error message>
// The _cpu_ms times are the process's CPU time (user + system, all threads)
// during the compile: on a machine loaded by other work they vary far less
// than the wall times.
//
//===----------------------------------------------------------------------===//
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/base/status_macros.h"
#include "axle/core/npy.h"
#include "axle/runtime/compilation_cache.h"
#include "axle/runtime/local_client.h"
#include "tools/fake_arguments.h"
#include "tools/tool_io.h"

namespace axle {
namespace {

struct Options {
  std::string input_file;
  std::string platform = "cpu";
  int compiles = 3;
  int min_runs = 5;
  int max_runs = 50;
  double min_seconds = 1.0;
  std::vector<std::string> inputs;
  bool compile_only = false;
  std::string warm_with;
};

struct Measurement {
  double compile_first_ms = 0;
  double compile_best_ms = 0;
  double compile_first_cpu_ms = 0;
  double compile_best_cpu_ms = 0;
  std::vector<double> run_ms;
};

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The process's CPU time so far (user + system, every thread).
double ProcessCpuMilliseconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

absl::StatusOr<Measurement> Measure(const Options& options, const HloModule& module,
                                    const HloModule* warm) {
  Measurement measurement;
  AXLE_ASSIGN_OR_RETURN(se::Platform * platform, PlatformUtil::GetPlatform(options.platform));
  AXLE_ASSIGN_OR_RETURN(LocalClient * client, ClientLibrary::GetOrCreateLocalClient(platform));

  if (warm != nullptr) {
    // A process that has compiled before: its one-time set-up is paid.
    AXLE_RETURN_IF_ERROR(client->Compile(warm->Clone(), ExecutableBuildOptions()).status());
  }
  std::unique_ptr<LocalExecutable> executable;
  for (int i = 0; i < std::max(options.compiles, 1); ++i) {
    std::unique_ptr<HloModule> copy = module.Clone();
    // Each compile is a whole one: passes and codegen, not a hit in the
    // process's compilation cache (runtime/compilation_cache.h).
    CompilationCache::Global().Clear();
    const double cpu_start = ProcessCpuMilliseconds();
    auto start = std::chrono::steady_clock::now();
    AXLE_ASSIGN_OR_RETURN(executable, client->Compile(std::move(copy), ExecutableBuildOptions()));
    const double ms = MillisecondsSince(start);
    const double cpu_ms = ProcessCpuMilliseconds() - cpu_start;
    if (i == 0) {
      measurement.compile_first_ms = measurement.compile_best_ms = ms;
      measurement.compile_first_cpu_ms = measurement.compile_best_cpu_ms = cpu_ms;
    }
    measurement.compile_best_ms = std::min(measurement.compile_best_ms, ms);
    measurement.compile_best_cpu_ms = std::min(measurement.compile_best_cpu_ms, cpu_ms);
  }
  if (options.compile_only) return measurement;

  std::vector<Literal> literals;
  if (options.inputs.empty()) {
    AXLE_ASSIGN_OR_RETURN(literals, MakeFakeArguments(module, /*seed=*/1));
  } else {
    const HloComputation* entry = module.entry_computation();
    if (static_cast<int64_t>(options.inputs.size()) != entry->num_parameters()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the entry computation takes ", entry->num_parameters(), " parameters but ",
                       options.inputs.size(), " --input files were given"));
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      const Shape& expected = entry->parameter_instruction(i)->shape();
      AXLE_ASSIGN_OR_RETURN(Literal literal, ReadNpy(options.inputs[i], expected.element_type()));
      if (!ShapeUtil::Compatible(literal.shape(), expected)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input ", options.inputs[i], " has shape ", ShapeUtil::HumanString(literal.shape()),
            " but parameter ", i, " is ", ShapeUtil::HumanString(expected)));
      }
      literals.push_back(std::move(literal));
    }
  }
  std::vector<ScopedShapedBuffer> arguments;
  for (const Literal& literal : literals) {
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer, client->LiteralToShapedBuffer(literal, 0));
    arguments.push_back(std::move(buffer));
  }
  std::vector<const ShapedBuffer*> argument_pointers;
  argument_pointers.reserve(arguments.size());
  for (const ScopedShapedBuffer& buffer : arguments) argument_pointers.push_back(&buffer);

  AXLE_RETURN_IF_ERROR(executable->Run(argument_pointers, ExecutableRunOptions()).status());
  auto first_run = std::chrono::steady_clock::now();
  while (static_cast<int>(measurement.run_ms.size()) < options.max_runs) {
    if (static_cast<int>(measurement.run_ms.size()) >= options.min_runs &&
        MillisecondsSince(first_run) >= options.min_seconds * 1000) {
      break;
    }
    auto start = std::chrono::steady_clock::now();
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result,
                          executable->Run(argument_pointers, ExecutableRunOptions()));
    measurement.run_ms.push_back(MillisecondsSince(start));
  }
  return measurement;
}

int Main(const Options& options) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = LoadModule(options.input_file, true);
  if (!module.ok()) return ReportError("axle-bench", module.status());
  std::unique_ptr<HloModule> warm;
  if (!options.warm_with.empty()) {
    absl::StatusOr<std::unique_ptr<HloModule>> loaded = LoadModule(options.warm_with, true);
    if (!loaded.ok()) return ReportError("axle-bench", loaded.status());
    warm = std::move(*loaded);
  }
  absl::StatusOr<Measurement> measurement = Measure(options, **module, warm.get());
  if (!measurement.ok()) {
    std::string message = absl::StrReplaceAll(measurement.status().message(), {{"\n", " "}});
    std::printf("unsupported %s\n", message.c_str());
    return 3;
  }
  std::vector<double> times = measurement->run_ms;
  std::sort(times.begin(), times.end());
  const size_t runs = times.size();
  if (times.empty()) times.push_back(0);
  std::printf(
      "ok compile_first_ms=%.2f compile_best_ms=%.2f runs=%zu min_ms=%.3f median_ms=%.3f "
      "compile_first_cpu_ms=%.2f compile_best_cpu_ms=%.2f\n",
      measurement->compile_first_ms, measurement->compile_best_ms, runs, times.front(),
      times[times.size() / 2], measurement->compile_first_cpu_ms, measurement->compile_best_cpu_ms);
  return 0;
}

}  // namespace
}  // namespace axle

// CLI11_PARSE catches the flag errors; any other exception is a bug, and
// terminating on it is what a benchmark driver should do.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  axle::Options options;
  CLI::App app{"axle-bench: compile and run time of an HLO module"};
  app.add_option("file", options.input_file, "HLO text file")->required();
  app.add_option("--platform", options.platform, "where to run (cpu, interpreter)");
  app.add_option("--compiles", options.compiles, "compile this many times")
      ->check(CLI::PositiveNumber);
  app.add_option("--min_runs", options.min_runs, "timed runs at least")->check(CLI::PositiveNumber);
  app.add_option("--max_runs", options.max_runs, "timed runs at most")->check(CLI::PositiveNumber);
  app.add_option("--min_seconds", options.min_seconds, "keep running until this much time passed");
  app.add_option("--input", options.inputs, ".npy file for each parameter, in order")
      ->allow_extra_args(false);
  app.add_option("--warm_with", options.warm_with,
                 "compile this HLO file first, untimed: the first compile is then one of a "
                 "process that compiled before (as XLA's times in ../shared/jax were taken)");
  app.add_flag("--compile_only", options.compile_only,
               "only compile (runs=0 min_ms=0): compile times without the arguments' set-up");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  return axle::Main(options);
}
