//===- transfer_manager.h - Literals to and from a platform's devices -----===//
//
// XLA's TransferManager: moves literals into and out of a platform's device
// buffers, ordered with the work on a stream. One per platform
// (se::Platform::transfer_manager(), or GetForPlatform).
//
//   TransferLiteralToDevice    writes a literal into existing buffers after
//                              the work enqueued on the stream before it;
//                              returns when written.
//   TransferLiteralFromDevice  waits for the stream (an error its work
//                              raised is returned here, as XLA does), then
//                              reads.
//
// Host platforms' buffers are host memory (transfer.h does the copying). A
// platform whose buffers are not (the `cuda` platform) subclasses this one:
// the ordering stays, the allocation, writing and reading are its own.
// Neither may be called from the stream's own work (FailedPrecondition).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_TRANSFER_MANAGER_H_
#define AXLE_RUNTIME_TRANSFER_MANAGER_H_

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/shaped_buffer.h"
#include "axle/runtime/stream.h"

namespace axle {

class TransferManager {
 public:
  explicit TransferManager(const se::Platform* platform) : platform_(platform) {}
  virtual ~TransferManager() = default;

  static absl::StatusOr<TransferManager*> GetForPlatform(const se::Platform* platform);

  const se::Platform* platform() const { return platform_; }

  // Buffers for a value of `on_host_shape` (array leaves in its layout, or
  // the default one), tuple index tables written.
  virtual absl::StatusOr<ScopedShapedBuffer> AllocateScopedShapedBuffer(
      const Shape& on_host_shape, se::DeviceMemoryAllocator* allocator, int device_ordinal);

  // `device_buffer` must be valid and of the literal's shape
  // (InvalidArgument / FailedPrecondition otherwise).
  absl::Status TransferLiteralToDevice(se::Stream* stream, const Literal& literal,
                                       const ShapedBuffer& device_buffer);
  absl::StatusOr<Literal> TransferLiteralFromDevice(se::Stream* stream,
                                                    const ShapedBuffer& device_buffer);

  // Writes `literal` into buffers no work on any stream can touch yet (just
  // allocated): now, without waiting for the stream.
  absl::Status TransferLiteralToFreshBuffer(const Literal& literal,
                                            const ShapedBuffer& device_buffer);

 protected:
  // The copies themselves, on the calling thread, once ordered: `buffer`
  // is valid and of the literal's shape. Host memory by default.
  virtual absl::Status WriteLiteral(const Literal& literal, const ShapedBuffer& buffer);
  virtual absl::StatusOr<Literal> ReadLiteral(const ShapedBuffer& buffer);

 private:
  absl::Status CheckStream(se::Stream* stream, const ShapedBuffer& device_buffer) const;

  const se::Platform* platform_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_TRANSFER_MANAGER_H_
