// Loop and reduction fusion for the CPU (see instruction_fusion.h).
#include "axle/hlo/transforms/instruction_fusion.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/analysis/elementwise_access.h"
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle {
namespace {

// Ops a loop kernel computes element by element from its operands.
bool IsLoopFusibleOp(const HloInstruction& instruction) {
  if (instruction.HasSideEffect()) return false;
  if (!instruction.shape().IsArray()) return false;
  if (instruction.IsElementwise() || IsIndexRemappingOp(instruction.opcode())) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kBitcast:
      // Not one that changes the layout (from layout-normalization): outside
      // a kernel it moves no data; inside, every element would pay a
      // delinearization.
      return ShapeUtil::HasDescendingLayout(instruction.shape()) &&
             ShapeUtil::HasDescendingLayout(instruction.operand(0)->shape());
    // Between types of one width: elementwise (random bits made floats).
    case HloOpcode::kBitcastConvert:
      return primitive_util::BitWidth(instruction.shape().element_type()) ==
             primitive_util::BitWidth(instruction.operand(0)->shape().element_type());
    case HloOpcode::kTranspose:
    // A row gather (an embedding lookup) and its consumers are one loop:
    // no gathered copy is written and read back.
    case HloOpcode::kGather:
      return true;
    case HloOpcode::kConstant:
      return instruction.shape().num_elements() <= InstructionFusion::kMaxFusedConstantElements;
    default:
      return false;
  }
}

// Parameters without users (those a fusion grown in place no longer reads,
// fusion_utils.h) do not count.
int64_t FusedInstructionCount(const HloInstruction& instruction) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
    const HloComputation* fused = fusion->fused_instructions_computation();
    int64_t count = fused->instruction_count();
    for (const HloInstruction* parameter : fused->parameter_instructions()) {
      if (parameter->user_count() == 0) --count;
    }
    return count;
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

// A row reduction (a reduce of an input's trailing dimensions, or a kInput
// fusion whose root is one): it fuses into a consumer that reads it through
// row broadcasts, where the kernel computes it once per row.
bool IsRowReductionProducer(const HloInstruction& producer) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&producer)) {
    return fusion->fusion_kind() == FusionKind::kInput && HasPlainBody(*fusion) &&
           IsRowReduce(*fusion->fused_instructions_computation()->root_instruction());
  }
  return IsRowReduce(producer) && !producer.HasSideEffect();
}

bool IsFusibleProducer(const HloInstruction& producer) {
  if (!producer.control_predecessors().empty() || !producer.control_successors().empty()) {
    return false;
  }
  if (IsRowReductionProducer(producer)) return true;
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&producer)) {
    return fusion->fusion_kind() == FusionKind::kLoop && fusion->shape().IsArray() &&
           HasPlainBody(*fusion);
  }
  return IsLoopFusibleOp(producer);
}

bool ContainsReduce(const HloInstruction& instruction) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
    for (const HloInstruction* fused : fusion->fused_instructions_computation()->instructions()) {
      if (fused->opcode() == HloOpcode::kReduce) return true;
    }
    return false;
  }
  return instruction.opcode() == HloOpcode::kReduce;
}

// The loop prefix (row_index_analysis.h) `consumer`'s kernel reads
// `producer` with, once fused.
int64_t ProducerLoopPrefix(const HloInstruction& producer, const HloInstruction& consumer) {
  std::optional<int64_t> prefix;
  auto meet = [&](int64_t value) {
    prefix = prefix.has_value() ? std::min(*prefix, value) : value;
  };
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer)) {
    const HloComputation* fused = fusion->fused_instructions_computation();
    RowIndexAnalysis analysis(*fused);
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) == &producer)
        meet(analysis.LoopPrefix(fused->parameter_instruction(i)));
    }
  } else {
    const int64_t root_prefix = consumer.shape().IsArray() ? consumer.shape().rank() : 0;
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) == &producer) meet(OperandLoopPrefix(consumer, i, root_prefix));
    }
  }
  return prefix.value_or(0);
}

