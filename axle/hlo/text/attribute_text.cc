//===- attribute_text.cc - Attribute values in XLA's HLO text --------------===//
//
// Formats follow XLA's printer (hlo_instruction.cc, hlo_instructions.cc,
// window_util.cc, hlo_op_metadata.cc, replica_group.cc).
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/text/attribute_text.h"

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"

namespace axle {
namespace {

// One row of an enum's name table.
template <typename E>
struct EnumName {
  E value;
  absl::string_view name;
};

template <typename E, size_t N>
absl::string_view NameOf(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& row : table) {
    if (row.value == value) return row.name;
  }
  return "<invalid>";
}

// Finds `name` in the table; `ignore_case` compares ASCII case-insensitively
// (XLA lower-cases some names before looking them up).
template <typename E, size_t N>
absl::StatusOr<E> ValueOf(const EnumName<E> (&table)[N], absl::string_view name,
                          absl::string_view what, bool ignore_case) {
  for (const EnumName<E>& row : table) {
    if (ignore_case ? absl::EqualsIgnoreCase(row.name, name) : row.name == name) return row.value;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " '", name, "'"));
}

constexpr EnumName<ComparisonDirection> kComparisonDirections[] = {
    {ComparisonDirection::kEq, "EQ"}, {ComparisonDirection::kNe, "NE"},
    {ComparisonDirection::kGe, "GE"}, {ComparisonDirection::kGt, "GT"},
    {ComparisonDirection::kLe, "LE"}, {ComparisonDirection::kLt, "LT"},
};

constexpr EnumName<ComparisonType> kComparisonTypes[] = {
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kFloatTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
};

constexpr EnumName<FftType> kFftTypes[] = {
    {FFT, "FFT"}, {IFFT, "IFFT"}, {RFFT, "RFFT"}, {IRFFT, "IRFFT"}};

constexpr EnumName<RandomDistribution> kRandomDistributions[] = {
    {RNG_INVALID, "rng_invalid"}, {RNG_UNIFORM, "rng_uniform"}, {RNG_NORMAL, "rng_normal"}};

constexpr EnumName<RandomAlgorithm> kRandomAlgorithms[] = {
    {RNG_DEFAULT, "rng_default"}, {RNG_THREE_FRY, "rng_three_fry"}, {RNG_PHILOX, "rng_philox"}};

constexpr EnumName<PrecisionConfig::Precision> kPrecisions[] = {
    {PrecisionConfig::DEFAULT, "default"},
    {PrecisionConfig::HIGH, "high"},
    {PrecisionConfig::HIGHEST, "highest"},
    {PrecisionConfig::PACKED_NIBBLE, "packed_nibble"},
};

constexpr EnumName<PrecisionConfig::Algorithm> kAlgorithms[] = {
    {PrecisionConfig::ALG_UNSET, "unset"},
    {PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32, "dot_any_f8_any_f8_f32"},
    {PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM, "dot_any_f8_any_f8_f32_fast_accum"},
    {PrecisionConfig::ALG_DOT_F16_F16_F16, "dot_f16_f16_f16"},
    {PrecisionConfig::ALG_DOT_F16_F16_F32, "dot_f16_f16_f32"},
    {PrecisionConfig::ALG_DOT_BF16_BF16_BF16, "dot_bf16_bf16_bf16"},
    {PrecisionConfig::ALG_DOT_BF16_BF16_F32, "dot_bf16_bf16_f32"},
    {PrecisionConfig::ALG_DOT_BF16_BF16_F32_X3, "dot_bf16_bf16_f32_x3"},
    {PrecisionConfig::ALG_DOT_BF16_BF16_F32_X6, "dot_bf16_bf16_f32_x6"},
    {PrecisionConfig::ALG_DOT_TF32_TF32_F32, "dot_tf32_tf32_f32"},
    {PrecisionConfig::ALG_DOT_TF32_TF32_F32_X3, "dot_tf32_tf32_f32_x3"},
    {PrecisionConfig::ALG_DOT_F32_F32_F32, "dot_f32_f32_f32"},
    {PrecisionConfig::ALG_DOT_F64_F64_F64, "dot_f64_f64_f64"},
    {PrecisionConfig::ALG_DOT_BF16_BF16_F32_X9, "dot_bf16_bf16_f32_x9"},
};

