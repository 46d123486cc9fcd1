//===- dot_loop_thunk.cc - The dots oneDNN does not run --------------------===//
//
// The loop path of the dot thunks: the element types oneDNN lacks (and
// what it declines) as a kernel emitted into the program's LLVM module
// (dot_loop_emitter.h), run over the output rows on the intra-op pool.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/dot_loop_emitter.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/thunk_emitters.h"

namespace axle::cpu::dot {
namespace {

// The spec of `plan`'s kernel. Operand strides are those of the Sources (a
// broadcast operand has stride 0 in the dims it adds).
DotLoopSpec MakeLoopSpec(const DotPlan& plan) {
  DotLoopSpec spec;
  spec.lhs_type = plan.lhs.type;
  spec.rhs_type = plan.rhs.type;
  spec.output_type = plan.output_type;
  spec.packed_nibble = plan.packed_nibble;
  spec.has_bias = plan.bias.has_value();
  if (plan.bias) spec.bias_type = plan.bias->type;
  auto bias_stride = [&](int64_t output_dim) {
    return plan.bias ? plan.bias->strides[output_dim] : 0;
  };
  const std::vector<int64_t>& lhs_batch = plan.lhs_groups[0];
  const std::vector<int64_t>& rhs_batch = plan.rhs_groups[0];
  int64_t output_dim = 0;
  for (size_t i = 0; i < lhs_batch.size(); ++i, ++output_dim) {
    spec.batch.push_back({plan.lhs.dims[lhs_batch[i]], plan.lhs.strides[lhs_batch[i]],
                          plan.rhs.strides[rhs_batch[i]], bias_stride(output_dim)});
  }
  for (int64_t d : plan.lhs_groups[1]) {
    spec.m.push_back({plan.lhs.dims[d], plan.lhs.strides[d], 0, bias_stride(output_dim++)});
  }
  for (int64_t d : plan.rhs_groups[2]) {
    spec.n.push_back({plan.rhs.dims[d], 0, plan.rhs.strides[d], bias_stride(output_dim++)});
  }
  const std::vector<int64_t>& lhs_contracting = plan.lhs_groups[2];
  const std::vector<int64_t>& rhs_contracting = plan.rhs_groups[1];
  for (size_t i = 0; i < lhs_contracting.size(); ++i) {
    spec.k.push_back({plan.lhs.dims[lhs_contracting[i]], plan.lhs.strides[lhs_contracting[i]],
                      plan.rhs.strides[rhs_contracting[i]], 0});
  }
  return spec;
}

// The epilogue ops of `plan` bottom up, with their splat constants.
absl::StatusOr<std::vector<DotLoopSpec::EpilogueOp>> LoopEpilogue(
    const DotPlan& plan, const std::vector<const Literal*>& constants) {
  std::vector<DotLoopSpec::EpilogueOp> epilogue;
  // The values computed so far: the dot (0), then each op.
  std::vector<const HloInstruction*> values = {
      plan.chain.empty() ? nullptr : plan.chain.back().first->operand(plan.chain.back().second)};
  for (auto it = plan.chain.rbegin(); it != plan.chain.rend(); ++it) {
    DotLoopSpec::EpilogueOp op;
    op.instruction = it->first;
    op.chain_operand = it->second;
    op.constants.resize(op.instruction->operand_count());
    op.operand_values.assign(op.instruction->operand_count(), -1);
    for (int64_t i = 0; i < op.instruction->operand_count(); ++i) {
      auto below = std::find(values.begin(), values.end(), op.instruction->operand(i));
      if (below != values.end()) op.operand_values[i] = below - values.begin();
      if (i == op.chain_operand || below != values.end()) continue;
      if (op.instruction == plan.bias_add) {
        op.bias_operand = i;
        continue;
      }
      const HloInstruction& operand = *op.instruction->operand(i);
      AXLE_ASSIGN_OR_RETURN(Source source, Resolve(operand, true, constants));
      if (source.literal == nullptr) return Unsupported(operand, "a non-constant epilogue bound");
      auto scalar = std::make_shared<Literal>(ShapeUtil::MakeShape(source.type, {}));
      std::memcpy(scalar->untyped_data(), source.literal->untyped_data(), scalar->size_bytes());
      op.constants[i] = std::move(scalar);
    }
    values.push_back(op.instruction);
    epilogue.push_back(std::move(op));
  }
  return epilogue;
}

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

absl::StatusOr<std::unique_ptr<Thunk>> CreateLoopDotThunk(
    const HloInstruction& instruction, const DotPlan& plan, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name) {
  DotLoopSpec spec = MakeLoopSpec(plan);
  AXLE_ASSIGN_OR_RETURN(spec.epilogue, LoopEpilogue(plan, constants));
  AXLE_RETURN_IF_ERROR(CheckDotLoopSpec(spec, instruction));
  absl::StatusOr<std::unique_ptr<CompiledKernel>> kernel =
      AddDotLoopKernel(kernels, spec, kernel_name);
  if (!kernel.ok()) {
    return absl::Status(
        kernel.status().code(),
        absl::StrCat(kernel.status().message(), " (in dot %", instruction.name(), ")"));
  }
  return std::unique_ptr<Thunk>(std::make_unique<LoopDotThunk>(
      instruction.name(), *std::move(kernel), plan, std::move(operand_values), output_value));
}

}  // namespace axle::cpu::dot
