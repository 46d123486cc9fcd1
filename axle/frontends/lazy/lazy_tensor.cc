//===- lazy_tensor.cc - A tensor whose value is data or pending IR ---------===//
#include "axle/frontends/lazy/lazy_tensor.h"

#include <algorithm>
#include <atomic>
#include <functional>

#include "axle/frontends/lazy/block_pool.h"
#include "axle/frontends/lazy/graph_executor.h"
#include "axle/frontends/lazy/metrics.h"

namespace axle::lazy {
namespace {

// The tensors alive, in creation order (a sync's roots are in this order,
// so a step's graph hashes the same each time): an intrusive list, so a
// tensor's birth and death cost no allocation and no search.
struct LiveTensors {
  std::mutex mutex;
  LazyTensor* head = nullptr;
  LazyTensor* tail = nullptr;
  int64_t count = 0;
};

LiveTensors& Live() {
  static auto* live = new LiveTensors();
  return *live;
}

std::atomic<int64_t> next_id{1};

}  // namespace

LazyTensor::LazyTensor(Private, std::shared_ptr<DeviceData> data, Value ir)
    : id_(next_id.fetch_add(1, std::memory_order_relaxed)),
      shape_(data != nullptr ? &data->shape() : &InternShape(ir.shape())),
      data_(std::move(data)),
      ir_(std::move(ir)) {
  // Registered once whole: a sync on another thread may read it from now on.
  LiveTensors& live = Live();
  {
    std::lock_guard<std::mutex> lock(live.mutex);
    live_prev_ = live.tail;
    (live.tail != nullptr ? live.tail->live_next_ : live.head) = this;
    live.tail = this;
    ++live.count;
  }
  static metrics::Counter* const created = metrics::GetCounter("CreateTensor");
  created->Increment();
}

LazyTensor::~LazyTensor() {
  {
    LiveTensors& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    (live_prev_ != nullptr ? live_prev_->live_next_ : live.head) = live_next_;
    (live_next_ != nullptr ? live_next_->live_prev_ : live.tail) = live_prev_;
    --live.count;
  }
  static metrics::Counter* const destroyed = metrics::GetCounter("DestroyTensor");
  destroyed->Increment();
}

// Tensors live in pooled blocks (block_pool.h): a step makes and frees one
// per op.
std::shared_ptr<LazyTensor> LazyTensor::FromData(std::shared_ptr<DeviceData> data) {
  return std::allocate_shared<LazyTensor>(PoolAllocator<LazyTensor>(), Private{}, std::move(data),
                                          Value());
}

std::shared_ptr<LazyTensor> LazyTensor::FromIr(Value value) {
  return std::allocate_shared<LazyTensor>(PoolAllocator<LazyTensor>(), Private{}, nullptr,
                                          std::move(value));
}

std::shared_ptr<LazyTensor> LazyTensor::FromLiteral(Literal literal) {
  return FromData(std::make_shared<DeviceData>(std::move(literal)));
}

const Shape& LazyTensor::shape() const { return *shape_; }

uint64_t LazyTensor::version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return version_;
}

Value LazyTensor::GetIrValue() {
  uint64_t version = 0;
  return GetIrValue(&version);
}

Value LazyTensor::GetIrValue(uint64_t* version) {
  std::lock_guard<std::mutex> lock(mutex_);
  *version = version_;
  if (ir_) return ir_;
  if (!leaf_) leaf_ = Value{Node::MakeDeviceData(data_), 0};
  return leaf_;
}

uint64_t LazyTensor::SetIrValue(Value value) {
  std::lock_guard<std::mutex> lock(mutex_);
  ir_ = std::move(value);
  data_.reset();
  leaf_ = Value();
  view_of_base_ = false;
  return ++version_;
}

void LazyTensor::SetData(std::shared_ptr<DeviceData> data) {
  std::lock_guard<std::mutex> lock(mutex_);
  data_ = std::move(data);
  ir_ = Value();
  leaf_ = Value();
  view_of_base_ = false;
  ++version_;
}

