//===- executable.h - Compiled programs and the compilers that make them ---===//
//
// The backend-neutral half of running a program:
//
//   ExecutableBuildOptions / ExecutableRunOptions   XLA's option classes.
//   Executable   a compiled module. Execute() checks the arguments, sets up
//                the result buffers, applies input/output aliasing (donation
//                and copy protection, see execution_input.h) and calls the
//                backend's ExecuteOnBuffers. ExecuteAsyncOnStream() does the
//                checks and allocations now and enqueues the copies and the
//                run on a stream (stream.h). Executables are immutable once
//                built: one may run from many threads at once.
//   Compiler     turns an HloModule into an Executable for one platform.
//
// Compile-time checks shared by every backend (CheckModuleForPlatform):
// the module verifies; input_output_alias and buffer_donor entries name
// existing parameters and indices, alias outputs and parameters of the same
// array shape, and no parameter buffer is aliased to two outputs; every
// custom-call target is registered for the platform (a target registered
// only for "CUDA" is an error saying so).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_EXECUTABLE_H_
#define AXLE_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/execution_input.h"
#include "axle/runtime/platform.h"
#include "axle/runtime/shaped_buffer.h"
#include "axle/runtime/stream.h"

namespace axle {

class Communicator;              // axle/collectives/communicator.h
class HloCustomCallInstruction;  // axle/hlo/ir/hlo_instructions.h

// This run's place among the devices of a multi-device run (XLA's
// ExecutableRunOptions carry the device assignment and the collectives):
// device (replica_id, partition_id) of a replica_count x partition_count
// grid, whose flattened id replica_id * partition_count + partition_id is
// its rank in `communicator`. A module compiled for several devices
// (HloModuleConfig replica_count * num_partitions > 1) runs its
// collectives through the communicator and needs one.
struct RunParticipant {
  int64_t replica_count = 1;
  int64_t partition_count = 1;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  Communicator* communicator = nullptr;  // not owned
};

class ExecutableBuildOptions {
 public:
  ExecutableBuildOptions& set_device_ordinal(int device_ordinal) {
    device_ordinal_ = device_ordinal;
    return *this;
  }
  int device_ordinal() const { return device_ordinal_; }

  // The layout the result should have (its shape must match the program's).
  ExecutableBuildOptions& set_result_layout(const Shape& shape) {
    result_layout_ = shape;
    return *this;
  }
  const Shape* result_layout() const { return result_layout_ ? &*result_layout_ : nullptr; }

  ExecutableBuildOptions& set_num_replicas(int n) {
    num_replicas_ = n;
    return *this;
  }
  int num_replicas() const { return num_replicas_; }
  ExecutableBuildOptions& set_num_partitions(int n) {
    num_partitions_ = n;
    return *this;
  }
  int num_partitions() const { return num_partitions_; }

  // Allocator for compile-time allocations (unused on host platforms).
  ExecutableBuildOptions& set_device_allocator(se::DeviceMemoryAllocator* allocator) {
    device_allocator_ = allocator;
    return *this;
  }
  se::DeviceMemoryAllocator* device_allocator() const { return device_allocator_; }

  // Skip the HLO optimization passes: the module is compiled as given (the
  // cpu backend runs only what codegen needs; its fusions are kept).
  ExecutableBuildOptions& set_run_backend_only(bool value) {
    run_backend_only_ = value;
    return *this;
  }
  bool run_backend_only() const { return run_backend_only_; }

  std::string ToString() const;

 private:
  int device_ordinal_ = -1;
  std::optional<Shape> result_layout_;
  int num_replicas_ = 1;
  int num_partitions_ = 1;
  se::DeviceMemoryAllocator* device_allocator_ = nullptr;
  bool run_backend_only_ = false;
};

class ExecutableRunOptions {
 public:
  // Where result (and copy-protection) buffers come from; default: the
  // platform's allocator (se::Platform::memory_allocator()).
  ExecutableRunOptions& set_allocator(se::DeviceMemoryAllocator* allocator) {
    allocator_ = allocator;
    return *this;
  }
  se::DeviceMemoryAllocator* allocator() const { return allocator_; }
  ExecutableRunOptions& set_device_ordinal(int device_ordinal) {
    device_ordinal_ = device_ordinal;
    return *this;
  }
  int device_ordinal() const { return device_ordinal_; }
  // Seed for rng ops (0: the executable's default).
  ExecutableRunOptions& set_rng_seed(int seed) {
    rng_seed_ = seed;
    return *this;
  }
  int rng_seed() const { return rng_seed_; }
  ExecutableRunOptions& set_run_id(int64_t run_id) {
    run_id_ = run_id;
    return *this;
  }
  int64_t run_id() const { return run_id_; }
  // The stream RunAsync enqueues on (and Run waits for); default: the
  // platform's stream of the device (se::Platform::DefaultStream).
  ExecutableRunOptions& set_stream(se::Stream* stream) {
    stream_ = stream;
    return *this;
  }
  se::Stream* stream() const { return stream_; }
  // At most this many threads of the process's intra-op pool
  // (axle/base/thread_pool.h) run this execution's kernels; <= 0: all.
  ExecutableRunOptions& set_intra_op_threads(int threads) {
    intra_op_threads_ = threads;
    return *this;
  }
  int intra_op_threads() const { return intra_op_threads_; }
  // The device this run is, and the communicator its collectives use
  // (default: the only device, no communicator).
  ExecutableRunOptions& set_participant(const RunParticipant& participant) {
    participant_ = participant;
    return *this;
  }
  const RunParticipant& participant() const { return participant_; }

