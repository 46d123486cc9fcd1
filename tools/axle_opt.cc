//===- axle_opt.cc - Parse, verify, transform and print HLO ----------------===//
//
//   axle-opt [FILE|-] [--passes=a,b] [--pipeline=gpu] [--no-verify] [-o OUT]
//            [--dump-to=DIR]
//
// Like XLA's hlo-opt: reads HLO text, verifies it, runs the named passes in
// order and prints the canonical text. Exit status 0 on success, 1 with the
// error on stderr otherwise. --pipeline=gpu then runs the CUDA backend's
// whole preparation (axle/gpu/gpu_compiler.h: PrepareGpuModule, with the
// options AXLE_GPU_UNROLL and AXLE_GPU_SELECT_CONDITIONALS set) without a
// GPU, where the build has the CUDA backend.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/base/file_io.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/pass/pass_registry.h"
#include "tools/tool_io.h"

#ifdef AXLE_HAVE_GPU
#include "axle/gpu/gpu_compiler.h"
#endif

namespace axle {
namespace {

struct Options {
  std::string input = "-";
  std::string passes;
  bool no_verify = false;
  std::string output;
  std::string dump_dir;
  std::string pipeline;
};

// The named backend pipeline on `module`, after the passes.
absl::Status RunBackendPipeline(const std::string& name, HloModule* module) {
  if (name.empty()) return absl::OkStatus();
  if (name == "gpu") {
#ifdef AXLE_HAVE_GPU
    return gpu::PrepareGpuModule(module);
#else
    return absl::UnimplementedError("--pipeline=gpu: this build has no CUDA backend (AXLE_CUDA)");
#endif
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--pipeline=", name, ": unknown pipeline (known: gpu)"));
}

absl::Status Run(const Options& options) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        LoadModule(options.input, !options.no_verify));
  HloPassPipeline pipeline("axle-opt", /*verify_between_passes=*/!options.no_verify);
  if (!options.dump_dir.empty()) pipeline.set_dump_dir(options.dump_dir);
  for (absl::string_view name : absl::StrSplit(options.passes, ',', absl::SkipWhitespace())) {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass, CreatePass(name));
    pipeline.AddPass(std::move(pass));
  }
  AXLE_RETURN_IF_ERROR(pipeline.Run(module.get()).status());
  AXLE_RETURN_IF_ERROR(RunBackendPipeline(options.pipeline, module.get()));
  std::string dump_dir = pipeline.dump_dir();
  if (!dump_dir.empty()) {
    // The buffer assignment of the module as it is, with the target-neutral
    // in-place pairs (InPlaceOperandPairs) under the cpu program builder's
    // rules: its sharing wherever no thunk makes a choice of its own
    // (cpu/runtime/in_place_agreement_test.cc). The cpu compiler's dump,
    // <module>.hlo-buffer-assignment.txt, adds those choices (a dot's
    // residual accumulated in place, a concatenation its convolutions
    // write, a scatter's unstored fill).
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> assignment, AssignBuffers(*module));
    AXLE_RETURN_IF_ERROR(
        WriteWholeFile(absl::StrCat(dump_dir, "/", module->name(), ".buffer-assignment.txt"),
                       assignment->ToString()));
  }
  if (absl::EndsWith(options.output, ".pb")) return WriteModuleProto(*module, options.output);
  std::string text = module->ToString();
  if (options.output.empty() || options.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return absl::OkStatus();
  }
  return WriteWholeFile(options.output, text);
}

}  // namespace
}  // namespace axle

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): CLI11 reports errors itself
  axle::Options options;
  CLI::App app{"axle-opt: parse, verify, run passes and print HLO text"};
  app.add_option("input", options.input,
                 "HLO text file, - for standard input, or a binary HloModuleProto (.pb)");
  app.add_option("--passes", options.passes,
                 "comma-separated passes to run in order (known: " +
                     absl::StrJoin(axle::RegisteredPassNames(), ", ") + ")");
  app.add_option("--pipeline", options.pipeline,
                 "then a backend's whole preparation: gpu (the CUDA backend's passes, no GPU "
                 "needed)");
  app.add_flag("--no-verify", options.no_verify, "do not run the verifier");
  app.add_option(
      "-o,--output", options.output,
      "write the result here instead of stdout (a name ending in .pb: a binary HloModuleProto)");
  app.add_option("--dump-to", options.dump_dir,
                 "write the module after every pass that changed it, and per-pass timings");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  absl::Status status = axle::Run(options);
  if (!status.ok()) return axle::ReportError("axle-opt", status);
  return 0;
}
