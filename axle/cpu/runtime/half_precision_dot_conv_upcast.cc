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

namespace pu = primitive_util;

// The 8-bit floats whose dots the pass computes in f32: every product of
// two of them is exact in f32 (at most 5 x 5 significand bits, exponents
// well inside f32's). Not f8e8m0fnu: its 2^-127 squared underflows.
bool IsUpcastEightBitFloat(PrimitiveType type) {
  return pu::IsFloatingPointType(type) && pu::BitWidth(type) == 8 && type != F8E8M0FNU;
}

// A dot (or, for f16, a convolution) of `type` (bf16 or f16) operands
// with a result of that type or f32 becomes an f32 one of the converted
// operands, converted to the result type; `type` F8E4M3FN stands for the
// 8-bit floats (IsUpcastEightBitFloat), which may differ between the
// operands, with any result but f64 (the interpreter sums them in f32
// and rounds once, as the converted f32 dot does). Others stay.
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
  const PrimitiveType result_type = instruction->shape().element_type();
  if (type == F8E4M3FN) {
    if (!IsUpcastEightBitFloat(lhs->shape().element_type()) ||
        !IsUpcastEightBitFloat(rhs->shape().element_type()) ||
        !pu::IsFloatingPointType(result_type) || result_type == F64) {
      return false;
    }
  } else {
    if (lhs->shape().element_type() != type || rhs->shape().element_type() != type) return false;
    if (result_type != type && result_type != F32) return false;
  }
  Shape f32_shape = instruction->shape();
  f32_shape.set_element_type(F32);
  std::unique_ptr<HloInstruction> f32_op =
      instruction->CloneWithNewOperands(f32_shape, {MakeConvert(lhs, F32), MakeConvert(rhs, F32)});
  if (dot) {
    PrecisionConfig& precision =
        cast<HloDotInstruction>(f32_op.get())->mutable_attrs()->precision_config;
    switch (precision.algorithm()) {
      case PrecisionConfig::ALG_DOT_BF16_BF16_F32:
      case PrecisionConfig::ALG_DOT_F16_F16_F32:
      case PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32:
      case PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM:
        precision.set_algorithm(PrecisionConfig::ALG_UNSET);
        break;
      default:
        break;
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
        AXLE_ASSIGN_OR_RETURN(bool changed, Upcast(computation, instruction, F16));
        if (changed) return true;
        return Upcast(computation, instruction, F8E4M3FN);
      });
}

}  // namespace axle::cpu
