//===- lapack_to_hlo.cc - jaxlib's CPU LAPACK calls as the HLO ops they are ===//
#include "axle/gpu/lapack_to_hlo.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/runtime/host_ffi.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

// The LAPACK routine of `target` ("potrf", "trsm") when it is
// lapack_<s|d|c|z><routine>_ffi, else "".
std::string Routine(const std::string& target) {
  constexpr absl::string_view kPrefix = "lapack_";
  constexpr absl::string_view kSuffix = "_ffi";
  if (!absl::StartsWith(target, kPrefix) || !absl::EndsWith(target, kSuffix) ||
      target.size() < kPrefix.size() + kSuffix.size() + 2) {
    return "";
  }
  const char type = target[kPrefix.size()];
  if (type != 's' && type != 'd' && type != 'c' && type != 'z') return "";
  return target.substr(kPrefix.size() + 1, target.size() - kPrefix.size() - 1 - kSuffix.size());
}

// The character attribute `name` (an integer: jaxlib writes `uplo = 76 : ui8`).
std::optional<char> CharAttribute(const FfiAttributes& attributes, absl::string_view name) {
  absl::StatusOr<int64_t> value = attributes.Get<int64_t>(name);
  if (!value.ok() || *value < 0 || *value > 127) return std::nullopt;
  return static_cast<char>(*value);
}

bool SquareMatrices(const Shape& shape) {
  return shape.IsArray() && shape.rank() >= 2 && pu::IsFloatingPointType(shape.element_type()) &&
         shape.dimensions(shape.rank() - 1) == shape.dimensions(shape.rank() - 2);
}

// potrf: (cholesky, info) for a call of one operand and a (matrices, s32)
// result.
HloInstruction* Potrf(HloInstruction* call, const FfiAttributes& attributes, HloModule* module) {
  const std::optional<char> uplo = CharAttribute(attributes, "uplo");
  const Shape& shape = call->shape();
  if (!uplo.has_value() || (*uplo != 'L' && *uplo != 'U') || call->operand_count() != 1 ||
      !shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return nullptr;
  }
  HloInstruction* a = call->mutable_operand(0);
  const Shape& factor_shape = shape.tuple_shapes(0);
  const Shape& info_shape = shape.tuple_shapes(1);
  const int64_t rank = a->shape().rank();
  if (!SquareMatrices(a->shape()) || !ShapeUtil::Compatible(factor_shape, a->shape()) ||
      !info_shape.IsArray() || info_shape.element_type() != S32 || info_shape.rank() != rank - 2) {
    return nullptr;
  }
  HloComputation* computation = call->parent();
  auto cholesky = std::make_unique<HloCholeskyInstruction>(HloOpcode::kCholesky, factor_shape,
                                                           std::vector<HloInstruction*>{a});
  cholesky->mutable_attrs()->options.set_lower(*uplo == 'L');
  HloInstruction* factor = computation->AddInstruction(std::move(cholesky));
  // info: 1 where the factor holds a NaN (a real part's, for complex).
  HloInstruction* real = factor;
  if (pu::IsComplexType(factor_shape.element_type())) {
    Shape real_shape = factor_shape;
    real_shape.set_element_type(pu::ComplexComponentType(factor_shape.element_type()));
    real =
        computation->AddInstruction(HloInstruction::Create(HloOpcode::kReal, real_shape, {factor}));
  }
  Shape nan_shape = real->shape();
  nan_shape.set_element_type(PRED);
  auto compare = std::make_unique<HloCompareInstruction>(HloOpcode::kCompare, nan_shape,
                                                         std::vector<HloInstruction*>{real, real});
  compare->mutable_attrs()->direction = ComparisonDirection::kNe;
  HloInstruction* nan = computation->AddInstruction(std::move(compare));
  Shape failed_shape = info_shape;
  failed_shape.set_element_type(PRED);
  auto reduce = std::make_unique<HloDimensionsInstruction>(
      HloOpcode::kReduce, failed_shape,
      std::vector<HloInstruction*>{nan, MakeConstant(computation, LiteralUtil::Zero(PRED))});
  reduce->mutable_attrs()->dimensions = {rank - 2, rank - 1};
  reduce->AppendCalledComputation(
      AddScalarCombiner(module, "lapack_to_hlo_or", HloOpcode::kOr, PRED));
  HloInstruction* failed = computation->AddInstruction(std::move(reduce));
  HloInstruction* info = computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kConvert, info_shape, {failed}));
  return MakeTuple(computation, {factor, info});
}

