// The CPU compiler and the `cpu` platform registration.
//
// Compile: reject what this first version cannot run (non-default layouts,
// control flow, custom calls, side effects, ops the kernel emitters do not
// know: each an Unimplemented naming the op), fuse dot epilogues
// (`dot-epilogue-fusion`) then elementwise ops (`fusion`), wrap every
// remaining array op but dots into a one-op loop fusion, compile each loop
// fusion into a kernel, each dot / epilogue fusion into a DotThunk
// (dot_thunk.h), and lay out the steps of the CpuExecutable.
#include <map>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/dot_thunk.h"
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

absl::Status Unsupported(const HloInstruction& instruction, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("cpu platform: ", why, " (instruction %",
                                               instruction.name(), ", ",
                                               HloOpcodeString(instruction.opcode()), ")"));
}

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

// Turns the entry into fusions and plumbing.
absl::Status PrepareModule(HloModule* module) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> epilogues,
                        CreatePass("dot-epilogue-fusion"));
  AXLE_RETURN_IF_ERROR(epilogues->Run(module).status());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> fusion, CreatePass("fusion"));
  AXLE_RETURN_IF_ERROR(fusion->Run(module).status());
  HloComputation* entry = module->entry_computation();
  for (HloInstruction* instruction : entry->MakeInstructionPostOrder()) {
    if (IsPlumbing(instruction->opcode()) || instruction->opcode() == HloOpcode::kDot) continue;
    if (!instruction->shape().IsArray()) {
      return Unsupported(*instruction, "ops with tuple or token results are not supported yet");
    }
    AXLE_RETURN_IF_ERROR(WrapInFusion(instruction, FusionKind::kLoop).status());
  }
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> dce, CreatePass("dce"));
  return dce->Run(module).status();
}

