//===- runtime_symbols.h - C helpers that JIT-compiled code calls ----------===//
//
// Functions compiled into Axle that generated code may call by name (the
// rounding of f32 to the f8/f4 formats, for now). The Jit defines each of
// them in every JIT it creates.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SYMBOLS_H_
#define AXLE_CPU_RUNTIME_SYMBOLS_H_

#include <string>
#include <vector>

#include "axle/core/primitive_type.h"

namespace axle::cpu {

struct RuntimeSymbol {
  std::string name;
  void* address;
};

const std::vector<RuntimeSymbol>& RuntimeSymbols();

// The name of `uint8_t f(float)` that rounds an f32 to the encoding of an
// 8- or 4-bit float type (nearest even, with the type's overflow rule).
std::string NarrowFloatEncoderName(PrimitiveType type);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SYMBOLS_H_
