//===- gpu_compiler.cc - HLO modules compiled for a CUDA device ------------===//
#include "axle/gpu/gpu_compiler.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/collective_major_dimension.h"
#include "axle/gpu/collective_permute_splitter.h"
#include "axle/gpu/column_reduction_splitter.h"
#include "axle/gpu/conv_padding_legalization.h"
#include "axle/gpu/cudnn_conv_calls.h"
#include "axle/gpu/dot_canonicalizer.h"
#include "axle/gpu/dot_to_reduce.h"
#include "axle/gpu/dot_variants_to_dot.h"
#include "axle/gpu/gpu_conditional_to_select.h"
#include "axle/gpu/gpu_executable.h"
#include "axle/gpu/gpu_fusion_inliner.h"
#include "axle/gpu/gpu_thunk_factories.h"
#include "axle/gpu/gpu_while_unroller.h"
#include "axle/gpu/lapack_to_hlo.h"
#include "axle/gpu/lu_pivots_thunk.h"
#include "axle/gpu/row_fusion.h"
#include "axle/gpu/solver_thunk.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/all_reduce_promotion.h"
#include "axle/hlo/transforms/backend_pipeline.h"
#include "axle/hlo/transforms/fusion_utils.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "axle/hlo/transforms/scan_to_while.h"
#include "axle/hlo/transforms/sharding_remover.h"
#include "axle/hlo/transforms/side_effects.h"
#include "axle/hlo/transforms/single_device_collectives.h"
#include "axle/hlo/transforms/topk_decomposer.h"
#include "axle/hlo/transforms/while_loop_simplifier.h"
#include "axle/runtime/compilation_cache.h"

namespace axle::gpu {
namespace {

// A dump that cannot be written is a warning, not a failed compile.
void WarnIfNotWritten(const absl::Status& written) {
  if (!written.ok()) {
    std::fprintf(stderr, "axle: warning: %s\n", std::string(written.message()).c_str());
  }
}

// Writes XLA's `{"known_trip_count":{"n":"N"}}` into the backend_config
// of every while whose trip count CountWhileTrips finds (an induction
// variable initialized to a constant, stepped by a constant, compared with a
// constant) and whose condition has no side effects: the program builder
// then runs its body N times without reading a predicate on the host
// (KnownTripCount, gpu_program.h). Runs before fusion, which hides the
// pattern inside kernels. A count XLA already wrote (optimized HLO) is kept
// where the pattern is not found; one it contradicts is replaced.
class GpuAnnotateWhileTripCounts : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-annotate-while-trip-counts"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    // Counted by stepping the induction variable: loops of more trips
    // than this keep their predicate.
    constexpr int64_t kMaxCountedTrips = int64_t{1} << 22;
    bool changed = false;
    for (HloComputation* computation : module->computations()) {
      for (HloInstruction* instruction : computation->instructions()) {
        if (instruction->opcode() != HloOpcode::kWhile ||
            ComputationHasSideEffect(*instruction->while_condition())) {
          continue;
        }
        std::optional<int64_t> trips = CountWhileTrips(*instruction, kMaxCountedTrips);
        if (!trips.has_value() || *trips >= kMaxCountedTrips) continue;
        std::string config = absl::StrCat(R"({"known_trip_count":{"n":")", *trips, R"("}})");
        if (instruction->raw_backend_config_string() == config) continue;
        instruction->set_raw_backend_config_string(std::move(config));
        changed = true;
      }
    }
    return changed;
  }
};

// A module of several devices (replicas or partitions) keeps its
// collectives, which run on NCCL (nccl_collective_thunk.h).
absl::Status CheckSupported(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      switch (instruction->opcode()) {
        // Custom calls in program order (their thunks); tokens have no
        // buffer; rng is a library op (gpu_thunk_factories.h).
        case HloOpcode::kAddDependency:
        case HloOpcode::kAfterAll:
        case HloOpcode::kCustomCall:
        case HloOpcode::kRng:
        case HloOpcode::kRngGetAndUpdateState:
          continue;
        default:
          break;
      }
      if (!instruction->HasSideEffect()) continue;
      switch (instruction->opcode()) {
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
          return GpuUnsupported(*instruction,
                                "infeed and outfeed (transfers with the host) are not supported on "
                                "CUDA yet");
        case HloOpcode::kSend:
        case HloOpcode::kRecv:
        case HloOpcode::kSendDone:
        case HloOpcode::kRecvDone:
          // With several devices, each send/recv pair on one channel
          // becomes a collective-permute (single_device_collectives.h), run
          // on NCCL; the program builder refuses those left over.
          if (module.config().replica_count * module.config().num_partitions > 1) continue;
          return GpuUnsupported(*instruction,
                                "send and recv are not supported on CUDA in a module of one "
                                "device");
        default:
          return GpuUnsupported(*instruction, "side-effecting ops are not supported on CUDA yet");
      }
    }
  }
  return absl::OkStatus();
}

