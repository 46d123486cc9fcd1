//===- gloo_communicator.h - Collectives over Gloo's TCP transport ---------===//
//
// The default transport between processes: Gloo (Debian's libgloo-dev)
// over TCP, one full mesh of connections per run. The processes meet
// through Gloo's FileStore in a folder they share (axle-run makes a fresh
// one per launch and passes it as AXLE_RENDEZVOUS_DIR), or through a TCP
// store process 0 serves at AXLE_COORDINATOR=host:port (tcp_store.h); each
// publishes its address there and connects to every other. A process that never arrives
// makes the others fail after the timeout; one that dies closes its
// sockets, which fails its peers' next wait at once.
//
// Messages are Gloo's unbound buffers (send / recv to a rank on a slot =
// the tag), so the collectives of communicator.h run on them unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_GLOO_COMMUNICATOR_H_
#define AXLE_COLLECTIVES_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/collectives/communicator.h"

namespace axle {

struct GlooOptions {
  int rank = 0;
  int size = 1;
  // The shared folder of Gloo's FileStore; must be fresh for each run.
  std::string rendezvous_dir;
  // Or host:port of a TCP store (tcp_store.h) that rank 0 serves
  // (AXLE_COORDINATOR); used instead of the folder when set.
  std::string coordinator;
  // The address to listen on; tests use loopback only.
  std::string hostname = "127.0.0.1";
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

// Connects to the other processes; fails (DeadlineExceeded, Unavailable)
// when they do not all arrive within the timeout. Sets SIGPIPE to be
// ignored unless the process handles or ignores it already: a dead peer's
// socket then fails the collective (Unavailable) instead of killing the
// process.
absl::StatusOr<std::unique_ptr<Communicator>> ConnectGloo(const GlooOptions& options);

}  // namespace axle

#endif  // AXLE_COLLECTIVES_GLOO_COMMUNICATOR_H_
