//===- communicator.cc - Collectives built on point-to-point messages ------===//
#include "axle/collectives/communicator.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"

namespace axle {

// --- Reducers ----------------------------------------------------------------
namespace {

template <typename T>
T Combine(ReductionKind kind, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (kind) {
      case ReductionKind::kSum:
      case ReductionKind::kOr:
      case ReductionKind::kMax:
        return a || b;
      case ReductionKind::kProduct:
      case ReductionKind::kAnd:
      case ReductionKind::kMin:
        return a && b;
      case ReductionKind::kXor:
        return a != b;
    }
    return a;
  } else if constexpr (std::is_integral_v<T>) {
    // Sums and products wrap, as XLA's integer arithmetic does.
    using U = std::make_unsigned_t<T>;
    switch (kind) {
      case ReductionKind::kSum:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case ReductionKind::kProduct:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case ReductionKind::kMin:
        return b < a ? b : a;
      case ReductionKind::kMax:
        return a < b ? b : a;
      case ReductionKind::kAnd:
        return static_cast<T>(a & b);
      case ReductionKind::kOr:
        return static_cast<T>(a | b);
      case ReductionKind::kXor:
        return static_cast<T>(a ^ b);
    }
    return a;
  } else {
    switch (kind) {
      case ReductionKind::kSum:
        return a + b;
      case ReductionKind::kProduct:
        return a * b;
      case ReductionKind::kMin:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        return b < a ? b : a;
      case ReductionKind::kMax:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        return a < b ? b : a;
      default:
        return a;  // bitwise kinds are refused by MakeReducer
    }
  }
}

template <typename T>
Reducer ReducerFor(ReductionKind kind) {
  return [kind](void* accumulator, const void* input, int64_t count) {
    T* acc = static_cast<T*>(accumulator);
    const T* in = static_cast<const T*>(input);
    for (int64_t i = 0; i < count; ++i) acc[i] = Combine<T>(kind, acc[i], in[i]);
    return absl::OkStatus();
  };
}

}  // namespace

absl::StatusOr<Reducer> MakeReducer(ReductionKind kind, PrimitiveType type) {
  bool bitwise =
      kind == ReductionKind::kAnd || kind == ReductionKind::kOr || kind == ReductionKind::kXor;
  switch (type) {
    case PRED:
      return ReducerFor<bool>(kind);
    case S8:
      return ReducerFor<int8_t>(kind);
    case S16:
      return ReducerFor<int16_t>(kind);
    case S32:
      return ReducerFor<int32_t>(kind);
    case S64:
      return ReducerFor<int64_t>(kind);
    case U8:
      return ReducerFor<uint8_t>(kind);
    case U16:
      return ReducerFor<uint16_t>(kind);
    case U32:
      return ReducerFor<uint32_t>(kind);
    case U64:
      return ReducerFor<uint64_t>(kind);
    case F32:
      if (!bitwise) return ReducerFor<float>(kind);
      break;
    case F64:
      if (!bitwise) return ReducerFor<double>(kind);
      break;
    default:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("no built-in reduction over ", primitive_util::LowercasePrimitiveTypeName(type),
                   bitwise ? " (bitwise kinds need integers or pred)" : ""));
}

std::chrono::milliseconds CollectiveTimeoutFromEnvironment() {
  double seconds = EnvironmentOptions::Read().collective_timeout_s;
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// --- Collectives on point-to-point messages ----------------------------------

Communicator::~Communicator() = default;

absl::StatusOr<int> Communicator::IndexIn(absl::Span<const int> group, const char* op) const {
  if (!broken_.ok()) return broken_;
  int index = -1;
  std::vector<bool> seen(size_, false);
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": rank ", group[i], " is out of range [0, ", size_, ") (", Describe(), ")"));
    }
    if (seen[group[i]]) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": rank ", group[i], " is twice in the group (", Describe(), ")"));
    }
    seen[group[i]] = true;
    if (group[i] == rank_) index = static_cast<int>(i);
  }
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": this rank is not in the group (", Describe(), ")"));
  }
  return index;
}

char* Communicator::Scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

