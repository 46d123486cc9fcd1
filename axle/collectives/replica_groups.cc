//===- replica_groups.cc - Who takes part in a collective ------------------===//
#include "axle/collectives/replica_groups.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/text/attribute_text.h"

namespace axle {
namespace {

absl::Status CheckRange(int64_t id, int64_t limit, absl::string_view what) {
  if (id < 0 || id >= limit) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " id ", id, " is out of range [0, ", limit, ")"));
  }
  return absl::OkStatus();
}

// The groups as given, or one group 0..count-1 when there are none.
std::vector<std::vector<int64_t>> OrAll(absl::Span<const std::vector<int64_t>> groups,
                                        int64_t count) {
  if (!groups.empty()) return {groups.begin(), groups.end()};
  std::vector<int64_t> all(count);
  for (int64_t i = 0; i < count; ++i) all[i] = i;
  return {all};
}

}  // namespace

absl::string_view CollectiveOpGroupModeName(CollectiveOpGroupMode mode) {
  switch (mode) {
    case CollectiveOpGroupMode::kCrossReplica:
      return "cross_replica";
    case CollectiveOpGroupMode::kCrossPartition:
      return "cross_partition";
    case CollectiveOpGroupMode::kCrossReplicaAndPartition:
      return "cross_replica_and_partition";
    case CollectiveOpGroupMode::kFlattenedID:
      return "flattened_id";
  }
  return "unknown";
}

absl::StatusOr<CollectiveOpGroupMode> GetCollectiveOpGroupMode(
    bool has_channel_id, std::optional<bool> use_global_device_ids) {
  if (!has_channel_id) {
    if (use_global_device_ids.value_or(false)) {
      return absl::InvalidArgumentError(
          "use_global_device_ids=true requires a channel_id (XLA's CollectiveOpGroupMode)");
    }
    return CollectiveOpGroupMode::kCrossReplica;
  }
  if (!use_global_device_ids.has_value()) return CollectiveOpGroupMode::kCrossPartition;
  return *use_global_device_ids ? CollectiveOpGroupMode::kFlattenedID
                                : CollectiveOpGroupMode::kCrossReplicaAndPartition;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> GetParticipantGroups(
    absl::Span<const std::vector<int64_t>> replica_groups, CollectiveOpGroupMode mode,
    const DeviceGrid& grid) {
  if (grid.replica_count < 1 || grid.partition_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat("bad device grid: ", grid.replica_count,
                                                   " replicas x ", grid.partition_count,
                                                   " partitions"));
  }
  std::vector<std::vector<int64_t>> result;
  switch (mode) {
    case CollectiveOpGroupMode::kCrossReplica:
      // One group per (replica group, partition).
      for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.replica_count)) {
        for (int64_t replica : group)
          AXLE_RETURN_IF_ERROR(CheckRange(replica, grid.replica_count, "replica"));
      }
      for (int64_t partition = 0; partition < grid.partition_count; ++partition) {
        for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.replica_count)) {
          std::vector<int64_t>& members = result.emplace_back();
          for (int64_t replica : group) members.push_back(grid.FlattenedId(replica, partition));
        }
      }
      break;
    case CollectiveOpGroupMode::kCrossPartition:
      for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.partition_count)) {
        for (int64_t partition : group) {
          AXLE_RETURN_IF_ERROR(CheckRange(partition, grid.partition_count, "partition"));
        }
      }
      for (int64_t replica = 0; replica < grid.replica_count; ++replica) {
        for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.partition_count)) {
          std::vector<int64_t>& members = result.emplace_back();
          for (int64_t partition : group) members.push_back(grid.FlattenedId(replica, partition));
        }
      }
      break;
    case CollectiveOpGroupMode::kCrossReplicaAndPartition:
      // Each replica group brings every partition of its replicas, replica-major.
      for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.replica_count)) {
        std::vector<int64_t>& members = result.emplace_back();
        for (int64_t replica : group) {
          AXLE_RETURN_IF_ERROR(CheckRange(replica, grid.replica_count, "replica"));
          for (int64_t partition = 0; partition < grid.partition_count; ++partition) {
            members.push_back(grid.FlattenedId(replica, partition));
          }
        }
      }
      break;
    case CollectiveOpGroupMode::kFlattenedID:
      for (const std::vector<int64_t>& group : OrAll(replica_groups, grid.size())) {
        for (int64_t id : group)
          AXLE_RETURN_IF_ERROR(CheckRange(id, grid.size(), "flattened device"));
        result.push_back(group);
      }
      break;
  }
  // Disjoint and covering.
  std::vector<int> seen(grid.size(), 0);
  for (const std::vector<int64_t>& group : result) {
    if (group.empty()) return absl::InvalidArgumentError("a replica group is empty");
    for (int64_t id : group) {
      if (seen[id]++) {
        return absl::InvalidArgumentError(absl::StrCat(
            "device (replica ", grid.ReplicaOf(id), ", partition ", grid.PartitionOf(id),
            ") is in more than one replica group (", CollectiveOpGroupModeName(mode), ")"));
      }
    }
  }
  for (int64_t id = 0; id < grid.size(); ++id) {
    if (!seen[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("device (replica ", grid.ReplicaOf(id), ", partition ", grid.PartitionOf(id),
                       ") is in no replica group (", CollectiveOpGroupModeName(mode), ")"));
    }
  }
  return result;
}

