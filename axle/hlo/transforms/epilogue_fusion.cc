// Bias and activation epilogues into dot / convolution (see epilogue_fusion.h).
#include "axle/hlo/transforms/epilogue_fusion.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle {
namespace {

bool HasControlEdges(const HloInstruction& instruction) {
  return !instruction.control_predecessors().empty() || !instruction.control_successors().empty();
}

// The single user of `value`, when it has exactly one and is not a root.
HloInstruction* OnlyUser(const HloInstruction& value) {
  if (value.user_count() != 1 || value.IsRoot()) return nullptr;
  HloInstruction* user = value.users()[0];
  return HasControlEdges(*user) ? nullptr : user;
}

const HloInstruction* OtherOperand(const HloInstruction& binary, const HloInstruction& value) {
  if (binary.operand_count() != 2) return nullptr;
  if (binary.operand(0) == &value && binary.operand(1) != &value) return binary.operand(1);
  if (binary.operand(1) == &value && binary.operand(0) != &value) return binary.operand(0);
  return nullptr;
}

// A constant, or a broadcast of a scalar constant.
const HloConstantInstruction* SplatConstant(const HloInstruction& instruction) {
  const HloInstruction* source = &instruction;
  if (source->opcode() == HloOpcode::kBroadcast) source = source->operand(0);
  const auto* constant = dyn_cast<HloConstantInstruction>(source);
  if (constant == nullptr || !constant->shape().IsArray() ||
      constant->shape().num_elements() != 1) {
    return nullptr;
  }
  return constant;
}

bool IsBiasAdd(const HloInstruction& user, const HloInstruction& value) {
  if (user.opcode() != HloOpcode::kAdd) return false;
  const HloInstruction* other = OtherOperand(user, value);
  if (other == nullptr) return false;
  return other->opcode() == HloOpcode::kBroadcast ||
         ShapeUtil::Compatible(other->shape(), value.shape());
}

// A multiply by a broadcast or an array of the output's shape (a folded
// batch-norm scale).
bool IsScale(const HloInstruction& user, const HloInstruction& value) {
  if (user.opcode() != HloOpcode::kMultiply) return false;
  const HloInstruction* other = OtherOperand(user, value);
  if (other == nullptr) return false;
  return other->opcode() == HloOpcode::kBroadcast ||
         ShapeUtil::Compatible(other->shape(), value.shape());
}

// An add of an array of the output's shape that is no broadcast (a
// residual connection above a convolution's bias).
bool IsAddend(const HloInstruction& user, const HloInstruction& value) {
  if (user.opcode() != HloOpcode::kAdd) return false;
  const HloInstruction* other = OtherOperand(user, value);
  return other != nullptr && other->opcode() != HloOpcode::kBroadcast &&
         other->opcode() != HloOpcode::kConstant &&
         ShapeUtil::Compatible(other->shape(), value.shape());
}

// `user` is max(value, low) whose only user is min(max, high), with splat
// constants low <= high: a clamp (ONNX Clip, jnp.clip). Returns the min.
HloInstruction* ClampTop(const HloInstruction& user, const HloInstruction& value) {
  if (user.opcode() != HloOpcode::kMaximum) return nullptr;
  const HloInstruction* low_operand = OtherOperand(user, value);
  const HloConstantInstruction* low = low_operand ? SplatConstant(*low_operand) : nullptr;
  HloInstruction* top = low ? OnlyUser(user) : nullptr;
  if (top == nullptr || top->opcode() != HloOpcode::kMinimum) return nullptr;
  const HloInstruction* high_operand = OtherOperand(*top, user);
  const HloConstantInstruction* high = high_operand ? SplatConstant(*high_operand) : nullptr;
  if (high == nullptr || !(low->literal().GetAsDouble(0) <= high->literal().GetAsDouble(0))) {
    return nullptr;
  }
  return top;
}

bool IsActivation(const HloInstruction& user, const HloInstruction& value) {
  switch (user.opcode()) {
    case HloOpcode::kLogistic:
    case HloOpcode::kTanh:
    case HloOpcode::kExp:
      return true;
    case HloOpcode::kMaximum: {
      const HloInstruction* other = OtherOperand(user, value);
      const HloConstantInstruction* zero = other ? SplatConstant(*other) : nullptr;
      return zero != nullptr && zero->literal().GetAsDouble(0) == 0.0;
    }
    case HloOpcode::kClamp:
      return user.operand(1) == &value && SplatConstant(*user.operand(0)) != nullptr &&
             SplatConstant(*user.operand(2)) != nullptr;
    default:
      return false;
  }
}

// Fuses into `fusion` its operands that are broadcasts or constants read by
// nothing else (the bias broadcast), and splats of constants (the
// activation's zero) even when something else reads them too.
absl::StatusOr<HloFusionInstruction*> FuseSplatOperands(HloFusionInstruction* fusion) {
  bool fused_one = true;
  while (fused_one) {
    fused_one = false;
    for (HloInstruction* operand : fusion->operands()) {
      bool splat_like = operand->opcode() == HloOpcode::kBroadcast ||
                        (operand->opcode() == HloOpcode::kConstant && operand->shape().IsArray() &&
                         operand->shape().num_elements() == 1);
      if (!splat_like || HasControlEdges(*operand)) continue;
      // A splat of a constant is copied in even when others read it too (as
      // when one broadcast zero serves several relus): the epilogue needs to
      // see the constant, and copying it costs nothing.
      if (OnlyUser(*operand) != fusion && SplatConstant(*operand) == nullptr) continue;
      AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(operand, fusion, FusionKind::kOutput));
      fused_one = true;
      break;
    }
  }
  return fusion;
}

