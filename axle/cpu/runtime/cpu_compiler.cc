// The CPU compiler and the `cpu` platform registration.
//
// Compile: reject what this version cannot run (non-default layouts, ops no
// emitter knows: each an Unimplemented naming the op), fuse dot epilogues
// (`dot-epilogue-fusion`) then elementwise ops (`fusion`), wrap every
// remaining array op that has no thunk emitter of its own into a one-op loop
// fusion (in the entry and in every while body / condition and branch),
// then let ProgramBuilder (program_builder.h) turn the entry into the thunks
// of a CpuExecutable.
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"
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
        case HloOpcode::kCustomCall:
        case HloOpcode::kConvolution:
        case HloOpcode::kGather:
        case HloOpcode::kAfterAll:
        case HloOpcode::kAddDependency:
          return Unsupported(*instruction, "this op is not supported yet");
        default:
          break;
      }
      // rng and rng-get-and-update-state draw from the run's rng state
      // (rng_thunk.h).
      const bool rng = instruction->opcode() == HloOpcode::kRng ||
                       instruction->opcode() == HloOpcode::kRngGetAndUpdateState;
      if (instruction->HasSideEffect() && !rng) {
        return Unsupported(*instruction, "side-effecting ops are not supported yet");
      }
    }
  }
  return absl::OkStatus();
}

// Turns the entry, and every computation control flow runs, into fusions,
// plumbing and ops with thunk emitters. Calls are inlined first (the rare
// call left behind runs its computation's thunks in place).
absl::Status PrepareModule(HloModule* module) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> inliner, CreatePass("call-inliner"));
  AXLE_RETURN_IF_ERROR(inliner->Run(module).status());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> epilogues,
                        CreatePass("dot-epilogue-fusion"));
  AXLE_RETURN_IF_ERROR(epilogues->Run(module).status());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> fusion, CreatePass("fusion"));
  AXLE_RETURN_IF_ERROR(fusion->Run(module).status());
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (IsPlumbing(instruction->opcode()) || FindThunkEmitter(*instruction) != nullptr) continue;
      if (!instruction->shape().IsArray()) {
        return Unsupported(*instruction, "ops with tuple or token results are not supported yet");
      }
      AXLE_RETURN_IF_ERROR(WrapInFusion(instruction, FusionKind::kLoop).status());
    }
  }
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> dce, CreatePass("dce"));
  return dce->Run(module).status();
}

class CpuCompiler : public Compiler {
 public:
  explicit CpuCompiler(const se::Platform* platform) : platform_(platform) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) override {
    AXLE_RETURN_IF_ERROR(CheckSupported(*module));
    AXLE_RETURN_IF_ERROR(PrepareModule(module.get()));
    ProgramBuilder builder;
    AXLE_ASSIGN_OR_RETURN(CpuProgram program, builder.Build(*module));
    return std::unique_ptr<Executable>(new CpuExecutable(
        std::shared_ptr<const HloModule>(std::move(module)), platform_, std::move(program)));
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
