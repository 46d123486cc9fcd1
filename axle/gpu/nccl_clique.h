//===- nccl_clique.h - NCCL communicators, one per clique and device --------===//
//
// XLA:GPU's cliques: the NCCL communicator a collective runs on is made the
// first time a device meets its clique (nccl_collective_plan.h: the
// clique's devices in rank order, flattened ids) and kept for the process,
// keyed by the clique's devices and the CUDA device: every later collective
// of those devices, in any executable, reuses it.
//
// Making one (AcquireNcclComm):
//  1. the clique's rank 0 asks NCCL for a unique id (ncclGetUniqueId) and
//     broadcasts it to the clique's devices over the run's host communicator
//     (RunParticipant::communicator: the Gloo, MPI or in-process transport
//     whose rendezvous the processes, or threads, already met through; its
//     ranks are the flattened ids). A one-device clique needs no exchange.
//  2. each rank calls ncclCommInitRankConfig, non-blocking (config.blocking
//     = 0), with its device's context current, then polls
//     ncclCommGetAsyncError until the communicator is ready.
// Both steps are bounded by the host communicator's timeout
// (AXLE_COLLECTIVE_TIMEOUT): a rank that never arrives fails the others
// with DeadlineExceeded (the broadcast's, or NCCL's init aborted with
// ncclCommAbort), never a hang. Several GPUs of one process are one thread
// each (the interpreter's and cpu's participants), each calling this for
// its device: NCCL's grouped init is the threads' concurrent init calls.
//
// Every rank of a run reaches the same cliques in the same order (SPMD), so
// the exchanges pair up; the host communicator numbers its calls.
//
// Internal to axle/gpu: this header includes nccl.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_NCCL_CLIQUE_H_
#define AXLE_GPU_NCCL_CLIQUE_H_

#include <nccl.h>

#include <chrono>
#include <mutex>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/nccl_collective_plan.h"
#include "axle/gpu/nccl_library.h"

namespace axle {
class Communicator;
}  // namespace axle

namespace axle::gpu {

// A communicator of the cache. Calls on it hold `mutex` (NCCL's calls on one
// communicator must not race).
struct NcclComm {
  ncclComm_t comm = nullptr;
  std::mutex mutex;
};

// The communicator of `clique` on `device`, made as above the first time.
// `host` may be null for a one-device clique. FailedPrecondition when a
// clique of several devices has no host communicator.
absl::StatusOr<NcclComm*> AcquireNcclComm(const NcclLibrary& nccl, const CudaDevice& device,
                                          const NcclClique& clique, Communicator* host,
                                          std::chrono::milliseconds timeout);

// Aborts `comm` (ncclCommAbort: its kernels stop) and drops it from the
// cache: the next collective of the clique makes a new one.
void AbortNcclComm(const NcclLibrary& nccl, NcclComm* comm);

// Polls ncclCommGetAsyncError until the communicator's pending calls are
// done (non-blocking communicators return ncclInProgress); an error is
// NCCL's (naming `what`); past `deadline`, DeadlineExceeded naming `what`.
absl::Status WaitForNcclComm(const NcclLibrary& nccl, ncclComm_t comm,
                             std::chrono::steady_clock::time_point deadline,
                             absl::string_view what);

}  // namespace axle::gpu

#endif  // AXLE_GPU_NCCL_CLIQUE_H_
