//===- local_client.h - XLA's in-process client API ------------------------===//
//
// ClientLibrary::GetOrCreateLocalClient(platform) gives the LocalClient of a
// platform (one per platform, process-wide). A LocalClient compiles
// XlaComputations into LocalExecutables and moves values between host
// literals and device buffers:
//
//   auto client = ClientLibrary::GetOrCreateLocalClient(platform);
//   auto executables = (*client)->Compile(computation, {&arg_shape}, {});
//   auto arg = (*client)->LiteralToShapedBuffer(literal, 0);
//   auto result = executables->front()->Run({&*arg}, ExecutableRunOptions());
//   auto literal = (*client)->ShapedBufferToLiteral(*result);
//
// Run/RunAsync on ShapedBuffers lend the arguments; on ExecutionInputs they
// may donate them (see execution_input.h).
//
// RunAsync is asynchronous, as XLA's is: it checks the arguments and
// allocates the result, enqueues the run on the stream (the run options'
// stream, else the platform's stream of the device: a worker thread with an
// ordered queue, stream.h) and returns. The result holds the values once
// the run is done: ShapedBufferToLiteral waits for the stream, or call
// stream->BlockHostUntilDone(). An error the run raises is returned by that
// next synchronization (and by the next Run), as XLA does. Run is
// synchronous: it waits for the stream's earlier work (returning its
// error, if any), then runs on the calling thread; several threads may Run
// one executable at once. Runs enqueued on one stream run in order, so a
// run may take the result of an earlier RunAsync as its argument.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_LOCAL_CLIENT_H_
#define AXLE_RUNTIME_LOCAL_CLIENT_H_

#include <initializer_list>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/builder/xla_computation.h"
#include "axle/core/literal.h"
#include "axle/runtime/executable.h"
#include "axle/runtime/platform.h"
#include "axle/runtime/shaped_buffer.h"
#include "axle/runtime/stream.h"
#include "axle/runtime/transfer_manager.h"

namespace axle {

class LocalExecutable {
 public:
  LocalExecutable(std::unique_ptr<Executable> executable, se::DeviceMemoryAllocator* allocator,
                  ExecutableBuildOptions build_options);

  absl::StatusOr<ScopedShapedBuffer> Run(absl::Span<const ShapedBuffer* const> arguments,
                                         ExecutableRunOptions run_options) const;
  absl::StatusOr<ExecutionOutput> Run(std::vector<ExecutionInput> arguments,
                                      ExecutableRunOptions run_options) const;
  absl::StatusOr<ScopedShapedBuffer> RunAsync(absl::Span<const ShapedBuffer* const> arguments,
                                              ExecutableRunOptions run_options) const;
  // `Run({&a, &b}, options)`: a braced list of buffers would otherwise also
  // match std::vector's iterator-pair constructor.
  absl::StatusOr<ScopedShapedBuffer> Run(std::initializer_list<const ShapedBuffer*> arguments,
                                         ExecutableRunOptions run_options) const {
    return Run(absl::Span<const ShapedBuffer* const>(arguments.begin(), arguments.size()),
               std::move(run_options));
  }
  absl::StatusOr<ScopedShapedBuffer> RunAsync(std::initializer_list<const ShapedBuffer*> arguments,
                                              ExecutableRunOptions run_options) const {
    return RunAsync(absl::Span<const ShapedBuffer* const>(arguments.begin(), arguments.size()),
                    std::move(run_options));
  }
  absl::StatusOr<ExecutionOutput> RunAsync(std::vector<ExecutionInput> arguments,
                                           ExecutableRunOptions run_options) const;

  // Executable::ExecuteArrays after the stream's earlier runs (a lighter
  // run for arrays to a tuple of arrays; not in XLA's API).
  absl::Status RunArrays(absl::Span<MaybeOwningDeviceMemory> arguments,
                         ExecutableRunOptions run_options,
                         std::vector<se::OwningDeviceMemory>* results) const;

  Executable* executable() const { return executable_.get(); }
  const ExecutableBuildOptions& build_options() const { return build_options_; }

 private:
  ExecutableRunOptions Complete(ExecutableRunOptions options) const;
  // The stream a run with `options` (completed) uses.
  absl::StatusOr<se::Stream*> StreamFor(const ExecutableRunOptions& options) const;

