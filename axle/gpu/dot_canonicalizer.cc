//===- dot_canonicalizer.cc - Dots into the shapes one GEMM takes ----------===//
#include "axle/gpu/dot_canonicalizer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/hlo/analysis/dot_dimensions.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

std::vector<int64_t> Concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> all;
  for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
  return all;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= shape.dimensions(d);
  return product;
}

// `operand` with its dims in `order`, then reshaped to the batch sizes
// followed by `rows` x `cols`, in the descending layout.
HloInstruction* ToMatrix(HloInstruction* operand, const std::vector<int64_t>& order,
                         const std::vector<int64_t>& batch_sizes, int64_t rows, int64_t cols) {
  HloInstruction* value = operand;
  if (!IsIdentityPermutation(order)) value = MakeTranspose(value, order);
  std::vector<int64_t> dims = batch_sizes;
  dims.push_back(rows);
  dims.push_back(cols);
  const Shape shape =
      ShapeUtil::MakeShapeWithDescendingLayout(operand->shape().element_type(), dims);
  if (!SameShapeAndLayout(value->shape(), shape)) value = MakeReshape(value, shape);
  return value;
}

absl::StatusOr<HloInstruction*> Canonicalize(HloInstruction* dot) {
  const auto* original = cast<HloDotInstruction>(dot);
  const DotDimensionNumbers& numbers = original->dot_dimension_numbers();
  HloInstruction* lhs = dot->mutable_operand(0);
  HloInstruction* rhs = dot->mutable_operand(1);
  const std::vector<int64_t>& lhs_batch = numbers.lhs_batch_dimensions();
  const std::vector<int64_t>& rhs_batch = numbers.rhs_batch_dimensions();
  const std::vector<int64_t>& lhs_contracting = numbers.lhs_contracting_dimensions();
  const std::vector<int64_t>& rhs_contracting = numbers.rhs_contracting_dimensions();
  if (lhs_batch.size() != rhs_batch.size() || lhs_contracting.size() != rhs_contracting.size()) {
    return PassUnimplemented("gpu-dot-canonicalizer", *dot,
                             "unpaired batch or contracting dimensions");
  }
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(lhs->shape().rank(), lhs_batch, lhs_contracting);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs->shape().rank(), rhs_batch, rhs_contracting);
  std::vector<int64_t> batch_sizes;
  batch_sizes.reserve(lhs_batch.size());
  for (int64_t d : lhs_batch) batch_sizes.push_back(lhs->shape().dimensions(d));
  const int64_t m = Product(lhs->shape(), lhs_free);
  const int64_t k = Product(lhs->shape(), lhs_contracting);
  const int64_t n = Product(rhs->shape(), rhs_free);

  HloInstruction* new_lhs =
      ToMatrix(lhs, Concat({&lhs_batch, &lhs_free, &lhs_contracting}), batch_sizes, m, k);
  HloInstruction* new_rhs =
      ToMatrix(rhs, Concat({&rhs_batch, &rhs_contracting, &rhs_free}), batch_sizes, k, n);
  std::vector<int64_t> dims = batch_sizes;
  dims.push_back(m);
  dims.push_back(n);
  const auto batch_rank = static_cast<int64_t>(batch_sizes.size());
  auto canonical = std::make_unique<HloDotInstruction>(
      HloOpcode::kDot, ShapeUtil::MakeShapeWithDescendingLayout(dot->shape().element_type(), dims),
      std::vector<HloInstruction*>{new_lhs, new_rhs});
  DotAttrs& attrs = *canonical->mutable_attrs();
  attrs.precision_config = original->precision_config();
  for (int64_t d = 0; d < batch_rank; ++d) {
    attrs.dot_dimension_numbers.add_lhs_batch_dimensions(d);
    attrs.dot_dimension_numbers.add_rhs_batch_dimensions(d);
  }
  attrs.dot_dimension_numbers.add_lhs_contracting_dimensions(batch_rank + 1);
  attrs.dot_dimension_numbers.add_rhs_contracting_dimensions(batch_rank);
  HloInstruction* result = dot->parent()->AddInstruction(std::move(canonical));
  // The original dims are batch..., lhs free..., rhs free...: a reshape.
  const Shape& shape = dot->shape();
  if (!SameShapeAndLayout(result->shape(), shape)) {
    result = MakeReshape(result, shape.has_layout() ? shape : WithDescendingLayout(shape));
  }
  return result;
}

}  // namespace

absl::StatusOr<bool> GpuDotCanonicalizer::Run(HloModule* module) {
  return RewriteEachInstruction(
      module, [](HloComputation* computation, HloInstruction* instruction) -> absl::StatusOr<bool> {
        if (instruction->opcode() != HloOpcode::kDot || !GemmSupportsTypes(*instruction) ||
            GemmSupports(*instruction)) {
          return false;
        }
        AXLE_ASSIGN_OR_RETURN(HloInstruction * replacement, Canonicalize(instruction));
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
        return true;
      });
}

}  // namespace axle::gpu