constexpr EnumName<CustomCallApiVersion> kApiVersions[] = {
    {API_VERSION_UNSPECIFIED, "API_VERSION_UNSPECIFIED"},
    {API_VERSION_ORIGINAL, "API_VERSION_ORIGINAL"},
    {API_VERSION_STATUS_RETURNING, "API_VERSION_STATUS_RETURNING"},
    {API_VERSION_STATUS_RETURNING_UNIFIED, "API_VERSION_STATUS_RETURNING_UNIFIED"},
    {API_VERSION_TYPED_FFI, "API_VERSION_TYPED_FFI"},
};

constexpr EnumName<CustomCallSchedule> kSchedules[] = {
    {SCHEDULE_NONE, "SCHEDULE_NONE"},
    {SCHEDULE_LATEST, "SCHEDULE_LATEST"},
    {SCHEDULE_EARLIEST, "SCHEDULE_EARLIEST"},
};

constexpr EnumName<FusionKind> kFusionKinds[] = {
    {FusionKind::kLoop, "kLoop"},
    {FusionKind::kInput, "kInput"},
    {FusionKind::kOutput, "kOutput"},
    {FusionKind::kCustom, "kCustom"},
};

constexpr EnumName<TriangularSolveOptions::Transpose> kTransposes[] = {
    {TriangularSolveOptions::TRANSPOSE_INVALID, "TRANSPOSE_INVALID"},
    {TriangularSolveOptions::NO_TRANSPOSE, "NO_TRANSPOSE"},
    {TriangularSolveOptions::TRANSPOSE, "TRANSPOSE"},
    {TriangularSolveOptions::ADJOINT, "ADJOINT"},
};

// Window fields: whether any dimension differs from the default.
template <typename Pred>
bool AnyDimension(const Window& window, Pred pred) {
  return std::any_of(window.dimensions().begin(), window.dimensions().end(), pred);
}

}  // namespace

std::string CEscape(absl::string_view text) { return absl::CEscape(text); }

std::string QuotedString(absl::string_view text) {
  return absl::StrCat("\"", absl::CEscape(text), "\"");
}

bool LexesAsJsonDict(absl::string_view text) {
  if (text.empty() || text.front() != '{') return false;
  int64_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // Skip the string, honoring backslash escapes.
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= text.size()) return false;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return i + 1 == text.size();
  }
  return false;
}

absl::string_view ComparisonDirectionToString(ComparisonDirection direction) {
  return NameOf(kComparisonDirections, direction);
}
absl::StatusOr<ComparisonDirection> StringToComparisonDirection(absl::string_view name) {
  return ValueOf(kComparisonDirections, name, "comparison direction", /*ignore_case=*/false);
}

absl::string_view ComparisonTypeToString(ComparisonType type) {
  if (type == ComparisonType::kDefault) return "";
  return NameOf(kComparisonTypes, type);
}
absl::StatusOr<ComparisonType> StringToComparisonType(absl::string_view name) {
  return ValueOf(kComparisonTypes, name, "comparison type", /*ignore_case=*/false);
}

