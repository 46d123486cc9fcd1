//===- compiled_kernel.cc - CompiledKernel's constructor and destructor ----===//
//
// CompiledKernel (loop_kernel_emitter.h, an LLVM-free header) is what every
// kernel thunk holds. Its out-of-line members are defined here, in
// axle_cpu_common, not beside the emitter that fills it in
// (loop_kernel_module.cc, which links LLVM): a program that only loads
// serialized thunks (runtime/, axle_cpu_thunks; docs/graph_frontend.md,
// "AOT") makes kernels from resolved addresses, with no Jit, and links no
// compiler.
//
//===----------------------------------------------------------------------===//
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "axle/base/alignment.h"
#include "axle/base/logging.h"
#include "axle/cpu/loop_kernel_emitter.h"

namespace axle::cpu {

CompiledKernel::CompiledKernel(std::shared_ptr<const Jit> jit, Function function,
                               int64_t outer_size, int64_t num_parameters, int64_t num_outputs)
    : jit_(std::move(jit)),
      function_(function),
      outer_size_(outer_size),
      num_parameters_(num_parameters),
      num_outputs_(num_outputs) {}

CompiledKernel::~CompiledKernel() = default;

void* CompiledKernel::PartialsBuffer(int64_t bytes) {
  CHECK_LE(bytes, kMaxPartialsBytes);
  // Grown to the largest size asked for on this thread and kept: no
  // allocation per run, and not zeroed, so that only the pages a kernel
  // uses are ever touched (a first touch costs ~12 us per 4 KiB page).
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local int64_t capacity = 0;
  if (capacity < bytes) {
    buffer.reset(new std::byte[static_cast<size_t>(bytes + kBufferAlignment)]);
    capacity = bytes;
  }
  const auto address = reinterpret_cast<uintptr_t>(buffer.get());
  return buffer.get() +
         (RoundUpToAlignment(static_cast<int64_t>(address)) - static_cast<int64_t>(address));
}

void CompiledKernel::RunWithPartials(void** buffers) const {
  CHECK_LE(partials_bytes_, kMaxPartialsBytes);
  alignas(kBufferAlignment) std::array<std::byte, kStackPartialsBytes> stack;
  absl::InlinedVector<void*, 16> with_partials(buffers, buffers + num_parameters_ + num_outputs_);
  with_partials.push_back(partials_bytes_ <= kStackPartialsBytes ? stack.data()
                                                                 : PartialsBuffer(partials_bytes_));
  function_(with_partials.data(), 0, outer_size_);
}

}  // namespace axle::cpu