class ProgramBuilder {
 public:
  absl::StatusOr<CpuProgram> Build(const HloModule& module) {
    const HloComputation& entry = *module.entry_computation();
    int64_t kernel_number = 0;
    for (const HloInstruction* instruction : entry.MakeInstructionPostOrder()) {
      switch (instruction->opcode()) {
        case HloOpcode::kParameter: {
          int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
          ShapeUtil::ForEachLeafShape(
              instruction->shape(), [&](const Shape& shape, const ShapeIndex& index) {
                if (!shape.IsArray()) return;
                ValueSlot slot;
                slot.kind = ValueSlot::Kind::kParameter;
                slot.parameter = number;
                slot.parameter_index = index;
                slot.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
                Define(instruction, index, slot);
              });
          break;
        }
        case HloOpcode::kConstant: {
          const Literal& literal = cast<HloConstantInstruction>(instruction)->literal();
          if (!instruction->shape().IsArray()) {
            return Unsupported(*instruction, "tuple constants are not supported yet");
          }
          ValueSlot slot;
          slot.kind = ValueSlot::Kind::kConstant;
          slot.constant = static_cast<int64_t>(program_.constants.size());
          slot.size_bytes = literal.size_bytes();
          program_.constants.push_back(literal.Clone());
          Define(instruction, {}, slot);
          break;
        }
        case HloOpcode::kTuple:
          for (int64_t i = 0; i < instruction->operand_count(); ++i) {
            AXLE_RETURN_IF_ERROR(Forward(instruction->operand(i), {}, instruction, {i}));
          }
          break;
        case HloOpcode::kGetTupleElement:
          AXLE_RETURN_IF_ERROR(Forward(
              instruction->operand(0),
              {cast<HloGetTupleElementInstruction>(instruction)->tuple_index()}, instruction, {}));
          break;
        case HloOpcode::kBitcast:
          AXLE_RETURN_IF_ERROR(Forward(instruction->operand(0), {}, instruction, {}));
          break;
        case HloOpcode::kDot:
          AXLE_RETURN_IF_ERROR(AddDotThunk(*instruction));
          break;
        case HloOpcode::kFusion: {
          if (cast<HloFusionInstruction>(instruction)->fusion_kind() == FusionKind::kOutput) {
            AXLE_RETURN_IF_ERROR(AddDotThunk(*instruction));
            break;
          }
          std::vector<int64_t> operand_values;
          for (const HloInstruction* operand : instruction->operands()) {
            auto it = values_.find({operand, {}});
            if (it == values_.end()) {
              return Unsupported(*instruction, "a fusion operand that is not an array");
            }
            operand_values.push_back(it->second);
          }
          std::vector<int64_t> output_values;
          ShapeUtil::ForEachLeafShape(
              instruction->shape(), [&](const Shape& shape, const ShapeIndex& index) {
                output_values.push_back(DefineTemporary(instruction, index, shape));
              });
          const auto* fusion = cast<HloFusionInstruction>(instruction);
          CpuCompileOptions options;
          options.kernel_name = absl::StrCat("kernel_", kernel_number++);
          AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CompiledKernel> kernel,
                                CompileLoopKernel(*fusion->fused_instructions_computation(),
                                                  options));
          program_.thunks.push_back(std::make_unique<KernelThunk>(
              instruction->name(), std::move(kernel), std::move(operand_values),
              std::move(output_values)));
          break;
        }
        default:
          return Unsupported(*instruction, "this op is not supported yet");
      }
    }
    const HloInstruction* root = entry.root_instruction();
    absl::Status status = absl::OkStatus();
    ShapeUtil::ForEachLeafShape(root->shape(), [&](const Shape& shape, const ShapeIndex& index) {
      if (!shape.IsArray() || !status.ok()) return;
      auto it = values_.find({root, index});
      if (it == values_.end()) {
        status = Unsupported(*root, "a result leaf without a value");
        return;
      }
      program_.result_leaves.emplace_back(index, it->second);
    });
    AXLE_RETURN_IF_ERROR(status);
    return std::move(program_);
  }

 private:
  // A dot or a dot epilogue fusion.
  absl::Status AddDotThunk(const HloInstruction& instruction) {
    std::vector<int64_t> operand_values;
    std::vector<const Literal*> constants;
    for (const HloInstruction* operand : instruction.operands()) {
      auto it = values_.find({operand, {}});
      if (it == values_.end()) return Unsupported(instruction, "a dot operand that is not an array");
      operand_values.push_back(it->second);
      const ValueSlot& slot = program_.values[it->second];
      constants.push_back(slot.kind == ValueSlot::Kind::kConstant
                              ? &program_.constants[slot.constant]
                              : nullptr);
    }
    int64_t output = DefineTemporary(&instruction, {}, instruction.shape());
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Thunk> thunk,
                          CreateDotThunk(instruction, std::move(operand_values), constants, output));
    program_.thunks.push_back(std::move(thunk));
    return absl::OkStatus();
  }

  int64_t Define(const HloInstruction* instruction, const ShapeIndex& index, ValueSlot slot) {
    int64_t id = static_cast<int64_t>(program_.values.size());
    program_.values.push_back(std::move(slot));
    values_[{instruction, index}] = id;
    return id;
  }
  int64_t DefineTemporary(const HloInstruction* instruction, const ShapeIndex& index,
                          const Shape& shape) {
    ValueSlot slot;
    slot.kind = ValueSlot::Kind::kTemporary;
    slot.temporary = static_cast<int64_t>(program_.temporary_sizes.size());
    slot.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
    program_.temporary_sizes.push_back(slot.size_bytes);
    return Define(instruction, index, slot);
  }
  // Every array leaf of `from` under `from_index` is also the leaf of `to`
  // under `to_index`.
  absl::Status Forward(const HloInstruction* from, const ShapeIndex& from_index,
                       const HloInstruction* to, const ShapeIndex& to_index) {
    for (const auto& [key, id] : std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t>(
             values_.lower_bound({from, {}}), values_.end())) {
      if (key.first != from) break;
      const ShapeIndex& index = key.second;
      if (index.size() < from_index.size() ||
          !std::equal(from_index.begin(), from_index.end(), index.begin())) {
        continue;
      }
      ShapeIndex target = to_index;
      target.insert(target.end(), index.begin() + from_index.size(), index.end());
      values_[{to, target}] = id;
    }
    return absl::OkStatus();
  }

  CpuProgram program_;
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> values_;
};

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
