// ConvPlan: a convolution resolved against its operands (see
// convolution_plan.h).
#include "axle/cpu/runtime/convolution_plan.h"

#include <cstring>

namespace axle::cpu::conv {

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
