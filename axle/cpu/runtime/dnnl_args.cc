//===- dnnl_args.cc - A oneDNN primitive's arguments without allocating ---===//
//
// DnnlArgs runs through dnnl_primitive_execute with the arguments on the
// stack; DnnlThreadMemory keeps a thread_local map from (owner, slot) to a
// memory object, cleared when it outgrows kMaxCachedMemories.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/dnnl_args.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "axle/base/logging.h"
#include "axle/cpu/runtime/dnnl_engine.h"

namespace axle::cpu {
namespace {

// A memory object costs about 1 KiB (its desc): a few MiB per thread at most.
constexpr size_t kMaxCachedMemories = 4096;

}  // namespace

void DnnlArgs::Set(int arg, const dnnl::memory& memory) {
  for (int i = 0; i < count_; ++i) {
    if (index_[i] == arg) {
      memory_[i] = memory;
      return;
    }
  }
  AXLE_CHECK(count_ < kMaxArgs);
  index_[count_] = arg;
  memory_[count_] = memory;
  ++count_;
}

void DnnlArgs::Execute(const dnnl::primitive& primitive, const dnnl::stream& stream) const {
  std::array<dnnl_exec_arg_t, kMaxArgs> args;
  for (int i = 0; i < count_; ++i) args[i] = {index_[i], memory_[i].get(/*allow_empty=*/true)};
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive.get(), stream.get(), count_, args.data()),
      "could not execute a primitive");
}

dnnl::memory DnnlThreadMemory(const void* owner, int slot, const dnnl::memory::desc& desc,
                              const void* data) {
  thread_local absl::flat_hash_map<std::pair<const void*, int>, dnnl::memory> cache;
  auto it = cache.find(std::make_pair(owner, slot));
  if (it != cache.end()) {
    const dnnl_memory_desc_t* cached = nullptr;
    dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(it->second.get(), &cached),
                            "could not get a memory's desc");
    if (dnnl_memory_desc_equal(cached, &desc.data) != 0) {
      it->second.set_data_handle(const_cast<void*>(data));
      return it->second;
    }
    cache.erase(it);
  }
  if (cache.size() >= kMaxCachedMemories) cache.clear();
  dnnl::memory memory(desc, DnnlEngine(), const_cast<void*>(data));
  cache.emplace(std::make_pair(owner, slot), memory);
  return memory;
}

dnnl::memory DnnlThreadScratchpad(const void* owner, int64_t size, void* data) {
  // Through the C API: the C++ desc's constructor takes its dims as a vector.
  const dnnl_dims_t dims = {size};
  dnnl::memory::desc desc;
  dnnl::error::wrap_c_api(dnnl_memory_desc_init_by_tag(&desc.data, 1, dims, dnnl_u8, dnnl_a),
                          "could not make a scratchpad's desc");
  return DnnlThreadMemory(owner, DNNL_ARG_SCRATCHPAD, desc, data);
}

}  // namespace axle::cpu
