//===- lanewise_computation.cc - A scalar computation run on many lanes ----===//
#include "axle/eval/lanewise_computation.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "axle/base/status_macros.h"

namespace axle::eval_internal {
namespace {

bool IsScalarArray(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

}  // namespace

void CopyLanes(const Lanes& lanes, void* out, int64_t n) {
  int width = primitive_util::ByteWidth(lanes.type);
  auto* dst = static_cast<uint8_t*>(out);
  if (!lanes.broadcast) {
    if (dst != lanes.data) std::memcpy(dst, lanes.data, n * width);
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * width, lanes.data, width);
}

std::unique_ptr<LanewiseComputation> LanewiseComputation::Compile(
    const HloComputation& computation) {
  std::unique_ptr<LanewiseComputation> result(new LanewiseComputation(computation));
  absl::flat_hash_map<const HloInstruction*, int> slot_of;
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  for (const HloInstruction* instruction : order) {
    Step step{instruction, Kind::kElementwise, 0, {}};
    for (const HloInstruction* operand : instruction->operands()) {
      auto it = slot_of.find(operand);
      if (it == slot_of.end()) return nullptr;
      step.operands.push_back(it->second);
    }
    const Shape& shape = instruction->shape();
    HloOpcode op = instruction->opcode();
    int slot = static_cast<int>(result->steps_.size());
    if (op == HloOpcode::kTuple) {
      // Allowed as the root (its operands are the results) or under
      // get-tuple-element; it has no lanes of its own.
      for (const HloInstruction* operand : instruction->operands()) {
        if (!IsScalarArray(operand->shape())) return nullptr;
      }
      step.kind = Kind::kAlias;
    } else if (!IsScalarArray(shape)) {
      return nullptr;
    } else if (op == HloOpcode::kParameter) {
      step.kind = Kind::kParameter;
      step.parameter_number = cast<HloParameterInstruction>(instruction)->parameter_number();
    } else if (op == HloOpcode::kConstant) {
      step.kind = Kind::kConstant;
    } else if (op == HloOpcode::kGetTupleElement) {
      const HloInstruction* tuple = instruction->operand(0);
      int64_t index = cast<HloGetTupleElementInstruction>(instruction)->tuple_index();
      if (tuple->opcode() != HloOpcode::kTuple || index < 0 || index >= tuple->operand_count()) {
        return nullptr;
      }
      step.kind = Kind::kAlias;
      step.operands = {slot_of[tuple->operand(index)]};
    } else if ((op == HloOpcode::kReshape || op == HloOpcode::kBitcast ||
                op == HloOpcode::kBroadcast || op == HloOpcode::kCopy) &&
               instruction->operand(0)->shape().element_type() == shape.element_type() &&
               IsScalarArray(instruction->operand(0)->shape())) {
      step.kind = Kind::kAlias;
    } else if (instruction->IsElementwise() ||
               (op == HloOpcode::kBitcastConvert &&
                primitive_util::BitWidth(instruction->operand(0)->shape().element_type()) ==
                    primitive_util::BitWidth(shape.element_type()))) {
      for (const HloInstruction* operand : instruction->operands()) {
        if (!IsScalarArray(operand->shape())) return nullptr;
      }
      step.kind = Kind::kElementwise;
    } else {
      return nullptr;
    }
    slot_of[instruction] = slot;
    result->steps_.push_back(std::move(step));
    Slot s;
    s.type = shape.IsArray() ? shape.element_type() : PRIMITIVE_TYPE_INVALID;
    result->slots_.push_back(std::move(s));
  }
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) return nullptr;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) {
      result->result_slots_.push_back(slot_of[operand]);
      result->result_types_.push_back(operand->shape().element_type());
    }
  } else if (IsScalarArray(root->shape())) {
    result->result_slots_.push_back(slot_of[root]);
    result->result_types_.push_back(root->shape().element_type());
  } else {
    return nullptr;
  }
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    if (!IsScalarArray(computation.parameter_instruction(i)->shape())) return nullptr;
  }
  return result;
}

absl::Status LanewiseComputation::Run(absl::Span<const Lanes> args, absl::Span<void* const> results,
                                      int64_t n) {
  if (static_cast<int64_t>(args.size()) != computation_.num_parameters() ||
      results.size() != result_slots_.size()) {
    return absl::InternalError(absl::StrCat("computation ", computation_.name(), " called with ",
                                            args.size(), " arguments"));
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    Slot& slot = slots_[i];
    switch (step.kind) {
      case Kind::kParameter: {
        const Lanes& arg = args[step.parameter_number];
        if (arg.type != slot.type) {
          return absl::InvalidArgumentError(absl::StrCat(
              "computation ", computation_.name(), ": parameter ", step.parameter_number, " is ",
              primitive_util::LowercasePrimitiveTypeName(slot.type), " but gets ",
              primitive_util::LowercasePrimitiveTypeName(arg.type)));
        }
        slot.view = arg;
        break;
      }
      case Kind::kConstant: {
        const Literal& literal = cast<HloConstantInstruction>(step.instruction)->literal();
        if (!literal.shape().IsArray() || literal.shape().element_type() != slot.type ||
            literal.element_count() != 1) {
          return InvalidInstruction(*step.instruction, "constant does not match its shape");
        }
        slot.view = Lanes{slot.type, literal.untyped_data(), true};
        break;
      }
      case Kind::kAlias:
        if (!step.operands.empty() && step.instruction->opcode() != HloOpcode::kTuple) {
          slot.view = slots_[step.operands[0]].view;
          slot.view.type = slot.type;
        }
        break;
      case Kind::kElementwise: {
        Lanes operands[3];
        bool all_broadcast = true;
        if (step.operands.size() > 3)
          return InvalidInstruction(*step.instruction, "too many operands");
        for (size_t k = 0; k < step.operands.size(); ++k) {
          operands[k] = slots_[step.operands[k]].view;
          all_broadcast = all_broadcast && operands[k].broadcast;
        }
        // When every operand is one broadcast value, so is the result.
        int64_t lanes = all_broadcast ? 1 : n;
        size_t bytes =
            static_cast<size_t>(std::max<int64_t>(lanes, 1)) * primitive_util::ByteWidth(slot.type);
        if (slot.storage.size() < bytes) slot.storage.resize(bytes);
        AXLE_RETURN_IF_ERROR(EvaluateElementwiseLanes(
            *step.instruction, absl::MakeConstSpan(operands, step.operands.size()), slot.type,
            slot.storage.data(), lanes));
        slot.view = Lanes{slot.type, slot.storage.data(), all_broadcast};
        break;
      }
    }
  }
  for (size_t j = 0; j < result_slots_.size(); ++j)
    CopyLanes(slots_[result_slots_[j]].view, results[j], n);
  return absl::OkStatus();
}

}  // namespace axle::eval_internal
