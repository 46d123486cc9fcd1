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

// Calls f.template operator()<T>() with T the C++ type of `type`, one of
// the IsByteIntegerType types, and returns its result. Callers check the
// type first.
template <typename F>
decltype(auto) ByteIntegerTypeSwitch(F&& f, PrimitiveType type) {
  switch (type) {
#define AXLE_BYTE_INTEGER_CASE_(e, T) \
  case e:                             \
    return f.template operator()<T>();
    AXLE_BYTE_INTEGER_TYPES_(AXLE_BYTE_INTEGER_CASE_)
#undef AXLE_BYTE_INTEGER_CASE_
    default:
      std::abort();
  }
}
#undef AXLE_BYTE_INTEGER_TYPES_

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
