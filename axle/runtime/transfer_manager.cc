// The host platforms' transfer manager (transfer_manager.h): copies through
// transfer.h, ordered on the device's stream.
#include "axle/runtime/transfer_manager.h"

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/runtime/platform.h"
#include "axle/runtime/transfer.h"

namespace axle {

absl::StatusOr<TransferManager*> TransferManager::GetForPlatform(const se::Platform* platform) {
  if (platform == nullptr) return absl::InvalidArgumentError("TransferManager: platform is null");
  return platform->transfer_manager();
}

absl::StatusOr<ScopedShapedBuffer> TransferManager::AllocateScopedShapedBuffer(
    const Shape& on_host_shape, se::DeviceMemoryAllocator* allocator, int device_ordinal) {
  return AllocateDeviceBuffers(on_host_shape, allocator, device_ordinal);
}

absl::Status TransferManager::CheckStream(se::Stream* stream,
                                          const ShapedBuffer& device_buffer) const {
  if (stream == nullptr) return absl::InvalidArgumentError("transfer: the stream is null");
  if (stream->platform() != platform_ ||
      stream->device_ordinal() != device_buffer.device_ordinal()) {
    return absl::InvalidArgumentError(
        absl::StrCat("transfer: a buffer on device ", device_buffer.device_ordinal(),
                     " of platform '", platform_->Name(), "' through a stream of device ",
                     stream->device_ordinal(), " of platform '", stream->platform()->Name(), "'"));
  }
  if (stream->OnWorkerThread()) {
    return absl::FailedPreconditionError(
        "transfer: called from the stream's own work (it would wait for itself)");
  }
  return absl::OkStatus();
}

absl::Status TransferManager::TransferLiteralToDevice(se::Stream* stream, const Literal& literal,
                                                      const ShapedBuffer& device_buffer) {
  AXLE_RETURN_IF_ERROR(CheckStream(stream, device_buffer));
  AXLE_RETURN_IF_ERROR(device_buffer.CheckValid("transfer destination"));
  if (!ShapeUtil::Compatible(literal.shape(), device_buffer.on_device_shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transfer: a literal of shape ", literal.shape().ToString(false),
        " into device buffers of shape ", device_buffer.on_device_shape().ToString(false)));
  }
  // Nothing enqueued can touch the buffers: write them now, on this thread.
  if (stream->IsIdle()) return WriteLiteral(literal, device_buffer);
  // Otherwise after the work before; this transfer's status is this
  // caller's, not the stream's.
  absl::Status status;
  se::Event written;
  AXLE_RETURN_IF_ERROR(
      stream->DoHostCallback([&] { status = WriteLiteral(literal, device_buffer); }));
  AXLE_RETURN_IF_ERROR(stream->RecordEvent(&written));
  written.Synchronize();
  return status;
}

absl::StatusOr<Literal> TransferManager::TransferLiteralFromDevice(
    se::Stream* stream, const ShapedBuffer& device_buffer) {
  AXLE_RETURN_IF_ERROR(CheckStream(stream, device_buffer));
  AXLE_RETURN_IF_ERROR(stream->BlockHostUntilDone());
  AXLE_RETURN_IF_ERROR(device_buffer.CheckValid("buffer"));
  return ReadLiteral(device_buffer);
}

absl::Status TransferManager::TransferLiteralToFreshBuffer(const Literal& literal,
                                                           const ShapedBuffer& device_buffer) {
  AXLE_RETURN_IF_ERROR(device_buffer.CheckValid("transfer destination"));
  return WriteLiteral(literal, device_buffer);
}

absl::Status TransferManager::WriteLiteral(const Literal& literal, const ShapedBuffer& buffer) {
  return TransferLiteralIntoBuffer(literal, buffer);
}

absl::StatusOr<Literal> TransferManager::ReadLiteral(const ShapedBuffer& buffer) {
  return axle::TransferLiteralFromDevice(buffer);
}

}  // namespace axle
