//===- target_hooks.cc - The math functions' names and arities -------------===//
#include "axle/llvm_ir/target_hooks.h"

namespace axle::llvm_ir {

absl::string_view MathFunctionName(MathFunction function) {
  switch (function) {
    case MathFunction::kExp:
      return "exp";
    case MathFunction::kLog:
      return "log";
    case MathFunction::kSin:
      return "sin";
    case MathFunction::kCos:
      return "cos";
    case MathFunction::kPow:
      return "pow";
    case MathFunction::kCbrt:
      return "cbrt";
    case MathFunction::kExpm1:
      return "expm1";
    case MathFunction::kLog1p:
      return "log1p";
    case MathFunction::kTanh:
      return "tanh";
    case MathFunction::kErf:
      return "erf";
    case MathFunction::kTan:
      return "tan";
    case MathFunction::kAcos:
      return "acos";
    case MathFunction::kAcosh:
      return "acosh";
    case MathFunction::kAsin:
      return "asin";
    case MathFunction::kAsinh:
      return "asinh";
    case MathFunction::kAtan:
      return "atan";
    case MathFunction::kAtanh:
      return "atanh";
    case MathFunction::kCosh:
      return "cosh";
    case MathFunction::kSinh:
      return "sinh";
    case MathFunction::kHypot:
      return "hypot";
    case MathFunction::kAtan2:
      return "atan2";
  }
  return "unknown";
}

int MathFunctionArity(MathFunction function) {
  switch (function) {
    case MathFunction::kPow:
    case MathFunction::kHypot:
    case MathFunction::kAtan2:
      return 2;
    default:
      return 1;
  }
}

}  // namespace axle::llvm_ir
