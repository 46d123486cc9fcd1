//===- gpu_thunk.h - One step of a GPU executable --------------------------===//
//
// A GPU executable (issue 16) runs a sequence of thunks in order on one
// CUDA stream. Each thunk reads and writes array buffers named by value ids
// (the executable's numbering of the array values of its program: the
// parameters' leaves, constants and temporaries); at run time
// GpuThunkContext::buffer(id) is that value's device memory for this run.
//
// Thunks are made at compile time from an HLO instruction and the value ids
// of its operands' array leaves and its result's array leaves
// (GpuThunkValues). Initialize() runs once per executable with the device
// (load PTX, create library handles and plans); Execute() enqueues the work
// on the context's stream and must not block on it, except where a thunk
// needs a value on the host (a loop's predicate). Execute() may run from
// several threads at once, each with its own context (a run's stream and
// buffers): whatever a thunk mutates is guarded or per stream.
//
// The kinds (each in its own file): kernels compiled from fusions
// (ptx_compiler.h), device copies, control flow, custom calls in XLA's
// convention, library calls (cuBLAS, cuDNN, cuFFT) and Axle's own kernels
// for sort, scatter and the rest.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_THUNK_H_
#define AXLE_GPU_GPU_THUNK_H_

#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/executable.h"

namespace axle {
class HloInstruction;
}  // namespace axle

namespace axle::gpu {

// The value ids a thunk reads and writes: every array leaf of each operand
// in operand order (pre-order within a tuple operand), then every array
// leaf of the result (pre-order).
struct GpuRngRunState;  // rng_thunk.h

struct GpuThunkValues {
  std::vector<int64_t> operands;
  std::vector<int64_t> outputs;
};

// InvalidArgument "CUDA: <op> <name>: expected the value ids of <operands>
// operand(s) and <outputs> result(s), got <m> and <n>" unless `values` has
// that many of each: what every thunk factory checks first.
absl::Status CheckThunkValues(const HloInstruction& instruction, const GpuThunkValues& values,
                              size_t operands, size_t outputs);

struct GpuThunkContext {
  const CudaDevice* device = nullptr;
  // The run's stream: every thunk enqueues its work here, in order.
  CudaStream* stream = nullptr;
  const ExecutableRunOptions* run_options = nullptr;
  // Device memory of each value id in this run.
  absl::Span<const se::DeviceMemoryBase> buffers;
  // The thunk's scratch memory (GpuThunk::scratch_bytes(), 256-byte aligned,
  // valid while its work runs on the stream), or null when it needs none.
  se::DeviceMemoryBase scratch;
  // The run's rng engine and rng-get-and-update-state counter (one per run,
  // shared by every copy of the context), or null in contexts that run no
  // rng thunk.
  GpuRngRunState* rng = nullptr;

  const se::DeviceMemoryBase& buffer(int64_t id) const { return buffers[id]; }
  CUdeviceptr address(int64_t id) const { return DevicePointer(buffers[id]); }
};

class GpuThunk {
 public:
  explicit GpuThunk(std::string name) : name_(std::move(name)) {}
  virtual ~GpuThunk() = default;
  GpuThunk(const GpuThunk&) = delete;
  GpuThunk& operator=(const GpuThunk&) = delete;

  // The HLO instruction it implements (errors and dumps name it).
  const std::string& name() const { return name_; }

  // Once, before the first run, with the device the executable runs on
  // (load modules, create handles and plans). The device's context is
  // current.
  virtual absl::Status Initialize(const CudaDevice& device) {
    (void)device;
    return absl::OkStatus();
  }
  // Enqueues the work on context.stream. Errors name the instruction.
  virtual absl::Status Execute(const GpuThunkContext& context) const = 0;

  // The values it reads and writes (buffer assignment's live ranges).
  virtual GpuThunkValues buffer_uses() const = 0;
  // Device scratch memory it needs while it runs (a library's workspace).
  virtual int64_t scratch_bytes() const { return 0; }
  // Pairs (operand value, output value) that Execute computes correctly
  // also when the two share memory (it then skips copying the operand and
  // writes only what changes): the CUDA backend's hook for the shared
  // in-place rule (hlo/analysis/in_place_sharing.h), which lets them share
  // when the operand is dead after the thunk. None unless a thunk says so.
  virtual std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const { return {}; }

  // Whether Execute may be recorded into a CUDA graph by stream capture
  // (gpu_graph.h) and the graph replayed in later runs whose buffers (and
  // scratch) have the same addresses: it only enqueues work on the stream
  // (kernels, copies, memsets, library calls that capture), never reads to
  // the host or synchronizes, and what it enqueues depends on nothing but
  // the buffers' addresses. False unless a thunk says so.
  virtual bool CapturableInGraph() const { return false; }

 private:
  std::string name_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_THUNK_H_