absl::Status Communicator::Fail(absl::Status status) {
  if (broken_.ok() && !status.ok()) broken_ = status;
  return status;
}

absl::Status Communicator::Run(std::vector<std::unique_ptr<Transfer>>& transfers) {
  absl::Status status = Wait(transfers, std::chrono::steady_clock::now() + timeout_);
  transfers.clear();
  return Fail(status);
}

#define AXLE_POST(transfers, expr)                     \
  do {                                                 \
    auto posted_ = (expr);                             \
    if (!posted_.ok()) return Fail(posted_.status());  \
    (transfers).push_back(std::move(posted_).value()); \
  } while (false)

absl::Status Communicator::AllGather(absl::Span<const int> group, const void* input, void* output,
                                     int64_t bytes) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, "all-gather"));
  uint64_t tag = NextTag();
  auto* out = static_cast<char*>(output);
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (bytes > 0) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (static_cast<int>(i) == me) continue;
      AXLE_POST(transfers, PostRecv(group[i], out + i * bytes, bytes, tag));
      AXLE_POST(transfers, PostSend(group[i], input, bytes, tag));
    }
    std::memmove(out + me * bytes, input, bytes);
  }
  return Run(transfers);
}

absl::Status Communicator::AllToAll(absl::Span<const int> group, const void* input, void* output,
                                    int64_t bytes_per_member) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, "all-to-all"));
  uint64_t tag = NextTag();
  const auto* in = static_cast<const char*>(input);
  auto* out = static_cast<char*>(output);
  int64_t b = bytes_per_member;
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (b > 0) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (static_cast<int>(i) == me) continue;
      AXLE_POST(transfers, PostRecv(group[i], out + i * b, b, tag));
      AXLE_POST(transfers, PostSend(group[i], in + i * b, b, tag));
    }
    std::memmove(out + me * b, in + me * b, b);
  }
  return Run(transfers);
}

absl::Status Communicator::ReduceScatter(absl::Span<const int> group, const void* input,
                                         void* output, int64_t count, int element_bytes,
                                         const Reducer& reducer) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, "reduce-scatter"));
  uint64_t tag = NextTag();
  int64_t piece = count * element_bytes;
  size_t n = group.size();
  const auto* in = static_cast<const char*>(input);
  // Every member's piece `me`, in member order, then folded in that order.
  absl::Span<char> pieces(Scratch(n * piece), n * piece);
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (piece > 0) {
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<int>(i) == me) continue;
      AXLE_POST(transfers, PostRecv(group[i], pieces.data() + i * piece, piece, tag));
      AXLE_POST(transfers, PostSend(group[i], in + i * piece, piece, tag));
    }
    std::memcpy(pieces.data() + me * piece, in + me * piece, piece);
  }
  AXLE_RETURN_IF_ERROR(Run(transfers));
  if (piece == 0) return absl::OkStatus();
  for (size_t i = 1; i < n; ++i) {
    AXLE_RETURN_IF_ERROR(reducer(pieces.data(), pieces.data() + i * piece, count));
  }
  std::memcpy(output, pieces.data(), piece);
  return absl::OkStatus();
}

namespace {
// Member i folds elements [PieceBegin(i), PieceBegin(i + 1)) of n.
int64_t PieceBegin(int64_t count, size_t i, size_t n) {
  return static_cast<int64_t>(count * i / n);
}
}  // namespace

