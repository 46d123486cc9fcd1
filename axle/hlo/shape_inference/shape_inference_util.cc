//===- shape_inference_util.cc - Helpers shared by the inference files -----===//
#include "axle/hlo/shape_inference/shape_inference_util.h"

#include <algorithm>
#include <set>

#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle::shape_inference_internal {

std::string Str(const ProgramShape& program_shape) {
  std::vector<std::string> params;
  for (const Shape& p : program_shape.parameters()) params.push_back(Str(p));
  return absl::StrCat("(", absl::StrJoin(params, ", "), ") -> ", Str(program_shape.result()));
}

absl::Status ExpectArray(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray()) {
    return InvalidArgument("Expected array argument for ", what, ", but got ", Str(shape), ".");
  }
  return absl::OkStatus();
}

bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (a.element_type() == b.element_type()) return true;
  return IsFloat(a) && IsFloat(b);
}

PrimitiveType HigherPrecisionElementType(const Shape& a, const Shape& b) {
  if (a.element_type() == b.element_type() || !IsFloat(a) || !IsFloat(b)) {
    return a.element_type();
  }
  return primitive_util::HigherPrecisionType(a.element_type(), b.element_type());
}

Shape MakeArray(PrimitiveType type, absl::Span<const int64_t> dimensions,
                const std::vector<bool>& dynamic) {
  Shape shape = ShapeUtil::MakeShape(type, dimensions);
  for (size_t i = 0; i < dynamic.size() && i < dimensions.size(); ++i) {
    if (dynamic[i]) shape.set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  return shape;
}

Shape MakeScalar(PrimitiveType type) { return ShapeUtil::MakeShape(type, {}); }

namespace {

bool DimensionsMatch(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (a.is_unbounded_dynamic_dimension(i) || b.is_unbounded_dynamic_dimension(i)) continue;
    if (a.dimensions(i) != b.dimensions(i)) return false;
  }
  return true;
}

bool Compatible(const Shape& a, const Shape& b, bool check_type, bool ignore_fp) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!Compatible(a.tuple_shapes(i), b.tuple_shapes(i), check_type, ignore_fp)) return false;
    }
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return a.element_type() == b.element_type();
  if (check_type && a.element_type() != b.element_type() &&
      !(ignore_fp && IsFloat(a) && IsFloat(b))) {
    return false;
  }
  return DimensionsMatch(a, b);
}

}  // namespace

bool CompatibleShapes(const Shape& a, const Shape& b, bool ignore_fp_precision) {
  return Compatible(a, b, /*check_type=*/true, ignore_fp_precision);
}

bool CompatibleIgnoringElementType(const Shape& a, const Shape& b) {
  return Compatible(a, b, /*check_type=*/false, false);
}

bool SameDimensions(const Shape& a, const Shape& b) { return DimensionsMatch(a, b); }

bool IsPermutation(absl::Span<const int64_t> dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

bool AllUnique(absl::Span<const int64_t> values) {
  return std::set<int64_t>(values.begin(), values.end()).size() == values.size();
}

absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(
    bool has_channel_id, std::optional<bool> use_global_device_ids) {
  if (!has_channel_id) {
    if (use_global_device_ids.value_or(false)) {
      return InvalidArgument("use_global_device_ids=true needs a channel_id");
    }
    return CollectiveGroupMode::kCrossReplica;
  }
  if (!use_global_device_ids.has_value()) return CollectiveGroupMode::kCrossPartition;
  return *use_global_device_ids ? CollectiveGroupMode::kFlattenedId
                                : CollectiveGroupMode::kCrossReplicaAndPartition;
}

std::vector<ReplicaGroup> ReplicaGroups(const HloCollectiveInstruction& collective) {
  if (collective.attrs().iota_replica_groups.has_value()) {
    return collective.attrs().iota_replica_groups->Expand();
  }
  return collective.replica_groups();
}

int64_t SubgroupSize(const HloCollectiveInstruction& collective, CollectiveGroupMode mode) {
  const HloComputation* computation = collective.parent();
  const HloModule* module = computation == nullptr ? nullptr : computation->parent();
  const int64_t replica_count = module == nullptr ? 1 : module->config().replica_count;
  const int64_t num_partitions = module == nullptr ? 1 : module->config().num_partitions;
  std::vector<ReplicaGroup> groups = ReplicaGroups(collective);
  const int64_t group_size = groups.empty() ? -1 : groups[0].replica_ids_size();
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
      return groups.empty() ? replica_count : group_size;
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return (groups.empty() ? replica_count : group_size) * num_partitions;
    case CollectiveGroupMode::kFlattenedId:
      return groups.empty() ? replica_count * num_partitions : group_size;
    case CollectiveGroupMode::kCrossPartition:
      return groups.empty() ? num_partitions : group_size;
  }
  return 1;
}

bool HasGlobalDeviceIdsAttribute(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace axle::shape_inference_internal
