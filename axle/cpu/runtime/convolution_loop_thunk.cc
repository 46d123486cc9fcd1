// The convolution loop thunk: what oneDNN does not take (see
// convolution_thunk.h), as a kernel emitted into the program's LLVM module
// (convolution_loop_emitter.h) that reads the operands in place; the thunk
// passes the buffers and splits the output's outermost dimension across the
// intra-op pool.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/convolution_loop_emitter.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/program_builder.h"

namespace axle::cpu::conv {
namespace {

ConvLoopSpec MakeSpec(const ConvPlan& plan) {
  ConvLoopSpec spec;
  spec.lhs_type = plan.lhs.type();
  spec.rhs_type = plan.rhs.type();
  spec.output_type = plan.output_type;
  spec.lhs_dims = plan.lhs_dims;
  spec.rhs_dims = plan.rhs_dims;
  spec.out_dims = plan.out_dims;
  spec.lhs_strides = plan.LhsStrides();
  spec.rhs_strides = plan.RhsStrides();
  spec.output_shape_dims = plan.output_shape.dimensions();
  spec.out_order = plan.out_order;
  for (const WindowDimension& dimension : plan.window) {
    ConvLoopSpec::Window window;
    window.stride = dimension.stride();
    window.padding_low = dimension.padding_low();
    window.window_dilation = dimension.window_dilation();
    window.base_dilation = dimension.base_dilation();
    window.reversal = dimension.window_reversal();
    spec.window.push_back(window);
  }
  spec.feature_groups = plan.feature_groups;
  spec.batch_groups = plan.batch_groups;
  return spec;
}

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

absl::StatusOr<std::unique_ptr<Thunk>> CreateLoopConvolutionThunk(
    const HloInstruction& instruction, ConvPlan plan, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name) {
  ConvLoopSpec spec = MakeSpec(plan);
  if (plan.scale) spec.sides.push_back({plan.scale->type(), plan.scale->strides});
  if (plan.bias) spec.sides.push_back({plan.bias->type(), plan.bias->strides});
  if (plan.addend) spec.sides.push_back({plan.addend->type(), plan.addend->strides});
  const int64_t scale_side = plan.scale ? 0 : -1;
  const int64_t bias_side = plan.bias ? (plan.scale ? 1 : 0) : -1;
  const int64_t addend_side = plan.addend ? (plan.scale ? 1 : 0) + (plan.bias ? 1 : 0) : -1;
  for (auto it = plan.chain.rbegin(); it != plan.chain.rend(); ++it) {
    ConvLoopSpec::EpilogueOp op;
    op.instruction = it->first;
    op.chain_operand = it->second;
    const int64_t operands = op.instruction->operand_count();
    op.side.assign(operands, -1);
    op.constants.resize(operands);
    for (int64_t i = 0; i < operands; ++i) {
      if (i == op.chain_operand) continue;
      if (op.instruction->opcode() == HloOpcode::kMultiply) {
        op.side[i] = scale_side;
        continue;
      }
      if (op.instruction->opcode() == HloOpcode::kAdd) {
        op.side[i] = op.instruction == plan.addend_add ? addend_side : bias_side;
        continue;
      }
      const HloInstruction& operand = *op.instruction->operand(i);
      AXLE_ASSIGN_OR_RETURN(Operand bound, Resolve(operand, constants));
      if (bound.literal == nullptr) return Unsupported(operand, "a non-constant epilogue bound");
      auto scalar = std::make_shared<Literal>(ShapeUtil::MakeShape(bound.type(), {}));
      std::memcpy(scalar->untyped_data(), bound.literal->untyped_data(), scalar->size_bytes());
      op.constants[i] = std::move(scalar);
    }
    spec.epilogue.push_back(std::move(op));
  }
  absl::StatusOr<std::unique_ptr<CompiledKernel>> kernel =
      AddConvLoopKernel(kernels, spec, instruction, kernel_name);
  if (!kernel.ok()) {
    return absl::Status(
        kernel.status().code(),
        absl::StrCat(kernel.status().message(), " (in convolution %", instruction.name(), ")"));
  }
  return std::unique_ptr<Thunk>(std::make_unique<LoopConvolutionThunk>(
      instruction.name(), *std::move(kernel), std::move(plan), std::move(operand_values),
      output_value));
}

bool IsLoopConvolutionThunk(const Thunk& thunk) {
  return dynamic_cast<const LoopConvolutionThunk*>(&thunk) != nullptr;
}

}  // namespace axle::cpu::conv
