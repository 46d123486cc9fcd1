//===- axle_run.cc - Run an HLO module -------------------------------------===//
//
//   axle-run FILE [--platform=interpreter] [--reference_platform=NAME]
//            [--input=a.npy ...] [--seed=N] [--print_literals]
//            [--output_dir=DIR] [--iterations=N] [--abs_error_bound=E]
//            [--rel_error_bound=E] [--dump-to=DIR] [--num_processes=N]
//            [--infeed=a.npy ...]
//
// Like XLA's run_hlo_module: the module is compiled for the platform through
// the client API (LocalClient), inputs come from .npy files in parameter
// order or are generated from the seed; results are printed in XLA's literal
// syntax and written as out_0.npy, out_1.npy, ... (tuple leaves flattened in
// order). With --reference_platform the module also runs there and the two
// results are compared (integers exactly, floats within the error bounds,
// XLA's defaults 1e-3; where one of the platforms is cuda, results that read
// an f32 dot or convolution XLA:GPU computes in TF32 within TF32's bounds,
// axle/gpu/tf32.h, unless AXLE_GPU_TF32=0); with --rel_l2_error_bound=E each
// float leaf must also be within E in relative L2 norm (|actual -
// expected|_2 / |expected|_2, NaNs in the same places), at least 2e-2 for
// 16-bit and narrower floats: the measure of the JAX issue (f32 1e-4, bf16
// 2e-2). A mismatch exits with status 2. --output_dir is
// created when missing. With --iterations=N the module runs N times after
// one warm-up and the last line reports min and median time per run: the
// execution alone, with the results left in their buffers (not read back). --dump-to=DIR sets
// AXLE_DUMP_TO for this process: the compiler's pass dumps and timings (and, on cpu, the LLVM IR
// before and after optimization) go to DIR. --num_processes=N runs the module
// in N processes joined by Gloo (SPMD; tools/multi_process.h), on
// --platform (interpreter or cpu), as does a process started with
// AXLE_PROCESS_ID and AXLE_NUM_PROCESSES set, or by mpirun (Open MPI).
//
// Infeed and outfeed (XLA's host queues, axle/core/host_feed.h): each
// --infeed file is one value for the module's infeed ops, queued in order
// on device 0 before every run (every infeed op of the module must take
// the same array shape); a value the run does not take is dropped before
// the next. The values the module's outfeed ops produce are printed with
// --print_literals ("outfeed N: ...") and written as outfeed_N.npy
// (outfeed_N_L.npy for leaf L of a tuple) in --output_dir; with
// --reference_platform the two platforms' outfeeds are compared too.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/host_feed.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/npy.h"
#include "axle/runtime/local_client.h"
#include "tools/fake_arguments.h"
#include "tools/tool_io.h"
#ifdef AXLE_HAVE_GPU
#include "axle/gpu/tf32.h"
#endif
#ifdef AXLE_HAVE_GLOO
#include "tools/multi_process.h"
#endif

namespace axle {
namespace {

struct Options {
  std::string input_file;
  std::string platform = "interpreter";
  std::vector<std::string> inputs;
  std::vector<std::string> infeeds;
  uint64_t seed = 42;
  bool print_literals = false;
  std::string output_dir;
  int iterations = 0;
  bool no_verify = false;
  std::string reference_platform;
  double abs_error_bound = 1e-3;
  double rel_error_bound = 1e-3;
  // The relative bound of each float leaf is at least this many units of
  // its type's precision (bf16: 2 x 2^-7), so one default suits f32 and
  // 16-bit results.
  double min_ulps = 2;
  // 0: no relative L2 check.
  double rel_l2_error_bound = 0;
};

// A module compiled for one platform, with its arguments on the device.
struct Prepared {
  LocalClient* client = nullptr;
  std::unique_ptr<LocalExecutable> executable;
  std::vector<ScopedShapedBuffer> arguments;
  std::vector<const ShapedBuffer*> argument_pointers;
  // Queued on device 0's infeed before every run.
  const std::vector<Literal>* infeeds = nullptr;
  double compile_milliseconds = 0;
};

absl::StatusOr<Prepared> Prepare(const std::string& platform_name, const HloModule& module,
                                 const std::vector<Literal>& arguments,
                                 const std::vector<Literal>& infeeds) {
  Prepared prepared;
  prepared.infeeds = &infeeds;
  AXLE_ASSIGN_OR_RETURN(se::Platform * platform, PlatformUtil::GetPlatform(platform_name));
  AXLE_ASSIGN_OR_RETURN(prepared.client, ClientLibrary::GetOrCreateLocalClient(platform));
  auto start = std::chrono::steady_clock::now();
  AXLE_ASSIGN_OR_RETURN(prepared.executable,
                        prepared.client->Compile(module.Clone(), ExecutableBuildOptions()));
  prepared.compile_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const Literal& argument : arguments) {
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer,
                          prepared.client->LiteralToShapedBuffer(argument, 0));
    prepared.arguments.push_back(std::move(buffer));
  }
  for (const ScopedShapedBuffer& buffer : prepared.arguments) {
    prepared.argument_pointers.push_back(&buffer);
  }
  return prepared;
}

