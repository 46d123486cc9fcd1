//===- ptx_thunk.h - A thunk that launches kernels of its own PTX module ---===//
//
// The base of Axle's own GPU kernels (sort_thunk.h, scatter_thunk.h,
// select_and_scatter_thunk.h): the thunk's PTX is generated when it is made
// (at compile time, so it is testable without a GPU), loaded into the
// device's context in Initialize, and its kernels launched in Execute with
// any mix of device pointers and 64-bit integer parameters.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_THUNK_H_
#define AXLE_GPU_PTX_THUNK_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/gpu_thunk.h"

namespace axle::gpu {

// Threads per block of the kernels that run one thread per item (an
// element, an update, a block of random bits), BeginKernel's block size
// for them and LaunchPerItem's.
inline constexpr int kThreadsPerBlock = 256;

class PtxThunk : public GpuThunk {
 public:
  // `kernels`: the names of the entries of `ptx` it launches, in the order
  // Launch numbers them.
  PtxThunk(std::string name, GpuThunkValues values, std::string ptx,
           std::vector<std::string> kernels);

  const std::string& ptx() const { return ptx_; }
  const std::vector<std::string>& kernel_names() const { return kernels_; }

  // Loads the PTX and finds every kernel. Errors name the instruction.
  absl::Status Initialize(const CudaDevice& device) override;
  GpuThunkValues buffer_uses() const override { return values_; }
  // Its kernels and copies are enqueued on the stream, nothing read back.
  bool CapturableInGraph() const override { return true; }

 protected:
  const GpuThunkValues& values() const { return values_; }

  // One kernel parameter: a device address or an integer, both 64 bits.
  struct Argument {
    uint64_t bits;
    static Argument Pointer(CUdeviceptr address) { return Argument{address}; }
    static Argument Int(int64_t value) { return Argument{static_cast<uint64_t>(value)}; }
  };
  // Enqueues kernel `kernel` (an index into kernel_names()) with `grid`
  // blocks of `block` threads (x only). FailedPrecondition before
  // Initialize; errors name the instruction and the kernel.
  absl::Status Launch(CudaStream* stream, int kernel, int64_t grid, int block,
                      absl::Span<const Argument> arguments) const;
  // Launch with one thread per item for `items` items, in blocks of
  // kThreadsPerBlock.
  absl::Status LaunchPerItem(CudaStream* stream, int kernel, int64_t items,
                             absl::Span<const Argument> arguments) const {
    return Launch(stream, kernel, (items + kThreadsPerBlock - 1) / kThreadsPerBlock,
                  kThreadsPerBlock, arguments);
  }
  // Copies `bytes` from `from` to `to` on the stream, unless they are the
  // same buffer (an operand the executable let its result reuse).
  absl::Status CopyUnlessSame(CudaStream* stream, const se::DeviceMemoryBase& from,
                              const se::DeviceMemoryBase& to, int64_t bytes) const;
  // For a thunk whose first `count` operands are copied into its first
  // `count` outputs (CopyUnlessSame) and then read no more: those (operand,
  // output) pairs, as in_place_pairs() lists them, but not an operand
  // value the thunk takes twice (its other use would read it while the
  // output is written).
  std::vector<std::pair<int64_t, int64_t>> CopiedOperandPairs(int64_t count) const;

 private:
  GpuThunkValues values_;
  std::string ptx_;
  std::vector<std::string> kernels_;
  std::unique_ptr<CudaModule> module_;
  std::vector<CUfunction> functions_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_THUNK_H_
