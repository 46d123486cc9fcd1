//===- hlo_proto_internal.h - What hlo_proto's writer and reader share ------===//
//
// Internal to axle/hlo/proto. The writer (hlo_proto_writer.cc: module ->
// HloModuleProto, through each instruction's canonical text) and the reader
// (hlo_proto_reader.cc: HloModuleProto -> HLO text -> module) map the same
// attributes to the same proto fields: the table here says, once, which
// `key=value` of HLO text is which field of HloInstructionProto, and how its
// value reads. Attributes that need more than one field (slices, windows,
// padding, dim_labels, shardings, replica groups, ...) are a function on
// each side.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PROTO_HLO_PROTO_INTERNAL_H_
#define AXLE_HLO_PROTO_HLO_PROTO_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace axle::hlo_proto_internal {

// "HloModuleProto: <what> is not supported yet" (Unimplemented).
absl::Status Unimplemented(absl::string_view what);
// "HloModuleProto: <what>" (InvalidArgument).
absl::Status Invalid(absl::string_view what);

// How an attribute's text value reads: `key={1,2}`, `key=3`, `key=true`,
// `key=NAME`, `key="text"`, `key=1.5`.
enum class ValueKind { kIntList, kInt, kBool, kIdent, kQuoted, kFloat };

struct AttributeField {
  const char* key;   // in HLO text
  const char* path;  // in HloInstructionProto; "message.field" for a field of a sub-message
  ValueKind kind;
};

// The attributes that are one proto field each (`path` may name a field of
// a sub-message, as "dot_dimension_numbers.lhs_batch_dimensions").
absl::Span<const AttributeField> AttributeFields();

// Whether `name` (a field of HloInstructionProto) is the first part of some
// AttributeFields() path.
bool IsAttributeFieldPath(absl::string_view name);

// The names of the enum-valued fields, by their proto number.
inline constexpr const char* kPrecisions[] = {"default", "high", "highest"};
inline constexpr const char* kApiVersions[] = {
    "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
inline constexpr const char* kDistributions[] = {"rng_invalid", "rng_uniform", "rng_normal"};
inline constexpr const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
inline constexpr const char* kRngAlgorithms[] = {"rng_default", "rng_three_fry", "rng_philox"};

}  // namespace axle::hlo_proto_internal

#endif  // AXLE_HLO_PROTO_HLO_PROTO_INTERNAL_H_
