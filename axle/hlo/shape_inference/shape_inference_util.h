//===- shape_inference_util.h - Helpers shared by the inference files ------===//
//
// Internal to axle/hlo/shape_inference: error construction, element-type predicates
// and small shape builders used by the shape_inference_*.cc files and the
// verifier. Not part of the public API.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_UTIL_H_
#define AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module_config.h"

namespace axle::shape_inference_internal {

template <typename... Args>
absl::Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

inline std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
inline std::string Str(PrimitiveType type) {
  return std::string(primitive_util::LowercasePrimitiveTypeName(type));
}
inline std::string Str(absl::Span<const int64_t> values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}
std::string Str(const ProgramShape& program_shape);  // "(f32[], f32[]) -> f32[]"

// "Expected array argument for <what>, but got <shape>".
absl::Status ExpectArray(const Shape& shape, absl::string_view what);

inline bool IsFloat(const Shape& s) {
  return primitive_util::IsFloatingPointType(s.element_type());
}
inline bool IsComplex(const Shape& s) { return primitive_util::IsComplexType(s.element_type()); }
inline bool IsIntegral(const Shape& s) { return primitive_util::IsIntegralType(s.element_type()); }
inline bool IsSigned(const Shape& s) {
  return primitive_util::IsSignedIntegralType(s.element_type()) || IsFloat(s);
}

// Same element type, or both real floating point.
bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b);
// For two float types the wider one; otherwise a's type.
PrimitiveType HigherPrecisionElementType(const Shape& a, const Shape& b);

// An array shape with the default layout.
Shape MakeArray(PrimitiveType type, absl::Span<const int64_t> dimensions,
                const std::vector<bool>& dynamic = {});
Shape MakeScalar(PrimitiveType type);

// Shape comparison: element types, dimensions (an unbounded `?` matches any
// size) and tuple structure; never layouts or dynamic-dimension markers.
// `ignore_fp_precision` lets two real float types differ.
bool CompatibleShapes(const Shape& a, const Shape& b, bool ignore_fp_precision = false);
bool CompatibleIgnoringElementType(const Shape& a, const Shape& b);
bool SameDimensions(const Shape& a, const Shape& b);

bool IsPermutation(absl::Span<const int64_t> dims, int64_t rank);
bool AllUnique(absl::Span<const int64_t> values);

// How a collective's replica groups name devices (XLA's
// CollectiveOpGroupMode): by replica, by partition, by replica across all
// partitions, or by flattened device id.
enum class CollectiveGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId
};
// `use_global_device_ids` is std::nullopt for ops without that attribute
// (all-to-all, collective-permute).
absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(
    bool has_channel_id, std::optional<bool> use_global_device_ids);
// The replica groups of a collective, with the iota form expanded.
std::vector<ReplicaGroup> ReplicaGroups(const HloCollectiveInstruction& collective);
// The number of participants in each group (XLA's GetSubgroupSize).
int64_t SubgroupSize(const HloCollectiveInstruction& collective, CollectiveGroupMode mode);
// True for the collectives that carry use_global_device_ids.
bool HasGlobalDeviceIdsAttribute(HloOpcode opcode);

}  // namespace axle::shape_inference_internal

#endif  // AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_UTIL_H_
