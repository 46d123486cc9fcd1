//===- target_hooks.cc - The math functions' names and arities -------------===//
#include "axle/llvm_ir/target_hooks.h"

#include <cstddef>
#include <iterator>

namespace axle::llvm_ir {
namespace {

// MathFunction's names, in its order.
constexpr absl::string_view kMathFunctionNames[] = {
    "exp",  "log",   "sin",  "cos",   "pow",  "cbrt",  "expm1", "log1p", "tanh",  "erf",   "tan",
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh",  "sinh",  "hypot", "atan2",
};
static_assert(std::size(kMathFunctionNames) == static_cast<size_t>(MathFunction::kAtan2) + 1,
              "one name per MathFunction");

}  // namespace

absl::string_view MathFunctionName(MathFunction function) {
  return kMathFunctionNames[static_cast<size_t>(function)];
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
