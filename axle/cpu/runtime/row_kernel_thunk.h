//===- row_kernel_thunk.h - An emitted kernel run over its output rows ----===//
//
// The loop paths of the dot and convolution thunks (dot_loop_thunk.cc,
// convolution_loop_thunk.cc): a kernel emitted into the program's LLVM
// module whose parameters are the thunk's sources, each a thunk operand or a
// literal of the thunk's own, then the output; it runs over the output's
// outer rows, split across the intra-op pool when there is enough work
// (RunRowsInParallel). The subclasses add their serialized form.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_ROW_KERNEL_THUNK_H_
#define AXLE_CPU_RUNTIME_ROW_KERNEL_THUNK_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axle/base/logging.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

// `Source` has `int64_t operand` (an index into the thunk's operands) and
// `std::shared_ptr<const Literal> literal` (used when not null), as
// dot::Source and conv::Operand do.
template <typename Source>
class RowKernelThunk : public Thunk {
 public:
  static constexpr size_t kMaxSources = 5;

  // `work_per_row`: multiply-adds per output row (RunRowsInParallel).
  RowKernelThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
                 std::vector<Source> sources, std::vector<int64_t> operand_values,
                 int64_t output_value, int64_t work_per_row)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        sources_(std::move(sources)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        work_per_row_(work_per_row) {
    CHECK_LE(sources_.size(), kMaxSources) << this->name();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  absl::Status Execute(const ThunkContext& context) const override {
    std::array<void*, kMaxSources + 1> buffers;
    size_t count = 0;
    for (const Source& source : sources_) {
      buffers[count++] = source.literal != nullptr
                             ? const_cast<void*>(source.literal->untyped_data())
                             : context.address(operand_values_[source.operand]);
    }
    buffers[count] = context.address(output_value_);
    RunRowsInParallel(*kernel_, buffers.data(), context, work_per_row_);
    return absl::OkStatus();
  }

 protected:
  const CompiledKernel& kernel() const { return *kernel_; }
  const std::vector<Source>& sources() const { return sources_; }
  const std::vector<int64_t>& operand_values() const { return operand_values_; }
  int64_t output_value() const { return output_value_; }
  int64_t work_per_row() const { return work_per_row_; }

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<Source> sources_;
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  int64_t work_per_row_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_ROW_KERNEL_THUNK_H_
