//===- runtime_symbols.h - C helpers that JIT-compiled code calls ----------===//
//
// Functions compiled into Axle that generated code may call by name (complex
// math). The Jit defines each of them in every JIT it creates.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SYMBOLS_H_
#define AXLE_CPU_RUNTIME_SYMBOLS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "axle/core/primitive_type.h"

namespace axle::cpu {

struct RuntimeSymbol {
  std::string name;
  void* address;
};

const std::vector<RuntimeSymbol>& RuntimeSymbols();

// The name of `void f(const T* z, T* out)` (or `f(const T* x, const T* y,
// T* out)` for power and atan2), T float or double, a complex value being
// two T: the complex `op` (HloOpcodeString) of c64/c128 computed as the
// interpreter computes it (std::complex). Ops: sqrt, rsqrt, sine, cosine,
// tan, tanh, sinh, cosh, asin, acos, atan, asinh, acosh, atanh,
// exponential-minus-one, log-plus-one, logistic, power, atan2.
std::string ComplexMathName(absl::string_view op, PrimitiveType type);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SYMBOLS_H_
