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

// Element `i` of the array of integer `type` at `data`, as int64: u64 values
// above INT64_MAX become negative (hence out of bounds where an index is
// checked). Callers admit IsByteIntegerType types only; any other type reads
// as -1.
inline int64_t ReadIntegerElement(const void* data, PrimitiveType type, int64_t i) {
  switch (type) {
    case S8:
      return static_cast<const int8_t*>(data)[i];
    case S16:
      return static_cast<const int16_t*>(data)[i];
    case S32:
      return static_cast<const int32_t*>(data)[i];
    case S64:
      return static_cast<const int64_t*>(data)[i];
    case U8:
      return static_cast<const uint8_t*>(data)[i];
    case U16:
      return static_cast<const uint16_t*>(data)[i];
    case U32:
      return static_cast<const uint32_t*>(data)[i];
    case U64:
      return static_cast<int64_t>(static_cast<const uint64_t*>(data)[i]);
    default:
      return -1;
  }
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_INTEGER_ELEMENT_H_
