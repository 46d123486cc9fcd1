// The CPU compiler and the `cpu` platform registration.
//
// Compile: reject what this version cannot run (side effects, ops no
// emitter knows: each an Unimplemented naming the op), rewrite the
// collectives of a one-device run into plumbing
// (hlo/transforms/single_device_collectives.h) and narrow-float topk into a
// sort (hlo/transforms/topk_decomposer.h), compute on descending layouts only
// (`layout-normalization`), expand batch norms into reduces and elementwise
// ops (`batchnorm-expander`), fuse dot epilogues
// (`dot-epilogue-fusion`) then elementwise ops (`fusion`), wrap every
// remaining array op that has no thunk emitter of its own into a one-op loop
// fusion (in the entry and in every while body / condition and branch;
// a copy of a tuple becomes the tuple of its elements' copies first),
// then let ProgramBuilder (program_builder.h) turn the entry into the thunks
// of a CpuExecutable. These passes run as one HloPassPipeline
// ("cpu-prepare"), so AXLE_DUMP_TO dumps and times them like any pipeline.
//
// Caches: a module compiled before (by structural identity, with the same
// options) is not compiled again: the optimized module and the kernels' code
// come from the compilation cache (runtime/compilation_cache.h), in memory
// or, with AXLE_CACHE_DIR set, from disk (executable_cache.h), and only the
// thunks and the arena are built anew. With AXLE_CACHE_DIR set, the Jit's
// object cache (jit.h) is also on, so a module whose passes ran again (a new
// build, other options) still skips LLVM for kernels it has seen. With
// AXLE_DUMP_TO set, the caches are bypassed (so that the dump is
// complete) and the LLVM IR before and after optimization is written to
// DIR/<module>.ir-before-optimization.ll and .ir-after-optimization.ll, and
// the LLVM and thunk timings are appended to DIR/<module>.timings.txt.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/dot_operand_transpose.h"
#include "axle/cpu/runtime/dot_output_transpose.h"
#include "axle/cpu/runtime/executable_cache.h"
#include "axle/cpu/runtime/half_precision_dot_conv_upcast.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/cpu/runtime/topk_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/backend_pipeline.h"
#include "axle/hlo/transforms/fusion_utils.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/scan_to_while.h"
#include "axle/hlo/transforms/sharding_remover.h"
#include "axle/hlo/transforms/single_device_collectives.h"
#include "axle/hlo/transforms/topk_decomposer.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/platform.h"

// Referenced by the link options of axle_cpu_runtime so that this object
// file, and the registration below, is kept in every program.
extern "C" {
int axle_cpu_platform_anchor = 0;
}

namespace axle::cpu {
namespace {

absl::Status CheckSupported(const HloModule& module) {
  const std::vector<HloComputation*> control_flow = ControlFlowComputations(module);
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      switch (instruction->opcode()) {
        case HloOpcode::kCustomCall:
        case HloOpcode::kAfterAll:
        case HloOpcode::kAddDependency:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
          // A CustomCallThunk or FeedThunk (feed_thunk.h) each, in program
          // order; tokens have no buffer.
          // Not inside a computation an op embeds (a reducer, a comparator).
          if (std::find(control_flow.begin(), control_flow.end(), computation) ==
              control_flow.end()) {
            return Unsupported(*instruction,
                               "only the entry and the computations control flow runs may hold "
                               "this op");
          }
          continue;
        default:
          break;
      }
      // rng and rng-get-and-update-state draw from the run's rng state
      // (rng_thunk.h).
      const bool rng = instruction->opcode() == HloOpcode::kRng ||
                       instruction->opcode() == HloOpcode::kRngGetAndUpdateState;
      // With several devices, send/recv pairs become collective-permutes
      // (single_device_collectives.h).
      const bool send_recv = instruction->opcode() == HloOpcode::kSend ||
                             instruction->opcode() == HloOpcode::kRecv ||
                             instruction->opcode() == HloOpcode::kSendDone ||
                             instruction->opcode() == HloOpcode::kRecvDone;
      const bool several_devices =
          module.config().replica_count * module.config().num_partitions > 1;
      if (instruction->HasSideEffect() && !rng && !(send_recv && several_devices)) {
        return Unsupported(*instruction, "side-effecting ops are not supported yet");
      }
    }
  }
  return absl::OkStatus();
}