ComparisonType DefaultComparisonType(PrimitiveType operand_type) {
  if (primitive_util::IsFloatingPointType(operand_type) ||
      primitive_util::IsComplexType(operand_type)) {
    return ComparisonType::kFloat;
  }
  if (primitive_util::IsSignedIntegralType(operand_type)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

absl::StatusOr<ComparisonType> ComparisonTypeForOrder(ComparisonType type,
                                                      PrimitiveType operand_type, bool total) {
  ComparisonType effective =
      type == ComparisonType::kDefault ? DefaultComparisonType(operand_type) : type;
  bool is_float = effective == ComparisonType::kFloat;
  if (total) {
    if (!is_float) return type;
    if (type == ComparisonType::kFloat) {
      return absl::InvalidArgumentError("order=TOTAL contradicts type=FLOAT (a partial order)");
    }
    return ComparisonType::kFloatTotalOrder;
  }
  if (is_float) return type;
  return absl::InvalidArgumentError(absl::StrCat(
      "order=PARTIAL needs a FLOAT comparison, but this one is ", ComparisonTypeToString(effective),
      type == ComparisonType::kDefault
          ? absl::StrCat(" (the default for ",
                         primitive_util::LowercasePrimitiveTypeName(operand_type), ")")
          : ""));
}

absl::string_view FftTypeToString(FftType type) { return NameOf(kFftTypes, type); }
absl::StatusOr<FftType> StringToFftType(absl::string_view name) {
  return ValueOf(kFftTypes, name, "fft type", /*ignore_case=*/false);
}

absl::string_view RandomDistributionToString(RandomDistribution distribution) {
  return NameOf(kRandomDistributions, distribution);
}
absl::StatusOr<RandomDistribution> StringToRandomDistribution(absl::string_view name) {
  return ValueOf(kRandomDistributions, name, "distribution", /*ignore_case=*/true);
}

absl::string_view RandomAlgorithmToString(RandomAlgorithm algorithm) {
  return NameOf(kRandomAlgorithms, algorithm);
}
absl::StatusOr<RandomAlgorithm> StringToRandomAlgorithm(absl::string_view name) {
  return ValueOf(kRandomAlgorithms, name, "rng algorithm", /*ignore_case=*/true);
}

absl::string_view PrecisionToString(PrecisionConfig::Precision precision) {
  return NameOf(kPrecisions, precision);
}
absl::StatusOr<PrecisionConfig::Precision> StringToPrecision(absl::string_view name) {
  return ValueOf(kPrecisions, name, "precision", /*ignore_case=*/true);
}

absl::string_view AlgorithmToString(PrecisionConfig::Algorithm algorithm) {
  return NameOf(kAlgorithms, algorithm);
}
absl::StatusOr<PrecisionConfig::Algorithm> StringToAlgorithm(absl::string_view name) {
  return ValueOf(kAlgorithms, name, "dot algorithm", /*ignore_case=*/true);
}

absl::string_view CustomCallApiVersionToString(CustomCallApiVersion version) {
  return NameOf(kApiVersions, version);
}
absl::StatusOr<CustomCallApiVersion> StringToCustomCallApiVersion(absl::string_view name) {
  return ValueOf(kApiVersions, name, "custom-call API version", /*ignore_case=*/true);
}

absl::string_view CustomCallScheduleToString(CustomCallSchedule schedule) {
  return NameOf(kSchedules, schedule);
}
absl::StatusOr<CustomCallSchedule> StringToCustomCallSchedule(absl::string_view name) {
  return ValueOf(kSchedules, name, "custom-call schedule", /*ignore_case=*/true);
}

absl::string_view FusionKindToString(FusionKind kind) { return NameOf(kFusionKinds, kind); }
absl::StatusOr<FusionKind> StringToFusionKind(absl::string_view name) {
  return ValueOf(kFusionKinds, name, "fusion kind", /*ignore_case=*/false);
}

absl::string_view TriangularSolveTransposeToString(TriangularSolveOptions::Transpose transpose) {
  return NameOf(kTransposes, transpose);
}
absl::StatusOr<TriangularSolveOptions::Transpose> StringToTriangularSolveTranspose(
    absl::string_view name) {
  return ValueOf(kTransposes, name, "transpose_a value", /*ignore_case=*/false);
}

std::string IntListToString(absl::Span<const int64_t> values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

std::string WindowToString(const Window& window) {
  std::string out;
  auto add_field = [&](absl::string_view heading, auto format) {
    absl::StrAppend(&out, heading, "=");
    for (int i = 0; i < window.dimensions_size(); ++i) {
      if (i > 0) out += "x";
      absl::StrAppend(&out, format(window.dimensions(i)));
    }
  };
  using Dim = WindowDimension;
  if (window.dimensions_size() > 0) {
    add_field("size", [](const Dim& d) { return absl::StrCat(d.size()); });
  }
  if (AnyDimension(window, [](const Dim& d) { return d.stride() != 1; })) {
    add_field(" stride", [](const Dim& d) { return absl::StrCat(d.stride()); });
  }
  if (AnyDimension(window,
                   [](const Dim& d) { return d.padding_low() != 0 || d.padding_high() != 0; })) {
    add_field(" pad",
              [](const Dim& d) { return absl::StrCat(d.padding_low(), "_", d.padding_high()); });
  }
  if (AnyDimension(window, [](const Dim& d) { return d.base_dilation() != 1; })) {
    add_field(" lhs_dilate", [](const Dim& d) { return absl::StrCat(d.base_dilation()); });
  }
  if (AnyDimension(window, [](const Dim& d) { return d.window_dilation() != 1; })) {
    add_field(" rhs_dilate", [](const Dim& d) { return absl::StrCat(d.window_dilation()); });
  }
  if (AnyDimension(window, [](const Dim& d) { return d.window_reversal(); })) {
    add_field(" rhs_reversal",
              [](const Dim& d) { return absl::StrCat(d.window_reversal() ? 1 : 0); });
  }
  return out;
}

std::string ConvolutionDimensionNumbersToString(const ConvolutionDimensionNumbers& dnums) {
  // One label per dimension: `batch`/`feature` letters and the spatial
  // dimension's ordinal; '?' for a dimension nothing names.
  auto labels = [](int64_t first, char first_label, int64_t second, char second_label,
                   absl::Span<const int64_t> spatial) {
    int64_t rank = std::max(first, second) + 1;
    for (int64_t d : spatial) rank = std::max(rank, d + 1);
    std::vector<std::string> out(rank, "?");
    out[first] = std::string(1, first_label);
    out[second] = std::string(1, second_label);
    for (size_t i = 0; i < spatial.size(); ++i) out[spatial[i]] = absl::StrCat(i);
    return absl::StrJoin(out, "");
  };
  return absl::StrCat(
      labels(dnums.input_batch_dimension(), 'b', dnums.input_feature_dimension(), 'f',
             dnums.input_spatial_dimensions()),
      "_",
      labels(dnums.kernel_input_feature_dimension(), 'i', dnums.kernel_output_feature_dimension(),
             'o', dnums.kernel_spatial_dimensions()),
      "->",
      labels(dnums.output_batch_dimension(), 'b', dnums.output_feature_dimension(), 'f',
             dnums.output_spatial_dimensions()));
}

absl::StatusOr<ConvolutionDimensionNumbers> StringToConvolutionDimensionNumbers(
    absl::string_view text) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim_labels '", text, "': ", why, " (expected e.g. b01f_01io->b01f)"));
  };
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  if (underscore == absl::string_view::npos || arrow == absl::string_view::npos ||
      arrow < underscore) {
    return error("missing '_' or '->'");
  }
  absl::string_view lhs = text.substr(0, underscore);
  absl::string_view rhs = text.substr(underscore + 1, arrow - underscore - 1);
  absl::string_view out = text.substr(arrow + 2);
  if (lhs.size() != rhs.size() || lhs.size() != out.size()) {
    return error("input, kernel and output labels must have the same rank");
  }
  // Reads one label string: the positions of the two letters and of the
  // spatial dimensions 0, 1, ... in order.
  struct Parsed {
    int64_t first = -1, second = -1;
    std::vector<int64_t> spatial;
  };
  auto parse = [&](absl::string_view labels, char first, char second) -> std::optional<Parsed> {
    Parsed p;
    std::vector<int64_t> by_ordinal(labels.size(), -1);
    int64_t spatial_count = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      char c = labels[i];
      if (c == first && p.first < 0) {
        p.first = i;
      } else if (c == second && p.second < 0) {
        p.second = i;
      } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < labels.size() &&
                 by_ordinal[c - '0'] < 0) {
        by_ordinal[c - '0'] = i;
        ++spatial_count;
      } else if (c != '?') {
        return std::nullopt;
      }
    }
    if (p.first < 0 || p.second < 0) return std::nullopt;
    for (int64_t k = 0; k < spatial_count; ++k) {
      if (by_ordinal[k] < 0) return std::nullopt;
      p.spatial.push_back(by_ordinal[k]);
    }
    return p;
  };
  std::optional<Parsed> in = parse(lhs, 'b', 'f');
  std::optional<Parsed> kernel = parse(rhs, 'i', 'o');
  std::optional<Parsed> output = parse(out, 'b', 'f');
  if (!in || !kernel || !output) return error("bad label");
  if (in->spatial.size() != kernel->spatial.size() ||
      in->spatial.size() != output->spatial.size()) {
    return error("input, kernel and output must have the same spatial dimensions");
  }
  ConvolutionDimensionNumbers dnums;
  dnums.set_input_batch_dimension(in->first);
  dnums.set_input_feature_dimension(in->second);
  *dnums.mutable_input_spatial_dimensions() = in->spatial;
  dnums.set_kernel_input_feature_dimension(kernel->first);
  dnums.set_kernel_output_feature_dimension(kernel->second);
  *dnums.mutable_kernel_spatial_dimensions() = kernel->spatial;
  dnums.set_output_batch_dimension(output->first);
  dnums.set_output_feature_dimension(output->second);
  *dnums.mutable_output_spatial_dimensions() = output->spatial;
  return dnums;
}