 private:
  se::DeviceMemoryAllocator* allocator_ = nullptr;
  int device_ordinal_ = -1;
  int rng_seed_ = 0;
  int64_t run_id_ = 0;
  se::Stream* stream_ = nullptr;
  int intra_op_threads_ = 0;
  RunParticipant participant_;
};

class Executable : public std::enable_shared_from_this<Executable> {
 public:
  Executable(std::shared_ptr<const HloModule> module, const se::Platform* platform);
  virtual ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  const HloModule& module() const { return *module_; }
  std::shared_ptr<const HloModule> shared_module() const { return module_; }
  const se::Platform* platform() const { return platform_; }
  // Parameter shapes (with layouts) and result shape of the entry.
  const std::vector<Shape>& parameter_shapes() const { return parameter_shapes_; }
  const Shape& result_shape() const { return result_->shape(); }

  // Runs the program. `arguments` are consumed: owned buffers are donated
  // (reused for aliased outputs, returned in ConsumeToBeReleased otherwise).
  // On failure no output is produced and owned argument buffers are freed.
  absl::StatusOr<ExecutionOutput> Execute(const ExecutableRunOptions& options,
                                          std::vector<ExecutionInput> arguments) const;
  // Runs on lent buffers (no donation; aliased inputs are copy protected).
  absl::StatusOr<ScopedShapedBuffer> Execute(const ExecutableRunOptions& options,
                                             absl::Span<const ShapedBuffer* const> arguments) const;

  // Checks the arguments and allocates the result now (errors are returned
  // now), then enqueues the copy-protection copies and the run on `stream`
  // and returns the result, which holds the values once the stream has run
  // that far. An error the run raises is the stream's
  // (Stream::BlockHostUntilDone). The run owns the donated buffers (freed
  // after it; ConsumeToBeReleased() is empty) and keeps the executable
  // alive when a shared_ptr owns it; lent buffers must stay allocated until
  // it is done (the platform's allocator sees to that: see device_memory.h).
  absl::StatusOr<ExecutionOutput> ExecuteAsyncOnStream(const ExecutableRunOptions& options,
                                                       se::Stream* stream,
                                                       std::vector<ExecutionInput> arguments) const;

  // A lighter synchronous run for a program whose parameters are arrays and
  // whose result is a tuple of arrays (what a traced graph is; XLA has no
  // such entry point): no ShapedBuffer, ExecutionInput or Shape copy per
  // argument or result element. `arguments[i]` is parameter i's buffer,
  // owned (donated: an output aliased to it is written in place and
  // returned at its address; freed after the run when none is) or lent (an
  // aliased output is copy protected; must-alias is an error). `results` is
  // set to the result elements' buffers, owned by the caller (null for an
  // element of zero bytes). Checks the argument count and that each buffer
  // holds its parameter's bytes (buffers carry no shape); InvalidArgument
  // when the program's signature is not arrays to a tuple of arrays. On
  // failure `results` is empty and donated buffers are freed.
  absl::Status ExecuteArrays(const ExecutableRunOptions& options,
                             absl::Span<MaybeOwningDeviceMemory> arguments,
                             std::vector<se::OwningDeviceMemory>* results) const;

 protected:
  // The backend's part. `arguments[i]` holds parameter i's buffers; `result`
  // has every buffer allocated, its tuple index tables written, and each
  // aliased leaf is the very buffer of its parameter leaf (in `arguments`),
  // so writing the output there updates the argument in place. May be called
  // from several threads at once.
  virtual absl::Status ExecuteOnBuffers(const ExecutableRunOptions& options,
                                        absl::Span<const ShapedBuffer* const> arguments,
                                        const ShapedBuffer& result) const = 0;
  // ExecuteArrays' backend part: `arguments[i]` is parameter i's buffer,
  // `results[i]` the buffer of result element i (allocated; an aliased
  // element is its donated argument's buffer). The default wraps them in
  // ShapedBuffers (with a result index table) and calls ExecuteOnBuffers.
  virtual absl::Status ExecuteOnArrays(const ExecutableRunOptions& options,
                                       absl::Span<const se::DeviceMemoryBase> arguments,
                                       absl::Span<const se::DeviceMemoryBase> results) const;

 private:
  struct PreparedRun;
  // The checks and allocations both Execute forms share.
  absl::StatusOr<ExecutionOutput> Prepare(const ExecutableRunOptions& options,
                                          std::vector<ExecutionInput> arguments,
                                          PreparedRun* run) const;

  std::shared_ptr<const HloModule> module_;
  const se::Platform* platform_;
  std::vector<Shape> parameter_shapes_;
  // The result's shape, shared by every run's result buffers.
  std::shared_ptr<const IndexedShape> result_;
  // ExecuteArrays' view of the signature, when it is arrays to a tuple of
  // arrays: each parameter's and result element's bytes, and the parameter
  // each result element is aliased to (-1: none) and whether it must be.
  bool arrays_only_ = false;
  std::vector<int64_t> parameter_bytes_;
  std::vector<int64_t> result_bytes_;
  std::vector<int64_t> result_alias_;
  std::vector<bool> result_must_alias_;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Compiles `module` (already checked by CheckModuleForPlatform).
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) = 0;
  // Whether the compiler rewrites `custom_call` into ops it runs, so that no
  // target need be registered for it (CheckModuleForPlatform asks; the CUDA
  // compiler computes jaxlib's CPU cholesky and trsm calls as HLO ops).
  virtual bool ComputesCustomCall(const HloCustomCallInstruction& custom_call) const {
    return false;
  }
};

// The compile-time checks described at the top of this file.
absl::Status CheckModuleForPlatform(const HloModule& module, const se::Platform& platform);

}  // namespace axle

#endif  // AXLE_RUNTIME_EXECUTABLE_H_