// After `layout-normalization`, only ops that pass buffers on (parameters,
// tuples, bitcasts, control flow) and layout-constrained custom calls (their
// buffers are laid out as their constraints and result say:
// custom_call_thunk.h) may hold arrays in other layouts than the descending
// one; in a loop fusion such an array is only read or written through a
// bitcast, which the elemental emitter linearizes as memory does.
absl::Status CheckLayouts(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      switch (instruction->opcode()) {
        case HloOpcode::kParameter:
        case HloOpcode::kTuple:
        case HloOpcode::kGetTupleElement:
        case HloOpcode::kBitcast:
        case HloOpcode::kFusion:
        case HloOpcode::kWhile:
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
        case HloOpcode::kAddDependency:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
          continue;
        case HloOpcode::kCustomCall:
          if (cast<HloCustomCallInstruction>(instruction)
                  ->attrs()
                  .operand_layout_constraints.has_value()) {
            continue;
          }
          break;
        default:
          break;
      }
      bool layouts_ok = true;
      ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape& shape, const ShapeIndex&) {
        if (shape.IsArray() && !ShapeUtil::HasDescendingLayout(shape)) layouts_ok = false;
      });
      if (!layouts_ok) {
        return Unsupported(*instruction, absl::StrCat("the non-default layout of ",
                                                      instruction->shape().ToString(true),
                                                      " is not supported yet"));
      }
    }
  }
  return absl::OkStatus();
}

// Whether `instruction` becomes a loop fusion (not plumbing, no thunk
// emitter of its own).
bool NeedsLoopFusion(const HloInstruction& instruction) {
  return !IsPlumbing(instruction.opcode()) && FindThunkEmitter(instruction) == nullptr;
}

// The cpu backend's edit of the shared pass list (backend_pipeline.h):
// as XLA:CPU, bf16 all-reduce and reduce-scatter compute in f32
// (all_reduce_promotion.h) before the bf16 reductions do; loop-invariant values leave while bodies
// (a weight scaled or cast inside a scan body is computed once, not every step) before the loops'
// constants are sunk, the tuple of the old loop's elements that this leaves folded away; before
// fusion, dot operands the matmul would gather get a transpose that fuses into their producers
// (dot_operand_transpose.h), a transposed dot result becomes the swapped
// dot (dot_output_transpose.h), and bias adds and activations join their
// dot or convolution (dot-epilogue-fusion); multi-output fusion merges sibling column reductions
// too (cpu-multi-output-fusion: one kernel reads batch norm backward's inputs once for its sums).
absl::StatusOr<bool> AddCpuPasses(absl::string_view name, HloPassPipeline& pipeline) {
  if (name == "multi-output-fusion") {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass,
                          CreatePass("cpu-multi-output-fusion"));
    pipeline.AddPass(std::move(pass));
    return false;
  }
  if (name == "bf16-reductions-in-f32") {
    // XLA:CPU promotes bf16 all-reduce and reduce-scatter to f32 just before
    // its FloatNormalization.
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> promotion,
                          CreatePass("all-reduce-promotion"));
    pipeline.AddPass(std::move(promotion));
  }
  if (name == "while-loop-constant-sinking") {
    for (const char* hoisting : {"while-loop-invariant-code-motion", "tuple-simplifier"}) {
      AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass, CreatePass(hoisting));
      pipeline.AddPass(std::move(pass));
    }
  }
  if (name == "fusion") {
    pipeline.AddPass<DotOutputTranspose>();
    pipeline.AddPass<DotOperandTranspose>();
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> epilogue,
                          CreatePass("dot-epilogue-fusion"));
    pipeline.AddPass(std::move(epilogue));
  }
  return true;
}

// A deep copy of `value`: each array leaf copied, tuples rebuilt around the
// copies (tokens passed on as they are).
HloInstruction* DeepCopy(HloComputation* computation, HloInstruction* value) {
  if (value->shape().IsArray()) {
    return computation->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, value->shape(), {value}));
  }
  if (!value->shape().IsTuple()) return value;
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < static_cast<int64_t>(value->shape().tuple_shapes().size()); ++i) {
    elements.push_back(DeepCopy(computation, MakeGetTupleElement(value, i)));
  }
  return MakeTuple(computation, elements);
}