std::string PaddingConfigToString(const PaddingConfig& padding) {
  bool has_interior = std::any_of(padding.dimensions().begin(), padding.dimensions().end(),
                                  [](const auto& d) { return d.interior_padding() != 0; });
  return absl::StrJoin(padding.dimensions(), "x", [&](std::string* out, const auto& d) {
    absl::StrAppend(out, d.edge_padding_low(), "_", d.edge_padding_high());
    if (has_interior) absl::StrAppend(out, "_", d.interior_padding());
  });
}

std::string SliceToString(absl::Span<const int64_t> starts, absl::Span<const int64_t> limits,
                          absl::Span<const int64_t> strides) {
  bool omit_stride = std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
  std::vector<std::string> dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    std::string dim = absl::StrCat("[", starts[i], ":", i < limits.size() ? limits[i] : 0);
    if (!omit_stride) absl::StrAppend(&dim, ":", i < strides.size() ? strides[i] : 1);
    dims.push_back(dim + "]");
  }
  return absl::StrCat("{", absl::StrJoin(dims, ", "), "}");
}

std::string DotDimensionNumbersToString(const DotDimensionNumbers& dnums) {
  std::vector<std::string> parts;
  if (dnums.lhs_batch_dimensions_size() > 0) {
    parts.push_back(absl::StrCat("lhs_batch_dims=", IntListToString(dnums.lhs_batch_dimensions())));
  }
  parts.push_back(
      absl::StrCat("lhs_contracting_dims=", IntListToString(dnums.lhs_contracting_dimensions())));
  if (dnums.rhs_batch_dimensions_size() > 0) {
    parts.push_back(absl::StrCat("rhs_batch_dims=", IntListToString(dnums.rhs_batch_dimensions())));
  }
  parts.push_back(
      absl::StrCat("rhs_contracting_dims=", IntListToString(dnums.rhs_contracting_dimensions())));
  return absl::StrJoin(parts, ", ");
}

