// ConvPlan: a convolution resolved against its operands (see
// convolution_plan.h).
#include "axle/cpu/runtime/convolution_plan.h"

#include <cstring>

#include "axle/core/shape_util.h"

namespace axle::cpu::conv {
namespace {

// Inserts HLO dim `at` (shifting the dims from `at` on) into strides given
// per HLO dim, with stride `stride`.
void InsertStride(std::vector<int64_t>& strides, int64_t at, int64_t stride) {
  strides.insert(strides.begin() + at, stride);
}

// `order` (canonical -> HLO dim) with HLO dim `at` inserted: dims from
// `at` on move up one, and the new dim is canonical dim 2.
void InsertUnitDim(std::vector<int64_t>& order, std::vector<int64_t>& dims, int64_t at) {
  for (int64_t& d : order) d += d >= at ? 1 : 0;
  order.insert(order.begin() + 2, at);
  dims.insert(dims.begin() + 2, 1);
}

// An operand's strides with the new dim just outside its spatial dim
// `spatial` (HLO) of `size` elements.
void WidenOperand(Operand& operand, int64_t spatial, int64_t size) {
  InsertStride(operand.strides, spatial, operand.strides[spatial] * size);
}

}  // namespace

ConvPlan WithUnitRow(ConvPlan plan) {
  const int64_t lhs_spatial = plan.lhs_order[2];
  const int64_t rhs_spatial = plan.rhs_order[2];
  const int64_t out_spatial = plan.out_order[2];
  const int64_t out_width = plan.out_dims[2];
  WidenOperand(plan.lhs, lhs_spatial, plan.lhs_dims[2]);
  WidenOperand(plan.rhs, rhs_spatial, plan.rhs_dims[2]);
  for (std::optional<Operand>* operand : {&plan.scale, &plan.bias, &plan.addend}) {
    if (operand->has_value()) WidenOperand(**operand, out_spatial, out_width);
  }
  if (!plan.output_strides.empty()) {
    InsertStride(plan.output_strides, out_spatial, plan.output_strides[out_spatial] * out_width);
  }
  std::vector<int64_t> output_dims = plan.output_shape.dimensions();
  output_dims.insert(output_dims.begin() + out_spatial, 1);
  plan.output_shape = ShapeUtil::MakeShape(plan.output_shape.element_type(), output_dims);
  InsertUnitDim(plan.lhs_order, plan.lhs_dims, lhs_spatial);
  InsertUnitDim(plan.rhs_order, plan.rhs_dims, rhs_spatial);
  InsertUnitDim(plan.out_order, plan.out_dims, out_spatial);
  WindowDimension unit;
  unit.set_size(1);
  plan.window.insert(plan.window.begin(), unit);
  plan.spatial += 1;
  return plan;
}

const char* BaseOf(const ThunkContext& context, const Operand& operand,
                   const std::vector<int64_t>& operand_values) {
  if (operand.literal != nullptr) return static_cast<const char*>(operand.literal->untyped_data());
  return static_cast<const char*>(context.address(operand_values[operand.operand]));
}

void StridedCopy(const char* in, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t size, char* out) {
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < count; ++n) {
    std::memcpy(out + n * size, in + offset * size, size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

}  // namespace axle::cpu::conv