// Whether fusing `producer` into `consumer` leaves every reduce inside the
// result (other than its root) hoistable: computed once per row, never per
// element.
bool KeepsReducesHoistable(const HloInstruction& producer, const HloInstruction& consumer,
                           const InstructionFusion::Options& options) {
  if (!ContainsReduce(producer)) return true;
  if (!options.fuse_reductions_into_consumers) return false;
  const int64_t prefix = ProducerLoopPrefix(producer, consumer);
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&producer)) {
    const HloComputation* fused = fusion->fused_instructions_computation();
    RowIndexAnalysis analysis(*fused, prefix);
    for (const HloInstruction* instruction : fused->instructions()) {
      if (instruction->opcode() != HloOpcode::kReduce) continue;
      // The producer's root is an inner value of the fusion now.
      if (instruction == fused->root_instruction()) {
        if (prefix < 1 || prefix != instruction->shape().rank()) return false;
      } else if (!analysis.IsHoistableRowValue(instruction)) {
        return false;
      }
    }
    return true;
  }
  return prefix >= 1 && prefix == producer.shape().rank();
}

// Whether `consumer`'s kernel computes the fused `producer` once per row
// (its value is read through row broadcasts only, at the outer loops'
// index), so an expensive producer costs no more than in its own kernel.
bool IsHoistedInto(const HloInstruction& producer, const HloInstruction& consumer) {
  if (!producer.shape().IsArray() || producer.shape().rank() < 1) return false;
  if (ProducerLoopPrefix(producer, consumer) != producer.shape().rank()) return false;
  const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer);
  if (fusion == nullptr) return IsRowBroadcast(consumer);
  const HloComputation* fused = fusion->fused_instructions_computation();
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (consumer.operand(i) != &producer) continue;
    for (const HloInstruction* user : fused->parameter_instruction(i)->users()) {
      if (!IsRowBroadcast(*user)) return false;
    }
  }
  return true;
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
// broadcast or a gather): an expensive producer fused there would be
// recomputed per read.
bool ReusesProducerElements(const HloInstruction& consumer, const HloInstruction& producer) {
  if (IsHoistedInto(producer, consumer)) return false;
  const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer);
  if (fusion == nullptr) {
    return consumer.opcode() == HloOpcode::kBroadcast || consumer.opcode() == HloOpcode::kGather;
  }
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
    // A broadcast reads each element many times, a gather any number.
    if (instruction->opcode() == HloOpcode::kBroadcast ||
        instruction->opcode() == HloOpcode::kGather) {
      return true;
    }
    // A reduce inside a loop fusion is hoisted: it reads each element of
    // its input once per row.
    if (instruction->opcode() == HloOpcode::kReduce) continue;
    for (const HloInstruction* user : instruction->users()) worklist.push_back(user);
  }
  return false;
}

// How many instructions of `consumer`'s kernel are computed again for each
// element that reads them: those whose values reach a broadcast, or a
// gather's operand, within the fused computation (constants aside).
int64_t RecomputedInstructionCount(const HloInstruction& consumer) {
  const auto* fusion = dyn_cast<HloFusionInstruction>(&consumer);
  if (fusion == nullptr) return 0;
  std::vector<const HloInstruction*> worklist;
  for (const HloInstruction* instruction :
       fusion->fused_instructions_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kBroadcast ||
        instruction->opcode() == HloOpcode::kGather) {
      worklist.push_back(instruction->operand(0));
    }
  }
  absl::flat_hash_set<const HloInstruction*> seen;
  int64_t count = 0;
  while (!worklist.empty()) {
    const HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (instruction->opcode() == HloOpcode::kParameter || !seen.insert(instruction).second) {
      continue;
    }
    // A constant costs a load (or nothing), however often it is read.
    if (instruction->opcode() != HloOpcode::kConstant) ++count;
    for (const HloInstruction* operand : instruction->operands()) worklist.push_back(operand);
  }
  return count;
}