std::string GatherDimensionNumbersToString(const GatherDimensionNumbers& dnums) {
  std::string out =
      absl::StrCat("offset_dims=", IntListToString(dnums.offset_dims()),
                   ", collapsed_slice_dims=", IntListToString(dnums.collapsed_slice_dims()),
                   ", start_index_map=", IntListToString(dnums.start_index_map()));
  if (dnums.operand_batching_dims_size() > 0) {
    absl::StrAppend(&out,
                    ", operand_batching_dims=", IntListToString(dnums.operand_batching_dims()));
  }
  if (dnums.start_indices_batching_dims_size() > 0) {
    absl::StrAppend(&out, ", start_indices_batching_dims=",
                    IntListToString(dnums.start_indices_batching_dims()));
  }
  absl::StrAppend(&out, ", index_vector_dim=", dnums.index_vector_dim());
  return out;
}

std::string ScatterDimensionNumbersToString(const ScatterDimensionNumbers& dnums) {
  std::string out = absl::StrCat(
      "update_window_dims=", IntListToString(dnums.update_window_dims()),
      ", inserted_window_dims=", IntListToString(dnums.inserted_window_dims()),
      ", scatter_dims_to_operand_dims=", IntListToString(dnums.scatter_dims_to_operand_dims()));
  if (dnums.input_batching_dims_size() > 0) {
    absl::StrAppend(&out, ", input_batching_dims=", IntListToString(dnums.input_batching_dims()));
  }
  if (dnums.scatter_indices_batching_dims_size() > 0) {
    absl::StrAppend(&out, ", scatter_indices_batching_dims=",
                    IntListToString(dnums.scatter_indices_batching_dims()));
  }
  absl::StrAppend(&out, ", index_vector_dim=", dnums.index_vector_dim());
  return out;
}