  // Shared with the runs in flight, which keep it alive.
  std::shared_ptr<Executable> executable_;
  se::DeviceMemoryAllocator* allocator_;
  ExecutableBuildOptions build_options_;
};

// What XLA's LocalClient::backend() offers users: the platform, its
// allocator, its transfer manager and its streams.
class Backend {
 public:
  Backend(se::Platform* platform, se::DeviceMemoryAllocator* allocator)
      : platform_(platform), allocator_(allocator) {}
  se::Platform* platform() const { return platform_; }
  se::DeviceMemoryAllocator* memory_allocator() const { return allocator_; }
  TransferManager* transfer_manager() const { return platform_->transfer_manager(); }
  // The device's stream (XLA borrows one from a pool; host platforms have
  // one per device).
  absl::StatusOr<se::Stream*> BorrowStream(int device_ordinal) const {
    return platform_->DefaultStream(device_ordinal);
  }
  int device_count() const { return 1; }
  int default_device_ordinal() const { return 0; }

 private:
  se::Platform* platform_;
  se::DeviceMemoryAllocator* allocator_;
};

class LocalClient {
 public:
  explicit LocalClient(se::Platform* platform);

  // One executable (XLA returns one per partition). `argument_layouts` gives
  // each parameter's shape with the layout the caller will pass; it must
  // match the program's parameter shapes.
  absl::StatusOr<std::vector<std::unique_ptr<LocalExecutable>>> Compile(
      const XlaComputation& computation, absl::Span<const Shape* const> argument_layouts,
      const ExecutableBuildOptions& options);
  // Axle: compiles a module (e.g. parsed from HLO text) with its own
  // parameter layouts.
  absl::StatusOr<std::unique_ptr<LocalExecutable>> Compile(std::unique_ptr<HloModule> module,
                                                           const ExecutableBuildOptions& options);

  // Copies a literal into fresh device buffers (array leaves in the
  // literal's layout, or the default one), through the platform's transfer
  // manager.
  absl::StatusOr<ScopedShapedBuffer> LiteralToShapedBuffer(
      const Literal& literal, int device_ordinal, se::DeviceMemoryAllocator* allocator = nullptr);
  // Reads device buffers back once the device's stream is done (an error a
  // RunAsync raised is returned here); an invalid (donated) buffer is an
  // error.
  absl::StatusOr<Literal> ShapedBufferToLiteral(const ShapedBuffer& shaped_buffer);

  // XLA's infeed and outfeed (axle/core/host_feed.h). TransferToInfeedLocal
  // queues a copy of `literal` for the infeed ops of device
  // `device_ordinal` (in a multi-device run: the participant's flattened
  // id), which take values in the order they were queued.
  // TransferFromOutfeedLocal waits (at most AXLE_FEED_TIMEOUT, then
  // DeadlineExceeded) for the device's oldest outfeed value and moves it
  // into `literal`, whose shape it must have (else InvalidArgument; the
  // value is consumed).
  absl::Status TransferToInfeedLocal(const Literal& literal, int device_ordinal);
  absl::Status TransferFromOutfeedLocal(int device_ordinal, Literal* literal);
  // XLA's Client::TransferToInfeed / TransferFromOutfeed spellings: replica
  // `replica_id` is device `replica_id` (one partition).
  absl::Status TransferToInfeed(const Literal& literal, int64_t replica_id = 0) {
    return TransferToInfeedLocal(literal, static_cast<int>(replica_id));
  }
  absl::StatusOr<Literal> TransferFromOutfeed(const Shape* shape_with_layout,
                                              int64_t replica_id = 0);

  se::Platform* platform() const { return platform_; }
  se::DeviceMemoryAllocator* memory_allocator() const { return allocator_; }
  const Backend& backend() const { return backend_; }
  int default_device_ordinal() const { return 0; }
  int device_count() const { return 1; }

 private:
  se::Platform* platform_;
  se::DeviceMemoryAllocator* allocator_;
  Backend backend_;
};

struct LocalClientOptions {
  se::Platform* platform = nullptr;
  int number_of_replicas = 1;
  int intra_op_parallelism_threads = -1;
};

class ClientLibrary {
 public:
  // The client of `platform` (null: the default platform).
  static absl::StatusOr<LocalClient*> GetOrCreateLocalClient(se::Platform* platform = nullptr);
  static absl::StatusOr<LocalClient*> GetOrCreateLocalClient(const LocalClientOptions& options);
  // CHECK-fails when there is no default platform.
  static LocalClient* LocalClientOrDie();
};

}  // namespace axle

#endif  // AXLE_RUNTIME_LOCAL_CLIENT_H_
