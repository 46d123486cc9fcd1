// Loop-invariant constants sunk into while bodies and conditions (see
// while_loop_constant_sinking.h).
#include "axle/hlo/transforms/while_loop_constant_sinking.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/call_inliner.h"

namespace axle {
namespace {

// The positions of the while's called computations.
constexpr int64_t kCondition = 0;
constexpr int64_t kBody = 1;

// A copy of `computation` added to `module`, its name and its instructions'
// names made unique; the computations it calls are shared.
HloComputation* CloneComputation(HloModule* module, HloComputation* computation) {
  auto copy = std::make_unique<HloComputation>(module->GetUniqueName(computation->name()));
  copy->SetExecutionThread(computation->execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  const std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  for (HloInstruction* instruction : order) {
    std::vector<HloInstruction*> operands;
    operands.reserve(instruction->operand_count());
    for (HloInstruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    std::unique_ptr<HloInstruction> clone =
        instruction->CloneWithNewOperands(instruction->shape(), operands);
    clone->SetName(module->GetUniqueName(instruction->name()));
    map[instruction] = copy->AddInstruction(std::move(clone));
  }
  for (HloInstruction* instruction : order) {
    for (HloInstruction* successor : instruction->control_successors()) {
      map.at(instruction)->AddControlDependencyTo(map.at(successor));
    }
  }
  copy->set_root_instruction(map.at(computation->root_instruction()));
  return module->AddEmbeddedComputation(std::move(copy));
}

bool HasFusion(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.instructions()) {
    if (instruction->opcode() == HloOpcode::kFusion) return true;
  }
  return false;
}

// Whether `computation` reads state element `index` through a
// get-tuple-element other than the body root's pass-through of it.
bool ReadsElement(const HloComputation& computation, int64_t index, bool is_body) {
  const HloInstruction* root = computation.root_instruction();
  for (const HloInstruction* user : computation.parameter_instruction(0)->users()) {
    const auto* gte = dyn_cast<HloGetTupleElementInstruction>(user);
    if (gte == nullptr || gte->tuple_index() != index) continue;
    for (const HloInstruction* reader : gte->users()) {
      if (!is_body || reader != root) return true;
      for (int64_t j = 0; j < reader->operand_count(); ++j) {
        if (reader->operand(j) == gte && j != index) return true;
      }
    }
  }
  return false;
}

// Replaces `computation`'s reads of state element `index` with a copy of
// `constant`, keeping the body root's pass-through.
absl::Status SinkElement(HloModule* module, HloComputation* computation, int64_t index,
                         const HloInstruction& constant, bool is_body) {
  HloInstruction* root = computation->root_instruction();
  HloInstruction* copy = nullptr;
  const std::vector<HloInstruction*> users = computation->parameter_instruction(0)->users();
  for (HloInstruction* user : users) {
    auto* gte = dyn_cast<HloGetTupleElementInstruction>(user);
    if (gte == nullptr || gte->tuple_index() != index) continue;
    const std::vector<HloInstruction*> readers = gte->users();
    for (HloInstruction* reader : readers) {
      for (int64_t j = 0; j < reader->operand_count(); ++j) {
        if (reader->operand(j) != gte || (is_body && reader == root && j == index)) continue;
        if (copy == nullptr) {
          std::unique_ptr<HloInstruction> clone =
              constant.CloneWithNewOperands(constant.shape(), {});
          clone->SetName(module->GetUniqueName(constant.name()));
          copy = computation->AddInstruction(std::move(clone));
        }
        AXLE_RETURN_IF_ERROR(reader->ReplaceOperandWith(j, copy));
      }
    }
    // A read left with no user goes, so that the element looks unread.
    if (gte->users().empty() && gte != root) {
      AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(gte));
    }
  }
  return absl::OkStatus();
}

// `value` seen through get-tuple-elements of tuples (while-loop-simplifier
// narrows a loop's init into such a tuple of get-tuple-elements).
const HloInstruction* ThroughTuples(const HloInstruction* value) {
  while (value->opcode() == HloOpcode::kGetTupleElement &&
         value->operand(0)->opcode() == HloOpcode::kTuple) {
    value = value->operand(0)->operand(cast<HloGetTupleElementInstruction>(value)->tuple_index());
  }
  return value;
}

absl::StatusOr<bool> SinkConstants(HloModule* module, HloInstruction* loop) {
  const HloInstruction* init = loop->operand(0);
  HloComputation* body = loop->while_body();
  HloComputation* condition = loop->while_condition();
  if (init->opcode() != HloOpcode::kTuple ||
      body->root_instruction()->opcode() != HloOpcode::kTuple || body->num_parameters() != 1 ||
      condition->num_parameters() != 1) {
    return false;
  }
  const HloInstruction* root = body->root_instruction();
  const HloInstruction* state = body->parameter_instruction(0);
  std::vector<int64_t> sunk;
  for (int64_t i = 0; i < init->operand_count() && i < root->operand_count(); ++i) {
    const HloInstruction* value = ThroughTuples(init->operand(i));
    const auto* passed = dyn_cast<HloGetTupleElementInstruction>(root->operand(i));
    if (value->opcode() != HloOpcode::kConstant || !value->shape().IsArray() || passed == nullptr ||
        passed->operand(0) != state || passed->tuple_index() != i) {
      continue;
    }
    if (ReadsElement(*body, i, /*is_body=*/true) ||
        ReadsElement(*condition, i, /*is_body=*/false)) {
      sunk.push_back(i);
    }
  }
  if (sunk.empty()) return false;
  // Another loop's constants may differ: this loop gets its own copies.
  if (CountCallSites(*module, *body) != 1 || CountCallSites(*module, *condition) != 1) {
    if (HasFusion(*body) || HasFusion(*condition)) return false;
    if (CountCallSites(*module, *body) != 1) {
      body = CloneComputation(module, body);
      loop->set_called_computation(kBody, body);
    }
    if (CountCallSites(*module, *condition) != 1) {
      condition = CloneComputation(module, condition);
      loop->set_called_computation(kCondition, condition);
    }
  }
  for (int64_t i : sunk) {
    const HloInstruction& constant = *ThroughTuples(init->operand(i));
    AXLE_RETURN_IF_ERROR(SinkElement(module, body, i, constant, /*is_body=*/true));
    AXLE_RETURN_IF_ERROR(SinkElement(module, condition, i, constant, /*is_body=*/false));
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::Run(HloModule* module) {
  bool changed = false;
  std::vector<HloInstruction*> loops;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kWhile) loops.push_back(instruction);
    }
  }
  for (HloInstruction* loop : loops) {
    AXLE_ASSIGN_OR_RETURN(bool sunk, SinkConstants(module, loop));
    changed = changed || sunk;
  }
  return changed;
}

}  // namespace axle
