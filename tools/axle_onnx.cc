//===- axle_onnx.cc - Run an ONNX model ------------------------------------===//
//
//   axle-onnx MODEL.onnx [--platform=cpu|interpreter|cuda] [--input=F ...]
//             [--output_dir=DIR] [--iterations=N] [--print_hlo]
//
// Runs an ONNX model through the graph front end's JIT (onnx::Session):
// inputs are .npy files or serialized ONNX TensorProtos (.pb; a
// SequenceProto or OptionalProto for a sequence or optional input), one per
// graph input in the graph's order (initializers are not inputs). The
// outputs' shapes are printed, and with --output_dir written as
// DIR/out_K.npy in the graph's output order (DIR is created; a sequence's
// tensors as DIR/out_K_J.npy). The compiles are counted, with
// those loaded from AXLE_CACHE_DIR (compiled code persists across runs of
// the tool when it is set). The clusters and host fallbacks
// are printed when there is more than one cluster or any fallback.
// --print_hlo prints the HLO of the computations compiled for the inputs.
// --iterations=N runs N more times after the first run (which compiled) and
// prints "time per run: min X ms, median Y ms": Session::Run with every
// cluster's executable cached, inputs to outputs, no compile.
//
// Every error (a malformed model, a missing input, a wrong shape or type, an
// unsupported op or opset, a cycle, a dangling edge) is printed naming what
// is at fault and exits 1. --platform=cuda runs on the GPU (an AXLE_CUDA
// build); without one it is such an error, naming CUDA.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/npy.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/session.h"
#include "tools/tool_io.h"

namespace axle {
namespace {

struct Options {
  std::string model;
  std::string platform = "cpu";
  std::vector<std::string> inputs;
  std::string output_dir;
  int iterations = 0;
  bool print_hlo = false;
};

absl::StatusOr<std::vector<Literal>> LoadInputs(const Options& options, const graph::Graph& graph) {
  if (options.inputs.size() != graph.inputs.size()) {
    std::string names;
    for (const graph::ValueInfo& input : graph.inputs) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", "'", input.name, "'");
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "the model has ", graph.inputs.size(), " inputs", names.empty() ? "" : " (", names,
        names.empty() ? "" : ")", " but ", options.inputs.size(), " --input files were given"));
  }
  std::vector<Literal> inputs;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& path = options.inputs[i];
    absl::StatusOr<Literal> literal =
        absl::EndsWith(path, ".pb") ? onnx::LoadValue(path, graph.inputs[i]) : ReadNpy(path);
    if (!literal.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--input ", path, " for input '",
                                                     graph.inputs[i].name,
                                                     "': ", literal.status().message()));
    }
    inputs.push_back(std::move(*literal));
  }
  return inputs;
}

// A tensor as PREFIX.npy; a sequence or optional (a tuple) as PREFIX_J.npy
// per element.
absl::Status WriteOutput(const Literal& value, const std::string& prefix) {
  if (!value.shape().IsTuple()) return WriteNpy(value, absl::StrCat(prefix, ".npy"));
  for (int64_t j = 0; j < value.tuple_size(); ++j) {
    AXLE_RETURN_IF_ERROR(WriteOutput(value.tuple_element(j), absl::StrCat(prefix, "_", j)));
  }
  return absl::OkStatus();
}

absl::Status Run(const Options& options) {
  onnx::Session::Options session_options;
  session_options.platform = options.platform;
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<onnx::Session> session,
                        onnx::Session::Load(options.model, session_options));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> inputs, LoadInputs(options, session->graph()));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> outputs, session->Run(inputs));
  const graph::Graph& graph = session->graph();
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::printf("output %zu '%s': %s\n", k, graph.outputs[k].name.c_str(),
                outputs[k].shape().ToString(false).c_str());
  }
  onnx::SessionMetrics metrics = session->metrics();
  std::printf("compiles: %lld in %.1f ms (%lld from the disk cache)\n",
              static_cast<long long>(metrics.compiles),
              absl::ToDoubleMilliseconds(metrics.compile_time),
              static_cast<long long>(metrics.disk_cache_hits));
  onnx::ClusteringReport report = session->Clustering();
  if (report.clusters.size() != 1 || !report.fallbacks.empty()) {
    std::printf("%s", report.ToString().c_str());
  }
  if (options.print_hlo) {
    AXLE_ASSIGN_OR_RETURN(std::string hlo, session->HloText(inputs));
    std::printf("%s\n", hlo.c_str());
  }
  if (!options.output_dir.empty()) {
    AXLE_RETURN_IF_ERROR(CreateOutputDir(options.output_dir));
    for (size_t k = 0; k < outputs.size(); ++k) {
      AXLE_RETURN_IF_ERROR(WriteOutput(outputs[k], absl::StrCat(options.output_dir, "/out_", k)));
    }
  }
  if (options.iterations > 0) {
    AXLE_ASSIGN_OR_RETURN(std::vector<double> times, TimeRuns(options.iterations, [&] {
                            return session->Run(inputs).status();
                          }));
    PrintTimePerRun(times);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace axle

// app.parse's errors are caught below; any other exception is a bug, and
// terminating on it is what a command-line tool should do.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  axle::Options options;
  CLI::App app{"axle-onnx: run an ONNX model"};
  app.add_option("model", options.model, "ONNX model file")->required();
  app.add_option("--platform", options.platform, "where to run (cpu, interpreter, cuda)");
  app.add_option("--input", options.inputs,
                 ".npy or TensorProto .pb file for each graph input, in order")
      ->allow_extra_args(false);
  app.add_option("--output_dir", options.output_dir, "write outputs as out_K.npy here");
  app.add_option("--iterations", options.iterations, "time N runs after the first")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--print_hlo", options.print_hlo, "print the compiled HLO");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  absl::Status status = axle::Run(options);
  if (!status.ok()) return axle::ReportError("axle-onnx", status);
  return 0;
}
