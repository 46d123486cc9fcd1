//===- replica_groups.h - Who takes part in a collective -------------------===//
//
// Resolves a collective's replica_groups (the list form `{{0,1},{2,3}}` or
// the iota form `[2,2]<=[4]`) into groups of participants, as XLA defines
// it (xla/service/collective_ops_utils: CollectiveOpGroupMode):
//
//   channel_id  use_global_device_ids  mode                      ids in the groups
//   absent      false / n.a.           kCrossReplica             replica ids; same partition
//   present     n.a. (permute, a2a,    kCrossPartition           partition ids; same replica
//               broadcast)
//   present     false                  kCrossReplicaAndPartition replica ids; every partition
//                                                                of each replica
//   present     true                   kFlattenedID              flattened ids
//   absent      true                   error
//
// A participant is named by its flattened id, replica_id * partition_count
// + partition_id; in a multi-process run process i plays flattened id i.
// A group lists its participants in the order XLA uses: the order all-gather
// concatenates and reduce-scatter hands out pieces in, and the order this
// project reduces in (see communicator.h). Empty replica_groups mean one
// group of every replica (or partition, or device).
//
// These are pure functions of the attributes and the device grid; errors
// (ids out of range, an id twice, a device in no group) are InvalidArgument.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_REPLICA_GROUPS_H_
#define AXLE_COLLECTIVES_REPLICA_GROUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/send_recv_validation.h"

namespace axle {

enum class CollectiveOpGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedID,
};

absl::string_view CollectiveOpGroupModeName(CollectiveOpGroupMode mode);

// The replicas x partitions a module runs on.
struct DeviceGrid {
  int64_t replica_count = 1;
  int64_t partition_count = 1;
  int64_t size() const { return replica_count * partition_count; }
  int64_t FlattenedId(int64_t replica, int64_t partition) const {
    return replica * partition_count + partition;
  }
  int64_t ReplicaOf(int64_t flattened_id) const { return flattened_id / partition_count; }
  int64_t PartitionOf(int64_t flattened_id) const { return flattened_id % partition_count; }
};

// XLA's rule. `use_global_device_ids` is nullopt for ops without that
// attribute (all-to-all, collective-permute, collective-broadcast).
absl::StatusOr<CollectiveOpGroupMode> GetCollectiveOpGroupMode(
    bool has_channel_id, std::optional<bool> use_global_device_ids);

// Every group of participants (flattened ids, in order) for `replica_groups`
// read in `mode` on `grid`. The groups are disjoint and cover the grid.
absl::StatusOr<std::vector<std::vector<int64_t>>> GetParticipantGroups(
    absl::Span<const std::vector<int64_t>> replica_groups, CollectiveOpGroupMode mode,
    const DeviceGrid& grid);

// The group holding `flattened_id` and the id's position in it.
struct ParticipantGroup {
  std::vector<int64_t> members;
  int64_t rank = 0;
};
absl::StatusOr<ParticipantGroup> FindParticipantGroup(absl::Span<const std::vector<int64_t>> groups,
                                                      int64_t flattened_id);

// --- From an instruction --------------------------------------------------
// The mode of `collective` (from its opcode, channel_id and
// use_global_device_ids).
absl::StatusOr<CollectiveOpGroupMode> GroupModeOf(const HloCollectiveInstruction& collective);

// The groups of `collective` on `grid`, the iota form expanded.
absl::StatusOr<std::vector<std::vector<int64_t>>> ParticipantGroupsOf(
    const HloCollectiveInstruction& collective, const DeviceGrid& grid);

// collective-permute's source_target_pairs as (source, target) flattened
// ids: replica ids without a channel_id (every partition permutes alike),
// partition ids with one (every replica alike). A source or target twice,
// or an id out of range, is InvalidArgument.
// `execution`: when given, only the pairs that move data on that execution
// of the instruction (its _xla_send_recv_validation, as XLA's
// collective-permute thunk reads it) are returned.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermutePairsOf(
    const HloCollectiveInstruction& permute, const DeviceGrid& grid,
    std::optional<int64_t> execution = std::nullopt);

// collective-permute's _xla_send_recv_validation with one range per pair
// of PermutePairsOf(permute, grid) (a pair of the attribute applies to each
// of its copies in the grid); bad text is InvalidArgument naming the
// instruction.
absl::StatusOr<SendRecvValidation> PermuteValidationOf(const HloCollectiveInstruction& permute,
                                                       const DeviceGrid& grid);

// `pairs` (replica ids, or partition ids when `cross_partition`) as
// flattened ids, every partition (replica) permuting alike. A source or
// target twice, or an id out of range, is InvalidArgument.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ExpandPermutePairs(
    absl::Span<const std::pair<int64_t, int64_t>> pairs, bool cross_partition,
    const DeviceGrid& grid);

// --- send / recv ------------------------------------------------------------
// XLA names a send's or recv's peers in this frontend attribute, in the
// replica-groups syntax: "{{0,1},{1,2}}" (source, target).
inline constexpr char kSendRecvSourceTargetPairsAttribute[] = "_xla_send_recv_source_target_pairs";

// The attribute's text reads with ParseSendRecvSourceTargetPairs
// (hlo/text/attribute_text.h), as the single-device pass reads it.

// A send's or recv's pairs as flattened ids, as XLA reads them
// (GetNcclP2PConfigForSendRecv): channel_id > 0 makes the pairs partition
// ids, applied alike in every replica (kCrossPartition); channel_id 0 (or
// none) replica ids, alike in every partition (kCrossReplica). On a grid
// of one replica (one partition) the pairs are partition (replica) ids
// whatever the channel: there XLA's reading would leave a single device
// and this one names the devices of the run. A missing
// attribute, bad text, an id out of range or twice is InvalidArgument
// naming the instruction.
// `execution`: when given, only the pairs that move data on that execution
// of the instruction (its _xla_send_recv_validation) are returned.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvPairsOf(
    const HloInstruction& send_or_recv, const DeviceGrid& grid,
    std::optional<int64_t> execution = std::nullopt);

// The _xla_send_recv_validation of a send or recv with `num_pairs`
// source-target pairs (hlo/text/send_recv_validation.h: which executions
// move data); bad text is InvalidArgument naming the instruction.
absl::StatusOr<SendRecvValidation> SendRecvValidationOf(const HloInstruction& send_or_recv,
                                                        size_t num_pairs);

}  // namespace axle

#endif  // AXLE_COLLECTIVES_REPLICA_GROUPS_H_
