//===- nccl_collective_thunk.cc - Collectives among GPUs, on NCCL -----------===//
#include "axle/gpu/nccl_collective_thunk.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/hlo/ir/hlo_instruction.h"

#if AXLE_HAVE_NCCL_H
#include "axle/gpu/nccl_clique.h"
#include "axle/gpu/nccl_library.h"
#endif

namespace axle::gpu {

absl::StatusOr<int64_t> ParticipantIdOf(const GpuThunkContext& context, const DeviceGrid& grid,
                                        const std::string& name) {
  const RunParticipant* participant =
      context.run_options != nullptr ? &context.run_options->participant() : nullptr;
  const bool one_device = grid.size() == 1;
  if (participant == nullptr || (participant->communicator == nullptr && !one_device)) {
    if (one_device) return 0;
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA: ", name, " is a collective of a module compiled for ", grid.replica_count,
        " replicas x ", grid.partition_count,
        " partitions; the run has no communicator (ExecutableRunOptions::set_participant)"));
  }
  if (participant->replica_count != grid.replica_count ||
      participant->partition_count != grid.partition_count ||
      (participant->communicator != nullptr && participant->communicator->size() != grid.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA: ", name, ": the module was compiled for ", grid.replica_count,
                     " replicas x ", grid.partition_count, " partitions, the run is one of ",
                     participant->replica_count, " x ", participant->partition_count));
  }
  const int64_t id = grid.FlattenedId(participant->replica_id, participant->partition_id);
  if (participant->replica_id < 0 || participant->replica_id >= grid.replica_count ||
      participant->partition_id < 0 || participant->partition_id >= grid.partition_count ||
      (participant->communicator != nullptr && id != participant->communicator->rank())) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA: ", name, ": device (replica ", participant->replica_id, ", partition ",
                     participant->partition_id, ") is not the host communicator's rank"));
  }
  return id;
}

absl::Status GpuDeviceIdThunk::Execute(const GpuThunkContext& context) const {
  AXLE_ASSIGN_OR_RETURN(int64_t id, ParticipantIdOf(context, grid_, name()));
  auto value = static_cast<uint32_t>(partition_ ? grid_.PartitionOf(id) : grid_.ReplicaOf(id));
  se::DeviceMemoryBase destination = context.buffer(output_);
  // From pageable memory: the driver stages it before returning.
  return context.stream->MemcpyHostToDevice(&destination, &value, sizeof(value));
}

absl::StatusOr<std::unique_ptr<NcclCollectiveThunk>> NcclCollectiveThunk::Create(
    const HloInstruction& instruction, GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(NcclCollectivePlan plan, MakeNcclCollectivePlan(instruction));
  AXLE_RETURN_IF_ERROR(
      CheckThunkValues(instruction, values, plan.buffers.size(), plan.buffers.size()));
  return std::unique_ptr<NcclCollectiveThunk>(
      new NcclCollectiveThunk(instruction.name(), std::move(plan), std::move(values)));
}

#if AXLE_HAVE_NCCL_H
namespace {

ncclDataType_t NcclType(NcclElement element) {
  switch (element) {
    case NcclElement::kInt8:
      return ncclInt8;
    case NcclElement::kUint8:
      return ncclUint8;
    case NcclElement::kInt32:
      return ncclInt32;
    case NcclElement::kUint32:
      return ncclUint32;
    case NcclElement::kInt64:
      return ncclInt64;
    case NcclElement::kUint64:
      return ncclUint64;
    case NcclElement::kFloat16:
      return ncclFloat16;
    case NcclElement::kBfloat16:
      return ncclBfloat16;
    case NcclElement::kFloat32:
      return ncclFloat32;
    case NcclElement::kFloat64:
      return ncclFloat64;
  }
  return ncclUint8;
}

ncclRedOp_t NcclOp(NcclReduction reduction) {
  switch (reduction) {
    case NcclReduction::kProduct:
      return ncclProd;
    case NcclReduction::kMin:
      return ncclMin;
    case NcclReduction::kMax:
      return ncclMax;
    case NcclReduction::kNone:
    case NcclReduction::kSum:
      return ncclSum;
  }
  return ncclSum;
}

// ncclSuccess, or ncclInProgress from a non-blocking communicator, is OK.
absl::Status Enqueued(const NcclLibrary& nccl, ncclResult_t result, const char* what,
                      ncclComm_t comm) {
  if (result == ncclInProgress) return absl::OkStatus();
  return nccl.ToStatus(result, what, comm);
}

}  // namespace

