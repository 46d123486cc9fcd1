//===- tcp_store.cc - Gloo's rendezvous store over TCP ---------------------===//
#include "axle/collectives/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gloo/common/error.h"

namespace axle {
namespace {

// Frames: request = op (1 byte), key length (u32), key, data length (u32),
// data; answer = found (1 byte), data length (u32), data.

bool WriteAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteBlob(int fd, const char* data, uint32_t size) {
  return WriteAll(fd, &size, sizeof(size)) && WriteAll(fd, data, size);
}

bool ReadBlob(int fd, std::vector<char>& out) {
  uint32_t size = 0;
  if (!ReadAll(fd, &size, sizeof(size))) return false;
  out.resize(size);
  return ReadAll(fd, out.data(), size);
}

absl::StatusOr<std::pair<std::string, int>> SplitAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("AXLE_COORDINATOR '", address, "' is not host:port"));
  }
  return std::make_pair(address.substr(0, colon), port);
}

absl::StatusOr<sockaddr_in> Resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot resolve coordinator host '", host, "'"));
  }
  sockaddr_in address = *reinterpret_cast<sockaddr_in*>(found->ai_addr);
  freeaddrinfo(found);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpStore>> TcpStore::Create(const std::string& address, bool serve,
                                                           std::chrono::milliseconds timeout) {
  auto split = SplitAddress(address);
  if (!split.ok()) return split.status();
  auto resolved = Resolve(split->first, split->second);
  if (!resolved.ok()) return resolved.status();
  std::unique_ptr<TcpStore> store(new TcpStore());
  store->address_ = address;
  store->timeout_ = timeout;
  if (serve) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 ||
        ::bind(fd, reinterpret_cast<const sockaddr*>(&*resolved), sizeof(*resolved)) != 0 ||
        ::listen(fd, 128) != 0) {
      std::string error = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return absl::UnavailableError(
          absl::StrCat("cannot serve the rendezvous at ", address, ": ", error));
    }
    store->listen_fd_ = fd;
    store->server_ = std::thread([s = store.get()] { s->Serve(); });
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 &&
        ::connect(fd, reinterpret_cast<const sockaddr*>(&*resolved), sizeof(*resolved)) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      store->client_fd_ = fd;
      break;
    }
    if (fd >= 0) ::close(fd);
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no rendezvous server at ", address,
                       " within AXLE_COLLECTIVE_TIMEOUT (process 0 serves it; is it running?)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return store;
}

TcpStore::~TcpStore() {
  if (client_fd_ >= 0) ::close(client_fd_);
  stopping_ = true;
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  if (server_.joinable()) server_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& client : clients_) client.join();
  for (int fd : client_fds_) ::close(fd);
}

void TcpStore::Serve() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(clients_mutex_);
    client_fds_.push_back(fd);
    clients_.emplace_back([this, fd] { ServeClient(fd); });
  }
}

void TcpStore::ServeClient(int fd) {
  while (true) {
    char op = 0;
    std::vector<char> key, data;
    if (!ReadAll(fd, &op, 1) || !ReadBlob(fd, key) || !ReadBlob(fd, data)) return;
    std::string name(key.begin(), key.end());
    char found = 1;
    std::vector<char> answer;
    {
      std::lock_guard<std::mutex> lock(keys_mutex_);
      if (op == 'S') {
        keys_[name] = std::move(data);
      } else {
        auto it = keys_.find(name);
        found = it != keys_.end() ? 1 : 0;
        if (found) answer = it->second;
      }
    }
    if (!WriteAll(fd, &found, 1) ||
        !WriteBlob(fd, answer.data(), static_cast<uint32_t>(answer.size()))) {
      return;
    }
  }
}

std::vector<char> TcpStore::Call(char op, const std::string& key, const std::vector<char>& data,
                                 bool* found) {
  std::lock_guard<std::mutex> lock(client_mutex_);
  char status = 0;
  std::vector<char> answer;
  if (!WriteAll(client_fd_, &op, 1) ||
      !WriteBlob(client_fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !WriteBlob(client_fd_, data.data(), static_cast<uint32_t>(data.size())) ||
      !ReadAll(client_fd_, &status, 1) || !ReadBlob(client_fd_, answer)) {
    throw ::gloo::IoException(
        absl::StrCat("lost the rendezvous server at ", address_, " (process 0 left?)"));
  }
  if (found != nullptr) *found = status != 0;
  return answer;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  Call('S', key, data, nullptr);
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key}, timeout_);
  bool found = false;
  std::vector<char> value = Call('G', key, {}, &found);
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const std::string& key : keys) {
    while (true) {
      bool found = false;
      Call('G', key, {}, &found);
      if (found) break;
      if (std::chrono::steady_clock::now() > deadline) {
        throw ::gloo::IoException(
            absl::StrCat("Wait timeout for key ", key, " at the rendezvous ", address_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace axle
