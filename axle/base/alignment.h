//===- alignment.h - The one buffer alignment ------------------------------===//
//
// Every buffer Axle hands out (literals, device buffers, arena slots, scratch
// space of the cpu thunks) starts at a multiple of kBufferAlignment bytes:
// one cache line, and the widest vector (AVX-512) the cpu backend emits
// aligned loads and non-temporal stores for. XLA aligns its buffers the same
// (xla::cpu_function_runtime::MinAlign() is 64 on x86).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_ALIGNMENT_H_
#define AXLE_BASE_ALIGNMENT_H_

#include <cstdint>

namespace axle {

inline constexpr int64_t kBufferAlignment = 64;

// `bytes` rounded up to a multiple of `alignment` (a power of two).
constexpr int64_t RoundUpToAlignment(int64_t bytes, int64_t alignment = kBufferAlignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// The first address at or after `pointer` that is kBufferAlignment-aligned.
template <typename T>
T* AlignUp(T* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  const auto aligned = (address + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  return reinterpret_cast<T*>(aligned);
}

inline bool IsAligned(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % kBufferAlignment == 0;
}

}  // namespace axle

#endif  // AXLE_BASE_ALIGNMENT_H_
