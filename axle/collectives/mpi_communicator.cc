//===- mpi_communicator.cc - Collectives over MPI --------------------------===//
#include "axle/collectives/mpi_communicator.h"

// The C API only: Open MPI's deprecated C++ bindings need a library of
// their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"

namespace axle {
namespace {

std::string MpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return absl::StrCat("error ", code);
  return std::string(text, length);
}

// MPI is initialized with MPI_THREAD_SERIALIZED: the communicators of one
// process (torch's process groups) take turns through this lock, call by
// call (a wait polls, so it never holds the lock for long).
std::mutex& MpiLock() {
  static auto* lock = new std::mutex();
  return *lock;
}
// The communicators alive; the last one to go finalizes MPI (which cannot
// be initialized twice) when it may (MayFinalize, below). A process that
// exits with communicators still alive (a Python program's process groups)
// finalizes at exit, on the same condition: mpirun counts a process that
// initialized MPI and never finalized it as a failure.
int live_communicators = 0;
// An MPI call failed (an error code, not a timeout).
std::atomic<bool> any_failed{false};

bool MayFinalize();

void FinalizeAtExit() {
  std::lock_guard<std::mutex> lock(MpiLock());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && MayFinalize()) MPI_Finalize();
}

// Cancels a pending transfer; MPI_Test frees the request (then null) once
// the cancellation completed. Cancelling a receive completes locally
// (MPI_Cancel), so it is waited for a bounded while; a send's may never
// complete (Open MPI's ob1 does not cancel sends), so it is tested once
// and its request may stay. Holds MpiLock().
void Cancel(MPI_Request& request, bool send) {
  if (MPI_Cancel(&request) != MPI_SUCCESS) return;
  const auto deadline =
      std::chrono::steady_clock::now() + (send ? std::chrono::seconds(0) : std::chrono::seconds(1));
  while (request != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&request, &done, &status) != MPI_SUCCESS) break;
    if (done) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// --- Stranded sends ------------------------------------------------------------
