//===- gloo_communicator.cc - Collectives over Gloo's TCP transport --------===//
#include "axle/collectives/gloo_communicator.h"

#include <signal.h>

#include <atomic>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/collectives/tcp_store.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"

namespace axle {
namespace {

// Gloo reports failures with exceptions; they stop here.
absl::Status FromGloo(const std::exception& error, absl::string_view what) {
  std::string message = error.what();
  std::string lower = absl::AsciiStrToLower(message);
  bool timed_out = absl::StrContains(lower, "timed out") || absl::StrContains(lower, "timeout");
  std::string text = absl::StrCat(what, ": ", message);
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(text, " (AXLE_COLLECTIVE_TIMEOUT: a peer failed or never arrived)"));
  }
  return absl::UnavailableError(text);
}

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<gloo::rendezvous::Context> context,
                   std::unique_ptr<gloo::rendezvous::Store> store,
                   std::chrono::milliseconds timeout)
      : Communicator(context->rank, context->size, timeout),
        store_(std::move(store)),
        context_(std::move(context)) {}

  std::string Describe() const override {
    return absl::StrCat("gloo rank ", rank(), " of ", size());
  }

 protected:
  // A posted send or receive. Gloo's public API has no test for
  // completion, only waitSend / waitRecv with a timeout, and an expired one
  // closes every connection of the context. So the first Test of a message
  // hands its wait to a thread of its own (`waiter`): it waits as Finish
  // would, for timeout() counted from that Test, and keeps the outcome
  // (`outcome`, `waited_source`), then sets `finished`. Test reads
  // `finished`; Finish joins the waiter and takes its outcome. Dropping
  // the message aborts the wait (Gloo's abortWaitSend / abortWaitRecv,
  // which also stop a wait not begun yet) and joins the thread, before the
  // buffer goes. The waiter touches only this transfer, never the
  // communicator, which the message may outlive.
  struct Posted : Transfer {
    Posted() = default;
    Posted(const Posted&) = delete;
    Posted& operator=(const Posted&) = delete;
    ~Posted() override {
      if (!waiter.joinable()) return;
      if (send) {
        buffer->abortWaitSend();
      } else {
        buffer->abortWaitRecv();
      }
      waiter.join();
    }

    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    int peer = 0;  // -1: a receive from any of several ranks
    bool send = false;
    // Set by the first Test: the wait runs on `waiter`.
    bool handed_over = false;
    std::thread waiter;
    // Written by the waiter before it sets `finished` (release); read after
    // `finished` (acquire) or after joining it.
    std::atomic<bool> finished{false};
    absl::Status outcome;
    int waited_source = -1;
  };

  // Waits for one transfer for `left`; `what` describes it for errors.
  static absl::Status WaitOne(Posted& posted, std::chrono::milliseconds left,
                              const std::string& what, int* source) {
    try {
      if (left.count() < 1) left = std::chrono::milliseconds(1);
      bool done =
          posted.send ? posted.buffer->waitSend(left) : posted.buffer->waitRecv(source, left);
      if (!done) return absl::AbortedError(absl::StrCat(what, " was aborted"));
      return absl::OkStatus();
    } catch (const std::exception& error) {
      return FromGloo(error, what);
    } catch (...) {
      return absl::UnknownError(absl::StrCat(what, ": Gloo threw a non-standard exception"));
    }
  }
  std::string DescribeTransfer(const Posted& posted) const {
    const std::string peer =
        posted.peer >= 0 ? absl::StrCat("rank ", posted.peer) : std::string("any rank");
    return absl::StrCat(Describe(), posted.send ? ": sending to " : ": receiving from ", peer);
  }

  absl::StatusOr<std::unique_ptr<Transfer>> Post(int peer, void* data, int64_t bytes, uint64_t tag,
                                                 bool send) {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    posted->send = send;
    try {
      posted->buffer = context_->createUnboundBuffer(data, bytes);
      if (send) {
        posted->buffer->send(peer, tag);
      } else {
        posted->buffer->recv(peer, tag);
      }
    } catch (const std::exception& error) {
      return FromGloo(
          error, absl::StrCat(Describe(), (send ? ": send to rank " : ": recv from rank "), peer));
    }
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostSend(int peer, const void* data, int64_t bytes,
                                                     uint64_t tag) override {
    // Gloo's buffers are not const; a send only reads it.
    return Post(peer, const_cast<void*>(data), bytes, tag, true);
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecv(int peer, void* data, int64_t bytes,
                                                     uint64_t tag) override {
    return Post(peer, data, bytes, tag, false);
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecvFromAny(absl::Span<const int> peers, void* data,
                                                            int64_t bytes, uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->peer = -1;
    try {
      posted->buffer = context_->createUnboundBuffer(data, bytes);
      posted->buffer->recv(std::vector<int>(peers.begin(), peers.end()), tag);
    } catch (const std::exception& error) {
      return FromGloo(error, absl::StrCat(Describe(), ": recv from any rank"));
    }
    return posted;
  }
  absl::Status Wait(absl::Span<const std::unique_ptr<Transfer>> transfers,
                    std::chrono::steady_clock::time_point deadline) override {
    for (const auto& transfer : transfers) {
      auto* posted = static_cast<Posted*>(transfer.get());
      int source = -1;
      absl::Status status;
      if (posted->handed_over) {
        // The waiter's own wait ends by the first Test's time plus
        // timeout(), before this deadline.
        posted->waiter.join();
        status = posted->outcome;
        source = posted->waited_source;
      } else {
        status = WaitOne(*posted,
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now()),
                         DescribeTransfer(*posted), &source);
      }
      if (!status.ok()) return status;
      if (!posted->send) posted->source = source;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<bool> IsDone(Transfer& transfer) override {
    auto& posted = static_cast<Posted&>(transfer);
    if (!posted.handed_over) {
      Posted* waited = &posted;
      std::chrono::milliseconds left = timeout();
      try {
        posted.waiter = std::thread([waited, left, what = DescribeTransfer(posted)] {
          waited->outcome = WaitOne(*waited, left, what, &waited->waited_source);
          waited->finished.store(true, std::memory_order_release);
        });
      } catch (const std::system_error& error) {
        return absl::ResourceExhaustedError(
            absl::StrCat(Describe(), ": no thread to wait for a message: ", error.what()));
      }
      posted.handed_over = true;
    }
    return posted.finished.load(std::memory_order_acquire);
  }

 private:
  // Kept while connected: rank 0 serves the TCP store to latecomers.
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
};

// A peer that dies closes its sockets, and Gloo's next write to one raises
// SIGPIPE, whose default action ends the whole process before the write can
// fail with EPIPE (and the collective with Unavailable). As Python does at
// start-up, and network libraries such as gRPC do, a process that connects
// Gloo ignores SIGPIPE, unless its owner installed a handler or ignores it
// already.
void IgnoreSigpipeUnlessHandled() {
  struct sigaction current = {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, nullptr);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> ConnectGloo(const GlooOptions& options) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: rank ", options.rank, " of ", options.size, " is not a valid rank"));
  }
  if (options.rendezvous_dir.empty() && options.coordinator.empty()) {
    return absl::InvalidArgumentError(
        "gloo: no rendezvous (set AXLE_COORDINATOR=host:port or AXLE_RENDEZVOUS_DIR, or launch "
        "with axle-run --num_processes=N)");
  }
  IgnoreSigpipeUnlessHandled();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    std::unique_ptr<gloo::rendezvous::Store> store;
    if (!options.coordinator.empty()) {
      absl::StatusOr<std::unique_ptr<TcpStore>> tcp =
          TcpStore::Create(options.coordinator, options.rank == 0, options.timeout);
      if (!tcp.ok()) {
        return absl::Status(tcp.status().code(),
                            absl::StrCat("gloo rank ", options.rank, " of ", options.size, ": ",
                                         tcp.status().message()));
      }
      store = std::move(*tcp);
    } else {
      store = std::make_unique<gloo::rendezvous::FileStore>(options.rendezvous_dir);
    }
    auto context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.size);
    context->setTimeout(options.timeout);
    context->connectFullMesh(*store, device);
    return std::unique_ptr<Communicator>(
        new GlooCommunicator(std::move(context), std::move(store), options.timeout));
  } catch (const std::exception& error) {
    return FromGloo(
        error,
        absl::StrCat("gloo rank ", options.rank, " of ", options.size, ": connecting through ",
                     options.coordinator.empty() ? options.rendezvous_dir : options.coordinator));
  }
}

}  // namespace axle
