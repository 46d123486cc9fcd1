// Loop and reduction fusion for the CPU (see instruction_fusion.h).
#include "axle/hlo/transforms/instruction_fusion.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle {
namespace {

// Ops a loop kernel computes element by element from its operands.
bool IsLoopFusibleOp(const HloInstruction& instruction) {
  if (instruction.HasSideEffect()) return false;
  if (!instruction.shape().IsArray()) return false;
  if (instruction.IsElementwise()) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kBitcast:
      // Not one that changes the layout (from layout-normalization): outside
      // a kernel it moves no data; inside, every element would pay a
      // delinearization.
      return ShapeUtil::HasDescendingLayout(instruction.shape()) &&
             ShapeUtil::HasDescendingLayout(instruction.operand(0)->shape());
    case HloOpcode::kBroadcast:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kIota:
    case HloOpcode::kPad:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
      return true;
    case HloOpcode::kConstant:
      return instruction.shape().num_elements() <= CpuInstructionFusion::kMaxFusedConstantElements;
    default:
      return false;
  }
}

int64_t FusedInstructionCount(const HloInstruction& instruction) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
    return fusion->fused_instructions_computation()->instruction_count();
  }
  return 1;
}

// A fused computation we can inline: no fusion or control edges inside.
bool HasPlainBody(const HloFusionInstruction& fusion) {
  for (const HloInstruction* fused : fusion.fused_instructions_computation()->instructions()) {
    if (fused->opcode() == HloOpcode::kFusion || !fused->control_predecessors().empty())
      return false;
  }
  return true;
}

bool IsFusibleProducer(const HloInstruction& producer) {
  if (!producer.control_predecessors().empty() || !producer.control_successors().empty()) {
    return false;
  }
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&producer)) {
    return fusion->fusion_kind() == FusionKind::kLoop && fusion->shape().IsArray() &&
           HasPlainBody(*fusion);
  }
  return IsLoopFusibleOp(producer);
}

// The kind of fusion `consumer` becomes when a producer is fused into it, or
// nullopt when it cannot host one.
std::optional<FusionKind> ConsumerFusionKind(const HloInstruction& consumer) {
  if (!consumer.control_predecessors().empty() || !consumer.control_successors().empty()) {
    return std::nullopt;
  }
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer)) {
    if (!HasPlainBody(*fusion)) return std::nullopt;
    if (fusion->fusion_kind() == FusionKind::kLoop) return FusionKind::kLoop;
    const HloInstruction* root = fusion->fused_instructions_computation()->root_instruction();
    if (fusion->fusion_kind() == FusionKind::kInput && root->opcode() == HloOpcode::kReduce) {
      return FusionKind::kInput;
    }
    return std::nullopt;
  }
  if (consumer.opcode() == HloOpcode::kReduce) return FusionKind::kInput;
  if (consumer.opcode() == HloOpcode::kConstant || consumer.opcode() == HloOpcode::kIota) {
    return std::nullopt;
  }
  if (IsLoopFusibleOp(consumer)) return FusionKind::kLoop;
  return std::nullopt;
}

// Whether `consumer` reads an element of `producer` more than once (through a
// broadcast): an expensive producer fused there would be recomputed per read.
bool ReusesProducerElements(const HloInstruction& consumer, const HloInstruction& producer) {
  const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer);
  if (fusion == nullptr) return consumer.opcode() == HloOpcode::kBroadcast;
  const HloComputation* fused = fusion->fused_instructions_computation();
  std::vector<const HloInstruction*> worklist;
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (consumer.operand(i) == &producer) worklist.push_back(fused->parameter_instruction(i));
  }
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!worklist.empty()) {
    const HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (instruction->opcode() == HloOpcode::kBroadcast) return true;
    for (const HloInstruction* user : instruction->users()) worklist.push_back(user);
  }
  return false;
}

bool ShouldFuse(const HloInstruction& producer, const HloInstruction& consumer) {
  if (!IsFusibleProducer(producer) || !ConsumerFusionKind(consumer).has_value()) return false;
  if (!IsCheapToDuplicate(producer) && ReusesProducerElements(consumer, producer)) return false;
  if (FusedInstructionCount(producer) + FusedInstructionCount(consumer) >
      CpuInstructionFusion::kMaxFusedInstructions) {
    return false;
  }
  bool only_user = producer.user_count() == 1 && !producer.IsRoot();
  if (only_user) return true;
  // Duplicating: only cheap producers, and only when every user can take a
  // copy (otherwise the producer's buffer is needed anyway).
  if (producer.IsRoot() || !IsCheapToDuplicate(producer)) return false;
  for (const HloInstruction* user : producer.users()) {
    if (!ConsumerFusionKind(*user).has_value()) return false;
  }
  return true;
}

// Fuses into each consumer of `computation`, consumers first. Returns
// whether anything changed.
absl::StatusOr<bool> FuseComputation(HloComputation* computation) {
  std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  absl::flat_hash_set<HloInstruction*> alive(order.begin(), order.end());
  bool changed = false;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* consumer = *it;
    if (!alive.contains(consumer)) continue;
    bool fused_one = true;
    while (fused_one) {
      fused_one = false;
      std::optional<FusionKind> kind = ConsumerFusionKind(*consumer);
      if (!kind.has_value()) break;
      for (HloInstruction* producer : consumer->operands()) {
        if (!ShouldFuse(*producer, *consumer)) continue;
        bool producer_goes = producer->user_count() == 1 && !producer->IsRoot();
        AXLE_ASSIGN_OR_RETURN(HloFusionInstruction * fusion,
                              FuseProducerIntoConsumer(producer, consumer, *kind));
        alive.erase(consumer);
        if (producer_goes) alive.erase(producer);
        alive.insert(fusion);
        consumer = fusion;
        fused_one = true;
        changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CpuInstructionFusion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    AXLE_ASSIGN_OR_RETURN(bool computation_changed, FuseComputation(computation));
    changed |= computation_changed;
  }
  // New fusions sit at the end of their computation's instruction list: a
  // schedule the module had no longer holds.
  if (changed) module->mutable_config().is_scheduled = false;
  return changed;
}

}  // namespace axle
