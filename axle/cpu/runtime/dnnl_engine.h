//===- dnnl_engine.h - The oneDNN engine and memory the oneDNN thunks share -===//
//
// Internal to the oneDNN thunks (dot_thunk.cc, convolution_thunk.cc): this
// header includes oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DNNL_ENGINE_H_
#define AXLE_CPU_RUNTIME_DNNL_ENGINE_H_

#include <cstdint>

#include "axle/core/primitive_type.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace axle::cpu {

// The process's one CPU engine (never destroyed: thunks may outlive static
// destructors).
inline const dnnl::engine& DnnlEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// The oneDNN type of the element types the oneDNN thunks take (f32, bf16).
inline dnnl::memory::data_type DnnlType(PrimitiveType type) {
  return type == BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// A primitive's scratchpad: `size` bytes at `data`.
inline dnnl::memory DnnlScratchpad(int64_t size, void* data) {
  const dnnl::memory::desc desc({size}, dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
  return dnnl::memory(desc, DnnlEngine(), data);
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DNNL_ENGINE_H_