void LazyTensor::MarkViewOfBase() {
  std::lock_guard<std::mutex> lock(mutex_);
  view_of_base_ = static_cast<bool>(ir_);
}

bool LazyTensor::is_view_of_base() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return view_of_base_;
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
    absl::Status status = Sync({shared_from_this()});
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
  // Kept from sync to sync on each thread (cleared, not freed).
  struct Scratch {
    std::vector<LazyTensor*> pending;
    std::vector<Value> roots;
    std::vector<std::shared_ptr<DeviceData>> results;
  };
  thread_local Scratch scratch;
  std::vector<LazyTensor*>& pending = scratch.pending;
  std::vector<Value>& roots = scratch.roots;
  std::vector<std::shared_ptr<DeviceData>>& results = scratch.results;
  pending.clear();
  roots.clear();
  results.clear();
  for (const auto& t : tensors) {
    std::lock_guard<std::mutex> lock(t->mutex_);
    if (!t->ir_) continue;
    pending.push_back(t.get());  // `tensors` holds it
    roots.push_back(t->ir_);
  }
  if (roots.empty()) return absl::OkStatus();
  absl::Status status = GraphExecutor::Get().Execute(roots, may_donate, &results);
  if (status.ok()) {
    for (size_t i = 0; i < pending.size(); ++i) {
      std::lock_guard<std::mutex> lock(pending[i]->mutex_);
      // Only if no operation replaced the value meanwhile.
      if (pending[i]->ir_.node == roots[i].node && pending[i]->ir_.index == roots[i].index) {
        pending[i]->data_ = std::move(results[i]);
        pending[i]->ir_ = Value();
        pending[i]->leaf_ = Value();
        pending[i]->view_of_base_ = false;
        ++pending[i]->version_;
      }
    }
  }
  // The graph dies here (the roots held it last).
  pending.clear();
  roots.clear();
  results.clear();
  return status;
}

absl::Status SyncLiveTensors() {
  metrics::IncrementCounter("MarkStep");
  // The step's containers are kept from step to step (cleared, not freed):
  // a steady training loop syncs a few hundred tensors each step, and
  // allocating those arrays afresh each time costs more than the walk.
  struct Scratch {
    std::vector<std::shared_ptr<LazyTensor>> tensors;
    std::vector<const DeviceData*> held;  // sorted
  };
  thread_local Scratch scratch;
  std::vector<std::shared_ptr<LazyTensor>>& tensors = scratch.tensors;
  std::vector<const DeviceData*>& held = scratch.held;
  {
    // A tensor being destroyed (its count reached zero, its destructor waits
    // for the lock) yields no shared_ptr and is left out.
    LiveTensors& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    tensors.reserve(live.count);
    for (LazyTensor* t = live.head; t != nullptr; t = t->live_next_) {
      if (auto shared = t->weak_from_this().lock()) tensors.push_back(std::move(shared));
    }
  }
  // Every pending value is computed here (a view's through its base's), so
  // a buffer no live tensor holds as its value is read by this step's graph
  // for the last time: donated.
  size_t kept = 0;  // the tensors synced, in order, before the views left out
  for (size_t i = 0; i < tensors.size(); ++i) {
    bool view = false;
    {
      std::lock_guard<std::mutex> lock(tensors[i]->mutex_);
      if (tensors[i]->data_ != nullptr) held.push_back(tensors[i]->data_.get());
      view = tensors[i]->view_of_base_;
    }
    if (!view) std::swap(tensors[kept++], tensors[i]);
  }
  tensors.resize(kept);
  std::sort(held.begin(), held.end());
  absl::Status status = SyncAndDonate(tensors, [](const DeviceData& data) {
    return !std::binary_search(scratch.held.begin(), scratch.held.end(), &data);
  });
  // Keep the capacity, not the tensors (they must die when their owners do).
  tensors.clear();
  held.clear();
  return status;
}

int64_t LiveTensorCount() {
  LiveTensors& live = Live();
  std::lock_guard<std::mutex> lock(live.mutex);
  return live.count;
}

}  // namespace axle::lazy
