//===- tcp_store.h - Gloo's rendezvous store over TCP ----------------------===//
//
// Gloo 0.5 (Debian's libgloo-dev) ships a file store, an in-process hash
// store and a Redis store, but no TCP store; this is the small one a launcher
// that sets AXLE_COORDINATOR=host:port needs. Process 0 serves the keys at
// host:port (a thread of its own for the communicator's lifetime) and every
// process, 0 included, is a client. Keys are set once; wait() polls until
// they all exist or the timeout passes. Failures are thrown as
// gloo::IoException, as Gloo's own stores do (ConnectGloo turns them into a
// Status).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_TCP_STORE_H_
#define AXLE_COLLECTIVES_TCP_STORE_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "gloo/rendezvous/store.h"

namespace axle {

class TcpStore : public gloo::rendezvous::Store {
 public:
  // `address` is host:port. With `serve`, first starts the server there.
  // Connecting retries until `timeout` (the server may start later).
  static absl::StatusOr<std::unique_ptr<TcpStore>> Create(const std::string& address, bool serve,
                                                          std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  TcpStore() = default;
  // One request and its answer; nullopt-like `found` false when the key is
  // missing (GET).
  std::vector<char> Call(char op, const std::string& key, const std::vector<char>& data,
                         bool* found);
  void Serve();
  void ServeClient(int fd);

  std::string address_;
  std::chrono::milliseconds timeout_{0};
  int client_fd_ = -1;
  std::mutex client_mutex_;
  // The server (process 0 only).
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread server_;
  std::mutex clients_mutex_;
  std::vector<std::thread> clients_;
  std::vector<int> client_fds_;
  std::mutex keys_mutex_;
  std::map<std::string, std::vector<char>> keys_;
};

}  // namespace axle

#endif  // AXLE_COLLECTIVES_TCP_STORE_H_
