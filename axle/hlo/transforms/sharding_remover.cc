//===- sharding_remover.cc - Sharding annotations on a one-device run ------===//
#include "axle/hlo/transforms/sharding_remover.h"

#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

constexpr absl::string_view kPass = "sharding-remover";

// `value` in `shape`'s layout (a copy where the layouts differ).
HloInstruction* InLayoutOf(HloInstruction* value, const Shape& shape) {
  if (!shape.IsArray() || SameShapeAndLayout(value->shape(), shape)) return value;
  return value->parent()->AddInstruction(HloInstruction::Create(HloOpcode::kCopy, shape, {value}));
}

absl::StatusOr<HloInstruction*> Lower(HloInstruction* instruction) {
  if (instruction->opcode() != HloOpcode::kCustomCall ||
      !IsShardingAnnotationTarget(
          cast<HloCustomCallInstruction>(instruction)->custom_call_target())) {
    return nullptr;
  }
  const Shape& shape = instruction->shape();
  const int64_t operand_count = instruction->operand_count();
  // A marker with no value (xla.sdy.ShardingGroup).
  if (shape.IsTuple() && shape.tuple_shapes().empty()) return MakeTuple(instruction->parent(), {});
  // The shapes the annotation would have on one device: its operands'.
  std::vector<const Shape*> expected;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) expected.push_back(&element);
  } else {
    expected.push_back(&shape);
  }
  if (static_cast<int64_t>(expected.size()) != operand_count) {
    return PassUnimplemented(
        kPass, *instruction,
        absl::StrCat(cast<HloCustomCallInstruction>(instruction)->custom_call_target(), " of ",
                     operand_count, " operand(s) with result ", shape.ToString(false),
                     ": not one value per operand"));
  }
  std::vector<HloInstruction*> values;
  for (int64_t i = 0; i < operand_count; ++i) {
    HloInstruction* operand = instruction->mutable_operand(i);
    if (!ShapeUtil::Compatible(operand->shape(), *expected[i])) {
      return PassUnimplemented(
          kPass, *instruction,
          absl::StrCat(cast<HloCustomCallInstruction>(instruction)->custom_call_target(), " maps ",
                       operand->shape().ToString(false), " to ", expected[i]->ToString(false),
                       ": a program partitioned over several devices needs SPMD partitioning, "
                       "which is not supported"));
    }
    values.push_back(InLayoutOf(operand, *expected[i]));
  }
  if (shape.IsTuple()) return MakeTuple(instruction->parent(), values);
  return values[0];
}

}  // namespace

bool IsShardingAnnotationTarget(absl::string_view target) {
  static constexpr std::array<absl::string_view, 9> kTargets = {"Sharding",
                                                                "SPMDFullToShardShape",
                                                                "SPMDShardToFullShape",
                                                                "xla.sdy.Sharding",
                                                                "xla.sdy.GlobalToLocalShape",
                                                                "xla.sdy.LocalToGlobalShape",
                                                                "xla.sdy.FuncResultSharding",
                                                                "xla.sdy.ShardingGroup",
                                                                "xla.sdy.PropagationBarrier"};
  for (absl::string_view known : kTargets) {
    if (target == known) return true;
  }
  return false;
}

absl::StatusOr<bool> ShardingRemover::Run(HloModule* module) {
  return ReplaceEachInstruction(module, Lower);
}

}  // namespace axle
