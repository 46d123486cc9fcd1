// Host streams (stream.h): one worker thread per stream runs its queue in
// order, and so does a host thread waiting for the queue; counters of
// enqueued and completed items let the host wait for a prefix of the queue.
#include "axle/runtime/stream.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/runtime/platform.h"

namespace axle::se {

Event::Status Event::PollForStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!recorded_) return Status::kUnknown;
  return pending_ > 0 ? Status::kPending : Status::kComplete;
}

void Event::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return pending_ == 0; });
}

void Event::Record() {
  std::lock_guard<std::mutex> lock(mu_);
  recorded_ = true;
  ++pending_;
}

void Event::Complete() {
  std::lock_guard<std::mutex> lock(mu_);
  --pending_;
  cv_.notify_all();
}

Stream::Stream(const Platform* platform, int device_ordinal)
    : platform_(platform), device_ordinal_(device_ordinal) {}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    work_cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
  if (!status_.ok()) {
    std::fprintf(stderr, "axle: a stream was destroyed with an error no one waited for: %s\n",
                 status_.ToString().c_str());
  }
}

absl::Status Stream::Enqueue(absl::AnyInvocable<absl::Status() &&> work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return absl::FailedPreconditionError("enqueueing work on a stream being destroyed");
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkLoop(); });
  queue_.push_back(std::move(work));
  ++enqueued_;
  work_cv_.notify_one();
  return absl::OkStatus();
}

void Stream::RunFront(std::unique_lock<std::mutex>& lock) {
  absl::AnyInvocable<absl::Status()&&> work = std::move(queue_.front());
  queue_.pop_front();
  running_ = true;
  runner_ = std::this_thread::get_id();
  lock.unlock();
  absl::Status status = std::move(work)();
  // The work's captures (buffers a run owns) go before it counts as done.
  work = nullptr;
  lock.lock();
  running_ = false;
  status_.Update(status);
  ++completed_;
  done_cv_.notify_all();
  // Work enqueued while a waiting thread ran this one is the worker's (as
  // is the end of a stream being destroyed).
  if (!queue_.empty() || stop_) work_cv_.notify_one();
}

void Stream::WorkLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return !running_ && (stop_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stop_, and everything done
    RunFront(lock);
  }
}

absl::Status Stream::DoHostCallbackWithStatus(absl::AnyInvocable<absl::Status() &&> callback) {
  return Enqueue(std::move(callback));
}

absl::Status Stream::DoHostCallback(absl::AnyInvocable<void() &&> callback) {
  return Enqueue([callback = std::move(callback)]() mutable {
    std::move(callback)();
    return absl::OkStatus();
  });
}

absl::Status CheckMemcpySize(uint64_t size, uint64_t dst_size, uint64_t src_size) {
  if (size > dst_size || size > src_size) {
    return absl::InvalidArgumentError(absl::StrCat("memcpy of ", size,
                                                   " bytes: the destination has ", dst_size,
                                                   " bytes and the source ", src_size));
  }
  return absl::OkStatus();
}

absl::Status Stream::Memcpy(DeviceMemoryBase* device_dst, const DeviceMemoryBase& device_src,
                            uint64_t size) {
  if (size == 0) return absl::OkStatus();
  if (auto status = CheckMemcpySize(size, device_dst->size(), device_src.size()); !status.ok()) {
    return status;
  }
  DeviceMemoryBase dst = *device_dst;
  return Enqueue([this, dst, device_src, size]() mutable {
    return platform_->SynchronousMemcpy(&dst, device_src, size);
  });
}

absl::Status Stream::Memcpy(DeviceMemoryBase* device_dst, const void* host_src, uint64_t size) {
  if (size == 0) return absl::OkStatus();
  if (auto status = CheckMemcpySize(size, device_dst->size(), size); !status.ok()) return status;
  DeviceMemoryBase dst = *device_dst;
  return Enqueue([this, dst, host_src, size]() mutable {
    return platform_->SynchronousMemcpy(&dst, host_src, size);
  });
}

absl::Status Stream::Memcpy(void* host_dst, const DeviceMemoryBase& device_src, uint64_t size) {
  if (size == 0) return absl::OkStatus();
  if (auto status = CheckMemcpySize(size, size, device_src.size()); !status.ok()) return status;
  return Enqueue([this, host_dst, device_src, size] {
    return platform_->SynchronousMemcpy(host_dst, device_src, size);
  });
}

absl::Status Stream::RecordEvent(Event* event) {
  event->Record();
  absl::Status status = DoHostCallback([event] { event->Complete(); });
  if (!status.ok()) event->Complete();
  return status;
}

absl::Status Stream::WaitFor(Event* event) {
  return DoHostCallback([event] { event->Synchronize(); });
}

absl::Status Stream::WaitFor(Stream* other) {
  if (other == this) return absl::OkStatus();
  // Both sides share the event: it lives until the last of them is done.
  auto event = std::make_shared<Event>();
  event->Record();
  if (absl::Status status = other->DoHostCallback([event] { event->Complete(); }); !status.ok()) {
    return status;
  }
  return DoHostCallback([event] { event->Synchronize(); });
}

absl::Status Stream::BlockHostUntilDone() {
  std::unique_lock<std::mutex> lock(mu_);
  if (running_ && runner_ == std::this_thread::get_id()) {
    return absl::FailedPreconditionError(
        "BlockHostUntilDone called from the stream's own work (it would wait for itself)");
  }
  const uint64_t target = enqueued_;
  while (completed_ < target) {
    if (!running_ && !queue_.empty()) {
      // The worker has not taken the next item (it is still waking up):
      // run it here instead of sleeping until the worker has.
      RunFront(lock);
    } else {
      done_cv_.wait(lock);
    }
  }
  absl::Status status = std::move(status_);
  status_ = absl::OkStatus();
  return status;
}

bool Stream::IsIdle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ == enqueued_;
}

bool Stream::OnWorkerThread() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_ && runner_ == std::this_thread::get_id();
}

}  // namespace axle::se
