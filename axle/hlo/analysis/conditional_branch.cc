//===- conditional_branch.cc - Which branch a conditional runs --------------===//
#include "axle/hlo/analysis/conditional_branch.h"

namespace axle {

bool IsRunnableConditional(const HloInstruction& conditional) {
  if (conditional.opcode() != HloOpcode::kConditional) return false;
  const auto branches = static_cast<int64_t>(conditional.branch_computations().size());
  if (branches == 0 || conditional.operand_count() != branches + 1) return false;
  const PrimitiveType selector = conditional.operand(0)->shape().element_type();
  return selector == S32 || (selector == PRED && branches == 2);
}

}  // namespace axle
