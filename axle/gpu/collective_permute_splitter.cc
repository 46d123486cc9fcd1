//===- collective_permute_splitter.cc - One NCCL permute per operand -------===//
#include "axle/gpu/collective_permute_splitter.h"

#include <memory>
#include <vector>

#include "axle/collectives/in_place_permute.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

bool Splits(const HloInstruction& permute) {
  if (permute.opcode() != HloOpcode::kCollectivePermute || permute.operand_count() < 2 ||
      IsInPlacePermute(permute) || !permute.control_predecessors().empty() ||
      !permute.control_successors().empty() || !permute.shape().IsTuple() ||
      permute.shape().tuple_shapes_size() != permute.operand_count()) {
    return false;
  }
  for (int64_t i = 0; i < permute.operand_count(); ++i) {
    const Shape& operand = permute.operand(i)->shape();
    if (!operand.IsArray() || !ShapeUtil::Compatible(operand, permute.shape().tuple_shapes(i))) {
      return false;
    }
  }
  return dyn_cast<HloCollectiveInstruction>(&permute) != nullptr;
}

HloInstruction* Split(HloInstruction* permute) {
  const auto* combined = cast<HloCollectiveInstruction>(permute);
  HloComputation* computation = permute->parent();
  std::vector<HloInstruction*> parts;
  for (int64_t i = 0; i < permute->operand_count(); ++i) {
    HloInstruction* operand = permute->mutable_operand(i);
    auto part = std::make_unique<HloCollectiveInstruction>(
        HloOpcode::kCollectivePermute, permute->shape().tuple_shapes(i),
        absl::Span<HloInstruction* const>{&operand, 1});
    *part->mutable_attrs() = combined->attrs();
    *part->mutable_raw_attributes() = permute->raw_attributes();
    *part->mutable_frontend_attributes() = permute->frontend_attributes();
    parts.push_back(computation->AddInstruction(std::move(part)));
  }
  return MakeTuple(computation, parts);
}

}  // namespace

absl::StatusOr<bool> GpuCollectivePermuteSplitter::Run(HloModule* module) {
  return ReplaceEachInstruction(module,
                                [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
                                  return Splits(*instruction) ? Split(instruction) : nullptr;
                                });
}

}  // namespace axle::gpu
