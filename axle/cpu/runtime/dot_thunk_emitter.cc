//===- dot_thunk_emitter.cc - Dots and dot epilogues from HLO --------------===//
//
// EmitDotThunk: a dot (or a dot epilogue fusion) planned (dot_plan.h) and
// given the first path that takes it: the small dot (small_dot_thunk.cc),
// oneDNN's matmul (dot_thunk.cc), or a kernel emitted into the program's
// LLVM module (dot_loop_emitter.h) for the loop path (dot_loop_thunk.cc).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/dot_loop_emitter.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/dot_thunk.h"
#include "axle/cpu/runtime/epilogue_plan.h"
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

}  // namespace

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
  return MakeLoopDotThunk(instruction.name(), *std::move(kernel), plan, std::move(operand_values),
                          output_value);
}

}  // namespace axle::cpu::dot

namespace axle::cpu {
namespace {

using dot::DotPlan;

// An f32 dot of at most kMaxLoopDotMultiplyAdds (dot_plan.h) runs as the
// emitted loop:
// oneDNN's fixed cost per call (the primitive's execution, waking the
// OpenMP team) is several times its arithmetic. Measured here (2 threads,
// whole runs): 4 x [16,32]x[32,8] batched 17 -> 2 us, [16,64]x[64,64] 16 ->
// 13 us; at [64,64]x[64,64] the two tie, at [32,128]x[128,128] oneDNN is
// twice as fast. (A transposed rhs takes the small-dot path instead.)

bool DnnlTakes(const DotPlan& plan) {
  PrimitiveType in = plan.lhs.type;
  if (in == F32 && plan.batch * plan.m * plan.n * plan.k <= dot::kMaxLoopDotMultiplyAdds) {
    return false;
  }
  if (in != plan.rhs.type || (in != F32 && in != BF16)) return false;
  if (plan.output_type != F32 && !(in == BF16 && plan.output_type == BF16)) return false;
  if (plan.bias && plan.bias->type != plan.output_type) return false;
  return plan.batch * plan.m * plan.n > 0 && plan.k > 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Thunk>> CreateDotThunk(const HloInstruction& instruction,
                                                      std::vector<int64_t> operand_values,
                                                      const std::vector<const Literal*>& constants,
                                                      int64_t output_value,
                                                      LoopKernelModule& kernels,
                                                      absl::string_view kernel_name) {
  if (!instruction.shape().IsArray()) {
    return Unsupported(instruction, "a dot with a tuple result");
  }
  AXLE_ASSIGN_OR_RETURN(DotPlan plan, dot::MakePlan(instruction, constants));
  if (std::unique_ptr<Thunk> small =
          dot::CreateSmallDotThunk(instruction, plan, operand_values, output_value)) {
    return small;
  }
  if (DnnlTakes(plan)) {
    absl::StatusOr<std::unique_ptr<Thunk>> thunk =
        dot::MakeDnnlDotThunk(instruction.name(), operand_values, output_value, plan);
    if (thunk.ok()) return thunk;
  }
  return dot::CreateLoopDotThunk(instruction, plan, std::move(operand_values), constants,
                                 output_value, kernels, kernel_name);
}

absl::Status EmitDotThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  return EmitEpilogueThunk(instruction, builder, &CreateDotThunk, "dot_loop");
}

}  // namespace axle::cpu
