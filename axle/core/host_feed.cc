//===- host_feed.cc - Infeed and outfeed queues of the host platforms ------===//
#include "axle/core/host_feed.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/core/shape_util.h"

namespace axle {

HostFeed& HostFeed::Get(Direction direction, absl::string_view platform, int64_t device) {
  static std::mutex* mutex = new std::mutex;
  static auto* feeds =
      new std::map<std::tuple<Direction, std::string, int64_t>, std::unique_ptr<HostFeed>>;
  std::lock_guard<std::mutex> lock(*mutex);
  std::unique_ptr<HostFeed>& feed = (*feeds)[{direction, std::string(platform), device}];
  if (feed == nullptr) {
    feed = std::make_unique<HostFeed>(
        absl::StrCat(direction == Direction::kInfeed ? "infeed" : "outfeed", " of ", platform,
                     " device ", device));
  }
  return *feed;
}

void HostFeed::Push(Literal literal) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(literal));
  }
  ready_.notify_one();
}

absl::StatusOr<Literal> HostFeed::Pop(std::chrono::milliseconds timeout, const Shape* shape) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [this] { return !queue_.empty(); })) {
    return absl::DeadlineExceededError(absl::StrCat("nothing arrived in the ", name_, " within ",
                                                    timeout.count(), " ms (AXLE_FEED_TIMEOUT)"));
  }
  Literal literal = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  if (shape != nullptr && !ShapeUtil::Compatible(literal.shape(), *shape)) {
    return absl::InvalidArgumentError(absl::StrCat("the ", name_, " holds ",
                                                   literal.shape().ToString(false), " where ",
                                                   shape->ToString(false), " is expected"));
  }
  return literal;
}

int64_t HostFeed::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void HostFeed::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
}

std::chrono::milliseconds FeedTimeoutFromEnvironment() {
  return EnvironmentOptions::Read().feed_timeout;
}

}  // namespace axle