absl::StatusOr<char*> Communicator::FoldPiece(absl::Span<const int> group, int me, uint64_t tag,
                                              const void* input, void* output, int64_t count,
                                              int element_bytes, const Reducer& reducer) {
  size_t n = group.size();
  auto begin = [&](size_t i) { return PieceBegin(count, i, n); };
  const auto* in = static_cast<const char*>(input);
  int64_t my_count = begin(me + 1) - begin(me);
  int64_t my_bytes = my_count * element_bytes;
  const char* my_piece = in + begin(me) * element_bytes;
  // Slot i of the scratch receives member i's piece; slot `me` keeps this
  // member's own piece when the output overwrites the input; slot n is the
  // accumulator when there is no output.
  char* pieces = Scratch((output != nullptr ? n : n + 1) * my_bytes);
  char* acc = output != nullptr ? static_cast<char*>(output) + begin(me) * element_bytes
                                : pieces + n * my_bytes;
  std::vector<std::unique_ptr<Transfer>> transfers;
  for (size_t i = 0; i < n; ++i) {
    int64_t their_bytes = (begin(i + 1) - begin(i)) * element_bytes;
    if (static_cast<int>(i) == me) continue;
    if (my_bytes > 0)
      AXLE_POST(transfers, PostRecv(group[i], pieces + i * my_bytes, my_bytes, tag));
    if (their_bytes > 0) {
      AXLE_POST(transfers, PostSend(group[i], in + begin(i) * element_bytes, their_bytes, tag));
    }
  }
  if (my_bytes > 0 && acc == my_piece) {
    std::memcpy(pieces + me * my_bytes, my_piece, my_bytes);
    my_piece = pieces + me * my_bytes;
  }
  AXLE_RETURN_IF_ERROR(Run(transfers));
  // Fold in member order.
  if (my_bytes > 0) {
    auto piece_of = [&](size_t i) {
      return static_cast<int>(i) == me ? my_piece : pieces + i * my_bytes;
    };
    if (acc != piece_of(0)) std::memcpy(acc, piece_of(0), my_bytes);
    for (size_t i = 1; i < n; ++i) AXLE_RETURN_IF_ERROR(reducer(acc, piece_of(i), my_count));
  }
  return acc;
}

absl::Status Communicator::AllReduce(absl::Span<const int> group, const void* input, void* output,
                                     int64_t count, int element_bytes, const Reducer& reducer) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, "all-reduce"));
  uint64_t tag = NextTag();
  AXLE_ASSIGN_OR_RETURN(char* acc,
                        FoldPiece(group, me, tag, input, output, count, element_bytes, reducer));
  // Hand the folded piece to everyone.
  size_t n = group.size();
  auto begin = [&](size_t i) { return PieceBegin(count, i, n); };
  auto* out = static_cast<char*>(output);
  int64_t my_bytes = (begin(me + 1) - begin(me)) * element_bytes;
  std::vector<std::unique_ptr<Transfer>> transfers;
  for (size_t i = 0; i < n; ++i) {
    int64_t their_bytes = (begin(i + 1) - begin(i)) * element_bytes;
    if (static_cast<int>(i) == me) continue;
    if (their_bytes > 0) {
      AXLE_POST(transfers,
                PostRecv(group[i], out + begin(i) * element_bytes, their_bytes, tag | 1));
    }
    if (my_bytes > 0) AXLE_POST(transfers, PostSend(group[i], acc, my_bytes, tag | 1));
  }
  return Run(transfers);
}

absl::Status Communicator::Reduce(absl::Span<const int> group, int root, const void* input,
                                  void* output, int64_t count, int element_bytes,
                                  const Reducer& reducer) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, "reduce"));
  AXLE_RETURN_IF_ERROR(CheckRoot(group, root, "reduce"));
  uint64_t tag = NextTag();
  AXLE_ASSIGN_OR_RETURN(char* acc, FoldPiece(group, me, tag, input, me == root ? output : nullptr,
                                             count, element_bytes, reducer));
  // The folded pieces go to the root alone.
  size_t n = group.size();
  auto begin = [&](size_t i) { return PieceBegin(count, i, n); };
  int64_t my_bytes = (begin(me + 1) - begin(me)) * element_bytes;
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (me == root) {
    auto* out = static_cast<char*>(output);
    for (size_t i = 0; i < n; ++i) {
      int64_t their_bytes = (begin(i + 1) - begin(i)) * element_bytes;
      if (static_cast<int>(i) == me || their_bytes == 0) continue;
      AXLE_POST(transfers,
                PostRecv(group[i], out + begin(i) * element_bytes, their_bytes, tag | 1));
    }
  } else if (my_bytes > 0) {
    AXLE_POST(transfers, PostSend(group[root], acc, my_bytes, tag | 1));
  }
  return Run(transfers);
}