// trsm: triangular-solve(a, b) for a call of two operands and b's shape.
HloInstruction* Trsm(HloInstruction* call, const FfiAttributes& attributes) {
  const std::optional<char> side = CharAttribute(attributes, "side");
  const std::optional<char> uplo = CharAttribute(attributes, "uplo");
  const std::optional<char> trans = CharAttribute(attributes, "trans_x");
  const std::optional<char> diag = CharAttribute(attributes, "diag");
  if (!side || !uplo || !trans || !diag || (*side != 'L' && *side != 'R') ||
      (*uplo != 'L' && *uplo != 'U') || (*diag != 'U' && *diag != 'N') ||
      call->operand_count() != 2) {
    return nullptr;
  }
  TriangularSolveOptions options;
  switch (*trans) {
    case 'N':
      options.set_transpose_a(TriangularSolveOptions::NO_TRANSPOSE);
      break;
    case 'T':
      options.set_transpose_a(TriangularSolveOptions::TRANSPOSE);
      break;
    case 'C':
      options.set_transpose_a(TriangularSolveOptions::ADJOINT);
      break;
    default:
      return nullptr;
  }
  options.set_left_side(*side == 'L');
  options.set_lower(*uplo == 'L');
  options.set_unit_diagonal(*diag == 'U');
  HloInstruction* a = call->mutable_operand(0);
  HloInstruction* b = call->mutable_operand(1);
  const Shape& shape = call->shape();
  if (!SquareMatrices(a->shape()) || !b->shape().IsArray() ||
      b->shape().rank() != a->shape().rank() || !ShapeUtil::Compatible(shape, b->shape()) ||
      a->shape().element_type() != b->shape().element_type()) {
    return nullptr;
  }
  const int64_t rank = b->shape().rank();
  const int64_t k = b->shape().dimensions(options.left_side() ? rank - 2 : rank - 1);
  if (a->shape().dimensions(rank - 1) != k) return nullptr;
  auto solve = std::make_unique<HloTriangularSolveInstruction>(HloOpcode::kTriangularSolve, shape,
                                                               std::vector<HloInstruction*>{a, b});
  solve->mutable_attrs()->options = options;
  return call->parent()->AddInstruction(std::move(solve));
}

}  // namespace

bool LapackCallIsAnHloOp(const HloCustomCallInstruction& call) {
  const std::string routine = Routine(call.custom_call_target());
  if (routine != "potrf" && routine != "trsm") return false;
  absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(call.raw_backend_config_string());
  if (!attributes.ok()) return false;
  auto is_one_of = [&](absl::string_view name, absl::string_view allowed) {
    const std::optional<char> value = CharAttribute(*attributes, name);
    return value.has_value() && allowed.find(*value) != absl::string_view::npos;
  };
  if (routine == "potrf") return call.operand_count() == 1 && is_one_of("uplo", "LU");
  return call.operand_count() == 2 && is_one_of("side", "LR") && is_one_of("uplo", "LU") &&
         is_one_of("trans_x", "NTC") && is_one_of("diag", "NU");
}

absl::StatusOr<bool> GpuLapackToHlo::Run(HloModule* module) {
  return ReplaceEachInstruction(
      module, [&](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
        const auto* call = dyn_cast<HloCustomCallInstruction>(instruction);
        if (call == nullptr) return nullptr;
        const std::string routine = Routine(call->custom_call_target());
        if (routine != "potrf" && routine != "trsm") return nullptr;
        absl::StatusOr<FfiAttributes> attributes =
            ParseFfiAttributes(call->raw_backend_config_string());
        if (!attributes.ok()) return nullptr;
        return routine == "potrf" ? Potrf(instruction, *attributes, module)
                                  : Trsm(instruction, *attributes);
      });
}

}  // namespace axle::gpu