// How many instructions `producer` and the cheap fusible producers behind
// it hold (constants aside), counted up to `limit` + 1: what a consumer that starts absorbing
// the chain would absorb in the end. Fusing only chains that fit entirely
// keeps a long chain in a kernel of its own (its one output read by many)
// instead of letting each consumer take its tail and leave the rest with
// every value the tails read as outputs.
int64_t FusibleChainSize(const HloInstruction& producer, int64_t limit) {
  std::vector<const HloInstruction*> worklist = {&producer};
  absl::flat_hash_set<const HloInstruction*> seen;
  int64_t count = 0;
  while (!worklist.empty() && count <= limit) {
    const HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (instruction != &producer &&
        (!IsFusibleProducer(*instruction) || !IsCheapToDuplicate(*instruction))) {
      continue;
    }
    if (instruction->opcode() != HloOpcode::kConstant) count += FusedInstructionCount(*instruction);
    for (const HloInstruction* operand : instruction->operands()) worklist.push_back(operand);
  }
  return count;
}

// Whether the GPU computes `instruction` at the cost of a few instructions
// (XLA:GPU's rule): exp, divide, sqrt and rsqrt of 32-bit or narrower
// floats, which a kernel rereading a duplicate's value from memory would
// spend more on.
bool IsFastGpuMath(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kExp:
    case HloOpcode::kDivide:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
      return instruction.shape().IsArray() &&
             primitive_util::IsFloatingPointType(instruction.shape().element_type()) &&
             primitive_util::BitWidth(instruction.shape().element_type()) <= 32;
    default:
      return false;
  }
}

// Whether `producer` may be duplicated into each of its users.
bool CheapToDuplicateFor(const HloInstruction& producer,
                         const InstructionFusion::Options& options) {
  if (!options.duplicate_fast_gpu_math) return IsCheapToDuplicate(producer);
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&producer)) {
    for (const HloInstruction* fused : fusion->fused_instructions_computation()->instructions()) {
      if (!IsFastGpuMath(*fused) && !IsCheapToDuplicate(*fused)) return false;
    }
    return true;
  }
  return IsFastGpuMath(producer) || IsCheapToDuplicate(producer);
}

// Whether `consumer` can take `producer` (ignoring who else reads it).
bool CanFuseInto(const HloInstruction& producer, const HloInstruction& consumer,
                 const InstructionFusion::Options& options) {
  return ConsumerFusionKind(consumer).has_value() &&
         KeepsReducesHoistable(producer, consumer, options);
}

// A few cheap ops spreading a handful of values over an array (a scalar
// or a slice of a small array, broadcast): fused, it costs a load or two
// per element; left out, a kernel writing the whole array and every user
// reading it back. Such a producer may grow a consumer past the size cap.
bool IsSmallBroadcastProducer(const HloInstruction& producer) {
  constexpr int64_t kMaxInputElements = 64;
  constexpr int64_t kMaxInstructions = 8;
  if (FusedInstructionCount(producer) > kMaxInstructions || !IsCheapToDuplicate(producer)) {
    return false;
  }
  for (const HloInstruction* operand : producer.operands()) {
    if (!operand->shape().IsArray() || operand->shape().num_elements() > kMaxInputElements) {
      return false;
    }
  }
  return true;
}

// `consumer` can host a producer (ConsumerFusionKind, which the caller
// computed once: growing a fusion does not change it).
bool ShouldFuse(const HloInstruction& producer, const HloInstruction& consumer,
                const InstructionFusion::Options& options) {
  if (!IsFusibleProducer(producer) || !KeepsReducesHoistable(producer, consumer, options)) {
    return false;
  }
  if (!IsCheapToDuplicate(producer) && ReusesProducerElements(consumer, producer)) return false;
  if (options.max_recomputed_instructions.has_value() &&
      ReusesProducerElements(consumer, producer) &&
      RecomputedInstructionCount(consumer) +
              FusibleChainSize(producer, *options.max_recomputed_instructions) >
          *options.max_recomputed_instructions) {
    return false;
  }
  if (FusedInstructionCount(producer) + FusedInstructionCount(consumer) >
          options.max_fused_instructions &&
      !IsSmallBroadcastProducer(producer)) {
    return false;
  }
  bool only_user = producer.user_count() == 1 && !producer.IsRoot();
  if (only_user) return true;
  // A reduction is never computed twice.
  if (ContainsReduce(producer)) return false;
  // Duplicating: only cheap producers, and only when every user can take a
  // copy (otherwise the producer's buffer is needed anyway).
  if (producer.IsRoot() || !CheapToDuplicateFor(producer, options)) return false;
  for (const HloInstruction* user : producer.users()) {
    if (user != &consumer && !CanFuseInto(producer, *user, options)) return false;
  }
  return true;
}

