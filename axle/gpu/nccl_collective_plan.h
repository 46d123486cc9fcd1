//===- nccl_collective_plan.h - What an NCCL collective thunk does ----------===//
//
// The host half of the cuda backend's collectives among several GPUs
// (nccl_collective_thunk.h runs them on NCCL): an HLO collective read once,
// at compile time, into the calls it makes, with no CUDA or NCCL type, so it
// is tested without a GPU.
//
//  - Who takes part: the participant groups of flattened device ids
//    (replica * partition_count + partition), read from replica_groups,
//    channel_id and use_global_device_ids as XLA defines them
//    (collectives/replica_groups.h); collective-permute's source-target
//    pairs as flattened ids.
//  - Which communicator: a device's NcclClique is its group's devices in
//    group order (its rank: its place there); collective-permute uses the
//    clique of every device of the grid. One NCCL communicator per distinct
//    clique and device (nccl_clique.h), as XLA:GPU's cliques.
//  - What moves: per operand, the NCCL element type and count. Reductions
//    (all-reduce, reduce-scatter) need a type NCCL reduces: s8, u8, s32,
//    u32, s64, u64, f16, bf16, f32, f64, and pred (u8: and/or as min/max);
//    c64/c128 add as pairs of f32/f64. to_apply must be one add, multiply,
//    minimum or maximum of its two parameters (either order; on pred also
//    and, or). Anything else is Unimplemented naming the op and the type.
//    Data movement (all-gather, all-to-all, collective-permute,
//    collective-broadcast) moves bytes, any byte-sized type.
//  - Where: all-gather, reduce-scatter and the array form of all-to-all cut
//    along a dimension; NCCL's pieces are contiguous, so every dimension
//    more major than it (in the layout) must have size 1, else
//    Unimplemented (the cpu thunks pack around the call; not here yet).
//
// Not planned (Unimplemented naming the op): asynchronous -start forms the
// compiler did not make synchronous, the in-place collective-permute, a
// permute with _xla_send_recv_validation, ragged-all-to-all.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_NCCL_COLLECTIVE_PLAN_H_
#define AXLE_GPU_NCCL_COLLECTIVE_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/collectives/replica_groups.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

enum class NcclCollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kCollectivePermute,
  kCollectiveBroadcast,
};

// ncclRedOp_t's kinds (nccl_collective_thunk.cc maps them).
enum class NcclReduction { kNone, kSum, kProduct, kMin, kMax };

// ncclDataType_t's types (nccl_collective_thunk.cc maps them).
enum class NcclElement {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kBfloat16,
  kFloat32,
  kFloat64,
};

// One operand and the result leaf it becomes.
struct NcclBuffer {
  NcclElement element = NcclElement::kUint8;
  // Elements of `element` in the operand and in the result (bytes for data
  // movement; twice the elements for complex sums).
  int64_t operand_count = 0;
  int64_t result_count = 0;
  int64_t operand_bytes = 0;
  int64_t result_bytes = 0;
};

struct NcclCollectivePlan {
  NcclCollectiveKind kind = NcclCollectiveKind::kAllReduce;
  DeviceGrid grid;
  // Participant groups (not for collective-permute), flattened ids.
  std::vector<std::vector<int64_t>> groups;
  // collective-permute's (source, target) pairs, flattened ids.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  NcclReduction reduction = NcclReduction::kNone;
  // One per operand; operand k becomes result leaf k.
  std::vector<NcclBuffer> buffers;
  // all-to-all without a dimension: operand m goes to member m.
  bool tuple_all_to_all = false;
};

// The devices of one communicator, in rank order, and a device's rank.
struct NcclClique {
  std::vector<int64_t> devices;
  int64_t rank = 0;
  std::string ToString() const;  // "{0,1,2,3} rank 1"
};

// The plan of a synchronous collective of a module compiled for the
// module's grid (replica_count x num_partitions); Unimplemented naming the
// op, the instruction and what is missing otherwise.
absl::StatusOr<NcclCollectivePlan> MakeNcclCollectivePlan(const HloInstruction& instruction);

// Whether every dimension more major than `dim` in the shape's layout
// (row-major without one) has size 1: the pieces NCCL moves, cut along
// `dim`, are then contiguous.
bool NcclPiecesContiguous(const Shape& shape, int64_t dim);

// The clique `device` (a flattened id) uses for `plan`; InvalidArgument
// when it is in no group.
absl::StatusOr<NcclClique> NcclCliqueOf(const NcclCollectivePlan& plan, int64_t device);

// collective-permute: the flattened ids `device` receives from and sends
// to (-1: none).
struct NcclPermutePeers {
  int64_t source = -1;
  int64_t target = -1;
};
NcclPermutePeers NcclPermutePeersOf(const NcclCollectivePlan& plan, int64_t device);

// "all-reduce sum f32[1024] groups {{0,1},{2,3}}": what GpuProgramToString
// lists for the thunk.
std::string NcclCollectivePlanToString(const NcclCollectivePlan& plan);

}  // namespace axle::gpu

#endif  // AXLE_GPU_NCCL_COLLECTIVE_PLAN_H_