// Rewrites every `copy` of a tuple (in the entry and in every computation
// control flow runs) into the tuple of its elements' copies, nested tuples
// included, as XLA's copy of a tuple is a deep copy.
absl::StatusOr<bool> ExpandTupleCopies(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != HloOpcode::kCopy || !instruction->shape().IsTuple()) continue;
      HloInstruction* copied = DeepCopy(computation, instruction->mutable_operand(0));
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, copied));
      changed = true;
    }
  }
  return changed;
}

// Groups the outputs of a loop-kernel fusion (no thunk emitter of its own)
// whose root tuple holds arrays of several shapes by their dimensions, in
// order of first appearance: one group per loop the outputs need. Fewer
// than two groups: nothing to split.
std::vector<std::vector<int64_t>> OutputGroupsByShape(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kFusion || FindThunkEmitter(instruction)) return {};
  const HloInstruction* root = cast<HloFusionInstruction>(&instruction)
                                   ->fused_instructions_computation()
                                   ->root_instruction();
  if (root->opcode() != HloOpcode::kTuple) return {};
  std::vector<std::vector<int64_t>> groups;
  std::vector<const std::vector<int64_t>*> dimensions;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const Shape& shape = root->operand(i)->shape();
    if (!shape.IsArray()) return {};
    auto same = std::find_if(dimensions.begin(), dimensions.end(),
                             [&](const auto* d) { return *d == shape.dimensions(); });
    if (same == dimensions.end()) {
      dimensions.push_back(&shape.dimensions());
      groups.emplace_back();
      same = dimensions.end() - 1;
    }
    groups[same - dimensions.begin()].push_back(i);
  }
  return groups.size() < 2 ? std::vector<std::vector<int64_t>>{} : groups;
}

// A fusion of the same kind computing only `outputs` (indices into the
// root tuple of `fusion`'s fused computation): the instructions they need,
// over the operands they read. Its result is the one output's, or a tuple.
HloFusionInstruction* FusionOfOutputs(HloFusionInstruction* fusion,
                                      const std::vector<int64_t>& outputs) {
  HloModule* module = fusion->parent()->parent();
  const HloComputation* fused = fusion->fused_instructions_computation();
  const HloInstruction* root = fused->root_instruction();
  absl::flat_hash_set<const HloInstruction*> needed;
  std::vector<const HloInstruction*> stack;
  stack.reserve(outputs.size());
  for (int64_t output : outputs) stack.push_back(root->operand(output));
  while (!stack.empty()) {
    const HloInstruction* next = stack.back();
    stack.pop_back();
    if (!needed.insert(next).second) continue;
    for (const HloInstruction* operand : next->operands()) stack.push_back(operand);
  }
  auto computation = std::make_unique<HloComputation>(module->GetUniqueName("fused_computation"));
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
  std::vector<HloInstruction*> operands;
  for (HloInstruction* instruction : fused->MakeInstructionPostOrder()) {
    if (!needed.contains(instruction)) continue;
    if (const auto* parameter = dyn_cast<HloParameterInstruction>(instruction)) {
      auto clone = std::make_unique<HloParameterInstruction>(
          HloOpcode::kParameter, parameter->shape(), absl::Span<HloInstruction* const>{});
      clone->mutable_attrs()->parameter_number = static_cast<int64_t>(operands.size());
      clone->SetName(module->GetUniqueName(parameter->name()));
      operands.push_back(fusion->mutable_operand(parameter->parameter_number()));
      clones[instruction] = computation->AddInstruction(std::move(clone));
      continue;
    }
    std::vector<HloInstruction*> clone_operands;
    for (const HloInstruction* operand : instruction->operands()) {
      clone_operands.push_back(clones.at(operand));
    }
    std::unique_ptr<HloInstruction> clone =
        instruction->CloneWithNewOperands(instruction->shape(), clone_operands);
    clone->SetName(module->GetUniqueName(instruction->name()));
    clones[instruction] = computation->AddInstruction(std::move(clone));
  }
  std::vector<HloInstruction*> elements;
  elements.reserve(outputs.size());
  for (int64_t output : outputs) elements.push_back(clones.at(root->operand(output)));
  HloInstruction* new_root =
      elements.size() == 1 ? elements[0] : MakeTuple(computation.get(), elements);
  computation->set_root_instruction(new_root);
  const Shape shape = new_root->shape();
  HloComputation* added_computation = module->AddEmbeddedComputation(std::move(computation));
  auto split = std::make_unique<HloFusionInstruction>(HloOpcode::kFusion, shape, operands);
  split->mutable_attrs()->kind = fusion->fusion_kind();
  split->SetName(module->GetUniqueName(fusion->name()));
  split->AppendCalledComputation(added_computation);
  auto* added = cast<HloFusionInstruction>(fusion->parent()->AddInstruction(std::move(split)));
  added_computation->SetFusionInstruction(added);
  return added;
}