HostFeed& Feed(const Prepared& prepared, HostFeed::Direction direction) {
  return HostFeed::Get(direction, prepared.client->platform()->Name(), 0);
}

absl::StatusOr<ScopedShapedBuffer> Execute(const Prepared& prepared, uint64_t seed) {
  Feed(prepared, HostFeed::Direction::kInfeed).Clear();
  for (const Literal& value : *prepared.infeeds) {
    AXLE_RETURN_IF_ERROR(prepared.client->TransferToInfeedLocal(value, 0));
  }
  ExecutableRunOptions run_options;
  run_options.set_rng_seed(static_cast<int>(seed));
  return prepared.executable->Run(prepared.argument_pointers, run_options);
}

// What a run left in device 0's outfeed queue, oldest first.
std::vector<Literal> DrainOutfeed(const Prepared& prepared) {
  HostFeed& outfeed = Feed(prepared, HostFeed::Direction::kOutfeed);
  std::vector<Literal> values;
  while (outfeed.size() > 0) {
    absl::StatusOr<Literal> value = outfeed.Pop(std::chrono::milliseconds(0));
    if (!value.ok()) break;
    values.push_back(*std::move(value));
  }
  return values;
}

struct RunResult {
  Literal result;
  std::vector<Literal> outfeed;
};

absl::StatusOr<RunResult> RunOnce(const Prepared& prepared, uint64_t seed) {
  Feed(prepared, HostFeed::Direction::kOutfeed).Clear();
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffers, Execute(prepared, seed));
  RunResult run;
  AXLE_ASSIGN_OR_RETURN(run.result, prepared.client->ShapedBufferToLiteral(buffers));
  run.outfeed = DrainOutfeed(prepared);
  return run;
}

// Each float leaf of `actual` within `bound` of `expected` in relative L2
// norm (16-bit and narrower floats within at least 2e-2, as their rounding
// differs from op to op); NaNs must sit in the same places, infinities in
// the same places with the same sign (an empty segment_max is -inf), and
// both are left out of the norms.
absl::Status RelativeL2Near(const Literal& expected, const Literal& actual, double bound) {
  absl::Status status = absl::OkStatus();
  ShapeUtil::ForEachLeafShape(expected.shape(), [&](const Shape& shape, const ShapeIndex& index) {
    if (!status.ok() || !shape.IsArray()) return;
    const PrimitiveType type = shape.element_type();
    if (!primitive_util::IsFloatingPointType(type) && !primitive_util::IsComplexType(type)) return;
    const Literal& want = expected.GetSubliteral(index);
    const Literal& got = actual.GetSubliteral(index);
    double error = 0, norm = 0;
    int64_t nans_apart = 0, infinities_apart = 0;
    for (int64_t i = 0; i < want.element_count(); ++i) {
      const complex128 e = want.GetAsComplex128(i), a = got.GetAsComplex128(i);
      const bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
      const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
      nans_apart += e_nan != a_nan;
      if (e_nan || a_nan) continue;
      const bool e_inf = std::isinf(e.real()) || std::isinf(e.imag());
      const bool a_inf = std::isinf(a.real()) || std::isinf(a.imag());
      if (e_inf || a_inf) {
        infinities_apart += e != a;
        continue;
      }
      error += std::norm(a - e);
      norm += std::norm(e);
    }
    const double leaf_bound = primitive_util::BitWidth(type) <= 16 ? std::max(bound, 2e-2) : bound;
    const double relative = std::sqrt(error) / std::max(std::sqrt(norm), 1e-30);
    if (nans_apart > 0 || infinities_apart > 0 || !(relative <= leaf_bound)) {
      status = absl::InvalidArgumentError(
          absl::StrFormat("leaf {%s} (%s): relative L2 error %.3g > %.0e, %d NaNs and %d "
                          "infinities in different places",
                          absl::StrJoin(index, ","), ShapeUtil::HumanString(shape), relative,
                          leaf_bound, nans_apart, infinities_apart));
    }
  });
  return status;
}

