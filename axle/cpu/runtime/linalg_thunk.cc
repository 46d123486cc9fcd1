//===- linalg_thunk.cc - fft, cholesky, triangular-solve on cpu ------------===//
#include "axle/cpu/runtime/linalg_thunk.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/eval/kernels.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// The value `value` holds, as a literal of `shape` (descending layout).
Literal ReadLiteral(const ThunkContext& context, int64_t value, const Shape& shape) {
  Literal literal(shape);
  std::memcpy(literal.untyped_data(), context.address(value), literal.size_bytes());
  return literal;
}

}  // namespace

absl::Status InterpreterKernelThunk::Execute(const ThunkContext& context) const {
  std::vector<Literal> operands;
  for (size_t i = 0; i < operand_values_.size(); ++i) {
    operands.push_back(ReadLiteral(context, operand_values_[i], instruction_->operand(i)->shape()));
  }
  absl::StatusOr<Literal> result;
  switch (instruction_->opcode()) {
    case HloOpcode::kFft:
      result = EvaluateFft(*cast<HloFftInstruction>(instruction_), operands[0]);
      break;
    case HloOpcode::kCholesky:
      result = EvaluateCholesky(*cast<HloCholeskyInstruction>(instruction_), operands[0]);
      break;
    case HloOpcode::kTriangularSolve:
      result = EvaluateTriangularSolve(*cast<HloTriangularSolveInstruction>(instruction_),
                                       operands[0], operands[1]);
      break;
    case HloOpcode::kRaggedDot:
      result = EvaluateRaggedDot(*cast<HloDotInstruction>(instruction_), operands[0], operands[1],
                                 operands[2]);
      break;
    case HloOpcode::kScaledDot:
      result = EvaluateScaledDot(*cast<HloDotInstruction>(instruction_), operands[0], operands[1],
                                 operands[2], operands[3]);
      break;
    default:
      return absl::InternalError(
          absl::StrCat("no interpreter kernel for ", HloOpcodeString(instruction_->opcode())));
  }
  AXLE_RETURN_IF_ERROR(result.status());
  if (result->size_bytes() != context.size_bytes(result_value_)) {
    return absl::InternalError(absl::StrCat(name(), ": the kernel's result has ",
                                            result->size_bytes(), " bytes, the buffer ",
                                            context.size_bytes(result_value_)));
  }
  std::memcpy(context.address(result_value_), result->untyped_data(), result->size_bytes());
  return absl::OkStatus();
}

absl::Status EmitInterpreterKernelThunk(const HloInstruction& instruction,
                                        ProgramBuilder& builder) {
  if (!instruction.shape().IsArray()) {
    return Unsupported(instruction, "a non-array result is not supported yet");
  }
  int64_t arity = 1;
  switch (instruction.opcode()) {
    case HloOpcode::kTriangularSolve:
      arity = 2;
      break;
    case HloOpcode::kRaggedDot:
      arity = 3;
      break;
    case HloOpcode::kScaledDot:
      arity = 4;
      break;
    default:
      break;
  }
  if (instruction.operand_count() != arity) {
    return Unsupported(instruction, absl::StrCat("expected ", arity, " operands"));
  }
  std::vector<int64_t> operands;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray()) {
      return Unsupported(instruction, "a non-array operand is not supported yet");
    }
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(operand));
    operands.push_back(value);
  }
  int64_t result = builder.DefineTemporary(&instruction, {}, instruction.shape());
  builder.AddThunk(
      std::make_unique<InterpreterKernelThunk>(&instruction, std::move(operands), result));
  return absl::OkStatus();
}

absl::Status InterpreterKernelThunk::Serialize(ThunkWriter& /*writer*/) const {
  return absl::UnimplementedError(absl::StrCat(
      "%", name(), " (", HloOpcodeString(instruction_->opcode()),
      ") runs the interpreter's kernel on its HLO instruction: it has no serialized form"));
}

}  // namespace axle::cpu
