//===- attribute_text.h - Attribute values in XLA's HLO text ---------------===//
//
// The small pieces of HLO text that both the printer and the parser need:
// the names of the enum-valued attributes (both directions), string
// escaping, and the to-string forms of the structured attributes (windows,
// dim_labels, padding, slices, dot/gather/scatter dimension numbers,
// metadata, replica groups, frontend attributes). Every string is exactly
// what XLA's printer writes; every StringToX accepts what XLA's parser
// accepts (some of XLA's enum names are read case-insensitively).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_ATTRIBUTE_TEXT_H_
#define AXLE_HLO_TEXT_ATTRIBUTE_TEXT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

// --- Strings ----------------------------------------------------------------

// C-style escaping as XLA's printer does it (absl::CEscape): \n \r \t \" \'
// \\ and octal \NNN for other non-printable bytes.
std::string CEscape(absl::string_view text);

// True when `text` starts with '{', ends with the '}' that closes it, and
// its strings ("..." with \-escapes) are closed: XLA then prints it raw
// (backend_config={...}, frontend attribute values) instead of quoting it.
bool LexesAsJsonDict(absl::string_view text);

// --- Enum-valued attributes: name tables, both directions ------------------

// direction=EQ|NE|GE|GT|LE|LT
absl::string_view ComparisonDirectionToString(ComparisonDirection direction);
absl::StatusOr<ComparisonDirection> StringToComparisonDirection(absl::string_view name);

// type=FLOAT|TOTALORDER|SIGNED|UNSIGNED. kDefault has no name ("").
absl::string_view ComparisonTypeToString(ComparisonType type);
absl::StatusOr<ComparisonType> StringToComparisonType(absl::string_view name);
// The comparison type XLA infers from the operand element type (and so does
// not print): floats and complex FLOAT, signed integers SIGNED, unsigned
// integers and pred UNSIGNED.
ComparisonType DefaultComparisonType(PrimitiveType operand_type);
// order=TOTAL|PARTIAL next to `type` (kDefault when the text has none) on a
// compare of `operand_type`: the type Axle keeps, which says the same. A
// total order on floats or complex is TOTALORDER; integers and pred are
// totally ordered by their default type already; a partial order is FLOAT.
// InvalidArgument where the two disagree (type=FLOAT with order=TOTAL) or
// the operands have no partial order (integers, pred), as XLA's Comparison
// refuses them.
absl::StatusOr<ComparisonType> ComparisonTypeForOrder(ComparisonType type,
                                                      PrimitiveType operand_type, bool total);

// fft_type=FFT|IFFT|RFFT|IRFFT
absl::string_view FftTypeToString(FftType type);
absl::StatusOr<FftType> StringToFftType(absl::string_view name);

// distribution=rng_uniform|rng_normal (read case-insensitively)
absl::string_view RandomDistributionToString(RandomDistribution distribution);
absl::StatusOr<RandomDistribution> StringToRandomDistribution(absl::string_view name);

// algorithm=rng_default|rng_three_fry|rng_philox (read case-insensitively)
absl::string_view RandomAlgorithmToString(RandomAlgorithm algorithm);
absl::StatusOr<RandomAlgorithm> StringToRandomAlgorithm(absl::string_view name);

// operand_precision={default,high,highest,packed_nibble} (case-insensitive)
absl::string_view PrecisionToString(PrecisionConfig::Precision precision);
absl::StatusOr<PrecisionConfig::Precision> StringToPrecision(absl::string_view name);

// algorithm=dot_bf16_bf16_f32 (the enum name without ALG_, lower case;
// read case-insensitively). ALG_UNSET is "unset".
absl::string_view AlgorithmToString(PrecisionConfig::Algorithm algorithm);
absl::StatusOr<PrecisionConfig::Algorithm> StringToAlgorithm(absl::string_view name);

// api_version=API_VERSION_TYPED_FFI (printed upper case, read
// case-insensitively)
absl::string_view CustomCallApiVersionToString(CustomCallApiVersion version);
absl::StatusOr<CustomCallApiVersion> StringToCustomCallApiVersion(absl::string_view name);

// schedule=SCHEDULE_LATEST (printed upper case, read case-insensitively)
absl::string_view CustomCallScheduleToString(CustomCallSchedule schedule);
absl::StatusOr<CustomCallSchedule> StringToCustomCallSchedule(absl::string_view name);

// kind=kLoop|kInput|kOutput|kCustom
absl::string_view FusionKindToString(FusionKind kind);
absl::StatusOr<FusionKind> StringToFusionKind(absl::string_view name);

// transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT (TRANSPOSE_INVALID is never
// printed)
absl::string_view TriangularSolveTransposeToString(TriangularSolveOptions::Transpose transpose);
absl::StatusOr<TriangularSolveOptions::Transpose> StringToTriangularSolveTranspose(
    absl::string_view name);

// --- Structured attributes (the text after `name=`) ------------------------

// "{1,2,3}"
std::string IntListToString(absl::Span<const int64_t> values);

// window={...} without the braces: "size=3x3 stride=2x2 pad=0_1x0_1
// lhs_dilate=2x2 rhs_dilate=1x2 rhs_reversal=0x1"; only the fields that
// differ from their defaults in some dimension are printed.
std::string WindowToString(const Window& window);

// dim_labels=b01f_01io->b01f
std::string ConvolutionDimensionNumbersToString(const ConvolutionDimensionNumbers& dnums);
// The inverse: reads "b01f_01io->b01f" (also with more than 10 spatial
// dimensions only as XLA does: one character per dimension).
absl::StatusOr<ConvolutionDimensionNumbers> StringToConvolutionDimensionNumbers(
    absl::string_view text);

// padding=0_1x2_3 (with _interior on every dimension when any is nonzero)
std::string PaddingConfigToString(const PaddingConfig& padding);

// slice={[0:2], [1:5:2]}: strides are printed only when one is not 1.
std::string SliceToString(absl::Span<const int64_t> starts, absl::Span<const int64_t> limits,
                          absl::Span<const int64_t> strides);

// "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0},
// rhs_contracting_dims={1}": the batch dims only when non-empty, the
// contracting dims always.
std::string DotDimensionNumbersToString(const DotDimensionNumbers& dnums);

// "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
// index_vector_dim=1" (batching dims only when non-empty)
std::string GatherDimensionNumbersToString(const GatherDimensionNumbers& dnums);

// "update_window_dims={1}, inserted_window_dims={0},
// scatter_dims_to_operand_dims={0}, index_vector_dim=1"
std::string ScatterDimensionNumbersToString(const ScatterDimensionNumbers& dnums);

// operand_precision / algorithm attributes of dot, convolution and custom
// call: each "name=value", empty when XLA prints nothing (all precisions
// DEFAULT, algorithm unset).
std::vector<std::string> PrecisionConfigToStrings(const PrecisionConfig& config);

// metadata={...} without the braces: op_type="..." op_name="..."
// source_file="..." source_line=N ... separated by spaces.
std::string OpMetadataToString(const OpMetadata& metadata);
// Whether XLA prints metadata={...} at all: only when op_type, op_name,
// source_file or scheduling_name is set, or stack_frame_id is nonzero.
bool OpMetadataIsPrinted(const OpMetadata& metadata);

// replica_groups={{0,1},{2,3}} (or {} when there are none)
std::string ReplicaGroupsToString(absl::Span<const ReplicaGroup> groups);

// source_target_pairs={{0,1},{1,2}}
std::string SourceTargetPairsToString(absl::Span<const std::pair<int64_t, int64_t>> pairs);

// frontend_attributes={a="x",b={json}}: sorted by key, values quoted and
// escaped unless they lex as a JSON dict.
std::string FrontendAttributesToString(const FrontendAttributes& attributes);

// output_to_operand_aliasing={{0}: (0, {}), {1}: (1, {})}
std::string OutputOperandAliasingToString(absl::Span<const OutputOperandAlias> aliasing);

// A quoted, escaped string: "\"a\\nb\"".
std::string QuotedString(absl::string_view text);

// XLA's `op-start` shorthand may leave some of the wrapped op's operands to
// be bound later, by `op-update(state, operands...)`. The wrapped
// computation gets at least this many parameters up front; one no operand is
// bound to yet has the empty tuple shape. Dot: 2; fixed arity: that arity;
// variadic ops: 0 (their parameters come only from bound operands).
int64_t AsyncShorthandParameterCount(HloOpcode opcode);

// "{{1,2},{3}}" -> {{1,2},{3}} (XLA's attribute syntax for lists of lists:
// replica groups, source-target pairs, in frontend attributes too).
// InvalidArgument for anything else: "bad <what> \"<text>\" at <offset>: <why>".
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseInt64ListList(
    absl::string_view text, absl::string_view what = "list of lists");

// The pairs of the frontend attribute _xla_send_recv_source_target_pairs
// ("{{1,0},{0,1}}" -> {(1,0), (0,1)}), which XLA writes in the
// replica-groups syntax. InvalidArgument quoting `text` for anything that is
// not a list of lists (ParseInt64ListList), a list that is not two ids, or a
// negative id (the caller names the instruction).
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSendRecvSourceTargetPairs(
    absl::string_view text);

}  // namespace axle

#endif  // AXLE_HLO_TEXT_ATTRIBUTE_TEXT_H_
