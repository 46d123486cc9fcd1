//===- half_precision_dot_conv_upcast.cc - f16/bf16 dots and convs in f32 -===//
//
// See half_precision_dot_conv_upcast.h.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/half_precision_dot_conv_upcast.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::cpu {
namespace {

// A dot (or, for f16, a convolution) of `type` (bf16 or f16) operands
// with a result of that type or f32 becomes an f32 one of the converted
// operands, converted to the result type; others stay.
absl::StatusOr<bool> Upcast(HloComputation* computation, HloInstruction* instruction,
                            PrimitiveType type) {
  const bool dot = instruction->opcode() == HloOpcode::kDot;
  const bool convolution = type == F16 && instruction->opcode() == HloOpcode::kConvolution;
  if ((!dot && !convolution) || instruction->operand_count() != 2 ||
      !instruction->shape().IsArray()) {
    return false;
  }
  HloInstruction* lhs = instruction->mutable_operand(0);
  HloInstruction* rhs = instruction->mutable_operand(1);
  if (lhs->shape().element_type() != type || rhs->shape().element_type() != type) return false;
  const PrimitiveType result_type = instruction->shape().element_type();
  if (result_type != type && result_type != F32) return false;
  Shape f32_shape = instruction->shape();
  f32_shape.set_element_type(F32);
  std::unique_ptr<HloInstruction> f32_op =
      instruction->CloneWithNewOperands(f32_shape, {MakeConvert(lhs, F32), MakeConvert(rhs, F32)});
  if (dot) {
    PrecisionConfig& precision =
        cast<HloDotInstruction>(f32_op.get())->mutable_attrs()->precision_config;
    if (precision.algorithm() == PrecisionConfig::ALG_DOT_BF16_BF16_F32 ||
        precision.algorithm() == PrecisionConfig::ALG_DOT_F16_F16_F32) {
      precision.set_algorithm(PrecisionConfig::ALG_UNSET);
    }
  }
  HloInstruction* replacement = computation->AddInstruction(std::move(f32_op));
  replacement = MakeConvert(replacement, result_type);
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
  return true;
}

}  // namespace

bool HostHasNativeBf16Dot() {
#if defined(__x86_64__)
  static const bool native = __builtin_cpu_supports("avx512bf16");
  return native;
#else
  return true;  // leave other targets' bf16 dots to oneDNN
#endif
}

absl::StatusOr<bool> HalfPrecisionDotConvUpcast::Run(HloModule* module) {
  return RewriteEachInstruction(
      module,
      [&](HloComputation* computation, HloInstruction* instruction) -> absl::StatusOr<bool> {
        if (!native_bf16_) {
          AXLE_ASSIGN_OR_RETURN(bool changed, Upcast(computation, instruction, BF16));
          if (changed) return true;
        }
        return Upcast(computation, instruction, F16);
      });
}

}  // namespace axle::cpu
