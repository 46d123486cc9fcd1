//===- nccl_collective_thunk.h - Collectives among GPUs, on NCCL ------------===//
//
// XLA:GPU's collective thunks. A module compiled for several devices
// (replica_count * num_partitions > 1) keeps its collectives (the compiler
// makes -start/-done pairs synchronous and send/recv pairs
// collective-permutes: single_device_collectives.h); each becomes an
// NcclCollectiveThunk that runs on the executable's stream through NCCL
// (nccl_library.h), on the communicator of its clique (nccl_clique.h):
//
//   all-reduce       ncclAllReduce per operand (sum, prod, min, max)
//   reduce-scatter   ncclReduceScatter
//   all-gather       ncclAllGather (bytes)
//   all-to-all       ncclSend/ncclRecv of each piece to and from each member
//   collective-permute  ncclSend to the target, ncclRecv from the source;
//                    no source: the result is zeros (a memset)
//   collective-broadcast  ncclBroadcast from the group's first member
//
// each thunk's calls in one ncclGroupStart/End. The device is the run's
// participant (ExecutableRunOptions::participant(), whose flattened id
// picks its group); its host communicator exchanges the cliques' unique
// ids. With AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE=1 a one-device module keeps
// its collectives too, each run by a one-rank communicator (how one GPU
// tests this path).
//
// Bounded waits: the communicators are non-blocking; after enqueuing, the
// thunk waits on the host for an event after the collective, polling NCCL's
// asynchronous error, until AXLE_COLLECTIVE_TIMEOUT (the host
// communicator's timeout). Past it the communicator is aborted
// (ncclCommAbort stops its kernels) and the run fails with
// DeadlineExceeded naming the op: a peer that never joins is an error,
// never a hang. That wait costs each collective a host synchronization; the
// thunks are not captured in CUDA graphs.
//
// Without NCCL (no library at run time, or no nccl.h at build time) the
// thunk's Execute fails with an error naming NCCL; the plan is still made
// and printed, so compiling needs neither.
//
// Internal to axle/gpu: this header includes cuda.h (gpu_thunk.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_NCCL_COLLECTIVE_THUNK_H_
#define AXLE_GPU_NCCL_COLLECTIVE_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/nccl_collective_plan.h"

namespace axle::gpu {

class NcclCollectiveThunk : public GpuThunk {
 public:
  // The thunk of `instruction` (a synchronous collective) over `values`:
  // one operand value per operand, one output per operand.
  static absl::StatusOr<std::unique_ptr<NcclCollectiveThunk>> Create(
      const HloInstruction& instruction, GpuThunkValues values);

  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override { return values_; }
  const NcclCollectivePlan& plan() const { return plan_; }

 private:
  NcclCollectiveThunk(std::string name, NcclCollectivePlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)), plan_(std::move(plan)), values_(std::move(values)) {}

  NcclCollectivePlan plan_;
  GpuThunkValues values_;
};

// replica-id / partition-id of a module of several devices: the run's
// participant's id, copied to the device.
class GpuDeviceIdThunk : public GpuThunk {
 public:
  GpuDeviceIdThunk(std::string name, bool partition, DeviceGrid grid, int64_t output)
      : GpuThunk(std::move(name)), partition_(partition), grid_(grid), output_(output) {}
  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override { return {{}, {output_}}; }

 private:
  bool partition_;
  DeviceGrid grid_;
  int64_t output_;
};

// The run's participant, checked against the module's grid: its flattened
// id. A one-device grid accepts a run without a participant (id 0).
// FailedPrecondition naming `name` otherwise.
absl::StatusOr<int64_t> ParticipantIdOf(const GpuThunkContext& context, const DeviceGrid& grid,
                                        const std::string& name);

}  // namespace axle::gpu

#endif  // AXLE_GPU_NCCL_COLLECTIVE_THUNK_H_