std::vector<std::string> PrecisionConfigToStrings(const PrecisionConfig& config) {
  std::vector<std::string> out;
  bool any_non_default =
      std::any_of(config.operand_precision().begin(), config.operand_precision().end(),
                  [](PrecisionConfig::Precision p) { return p != PrecisionConfig::DEFAULT; });
  if (any_non_default) {
    out.push_back(absl::StrCat("operand_precision={",
                               absl::StrJoin(config.operand_precision(), ",",
                                             [](std::string* s, PrecisionConfig::Precision p) {
                                               absl::StrAppend(s, PrecisionToString(p));
                                             }),
                               "}"));
  }
  if (config.algorithm() != PrecisionConfig::ALG_UNSET) {
    out.push_back(absl::StrCat("algorithm=", AlgorithmToString(config.algorithm())));
  }
  return out;
}

bool OpMetadataIsPrinted(const OpMetadata& metadata) {
  return !metadata.op_type().empty() || !metadata.op_name().empty() ||
         !metadata.source_file().empty() || !metadata.scheduling_name().empty() ||
         metadata.stack_frame_id() != 0;
}

std::string OpMetadataToString(const OpMetadata& metadata) {
  std::vector<std::string> parts;
  if (!metadata.op_type().empty()) parts.push_back("op_type=" + QuotedString(metadata.op_type()));
  if (!metadata.op_name().empty()) parts.push_back("op_name=" + QuotedString(metadata.op_name()));
  if (!metadata.source_file().empty()) {
    parts.push_back("source_file=" + QuotedString(metadata.source_file()));
  }
  if (metadata.source_line() != 0) {
    parts.push_back(absl::StrCat("source_line=", metadata.source_line()));
  }
  if (metadata.source_end_line() != 0) {
    parts.push_back(absl::StrCat("source_end_line=", metadata.source_end_line()));
  }
  if (metadata.source_column() != 0) {
    parts.push_back(absl::StrCat("source_column=", metadata.source_column()));
  }
  if (metadata.source_end_column() != 0) {
    parts.push_back(absl::StrCat("source_end_column=", metadata.source_end_column()));
  }
  if (metadata.profile_type_size() > 0) {
    parts.push_back(
        absl::StrCat("profile_type={", absl::StrJoin(metadata.profile_type(), ","), "}"));
  }
  if (!metadata.deduplicated_name().empty()) {
    parts.push_back("deduplicated_name=" + QuotedString(metadata.deduplicated_name()));
  }
  if (!metadata.scheduling_name().empty()) {
    // XLA does not escape it; Axle does, so that any name reads back (the
    // same text for every name without quotes or backslashes).
    parts.push_back("scheduling_name=" + QuotedString(metadata.scheduling_name()));
  }
  if (metadata.stack_frame_id() != 0) {
    parts.push_back(absl::StrCat("stack_frame_id=", metadata.stack_frame_id()));
  }
  return absl::StrJoin(parts, " ");
}

