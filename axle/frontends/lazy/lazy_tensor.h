//===- lazy_tensor.h - A tensor whose value is data or pending IR ----------===//
//
// torch-xla's XLATensor, without PyTorch: the state behind one device
// tensor. Its value is either computed (DeviceData) or pending (an IR Value
// whose graph computes it). An operation reads its operands' values
// (GetIrValue: the pending IR, else a device-data leaf of the data) and
// makes a tensor of a new IR value; an in-place operation swaps the
// tensor's value (SetIrValue).
//
// Every tensor alive is known (one process-wide registry): SyncLiveTensors()
// -- the step marker, mark_step() -- computes the pending values of all of
// them in one graph execution and makes them data, so the next step's
// graph starts from data leaves again. Sync(tensors) does the same for some
// tensors (reading a value back: ToLiteral).
//
// A view's tensor (the torch layer's views: its value is another live
// tensor's, taken through view steps) is marked MarkViewOfBase(). The step
// marker leaves such a pending value out and computes the base instead: a
// weight's gradient is the transpose of a matmul's result, and computing
// both would make the step write the gradient twice. The view's owner
// recomputes it from the base's new value when it next reads it (the
// base's version changed).
//
// Counters: CreateTensor, DestroyTensor, MarkStep.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_LAZY_TENSOR_H_
#define AXLE_FRONTENDS_LAZY_LAZY_TENSOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/frontends/lazy/ir.h"

namespace axle::lazy {

class LazyTensor : public std::enable_shared_from_this<LazyTensor> {
  struct Private {};  // FromData/FromIr/FromLiteral make tensors

 public:
  static std::shared_ptr<LazyTensor> FromData(std::shared_ptr<DeviceData> data);
  static std::shared_ptr<LazyTensor> FromIr(Value value);
  // A host value, transferred to the device when first needed.
  static std::shared_ptr<LazyTensor> FromLiteral(Literal literal);
  ~LazyTensor();
  LazyTensor(const LazyTensor&) = delete;
  LazyTensor& operator=(const LazyTensor&) = delete;

  // The value is `data`, or the pending `ir` when `data` is null.
  LazyTensor(Private, std::shared_ptr<DeviceData> data, Value ir);

  int64_t id() const { return id_; }
  const Shape& shape() const;
  // Changes whenever the value does (an in-place operation, new data, a
  // sync): a view compares it with the version it last read its base at.
  uint64_t version() const;

  // The value as IR: the pending value, or a leaf of the data (the same
  // leaf each time, until the value changes).
  Value GetIrValue();
  // The same, with the version it is the value of.
  Value GetIrValue(uint64_t* version);
  // Replaces the value with pending IR (an in-place operation). The shape
  // must stay the same (checked by the caller). Returns the new version.
  uint64_t SetIrValue(Value value);
  // Replaces the value with computed data.
  void SetData(std::shared_ptr<DeviceData> data);
  // Marks the pending value as a view of another live tensor's, which
  // SyncLiveTensors computes instead (above). Replacing the value
  // (SetIrValue, SetData, a sync of this tensor) clears the mark.
  void MarkViewOfBase();
  bool is_view_of_base() const;

  bool has_pending_ir() const;
  // The data, or null while the value is pending.
  std::shared_ptr<DeviceData> data() const;

  // The value on the host; computes it first if it is pending.
  absl::StatusOr<Literal> ToLiteral();

 private:
  friend absl::Status SyncAndDonate(absl::Span<const std::shared_ptr<LazyTensor>> tensors,
                                    const std::function<bool(const DeviceData&)>& may_donate);
  friend absl::Status SyncLiveTensors();
  friend int64_t LiveTensorCount();

  const int64_t id_;
  mutable std::mutex mutex_;
  const Shape* shape_;  // interned
  std::shared_ptr<DeviceData> data_;
  Value ir_;    // pending value, when set
  Value leaf_;  // the device_data leaf of data_, once made
  uint64_t version_ = 0;
  bool view_of_base_ = false;  // MarkViewOfBase's
  // The registry of live tensors: a list in creation order (lazy_tensor.cc).
  LazyTensor* live_prev_ = nullptr;
  LazyTensor* live_next_ = nullptr;
};

// Computes the pending values of `tensors` in one graph execution.
absl::Status Sync(absl::Span<const std::shared_ptr<LazyTensor>> tensors);
// The same, donating the buffers `may_donate` says die with it
// (GraphExecutor::Execute).
absl::Status SyncAndDonate(absl::Span<const std::shared_ptr<LazyTensor>> tensors,
                           const std::function<bool(const DeviceData&)>& may_donate);
// The step marker: computes the pending value of every live tensor but the
// views of other live tensors (MarkViewOfBase; counts MarkStep), donating
// the buffers that no live tensor holds any more (the old values of tensors
// updated in place): results are written in place.
absl::Status SyncLiveTensors();
// How many tensors are alive.
int64_t LiveTensorCount();

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_LAZY_TENSOR_H_