// A copy of a tuple becomes a tuple of copies of its leaves (each leaf in
// the copy's layout): a loop fusion computes arrays, and XLA's tuple copy
// holds the same values.
class GpuTupleCopyExpander : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-tuple-copy-expander"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    bool changed = false;
    for (HloComputation* computation : module->MakeComputationPostOrder()) {
      if (computation->IsFusionComputation()) continue;
      for (HloInstruction* copy : computation->MakeInstructionPostOrder()) {
        if (copy->opcode() != HloOpcode::kCopy || !copy->shape().IsTuple() ||
            !copy->control_predecessors().empty() || !copy->control_successors().empty() ||
            ReachesAsyncOp(*copy)) {
          continue;
        }
        if (!AllLeavesAreArrays(copy->shape())) continue;
        HloInstruction* leaves = CopyLeaves(copy->mutable_operand(0), copy->shape());
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(copy, leaves));
        changed = true;
      }
    }
    return changed;
  }

 private:
  // Whether `copy` carries an asynchronous op's state (to a -done or
  // -update, which must see the copy: the lowering of async pairs does).
  static bool ReachesAsyncOp(const HloInstruction& copy) {
    for (const HloInstruction* user : copy.users()) {
      if (user->opcode() == HloOpcode::kAsyncUpdate || HloOpcodeIsAsyncDone(user->opcode())) {
        return true;
      }
    }
    return false;
  }

  // Whether every leaf of `shape` is an array (not a token): the copy is
  // then its leaves' copies.
  static bool AllLeavesAreArrays(const Shape& shape) {
    bool arrays = true;
    ShapeUtil::ForEachSubshape(shape, [&](const Shape& leaf, const ShapeIndex&) {
      arrays = arrays && (leaf.IsArray() || leaf.IsTuple());
    });
    return arrays;
  }

  // `value` copied leaf by leaf into `shape` (AllLeavesAreArrays).
  static HloInstruction* CopyLeaves(HloInstruction* value, const Shape& shape) {
    if (shape.IsArray()) {
      return value->parent()->AddInstruction(
          HloInstruction::Create(HloOpcode::kCopy, shape, {value}));
    }
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < static_cast<int64_t>(shape.tuple_shapes().size()); ++i) {
      elements.push_back(CopyLeaves(MakeGetTupleElement(value, i), shape.tuple_shapes(i)));
    }
    return MakeTuple(value->parent(), elements);
  }
};

class GpuCompiler : public Compiler {
 public:
  GpuCompiler(const se::Platform* platform, const CudaDevice& device,
              se::DeviceMemoryAllocator* allocator)
      : platform_(platform), device_(device), allocator_(allocator) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) override {
    PtxOptions ptx;
    // PTX for the device's architecture (sm_90 PTX also runs on newer
    // devices, compiled by the driver).
    ptx.arch = device_.compute_capability_major() >= 9 ? "sm_90" : device_.ArchName();
    AXLE_ASSIGN_OR_RETURN(
        GpuCompiledProgram compiled,
        CompileGpuProgramCached(std::move(module), options, ptx,
                                GpuPrepareOptionsFromEnv(options.run_backend_only())));
    const std::string name = compiled.module->name();
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> executable,
                          GpuExecutable::Create(std::move(compiled.module), platform_, device_,
                                                allocator_, std::move(compiled.program)));
    // With AXLE_DUMP_TO: the thunks and the arena's layout.
    if (const std::string dir = EnvironmentOptions::Read().dump_to; !dir.empty()) {
      WarnIfNotWritten(WriteWholeFile(
          absl::StrCat(dir, "/", name, ".gpu-program.txt"),
          absl::StrCat(GpuProgramToString(executable->program()),
                       executable->buffer_assignment().ToString(), "CUDA graphs (gpu_graph.h):\n",
                       executable->graph_plan().ToString(executable->program().thunks))));
    }
    return std::unique_ptr<Executable>(std::move(executable));
  }

  bool ComputesCustomCall(const HloCustomCallInstruction& custom_call) const override {
    return LapackCallIsAnHloOp(custom_call) || IsSolverCall(custom_call) ||
           custom_call.custom_call_target() == kLuPivotsToPermutationTarget ||
           IsCudnnConvCall(custom_call) || IsBlockScaledDotCall(custom_call) ||
           IsTopKCustomCall(custom_call);
  }

 private:
  const se::Platform* platform_;
  const CudaDevice& device_;
  se::DeviceMemoryAllocator* allocator_;
};

