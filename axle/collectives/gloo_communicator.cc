//===- gloo_communicator.cc - Collectives over Gloo's TCP transport --------===//
#include "axle/collectives/gloo_communicator.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/collectives/tcp_store.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/context.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/tcp/unbound_buffer.h"

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

// Gloo's rendezvous context with its TCP transport context in reach, so
// that the communicator makes its buffers itself (as the context would).
class TcpRendezvousContext : public gloo::rendezvous::Context {
 public:
  using gloo::rendezvous::Context::Context;
  // Null before connectFullMesh, or for another transport.
  std::shared_ptr<gloo::transport::tcp::Context> tcp() const {
    return std::dynamic_pointer_cast<gloo::transport::tcp::Context>(transportContext_);
  }
};

// Gloo's TCP buffer, polled: its waitSend / waitRecv take a timeout, and
// one that expires closes every connection of the context, so a test for
// completion reads the buffer's state instead (what those waits check
// first, under the same lock).
class PolledBuffer : public gloo::transport::tcp::UnboundBuffer {
 public:
  using gloo::transport::tcp::UnboundBuffer::UnboundBuffer;
  // The base's shorter forms (default offset, size and timeout).
  using gloo::transport::UnboundBuffer::recv;
  using gloo::transport::UnboundBuffer::send;
  using gloo::transport::UnboundBuffer::waitRecv;
  using gloo::transport::UnboundBuffer::waitSend;
  // Whether waitSend (send) or waitRecv would return at once: the transfer
  // completed, was aborted, or failed.
  bool Done(bool send) {
    std::lock_guard<std::mutex> lock(m_);
    if (ex_ != nullptr) return true;
    return send ? sendCompletions_ > 0 || abortWaitSend_ : recvCompletions_ > 0 || abortWaitRecv_;
  }
};

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<TcpRendezvousContext> context,
                   std::shared_ptr<gloo::transport::tcp::Context> tcp,
                   std::unique_ptr<gloo::rendezvous::Store> store,
                   std::chrono::milliseconds timeout)
      : Communicator(context->rank, context->size, timeout),
        store_(std::move(store)),
        context_(std::move(context)),
        tcp_(std::move(tcp)) {}

  std::string Describe() const override {
    return absl::StrCat("gloo rank ", rank(), " of ", size());
  }

 protected:
  struct Posted : Transfer {
    std::unique_ptr<PolledBuffer> buffer;
    int peer = 0;  // -1: a receive from any of several ranks
    bool send = false;
  };

  absl::StatusOr<std::unique_ptr<Transfer>> Post(int peer, void* data, int64_t bytes, uint64_t tag,
                                                 bool send) {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    posted->send = send;
    try {
      posted->buffer = std::make_unique<PolledBuffer>(tcp_, data, bytes);
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
      posted->buffer = std::make_unique<PolledBuffer>(tcp_, data, bytes);
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
      const std::string peer =
          posted->peer >= 0 ? absl::StrCat("rank ", posted->peer) : std::string("any rank");
      try {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() < 1) left = std::chrono::milliseconds(1);
        int source = -1;
        bool done =
            posted->send ? posted->buffer->waitSend(left) : posted->buffer->waitRecv(&source, left);
        if (!done) {
          return absl::AbortedError(
              absl::StrCat(Describe(), ": transfer with ", peer, " was aborted"));
        }
        if (!posted->send) posted->source = source;
      } catch (const std::exception& error) {
        return FromGloo(
            error,
            absl::StrCat(Describe(), posted->send ? ": sending to " : ": receiving from ", peer));
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<bool> IsDone(Transfer& transfer) override {
    auto& posted = static_cast<Posted&>(transfer);
    return posted.buffer->Done(posted.send);
  }

 private:
  // Kept while connected: rank 0 serves the TCP store to latecomers.
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<TcpRendezvousContext> context_;
  std::shared_ptr<gloo::transport::tcp::Context> tcp_;
};

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
    auto context = std::make_shared<TcpRendezvousContext>(options.rank, options.size);
    context->setTimeout(options.timeout);
    context->connectFullMesh(*store, device);
    std::shared_ptr<gloo::transport::tcp::Context> tcp = context->tcp();
    if (tcp == nullptr) {
      return absl::InternalError("gloo: the TCP device made a context of another transport");
    }
    return std::unique_ptr<Communicator>(new GlooCommunicator(std::move(context), std::move(tcp),
                                                              std::move(store), options.timeout));
  } catch (const std::exception& error) {
    return FromGloo(
        error,
        absl::StrCat("gloo rank ", options.rank, " of ", options.size, ": connecting through ",
                     options.coordinator.empty() ? options.rendezvous_dir : options.coordinator));
  }
}

}  // namespace axle
