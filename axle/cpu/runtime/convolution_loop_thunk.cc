// The convolution loop thunk: what oneDNN does not take (see
// convolution_thunk.h), as a kernel emitted into the program's LLVM module
// (convolution_loop_emitter.h, through convolution_thunk_emitter.cc) that reads the operands in
// place; the thunk passes the buffers and splits the output's outermost dimension across the
// intra-op pool.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/row_kernel_thunk.h"

namespace axle::cpu::conv {
namespace {

// The emitted kernel over the output's outermost dimension; constant
// operands are the plan's literals. Sources: lhs, rhs, [scale], [bias],
// [addend].
class LoopConvolutionThunk : public RowKernelThunk<Operand> {
 public:
  using RowKernelThunk::RowKernelThunk;

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kLoopConvolution, *this);
    AXLE_RETURN_IF_ERROR(writer.Kernel(kernel()));
    writer.Int(static_cast<int64_t>(sources().size()));
    for (const Operand& source : sources()) WriteConvOperand(source, writer);
    writer.Ints(operand_values());
    writer.Int(output_value());
    writer.Int(work_per_row());
    return absl::OkStatus();
  }
};

}  // namespace

}  // namespace axle::cpu::conv

namespace axle::cpu {

std::unique_ptr<Thunk> LoadLoopConvolutionThunk(std::string name, ThunkReader& reader) {
  std::unique_ptr<CompiledKernel> kernel = reader.Kernel();
  const int64_t count = reader.Count();
  std::vector<conv::Operand> sources;
  for (int64_t i = 0; i < count && reader.ok(); ++i) sources.push_back(ReadConvOperand(reader));
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  const int64_t work_per_row = reader.Int();
  if (!reader.ok()) return nullptr;
  bool operands_ok = sources.size() >= 2 && sources.size() <= 5;
  for (const conv::Operand& source : sources) {
    operands_ok = operands_ok && (source.literal != nullptr ||
                                  static_cast<size_t>(source.operand) < operand_values.size());
  }
  if (!operands_ok || kernel->num_parameters() != static_cast<int64_t>(sources.size()) ||
      kernel->num_outputs() != 1 || work_per_row < 1) {
    reader.Fail(
        absl::StrCat("loop convolution %", name, ": operands that do not match its kernel"));
    return nullptr;
  }
  return std::make_unique<conv::LoopConvolutionThunk>(std::move(name), std::move(kernel),
                                                      std::move(sources), std::move(operand_values),
                                                      output_value, work_per_row);
}

}  // namespace axle::cpu

namespace axle::cpu::conv {

std::unique_ptr<Thunk> MakeLoopConvolutionThunk(std::string name,
                                                std::unique_ptr<CompiledKernel> kernel,
                                                ConvPlan plan, std::vector<int64_t> operand_values,
                                                int64_t output_value) {
  std::vector<Operand> sources = {plan.lhs, plan.rhs};
  if (plan.scale) sources.push_back(*plan.scale);
  if (plan.bias) sources.push_back(*plan.bias);
  if (plan.addend) sources.push_back(*plan.addend);
  // Multiply-adds per output element: the kernel window times the input
  // features of a group.
  int64_t per_element = plan.rhs_dims[1];
  for (size_t i = 2; i < plan.rhs_dims.size(); ++i) per_element *= plan.rhs_dims[i];
  int64_t elements = 1;
  for (int64_t d : plan.out_dims) elements *= d;
  const int64_t rows = std::max<int64_t>(1, kernel->outer_size());
  const int64_t work_per_row =
      std::max<int64_t>(1, elements / rows * std::max<int64_t>(1, per_element));
  return std::make_unique<LoopConvolutionThunk>(std::move(name), std::move(kernel),
                                                std::move(sources), std::move(operand_values),
                                                output_value, work_per_row);
}

bool IsLoopConvolutionThunk(const Thunk& thunk) {
  return dynamic_cast<const LoopConvolutionThunk*>(&thunk) != nullptr;
}

}  // namespace axle::cpu::conv