// The GPU's edit of the shared pass list: `fusion` becomes the trip
// counts, the convolutions' padding made what cuDNN takes (an explicit pad
// of the input, conv_padding_legalization.h), dots of types no GEMM takes
// as a multiply and a reduce (dot_to_reduce.h), the dot canonicalizer (dots
// no single GEMM computes get transposes and reshapes around them,
// dot_canonicalizer.h, which then fuse into their neighbours) and the cpu
// fusion pass, except that no reduction fuses into a consumer: the cpu
// kernels compute a row reduction once per row (row_index_analysis.h), a
// GPU loop kernel would compute it once per output element (softmax's
// divide would reduce the row again for each of its elements). Every reduce
// is the root of its own fusion here; the row fusion merger (row_fusion.h)
// later fuses row reductions into consumers whose kernel computes them once
// per row. f32 exp, divide, sqrt and rsqrt are duplicated into several
// consumers as cheap ops are (softmax's exp into its sum and its divide,
// which then merge into one kernel).
// At most this many instructions of a loop kernel behind broadcasts
// (computed again by each thread that reads them).
constexpr int64_t kMaxRecomputedInstructions = 32;
// A loop kernel's size cap (the cpu's is 200): an unrolled random-number
// generator's rounds (threefry2x32: 20 rounds of 7 ops, key injections,
// the conversion to floats) are one kernel, as on XLA:GPU.
constexpr int64_t kMaxFusedInstructions = 1000;

// The GPU's rewrites in front of its fusion (or in its place, when only the
// backend's passes run): trip counts, convolution padding, dots, and the
// column-reduction split when AXLE_GPU_SPLIT_COLUMNS asks for it.
void AddGpuPreFusionPasses(HloPassPipeline& pipeline) {
  pipeline.AddPass<GpuAnnotateWhileTripCounts>();
  pipeline.AddPass<GpuConvPaddingLegalization>();
  pipeline.AddPass<GpuDotToReduce>();
  pipeline.AddPass<GpuDotCanonicalizer>();
  if (EnvironmentOptions::Read().gpu_split_columns.value_or(false)) {
    pipeline.AddPass<GpuColumnReductionSplitter>();
  }
}

absl::StatusOr<bool> ReplaceFusion(absl::string_view name, HloPassPipeline& pipeline) {
  if (name != "fusion") return true;
  AddGpuPreFusionPasses(pipeline);
  InstructionFusion::Options fusion_options;
  fusion_options.fuse_reductions_into_consumers = false;
  fusion_options.duplicate_fast_gpu_math = true;
  fusion_options.max_recomputed_instructions = kMaxRecomputedInstructions;
  fusion_options.max_fused_instructions = kMaxFusedInstructions;
  pipeline.AddPass<InstructionFusion>(fusion_options);
  return false;
}

// `status`, said to be the CUDA backend's where it does not name CUDA
// already (a shared pass's refusal: a collective among more devices than the
// module has, ...).
absl::Status NamingCuda(const absl::Status& status) {
  if (status.ok() || absl::StrContains(status.message(), "CUDA")) return status;
  return absl::Status(status.code(), absl::StrCat("CUDA backend: ", status.message()));
}

// What the compilation cache keeps of a CUDA compilation: the prepared
// module. Its kernels' PTX stays in the process's kernel cache
// (CompileLoopFusionCached, which drops none), where rebuilding the
// program finds it.
struct GpuCompiledArtifact : CompiledArtifact {
  std::shared_ptr<const HloModule> prepared;
};

