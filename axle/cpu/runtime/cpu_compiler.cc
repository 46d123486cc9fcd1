// The CPU compiler and the `cpu` platform registration.
//
// Compile: reject what this version cannot run (non-default layouts, ops no
// emitter knows: each an Unimplemented naming the op), fuse dot epilogues
// (`dot-epilogue-fusion`) then elementwise ops (`fusion`), wrap every
// remaining array op that has no thunk emitter of its own into a one-op loop
// fusion, then let ProgramBuilder (program_builder.h) turn the entry into
// the thunks of a CpuExecutable. These passes run as one HloPassPipeline
// ("cpu-prepare"), so AXLE_DUMP_TO dumps and times them like any pipeline.
//
// Caches: the loop kernels' code of a module compiled before in this
// process is reused (kernel_jit_cache.h); with AXLE_CACHE_DIR set, the
// object code is also stored on disk (jit.h), so another process skips
// LLVM. With AXLE_DUMP_TO set, the caches are bypassed (so that the dump is
// complete) and the LLVM IR before and after optimization is written to
// DIR/<module>.ir-before-optimization.ll and .ir-after-optimization.ll, and
// the LLVM and thunk timings are appended to DIR/<module>.timings.txt.
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/kernel_jit_cache.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/fusion_utils.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/platform.h"

// Referenced by the link options of axle_cpu_runtime so that this object
// file, and the registration below, is kept in every program.
extern "C" {
int axle_cpu_platform_anchor = 0;
}

namespace axle::cpu {
namespace {

bool IsPlumbing(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kFusion:
      return true;
    default:
      return false;
  }
}

absl::Status CheckSupported(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      bool layouts_ok = true;
      ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape& shape, const ShapeIndex&) {
        if (shape.IsArray() && !ShapeUtil::HasDescendingLayout(shape)) layouts_ok = false;
      });
      if (!layouts_ok) {
        return Unsupported(*instruction, absl::StrCat("the non-default layout of ",
                                                      instruction->shape().ToString(true),
                                                      " is not supported yet"));
      }
      switch (instruction->opcode()) {
        case HloOpcode::kWhile:
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
        case HloOpcode::kCustomCall:
        case HloOpcode::kSort:
        case HloOpcode::kConvolution:
        case HloOpcode::kGather:
        case HloOpcode::kScatter:
        case HloOpcode::kRng:
        case HloOpcode::kRngBitGenerator:
        case HloOpcode::kRngGetAndUpdateState:
        case HloOpcode::kAfterAll:
        case HloOpcode::kAddDependency:
          return Unsupported(*instruction, "this op is not supported yet");
        default:
          break;
      }
      if (instruction->HasSideEffect()) {
        return Unsupported(*instruction, "side-effecting ops are not supported yet");
      }
    }
  }
  return absl::OkStatus();
}

// Whether `instruction` of the entry becomes a loop fusion (not plumbing,
// no thunk emitter of its own).
bool NeedsLoopFusion(const HloInstruction& instruction) {
  return !IsPlumbing(instruction.opcode()) && FindThunkEmitter(instruction) == nullptr;
}

// Wraps every array op of the entry that needs a loop fusion into a one-op
// loop fusion, in post order up to the first one with a tuple or token
// result (which PrepareModule then rejects; its users stay as they are).
class WrapInLoopFusions : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-wrap-in-loop-fusions"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    bool changed = false;
    HloComputation* entry = module->entry_computation();
    for (HloInstruction* instruction : entry->MakeInstructionPostOrder()) {
      if (!NeedsLoopFusion(*instruction)) continue;
      if (!instruction->shape().IsArray()) break;  // PrepareModule rejects it
      AXLE_RETURN_IF_ERROR(WrapInFusion(instruction, FusionKind::kLoop).status());
      changed = true;
    }
    return changed;
  }
};

// Turns the entry into fusions and plumbing.
absl::Status PrepareModule(HloModule* module, HloPassPipeline& pipeline) {
  for (const char* name : {"dot-epilogue-fusion", "fusion"}) {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass, CreatePass(name));
    pipeline.AddPass(std::move(pass));
  }
  pipeline.AddPass<WrapInLoopFusions>();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> dce, CreatePass("dce"));
  pipeline.AddPass(std::move(dce));
  AXLE_RETURN_IF_ERROR(pipeline.Run(module).status());
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    if (NeedsLoopFusion(*instruction)) {
      return Unsupported(*instruction, "ops with tuple or token results are not supported yet");
    }
  }
  return absl::OkStatus();
}

