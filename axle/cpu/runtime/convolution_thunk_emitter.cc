//===- convolution_thunk_emitter.cc - Convolutions from HLO ----------------===//
//
// EmitConvolutionThunk: a convolution (or a convolution epilogue fusion)
// planned (convolution_plan.h) and given oneDNN's primitive when it takes
// it (convolution_thunk.cc), else a kernel emitted into the program's LLVM
// module (convolution_loop_emitter.h) for the loop path
// (convolution_loop_thunk.cc). An operand of a concatenation that its
// convolutions fill writes its slice of it (concat_in_place.h).
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/convolution_loop_emitter.h"
#include "axle/cpu/runtime/concat_in_place.h"
#include "axle/cpu/runtime/conv_chain.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk.h"
#include "axle/cpu/runtime/epilogue_plan.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/cpu/runtime/thunk_emitters.h"

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

}  // namespace

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
  return MakeLoopConvolutionThunk(instruction.name(), *std::move(kernel), std::move(plan),
                                  std::move(operand_values), output_value);
}

}  // namespace axle::cpu::conv

namespace axle::cpu {

using conv::ConvPlan;

absl::StatusOr<std::unique_ptr<Thunk>> CreateConvolutionThunk(
    const HloInstruction& instruction, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name) {
  if (!instruction.shape().IsArray()) {
    return Unsupported(instruction, "a convolution with a tuple result");
  }
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan, conv::MakePlan(instruction, constants));
  if (conv::DnnlTakes(plan)) {
    absl::StatusOr<std::unique_ptr<Thunk>> thunk =
        conv::MakeDnnlConvolutionThunk(instruction.name(), operand_values, output_value, plan);
    if (thunk.ok()) return thunk;
  }
  return conv::CreateLoopConvolutionThunk(instruction, std::move(plan), std::move(operand_values),
                                          constants, output_value, kernels, kernel_name);
}

absl::Status EmitConvolutionThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  // A stage of a depthwise convolution's chain: emitted with its last stage.
  if (ConvChainDefers(instruction)) return absl::OkStatus();
  if (std::vector<const HloInstruction*> chain = ConvChainEndingAt(instruction); !chain.empty()) {
    return EmitConvChain(chain, builder);
  }
  if (std::optional<ConcatSlice> slice = ConcatSliceOf(instruction)) {
    return EmitConvolutionIntoConcat(instruction, *slice, builder);
  }
  return EmitEpilogueThunk(instruction, builder, &CreateConvolutionThunk, "convolution_loop");
}

}  // namespace axle::cpu
