//===- single_device_collectives.cc - Collectives of a one-device run ------===//
#include "axle/cpu/runtime/single_device_collectives.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::cpu {
namespace {

HloInstruction* MakeTuple(HloComputation* computation,
                          const std::vector<HloInstruction*>& elements) {
  std::vector<Shape> shapes;
  for (const HloInstruction* element : elements) shapes.push_back(element->shape());
  return computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kTuple, ShapeUtil::MakeTupleShape(shapes), elements));
}

// Element `index` of `tuple`: the operand itself when `tuple` is a tuple
// instruction.
HloInstruction* ElementOf(HloInstruction* tuple, int64_t index) {
  if (tuple->opcode() == HloOpcode::kTuple) return tuple->mutable_operand(index);
  auto element = std::make_unique<HloGetTupleElementInstruction>(
      HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes(index),
      absl::Span<HloInstruction* const>{&tuple, 1});
  element->mutable_attrs()->tuple_index = index;
  return tuple->parent()->AddInstruction(std::move(element));
}

// Zeros of `shape` (arrays and tuples of them).
absl::StatusOr<HloInstruction*> MakeZeros(HloComputation* computation, const Shape& shape,
                                          const HloInstruction& for_instruction) {
  if (shape.IsArray()) {
    Literal zero(ShapeUtil::MakeShape(shape.element_type(), {}));
    return MakeFilledArray(computation, zero, WithDescendingLayout(shape));
  }
  if (!shape.IsTuple()) {
    return Unsupported(for_instruction,
                       absl::StrCat("no value for a ", shape.ToString(false), " element"));
  }
  std::vector<HloInstruction*> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    AXLE_ASSIGN_OR_RETURN(HloInstruction * zeros, MakeZeros(computation, element, for_instruction));
    elements.push_back(zeros);
  }
  return MakeTuple(computation, elements);
}

// The tuple an async start returns: element 0 the operands, element 1
// `value`, zeros for the rest (contexts the done would read on a device).
absl::StatusOr<HloInstruction*> MakeStartTuple(HloInstruction* start, HloInstruction* value) {
  HloComputation* computation = start->parent();
  const Shape& shape = start->shape();
  std::vector<HloInstruction*> operands(start->operands().begin(), start->operands().end());
  std::vector<Shape> operand_shapes;
  for (const HloInstruction* operand : operands) operand_shapes.push_back(operand->shape());
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.tuple_shapes().size()); ++i) {
    const Shape& element = shape.tuple_shapes(i);
    if (i == 1) {
      elements.push_back(value);
    } else if (i == 0 && operands.size() == 1 &&
               ShapeUtil::Compatible(operands[0]->shape(), element)) {
      elements.push_back(operands[0]);
    } else if (i == 0 &&
               ShapeUtil::Compatible(ShapeUtil::MakeTupleShape(operand_shapes), element)) {
      elements.push_back(MakeTuple(computation, operands));
    } else {
      AXLE_ASSIGN_OR_RETURN(HloInstruction * zeros, MakeZeros(computation, element, *start));
      elements.push_back(zeros);
    }
  }
  return MakeTuple(computation, elements);
}

// Whether every replica group of `collective` has a single member.
bool GroupsOfOne(const HloCollectiveInstruction& collective) {
  if (collective.attrs().iota_replica_groups) {
    return collective.attrs().iota_replica_groups->group_size == 1;
  }
  if (collective.replica_groups().empty()) return false;
  for (const ReplicaGroup& group : collective.replica_groups()) {
    if (group.replica_ids_size() != 1) return false;
  }
  return true;
}

class Lowering {
 public:
  explicit Lowering(const HloModuleConfig& config)
      : replicas_(config.replica_count), partitions_(config.num_partitions) {}

  // The instruction that replaces `instruction`, or null to keep it.
  absl::StatusOr<HloInstruction*> Lower(HloInstruction* instruction) {
    HloComputation* computation = instruction->parent();
    const HloOpcode opcode = instruction->opcode();
    switch (opcode) {
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
        if (replicas_ * partitions_ > 1) return MoreThanOneDevice(*instruction);
        return MakeZeros(computation, instruction->shape(), *instruction);
      case HloOpcode::kAsyncStart:
        return LowerAsyncStart(instruction);
      case HloOpcode::kAsyncUpdate:
        return instruction->mutable_operand(0);
      case HloOpcode::kCopyStart:
        // (destination, source, context): the copy is the operand itself.
        return MakeStartTuple(instruction, instruction->mutable_operand(0));
      case HloOpcode::kCopyDone:
        return LowerDone(instruction);
      default:
        break;
    }
    if (opcode == HloOpcode::kAsyncDone ||
        (HloOpcodeIsCollective(opcode) && HloOpcodeIsAsyncDone(opcode))) {
      return LowerDone(instruction);
    }
    if (HloOpcodeIsCollective(opcode)) return LowerCollective(instruction);
    return nullptr;
  }

