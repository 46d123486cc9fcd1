//===- collective_major_dimension.cc - NCCL's pieces made contiguous -------===//
#include "axle/gpu/collective_major_dimension.h"

#include <memory>
#include <optional>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/gpu/nccl_collective_plan.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

// The dimension an all-gather, reduce-scatter or array all-to-all cuts
// along, when its pieces are not contiguous and the rewrite applies.
std::optional<int64_t> StridedDimension(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  if (opcode != HloOpcode::kAllGather && opcode != HloOpcode::kReduceScatter &&
      opcode != HloOpcode::kAllToAll) {
    return std::nullopt;
  }
  const auto* collective = dyn_cast<HloCollectiveInstruction>(&instruction);
  if (collective == nullptr || instruction.operand_count() != 1 ||
      collective->attrs().dimensions.size() != 1 || !instruction.shape().IsArray() ||
      !instruction.operand(0)->shape().IsArray() || !instruction.control_predecessors().empty() ||
      !instruction.control_successors().empty()) {
    return std::nullopt;
  }
  const int64_t dim = collective->attrs().dimensions[0];
  const Shape& whole =
      opcode == HloOpcode::kAllGather ? instruction.shape() : instruction.operand(0)->shape();
  if (dim < 0 || dim >= whole.rank() || NcclPiecesContiguous(whole, dim)) return std::nullopt;
  return dim;
}

absl::Status MakeMajor(HloInstruction* instruction, int64_t dim) {
  const auto* collective = cast<HloCollectiveInstruction>(instruction);
  const int64_t rank = instruction->shape().rank();
  std::vector<int64_t> to_front = {dim};
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) to_front.push_back(d);
  }
  HloInstruction* operand = MakeTranspose(instruction->mutable_operand(0), to_front);
  std::vector<int64_t> dims;
  dims.reserve(to_front.size());
  for (int64_t d : to_front) dims.push_back(instruction->shape().dimensions(d));
  const Shape shape =
      ShapeUtil::MakeShapeWithDescendingLayout(instruction->shape().element_type(), dims);
  auto made = std::make_unique<HloCollectiveInstruction>(
      instruction->opcode(), shape, absl::Span<HloInstruction* const>{&operand, 1});
  *made->mutable_attrs() = collective->attrs();
  made->mutable_attrs()->dimensions = {0};
  *made->mutable_raw_attributes() = instruction->raw_attributes();
  HloInstruction* major = instruction->parent()->AddInstruction(std::move(made));
  if (instruction->called_computations().size() == 1) major->set_to_apply(instruction->to_apply());
  HloInstruction* back = MakeTranspose(major, InversePermutation(to_front));
  *back->mutable_shape() = instruction->shape();  // its layout too
  return instruction->parent()->ReplaceInstruction(instruction, back);
}

}  // namespace

absl::StatusOr<bool> GpuCollectiveMajorDimension::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      const std::optional<int64_t> dim = StridedDimension(*instruction);
      if (!dim.has_value()) continue;
      AXLE_RETURN_IF_ERROR(MakeMajor(instruction, *dim));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle::gpu
