//===- dot_loop_thunk.cc - The dots oneDNN does not run --------------------===//
//
// The loop path of the dot thunks: the element types oneDNN lacks (and
// what it declines) as a kernel emitted into the program's LLVM module
// (dot_loop_emitter.h, through dot_thunk_emitter.cc), run over the output
// rows on the intra-op pool.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/plan_serialization.h"

namespace axle::cpu::dot {
namespace {

// Runs the emitted kernel over the output rows, split across the intra-op
// pool when there is enough work. Constant operands are the thunk's own
// literals.
class LoopDotThunk : public Thunk {
 public:
  LoopDotThunk(std::string name, std::unique_ptr<CompiledKernel> kernel, const DotPlan& plan,
               std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        work_per_row_(std::max<int64_t>(1, plan.k * plan.n)) {
    sources_.push_back(plan.lhs);
    sources_.push_back(plan.rhs);
    if (plan.bias) sources_.push_back(*plan.bias);
  }
  // From serialized parts (LoadLoopDotThunk).
  LoopDotThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
               std::vector<Source> sources, std::vector<int64_t> operand_values,
               int64_t output_value, int64_t work_per_row)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        sources_(std::move(sources)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        work_per_row_(work_per_row) {}

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kLoopDot, *this);
    AXLE_RETURN_IF_ERROR(writer.Kernel(*kernel_));
    // The sources as a plan's lhs, rhs and bias.
    DotPlan plan;
    plan.lhs_groups = plan.rhs_groups = {{}, {}, {}};
    plan.lhs = sources_[0];
    plan.rhs = sources_[1];
    if (sources_.size() > 2) plan.bias = sources_[2];
    WriteDotPlan(plan, writer);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    writer.Int(work_per_row_);
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  absl::Status Execute(const ThunkContext& context) const override {
    void* buffers[4];
    size_t count = 0;
    for (const Source& source : sources_) {
      buffers[count++] = source.literal != nullptr
                             ? const_cast<void*>(source.literal->untyped_data())
                             : context.address(operand_values_[source.operand]);
    }
    buffers[count] = context.address(output_value_);
    RunRowsInParallel(*kernel_, buffers, context, work_per_row_);
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<Source> sources_;  // lhs, rhs, [bias]
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  int64_t work_per_row_;  // multiply-adds per row (RunRowsInParallel)
};

}  // namespace

}  // namespace axle::cpu::dot

namespace axle::cpu {

std::unique_ptr<Thunk> LoadLoopDotThunk(std::string name, ThunkReader& reader) {
  std::unique_ptr<CompiledKernel> kernel = reader.Kernel();
  dot::DotPlan plan = ReadDotPlan(reader);
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  const int64_t work_per_row = reader.Int();
  if (!reader.ok()) return nullptr;
  std::vector<dot::Source> sources = {plan.lhs, plan.rhs};
  if (plan.bias) sources.push_back(*plan.bias);
  if (!DotPlanOperandsIn(plan, operand_values.size()) ||
      kernel->num_parameters() != static_cast<int64_t>(sources.size()) ||
      kernel->num_outputs() != 1 || work_per_row < 1) {
    reader.Fail(absl::StrCat("loop dot %", name, ": operands that do not match its kernel"));
    return nullptr;
  }
  return std::make_unique<dot::LoopDotThunk>(std::move(name), std::move(kernel), std::move(sources),
                                             std::move(operand_values), output_value, work_per_row);
}

}  // namespace axle::cpu

namespace axle::cpu::dot {

std::unique_ptr<Thunk> MakeLoopDotThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
                                        const DotPlan& plan, std::vector<int64_t> operand_values,
                                        int64_t output_value) {
  return std::make_unique<LoopDotThunk>(std::move(name), std::move(kernel), plan,
                                        std::move(operand_values), output_value);
}

}  // namespace axle::cpu::dot