// The compilation key of `module`: the shared key (module fingerprint,
// build options, platform "CUDA") with what else changes the program: the
// PTX options and the prepare options (with the environment's
// AXLE_GPU_SPLIT_COLUMNS, which AddGpuPreFusionPasses reads).
CompilationKey MakeGpuCompilationKey(const HloModule& module, const ExecutableBuildOptions& build,
                                     const PtxOptions& ptx, const GpuPrepareOptions& prepare) {
  CompilationKey key = MakeCompilationKey(module, build, "CUDA");
  absl::StrAppend(
      &key.options, " ptx_arch=", ptx.arch, " ptx_block_size=", ptx.block_size,
      " libdevice=", ptx.libdevice_path, " prepare_backend_only=", prepare.run_backend_only,
      " unroll_loops=", prepare.unroll_loops, " select_conditionals=", prepare.select_conditionals,
      " collectives_on_one_device=", prepare.collectives_on_one_device,
      " split_columns=", EnvironmentOptions::Read().gpu_split_columns.value_or(false));
  return key;
}

}  // namespace

GpuPrepareOptions GpuPrepareOptionsFromEnv(bool run_backend_only) {
  GpuPrepareOptions options;
  options.run_backend_only = run_backend_only;
  const EnvironmentOptions environment = EnvironmentOptions::Read();
  options.unroll_loops = environment.gpu_unroll.value_or(true);
  options.select_conditionals = environment.gpu_select_conditionals.value_or(true);
  options.collectives_on_one_device = environment.gpu_collectives_on_one_device;
  return options;
}

absl::Status PrepareGpuModule(HloModule* module, bool run_backend_only) {
  return PrepareGpuModule(module, GpuPrepareOptionsFromEnv(run_backend_only));
}

absl::Status PrepareGpuModule(HloModule* module, const GpuPrepareOptions& options) {
  const bool run_backend_only = options.run_backend_only;
  AXLE_RETURN_IF_ERROR(CheckSupported(*module));
  HloPassPipeline pipeline("gpu-prepare");
  // Fusions already formed (XLA's dumps and pass tests) that no loop kernel
  // computes, unfused first (gpu_fusion_inliner.h).
  pipeline.AddPass<GpuFusionInliner>();
  pipeline.AddPass<GpuTupleCopyExpander>();
  // JAX's sharding annotations are identities (sharding_remover.h).
  pipeline.AddPass<ShardingRemover>();
  // Several devices: the collectives stay for NCCL (-start/-done pairs made
  // synchronous, send/recv pairs permutes); one: they become copies, unless
  // collectives_on_one_device.
  pipeline.AddPass<LowerSingleDeviceCollectives>(/*keep_multi_device=*/true,
                                                 options.collectives_on_one_device);
  // NCCL has no 16-bit integers: those reductions run in 32 bits, as
  // XLA:GPU's AllReducePromotion does them.
  pipeline.AddPass<AllReducePromotion>(AllReducePromotion::GpuTypes());
  // A collective-permute of several operands: one per operand
  // (collective_permute_splitter.h).
  pipeline.AddPass<GpuCollectivePermuteSplitter>();
  // NCCL moves contiguous pieces: gathers, scatters and exchanges along
  // another dimension run along a leading one between transposes
  // (collective_major_dimension.h).
  pipeline.AddPass<GpuCollectiveMajorDimension>();
  // jaxlib's CPU LAPACK calls that are HLO ops (lapack_to_hlo.h).
  pipeline.AddPass<GpuLapackToHlo>();
  // ragged-dot and scaled-dot as dots cuBLAS runs (dot_variants_to_dot.h).
  pipeline.AddPass<GpuDotVariantsToDot>();
  // XLA:GPU's own __cudnn$conv* calls as convolutions (cudnn_conv_calls.h).
  pipeline.AddPass<GpuCudnnConvCallsToHlo>();
  // topk, and XLA's TopK custom calls, as a sort and slices.
  pipeline.AddPass<TopKDecomposer>(TopKDecomposer::Predicate(), /*custom_calls=*/true);
  pipeline.AddPass<ScanToWhile>();
  // The cpu backend's simplification and fusion (backend_pipeline.h), with
  // the GPU's own fusion; cheap conditionals made selects and small counted
  // loops unrolled in front of the first while-loop-simplifier (after
  // call-inliner, algsimp and tuple-simplifier: bodies without calls, init
  // tuples of constants), so that what follows simplifies and fuses them.
  bool edited = false;
  auto edit = [&](absl::string_view name, HloPassPipeline& passes) -> absl::StatusOr<bool> {
    if (name == "while-loop-simplifier" && !edited) {
      if (options.select_conditionals) passes.AddPass<GpuConditionalToSelect>();
      if (options.unroll_loops) passes.AddPass<GpuWhileLoopUnroller>();
      edited = true;
    }
    return ReplaceFusion(name, passes);
  };
  AXLE_RETURN_IF_ERROR(AddBackendPreparationPasses(pipeline, run_backend_only, edit));
  if (run_backend_only) AddGpuPreFusionPasses(pipeline);
  // Again for the collectives whose layouts the shared passes changed
  // (layout-normalization makes them descending): their transposes then
  // get loop fusions of their own below.
  pipeline.AddPass<GpuCollectiveMajorDimension>();
  // Every op that needs a kernel into a one-op loop fusion (the cpu
  // backend's pass with the GPU's choice of ops); side-effecting and
  // asynchronous ops, and the others no loop fusion computes, are left for
  // the program builder to name.
  pipeline.AddPass<WrapInLoopFusions>(
      "gpu-wrap-in-loop-fusions",
      [](const HloInstruction& instruction) {
        return !HasOwnGpuThunk(instruction) && !IsPlumbing(instruction.opcode()) &&
               !instruction.HasSideEffect();
      },
      [](const HloInstruction&) { return false; }, /*stop_at_unfusible=*/false);
  // Row reductions and their consumers into one kernel each (row_fusion.h:
  // softmax and layer norm a kernel per row), once every op is a fusion.
  pipeline.AddPass<GpuRowFusionMerger>();
  // A producer fused into two consumers that then merge leaves two copies
  // of its reductions in one kernel: computed once after CSE.
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> cse, CreatePass("cse"));
  pipeline.AddPass(std::move(cse));
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> dce, CreatePass("dce"));
  pipeline.AddPass(std::move(dce));
  return NamingCuda(pipeline.Run(module).status());
}

