//===- cpu_multi_output_fusion.cc - Sibling column reductions in one kernel ===//
#include "axle/cpu/runtime/cpu_multi_output_fusion.h"

#include <algorithm>

#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/elementwise_access.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// A reduce that keeps its input's minor dimension (a column reduction:
// batch norm's sums over N, H and W), of one array of floats or integers,
// in descending layouts.
bool IsColumnReduce(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kReduce || instruction.operand_count() != 2 ||
      !instruction.shape().IsArray() || instruction.shape().rank() < 1 ||
      !(primitive_util::IsFloatingPointType(instruction.shape().element_type()) ||
        primitive_util::IsIntegralType(instruction.shape().element_type())) ||
      !ShapeUtil::HasDescendingLayout(instruction.shape()) ||
      !ShapeUtil::HasDescendingLayout(instruction.operand(0)->shape())) {
    return false;
  }
  const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(&instruction)->dimensions();
  const int64_t minor = instruction.operand(0)->shape().rank() - 1;
  return !reduced.empty() && std::find(reduced.begin(), reduced.end(), minor) == reduced.end();
}

}  // namespace

std::optional<MultiOutputFusion::IterationSpace> ColumnReductionSpace(
    const HloComputation& fused, const std::vector<const HloInstruction*>& outputs) {
  MultiOutputFusion::IterationSpace space;
  space.reduction = true;
  for (const HloInstruction* output : outputs) {
    if (!IsColumnReduce(*output)) return std::nullopt;
    const std::vector<int64_t>& input = output->operand(0)->shape().dimensions();
    const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(output)->dimensions();
    if (output == outputs[0]) {
      space.dimensions = input;
      space.reduced = reduced;
    } else if (input != space.dimensions || reduced != space.reduced) {
      return std::nullopt;
    }
  }
  for (const HloInstruction* instruction : fused.instructions()) {
    if (std::find(outputs.begin(), outputs.end(), instruction) != outputs.end()) continue;
    if (!IsPlainLoopOp(*instruction)) return std::nullopt;
  }
  return space;
}

}  // namespace axle::cpu
