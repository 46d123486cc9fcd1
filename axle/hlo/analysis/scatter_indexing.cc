//===- scatter_indexing.cc - How a scatter's updates map onto its operand --===//
#include "axle/hlo/analysis/scatter_indexing.h"

#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

absl::StatusOr<ScatterIndexing> AnalyzeScatter(const HloInstruction& instruction) {
  const auto* scatter = dyn_cast<HloScatterInstruction>(&instruction);
  if (scatter == nullptr) return absl::InvalidArgumentError("is not a scatter");
  const int64_t n = scatter->scatter_operand_count();
  if (n < 1 || instruction.operand_count() != 2 * n + 1) {
    return absl::InvalidArgumentError("expects operands..., scatter_indices, updates...");
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(n)->shape();
  const Shape& update = instruction.operand(n + 1)->shape();
  if (!operand.IsArray() || !indices.IsArray() || !update.IsArray()) {
    return absl::InvalidArgumentError("operands, indices and updates must be arrays");
  }
  const HloComputation* combiner = instruction.to_apply();
  if (combiner == nullptr || combiner->num_parameters() != 2 * n) {
    return absl::InvalidArgumentError(absl::StrCat("the combiner must take ", 2 * n, " scalars"));
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& o = instruction.operand(i)->shape();
    const Shape& u = instruction.operand(n + 1 + i)->shape();
    if (!o.IsArray() || o.dimensions() != operand.dimensions() || !u.IsArray() ||
        u.dimensions() != update.dimensions() || u.element_type() != o.element_type()) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", i, " (", o.ToString(),
                                                     ") and update ", i, " (", u.ToString(),
                                                     ") must match operand 0 and update 0"));
    }
    for (int64_t p : {i, n + i}) {
      const Shape& parameter = combiner->parameter_instruction(p)->shape();
      if (!parameter.IsArray() || parameter.rank() != 0 ||
          parameter.element_type() != o.element_type()) {
        return absl::InvalidArgumentError(absl::StrCat("combiner parameter ", p, " is ",
                                                       parameter.ToString(), ", operand ", i,
                                                       " is ", o.ToString()));
      }
    }
  }
  const HloInstruction* root = combiner->root_instruction();
  const int64_t results = root->opcode() == HloOpcode::kTuple ? root->operand_count()
                                                              : (root->shape().IsArray() ? 1 : 0);
  if (results != n) {
    return absl::InvalidArgumentError(absl::StrCat("the combiner must return ", n, " scalars"));
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& leaf =
        root->opcode() != HloOpcode::kTuple ? root->shape() : root->operand(i)->shape();
    if (leaf.element_type() != instruction.operand(i)->shape().element_type()) {
      return absl::InvalidArgumentError(absl::StrCat("combiner result ", i, " is ", leaf.ToString(),
                                                     ", operand ", i, " is ",
                                                     instruction.operand(i)->shape().ToString()));
    }
  }
  return AnalyzeScatterIndexing(operand, indices, update, scatter->scatter_dimension_numbers());
}

}  // namespace axle