absl::StatusOr<GpuProgram> CompileGpuProgram(HloModule* module, const PtxOptions& options,
                                             bool run_backend_only) {
  return CompileGpuProgram(module, options, GpuPrepareOptionsFromEnv(run_backend_only));
}

absl::StatusOr<GpuProgram> CompileGpuProgram(HloModule* module, const PtxOptions& options,
                                             const GpuPrepareOptions& prepare) {
  AXLE_RETURN_IF_ERROR(PrepareGpuModule(module, prepare));
  absl::StatusOr<GpuProgram> program = BuildGpuProgram(*module, options);
  if (!program.ok()) return NamingCuda(program.status());
  // With AXLE_DUMP_TO: the HLO front of the buffer assignment with the
  // program's in-place choices, as the cpu compiler dumps it.
  if (const std::string dir = EnvironmentOptions::Read().dump_to; !dir.empty()) {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> assignment,
                          AssignBuffers(*module, InPlaceChoicesOptions(program->in_place)));
    WarnIfNotWritten(
        WriteWholeFile(absl::StrCat(dir, "/", module->name(), ".hlo-buffer-assignment.txt"),
                       assignment->ToString()));
  }
  return program;
}

absl::StatusOr<GpuCompiledProgram> CompileGpuProgramCached(std::unique_ptr<HloModule> module,
                                                           const ExecutableBuildOptions& build,
                                                           const PtxOptions& ptx,
                                                           const GpuPrepareOptions& prepare) {
  GpuCompiledProgram compiled;
  if (!EnvironmentOptions::Read().dump_to.empty()) {
    AXLE_ASSIGN_OR_RETURN(compiled.program, CompileGpuProgram(module.get(), ptx, prepare));
    compiled.module = std::move(module);
    return compiled;
  }
  const CompilationKey key = MakeGpuCompilationKey(*module, build, ptx, prepare);
  CompilationCache& cache = CompilationCache::Global();
  if (auto cached = std::static_pointer_cast<const GpuCompiledArtifact>(cache.Find(key))) {
    // New thunks over the kept module, their kernels from the kernel cache.
    absl::StatusOr<GpuProgram> program = BuildGpuProgram(*cached->prepared, ptx);
    if (!program.ok()) return NamingCuda(program.status());
    compiled.module = cached->prepared;
    compiled.program = *std::move(program);
    return compiled;
  }
  AXLE_ASSIGN_OR_RETURN(compiled.program, CompileGpuProgram(module.get(), ptx, prepare));
  compiled.module = std::move(module);
  auto artifact = std::make_shared<GpuCompiledArtifact>();
  artifact->prepared = compiled.module;
  cache.Insert(key, std::move(artifact));
  return compiled;
}

std::unique_ptr<Compiler> MakeGpuCompiler(const se::Platform* platform, const CudaDevice& device,
                                          se::DeviceMemoryAllocator* allocator) {
  return std::make_unique<GpuCompiler>(platform, device, allocator);
}

}  // namespace axle::gpu
