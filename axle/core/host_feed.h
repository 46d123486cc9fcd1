//===- host_feed.h - Infeed and outfeed queues of the host platforms -------===//
//
// XLA's infeed and outfeed (its cpu backend's XfeedManager): each device
// of a platform has an infeed queue, which the host fills
// (LocalClient::TransferToInfeedLocal) and the program's `infeed` ops
// drain in order, and an outfeed queue, which the program's `outfeed` ops
// fill and the host drains (LocalClient::TransferFromOutfeedLocal). Values
// are literals of the op's shape (tuples included); a queue is FIFO and
// thread-safe.
//
// A device is named by its platform's name ("cpu", "interpreter") and its
// number: the participant's flattened id (replica_id * partition_count +
// partition_id) in a multi-device run, else the run's device ordinal (0).
// Queues live for the process.
//
// Waiting is bounded: Pop waits at most `timeout` (AXLE_FEED_TIMEOUT in
// milliseconds, 60 s by default) and then fails with DeadlineExceeded
// naming the queue, so a program whose infeed the host never fills, or a
// host waiting for an outfeed the program never makes, does not hang.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_HOST_FEED_H_
#define AXLE_CORE_HOST_FEED_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"

namespace axle {

class HostFeed {
 public:
  enum class Direction { kInfeed, kOutfeed };

  // The queue of `direction` of device `device` of `platform`, created on
  // first use.
  static HostFeed& Get(Direction direction, absl::string_view platform, int64_t device);

  void Push(Literal literal);
  // The oldest literal, waiting at most `timeout` for one; DeadlineExceeded
  // naming the queue after that. When `shape` is given the literal must be
  // compatible with it (else InvalidArgument; the literal is dropped, as
  // the op consumed it).
  absl::StatusOr<Literal> Pop(std::chrono::milliseconds timeout, const Shape* shape = nullptr);
  int64_t size() const;
  void Clear();
  // "infeed of cpu device 0".
  const std::string& name() const { return name_; }

  explicit HostFeed(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Literal> queue_;
};

// AXLE_FEED_TIMEOUT (milliseconds), or 60 s.
std::chrono::milliseconds FeedTimeoutFromEnvironment();

}  // namespace axle

#endif  // AXLE_CORE_HOST_FEED_H_