// Grows an epilogue fusion from `root` (a dot or convolution); returns
// whether it formed one.
absl::StatusOr<bool> FuseEpilogue(HloInstruction* root) {
  if (HasControlEdges(*root) || !root->shape().IsArray()) return false;
  // `root` is gone once fused: its opcode now.
  const bool convolution = root->opcode() == HloOpcode::kConvolution;
  HloInstruction* value = root;
  HloFusionInstruction* fusion = nullptr;
  // A transposed convolution input (ONNX's NCHW input to a channels-last
  // convolution) is read through strides instead of copied.
  HloInstruction* input = root->mutable_operand(0);
  if (convolution && input->opcode() == HloOpcode::kTranspose && OnlyUser(*input) == root &&
      input->operand(0)->opcode() != HloOpcode::kConstant) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(input, root, FusionKind::kOutput));
    value = fusion;
  }
  HloInstruction* user = OnlyUser(*value);
  // The dot thunk takes no scale (yet): convolutions only.
  if (convolution && user != nullptr && IsScale(*user, *value)) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
    value = fusion;
    user = OnlyUser(*value);
  }
  if (user != nullptr && IsBiasAdd(*user, *value)) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
    value = fusion;
    user = OnlyUser(*value);
  }
  // The convolution thunk adds a residual as a post-op (the dot thunk, not).
  if (convolution && fusion != nullptr && user != nullptr && IsAddend(*user, *value)) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
    value = fusion;
    user = OnlyUser(*value);
  }
  if (HloInstruction* top = user != nullptr ? ClampTop(*user, *value) : nullptr) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(fusion, top, FusionKind::kOutput));
  } else if (user != nullptr && IsActivation(*user, *value)) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
  }
  if (fusion == nullptr) return false;
  AXLE_RETURN_IF_ERROR(FuseSplatOperands(fusion).status());
  return true;
}

}  // namespace

absl::StatusOr<bool> DotEpilogueFusion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    std::vector<HloInstruction*> roots;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kDot ||
          instruction->opcode() == HloOpcode::kConvolution) {
        roots.push_back(instruction);
      }
    }
    // Each epilogue fusion swallows only its own dot / convolution and
    // elementwise users, so the other candidates stay valid.
    for (HloInstruction* root : roots) {
      AXLE_ASSIGN_OR_RETURN(bool fused, FuseEpilogue(root));
      changed |= fused;
    }
  }
  // New fusions sit at the end of their computation's instruction list: a
  // schedule the module had no longer holds.
  if (changed) module->mutable_config().is_scheduled = false;
  return changed;
}

}  // namespace axle
