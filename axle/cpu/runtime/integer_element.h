//===- integer_element.h - One element of an integer buffer, as int64 -----===//
//
// The thunks that read indices, sizes or offsets from device buffers at run
// time (scatter, dynamic-slice starts, ragged all-to-all) take them in any
// integer type; this reads one.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_INTEGER_ELEMENT_H_
#define AXLE_CPU_RUNTIME_INTEGER_ELEMENT_H_

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "axle/core/primitive_type.h"
#include "axle/core/types.h"

namespace axle::cpu {

// The integer types ReadIntegerElement reads: s8 to s64 and u8 to u64 (not
// the sub-byte ones).
inline bool IsByteIntegerType(PrimitiveType type) {
  switch (type) {
    case S8:
    case S16:
    case S32:
    case S64:
    case U8:
    case U16:
    case U32:
    case U64:
      return true;
    default:
      return false;
  }
}

// Calls f.template operator()<T>() with T the C++ type of `type`, one of
// the IsByteIntegerType types, and returns its result. Callers check the
// type first.
template <typename F>
decltype(auto) ByteIntegerTypeSwitch(F&& f, PrimitiveType type) {
  using Result = decltype(f.template operator()<int8_t>());
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> Result {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return f.template operator()<T>();
        } else {
          std::abort();
        }
      },
      type);
}

// Element `i` of the array of integer `type` at `data`, as int64: u64 values
// above INT64_MAX become negative (hence out of bounds where an index is
// checked). Callers admit IsByteIntegerType types only; any other type reads
// as -1.
inline int64_t ReadIntegerElement(const void* data, PrimitiveType type, int64_t i) {
  if (!IsByteIntegerType(type)) return -1;
  return ByteIntegerTypeSwitch(
      [&]<typename T>() { return static_cast<int64_t>(static_cast<const T*>(data)[i]); }, type);
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_INTEGER_ELEMENT_H_
