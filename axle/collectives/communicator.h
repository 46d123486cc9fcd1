//===- communicator.h - Collectives among the processes of a run -----------===//
//
// A Communicator connects `size()` participants (processes, or threads of
// one process) and runs XLA's collectives among any group of them. A
// transport supplies point-to-point messages only (PostSend / PostRecv /
// Wait / IsDone, with a tag); the collectives are built on them here, once, so every
// transport (Gloo over TCP, MPI, threads in one process) computes the same
// bits:
//
//  - Reductions use a fixed order: element k of the result is
//    ((v[g0] op v[g1]) op v[g2]) ... in the group's order, whatever the
//    number of participants. The work is spread as reduce-scatter + all-
//    gather (each member folds one piece, in group order, then sends it to
//    all), so the bytes moved match a ring's while the sum does not depend
//    on the ring's rotation. This is the order the interpreter folds in,
//    which is what makes results bit-identical to it.
//  - Every call takes `group`, the participants' ranks in XLA's order
//    (replica_groups.h); the caller must be in it. Every rank of the
//    communicator makes every collective call, in the same order, each in
//    its own group (SPMD: calls are numbered, and the n-th calls pair up),
//    and the members of a group pass the same sizes.
//  - Every wait is bounded by timeout() (AXLE_COLLECTIVE_TIMEOUT): a peer
//    that died or never arrives makes the call fail with DeadlineExceeded
//    or Unavailable naming the peer, never hang. After a failure the
//    communicator is unusable (later calls fail at once).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_COMMUNICATOR_H_
#define AXLE_COLLECTIVES_COMMUNICATOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"

namespace axle {

// Folds `count` elements of `input` into `accumulator` (acc = acc op in).
using Reducer = std::function<absl::Status(void* accumulator, const void* input, int64_t count)>;

// XLA's reduction kinds, applied elementwise; kAnd/kOr/kXor are bitwise
// (logical for pred), min/max propagate NaN.
enum class ReductionKind { kSum, kProduct, kMin, kMax, kAnd, kOr, kXor };

// The reducer for `kind` over elements of `type`: f32, f64, the 8..64-bit
// integers and pred (bitwise kinds: integers and pred only). Anything else
// is Unimplemented, naming the type.
absl::StatusOr<Reducer> MakeReducer(ReductionKind kind, PrimitiveType type);

// The default AXLE_COLLECTIVE_TIMEOUT (60 s) or the environment's value.
std::chrono::milliseconds CollectiveTimeoutFromEnvironment();

class Communicator {
 public:
  virtual ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // output[i*bytes .. (i+1)*bytes) receives member i's `input`.
  absl::Status AllGather(absl::Span<const int> group, const void* input, void* output,
                         int64_t bytes);
  // Member j receives piece j (bytes_per_member) of every member's input,
  // in member order: output[i] = input_of_member_i[j].
  absl::Status AllToAll(absl::Span<const int> group, const void* input, void* output,
                        int64_t bytes_per_member);
  // `count` elements of `element_bytes`; output may be input.
  absl::Status AllReduce(absl::Span<const int> group, const void* input, void* output,
                         int64_t count, int element_bytes, const Reducer& reducer);
  // input holds group.size() pieces of `count` elements; member j's output
  // is piece j folded over the members in order.
  absl::Status ReduceScatter(absl::Span<const int> group, const void* input, void* output,
                             int64_t count, int element_bytes, const Reducer& reducer);
  // group[root]'s data is copied into every member's data.
  absl::Status Broadcast(absl::Span<const int> group, int root, void* data, int64_t bytes);
  // group[root]'s output[i*bytes .. (i+1)*bytes) receives member i's
  // `input`; the other members' output is not touched (may be null).
  absl::Status Gather(absl::Span<const int> group, int root, const void* input, void* output,
                      int64_t bytes);
  // Member i's output receives piece i (`bytes`) of group[root]'s input;
  // only the root reads its input (the others' may be null).
  absl::Status Scatter(absl::Span<const int> group, int root, const void* input, void* output,
                       int64_t bytes);
  // group[root]'s output receives the members' inputs folded in member
  // order, the bits AllReduce gives; the others' output is not touched (may
  // be null). output may be input.
  absl::Status Reduce(absl::Span<const int> group, int root, const void* input, void* output,
                      int64_t count, int element_bytes, const Reducer& reducer);
  // collective-permute: sends `input` to `target` and receives `output` from
  // `source` (either may be -1: none). Every rank makes the call.
  absl::Status Permute(int target, const void* input, int source, void* output, int64_t bytes);
  absl::Status Barrier(absl::Span<const int> group);

