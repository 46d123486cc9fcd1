//===- hlo_module_config.h - Module-level settings -------------------------===//
//
// What a module says about itself beyond its computations: the entry layout,
// input/output aliasing and buffer donors, replica and partition counts, the
// schedule flag, frontend attributes, and the header attributes Axle keeps
// but does not interpret.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_MODULE_CONFIG_H_
#define AXLE_HLO_IR_HLO_MODULE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// input_output_alias={ {output_index}: (param, {param_index}, kind), ... }
class HloInputOutputAliasConfig {
 public:
  // A plain enum, as in XLA: both HloInputOutputAliasConfig::kMustAlias and
  // HloInputOutputAliasConfig::AliasKind::kMustAlias name a kind.
  enum AliasKind { kMayAlias, kMustAlias };
  struct Alias {
    ShapeIndex output_index;
    int64_t parameter_number = 0;
    ShapeIndex parameter_index;
    AliasKind kind = AliasKind::kMayAlias;
    bool must_alias() const { return kind == AliasKind::kMustAlias; }
    bool operator==(const Alias&) const = default;
  };

  // Fails when the output index is already aliased.
  absl::Status SetUpAlias(const ShapeIndex& output_index, int64_t parameter_number,
                          const ShapeIndex& parameter_index, AliasKind kind = AliasKind::kMayAlias);
  // Sorted by output index.
  const std::vector<Alias>& aliases() const { return aliases_; }
  bool empty() const { return aliases_.empty(); }
  const Alias* GetAliasedParameter(const ShapeIndex& output_index) const;
  // The output aliased to (parameter, index), if any.
  std::optional<ShapeIndex> GetAliasedOutput(int64_t parameter_number,
                                             const ShapeIndex& parameter_index) const;
  bool ParameterHasAlias(int64_t parameter_number, const ShapeIndex& parameter_index) const {
    return GetAliasedOutput(parameter_number, parameter_index).has_value();
  }
  // "{ {0}: (0, {}, may-alias), {1}: (1, {}) }" as XLA prints it.
  std::string ToString() const;
  bool operator==(const HloInputOutputAliasConfig&) const = default;

 private:
  std::vector<Alias> aliases_;
};

// buffer_donor={ (param, {index}), ... }
class HloBufferDonorConfig {
 public:
  struct Donor {
    int64_t parameter_number = 0;
    ShapeIndex parameter_index;
    bool operator==(const Donor&) const = default;
    auto operator<=>(const Donor&) const = default;
  };
  absl::Status AddBufferDonor(int64_t parameter_number, const ShapeIndex& parameter_index);
  const std::vector<Donor>& donors() const { return donors_; }
  bool empty() const { return donors_.empty(); }
  bool ParameterIsBufferDonor(int64_t parameter_number, const ShapeIndex& parameter_index) const;
  std::string ToString() const;
  bool operator==(const HloBufferDonorConfig&) const = default;

 private:
  std::vector<Donor> donors_;  // sorted
};

struct HloModuleConfig {
  std::optional<ProgramShape> entry_computation_layout;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool is_scheduled = false;
  HloInputOutputAliasConfig input_output_alias;
  HloBufferDonorConfig buffer_donor;
  FrontendAttributes frontend_attributes;
  // Header attributes kept verbatim (allow_spmd_sharding_propagation_to_*,
  // origin_recovery_table, alias_passthrough_params, ...), in order.
  std::vector<RawAttribute> raw_attributes;
  // The stack frame index between the header and the first computation
  // (`FileNames ... FunctionNames ... FileLocations ... StackFrames ...`),
  // verbatim; empty when the text has none.
  std::string stack_frame_index;
};

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_MODULE_CONFIG_H_
