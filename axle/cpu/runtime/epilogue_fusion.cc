// Bias and activation epilogues into dot / convolution (see epilogue_fusion.h).
#include "axle/cpu/runtime/epilogue_fusion.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle::cpu {
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

// `user` is `opcode` of `value` and a broadcast or an array of the
// output's shape.
bool IsBinaryWithBroadcastOrArray(const HloInstruction& user, HloOpcode opcode,
                                  const HloInstruction& value) {
  if (user.opcode() != opcode) return false;
  const HloInstruction* other = OtherOperand(user, value);
  if (other == nullptr) return false;
  return other->opcode() == HloOpcode::kBroadcast ||
         ShapeUtil::Compatible(other->shape(), value.shape());
}

bool IsBiasAdd(const HloInstruction& user, const HloInstruction& value) {
  return IsBinaryWithBroadcastOrArray(user, HloOpcode::kAdd, value);
}

// A multiply by a broadcast or an array of the output's shape (a folded
// batch-norm scale).
bool IsScale(const HloInstruction& user, const HloInstruction& value) {
  return IsBinaryWithBroadcastOrArray(user, HloOpcode::kMultiply, value);
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

// Whether `instruction` is a splat constant (SplatConstant) of `value`
// within 1e-6 relative.
bool IsSplatOf(const HloInstruction& instruction, double value) {
  const HloConstantInstruction* constant = SplatConstant(instruction);
  if (constant == nullptr) return false;
  return std::abs(constant->literal().GetAsDouble(0) - value) <= 1e-6 * std::abs(value);
}

// When `op` is a binary `opcode` with a splat of `value` as one operand:
// the other operand (null otherwise).
const HloInstruction* OtherThanSplat(const HloInstruction& op, HloOpcode opcode, double value) {
  if (op.opcode() != opcode || op.operand_count() != 2) return nullptr;
  if (IsSplatOf(*op.operand(1), value)) return op.operand(0);
  if (IsSplatOf(*op.operand(0), value)) return op.operand(1);
  return nullptr;
}

// When `op` is a binary `opcode` with `x` as exactly one operand: the
// other operand.
const HloInstruction* OtherThan(const HloInstruction& op, HloOpcode opcode,
                                const HloInstruction& x) {
  if (op.opcode() != opcode || op.operand_count() != 2) return nullptr;
  return OtherOperand(op, x);
}

// `w` = 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), its ops appended to
// `nodes` top down.
bool MatchOnePlusTanh(const HloInstruction& w, const HloInstruction& x,
                      std::vector<const HloInstruction*>* nodes) {
  constexpr double kSqrtTwoOverPi = 0.7978845608028654;
  const HloInstruction* tanh = OtherThanSplat(w, HloOpcode::kAdd, 1.0);
  if (tanh == nullptr || tanh->opcode() != HloOpcode::kTanh) return false;
  const HloInstruction* inner =
      OtherThanSplat(*tanh->operand(0), HloOpcode::kMultiply, kSqrtTwoOverPi);
  const HloInstruction* term = inner ? OtherThan(*inner, HloOpcode::kAdd, x) : nullptr;
  const HloInstruction* cube =
      term ? OtherThanSplat(*term, HloOpcode::kMultiply, 0.044715) : nullptr;
  const HloInstruction* square = cube ? OtherThan(*cube, HloOpcode::kMultiply, x) : nullptr;
  if (square == nullptr || square->opcode() != HloOpcode::kMultiply || square->operand(0) != &x ||
      square->operand(1) != &x) {
    return false;
  }
  nodes->insert(nodes->end(), {&w, tanh, tanh->operand(0), inner, term, cube, square});
  return true;
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

// Whether `user` is `value` > 0 (or 0 < `value`) on floats (IEEE order).
bool IsPositiveTest(const HloInstruction& user, const HloInstruction& value) {
  const auto* compare = dyn_cast<HloCompareInstruction>(&user);
  if (compare == nullptr || compare->type() == ComparisonType::kFloatTotalOrder ||
      !primitive_util::IsFloatingPointType(value.shape().element_type())) {
    return false;
  }
  const HloInstruction* other = OtherOperand(user, value);
  if (other == nullptr || !IsSplatOf(*other, 0.0)) return false;
  return compare->operand(0) == &value ? compare->direction() == ComparisonDirection::kGt
                                       : compare->direction() == ComparisonDirection::kLt;
}

// When `value`'s users are one relu (max with 0) and tests `value` > 0
// (a relu's gradient, as JAX writes it: select(x > 0, g, 0)), the tests
// read the relu instead: relu(x) > 0 exactly when x > 0 (NaN: both false;
// -0: both false), and the relu becomes the value's one user, free to join
// the epilogue. Returns the relu, or null when nothing changed.
absl::StatusOr<HloInstruction*> TestsReadTheRelu(HloInstruction& value) {
  if (value.user_count() < 2 || value.IsRoot()) return nullptr;
  HloInstruction* relu = nullptr;
  std::vector<HloInstruction*> tests;
  for (HloInstruction* user : value.users()) {
    if (HasControlEdges(*user)) return nullptr;
    if (user->opcode() == HloOpcode::kMaximum && IsActivation(*user, value) && relu == nullptr) {
      relu = user;
    } else if (IsPositiveTest(*user, value)) {
      tests.push_back(user);
    } else {
      return nullptr;
    }
  }
  if (relu == nullptr || !ShapeUtil::Compatible(relu->shape(), value.shape())) return nullptr;
  for (HloInstruction* test : tests) {
    const int64_t operand = test->operand(0) == &value ? 0 : 1;
    AXLE_RETURN_IF_ERROR(test->ReplaceOperandWith(operand, relu));
  }
  return relu;
}

// The last op of a GELU (MatchGeluTanh) of `value` that reads `value`
// everywhere it is read and whose other ops have no users outside it, or
// null; `nodes` gets its ops top down.
HloInstruction* GeluTop(const HloInstruction& value, std::vector<HloInstruction*>* nodes) {
  if (value.IsRoot() || value.shape().element_type() != F32 || value.user_count() < 3) {
    return nullptr;
  }
  // The top reads value (x * half) or a multiply of it by 0.5.
  std::vector<HloInstruction*> candidates;
  for (HloInstruction* user : value.users()) {
    candidates.push_back(user);
    for (HloInstruction* next : user->users()) candidates.push_back(next);
  }
  for (HloInstruction* top : candidates) {
    std::vector<const HloInstruction*> found;
    if (HasControlEdges(*top) || MatchGeluTanh(*top, &found) != &value) continue;
    bool closed = std::all_of(value.users().begin(), value.users().end(), [&](const auto* user) {
      return std::find(found.begin(), found.end(), user) != found.end();
    });
    for (size_t i = 1; closed && i < found.size(); ++i) {
      const HloInstruction* node = found[i];
      closed = !node->IsRoot() && !HasControlEdges(*node) && node->user_count() == 1 &&
               std::find(found.begin(), found.end(), node->users()[0]) != found.end();
    }
    if (!closed) continue;
    nodes->clear();
    // The ops are the computation's own (found through `top`'s operands).
    for (const HloInstruction* node : found) nodes->push_back(const_cast<HloInstruction*>(node));
    return top;
  }
  return nullptr;
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
  if (user == nullptr) {
    AXLE_ASSIGN_OR_RETURN(HloInstruction * relu, TestsReadTheRelu(*value));
    if (relu != nullptr) user = relu;
  }
  std::vector<HloInstruction*> gelu;
  if (HloInstruction* top = user != nullptr ? ClampTop(*user, *value) : nullptr) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(fusion, top, FusionKind::kOutput));
  } else if (user != nullptr && IsActivation(*user, *value)) {
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, user, FusionKind::kOutput));
  } else if (HloInstruction* top = convolution ? nullptr : GeluTop(*value, &gelu)) {
    // The GELU's ops into its top, each once its one user is in, then the
    // value below.
    HloInstruction* grown = top;
    for (size_t i = 1; i < gelu.size(); ++i) {
      AXLE_ASSIGN_OR_RETURN(grown, FuseProducerIntoConsumer(gelu[i], grown, FusionKind::kOutput));
    }
    AXLE_ASSIGN_OR_RETURN(fusion, FuseProducerIntoConsumer(value, grown, FusionKind::kOutput));
  }
  if (fusion == nullptr) return false;
  AXLE_RETURN_IF_ERROR(FuseSplatOperands(fusion).status());
  return true;
}

}  // namespace

const HloInstruction* MatchGeluTanh(const HloInstruction& top,
                                    std::vector<const HloInstruction*>* nodes) {
  if (top.opcode() != HloOpcode::kMultiply || top.operand_count() != 2) return nullptr;
  for (int i = 0; i < 2; ++i) {
    const HloInstruction* a = top.operand(i);
    const HloInstruction* b = top.operand(1 - i);
    std::vector<const HloInstruction*> found = {&top, b};
    // x * (0.5 * w), or (0.5 * x) * w.
    const HloInstruction* x = a;
    const HloInstruction* w = OtherThanSplat(*b, HloOpcode::kMultiply, 0.5);
    if (w == nullptr) {
      x = OtherThanSplat(*a, HloOpcode::kMultiply, 0.5);
      w = b;
      found = {&top, a};
    }
    if (x == nullptr || w == nullptr || !MatchOnePlusTanh(*w, *x, &found)) continue;
    nodes->insert(nodes->end(), found.begin(), found.end());
    return x;
  }
  return nullptr;
}

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

}  // namespace axle::cpu
