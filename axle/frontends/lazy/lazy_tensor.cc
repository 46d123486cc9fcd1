//===- lazy_tensor.cc - A tensor whose value is data or pending IR ---------===//
#include "axle/frontends/lazy/lazy_tensor.h"

#include <atomic>
#include <functional>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "axle/frontends/lazy/graph_executor.h"
#include "axle/frontends/lazy/metrics.h"

namespace axle::lazy {
namespace {

struct LiveTensors {
  std::mutex mutex;
  std::map<int64_t, std::weak_ptr<LazyTensor>> tensors;  // by id: creation order
};

LiveTensors& Live() {
  static auto* live = new LiveTensors();
  return *live;
}

std::atomic<int64_t> next_id{1};

}  // namespace

LazyTensor::LazyTensor(const Shape& shape) : id_(next_id++), shape_(&InternShape(shape)) {}

LazyTensor::~LazyTensor() {
  {
    LiveTensors& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.tensors.erase(id_);
  }
  static metrics::Counter* const destroyed = metrics::GetCounter("DestroyTensor");
  destroyed->Increment();
}

void LazyTensor::Register(const std::shared_ptr<LazyTensor>& tensor) {
  {
    LiveTensors& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.tensors[tensor->id_] = tensor;
  }
  static metrics::Counter* const created = metrics::GetCounter("CreateTensor");
  created->Increment();
}

std::shared_ptr<LazyTensor> LazyTensor::FromData(std::shared_ptr<DeviceData> data) {
  std::shared_ptr<LazyTensor> tensor(new LazyTensor(data->shape()));
  tensor->data_ = std::move(data);
  Register(tensor);
  return tensor;
}

std::shared_ptr<LazyTensor> LazyTensor::FromIr(Value value) {
  std::shared_ptr<LazyTensor> tensor(new LazyTensor(value.shape()));
  tensor->ir_ = std::move(value);
  Register(tensor);
  return tensor;
}

std::shared_ptr<LazyTensor> LazyTensor::FromLiteral(Literal literal) {
  return FromData(std::make_shared<DeviceData>(std::move(literal)));
}

const Shape& LazyTensor::shape() const { return *shape_; }

Value LazyTensor::GetIrValue() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ir_) return ir_;
  if (!leaf_) leaf_ = Value{Node::MakeDeviceData(data_), 0};
  return leaf_;
}

void LazyTensor::SetIrValue(Value value) {
  std::lock_guard<std::mutex> lock(mutex_);
  ir_ = std::move(value);
  data_.reset();
  leaf_ = Value();
}

void LazyTensor::SetData(std::shared_ptr<DeviceData> data) {
  std::lock_guard<std::mutex> lock(mutex_);
  data_ = std::move(data);
  ir_ = Value();
  leaf_ = Value();
}

bool LazyTensor::has_pending_ir() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<bool>(ir_);
}

std::shared_ptr<DeviceData> LazyTensor::data() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return data_;
}

absl::StatusOr<Literal> LazyTensor::ToLiteral() {
  std::shared_ptr<DeviceData> data = this->data();
  if (data == nullptr) {
    // Sync takes shared_ptrs; find ours in the registry.
    std::shared_ptr<LazyTensor> self;
    {
      std::lock_guard<std::mutex> lock(Live().mutex);
      auto it = Live().tensors.find(id_);
      if (it != Live().tensors.end()) self = it->second.lock();
    }
    if (self == nullptr) return absl::InternalError("a lazy tensor missing from the registry");
    absl::Status status = Sync({self});
    if (!status.ok()) return status;
    data = this->data();
  }
  return data->ToLiteral();
}

absl::Status Sync(absl::Span<const std::shared_ptr<LazyTensor>> tensors) {
  return SyncAndDonate(tensors, nullptr);
}

absl::Status SyncAndDonate(absl::Span<const std::shared_ptr<LazyTensor>> tensors,
                           const std::function<bool(const DeviceData&)>& may_donate) {
  std::vector<std::shared_ptr<LazyTensor>> pending;
  std::vector<Value> roots;
  for (const auto& t : tensors) {
    std::lock_guard<std::mutex> lock(t->mutex_);
    if (!t->ir_) continue;
    pending.push_back(t);
    roots.push_back(t->ir_);
  }
  if (roots.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<std::shared_ptr<DeviceData>>> results =
      GraphExecutor::Get().Execute(roots, may_donate);
  if (!results.ok()) return results.status();
  for (size_t i = 0; i < pending.size(); ++i) {
    std::lock_guard<std::mutex> lock(pending[i]->mutex_);
    // Only if no operation replaced the value meanwhile.
    if (pending[i]->ir_.node == roots[i].node && pending[i]->ir_.index == roots[i].index) {
      pending[i]->data_ = (*results)[i];
      pending[i]->ir_ = Value();
      pending[i]->leaf_ = Value();
    }
  }
  return absl::OkStatus();
}

absl::Status SyncLiveTensors() {
  metrics::IncrementCounter("MarkStep");
  std::vector<std::shared_ptr<LazyTensor>> tensors;
  {
    std::lock_guard<std::mutex> lock(Live().mutex);
    tensors.reserve(Live().tensors.size());
    for (const auto& [id, weak] : Live().tensors) {
      if (auto t = weak.lock()) tensors.push_back(std::move(t));
    }
  }
  // Every pending value is computed here, so a buffer no live tensor holds
  // as its value is read by this step's graph for the last time: donated.
  absl::flat_hash_set<const DeviceData*> held;
  held.reserve(tensors.size());
  for (const auto& t : tensors) {
    if (auto data = t->data()) held.insert(data.get());
  }
  return SyncAndDonate(tensors, [&held](const DeviceData& data) { return !held.count(&data); });
}

int64_t LiveTensorCount() {
  std::lock_guard<std::mutex> lock(Live().mutex);
  return static_cast<int64_t>(Live().tensors.size());
}

}  // namespace axle::lazy
