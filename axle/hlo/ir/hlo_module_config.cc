#include "axle/hlo/ir/hlo_module_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace axle {

absl::Status HloInputOutputAliasConfig::SetUpAlias(const ShapeIndex& output_index,
                                                   int64_t parameter_number,
                                                   const ShapeIndex& parameter_index,
                                                   AliasKind kind) {
  if (parameter_number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input_output_alias: parameter number ", parameter_number, " is negative"));
  }
  if (GetAliasedParameter(output_index) != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input_output_alias: output ", ShapeIndexToString(output_index), " is already aliased"));
  }
  Alias alias{output_index, parameter_number, parameter_index, kind};
  auto it = std::lower_bound(
      aliases_.begin(), aliases_.end(), alias,
      [](const Alias& a, const Alias& b) { return a.output_index < b.output_index; });
  aliases_.insert(it, alias);
  return absl::OkStatus();
}

const HloInputOutputAliasConfig::Alias* HloInputOutputAliasConfig::GetAliasedParameter(
    const ShapeIndex& output_index) const {
  for (const Alias& alias : aliases_) {
    if (alias.output_index == output_index) return &alias;
  }
  return nullptr;
}

std::optional<ShapeIndex> HloInputOutputAliasConfig::GetAliasedOutput(
    int64_t parameter_number, const ShapeIndex& parameter_index) const {
  for (const Alias& alias : aliases_) {
    if (alias.parameter_number == parameter_number && alias.parameter_index == parameter_index) {
      return alias.output_index;
    }
  }
  return std::nullopt;
}

std::string HloInputOutputAliasConfig::ToString() const {
  std::vector<std::string> pieces;
  for (const Alias& alias : aliases_) {
    pieces.push_back(absl::StrCat(ShapeIndexToString(alias.output_index), ": (",
                                  alias.parameter_number, ", ",
                                  ShapeIndexToString(alias.parameter_index),
                                  alias.kind == AliasKind::kMustAlias ? ", must-alias" : "", ")"));
  }
  return absl::StrCat("{ ", absl::StrJoin(pieces, ", "), " }");
}

absl::Status HloBufferDonorConfig::AddBufferDonor(int64_t parameter_number,
                                                  const ShapeIndex& parameter_index) {
  if (parameter_number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer_donor: parameter number ", parameter_number, " is negative"));
  }
  Donor donor{parameter_number, parameter_index};
  auto it = std::lower_bound(donors_.begin(), donors_.end(), donor);
  if (it != donors_.end() && *it == donor) return absl::OkStatus();
  donors_.insert(it, donor);
  return absl::OkStatus();
}

bool HloBufferDonorConfig::ParameterIsBufferDonor(int64_t parameter_number,
                                                  const ShapeIndex& parameter_index) const {
  return std::binary_search(donors_.begin(), donors_.end(),
                            Donor{parameter_number, parameter_index});
}

std::string HloBufferDonorConfig::ToString() const {
  std::vector<std::string> pieces;
  for (const Donor& donor : donors_) {
    pieces.push_back(absl::StrCat("(", donor.parameter_number, ", ",
                                  ShapeIndexToString(donor.parameter_index), ")"));
  }
  return absl::StrCat("{ ", absl::StrJoin(pieces, ", "), " }");
}

}  // namespace axle