absl::Status WriteDumpFile(const std::string& path, absl::string_view text, bool append = false) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Compile options for `module`: IR dump hooks when dumping, the disk cache
// when AXLE_CACHE_DIR is set (and not dumping).
CpuCompileOptions MakeCompileOptions(const std::string& dump_dir, const std::string& module_name) {
  CpuCompileOptions options;
  if (!dump_dir.empty()) {
    const std::string prefix = absl::StrCat(dump_dir, "/", module_name);
    options.jit.ir_before_optimization = [prefix](absl::string_view, absl::string_view text) {
      WriteDumpFile(absl::StrCat(prefix, ".ir-before-optimization.ll"), text).IgnoreError();
    };
    options.jit.ir_after_optimization = [prefix](absl::string_view, absl::string_view text) {
      WriteDumpFile(absl::StrCat(prefix, ".ir-after-optimization.ll"), text).IgnoreError();
    };
  } else if (const char* cache_dir = std::getenv("AXLE_CACHE_DIR");
             cache_dir != nullptr && *cache_dir != '\0') {
    options.jit.cache_dir = cache_dir;
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
  const double other_ms = build_ms - emit_ms - llvm.optimize_ms - llvm.codegen_ms - llvm.cache_ms;
  std::string text;
  for (const auto& [what, ms] :
       std::vector<std::pair<const char*, double>>{{"cpu: llvm-ir-emission", emit_ms},
                                                   {"cpu: llvm-optimization", llvm.optimize_ms},
                                                   {"cpu: llvm-codegen", llvm.codegen_ms},
                                                   {"cpu: other (thunks, jit, dumps)", other_ms}}) {
    absl::StrAppend(&text, absl::StrFormat("%-32s %10.3f ms\n", what, ms));
  }
  return WriteDumpFile(path, text, /*append=*/true);
}

class CpuCompiler : public Compiler {
 public:
  explicit CpuCompiler(const se::Platform* platform) : platform_(platform) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) override {
    AXLE_RETURN_IF_ERROR(CheckSupported(*module));
    HloPassPipeline pipeline("cpu-prepare");
    const std::string dump_dir = pipeline.dump_dir();
    const std::string fingerprint =
        dump_dir.empty() ? CompilationFingerprint(*module, options, platform_->Name()) : "";
    AXLE_RETURN_IF_ERROR(PrepareModule(module.get(), pipeline));
    const CachedKernels cached =
        fingerprint.empty() ? CachedKernels() : KernelJitCache::Global().Find(fingerprint);
    auto build_start = std::chrono::steady_clock::now();
    auto builder = std::make_unique<ProgramBuilder>(MakeCompileOptions(dump_dir, module->name()));
    builder->set_precompiled_kernels(cached.jit);
    absl::StatusOr<CpuProgram> program = builder->Build(*module);
    if (cached.jit != nullptr &&
        (!program.ok() || builder->kernels_signature() != cached.signature)) {
      // Other kernels than those cached (the passes did not make the same
      // fusions): compile them.
      builder = std::make_unique<ProgramBuilder>(MakeCompileOptions(dump_dir, module->name()));
      program = builder->Build(*module);
    }
    if (!program.ok()) return program.status();
    if (!fingerprint.empty() && builder->kernels_jit() != nullptr && cached.jit == nullptr) {
      KernelJitCache::Global().Insert(fingerprint,
                                      {builder->kernels_jit(), builder->kernels_signature()});
    }
    if (!dump_dir.empty()) {
      const double build_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start)
              .count();
      AXLE_RETURN_IF_ERROR(AppendBuildTimings(
          absl::StrCat(dump_dir, "/", module->name(), ".timings.txt"), *builder, build_ms));
    }
    return std::unique_ptr<Executable>(new CpuExecutable(
        std::shared_ptr<const HloModule>(std::move(module)), platform_, *std::move(program)));
  }

 private:
  const se::Platform* platform_;
};

struct Registrar {
  Registrar() {
    static se::Platform* platform = nullptr;
    auto owned = std::make_unique<se::Platform>(
        "Host", std::vector<std::string>{"cpu", "host"}, kHostPlatformName,
        [] { return std::make_unique<CpuCompiler>(platform); });
    platform = owned.get();
    se::PlatformManager::RegisterPlatform(std::move(owned)).IgnoreError();
  }
};
const Registrar registrar;

}  // namespace
}  // namespace axle::cpu