// Splits a multi-output fusion whose outputs differ in shape (valid in XLA;
// the loop kernel runs one iteration space) into one fusion per output
// shape; instructions that several groups need are computed in each.
absl::Status SplitByOutputShape(HloFusionInstruction* fusion,
                                const std::vector<std::vector<int64_t>>& groups) {
  HloComputation* computation = fusion->parent();
  const int64_t output_count = static_cast<int64_t>(fusion->shape().tuple_shapes().size());
  std::vector<HloInstruction*> values(output_count);
  for (const std::vector<int64_t>& group : groups) {
    HloFusionInstruction* split = FusionOfOutputs(fusion, group);
    for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
      values[group[i]] = group.size() == 1 ? split : MakeGetTupleElement(split, i);
    }
  }
  HloComputation* old_fused = fusion->fused_instructions_computation();
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(fusion, MakeTuple(computation, values)));
  return computation->parent()->RemoveEmbeddedComputation(old_fused);
}

// XLA's copy of a tuple is a deep copy: every `copy` of a tuple, in the
// entry and in every computation control flow runs, becomes the tuple of
// its elements' copies (ExpandTupleCopies), before ops are wrapped into
// loop fusions.
class CpuExpandTupleCopies : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-expand-tuple-copies"; }
  absl::StatusOr<bool> Run(HloModule* module) override { return ExpandTupleCopies(module); }
};

// A reshape left outside fusions (its producer and consumer fuse with
// neither it nor each other: a multi-output fusion's result reshaped for a
// dynamic-update-slice, an RNN step's output) between descending layouts
// keeps every element at its offset: it becomes a bitcast (plumbing, no
// kernel and no copy), as XLA's algebraic simplifier turns reshapes that
// are bitcasts into bitcasts.
class CpuReshapeToBitcast : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-reshape-to-bitcast"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    bool changed = false;
    for (HloComputation* computation : ControlFlowComputations(*module)) {
      for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        if (instruction->opcode() != HloOpcode::kReshape) continue;
        HloInstruction* operand = instruction->mutable_operand(0);
        if (!instruction->shape().IsArray() || !operand->shape().IsArray() ||
            !ShapeUtil::HasDescendingLayout(instruction->shape()) ||
            !ShapeUtil::HasDescendingLayout(operand->shape())) {
          continue;
        }
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(
            instruction, MakeBitcast(operand, instruction->shape())));
        changed = true;
      }
    }
    return changed;
  }
};

// A loop-kernel fusion whose outputs differ in shape (the loop kernel runs
// one iteration space) is split into one fusion per output shape;
// instructions that several groups need are computed in each.
class CpuSplitFusionsByOutputShape : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-split-fusions-by-output-shape"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    bool changed = false;
    for (HloComputation* computation : ControlFlowComputations(*module)) {
      for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        const std::vector<std::vector<int64_t>> groups = OutputGroupsByShape(*instruction);
        if (groups.empty()) continue;
        AXLE_RETURN_IF_ERROR(SplitByOutputShape(cast<HloFusionInstruction>(instruction), groups));
        changed = true;
      }
    }
    return changed;
  }
};

