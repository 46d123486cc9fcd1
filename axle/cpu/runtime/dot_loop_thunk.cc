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
#include "axle/cpu/runtime/row_kernel_thunk.h"

namespace axle::cpu::dot {
namespace {

// The emitted kernel over the output rows; constant operands are the
// thunk's own literals. Sources: lhs, rhs, [bias].
class LoopDotThunk : public RowKernelThunk<Source> {
 public:
  using RowKernelThunk::RowKernelThunk;

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kLoopDot, *this);
    AXLE_RETURN_IF_ERROR(writer.Kernel(kernel()));
    // The sources as a plan's lhs, rhs and bias.
    DotPlan plan;
    plan.lhs_groups = plan.rhs_groups = {{}, {}, {}};
    plan.lhs = sources()[0];
    plan.rhs = sources()[1];
    if (sources().size() > 2) plan.bias = sources()[2];
    WriteDotPlan(plan, writer);
    writer.Ints(operand_values());
    writer.Int(output_value());
    writer.Int(work_per_row());
    return absl::OkStatus();
  }
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
  std::vector<Source> sources = {plan.lhs, plan.rhs};
  if (plan.bias) sources.push_back(*plan.bias);
  return std::make_unique<LoopDotThunk>(std::move(name), std::move(kernel), std::move(sources),
                                        std::move(operand_values), output_value,
                                        std::max<int64_t>(1, plan.k * plan.n));
}

}  // namespace axle::cpu::dot
