//===- runtime_symbols.cc - C helpers that JIT-compiled code calls ---------===//
//
// The encoders go through axle/core/types.h so that generated code rounds
// exactly as the reference interpreter does.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime_symbols.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "axle/core/types.h"

namespace axle::cpu {
namespace {

template <typename T>
uint8_t EncodeFromF32(float value) {
  return static_cast<uint8_t>(T(value).bits());
}

}  // namespace

std::string NarrowFloatEncoderName(PrimitiveType type) {
  return absl::StrCat("axle_cpu_f32_to_", primitive_util::LowercasePrimitiveTypeName(type));
}

const std::vector<RuntimeSymbol>& RuntimeSymbols() {
  static const auto* symbols = [] {
    auto* list = new std::vector<RuntimeSymbol>();
    auto add = [&](PrimitiveType type, uint8_t (*fn)(float)) {
      list->push_back({NarrowFloatEncoderName(type), reinterpret_cast<void*>(fn)});
    };
    add(F8E3M4, &EncodeFromF32<float8_e3m4>);
    add(F8E4M3, &EncodeFromF32<float8_e4m3>);
    add(F8E4M3FN, &EncodeFromF32<float8_e4m3fn>);
    add(F8E4M3B11FNUZ, &EncodeFromF32<float8_e4m3b11fnuz>);
    add(F8E4M3FNUZ, &EncodeFromF32<float8_e4m3fnuz>);
    add(F8E5M2, &EncodeFromF32<float8_e5m2>);
    add(F8E5M2FNUZ, &EncodeFromF32<float8_e5m2fnuz>);
    add(F8E8M0FNU, &EncodeFromF32<float8_e8m0fnu>);
    add(F4E2M1FN, &EncodeFromF32<float4_e2m1fn>);
    return list;
  }();
  return *symbols;
}

}  // namespace axle::cpu