// The --infeed files, each one value of the array shape every infeed op of
// the module takes.
absl::StatusOr<std::vector<Literal>> LoadInfeeds(const Options& options, const HloModule& module) {
  std::vector<Literal> values;
  if (options.infeeds.empty()) return values;
  const HloInstruction* first = nullptr;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() != HloOpcode::kInfeed) continue;
      const Shape& shape = instruction->shape();
      if (!shape.IsTuple() || shape.tuple_shapes().empty() || !shape.tuple_shapes(0).IsArray()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--infeed: infeed ", instruction->name(), " takes ", ShapeUtil::HumanString(shape),
            "; an .npy file holds one array, so only infeeds of (array, token) "
            "can be fed"));
      }
      if (first != nullptr &&
          !ShapeUtil::Compatible(first->shape().tuple_shapes(0), shape.tuple_shapes(0))) {
        return absl::InvalidArgumentError(
            absl::StrCat("--infeed: the module's infeeds take different shapes (", first->name(),
                         ": ", ShapeUtil::HumanString(first->shape().tuple_shapes(0)), ", ",
                         instruction->name(), ": ", ShapeUtil::HumanString(shape.tuple_shapes(0)),
                         "), so the files' order cannot say which is which"));
      }
      if (first == nullptr) first = instruction;
    }
  }
  if (first == nullptr) {
    return absl::InvalidArgumentError("--infeed was given but the module has no infeed");
  }
  const Shape& expected = first->shape().tuple_shapes(0);
  for (const std::string& file : options.infeeds) {
    AXLE_ASSIGN_OR_RETURN(Literal literal, ReadNpy(file, expected.element_type()));
    if (!ShapeUtil::Compatible(literal.shape(), expected)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--infeed ", file, " has shape ", ShapeUtil::HumanString(literal.shape()),
                       " but the module's infeeds take ", ShapeUtil::HumanString(expected)));
    }
    values.push_back(std::move(literal));
  }
  return values;
}

absl::StatusOr<std::vector<Literal>> LoadArguments(const Options& options,
                                                   const HloModule& module) {
  if (options.inputs.empty()) return MakeFakeArguments(module, options.seed);
  const HloComputation* entry = module.entry_computation();
  if (static_cast<int64_t>(options.inputs.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the entry computation takes ", entry->num_parameters(), " parameters but ",
                     options.inputs.size(), " --input files were given"));
  }
  std::vector<Literal> arguments;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& expected = entry->parameter_instruction(i)->shape();
    AXLE_ASSIGN_OR_RETURN(Literal literal, ReadNpy(options.inputs[i], expected.element_type()));
    if (!ShapeUtil::Compatible(literal.shape(), expected)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input ", options.inputs[i], " for parameter ", i, " (",
                       entry->parameter_instruction(i)->name(), ") has shape ",
                       ShapeUtil::HumanString(literal.shape()), " but the module expects ",
                       ShapeUtil::HumanString(expected)));
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

// The array leaves of `result` as DIR/PREFIX0.npy, DIR/PREFIX1.npy, ...,
// or DIR/PREFIX.npy when `result` is one array and `single` is set.
absl::Status WriteLeaves(const Literal& result, const std::string& dir, const std::string& prefix,
                         bool single) {
  if (single && result.shape().IsArray()) {
    return WriteNpy(result, absl::StrCat(dir, "/", prefix, ".npy"));
  }
  if (single) return WriteLeaves(result, dir, prefix + "_", false);
  int index = 0;
  absl::Status status = absl::OkStatus();
  ShapeUtil::ForEachLeafShape(result.shape(),
                              [&](const Shape& shape, const ShapeIndex& shape_index) {
                                if (!status.ok() || !shape.IsArray()) return;
                                status = WriteNpy(result.GetSubliteral(shape_index),
                                                  absl::StrCat(dir, "/", prefix, index++, ".npy"));
                              });
  return status;
}

