//===- multi_device_grid.h - How many devices a test module wants ----------===//
//
// XLA's multi-device tests set the replica count in C++, not in the HLO
// text. This picks a grid the module's collectives fit: the module config's
// counts, raised to cover every id its replica_groups, source_target_pairs
// and send/recv pairs name and the group size its shapes imply
// (all-gather multiplies, reduce-scatter divides a dimension), and
// `default_replicas` (2) when nothing says more. Used by the conformance tests of the
// multi-participant interpreter and of multi-process runs, and, with
// `default_replicas` 1 (only what the module's collectives require), by
// axle-gpu-compile.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_TOOLS_MULTI_DEVICE_GRID_H_
#define AXLE_TOOLS_MULTI_DEVICE_GRID_H_

#include <algorithm>

#include "axle/collectives/replica_groups.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/attribute_text.h"

namespace axle {
namespace testing {

// Whether `module` has a collective, replica-id or partition-id.
inline bool UsesSeveralDevices(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      HloOpcode op = instruction->opcode();
      if (HloOpcodeIsCollective(op) || op == HloOpcode::kReplicaId ||
          op == HloOpcode::kPartitionId) {
        return true;
      }
    }
  }
  return false;
}

inline DeviceGrid GridFor(const HloModule& module, int64_t default_replicas = 2) {
  int64_t replicas = std::max<int64_t>(module.config().replica_count, 1);
  int64_t partitions = std::max<int64_t>(module.config().num_partitions, 1);
  int64_t need_replicas = default_replicas, need_partitions = 1, need_total = 1;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      // send and recv name their peers in a frontend attribute; XLA reads
      // them as partition ids under a channel id > 0, else replica ids
      // (single_device_collectives.h).
      if (const auto* p2p = dyn_cast<HloSendRecvInstruction>(instruction);
          p2p != nullptr && !p2p->is_host_transfer()) {
        auto text = instruction->frontend_attributes().find(kSendRecvSourceTargetPairsAttribute);
        if (text == instruction->frontend_attributes().end()) continue;
        absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
            ParseSendRecvSourceTargetPairs(text->second);
        if (!pairs.ok()) continue;
        int64_t need = 0;
        for (const auto& [source, target] : *pairs) need = std::max({need, source + 1, target + 1});
        if (p2p->channel_id().value_or(0) > 0) {
          need_partitions = std::max(need_partitions, need);
        } else {
          need_replicas = std::max(need_replicas, need);
        }
        continue;
      }
      const auto* collective = dyn_cast<HloCollectiveInstruction>(instruction);
      if (collective == nullptr) continue;
      absl::StatusOr<CollectiveOpGroupMode> mode = GroupModeOf(*collective);
      if (!mode.ok()) continue;
      std::vector<ReplicaGroup> groups = collective->attrs().iota_replica_groups
                                             ? collective->attrs().iota_replica_groups->Expand()
                                             : collective->replica_groups();
      int64_t max_id = -1;
      for (const ReplicaGroup& group : groups) {
        for (int64_t id : group.replica_ids()) max_id = std::max(max_id, id);
      }
      bool partition_ids = *mode == CollectiveOpGroupMode::kCrossPartition;
      for (const auto& [source, target] : collective->attrs().source_target_pairs) {
        max_id = std::max({max_id, source, target});
      }
      if (!collective->attrs().source_target_pairs.empty()) {
        partition_ids = collective->channel_id().has_value();
      }
      // With no groups, the shapes may tell the group size.
      int64_t implied = 0;
      const Shape& result = collective->shape();
      if (groups.empty() && collective->operand_count() == 1 && result.IsArray() &&
          !collective->attrs().dimensions.empty()) {
        const Shape& operand = collective->operand(0)->shape();
        int64_t d = collective->attrs().dimensions[0];
        if (operand.IsArray() && d < operand.rank() && d < result.rank() &&
            operand.dimensions(d) > 0 && result.dimensions(d) > 0) {
          HloOpcode op = collective->opcode();
          if (op == HloOpcode::kAllGather) implied = result.dimensions(d) / operand.dimensions(d);
          if (op == HloOpcode::kReduceScatter)
            implied = operand.dimensions(d) / result.dimensions(d);
        }
      }
      // The tuple form of all-to-all has one operand per member.
      if (groups.empty() && collective->opcode() == HloOpcode::kAllToAll &&
          collective->attrs().dimensions.empty()) {
        implied = collective->operand_count();
      }
      int64_t need = std::max(max_id + 1, implied);
      if (*mode == CollectiveOpGroupMode::kFlattenedID) {
        need_total = std::max(need_total, need);
      } else if (partition_ids) {
        need_partitions = std::max(need_partitions, need);
      } else {
        need_replicas = std::max(need_replicas, need);
      }
    }
  }
  replicas = std::max(replicas, need_replicas);
  partitions = std::max(partitions, need_partitions);
  while (replicas * partitions < need_total) ++replicas;
  return DeviceGrid{replicas, partitions};
}

}  // namespace testing
}  // namespace axle

#endif  // AXLE_TOOLS_MULTI_DEVICE_GRID_H_
