//===- dnnl_args.h - A oneDNN primitive's arguments without allocating ----===//
//
// Internal to the oneDNN thunks (this header includes oneDNN). Convolution
// pieces and row bands run every few microseconds, a chain's ~90 times per
// thread per run: the C++ API's way of running one (an unordered_map of
// arguments, copied into a vector, and a dnnl::memory made for each
// buffer) cost ten allocations a run. DnnlArgs holds the arguments in place
// and runs the primitive through the C API; DnnlThreadMemory hands out a
// memory object made once per thread and pointed at each call's buffer.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DNNL_ARGS_H_
#define AXLE_CPU_RUNTIME_DNNL_ARGS_H_

#include <array>
#include <cstdint>

#include "oneapi/dnnl/dnnl.hpp"

namespace axle::cpu {

// One run's arguments (at most kMaxArgs), by oneDNN argument index.
class DnnlArgs {
 public:
  static constexpr int kMaxArgs = 12;

  // Sets argument `arg` to `memory`, replacing an earlier one.
  void Set(int arg, const dnnl::memory& memory);
  // Runs `primitive` on `stream` with these arguments (throws dnnl::error).
  void Execute(const dnnl::primitive& primitive, const dnnl::stream& stream) const;

 private:
  std::array<int, kMaxArgs> index_{};
  std::array<dnnl::memory, kMaxArgs> memory_;
  int count_ = 0;
};

// A memory object of layout `desc` at `data`, from the calling thread's
// cache: made once for each (`owner`, `slot`) (`owner` is the address of
// what the memory belongs to, such as a piece's desc; `slot` tells apart
// the memories of one owner used in one run) and pointed at `data` on
// later calls. It is made anew when `desc` differs from the cached one's
// (an owner freed and its address reused). The cache is per thread and
// bounded; the returned object is the caller's to use until its next call
// with the same owner and slot on this thread.
dnnl::memory DnnlThreadMemory(const void* owner, int slot, const dnnl::memory::desc& desc,
                              const void* data);
// DnnlThreadMemory for a primitive's scratchpad: `size` bytes at `data`.
dnnl::memory DnnlThreadScratchpad(const void* owner, int64_t size, void* data);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DNNL_ARGS_H_