 private:
  absl::Status MoreThanOneDevice(const HloInstruction& instruction) const {
    return Unsupported(instruction, absl::StrCat("this op needs ", replicas_ * partitions_,
                                                 " devices (replica_count=", replicas_,
                                                 ", num_partitions=", partitions_,
                                                 "), the cpu platform runs one"));
  }

  absl::StatusOr<HloInstruction*> LowerCollective(HloInstruction* instruction) {
    HloComputation* computation = instruction->parent();
    const HloOpcode opcode = instruction->opcode();
    const auto& collective = *cast<HloCollectiveInstruction>(instruction);
    if (replicas_ * partitions_ > 1 && !GroupsOfOne(collective)) {
      return MoreThanOneDevice(*instruction);
    }
    if (opcode == HloOpcode::kRaggedAllToAll) {
      return Unsupported(*instruction, "ragged-all-to-all is not supported yet");
    }
    // all-reduce-start returns its value; the other starts a tuple.
    Shape value_shape = instruction->shape();
    const bool start_tuple = HloOpcodeIsAsyncStart(opcode) && opcode != HloOpcode::kAllReduceStart;
    if (start_tuple) {
      if (!value_shape.IsTuple() || value_shape.tuple_shapes().size() < 2) {
        return Unsupported(*instruction, "an async start whose result is not a tuple");
      }
      value_shape = value_shape.tuple_shapes(1);
    }
    std::vector<HloInstruction*> operands(instruction->operands().begin(),
                                          instruction->operands().end());
    HloInstruction* value = operands.size() == 1 ? operands[0] : MakeTuple(computation, operands);
    if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
      // Device 0 receives only what a {0,0} pair sends it.
      bool self_pair = false;
      for (const auto& [source, target] : collective.attrs().source_target_pairs) {
        self_pair = self_pair || (source == 0 && target == 0);
      }
      if (!self_pair) {
        AXLE_ASSIGN_OR_RETURN(value, MakeZeros(computation, value_shape, *instruction));
      }
    }
    if (!ShapeUtil::Compatible(value->shape(), value_shape)) {
      const Shape& from = value->shape();
      if (!from.IsArray() || !value_shape.IsArray() ||
          from.element_type() != value_shape.element_type() ||
          from.num_elements() != value_shape.num_elements()) {
        return Unsupported(*instruction,
                           absl::StrCat("gathering or scattering ", from.ToString(false), " into ",
                                        value_shape.ToString(false),
                                        " needs more than one participant; the cpu platform "
                                        "runs one device"));
      }
      value = MakeReshape(value, WithDescendingLayout(value_shape));
    }
    if (!start_tuple) return value;
    return MakeStartTuple(instruction, value);
  }

  // async-start: call the wrapped computation now.
  absl::StatusOr<HloInstruction*> LowerAsyncStart(HloInstruction* instruction) {
    const Shape& shape = instruction->shape();
    HloComputation* wrapped = cast<HloAsyncInstruction>(instruction)->async_wrapped_computation();
    if (!shape.IsTuple() || shape.tuple_shapes().size() < 2 ||
        !ShapeUtil::Compatible(shape.tuple_shapes(1), wrapped->root_instruction()->shape())) {
      return Unsupported(*instruction, absl::StrCat("the result ", shape.ToString(false),
                                                    " does not hold the wrapped computation's"));
    }
    std::vector<HloInstruction*> operands(instruction->operands().begin(),
                                          instruction->operands().end());
    HloInstruction* call = instruction->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, shape.tuple_shapes(1), operands));
    call->set_to_apply(wrapped);
    return MakeStartTuple(instruction, call);
  }

  // A -done: element 1 of its start's tuple, or the start's value itself
  // (all-reduce-done).
  absl::StatusOr<HloInstruction*> LowerDone(HloInstruction* instruction) {
    HloInstruction* start = instruction->mutable_operand(0);
    const Shape& from = start->shape();
    if (from.IsTuple() && from.tuple_shapes().size() >= 2 &&
        ShapeUtil::Compatible(from.tuple_shapes(1), instruction->shape())) {
      return ElementOf(start, 1);
    }
    if (ShapeUtil::Compatible(from, instruction->shape())) return start;
    return Unsupported(*instruction, absl::StrCat("its operand ", from.ToString(false),
                                                  " is not the tuple of an async start"));
  }

  int64_t replicas_, partitions_;
};

}  // namespace

absl::StatusOr<bool> LowerSingleDeviceCollectives::Run(HloModule* module) {
  Lowering lowering(module->config());
  bool changed = false;
  // Callees first, so that an async-start's wrapped computation is lowered
  // before the start becomes a call of it.
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      AXLE_ASSIGN_OR_RETURN(HloInstruction * replacement, lowering.Lower(instruction));
      if (replacement == nullptr) continue;
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
      changed = true;
    }
  }
  // Reducers of the all-reduces, the async computations' done halves.
  if (changed) module->RemoveUnusedComputations();
  return changed;
}

}  // namespace axle::cpu