// Turns the entry, and every computation control flow runs, into fusions,
// plumbing and ops with thunk emitters. Sharding annotations, collectives
// (one device) and topk are rewritten first; calls are inlined next (the rare call left behind
// runs its computation's thunks in place).
// `run_backend_only` (ExecutableBuildOptions, as XLA's): the module is
// compiled as given, optimized already (its fusions kept); only what
// codegen needs runs (the lowerings, layout normalization, the batch-norm
// expansion, loop fusions around ops that have none).
absl::Status PrepareModule(HloModule* module, HloPassPipeline& pipeline, bool run_backend_only) {
  // JAX's sharding annotations (with_sharding_constraint, shard_map's shape
  // changes) are identities here.
  pipeline.AddPass<ShardingRemover>();
  pipeline.AddPass<LowerSingleDeviceCollectives>(/*keep_multi_device=*/true);
  // The topk thunk runs the others as a partial sort.
  pipeline.AddPass<TopKDecomposer>([](const HloInstruction& topk) {
    return topk.operand_count() != 1 || !topk.operand(0)->shape().IsArray() ||
           !TopKThunkSupports(topk.operand(0)->shape().element_type());
  });
  pipeline.AddPass<ScanToWhile>();
  pipeline.AddPass<HalfPrecisionDotConvUpcast>();
  // The simplification and fusion XLA:CPU runs (backend_pipeline.h).
  AXLE_RETURN_IF_ERROR(AddBackendPreparationPasses(pipeline, run_backend_only, AddCpuPasses));
  pipeline.AddPass<CpuExpandTupleCopies>();
  pipeline.AddPass<CpuReshapeToBitcast>();
  // Every op that needs a loop fusion, until the first no loop fusion can
  // compute (rejected below). Fusions with thunk emitters of their own (dot
  // epilogues) keep their root.
  pipeline.AddPass<WrapInLoopFusions>(
      "cpu-wrap-in-loop-fusions", NeedsLoopFusion,
      [](const HloInstruction& fusion) { return FindThunkEmitter(fusion) != nullptr; },
      /*stop_at_unfusible=*/true);
  pipeline.AddPass<CpuSplitFusionsByOutputShape>();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> dce, CreatePass("dce"));
  pipeline.AddPass(std::move(dce));
  AXLE_RETURN_IF_ERROR(pipeline.Run(module).status());
  AXLE_RETURN_IF_ERROR(CheckLayouts(*module));
  for (const HloComputation* computation : ControlFlowComputations(*module)) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (NeedsLoopFusion(*instruction)) {
        if (HloOpcodeIsAsyncStart(instruction->opcode()) ||
            HloOpcodeIsAsyncDone(instruction->opcode())) {
          return Unsupported(*instruction, "asynchronous ops are not supported yet");
        }
        return Unsupported(*instruction, "ops with tuple or token results are not supported yet");
      }
    }
  }
  return absl::OkStatus();
}

// Compile options for `module`: IR dump hooks when dumping, the disk cache
// when AXLE_CACHE_DIR is set (and not dumping), the LLVM compile threads
// from AXLE_COMPILE_THREADS (unset or 0: JitOptions' default).
CpuCompileOptions MakeCompileOptions(const std::string& dump_dir, const std::string& module_name) {
  CpuCompileOptions options;
  const EnvironmentOptions environment = EnvironmentOptions::Read();
  options.jit.compile_threads = environment.compile_threads;
  if (!dump_dir.empty()) {
    // The kernels may be split into several LLVM modules: the first one
    // written replaces an older file, the others are appended.
    const std::string prefix = absl::StrCat(dump_dir, "/", module_name);
    auto written = std::make_shared<std::set<std::string>>();
    auto hook = [prefix, written](const char* suffix) {
      return [prefix, written, suffix](absl::string_view, absl::string_view text) {
        const std::string path = absl::StrCat(prefix, suffix);
        WriteWholeFile(path, text, /*append=*/!written->insert(path).second).IgnoreError();
      };
    };
    options.jit.ir_before_optimization = hook(".ir-before-optimization.ll");
    options.jit.ir_after_optimization = hook(".ir-after-optimization.ll");
  } else if (!environment.cache_dir.empty()) {
    options.jit.cache_dir = environment.cache_dir;
  }
  return options;
}

