//===- mpi_communicator.cc - Collectives over MPI --------------------------===//
#include "axle/collectives/mpi_communicator.h"

// The C API only: Open MPI's deprecated C++ bindings need a library of
// their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

namespace axle {
namespace {

std::string MpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return absl::StrCat("error ", code);
  return std::string(text, length);
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, int tag_bound,
                  std::chrono::milliseconds timeout)
      : Communicator(rank, size, timeout), comm_(comm), tag_bound_(tag_bound) {}
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (failed_) {
      // After a timeout the receives are cancelled, but sends may still be
      // posted, and MPI_Finalize is collective in Open MPI (a PMIx fence
      // over every process of the job): it would wait for the peer that
      // failed or never arrived. So it is skipped; mpirun sees this process
      // end without MPI_Finalize and ends the run.
      return;
    }
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }

  std::string Describe() const override {
    return absl::StrCat("mpi rank ", rank(), " of ", size());
  }

 protected:
  struct Posted : Transfer {
    MPI_Request request = MPI_REQUEST_NULL;
    int peer = 0;
    bool send = false;
  };

  int TagOf(uint64_t tag) const {
    return static_cast<int>(tag % (static_cast<uint64_t>(tag_bound_) + 1));
  }

  absl::StatusOr<std::unique_ptr<Transfer>> PostSend(int peer, const void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    posted->send = true;
    int code = MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, peer, TagOf(tag), comm_,
                         &posted->request);
    if (bytes > INT32_MAX) code = MPI_ERR_COUNT;
    if (code != MPI_SUCCESS) return Failed(absl::StrCat("send to rank ", peer), code);
    return posted;
  }
  absl::StatusOr<std::unique_ptr<Transfer>> PostRecv(int peer, void* data, int64_t bytes,
                                                     uint64_t tag) override {
    auto posted = std::make_unique<Posted>();
    posted->peer = peer;
    if (bytes > INT32_MAX) return Failed(absl::StrCat("recv from rank ", peer), MPI_ERR_COUNT);
    int code = MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, TagOf(tag), comm_,
                         &posted->request);
    if (code != MPI_SUCCESS) return Failed(absl::StrCat("recv from rank ", peer), code);
    return posted;
  }
  absl::Status Wait(absl::Span<const std::unique_ptr<Transfer>> transfers,
                    std::chrono::steady_clock::time_point deadline) override {
    std::vector<MPI_Request> requests;
    requests.reserve(transfers.size());
    for (const auto& transfer : transfers) {
      requests.push_back(static_cast<Posted*>(transfer.get())->request);
    }
    if (requests.empty()) return absl::OkStatus();
    // Spin briefly (small messages finish in microseconds), then poll
    // with short sleeps until the deadline.
    int spins = 0;
    while (true) {
      int done = 0;
      int code = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                             MPI_STATUSES_IGNORE);
      if (code != MPI_SUCCESS) return Failed("waiting for transfers", code);
      if (done) return absl::OkStatus();
      if (std::chrono::steady_clock::now() >= deadline) break;
      if (++spins > 10000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    failed_ = true;
    std::string first;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      auto* posted = static_cast<Posted*>(transfers[i].get());
      if (first.empty()) {
        first =
            absl::StrCat(posted->send ? "sending to" : "receiving from", " rank ", posted->peer);
      }
      // A receive still posted is cancelled, so that a message arriving
      // later is not written into a buffer the caller has freed by then.
      // Cancelling a receive completes locally (the MPI standard, MPI_Cancel); a send
      // cannot be cancelled in Open MPI (ob1 does not implement it, and
      // MPI 4.0 deprecates it): it stays posted (see the README).
      if (!posted->send) CancelReceive(requests[i]);
    }
    return absl::DeadlineExceededError(
        absl::StrCat(Describe(), ": timed out ", first.empty() ? std::string("waiting") : first,
                     " (AXLE_COLLECTIVE_TIMEOUT): the peer failed or never arrived"));
  }

 private:
  // Cancels a pending receive and waits (locally, a bounded while) for the
  // cancellation to complete; MPI_Test frees the request.
  void CancelReceive(MPI_Request& request) {
    if (MPI_Cancel(&request) != MPI_SUCCESS) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (request != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Status status;
      if (MPI_Test(&request, &done, &status) != MPI_SUCCESS) break;
      if (done) return;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  absl::Status Failed(const std::string& what, int code) {
    failed_ = true;
    return absl::UnavailableError(absl::StrCat(Describe(), ": ", what, ": ", MpiError(code)));
  }

  MPI_Comm comm_;
  int tag_bound_;
  bool failed_ = false;
};

}  // namespace

bool StartedByMpiLauncher() { return EnvironmentOptions::Read().started_by_mpi_launcher; }

absl::StatusOr<std::unique_ptr<Communicator>> ConnectMpi(std::chrono::milliseconds timeout) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS) {
      return absl::UnavailableError(absl::StrCat("mpi: MPI_Init_thread: ", MpiError(code)));
    }
  }
  // Errors come back as codes, not as the default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm comm = MPI_COMM_NULL;
  int code = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (code != MPI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("mpi: MPI_Comm_dup: ", MpiError(code)));
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
  int tag_bound = found && bound != nullptr ? *bound : 32767;
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, rank, size, tag_bound, timeout));
}

}  // namespace axle