absl::Status Communicator::CheckRoot(absl::Span<const int> group, int root, const char* op) const {
  if (root < 0 || root >= static_cast<int>(group.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": root ", root, " is not in a group of ", group.size()));
  }
  return absl::OkStatus();
}

absl::Status Communicator::RunRooted(absl::Span<const int> group, int root, int64_t bytes,
                                     const char* op, PostRooted post,
                                     absl::FunctionRef<void(int me)> own) {
  AXLE_ASSIGN_OR_RETURN(int me, IndexIn(group, op));
  AXLE_RETURN_IF_ERROR(CheckRoot(group, root, op));
  uint64_t tag = NextTag();
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (bytes > 0) {
    if (me == root) {
      for (size_t i = 0; i < group.size(); ++i) {
        if (static_cast<int>(i) != me) AXLE_POST(transfers, post(true, static_cast<int>(i), tag));
      }
      own(me);
    } else {
      AXLE_POST(transfers, post(false, root, tag));
    }
  }
  return Run(transfers);
}

absl::Status Communicator::Broadcast(absl::Span<const int> group, int root, void* data,
                                     int64_t bytes) {
  return RunRooted(
      group, root, bytes, "broadcast",
      [&](bool at_root, int peer, uint64_t tag) {
        return at_root ? PostSend(group[peer], data, bytes, tag)
                       : PostRecv(group[peer], data, bytes, tag);
      },
      [](int) {});
}

absl::Status Communicator::Gather(absl::Span<const int> group, int root, const void* input,
                                  void* output, int64_t bytes) {
  auto* out = static_cast<char*>(output);
  return RunRooted(
      group, root, bytes, "gather",
      [&](bool at_root, int peer, uint64_t tag) {
        return at_root ? PostRecv(group[peer], out + peer * bytes, bytes, tag)
                       : PostSend(group[peer], input, bytes, tag);
      },
      [&](int me) { std::memmove(out + me * bytes, input, bytes); });
}

absl::Status Communicator::Scatter(absl::Span<const int> group, int root, const void* input,
                                   void* output, int64_t bytes) {
  const auto* in = static_cast<const char*>(input);
  return RunRooted(
      group, root, bytes, "scatter",
      [&](bool at_root, int peer, uint64_t tag) {
        return at_root ? PostSend(group[peer], in + peer * bytes, bytes, tag)
                       : PostRecv(group[peer], output, bytes, tag);
      },
      [&](int me) { std::memmove(output, in + me * bytes, bytes); });
}

absl::Status Communicator::Permute(int target, const void* input, int source, void* output,
                                   int64_t bytes) {
  if (!broken_.ok()) return broken_;
  for (int peer : {target, source}) {
    if (peer < -1 || peer >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("collective-permute: rank ", peer, " is out of range (", Describe(), ")"));
    }
  }
  uint64_t tag = NextTag();
  std::vector<std::unique_ptr<Transfer>> transfers;
  if (bytes > 0) {
    if (source == rank_ && target == rank_) {
      std::memmove(output, input, bytes);
    } else {
      if (source >= 0) AXLE_POST(transfers, PostRecv(source, output, bytes, tag));
      if (target >= 0) AXLE_POST(transfers, PostSend(target, input, bytes, tag));
    }
  }
  return Run(transfers);
}

absl::StatusOr<std::unique_ptr<Communicator::Message>> Communicator::StartSend(int peer,
                                                                               const void* data,
                                                                               int64_t bytes,
                                                                               uint64_t tag) {
  if (!broken_.ok()) return broken_;
  if (peer < 0 || peer >= size_ || peer == rank_) {
    return absl::InvalidArgumentError(absl::StrCat("send: bad peer ", peer, " (", Describe(), ")"));
  }
  absl::StatusOr<std::unique_ptr<Transfer>> transfer = PostSend(peer, data, bytes, (tag << 8) | 1);
  if (!transfer.ok()) return Fail(transfer.status());
  std::unique_ptr<Message> message(new Message());
  message->transfer_ = *std::move(transfer);
  message->send_ = true;
  message->peer_ = peer;
  return message;
}