std::string ReplicaGroupsToString(absl::Span<const ReplicaGroup> groups) {
  return absl::StrCat("{",
                      absl::StrJoin(groups, ",",
                                    [](std::string* out, const ReplicaGroup& g) {
                                      absl::StrAppend(out, IntListToString(g.replica_ids()));
                                    }),
                      "}");
}

std::string SourceTargetPairsToString(absl::Span<const std::pair<int64_t, int64_t>> pairs) {
  return absl::StrCat("{",
                      absl::StrJoin(pairs, ",",
                                    [](std::string* out, const std::pair<int64_t, int64_t>& p) {
                                      absl::StrAppend(out, "{", p.first, ",", p.second, "}");
                                    }),
                      "}");
}

std::string FrontendAttributesToString(const FrontendAttributes& attributes) {
  // std::map iterates in key order, as XLA sorts.
  return absl::StrCat(
      "{",
      absl::StrJoin(attributes, ",",
                    [](std::string* out, const std::pair<const std::string, std::string>& kv) {
                      if (LexesAsJsonDict(kv.second)) {
                        absl::StrAppend(out, kv.first, "=", kv.second);
                      } else {
                        absl::StrAppend(out, kv.first, "=", QuotedString(kv.second));
                      }
                    }),
      "}");
}

std::string OutputOperandAliasingToString(absl::Span<const OutputOperandAlias> aliasing) {
  return absl::StrCat("{",
                      absl::StrJoin(aliasing, ", ",
                                    [](std::string* out, const OutputOperandAlias& a) {
                                      absl::StrAppend(out, ShapeIndexToString(a.output_index),
                                                      ": (", a.operand_number, ", ",
                                                      ShapeIndexToString(a.operand_index), ")");
                                    }),
                      "}");
}

int64_t AsyncShorthandParameterCount(HloOpcode opcode) {
  if (opcode == HloOpcode::kDot) return 2;
  int arity = HloOpcodeArity(opcode);
  return arity == kVariadic ? 0 : arity;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ParseInt64ListList(absl::string_view text,
                                                                     absl::string_view what) {
  std::vector<std::vector<int64_t>> lists;
  size_t i = 0;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad ", what, " \"", text, "\" at ", i, ": ", why));
  };
  auto skip_spaces = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  auto expect = [&](char c) {
    skip_spaces();
    if (i == text.size() || text[i] != c) return false;
    ++i;
    return true;
  };
  if (!expect('{')) return bad("expected '{'");
  if (expect('}')) return lists;
  do {
    if (!expect('{')) return bad("expected '{'");
    std::vector<int64_t>& list = lists.emplace_back();
    if (expect('}')) continue;
    do {
      skip_spaces();
      bool negative = i < text.size() && text[i] == '-';
      if (negative) ++i;
      if (i == text.size() || text[i] < '0' || text[i] > '9') return bad("expected a number");
      int64_t value = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (value > (int64_t{1} << 50)) return bad("number too large");
        value = value * 10 + (text[i++] - '0');
      }
      list.push_back(negative ? -value : value);
    } while (expect(','));
    if (!expect('}')) return bad("expected ',' or '}'");
  } while (expect(','));
  if (!expect('}')) return bad("expected ',' or '}'");
  skip_spaces();
  if (i != text.size()) return bad("trailing text");
  return lists;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSendRecvSourceTargetPairs(
    absl::string_view text) {
  AXLE_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> lists,
                        ParseInt64ListList(text, "_xla_send_recv_source_target_pairs"));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const std::vector<int64_t>& list : lists) {
    if (list.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("odd _xla_send_recv_source_target_pairs \"",
                                                     text, "\": each pair must have two ids"));
    }
    if (list[0] < 0 || list[1] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad _xla_send_recv_source_target_pairs \"", text, "\": a negative id"));
    }
    pairs.emplace_back(list[0], list[1]);
  }
  return pairs;
}

}  // namespace axle