// Appends where ProgramBuilder::Build's `build_ms` went to the pipeline's
// timings file.
absl::Status AppendBuildTimings(const std::string& path, const ProgramBuilder& builder,
                                double build_ms) {
  Jit::Timings llvm;
  if (builder.kernels_jit() != nullptr) llvm = builder.kernels_jit()->timings();
  const double emit_ms = builder.kernel_emit_ms();
  // Optimization and codegen are summed over the compile threads; "llvm
  // (wall)" is what they took together.
  const double other_ms = build_ms - emit_ms - llvm.wall_ms;
  std::string text;
  for (const auto& [what, ms] :
       std::vector<std::pair<const char*, double>>{{"cpu: llvm-ir-emission", emit_ms},
                                                   {"cpu: llvm-optimization", llvm.optimize_ms},
                                                   {"cpu: llvm-codegen", llvm.codegen_ms},
                                                   {"cpu: llvm (wall)", llvm.wall_ms},
                                                   {"cpu: other (thunks, jit, dumps)", other_ms}}) {
    absl::StrAppend(&text, absl::StrFormat("%-32s %10.3f ms\n", what, ms));
  }
  return WriteWholeFile(path, text, /*append=*/true);
}

class CpuCompiler : public Compiler {
 public:
  explicit CpuCompiler(const se::Platform* platform) : platform_(platform) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) override {
    AXLE_RETURN_IF_ERROR(CheckSupported(*module));
    HloPassPipeline pipeline("cpu-prepare");
    const std::string dump_dir = pipeline.dump_dir();
    const CpuCompileOptions compile_options = MakeCompileOptions(dump_dir, module->name());
    if (!dump_dir.empty()) {
      return CompileAfresh(std::move(module), pipeline, compile_options,
                           options.run_backend_only());
    }

    const CompilationKey key = MakeCompilationKey(*module, options, platform_->Name());
    CompilationCache& cache = CompilationCache::Global();
    auto cached = std::static_pointer_cast<const CpuCompiledArtifact>(cache.Find(key));
    const std::string disk_dir = compile_options.jit.cache_dir;
    bool from_disk = false;
    if (cached == nullptr && !disk_dir.empty()) {
      cached = ReadExecutableCacheFile(disk_dir, key);
      from_disk = cached != nullptr;
    }
    if (cached != nullptr) {
      auto rebuilt = std::make_shared<CpuCompiledArtifact>();
      absl::StatusOr<std::unique_ptr<Executable>> executable =
          BuildFromArtifact(*cached, compile_options, rebuilt.get());
      if (executable.ok()) {
        if (from_disk) {
          // Kept in memory with the kernels compiled (or loaded) just now.
          cache.CountDisk(CompilationCache::DiskEvent::kHit);
          cache.Insert(key, rebuilt);
        }
        return executable;
      }
      // Kernels that do not match the module: compile afresh (and replace
      // the entry).
      std::fprintf(stderr, "axle: warning: cached compilation of %s not used: %s\n",
                   module->name().c_str(), executable.status().ToString().c_str());
      if (from_disk) cache.CountDisk(CompilationCache::DiskEvent::kRejected);
    }
    auto artifact = std::make_shared<CpuCompiledArtifact>();
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                          CompileAfresh(std::move(module), pipeline, compile_options,
                                        options.run_backend_only(), &*artifact));
    cache.Insert(key, artifact);
    if (!disk_dir.empty()) WriteExecutableCacheFile(disk_dir, key, *artifact);
    return executable;
  }

 private:
  // Runs the passes and ProgramBuilder; fills `artifact` when given.
  absl::StatusOr<std::unique_ptr<Executable>> CompileAfresh(
      std::unique_ptr<HloModule> module, HloPassPipeline& pipeline,
      const CpuCompileOptions& options, bool run_backend_only,
      CpuCompiledArtifact* artifact = nullptr) {
    const std::string dump_dir = pipeline.dump_dir();
    AXLE_RETURN_IF_ERROR(PrepareModule(module.get(), pipeline, run_backend_only));
    auto build_start = std::chrono::steady_clock::now();
    ProgramBuilder builder(options);
    AXLE_ASSIGN_OR_RETURN(CpuProgram program, builder.Build(*module));
    if (!dump_dir.empty()) {
      const double build_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start)
              .count();
      AXLE_RETURN_IF_ERROR(AppendBuildTimings(
          absl::StrCat(dump_dir, "/", module->name(), ".timings.txt"), builder, build_ms));
    }
    std::shared_ptr<const HloModule> optimized(std::move(module));
    if (artifact != nullptr) {
      artifact->optimized = optimized;
      artifact->kernels = builder.kernels_jit();
      artifact->signature = builder.kernels_signature();
    }
    auto executable = std::make_unique<CpuExecutable>(optimized, platform_, std::move(program));
    if (!dump_dir.empty()) {
      AXLE_RETURN_IF_ERROR(WriteWholeFile(
          absl::StrCat(dump_dir, "/", executable->module().name(), ".buffer-assignment.txt"),
          executable->BufferAssignmentText()));
      AXLE_ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> hlo_assignment,
                            executable->HloBufferAssignment());
      AXLE_RETURN_IF_ERROR(WriteWholeFile(
          absl::StrCat(dump_dir, "/", executable->module().name(), ".hlo-buffer-assignment.txt"),
          hlo_assignment->ToString()));
    }
    return std::unique_ptr<Executable>(std::move(executable));
  }

  // A new executable of a cached compilation: its thunks, primitives and
  // arena over the shared optimized module, with the cached kernels (from
  // disk there are none: they are compiled, normally from the object
  // cache). `rebuilt` gets what the build used.
  absl::StatusOr<std::unique_ptr<Executable>> BuildFromArtifact(const CpuCompiledArtifact& artifact,
                                                                const CpuCompileOptions& options,
                                                                CpuCompiledArtifact* rebuilt) {
    ProgramBuilder builder(options);
    builder.set_precompiled_kernels(artifact.kernels);
    AXLE_ASSIGN_OR_RETURN(CpuProgram program, builder.Build(*artifact.optimized));
    const std::string signature = builder.kernels_signature();
    // Kernels handed over from memory must be the ones the module needs.
    // From disk there are none: the builder compiled the parsed module's own
    // (whose order and numbering may differ from the first process's), so
    // they match it by construction.
    if (artifact.kernels != nullptr && signature != artifact.signature) {
      // The first line that differs, to say which kernel.
      const std::vector<absl::string_view> cached = absl::StrSplit(artifact.signature, '\n');
      const std::vector<absl::string_view> needed = absl::StrSplit(signature, '\n');
      size_t line = 0;
      while (line < cached.size() && line < needed.size() && cached[line] == needed[line]) ++line;
      return absl::InternalError(
          absl::StrCat("its kernels differ from those its module needs (line ", line + 1,
                       ": cached \"", line < cached.size() ? cached[line] : "", "\", needed \"",
                       line < needed.size() ? needed[line] : "", "\")"));
    }
    rebuilt->optimized = artifact.optimized;
    rebuilt->kernels = builder.kernels_jit();
    rebuilt->signature = signature;
    return std::unique_ptr<Executable>(
        std::make_unique<CpuExecutable>(artifact.optimized, platform_, std::move(program)));
  }

  const se::Platform* platform_;
};