absl::Status NcclCollectiveThunk::Execute(const GpuThunkContext& context) const {
  const std::string op =
      absl::StrCat("CUDA: %", name(), " (", NcclCollectivePlanToString(plan_), ")");
  absl::StatusOr<const NcclLibrary*> library = NcclLibrary::Get();
  if (!library.ok()) {
    return absl::Status(library.status().code(),
                        absl::StrCat(op, " needs NCCL: ", library.status().message()));
  }
  const NcclLibrary& nccl = **library;
  AXLE_ASSIGN_OR_RETURN(int64_t me, ParticipantIdOf(context, plan_.grid, name()));
  absl::StatusOr<NcclClique> clique = NcclCliqueOf(plan_, me);
  if (!clique.ok()) return absl::InternalError(absl::StrCat(op, ": ", clique.status().message()));
  Communicator* host =
      context.run_options != nullptr ? context.run_options->participant().communicator : nullptr;
  const std::chrono::milliseconds timeout =
      host != nullptr ? host->timeout() : CollectiveTimeoutFromEnvironment();
  absl::StatusOr<NcclComm*> acquired =
      AcquireNcclComm(nccl, *context.device, *clique, host, timeout);
  if (!acquired.ok()) {
    return absl::Status(acquired.status().code(),
                        absl::StrCat(op, ": ", acquired.status().message()));
  }
  NcclComm& shared = **acquired;
  std::lock_guard<std::mutex> lock(shared.mutex);
  ncclComm_t comm = shared.comm;
  if (comm == nullptr) {
    return absl::UnavailableError(absl::StrCat(op, ": its NCCL communicator was aborted"));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  CudaDevice::ScopedActivation activation(*context.device);
  CUstream stream = context.stream->stream();
  auto in = [&](size_t k) { return DeviceAddress(context.address(values_.operands[k])); };
  auto out = [&](size_t k) { return DeviceAddress(context.address(values_.outputs[k])); };

  // collective-permute: zeros without a source, a copy for a self pair.
  NcclPermutePeers peers;
  if (plan_.kind == NcclCollectiveKind::kCollectivePermute) {
    peers = NcclPermutePeersOf(plan_, me);
    se::DeviceMemoryBase result = context.buffer(values_.outputs[0]);
    if (peers.source < 0) AXLE_RETURN_IF_ERROR(context.stream->Memset8(&result, 0, result.size()));
    if (peers.source == me) {
      AXLE_RETURN_IF_ERROR(context.stream->MemcpyDeviceToDevice(
          &result, context.buffer(values_.operands[0]), plan_.buffers[0].operand_bytes));
    }
  }

  AXLE_RETURN_IF_ERROR(Enqueued(nccl, nccl.ncclGroupStart(), "ncclGroupStart", comm));
  absl::Status status = [&]() -> absl::Status {
    const auto n = static_cast<int64_t>(clique->devices.size());
    for (size_t k = 0; k < plan_.buffers.size(); ++k) {
      const NcclBuffer& buffer = plan_.buffers[k];
      const ncclDataType_t type = NcclType(buffer.element);
      switch (plan_.kind) {
        case NcclCollectiveKind::kAllReduce:
          AXLE_RETURN_IF_ERROR(
              Enqueued(nccl,
                       nccl.ncclAllReduce(in(k), out(k), buffer.operand_count, type,
                                          NcclOp(plan_.reduction), comm, stream),
                       "ncclAllReduce", comm));
          break;
        case NcclCollectiveKind::kReduceScatter:
          AXLE_RETURN_IF_ERROR(
              Enqueued(nccl,
                       nccl.ncclReduceScatter(in(k), out(k), buffer.result_count, type,
                                              NcclOp(plan_.reduction), comm, stream),
                       "ncclReduceScatter", comm));
          break;
        case NcclCollectiveKind::kAllGather:
          AXLE_RETURN_IF_ERROR(Enqueued(
              nccl, nccl.ncclAllGather(in(k), out(k), buffer.operand_count, type, comm, stream),
              "ncclAllGather", comm));
          break;
        case NcclCollectiveKind::kCollectiveBroadcast:
          AXLE_RETURN_IF_ERROR(Enqueued(
              nccl, nccl.ncclBroadcast(in(k), out(k), buffer.operand_count, type, 0, comm, stream),
              "ncclBroadcast", comm));
          break;
        case NcclCollectiveKind::kAllToAll: {
          if (plan_.tuple_all_to_all) {
            // Operand k goes to member k; result k comes from member k.
            const auto peer = static_cast<int>(k);
            AXLE_RETURN_IF_ERROR(Enqueued(
                nccl, nccl.ncclSend(in(k), buffer.operand_bytes, ncclUint8, peer, comm, stream),
                "ncclSend", comm));
            AXLE_RETURN_IF_ERROR(Enqueued(
                nccl, nccl.ncclRecv(out(k), buffer.result_bytes, ncclUint8, peer, comm, stream),
                "ncclRecv", comm));
            break;
          }
          const int64_t piece = buffer.operand_bytes / n;
          for (int64_t j = 0; j < n; ++j) {
            AXLE_RETURN_IF_ERROR(
                Enqueued(nccl,
                         nccl.ncclSend(static_cast<char*>(in(k)) + j * piece, piece, ncclUint8,
                                       static_cast<int>(j), comm, stream),
                         "ncclSend", comm));
            AXLE_RETURN_IF_ERROR(
                Enqueued(nccl,
                         nccl.ncclRecv(static_cast<char*>(out(k)) + j * piece, piece, ncclUint8,
                                       static_cast<int>(j), comm, stream),
                         "ncclRecv", comm));
          }
          break;
        }
        case NcclCollectiveKind::kCollectivePermute:
          // Peers are flattened ids: the permute's clique is every device.
          if (peers.target >= 0 && peers.target != me) {
            AXLE_RETURN_IF_ERROR(
                Enqueued(nccl,
                         nccl.ncclSend(in(k), buffer.operand_bytes, ncclUint8,
                                       static_cast<int>(peers.target), comm, stream),
                         "ncclSend", comm));
          }
          if (peers.source >= 0 && peers.source != me) {
            AXLE_RETURN_IF_ERROR(
                Enqueued(nccl,
                         nccl.ncclRecv(out(k), buffer.result_bytes, ncclUint8,
                                       static_cast<int>(peers.source), comm, stream),
                         "ncclRecv", comm));
          }
          break;
      }
    }
    return absl::OkStatus();
  }();
  // The group is ended whatever happened inside it.
  absl::Status ended = Enqueued(nccl, nccl.ncclGroupEnd(), "ncclGroupEnd", comm);
  if (status.ok()) status = ended;
  if (status.ok()) status = WaitForNcclComm(nccl, comm, deadline, "enqueuing the collective");

  // The host waits for the collective, bounded by the timeout.
  absl::StatusOr<std::unique_ptr<CudaEvent>> done = CudaEvent::Create(*context.device);
  if (status.ok()) status = done.status();
  if (status.ok()) status = context.stream->RecordEvent(done->get());
  auto pause = std::chrono::microseconds(10);
  while (status.ok()) {
    absl::StatusOr<bool> complete = (*done)->IsComplete();
    if (!complete.ok()) {
      status = complete.status();
      break;
    }
    if (*complete) break;
    ncclResult_t state = ncclSuccess;
    status = nccl.ToStatus(nccl.ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", comm);
    if (status.ok() && state != ncclSuccess && state != ncclInProgress) {
      status = nccl.ToStatus(state, "the collective", comm);
    }
    if (status.ok() && std::chrono::steady_clock::now() > deadline) {
      status = absl::DeadlineExceededError(absl::StrCat(
          "a peer did not join within the collective timeout (AXLE_COLLECTIVE_TIMEOUT, ",
          timeout.count(), " ms); its NCCL communicator ", clique->ToString(), " was aborted"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
  if (status.ok()) return status;
  AbortNcclComm(nccl, &shared);
  return absl::Status(status.code(), absl::StrCat(op, ": ", status.message()));
}

#else  // !AXLE_HAVE_NCCL_H

absl::Status NcclCollectiveThunk::Execute(const GpuThunkContext& context) const {
  (void)context;
  return absl::UnimplementedError(
      absl::StrCat("CUDA: %", name(), " (", NcclCollectivePlanToString(plan_),
                   ") needs NCCL; Axle was built without nccl.h (axle/gpu/README.md)"));
}

#endif  // AXLE_HAVE_NCCL_H

}  // namespace axle::gpu
