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

namespace axle::cpu::conv {
namespace {

// Runs the kernel over the output's outermost dimension; constant operands
// are the plan's literals.
class LoopConvolutionThunk : public Thunk {
 public:
  LoopConvolutionThunk(std::string name, std::unique_ptr<CompiledKernel> kernel, ConvPlan plan,
                       std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value) {
    sources_.push_back(plan.lhs);
    sources_.push_back(plan.rhs);
    if (plan.scale) sources_.push_back(*plan.scale);
    if (plan.bias) sources_.push_back(*plan.bias);
    if (plan.addend) sources_.push_back(*plan.addend);
    // Multiply-adds per output element: the kernel window times the input
    // features of a group.
    int64_t per_element = plan.rhs_dims[1];
    for (size_t i = 2; i < plan.rhs_dims.size(); ++i) per_element *= plan.rhs_dims[i];
    int64_t elements = 1;
    for (int64_t d : plan.out_dims) elements *= d;
    const int64_t rows = std::max<int64_t>(1, kernel_->outer_size());
    work_per_row_ = std::max<int64_t>(1, elements / rows * std::max<int64_t>(1, per_element));
  }

  // From serialized parts (LoadLoopConvolutionThunk).
  LoopConvolutionThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
                       std::vector<Operand> sources, std::vector<int64_t> operand_values,
                       int64_t output_value, int64_t work_per_row)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        sources_(std::move(sources)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        work_per_row_(work_per_row) {}

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kLoopConvolution, *this);
    AXLE_RETURN_IF_ERROR(writer.Kernel(*kernel_));
    writer.Int(static_cast<int64_t>(sources_.size()));
    for (const Operand& source : sources_) WriteConvOperand(source, writer);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    writer.Int(work_per_row_);
    return absl::OkStatus();
  }

  absl::Status Execute(const ThunkContext& context) const override {
    void* buffers[6];
    size_t count = 0;
    for (const Operand& source : sources_) {
      buffers[count++] = const_cast<char*>(BaseOf(context, source, operand_values_));
    }
    buffers[count] = context.address(output_value_);
    RunRowsInParallel(*kernel_, buffers, context, work_per_row_);
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<Operand> sources_;  // lhs, rhs, [scale], [bias], [addend]
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  int64_t work_per_row_ = 1;
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
  return std::make_unique<LoopConvolutionThunk>(std::move(name), std::move(kernel), std::move(plan),
                                                std::move(operand_values), output_value);
}

bool IsLoopConvolutionThunk(const Thunk& thunk) {
  return dynamic_cast<const LoopConvolutionThunk*>(&thunk) != nullptr;
}

}  // namespace axle::cpu::conv
