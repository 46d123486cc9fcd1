//===- hlo_module.h - A whole HLO program ----------------------------------===//
//
// A module owns its computations (one entry, the rest called from it) and
// its config. Instruction and computation names are unique within a module.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_MODULE_H_
#define AXLE_HLO_IR_HLO_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module_config.h"

namespace axle {

namespace proto {
class HloModuleProto;
}  // namespace proto

class HloModule {
 public:
  explicit HloModule(std::string name, HloModuleConfig config = {});
  ~HloModule();
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  const HloModuleConfig& config() const { return config_; }
  HloModuleConfig& mutable_config() { return config_; }
  const HloInputOutputAliasConfig& input_output_alias_config() const {
    return config_.input_output_alias;
  }
  HloInputOutputAliasConfig& input_output_alias_config() { return config_.input_output_alias; }
  const HloBufferDonorConfig& buffer_donor_config() const { return config_.buffer_donor; }
  HloBufferDonorConfig& buffer_donor_config() { return config_.buffer_donor; }

  // Adds a computation; the module owns it. The entry one is set as entry.
  HloComputation* AddEntryComputation(std::unique_ptr<HloComputation> computation);
  HloComputation* AddEmbeddedComputation(std::unique_ptr<HloComputation> computation);
  absl::Status RemoveEmbeddedComputation(HloComputation* computation);
  // Removes computations no longer reachable from the entry.
  void RemoveUnusedComputations();

  HloComputation* entry_computation() const { return entry_; }
  // In insertion order.
  std::vector<HloComputation*> computations() const;
  // Callees before callers; the entry last. Unreachable computations come
  // first, in insertion order.
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  HloComputation* GetComputationWithName(absl::string_view name) const;
  int64_t computation_count() const { return static_cast<int64_t>(computations_.size()); }
  int64_t instruction_count() const;

  // Entry parameter and result shapes (with layouts).
  ProgramShape entry_computation_program_shape() const;

  // Unique names: "add" -> "add", then "add.1", "add.2", ...
  std::string GetUniqueName(absl::string_view prefix);
  // Registers a name already in use (as parsed from text).
  void ReserveName(absl::string_view name) { used_names_.insert(std::string(name)); }
  int64_t NewUniqueInstructionId() { return next_unique_id_++; }

  // A deep copy (all computations, config).
  std::unique_ptr<HloModule> Clone(std::string suffix = "clone") const;

  // The module in XLA's HLO text format (see hlo/text/).
  std::string ToString() const;
  std::string ToString(const HloPrintOptions& options) const;

  // The module as XLA's HloModuleProto (wire-compatible with XLA's
  // hlo.proto), and back; defined in hlo/proto/ (library axle_hlo_proto,
  // whose hlo_proto.h declares the messages). What Axle cannot write to the
  // proto, or read from it, is an Unimplemented error naming the field.
  absl::StatusOr<proto::HloModuleProto> ToProtoOrError() const;
  // XLA's spelling: the proto, or, where ToProtoOrError fails, an empty
  // proto (no computations, which CreateFromProto rejects) after printing
  // the error to stderr.
  proto::HloModuleProto ToProto() const;
  static absl::StatusOr<std::unique_ptr<HloModule>> CreateFromProto(
      const proto::HloModuleProto& proto, const HloModuleConfig& config = {});

 private:
  std::string name_;
  HloModuleConfig config_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  absl::flat_hash_set<std::string> used_names_;
  // Per prefix, the suffix GetUniqueName tries next: every smaller one is
  // taken (names are never released), so the search starts there instead
  // of at 1 (linear in the names handed out per call otherwise: fusing a
  // few hundred ops took seconds).
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t next_unique_id_ = 0;
};

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_MODULE_H_