  // --- Point to point: send/recv with a channel -------------------------------
  // `tag` names the channel: the n-th send of a tag to a rank meets that
  // rank's n-th receive of it. StartSend / StartRecv post the message and
  // return at once; Finish waits for it (until timeout() from the call).
  // Both sides may start before either finishes: two ranks that each start
  // a send and then receive do not wait on each other. Unlike the
  // collectives these need not be made by every rank. The buffer must stay
  // alive until Finish returns (a send's unchanged); a message dropped
  // unfinished is abandoned (the transport stops using its buffer: Gloo,
  // MPI, whose sends go from a copy; see the README).
  class Message;
  absl::StatusOr<std::unique_ptr<Message>> StartSend(int peer, const void* data, int64_t bytes,
                                                     uint64_t tag);
  // peer -1: from whichever other rank sends first with `tag` (MPI_ANY_SOURCE).
  absl::StatusOr<std::unique_ptr<Message>> StartRecv(int peer, void* data, int64_t bytes,
                                                     uint64_t tag);
  // Waits for the message; returns its peer (for a receive from any rank,
  // the rank it came from).
  absl::StatusOr<int> Finish(Message& message);
  // Whether the message has finished, without waiting: true means Finish
  // returns at once (with the message's peer, or the error it ended with:
  // a peer that closed its connection counts as finished). An error here
  // is the transport's own (the communicator is unusable after it).
  absl::StatusOr<bool> Test(Message& message);

  // A description for errors ("gloo rank 1 of 4").
  virtual std::string Describe() const = 0;

 protected:
  Communicator(int rank, int size, std::chrono::milliseconds timeout)
      : rank_(rank), size_(size), timeout_(timeout) {}

  // --- The transport ------------------------------------------------------
  // A posted transfer, finished by Wait. `source` is a receive's sender:
  // Wait sets it for a receive from any of several ranks.
  struct Transfer {
    virtual ~Transfer() = default;
    int source = -1;
  };
  virtual absl::StatusOr<std::unique_ptr<Transfer>> PostSend(int peer, const void* data,
                                                             int64_t bytes, uint64_t tag) = 0;
  virtual absl::StatusOr<std::unique_ptr<Transfer>> PostRecv(int peer, void* data, int64_t bytes,
                                                             uint64_t tag) = 0;
  // A receive from whichever of `peers` sends first with `tag`.
  virtual absl::StatusOr<std::unique_ptr<Transfer>> PostRecvFromAny(absl::Span<const int> peers,
                                                                    void* data, int64_t bytes,
                                                                    uint64_t tag) = 0;
  // Waits for every transfer until the deadline; the first failure wins.
  virtual absl::Status Wait(absl::Span<const std::unique_ptr<Transfer>> transfers,
                            std::chrono::steady_clock::time_point deadline) = 0;
  // Whether the transfer has finished (successfully or not), without
  // waiting: once true, Wait returns at once for it.
  virtual absl::StatusOr<bool> IsDone(Transfer& transfer) = 0;

 private:
  // Checks the group (ranks in range, no duplicates, this rank in it) and
  // returns this rank's index in it.
  absl::StatusOr<int> IndexIn(absl::Span<const int> group, const char* op) const;
  // Checks that root indexes the group.
  absl::Status CheckRoot(absl::Span<const int> group, int root, const char* op) const;
  // Broadcast, Gather and Scatter: checks the group and the root (errors
  // name `op`), then, unless `bytes` is 0, the root posts `post(true, i,
  // tag)` for every other member i and runs `own(me)` for its own part,
  // and every other member posts `post(false, root, tag)`; then runs them.
  using PostRooted = absl::FunctionRef<absl::StatusOr<std::unique_ptr<Transfer>>(
      bool at_root, int peer, uint64_t tag)>;
  absl::Status RunRooted(absl::Span<const int> group, int root, int64_t bytes, const char* op,
                         PostRooted post, absl::FunctionRef<void(int me)> own);
  // The first half of AllReduce and Reduce: member `me` receives piece `me`
  // (elements [count*me/n, count*(me+1)/n)) of every member's input and
  // folds them in member order into `output`'s piece `me` (output may be
  // input), or into scratch when output is null. Returns the folded piece.
  absl::StatusOr<char*> FoldPiece(absl::Span<const int> group, int me, uint64_t tag,
                                  const void* input, void* output, int64_t count, int element_bytes,
                                  const Reducer& reducer);
  // The tag of the next collective: every member numbers its collectives
  // alike, so the n-th call of each pairs up.
  uint64_t NextTag() { return (next_sequence_++ << 8) | 0x80; }
  absl::Status Run(std::vector<std::unique_ptr<Transfer>>& transfers);
  absl::Status Fail(absl::Status status);
  // A buffer of at least `bytes`, kept from call to call: fresh pages cost
  // more than the transfer (DESIGN.md, Memory).
  char* Scratch(size_t bytes);

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  uint64_t next_sequence_ = 1;
  absl::Status broken_;  // the first failure; later calls return it
  std::vector<char> scratch_;
};

class Communicator::Message {
 public:
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message() = default;
  bool is_send() const { return send_; }

 private:
  friend class Communicator;
  Message() = default;
  std::unique_ptr<Transfer> transfer_;
  bool send_ = false;
  int peer_ = -1;  // -1: a receive from any rank
};

// --- Threads in one process ------------------------------------------------
// N communicators that share memory: the interpreter's multi-participant
// mode, and the transport-independent tests of the algorithms above.
class InProcessHub;
std::vector<std::unique_ptr<Communicator>> MakeInProcessCommunicators(
    int size, std::chrono::milliseconds timeout);

}  // namespace axle

#endif  // AXLE_COLLECTIVES_COMMUNICATOR_H_
