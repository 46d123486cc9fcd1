//===- gpu_executable.h - Programs compiled for a CUDA device --------------===//
//
// A GpuExecutable runs a GpuProgram (gpu_program.h) on one CUDA device.
// At creation it initializes every thunk (loads the kernels' PTX, library
// handles) and uploads the constants once. Each run:
//   - takes a CUDA stream and a temporaries arena from the executable's
//     pools (a new one when all are busy, so concurrent runs each have
//     their own; both are kept for the next runs);
//   - enqueues every thunk on the stream in order, each launch checked
//     (loops and conditionals read their predicate on the host); runs of
//     kernels and copies are recorded once into CUDA graphs and replayed
//     (gpu_graph.h; AXLE_GPU_GRAPHS=0 turns that off), each run's graphs
//     kept with its stream and arena;
//   - copies the root's leaves into the result buffers (a temporary that is
//     exactly one result leaf, whose buffer no argument holds, is written
//     there directly instead);
//   - synchronizes the stream before returning, so the run's errors are
//     its own and the caller may free or reuse every buffer at once (no
//     free needs ordering on the stream).
// With AXLE_PROFILE=1 when it is made, every segment a run executes (a
// graph or a thunk) is timed with CUDA events, and the table printed to
// stderr when the executable is destroyed (GpuProfile). The first run on
// each stream (it records the graphs and pays the libraries' and the
// driver's first calls) is left out of the table and reported on a line of
// its own, unless no other run was timed.
// The temporaries (and each thunk's scratch memory) are laid out in the
// arena by the shared buffer assignment (axle/hlo/analysis/buffer_assignment.h)
// over the thunks' uses, as the cpu executable does.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_EXECUTABLE_H_
#define AXLE_GPU_GPU_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/gpu_graph.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/runtime/executable.h"

namespace axle::gpu {

// Where a program's temporaries and each top-level thunk's scratch memory
// live in a run's arena: logical buffers (temporaries, then scratch)
// packed by the shared buffer assignment over their live ranges (a loop or
// conditional is one step: what its sequences touch lives throughout it;
// result leaves live to the end), offsets multiples of 256 bytes.
struct GpuBufferLayout {
  std::unique_ptr<const BufferAssignment> assignment;
  std::vector<int64_t> temporary_offsets;
  std::vector<int64_t> scratch_offsets;  // per top-level thunk, or -1
  int64_t arena_size = 0;
};
GpuBufferLayout LayOutGpuBuffers(const GpuProgram& program);

class GpuExecutable : public Executable {
 public:
  // Lays out the buffers, initializes the thunks on `device` and uploads
  // the constants through `allocator` (which must outlive the executable).
  static absl::StatusOr<std::unique_ptr<GpuExecutable>> Create(
      std::shared_ptr<const HloModule> module, const se::Platform* platform,
      const CudaDevice& device, se::DeviceMemoryAllocator* allocator, GpuProgram program);
  ~GpuExecutable() override;

  const GpuProgram& program() const { return program_; }
  int64_t arena_size_bytes() const { return arena_size_; }
  // Arenas and streams made so far (one per run that found none free).
  int64_t arenas_allocated() const { return arenas_allocated_.load(); }
  const BufferAssignment& buffer_assignment() const { return *assignment_; }
  // Which thunk runs are recorded into CUDA graphs (gpu_graph.h).
  const GpuGraphPlan& graph_plan() const { return graph_plan_; }
  // Graphs recorded (first or for new addresses) and launched by the runs
  // so far, over the run resources kept in the pool.
  int64_t graphs_recorded() const;
  int64_t graphs_launched() const;
  // AXLE_PROFILE's table so far ("" when profiling is off).
  std::string ProfileReport() const;

 protected:
  absl::Status ExecuteOnBuffers(const ExecutableRunOptions& options,
                                absl::Span<const ShapedBuffer* const> arguments,
                                const ShapedBuffer& result) const override;

 private:
  GpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                const CudaDevice& device, se::DeviceMemoryAllocator* allocator, GpuProgram program);
  absl::Status Initialize();

  // One run's stream and arena, and the graphs recorded with their
  // addresses and the profile's events (destroyed after the stream, which
  // waits for its work).
  struct RunResources {
    std::unique_ptr<GpuGraphCache> graphs;
    std::unique_ptr<GpuRunTimer> timer;
    std::unique_ptr<CudaStream> stream;
    se::OwningDeviceMemory arena;
    int64_t timed_runs = 0;  // AXLE_PROFILE: runs collected so far
  };
  absl::StatusOr<std::unique_ptr<RunResources>> Acquire() const;
  void Release(std::unique_ptr<RunResources> resources) const;

  const CudaDevice& device_;
  se::DeviceMemoryAllocator* allocator_;
  GpuProgram program_;
  std::vector<se::OwningDeviceMemory> constants_;
  std::unique_ptr<const BufferAssignment> assignment_;
  std::vector<int64_t> temporary_offsets_;
  std::vector<int64_t> scratch_offsets_;
  // For each temporary: the index into program_.result_leaves of the one
  // result leaf it is, or -1.
  std::vector<int64_t> temporary_result_leaf_;
  int64_t arena_size_ = 0;
  GpuGraphPlan graph_plan_;
  std::unique_ptr<GpuProfile> profile_;  // AXLE_PROFILE
  // The first run on each run resources' stream (AXLE_PROFILE).
  std::unique_ptr<GpuProfile> first_runs_profile_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunResources>> free_resources_;
  mutable std::atomic<int64_t> arenas_allocated_{0};
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_EXECUTABLE_H_
