//===- concat_in_place.cc - Convolutions that write their concat slices ---===//
#include "axle/cpu/runtime/concat_in_place.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// The concatenate a loop fusion is, reading each of its parameters once in
// the fusion's operand order (a plain copy of its operands), else null.
const HloInstruction* ConcatenateOf(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion || !fusion.shape().IsArray() ||
      cast<HloFusionInstruction>(&fusion)->fusion_kind() != FusionKind::kLoop) {
    return nullptr;
  }
  const HloInstruction* root =
      cast<HloFusionInstruction>(&fusion)->fused_instructions_computation()->root_instruction();
  if (root->opcode() != HloOpcode::kConcatenate ||
      root->operand_count() != fusion.operand_count()) {
    return nullptr;
  }
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const HloInstruction* parameter = root->operand(i);
    if (parameter->opcode() != HloOpcode::kParameter ||
        cast<HloParameterInstruction>(parameter)->parameter_number() != i ||
        parameter->user_count() != 1) {
      return nullptr;
    }
  }
  return root;
}

// Whether `producer`, an operand of `concat` (a fusion ConcatenateOf
// takes), may write its slice itself: see concat_in_place.h.
bool WritesItsSlice(const HloInstruction& producer, const HloInstruction& concat) {
  if (FindThunkEmitter(producer) != &EmitConvolutionThunk || producer.user_count() != 1 ||
      producer.users().front() != &concat || producer.parent() == nullptr ||
      producer.parent()->root_instruction() == &producer || !producer.shape().IsArray() ||
      producer.shape().element_type() != F32 || !ShapeUtil::HasDescendingLayout(producer.shape())) {
    return false;
  }
  int64_t uses = 0;
  for (const HloInstruction* operand : concat.operands()) uses += operand == &producer ? 1 : 0;
  if (uses != 1) return false;
  std::vector<const Literal*> constants;
  for (const HloInstruction* operand : producer.operands()) {
    const auto* constant = dyn_cast<HloConstantInstruction>(operand);
    constants.push_back(constant != nullptr ? &constant->literal() : nullptr);
  }
  absl::StatusOr<conv::ConvPlan> plan = conv::MakePlan(producer, constants);
  return plan.ok() && conv::DnnlTakes(*plan) && !plan->addend && plan->lhs.type() == F32 &&
         plan->rhs.type() == F32 && plan->output_type == F32;
}

}  // namespace

bool ConcatInPlaceEnabled() {
  return EnvironmentOptions::Read().cpu_concat_in_place.value_or(true);
}

bool ConcatFilledByOperands(const HloInstruction& instruction) {
  if (!ConcatInPlaceEnabled() || ConcatenateOf(instruction) == nullptr ||
      instruction.parent() == nullptr || instruction.parent()->root_instruction() == &instruction ||
      !ShapeUtil::HasDescendingLayout(instruction.shape())) {
    return false;
  }
  for (const HloInstruction* operand : instruction.operands()) {
    if (!WritesItsSlice(*operand, instruction)) return false;
  }
  return true;
}

std::optional<ConcatSlice> ConcatSliceOf(const HloInstruction& producer) {
  if (producer.user_count() != 1) return std::nullopt;
  const HloInstruction* concat = producer.users().front();
  if (!ConcatFilledByOperands(*concat)) return std::nullopt;
  const auto* concatenate = cast<HloDimensionsInstruction>(ConcatenateOf(*concat));
  const int64_t dimension = concatenate->dimension();
  ConcatSlice slice;
  slice.concat = concat;
  slice.strides = ShapeUtil::RowMajorStrides(concat->shape().dimensions());
  int64_t start = 0;
  for (const HloInstruction* operand : concat->operands()) {
    if (operand == &producer) break;
    start += operand->shape().dimensions(dimension);
  }
  slice.offset = start * slice.strides[dimension];
  return slice;
}

absl::Status EmitConvolutionIntoConcat(const HloInstruction& instruction, const ConcatSlice& slice,
                                       ProgramBuilder& builder) {
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> operand_values, builder.OperandValues(instruction));
  const std::vector<const Literal*> constants = builder.ConstantsOf(operand_values);
  AXLE_ASSIGN_OR_RETURN(conv::ConvPlan plan, conv::MakePlan(instruction, constants));
  plan.output_offset = slice.offset;
  plan.output_strides = slice.strides;
  const int64_t output = builder.SharedResult(slice.concat, slice.concat->operand_count());
  builder.ReportValueInUser(
      instruction,
      ValueInUser{slice.concat, true,
                  slice.offset * primitive_util::ByteWidth(slice.concat->shape().element_type())});
  absl::StatusOr<std::unique_ptr<Thunk>> thunk = conv::MakeDnnlConvolutionThunk(
      instruction.name(), std::move(operand_values), output, std::move(plan));
  if (!thunk.ok()) {
    // ConcatFilledByOperands promised the concatenation this convolution's
    // slice, and only oneDNN's thunk writes one.
    return absl::InternalError(absl::StrCat("cpu platform: convolution %", instruction.name(),
                                            " was to write its slice of %", slice.concat->name(),
                                            " in place: ", thunk.status().message()));
  }
  builder.AddThunk(*std::move(thunk));
  return absl::OkStatus();
}

}  // namespace axle::cpu
