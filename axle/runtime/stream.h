//===- stream.h - Streams and events of a device ---------------------------===//
//
// StreamExecutor's ordering vocabulary, with XLA's names (`se::Stream`,
// `se::Event`):
//
//   Stream   an ordered queue of work for one device of a platform. Work
//            enqueued on it (host callbacks, memcpys, executable runs) runs
//            in order, one item at a time, on the stream's worker thread
//            (started with the first item), while the enqueuing thread
//            goes on. BlockHostUntilDone() waits for everything enqueued
//            before it and returns the first error that work raised since
//            the last BlockHostUntilDone(), as XLA's host stream does: an
//            error is never lost, it surfaces at the next synchronization.
//            A thread in BlockHostUntilDone() runs the items the worker has
//            not taken yet itself, in the same order and one at a time: it
//            would only sleep until the worker is done with them, and a
//            round trip (enqueue a run, wait for it) then costs no sleep
//            and wake-up of the waiting thread.
//   Event    a point in a stream: RecordEvent(&event) marks it, and the
//            event completes when the stream gets there. Other streams can
//            WaitFor(&event); the host can Synchronize() on it.
//
// Host platforms run a device's work on one worker thread per stream (XLA's
// HostStream). Memory a stream's work reads or writes must stay allocated
// until the work is done; the platform's own allocator (platform.h) sees to
// that for its buffers by freeing them in stream order.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_STREAM_H_
#define AXLE_RUNTIME_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "axle/runtime/device_memory.h"

namespace axle::se {

class Platform;
class Stream;

class Event {
 public:
  enum class Status { kUnknown, kPending, kComplete };

  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // kUnknown before the event was first recorded.
  Status PollForStatus();
  // Blocks the host until every recording of the event so far is reached.
  void Synchronize();

 private:
  friend class Stream;
  void Record();
  void Complete();

  std::mutex mu_;
  std::condition_variable cv_;
  bool recorded_ = false;
  int64_t pending_ = 0;
};

class Stream {
 public:
  // A stream of device `device_ordinal` of `platform` (whose memcpys it
  // runs).
  Stream(const Platform* platform, int device_ordinal);
  // Waits for the work enqueued; an error no one synchronized on is
  // written to stderr.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const Platform* platform() const { return platform_; }
  int device_ordinal() const { return device_ordinal_; }

  // Enqueues `callback`; a failure it returns is the stream's error (see
  // BlockHostUntilDone).
  absl::Status DoHostCallbackWithStatus(absl::AnyInvocable<absl::Status() &&> callback);
  absl::Status DoHostCallback(absl::AnyInvocable<void() &&> callback);

  // Enqueued copies between device memory and host memory through the
  // platform (Platform::SynchronousMemcpy). A size larger than either side
  // is an InvalidArgument, returned now. Both sides must stay valid until
  // the copy is done.
  absl::Status Memcpy(DeviceMemoryBase* device_dst, const DeviceMemoryBase& device_src,
                      uint64_t size);
  absl::Status Memcpy(DeviceMemoryBase* device_dst, const void* host_src, uint64_t size);
  absl::Status Memcpy(void* host_dst, const DeviceMemoryBase& device_src, uint64_t size);

  // `event` completes when the stream reaches this point.
  absl::Status RecordEvent(Event* event);
  // Work enqueued after this waits until `event` (recorded on another
  // stream) completes, or `other`'s work enqueued so far is done.
  absl::Status WaitFor(Event* event);
  absl::Status WaitFor(Stream* other);

  // Waits until the work enqueued before the call is done. Returns the
  // first error raised by the stream's work since the previous call (and
  // clears it). FailedPrecondition when called from the stream's own work.
  absl::Status BlockHostUntilDone();

  // Nothing enqueued is still waiting or running.
  bool IsIdle() const;
  // The calling thread is running this stream's work (on the worker, or in
  // BlockHostUntilDone).
  bool OnWorkerThread() const;

 private:
  absl::Status Enqueue(absl::AnyInvocable<absl::Status() &&> work);
  void WorkLoop();
  // Runs the item at the front of the queue on the calling thread; `lock`
  // holds mu_ before and after.
  void RunFront(std::unique_lock<std::mutex>& lock);

  const Platform* platform_;
  int device_ordinal_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // work arrived, or stop
  std::condition_variable done_cv_;  // an item completed
  std::deque<absl::AnyInvocable<absl::Status() &&>> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  absl::Status status_;
  bool stop_ = false;
  // An item is running, on thread `runner_` (the worker or a waiting host
  // thread).
  bool running_ = false;
  std::thread::id runner_;
  std::thread worker_;
};

// InvalidArgument when a copy of `size` bytes exceeds either side.
absl::Status CheckMemcpySize(uint64_t size, uint64_t dst_size, uint64_t src_size);

}  // namespace axle::se

#endif  // AXLE_RUNTIME_STREAM_H_
