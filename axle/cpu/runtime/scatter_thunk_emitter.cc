//===- scatter_thunk_emitter.cc - scatter from HLO -------------------------===//
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/integer_element.h"
#include "axle/cpu/runtime/scatter_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/scatter_indexing.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

absl::Status Invalid(const HloInstruction& instruction, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("cpu platform: scatter ", instruction.name(), ": ", what));
}

// The row op `combiner` is on operands of `type`, if any (see Geometry).
ScatterThunk::Geometry::RowOp RowOpOf(const HloComputation& combiner, PrimitiveType type) {
  using RowOp = ScatterThunk::Geometry::RowOp;
  switch (type) {
    case F32:
    case F64:
    case S32:
    case S64:
    case U32:
    case U64:
      break;
    default:
      return RowOp::kNone;
  }
  const HloInstruction* root = combiner.root_instruction();
  if (combiner.num_parameters() != 2) return RowOp::kNone;
  if (root == combiner.parameter_instruction(1)) return RowOp::kAssign;
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1)) {
    return RowOp::kNone;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return RowOp::kAdd;
    case HloOpcode::kMultiply:
      return RowOp::kMultiply;
    case HloOpcode::kMaximum:
      return root->operand(0) == combiner.parameter_instruction(0) ? RowOp::kMax : RowOp::kNone;
    case HloOpcode::kMinimum:
      return root->operand(0) == combiner.parameter_instruction(0) ? RowOp::kMin : RowOp::kNone;
    default:
      return RowOp::kNone;
  }
}

}  // namespace

const Literal* ScatterFillsOperand(const HloInstruction& operand) {
  if (operand.opcode() != HloOpcode::kFusion || operand.operand_count() != 0 ||
      !operand.shape().IsArray() || operand.user_count() != 1 || operand.parent() == nullptr ||
      operand.parent()->root_instruction() == &operand) {
    return nullptr;
  }
  const HloInstruction* root =
      cast<HloFusionInstruction>(&operand)->fused_instructions_computation()->root_instruction();
  if (root->opcode() != HloOpcode::kBroadcast ||
      root->operand(0)->opcode() != HloOpcode::kConstant || !root->operand(0)->shape().IsArray() ||
      root->operand(0)->shape().rank() != 0 ||
      root->operand(0)->shape().element_type() != operand.shape().element_type()) {
    return nullptr;
  }
  // The only user is a scatter that reads it once, as an operand (not as
  // its indices or updates).
  const HloInstruction* scatter = operand.users().front();
  if (scatter->opcode() != HloOpcode::kScatter) return nullptr;
  const int64_t n = scatter->operand_count() / 2;
  int64_t uses = 0;
  bool as_operand = false;
  for (int64_t i = 0; i < scatter->operand_count(); ++i) {
    if (scatter->operand(i) != &operand) continue;
    ++uses;
    as_operand = i < n;
  }
  if (uses != 1 || !as_operand) return nullptr;
  const Literal& literal = cast<HloConstantInstruction>(root->operand(0))->literal();
  const int64_t count = ShapeUtil::ElementsIn(operand.shape());
  if (count == 0 ||
      literal.size_bytes() * count != ShapeUtil::ByteSizeOfElements(operand.shape())) {
    return nullptr;
  }
  return &literal;
}

absl::Status EmitScatterThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  absl::StatusOr<ScatterIndexing> indexing = AnalyzeScatter(instruction);
  if (!indexing.ok()) return Invalid(instruction, indexing.status().message());
  const int64_t n = cast<HloScatterInstruction>(&instruction)->scatter_operand_count();
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(n)->shape();
  if (!IsByteIntegerType(indices.element_type())) {
    return Invalid(instruction,
                   absl::StrCat("indices of type ",
                                primitive_util::LowercasePrimitiveTypeName(indices.element_type()),
                                " are not integers"));
  }
  ScatterThunk::Geometry g;
  static_cast<ScatterIndexing&>(g) = *std::move(indexing);
  const HloComputation* combiner = instruction.to_apply();
  std::vector<int64_t> operand_values, update_values;
  std::vector<std::vector<char>> fills(n);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& o = instruction.operand(i)->shape();
    if (const Literal* fill = ScatterFillsOperand(*instruction.operand(i))) {
      // No kernel computed it (program_builder.cc): the thunk fills.
      const char* bytes = static_cast<const char*>(fill->untyped_data());
      fills[i].assign(bytes, bytes + fill->size_bytes());
      operand_values.push_back(-1);
    } else {
      AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(instruction.operand(i)));
      operand_values.push_back(value);
    }
    AXLE_ASSIGN_OR_RETURN(int64_t update_value, builder.ValueOf(instruction.operand(n + 1 + i)));
    update_values.push_back(update_value);
    const int64_t count = ShapeUtil::ElementsIn(o);
    g.element_bytes.push_back(count == 0 ? 1 : ShapeUtil::ByteSizeOfElements(o) / count);
  }
  if (n == 1) {
    g.element_type = operand.element_type();
    g.row_op = RowOpOf(*combiner, g.element_type);
  }
  AXLE_ASSIGN_OR_RETURN(int64_t indices_value, builder.ValueOf(instruction.operand(n)));
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledScalarFunction> function,
      builder.kernels().AddScalarFunction(*combiner, builder.UniqueName("scatter_combiner")));
  std::vector<int64_t> output_values = builder.DefineTemporaries(&instruction);
  if (static_cast<int64_t>(output_values.size()) != n) {
    return Unsupported(instruction, "a scatter whose result leaves do not match its operands");
  }
  builder.AddThunk(std::make_unique<ScatterThunk>(
      instruction.name(), std::move(function), std::move(g), std::move(operand_values),
      indices_value, std::move(update_values), std::move(output_values), std::move(fills)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
