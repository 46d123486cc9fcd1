//===- epilogue_plan.cc - The epilogue of a dot or convolution fusion ------===//
#include "axle/cpu/runtime/epilogue_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/epilogue_fusion.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// The one value of a fused constant, constant parameter or broadcast of
// one whose elements are all that value.
absl::StatusOr<double> SplatValue(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants) {
  const HloInstruction* node = &instruction;
  while (node->opcode() == HloOpcode::kBroadcast) node = node->operand(0);
  const Literal* literal = nullptr;
  if (const auto* constant = dyn_cast<HloConstantInstruction>(node)) {
    literal = &constant->literal();
  } else if (const auto* parameter = dyn_cast<HloParameterInstruction>(node)) {
    const int64_t number = parameter->parameter_number();
    if (number < static_cast<int64_t>(constants.size())) literal = constants[number];
  }
  if (literal == nullptr || !literal->shape().IsArray() || literal->element_count() != 1) {
    return Unsupported(instruction, "an activation bound that is not a constant");
  }
  return literal->GetAsDouble(0);
}

}  // namespace

absl::StatusOr<EpiloguePlan> PlanEpilogue(const HloInstruction& instruction, HloOpcode core_opcode,
                                          const std::vector<const Literal*>& constants) {
  EpiloguePlan plan;
  const HloInstruction* node = &instruction;
  if (instruction.opcode() == HloOpcode::kFusion) {
    node = cast<HloFusionInstruction>(&instruction)
               ->fused_instructions_computation()
               ->root_instruction();
    const bool scales = core_opcode == HloOpcode::kConvolution;
    auto is_chain = [&](const HloInstruction* value) {
      return value->opcode() == core_opcode || value->opcode() == HloOpcode::kAdd ||
             (scales && value->opcode() == HloOpcode::kMultiply);
    };
    switch (node->opcode()) {
      case HloOpcode::kLogistic:
      case HloOpcode::kTanh:
      case HloOpcode::kExp:
        plan.activation = node->opcode() == HloOpcode::kLogistic ? Activation::kLogistic
                          : node->opcode() == HloOpcode::kTanh   ? Activation::kTanh
                                                                 : Activation::kExp;
        plan.chain.emplace_back(node, 0);
        node = node->operand(0);
        break;
      case HloOpcode::kMinimum: {
        // min(max(x, low), high): a clamp.
        const int chain = node->operand(0)->opcode() == HloOpcode::kMaximum ? 0 : 1;
        const HloInstruction* maximum = node->operand(chain);
        if (maximum->opcode() != HloOpcode::kMaximum) {
          return Unsupported(instruction, "a minimum that is not the top of a clamp");
        }
        const int below = is_chain(maximum->operand(0)) ? 0 : 1;
        AXLE_ASSIGN_OR_RETURN(plan.high, SplatValue(*node->operand(1 - chain), constants));
        AXLE_ASSIGN_OR_RETURN(plan.low, SplatValue(*maximum->operand(1 - below), constants));
        if (!(plan.low <= plan.high)) return Unsupported(instruction, "a clamp with low > high");
        plan.activation = Activation::kClamp;
        plan.chain.emplace_back(node, chain);
        plan.chain.emplace_back(maximum, below);
        node = maximum->operand(below);
        break;
      }
      case HloOpcode::kMaximum: {
        const int chain = is_chain(node->operand(0)) ? 0 : 1;
        AXLE_ASSIGN_OR_RETURN(double zero, SplatValue(*node->operand(1 - chain), constants));
        if (zero != 0.0) return Unsupported(instruction, "a maximum that is not a relu");
        plan.activation = Activation::kRelu;
        plan.chain.emplace_back(node, chain);
        node = node->operand(chain);
        break;
      }
      case HloOpcode::kClamp: {
        AXLE_ASSIGN_OR_RETURN(plan.low, SplatValue(*node->operand(0), constants));
        AXLE_ASSIGN_OR_RETURN(plan.high, SplatValue(*node->operand(2), constants));
        plan.activation = Activation::kClamp;
        plan.chain.emplace_back(node, 1);
        node = node->operand(1);
        break;
      }
      case HloOpcode::kMultiply: {
        // GELU (tanh approximation) above a dot.
        std::vector<const HloInstruction*> gelu;
        const HloInstruction* x = scales ? nullptr : MatchGeluTanh(*node, &gelu);
        if (x == nullptr) break;
        plan.activation = Activation::kGeluTanh;
        for (const HloInstruction* op : gelu) {
          int64_t below = 0;
          for (int64_t i = 0; i < op->operand_count(); ++i) {
            const HloInstruction* operand = op->operand(i);
            if (operand == x || std::find(gelu.begin(), gelu.end(), operand) != gelu.end()) {
              below = i;
              break;
            }
          }
          plan.chain.emplace_back(op, below);
        }
        node = x;
        break;
      }
      default:
        break;
    }
    // Two adds above a convolution: the upper one adds the addend.
    if (scales && node->opcode() == HloOpcode::kAdd) {
      const int chain = is_chain(node->operand(0)) ? 0 : 1;
      if (node->operand(chain)->opcode() == HloOpcode::kAdd) {
        plan.addend_add = node;
        plan.addend = node->operand(1 - chain);
        plan.chain.emplace_back(node, chain);
        node = node->operand(chain);
      }
    }
    if (node->opcode() == HloOpcode::kAdd) {
      const int chain = is_chain(node->operand(0)) ? 0 : 1;
      const HloInstruction* other = node->operand(1 - chain);
      // Above a convolution, a lone add of a value of the output's size
      // that is not a broadcast is a residual connection: the addend
      // (oneDNN's sum post-op), not a bias (which oneDNN takes per
      // channel only).
      const bool residual =
          scales && plan.addend == nullptr && other->opcode() != HloOpcode::kBroadcast &&
          other->opcode() != HloOpcode::kConstant &&
          ShapeUtil::ElementsIn(other->shape()) == ShapeUtil::ElementsIn(node->shape());
      if (residual) {
        plan.addend = other;
        plan.addend_add = node;
      } else {
        plan.bias = other;
        plan.bias_add = node;
      }
      plan.chain.emplace_back(node, chain);
      node = node->operand(chain);
    }
    if (scales && node->opcode() == HloOpcode::kMultiply) {
      const int chain = node->operand(0)->opcode() == core_opcode ? 0 : 1;
      plan.scale = node->operand(1 - chain);
      plan.chain.emplace_back(node, chain);
      node = node->operand(chain);
    }
  }
  if (node->opcode() != core_opcode) {
    return Unsupported(instruction, absl::StrCat("a fusion the ", HloOpcodeString(core_opcode),
                                                 " thunk does not implement"));
  }
  plan.core = node;
  return plan;
}

absl::Status EmitEpilogueThunk(const HloInstruction& instruction, ProgramBuilder& builder,
                               EpilogueThunkFactory create, absl::string_view kernel_prefix) {
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> operand_values, builder.OperandValues(instruction));
  const std::vector<const Literal*> constants = builder.ConstantsOf(operand_values);
  const int64_t output = builder.DefineTemporary(&instruction, {}, instruction.shape());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Thunk> thunk,
                        create(instruction, std::move(operand_values), constants, output,
                               builder.kernels(), builder.UniqueName(kernel_prefix)));
  builder.AddThunk(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace axle::cpu