absl::Status WriteOutputs(const RunResult& run, const std::string& dir) {
  AXLE_RETURN_IF_ERROR(WriteLeaves(run.result, dir, "out_", false));
  for (size_t i = 0; i < run.outfeed.size(); ++i) {
    AXLE_RETURN_IF_ERROR(WriteLeaves(run.outfeed[i], dir, absl::StrCat("outfeed_", i), true));
  }
  return absl::OkStatus();
}

// The outfeeds of two runs: as many values, each within `spec`.
absl::Status OutfeedsNear(const std::vector<Literal>& expected, const std::vector<Literal>& actual,
                          const ErrorSpec& spec) {
  if (expected.size() != actual.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the reference made ", expected.size(),
                                                   " outfeed values, this run ", actual.size()));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    absl::Status near = LiteralsNear(expected[i], actual[i], spec);
    if (!near.ok())
      return absl::InvalidArgumentError(absl::StrCat("outfeed ", i, ": ", near.message()));
  }
  return absl::OkStatus();
}

// The result against the reference's: within `spec`, and where either
// platform is cuda (which computes f32 dots and convolutions in TF32 as
// XLA:GPU does) the results that read those within TF32's bounds.
absl::Status CompareResults(const HloModule& module, const Options& options,
                            const Literal& expected, const Literal& actual, const ErrorSpec& spec) {
#ifdef AXLE_HAVE_GPU
  auto is_cuda = [](const std::string& name) {
    const std::string lower = absl::AsciiStrToLower(name);
    return lower == "cuda" || lower == "gpu";
  };
  const bool tf32 =
      (is_cuda(options.platform) || is_cuda(options.reference_platform)) && gpu::Tf32Enabled();
  return gpu::LiteralsNearAllowingTf32(module, expected, actual, spec, tf32);
#else
  (void)module;
  (void)options;
  return LiteralsNear(expected, actual, spec);
#endif
}

