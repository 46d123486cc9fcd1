//===- nccl_clique.cc - NCCL communicators, one per clique and device -------===//
#include "axle/gpu/nccl_clique.h"

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"

namespace axle::gpu {
namespace {

using Key = std::pair<std::vector<int64_t>, int>;  // the clique's devices, the CUDA ordinal

struct Cache {
  std::mutex mutex;
  std::map<Key, std::unique_ptr<NcclComm>> comms;
  // Aborted ones: a caller may still hold their mutex.
  std::vector<std::unique_ptr<NcclComm>> retired;
};

Cache& TheCache() {
  static auto* cache = new Cache;  // communicators live as long as the process
  return *cache;
}

}  // namespace

absl::Status WaitForNcclComm(const NcclLibrary& nccl, ncclComm_t comm,
                             std::chrono::steady_clock::time_point deadline,
                             absl::string_view what) {
  auto pause = std::chrono::microseconds(20);
  while (true) {
    ncclResult_t state = ncclSuccess;
    AXLE_RETURN_IF_ERROR(
        nccl.ToStatus(nccl.ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", comm));
    if (state != ncclInProgress) return nccl.ToStatus(state, what, comm);
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("NCCL ", what,
                       " did not finish within the collective timeout "
                       "(AXLE_COLLECTIVE_TIMEOUT)"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

absl::StatusOr<NcclComm*> AcquireNcclComm(const NcclLibrary& nccl, const CudaDevice& device,
                                          const NcclClique& clique, Communicator* host,
                                          std::chrono::milliseconds timeout) {
  Cache& cache = TheCache();
  const Key key{clique.devices, device.ordinal()};
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.comms.find(key);
    if (it != cache.comms.end()) return it->second.get();
  }
  const auto size = static_cast<int>(clique.devices.size());
  const std::string what = absl::StrCat("communicator of devices ", clique.ToString());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // 1. The unique id, from rank 0 to the others over the host transport
  // (unlocked: the peers may be threads of this process).
  ncclUniqueId id{};
  if (clique.rank == 0) {
    AXLE_RETURN_IF_ERROR(nccl.ToStatus(nccl.ncclGetUniqueId(&id), "ncclGetUniqueId"));
  }
  if (size > 1) {
    if (host == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("NCCL: the ", what,
                       " needs the run's host communicator to exchange its unique id "
                       "(ExecutableRunOptions::set_participant)"));
    }
    std::vector<int> group(clique.devices.begin(), clique.devices.end());
    absl::Status exchanged = host->Broadcast(group, 0, &id, sizeof(id));
    if (!exchanged.ok()) {
      return absl::Status(exchanged.code(), absl::StrCat("NCCL: exchanging the unique id of the ",
                                                         what, ": ", exchanged.message()));
    }
  }
  // 2. Non-blocking init, bounded by the timeout.
  CudaDevice::ScopedActivation activation(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t started =
      nccl.ncclCommInitRankConfig(&comm, size, id, static_cast<int>(clique.rank), &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    if (comm != nullptr) nccl.ncclCommAbort(comm);
    return nccl.ToStatus(started, absl::StrCat("ncclCommInitRankConfig (", what, ")"));
  }
  absl::Status ready =
      WaitForNcclComm(nccl, comm, deadline, absl::StrCat("ncclCommInitRankConfig (", what, ")"));
  if (!ready.ok()) {
    nccl.ncclCommAbort(comm);
    return ready;
  }
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto made = std::make_unique<NcclComm>();
  made->comm = comm;
  auto [it, inserted] = cache.comms.emplace(key, std::move(made));
  if (!inserted) {
    // Another thread of this device made it meanwhile: its ranks paired
    // with ours only if they took the same exchange, so keep the first.
    nccl.ncclCommAbort(comm);
  }
  return it->second.get();
}

void AbortNcclComm(const NcclLibrary& nccl, NcclComm* comm) {
  Cache& cache = TheCache();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    for (auto it = cache.comms.begin(); it != cache.comms.end(); ++it) {
      if (it->second.get() != comm) continue;
      cache.retired.push_back(std::move(it->second));
      cache.comms.erase(it);
      break;
    }
  }
  if (comm->comm != nullptr) nccl.ncclCommAbort(comm->comm);
  comm->comm = nullptr;
}

}  // namespace axle::gpu