absl::StatusOr<std::unique_ptr<Communicator::Message>> Communicator::StartRecv(int peer, void* data,
                                                                               int64_t bytes,
                                                                               uint64_t tag) {
  if (!broken_.ok()) return broken_;
  absl::StatusOr<std::unique_ptr<Transfer>> transfer;
  if (peer == -1) {
    if (size_ < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("recv from any rank: there is no other rank (", Describe(), ")"));
    }
    std::vector<int> others;
    others.reserve(size_ - 1);
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) others.push_back(r);
    }
    transfer = PostRecvFromAny(others, data, bytes, (tag << 8) | 1);
  } else if (peer < 0 || peer >= size_ || peer == rank_) {
    return absl::InvalidArgumentError(absl::StrCat("recv: bad peer ", peer, " (", Describe(), ")"));
  } else {
    transfer = PostRecv(peer, data, bytes, (tag << 8) | 1);
  }
  if (!transfer.ok()) {
    // A transport without receives from any rank leaves the communicator usable.
    if (absl::IsUnimplemented(transfer.status())) return transfer.status();
    return Fail(transfer.status());
  }
  std::unique_ptr<Message> message(new Message());
  message->transfer_ = *std::move(transfer);
  message->peer_ = peer;
  if (peer >= 0) message->transfer_->source = peer;
  return message;
}

absl::StatusOr<int> Communicator::Finish(Message& message) {
  if (message.transfer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("finish: the message was finished already (", Describe(), ")"));
  }
  if (!broken_.ok()) return broken_;
  std::vector<std::unique_ptr<Transfer>> transfers;
  transfers.push_back(std::move(message.transfer_));
  absl::Status status = Wait(transfers, std::chrono::steady_clock::now() + timeout_);
  if (!status.ok()) return Fail(status);
  return message.send_ ? message.peer_ : transfers[0]->source;
}

absl::StatusOr<bool> Communicator::Test(Message& message) {
  if (message.transfer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("test: the message was finished already (", Describe(), ")"));
  }
  if (!broken_.ok()) return broken_;
  absl::StatusOr<bool> done = IsDone(*message.transfer_);
  if (!done.ok()) return Fail(done.status());
  return *done;
}

absl::Status Communicator::Barrier(absl::Span<const int> group) {
  char mine = 1;
  std::vector<char> all(group.size());
  return AllGather(group, &mine, all.data(), 1);
}

#undef AXLE_POST

// --- Threads in one process ----------------------------------------------------
//
// A message is matched by (source, destination, tag). Whichever side comes
// first leaves its buffer in the hub; the second copies and marks it done.

class InProcessHub {
 public:
  InProcessHub() = default;

  struct Slot {
    const void* send = nullptr;
    void* recv = nullptr;
    int64_t bytes = 0;
    bool done = false;
  };
  using Key = std::tuple<int, int, uint64_t>;