// A send that timed out and could not be cancelled stays posted: should
// its peer ever receive it, MPI reads its bytes then. So every send goes
// from a copy the transport owns (staged), and a stranded one keeps its
// copy here, whatever becomes of the caller's buffer, until MPI completes
// it; every later call (under MpiLock) releases those that have.
struct StrandedSend {
  MPI_Request request;
  std::vector<char> bytes;
};
std::vector<StrandedSend>& Stranded() {
  static auto* stranded = new std::vector<StrandedSend>();
  return *stranded;
}
// Holds MpiLock().
void ReleaseCompletedStrandedSends() {
  std::vector<StrandedSend>& stranded = Stranded();
  for (size_t i = 0; i < stranded.size();) {
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&stranded[i].request, &done, &status) == MPI_SUCCESS && !done) {
      ++i;
      continue;
    }
    stranded.erase(stranded.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// MPI_Finalize is collective in Open MPI (a PMIx fence over every process
// of the job): with a send still stranded, its peer may be the one that
// failed or never arrived, and the fence would wait for it. So it is
// skipped then (and after an MPI error); mpirun sees this process end
// without it and ends the run. After a timeout that left nothing posted
// (receives are cancelled; the peer took the stranded sends since) the
// process finalizes as usual. Holds MpiLock().
bool MayFinalize() {
  ReleaseCompletedStrandedSends();
  return !any_failed && Stranded().empty();
}

// Staging buffers, reused from send to send (fresh pages cost more than
// the copy: DESIGN.md, Memory). Holds MpiLock().
std::vector<std::vector<char>>& StagingPool() {
  static auto* pool = new std::vector<std::vector<char>>();
  return *pool;
}
std::vector<char> TakeStaging(int64_t bytes) {
  std::vector<std::vector<char>>& pool = StagingPool();
  for (auto it = pool.begin(); it != pool.end(); ++it) {
    if (static_cast<int64_t>(it->capacity()) >= bytes) {
      std::vector<char> staging = std::move(*it);
      pool.erase(it);
      staging.resize(bytes);
      return staging;
    }
  }
  return std::vector<char>(bytes);
}
void ReturnStaging(std::vector<char> staging) {
  // A few buffers (as many as the sends of one collective, typically), and
  // not too many bytes: the oldest go first.
  constexpr size_t kKept = 16;
  constexpr size_t kKeptBytes = size_t{512} << 20;
  std::vector<std::vector<char>>& pool = StagingPool();
  if (staging.capacity() == 0 || staging.capacity() > kKeptBytes) return;
  size_t bytes = staging.capacity();
  for (const std::vector<char>& kept : pool) bytes += kept.capacity();
  while (!pool.empty() && (pool.size() >= kKept || bytes > kKeptBytes)) {
    bytes -= pool.front().capacity();
    pool.erase(pool.begin());
  }
  pool.push_back(std::move(staging));
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, int tag_bound,
                  std::chrono::milliseconds timeout)
      : Communicator(rank, size, timeout), comm_(comm), tag_bound_(tag_bound) {}
  ~MpiCommunicator() override {
    std::lock_guard<std::mutex> lock(MpiLock());
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Pending transfers (stranded sends) complete normally after this.
    MPI_Comm_free(&comm_);
    if (--live_communicators == 0 && MayFinalize()) MPI_Finalize();
  }

  std::string Describe() const override {
    return absl::StrCat("mpi rank ", rank(), " of ", size());
  }

 protected:
  struct Posted : Transfer {
    // A receive dropped unfinished (a point-to-point message abandoned) is
    // cancelled, so that nothing lands in its buffer later; a send that
    // does not cancel is left to complete with its staged copy.
    ~Posted() override {
      std::lock_guard<std::mutex> lock(MpiLock());
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (finalized) return;
      if (request != MPI_REQUEST_NULL) Cancel(request, send);
      if (request != MPI_REQUEST_NULL) {
        Stranded().push_back({request, std::move(staged)});
      } else {
        ReturnStaging(std::move(staged));
      }
    }
    MPI_Request request = MPI_REQUEST_NULL;
    int peer = 0;  // MPI_ANY_SOURCE: a receive from any rank
    bool send = false;
    bool completed = false;    // by IsDone (then request is null)
    std::vector<char> staged;  // a send's copy of its bytes
  };

  int TagOf(uint64_t tag) const {
    return static_cast<int>(tag % (static_cast<uint64_t>(tag_bound_) + 1));
  }

  absl::StatusOr<std::unique_ptr<Transfer>> PostSend(int peer, const void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    posted->send = true;
    if (bytes > INT32_MAX) return Failed(absl::StrCat("send to rank ", peer), MPI_ERR_COUNT);
    std::lock_guard<std::mutex> lock(MpiLock());
    ReleaseCompletedStrandedSends();
    posted->staged = TakeStaging(bytes);
    if (bytes > 0) std::memcpy(posted->staged.data(), data, bytes);
    int code = MPI_Isend(posted->staged.data(), static_cast<int>(bytes), MPI_BYTE, peer, TagOf(tag),
                         comm_, &posted->request);
    if (code != MPI_SUCCESS) return Failed(absl::StrCat("send to rank ", peer), code);
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecv(int peer, void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    const std::string what = peer == MPI_ANY_SOURCE ? std::string("recv from any rank")
                                                    : absl::StrCat("recv from rank ", peer);
    if (bytes > INT32_MAX) return Failed(what, MPI_ERR_COUNT);
    std::lock_guard<std::mutex> lock(MpiLock());
    int code = MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, TagOf(tag), comm_,
                         &posted->request);
    if (code != MPI_SUCCESS) return Failed(what, code);
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecvFromAny(absl::Span<const int> peers, void* data,
                                                            int64_t bytes, uint64_t tag) override {
    // MPI_ANY_SOURCE is every rank; no rank sends to itself.
    if (static_cast<int>(peers.size()) != size() - 1) {
      return absl::UnimplementedError(absl::StrCat(Describe(), ": recv from any of ", peers.size(),
                                                   " ranks (MPI_ANY_SOURCE: all others)"));
    }
    return PostRecv(MPI_ANY_SOURCE, data, bytes, tag);
  }
  absl::Status Wait(absl::Span<const std::unique_ptr<Transfer>> transfers,
                    std::chrono::steady_clock::time_point deadline) override {
    std::vector<MPI_Request> requests;
    requests.reserve(transfers.size());
    for (const auto& transfer : transfers) {
      requests.push_back(static_cast<Posted*>(transfer.get())->request);
    }
    if (requests.empty()) return absl::OkStatus();
    std::vector<MPI_Status> statuses(requests.size());
    // Spin briefly (small messages finish in microseconds), then poll
    // with short sleeps until the deadline.
    int spins = 0;
    while (true) {
      int done = 0;
      int code;
      {
        std::lock_guard<std::mutex> lock(MpiLock());
        code =
            MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, statuses.data());
      }
      if (code != MPI_SUCCESS) return Failed("waiting for transfers", code);
      if (done) {
        for (size_t i = 0; i < requests.size(); ++i) {
          auto* posted = static_cast<Posted*>(transfers[i].get());
          posted->request = MPI_REQUEST_NULL;  // freed by MPI_Testall
          // One IsDone completed has its source already (a null request's
          // status is empty).
          if (!posted->send && !posted->completed) posted->source = statuses[i].MPI_SOURCE;
          posted->completed = true;
        }
        return absl::OkStatus();
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      if (++spins > 10000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::string first;
    std::lock_guard<std::mutex> lock(MpiLock());
    for (size_t i = 0; i < requests.size(); ++i) {
      auto* posted = static_cast<Posted*>(transfers[i].get());
      int done = 0;
      if (requests[i] != MPI_REQUEST_NULL) MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
      if (requests[i] == MPI_REQUEST_NULL) {  // finished (or by IsDone)
        posted->request = MPI_REQUEST_NULL;
        continue;
      }
      if (first.empty()) {
        first = absl::StrCat(posted->send ? "sending to " : "receiving from ",
                             posted->peer == MPI_ANY_SOURCE ? std::string("any rank")
                                                            : absl::StrCat("rank ", posted->peer));
      }
      // A transfer still posted is cancelled: a receive, so that a message
      // arriving later is not written into a buffer the caller has freed
      // by then. A send cannot be cancelled in Open MPI (ob1 does not
      // implement it, and MPI 4.0 deprecates it): it stays posted, reading
      // its staged copy, which becomes a stranded send's (see the README).
      Cancel(requests[i], posted->send);
      if (requests[i] != MPI_REQUEST_NULL) {
        Stranded().push_back({requests[i], std::move(posted->staged)});
      }
      posted->request = MPI_REQUEST_NULL;
    }
    return absl::DeadlineExceededError(
        absl::StrCat(Describe(), ": timed out ", first.empty() ? std::string("waiting") : first,
                     " (AXLE_COLLECTIVE_TIMEOUT): the peer failed or never arrived"));
  }
  absl::StatusOr<bool> IsDone(Transfer& transfer) override {
    auto& posted = static_cast<Posted&>(transfer);
    if (posted.completed) return true;
    int done = 0;
    MPI_Status status;
    std::lock_guard<std::mutex> lock(MpiLock());
    int code = MPI_Test(&posted.request, &done, &status);
    if (code != MPI_SUCCESS) return Failed("testing a transfer", code);
    if (!done) return false;
    posted.completed = true;  // MPI_Test freed the request
    if (!posted.send) posted.source = status.MPI_SOURCE;
    return true;
  }

 private:
  absl::Status Failed(const std::string& what, int code) {
    any_failed = true;
    return absl::UnavailableError(absl::StrCat(Describe(), ": ", what, ": ", MpiError(code)));
  }

  MPI_Comm comm_;
  int tag_bound_;
};

// MPI_Init_thread, given `timeout`. Open MPI's MPI_Init waits for every
// rank of the job (a PMIx fence in ompi_mpi_init), so a rank that never
// starts would hold the others there forever, out of reach of the
// collectives' timeouts. It runs on a thread of its own; past the timeout
// the call fails, naming the cause, and the thread is left in MPI_Init
// (MPI cannot start again in this process): the process ends with the
// error, and mpirun, seeing a rank end, ends the job. Holds MpiLock().
absl::Status InitializeWithin(std::chrono::milliseconds timeout) {
  struct Init {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    int code = MPI_SUCCESS;
  };
  static absl::Status abandoned;  // a timed-out init, reported again
  if (!abandoned.ok()) return abandoned;
  auto init = std::make_shared<Init>();
  std::thread([init] {
    int provided = 0;
    int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    std::lock_guard<std::mutex> lock(init->mutex);
    init->code = code;
    init->finished = true;
    init->done.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(init->mutex);
  if (!init->done.wait_for(lock, timeout, [&] { return init->finished; })) {
    abandoned = absl::DeadlineExceededError(absl::StrCat(
        "mpi: MPI_Init did not return within ", timeout.count() / 1000.0,
        " s (AXLE_COLLECTIVE_TIMEOUT): a rank of the job never started (Open MPI's MPI_Init "
        "waits for every rank)"));
    return abandoned;
  }
  if (init->code != MPI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("mpi: MPI_Init_thread: ", MpiError(init->code)));
  }
  return absl::OkStatus();
}

}  // namespace

int StrandedMpiSends() {
  std::lock_guard<std::mutex> lock(MpiLock());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) ReleaseCompletedStrandedSends();
  return static_cast<int>(Stranded().size());
}

bool StartedByMpiLauncher() { return EnvironmentOptions::Read().started_by_mpi_launcher; }

absl::StatusOr<std::unique_ptr<Communicator>> ConnectMpi(std::chrono::milliseconds timeout,
                                                         absl::Span<const int> world_ranks) {
  std::lock_guard<std::mutex> lock(MpiLock());
  int initialized = 0;
  MPI_Initialized(&initialized);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    return absl::FailedPreconditionError(
        "mpi: MPI was finalized (its communicators were destroyed) and cannot start again");
  }
  if (!initialized) {
    AXLE_RETURN_IF_ERROR(InitializeWithin(timeout));
    std::atexit(FinalizeAtExit);
  }
  // Errors come back as codes, not as the default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (int r : world_ranks) {
    if (r < 0 || r >= world_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("mpi: rank ", r, " is not in MPI_COMM_WORLD (", world_size, " ranks)"));
    }
  }
  MPI_Comm comm = MPI_COMM_NULL;
  int code;
  if (world_ranks.empty()) {
    code = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  } else {
    // Collective over the members only (MPI 3.0), in their order.
    MPI_Group world = MPI_GROUP_NULL, members = MPI_GROUP_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    code =
        MPI_Group_incl(world, static_cast<int>(world_ranks.size()), world_ranks.data(), &members);
    if (code == MPI_SUCCESS) code = MPI_Comm_create_group(MPI_COMM_WORLD, members, 0, &comm);
    MPI_Group_free(&world);
    if (members != MPI_GROUP_NULL) MPI_Group_free(&members);
  }
  if (code != MPI_SUCCESS || comm == MPI_COMM_NULL) {
    return absl::UnavailableError(absl::StrCat(
        "mpi: making the communicator: ",
        code != MPI_SUCCESS ? MpiError(code) : std::string("this rank is not a member")));
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
  int tag_bound = found && bound != nullptr ? *bound : 32767;
  ++live_communicators;
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, rank, size, tag_bound, timeout));
}

}  // namespace axle
