//===- axle_run.cc - Run an HLO module -------------------------------------===//
//
//   axle-run FILE [--platform=interpreter] [--input=a.npy ...] [--seed=N]
//            [--print_literals] [--output_dir=DIR] [--iterations=N]
//
// Like XLA's run_hlo_module: inputs come from .npy files in parameter order,
// or are generated from the seed; results are printed in XLA's literal
// syntax and written as out_0.npy, out_1.npy, ... (tuple leaves flattened in
// order). With --iterations=N the module runs N times after one warm-up and
// the last line reports min and median time per run.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/status_macros.h"
#include "axle/core/npy.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/runtime/host_custom_call.h"
#include "tools/fake_arguments.h"
#include "tools/tool_io.h"

namespace axle {
namespace {

struct Options {
  std::string input_file;
  std::string platform = "interpreter";
  std::vector<std::string> inputs;
  uint64_t seed = 42;
  bool print_literals = false;
  std::string output_dir;
  int iterations = 0;
  bool no_verify = false;
};

absl::StatusOr<std::vector<Literal>> LoadArguments(const Options& options, const HloModule& module) {
  if (options.inputs.empty()) return MakeFakeArguments(module, options.seed);
  const HloComputation* entry = module.entry_computation();
  if (static_cast<int64_t>(options.inputs.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ", entry->num_parameters(),
                                                   " parameters but ", options.inputs.size(),
                                                   " --input files were given"));
  }
  std::vector<Literal> arguments;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& expected = entry->parameter_instruction(i)->shape();
    AXLE_ASSIGN_OR_RETURN(Literal literal, ReadNpy(options.inputs[i], expected.element_type()));
    if (!ShapeUtil::Compatible(literal.shape(), expected)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", options.inputs[i], " for parameter ", i, " (",
          entry->parameter_instruction(i)->name(), ") has shape ",
          ShapeUtil::HumanString(literal.shape()), " but the module expects ",
          ShapeUtil::HumanString(expected)));
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

absl::Status WriteOutputs(const Literal& result, const std::string& dir) {
  int index = 0;
  absl::Status status = absl::OkStatus();
  ShapeUtil::ForEachLeafShape(result.shape(), [&](const Shape& shape, const ShapeIndex& shape_index) {
    if (!status.ok() || !shape.IsArray()) return;
    status = WriteNpy(result.GetSubliteral(shape_index), absl::StrCat(dir, "/out_", index++, ".npy"));
  });
  return status;
}

absl::Status Run(const Options& options) {
  if (options.platform != "interpreter") {
    return absl::UnimplementedError(absl::StrCat("platform '", options.platform,
                                                 "' is not available; known platforms: interpreter"));
  }
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        LoadModule(options.input_file, !options.no_verify));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> arguments, LoadArguments(options, *module));
  std::vector<const Literal*> argument_ptrs;
  for (const Literal& argument : arguments) argument_ptrs.push_back(&argument);

  HloEvaluator evaluator;
  InstallHostCustomCalls(&evaluator);
  evaluator.set_seed(options.seed);
  AXLE_ASSIGN_OR_RETURN(Literal result, evaluator.Evaluate(*module, argument_ptrs));

  if (options.print_literals) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      std::printf("argument %zu: %s\n", i, arguments[i].ToString().c_str());
    }
    std::printf("result: %s\n", result.ToString().c_str());
  }
  if (!options.output_dir.empty()) AXLE_RETURN_IF_ERROR(WriteOutputs(result, options.output_dir));

  if (options.iterations > 0) {
    std::vector<double> times;
    for (int i = 0; i < options.iterations; ++i) {
      auto start = std::chrono::steady_clock::now();
      AXLE_ASSIGN_OR_RETURN(Literal ignored, evaluator.Evaluate(*module, argument_ptrs));
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    std::printf("time per run: min %.3f ms, median %.3f ms\n", times.front(), times[times.size() / 2]);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace axle

int main(int argc, char** argv) {
  axle::Options options;
  CLI::App app{"axle-run: run an HLO module"};
  app.add_option("file", options.input_file, "HLO text file (- for standard input)")->required();
  app.add_option("--platform", options.platform, "where to run: interpreter");
  app.add_option("--input", options.inputs, ".npy file for each parameter, in order")->allow_extra_args(false);
  app.add_option("--seed", options.seed, "seed for random inputs and rng ops");
  app.add_flag("--print_literals", options.print_literals, "print arguments and results");
  app.add_option("--output_dir", options.output_dir, "write results as out_N.npy here");
  app.add_option("--iterations", options.iterations, "time N runs after one warm-up")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-verify", options.no_verify, "do not run the verifier");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  absl::Status status = axle::Run(options);
  if (!status.ok()) return axle::ReportError("axle-run", status);
  return 0;
}