absl::StatusOr<ParticipantGroup> FindParticipantGroup(absl::Span<const std::vector<int64_t>> groups,
                                                      int64_t flattened_id) {
  for (const std::vector<int64_t>& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i] == flattened_id) return ParticipantGroup{group, static_cast<int64_t>(i)};
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device ", flattened_id, " is in no replica group"));
}

namespace {

bool HasUseGlobalDeviceIds(HloOpcode op) {
  return op == HloOpcode::kAllReduce || op == HloOpcode::kAllReduceStart ||
         op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart ||
         op == HloOpcode::kReduceScatter;
}

absl::Status Annotate(const absl::Status& status, const HloInstruction& instruction) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(instruction.name(), " (", HloOpcodeString(instruction.opcode()),
                                   "): ", status.message()));
}

}  // namespace

absl::StatusOr<CollectiveOpGroupMode> GroupModeOf(const HloCollectiveInstruction& collective) {
  std::optional<bool> global;
  if (HasUseGlobalDeviceIds(collective.opcode())) global = collective.attrs().use_global_device_ids;
  absl::StatusOr<CollectiveOpGroupMode> mode =
      GetCollectiveOpGroupMode(collective.channel_id().has_value(), global);
  if (!mode.ok()) return Annotate(mode.status(), collective);
  return *mode;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ParticipantGroupsOf(
    const HloCollectiveInstruction& collective, const DeviceGrid& grid) {
  AXLE_ASSIGN_OR_RETURN(CollectiveOpGroupMode mode, GroupModeOf(collective));
  std::vector<ReplicaGroup> listed = collective.attrs().iota_replica_groups
                                         ? collective.attrs().iota_replica_groups->Expand()
                                         : collective.replica_groups();
  std::vector<std::vector<int64_t>> groups;
  groups.reserve(listed.size());
  for (const ReplicaGroup& group : listed) {
    groups.emplace_back(group.replica_ids().begin(), group.replica_ids().end());
  }
  absl::StatusOr<std::vector<std::vector<int64_t>>> result =
      GetParticipantGroups(groups, mode, grid);
  if (!result.ok()) return Annotate(result.status(), collective);
  return result;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ExpandPermutePairs(
    absl::Span<const std::pair<int64_t, int64_t>> pairs, bool cross_partition,
    const DeviceGrid& grid) {
  int64_t limit = cross_partition ? grid.partition_count : grid.replica_count;
  int64_t copies = cross_partition ? grid.replica_count : grid.partition_count;
  absl::string_view what = cross_partition ? "partition" : "replica";
  std::vector<int> source_seen(limit, 0), target_seen(limit, 0);
  std::vector<std::pair<int64_t, int64_t>> result;
  for (const auto& [source, target] : pairs) {
    AXLE_RETURN_IF_ERROR(CheckRange(source, limit, what));
    AXLE_RETURN_IF_ERROR(CheckRange(target, limit, what));
    if (source_seen[source]++ || target_seen[target]++) {
      return absl::InvalidArgumentError(absl::StrCat(
          "source_target_pairs names ", what, " ", source_seen[source] > 1 ? source : target,
          " twice as a ", source_seen[source] > 1 ? "source" : "target"));
    }
    for (int64_t other = 0; other < copies; ++other) {
      if (cross_partition) {
        result.emplace_back(grid.FlattenedId(other, source), grid.FlattenedId(other, target));
      } else {
        result.emplace_back(grid.FlattenedId(source, other), grid.FlattenedId(target, other));
      }
    }
  }
  return result;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermutePairsOf(
    const HloCollectiveInstruction& permute, const DeviceGrid& grid,
    std::optional<int64_t> execution) {
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> result = ExpandPermutePairs(
      permute.attrs().source_target_pairs, permute.channel_id().has_value(), grid);
  if (!result.ok()) return Annotate(result.status(), permute);
  if (!execution.has_value()) return result;
  AXLE_ASSIGN_OR_RETURN(SendRecvValidation validation, PermuteValidationOf(permute, grid));
  std::vector<std::pair<int64_t, int64_t>> moving;
  for (size_t i = 0; i < result->size(); ++i) {
    if (validation.Moves(i, *execution)) moving.push_back((*result)[i]);
  }
  return moving;
}

absl::StatusOr<SendRecvValidation> PermuteValidationOf(const HloCollectiveInstruction& permute,
                                                       const DeviceGrid& grid) {
  const auto& pairs = permute.attrs().source_target_pairs;
  AXLE_ASSIGN_OR_RETURN(SendRecvValidation validation, SendRecvValidationOf(permute, pairs.size()));
  if (validation.ranges.empty()) return validation;
  // ExpandPermutePairs gives each pair's copies one after another.
  const int64_t copies =
      permute.channel_id().has_value() ? grid.replica_count : grid.partition_count;
  std::vector<std::pair<int64_t, int64_t>> expanded;
  expanded.reserve(validation.ranges.size() * copies);
  for (const auto& range : validation.ranges) expanded.insert(expanded.end(), copies, range);
  validation.ranges = std::move(expanded);
  return validation;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvPairsOf(
    const HloInstruction& send_or_recv, const DeviceGrid& grid, std::optional<int64_t> execution) {
  auto attribute = send_or_recv.frontend_attributes().find(kSendRecvSourceTargetPairsAttribute);
  if (attribute == send_or_recv.frontend_attributes().end()) {
    return Annotate(absl::InvalidArgumentError(absl::StrCat(
                        "send/recv among several devices needs the frontend attribute ",
                        kSendRecvSourceTargetPairsAttribute)),
                    send_or_recv);
  }
  const auto* send_recv = dyn_cast<HloSendRecvInstruction>(&send_or_recv);
  // On a grid of one row or column the pairs name the devices along it.
  bool cross_partition = send_recv != nullptr && send_recv->attrs().channel_id.value_or(0) > 0;
  if (grid.replica_count == 1) cross_partition = true;
  if (grid.partition_count == 1) cross_partition = false;
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
      ParseSendRecvSourceTargetPairs(attribute->second);
  if (!pairs.ok()) return Annotate(pairs.status(), send_or_recv);
  if (execution.has_value()) {
    AXLE_ASSIGN_OR_RETURN(SendRecvValidation validation,
                          SendRecvValidationOf(send_or_recv, pairs->size()));
    std::vector<std::pair<int64_t, int64_t>> moving;
    for (size_t i = 0; i < pairs->size(); ++i) {
      if (validation.Moves(i, *execution)) moving.push_back((*pairs)[i]);
    }
    *pairs = std::move(moving);
  }
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> result =
      ExpandPermutePairs(*pairs, cross_partition, grid);
  if (!result.ok()) return Annotate(result.status(), send_or_recv);
  return result;
}

absl::StatusOr<SendRecvValidation> SendRecvValidationOf(const HloInstruction& send_or_recv,
                                                        size_t num_pairs) {
  auto attribute = send_or_recv.frontend_attributes().find(kSendRecvValidationAttribute);
  if (attribute == send_or_recv.frontend_attributes().end()) return SendRecvValidation{};
  absl::StatusOr<SendRecvValidation> validation =
      ParseSendRecvValidation(attribute->second, num_pairs);
  if (!validation.ok()) return Annotate(validation.status(), send_or_recv);
  return validation;
}

}  // namespace axle