// The platform the registrar registered (its compiler's and
// CompileCpuExecutable's).
se::Platform* cpu_platform = nullptr;

struct Registrar {
  Registrar() {
    auto owned = std::make_unique<se::Platform>(
        "Host", std::vector<std::string>{"cpu", "host"}, kHostPlatformName,
        [] { return std::make_unique<CpuCompiler>(cpu_platform); });
    cpu_platform = owned.get();
    se::PlatformManager::RegisterPlatform(std::move(owned)).IgnoreError();
  }
};
const Registrar registrar;

}  // namespace

absl::StatusOr<std::unique_ptr<CpuExecutable>> CompileCpuExecutable(
    std::unique_ptr<HloModule> module, const CpuCompileOptions& options) {
  AXLE_RETURN_IF_ERROR(CheckSupported(*module));
  HloPassPipeline pipeline("cpu-prepare");
  AXLE_RETURN_IF_ERROR(PrepareModule(module.get(), pipeline, /*run_backend_only=*/false));
  ProgramBuilder builder(options);
  AXLE_ASSIGN_OR_RETURN(CpuProgram program, builder.Build(*module));
  return std::make_unique<CpuExecutable>(std::shared_ptr<const HloModule>(std::move(module)),
                                         cpu_platform, std::move(program));
}
}  // namespace axle::cpu