// Fuses into each consumer of `computation`, consumers first. Returns
// whether anything changed. A consumer that is a fusion already grows in
// place (fusion_utils.h: FuseProducerIntoFusionInPlace), the operand slots
// it no longer reads pointing at `placeholder`, and is compacted once when
// nothing more fuses into it: rebuilding it at every step would cost time
// quadratic in its size (threefry's unrolled rounds fuse into fusions of
// hundreds of instructions).
absl::StatusOr<bool> FuseComputation(HloComputation* computation,
                                     const InstructionFusion::Options& options) {
  std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  absl::flat_hash_set<HloInstruction*> alive(order.begin(), order.end());
  HloInstruction* placeholder = nullptr;
  bool changed = false;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* consumer = *it;
    if (!alive.contains(consumer)) continue;
    bool grown_in_place = false;
    FusionGrowth growth;
    bool fused_one = true;
    // Growing a fusion in place keeps its kind (and whether it can host
    // producers at all): computed again only for a new consumer.
    std::optional<FusionKind> kind = ConsumerFusionKind(*consumer);
    while (fused_one && kind.has_value()) {
      fused_one = false;
      // In the order of the operands fusing step by step would give it.
      const std::vector<HloInstruction*> producers =
          grown_in_place ? growth.parameter_order : consumer->operands();
      for (HloInstruction* producer : producers) {
        // Last: it evaluates the fusion fusing would give as a whole.
        if (producer == placeholder || !ShouldFuse(*producer, *consumer, options) ||
            ExceedsCodeDuplication(*producer, *consumer, growth.copies)) {
          continue;
        }
        bool producer_goes = producer->user_count() == 1 && !producer->IsRoot();
        if (auto* grown = dyn_cast<HloFusionInstruction>(consumer)) {
          if (placeholder == nullptr) {
            placeholder = computation->AddInstruction(
                HloInstruction::Create(HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), {}));
          }
          AXLE_RETURN_IF_ERROR(FuseProducerIntoFusionInPlace(producer, grown, placeholder, growth));
          grown_in_place = true;
        } else {
          // The new fused computation's root is consumer's copy, its
          // operands in consumer's order: where it reads the producer's
          // copy, which later steps reuse while the producer stays.
          const auto operands = consumer->operands();
          const int64_t slot =
              std::find(operands.begin(), operands.end(), producer) - operands.begin();
          AXLE_ASSIGN_OR_RETURN(HloFusionInstruction * fusion,
                                FuseProducerIntoConsumer(producer, consumer, *kind));
          if (!producer_goes) {
            growth.copies[producer] =
                fusion->fused_instructions_computation()->root_instruction()->mutable_operand(slot);
          }
          alive.erase(consumer);
          alive.insert(fusion);
          consumer = fusion;
          kind = ConsumerFusionKind(*consumer);
        }
        if (producer_goes) alive.erase(producer);
        for (HloInstruction* removed : growth.removed) alive.erase(removed);
        growth.removed.clear();
        fused_one = true;
        changed = true;
        break;
      }
    }
    if (grown_in_place) {
      AXLE_ASSIGN_OR_RETURN(HloFusionInstruction * compacted,
                            CompactFusion(cast<HloFusionInstruction>(consumer), growth));
      alive.erase(consumer);
      alive.insert(compacted);
    }
  }
  if (placeholder != nullptr) AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(placeholder));
  return changed;
}

}  // namespace

absl::StatusOr<bool> InstructionFusion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    AXLE_ASSIGN_OR_RETURN(bool computation_changed, FuseComputation(computation, options_));
    changed |= computation_changed;
  }
  // New fusions sit at the end of their computation's instruction list: a
  // schedule the module had no longer holds.
  if (changed) module->mutable_config().is_scheduled = false;
  return changed;
}

}  // namespace axle
