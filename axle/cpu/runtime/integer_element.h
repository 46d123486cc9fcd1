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

#include "axle/core/primitive_type.h"

namespace axle::cpu {

// The integer types ReadIntegerElement reads: s8 to s64 and u8 to u64 (not
// the sub-byte ones), V(PrimitiveType, C++ type).
#define AXLE_BYTE_INTEGER_TYPES_(V) \
  V(S8, int8_t)                     \
  V(S16, int16_t)                   \
  V(S32, int32_t)                   \
  V(S64, int64_t)                   \
  V(U8, uint8_t)                    \
  V(U16, uint16_t)                  \
  V(U32, uint32_t)                  \
  V(U64, uint64_t)

inline bool IsByteIntegerType(PrimitiveType type) {
  switch (type) {
#define AXLE_BYTE_INTEGER_CASE_(e, T) case e:
    AXLE_BYTE_INTEGER_TYPES_(AXLE_BYTE_INTEGER_CASE_)
#undef AXLE_BYTE_INTEGER_CASE_
    return true;
    default:
      return false;
  }
}

// Calls f.template operator()<T>() with T the C++ type of `type` where it
// is one of the IsByteIntegerType types, else `otherwise()`; returns its
// result.
template <typename F, typename G>
decltype(auto) ByteIntegerTypeSwitch(PrimitiveType type, F&& f, G&& otherwise) {
  switch (type) {
#define AXLE_BYTE_INTEGER_CASE_(e, T) \
  case e:                             \
    return f.template operator()<T>();
    AXLE_BYTE_INTEGER_TYPES_(AXLE_BYTE_INTEGER_CASE_)
#undef AXLE_BYTE_INTEGER_CASE_
    default:
      return otherwise();
  }
}
#undef AXLE_BYTE_INTEGER_TYPES_

// Element `i` of the array of integer `type` at `data`, as int64: u64 values
// above INT64_MAX become negative (hence out of bounds where an index is
// checked). Callers admit IsByteIntegerType types only; any other type reads
// as -1.
inline int64_t ReadIntegerElement(const void* data, PrimitiveType type, int64_t i) {
  return ByteIntegerTypeSwitch(
      type, [&]<typename T>() { return static_cast<int64_t>(static_cast<const T*>(data)[i]); },
      [] { return int64_t{-1}; });
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_INTEGER_ELEMENT_H_
