#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

absl::Status KernelThunk::Execute(const ThunkContext& context) const {
  std::vector<void*> buffers;
  buffers.reserve(operand_values_.size() + output_values_.size());
  for (int64_t value : operand_values_) buffers.push_back(context.address(value));
  for (int64_t value : output_values_) buffers.push_back(context.address(value));
  kernel_->Run(buffers.data());
  return absl::OkStatus();
}

}  // namespace axle::cpu