  // Posts one side; returns the key to wait on.
  absl::Status Post(const Key& key, const void* send, void* recv, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!aborted_.ok()) return aborted_;
    Slot& slot = slots_[key];
    if ((send != nullptr && slot.send != nullptr) || (recv != nullptr && slot.recv != nullptr)) {
      // One slot per (source, destination, tag): the collectives' tags are
      // unique, but point-to-point messages may repeat one.
      return absl::UnimplementedError(absl::StrCat(
          "in-process transport: a second message from rank ", std::get<0>(key), " to rank ",
          std::get<1>(key), " with one tag before the first has been finished"));
    }
    if (send != nullptr) slot.send = send;
    if (recv != nullptr) slot.recv = recv;
    if (slot.send != nullptr && slot.recv != nullptr) {
      if (slot.bytes != 0 && slot.bytes != bytes) {
        return Abort(absl::InvalidArgumentError(absl::StrCat(
            "rank ", std::get<0>(key), " sends ", send ? bytes : slot.bytes, " bytes to rank ",
            std::get<1>(key), ", which expects ", send ? slot.bytes : bytes)));
      }
      std::memcpy(slot.recv, slot.send, bytes);
      slot.done = true;
      changed_.notify_all();
    }
    slot.bytes = bytes;
    return absl::OkStatus();
  }

  // Waits until every key is done (and forgets the done ones).
  absl::Status Wait(absl::Span<const Key> keys, std::chrono::steady_clock::time_point deadline,
                    int rank) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (const Key& key : keys) {
      while (true) {
        auto it = slots_.find(key);
        if (it != slots_.end() && it->second.done) {
          // Both sides wait on the key; the second to see it done erases it.
          if (++it->second.waiters == 2) slots_.erase(it);
          break;
        }
        if (!aborted_.ok()) return aborted_;
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
          auto [source, destination, tag] = key;
          int peer = source == rank ? destination : source;
          return Abort(absl::DeadlineExceededError(
              absl::StrCat("rank ", rank, " timed out waiting for rank ", peer,
                           " (AXLE_COLLECTIVE_TIMEOUT): the peer failed or never arrived")));
        }
      }
    }
    return absl::OkStatus();
  }

  // Whether Wait would return at once for `key`: done, or aborted.
  bool IsDone(const Key& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = slots_.find(key);
    return (it != slots_.end() && it->second.done) || !aborted_.ok();
  }

  // Fails every waiting and later call with `status`.
  absl::Status Abort(absl::Status status) {
    if (aborted_.ok()) aborted_ = status;
    changed_.notify_all();
    return status;
  }
  void AbortLocked(absl::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    Abort(std::move(status)).IgnoreError();
  }

 private:
  struct Entry : Slot {
    int waiters = 0;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, Entry> slots_;
  absl::Status aborted_;
};

namespace {

class InProcessCommunicator : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessHub> hub, int rank, int size,
                        std::chrono::milliseconds timeout)
      : Communicator(rank, size, timeout), hub_(std::move(hub)) {}
  ~InProcessCommunicator() override {
    // A participant that leaves releases everyone still waiting for it.
    hub_->AbortLocked(absl::UnavailableError(
        absl::StrCat("rank ", rank(), " left the run (its communicator was destroyed)")));
  }

  std::string Describe() const override {
    return absl::StrCat("in-process rank ", rank(), " of ", size());
  }

 protected:
  struct Posted : Transfer {
    InProcessHub::Key key;
  };
  absl::StatusOr<std::unique_ptr<Transfer>> PostSend(int peer, const void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->key = {rank(), peer, tag};
    AXLE_RETURN_IF_ERROR(hub_->Post(posted->key, data, nullptr, bytes));
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecv(int peer, void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->key = {peer, rank(), tag};
    AXLE_RETURN_IF_ERROR(hub_->Post(posted->key, nullptr, data, bytes));
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecvFromAny(absl::Span<const int> /*peers*/,
                                                            void* /*data*/, int64_t /*bytes*/,
                                                            uint64_t /*tag*/) override {
    return absl::UnimplementedError(
        "recv from any rank: the in-process transport does not support it (Gloo and MPI do)");
  }
  absl::Status Wait(absl::Span<const std::unique_ptr<Transfer>> transfers,
                    std::chrono::steady_clock::time_point deadline) override {
    std::vector<InProcessHub::Key> keys;
    keys.reserve(transfers.size());
    for (const auto& transfer : transfers)
      keys.push_back(static_cast<Posted*>(transfer.get())->key);
    return hub_->Wait(keys, deadline, rank());
  }
  absl::StatusOr<bool> IsDone(Transfer& transfer) override {
    return hub_->IsDone(static_cast<Posted&>(transfer).key);
  }

 private:
  std::shared_ptr<InProcessHub> hub_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> MakeInProcessCommunicators(
    int size, std::chrono::milliseconds timeout) {
  auto hub = std::make_shared<InProcessHub>();
  std::vector<std::unique_ptr<Communicator>> result;
  result.reserve(size);
  for (int rank = 0; rank < size; ++rank) {
    result.push_back(std::make_unique<InProcessCommunicator>(hub, rank, size, timeout));
  }
  return result;
}

}  // namespace axle