absl::Status Run(const Options& options) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        LoadModule(options.input_file, !options.no_verify));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> arguments, LoadArguments(options, *module));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> infeeds, LoadInfeeds(options, *module));
  AXLE_ASSIGN_OR_RETURN(Prepared prepared, Prepare(options.platform, *module, arguments, infeeds));
  AXLE_ASSIGN_OR_RETURN(RunResult run, RunOnce(prepared, options.seed));
  const Literal& result = run.result;

  if (options.print_literals) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      std::printf("argument %zu: %s\n", i, arguments[i].ToString().c_str());
    }
    std::printf("result: %s\n", result.ToString().c_str());
    for (size_t i = 0; i < run.outfeed.size(); ++i) {
      std::printf("outfeed %zu: %s\n", i, run.outfeed[i].ToString().c_str());
    }
  }
  if (!options.output_dir.empty()) {
    AXLE_RETURN_IF_ERROR(CreateOutputDir(options.output_dir));
    AXLE_RETURN_IF_ERROR(WriteOutputs(run, options.output_dir));
  }

  if (options.iterations > 0) {
    // Execution alone: the result stays in its device buffers (reading it
    // back into a Literal is not part of a run).
    AXLE_ASSIGN_OR_RETURN(std::vector<double> times, TimeRuns(options.iterations, [&] {
                            absl::Status status = Execute(prepared, options.seed).status();
                            Feed(prepared, HostFeed::Direction::kOutfeed).Clear();
                            return status;
                          }));
    std::printf("compile time (%s): %.1f ms\n", options.platform.c_str(),
                prepared.compile_milliseconds);
    PrintTimePerRun(times);
  }

  if (!options.reference_platform.empty()) {
    AXLE_ASSIGN_OR_RETURN(Prepared reference,
                          Prepare(options.reference_platform, *module, arguments, infeeds));
    AXLE_ASSIGN_OR_RETURN(RunResult reference_run, RunOnce(reference, options.seed));
    const Literal& expected = reference_run.result;
    if (options.print_literals) {
      std::printf("reference result (%s): %s\n", options.reference_platform.c_str(),
                  expected.ToString().c_str());
    }
    ErrorSpec spec(options.abs_error_bound, options.rel_error_bound);
    spec.min_ulps = options.min_ulps;
    absl::Status agree = CompareResults(*module, options, expected, result, spec);
    if (agree.ok() && options.rel_l2_error_bound > 0) {
      agree = RelativeL2Near(expected, result, options.rel_l2_error_bound);
    }
    if (agree.ok()) agree = OutfeedsNear(reference_run.outfeed, run.outfeed, spec);
    if (!agree.ok()) {
      std::printf("MISMATCH: %s vs reference %s: %s\n", options.platform.c_str(),
                  options.reference_platform.c_str(), std::string(agree.message()).c_str());
      return absl::Status(absl::StatusCode::kDataLoss, "results differ from the reference");
    }
    std::printf(
        "OK: %s agrees with reference %s (abs %g, rel %g, at least %g units of each "
        "float type's precision%s)\n",
        options.platform.c_str(), options.reference_platform.c_str(), options.abs_error_bound,
        options.rel_error_bound, options.min_ulps,
        options.rel_l2_error_bound > 0
            ? absl::StrFormat("; relative L2 %g", options.rel_l2_error_bound).c_str()
            : "");
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
  CLI::App app{"axle-run: run an HLO module"};
  app.add_option("file", options.input_file,
                 "HLO text file (- for standard input), or a binary HloModuleProto (.pb)")
      ->required();
  app.add_option("--platform", options.platform, "where to run (interpreter, cpu, cuda)");
  app.add_option("--reference_platform", options.reference_platform,
                 "also run here and compare the results");
  app.add_option("--abs_error_bound", options.abs_error_bound, "absolute error bound (floats)");
  app.add_option("--rel_error_bound", options.rel_error_bound, "relative error bound (floats)");
  app.add_option("--rel_l2_error_bound", options.rel_l2_error_bound,
                 "also bound each float leaf's relative L2 error (16-bit floats: at least 2e-2)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min_ulps", options.min_ulps,
                 "relative bound of a float result at least this many units of its precision");
  app.add_option("--input", options.inputs, ".npy file for each parameter, in order")
      ->allow_extra_args(false);
  app.add_option("--infeed", options.infeeds,
                 ".npy file for each value the module's infeed ops take, in order")
      ->allow_extra_args(false);
  app.add_option("--seed", options.seed, "seed for random inputs and rng ops");
  app.add_flag("--print_literals", options.print_literals, "print arguments and results");
  app.add_option("--output_dir", options.output_dir, "write results as out_N.npy here");
  app.add_option("--iterations", options.iterations, "time N runs after one warm-up")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-verify", options.no_verify, "do not run the verifier");
  int num_processes = 0;
  int num_partitions = 1;
  app.add_option("--num_partitions", num_partitions,
                 "with --num_processes: partitions of the grid when the module names none")
      ->check(CLI::PositiveNumber);
  app.add_option("--num_processes", num_processes,
                 "run in N processes joined by Gloo over loopback (SPMD)")
      ->check(CLI::PositiveNumber);
  std::string dump_dir;
  app.add_option("--dump-to", dump_dir,
                 "write the compiler's pass dumps, timings and (cpu) LLVM IR here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (!dump_dir.empty()) setenv("AXLE_DUMP_TO", dump_dir.c_str(), 1);
#ifdef AXLE_HAVE_GLOO
  if (axle::IsWorkerProcess()) {
    axle::WorkerOptions worker;
    worker.input_file = options.input_file;
    worker.platform = options.platform;
    worker.inputs = options.inputs;
    worker.seed = options.seed;
    worker.verify = !options.no_verify;
    worker.print_literals = options.print_literals;
    worker.output_dir = options.output_dir;
    worker.compare_with_threads = options.reference_platform == "interpreter";
    worker.num_partitions = num_partitions;
    absl::Status status = axle::RunWorker(worker);
    if (status.code() == absl::StatusCode::kDataLoss) {
      axle::ReportError("axle-run", status);
      return 2;
    }
    if (!status.ok()) return axle::ReportError("axle-run", status);
    return 0;
  }
  if (num_processes > 0) return axle::LaunchProcesses(num_processes, argc, argv);
#else
  if (num_processes > 1) {
    std::fprintf(stderr, "axle-run: --num_processes needs Gloo (libgloo-dev; AXLE_COLLECTIVES)\n");
    return 1;
  }
#endif
  absl::Status status = axle::Run(options);
  if (status.code() == absl::StatusCode::kDataLoss) return 2;
  if (!status.ok()) return axle::ReportError("axle-run", status);
  return 0;
}
