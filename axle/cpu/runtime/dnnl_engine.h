//===- dnnl_engine.h - The oneDNN engine and memory the oneDNN thunks share -===//
//
// Internal to the oneDNN thunks (dot_thunk.cc, convolution_thunk*.cc): this
// header includes oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DNNL_ENGINE_H_
#define AXLE_CPU_RUNTIME_DNNL_ENGINE_H_

#include <cstdint>
#include <optional>

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

// The reorder primitive that copies memory laid out as `from` into layout
// `to`.
inline dnnl::reorder DnnlReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), from, DnnlEngine(), to));
}

// Copies `from` into `to`, each in its own layout, on `stream` (through a
// reorder made for the two: for one-off copies such as packing weights).
inline void DnnlCopy(const dnnl::stream& stream, dnnl::memory& from, dnnl::memory& to) {
  dnnl::reorder(from, to).execute(stream, from, to);
}

// A primitive's input `data`, laid out as `user_desc`: that memory itself,
// or, with a `reorder` (DnnlReorder(user_desc, desc)), its copy in layout
// `desc` at `into`, made on `stream` first.
inline dnnl::memory DnnlInput(const dnnl::stream& stream, const dnnl::memory::desc& user_desc,
                              const void* data, const std::optional<dnnl::reorder>& reorder,
                              const dnnl::memory::desc& desc, void* into) {
  dnnl::memory user(user_desc, DnnlEngine(), const_cast<void*>(data));
  if (!reorder) return user;
  dnnl::memory reordered(desc, DnnlEngine(), into);
  reorder->execute(stream, user, reordered);
  return reordered;
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DNNL_ENGINE_H_
