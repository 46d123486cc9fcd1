//===- hlo_computation.h - A function of HLO instructions ------------------===//
//
// A computation owns its instructions (parameters, body, one root). It is
// owned by an HloModule; the entry computation is the module's program, the
// others are called (to_apply, while body, fused computation, ...).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_COMPUTATION_H_
#define AXLE_HLO_IR_HLO_COMPUTATION_H_

#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

class HloComputation {
 public:
  explicit HloComputation(std::string name);
  ~HloComputation();
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }
  int64_t unique_id() const { return unique_id_; }
  void SetUniqueId(int64_t id) { unique_id_ = id; }

  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* module) { parent_ = module; }
  bool IsEntryComputation() const;

  // Adds an instruction (a parameter instruction is also registered as
  // parameter number N). Returns the raw pointer; the computation owns it.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // Removes an instruction that has no users and is not the root.
  absl::Status RemoveInstruction(HloInstruction* instruction);
  // Removes `instruction` and then every operand left without users (not
  // parameters, not side-effecting instructions).
  absl::Status RemoveInstructionAndUnusedOperands(HloInstruction* instruction);
  // Replaces all uses of old_instruction with new_instruction and removes
  // old_instruction.
  absl::Status ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* new_instruction);

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* root) { root_ = root; }

  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  HloInstruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }

  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // In insertion order.
  std::vector<HloInstruction*> instructions() const;
  // Operands (and control predecessors) before users; ties broken by
  // insertion order, so the result is deterministic.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

  // Computations called by this computation's instructions, each once, in
  // post order (callees first).
  std::vector<HloComputation*> MakeEmbeddedComputationsList() const;

  // `execution_thread="..."` (async computations); "main" by default.
  const std::string& execution_thread() const { return execution_thread_; }
  void SetExecutionThread(std::string thread) { execution_thread_ = std::move(thread); }

  // When this computation is the fused computation of a fusion instruction.
  HloInstruction* FusionInstruction() const { return fusion_instruction_; }
  void SetFusionInstruction(HloInstruction* fusion) { fusion_instruction_ = fusion; }
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }

  // HLO text of the whole computation (see hlo/text/).
  std::string ToString() const;
  std::string ToString(const HloPrintOptions& options) const;

 private:
  std::string name_;
  int64_t unique_id_ = -1;
  HloModule* parent_ = nullptr;
  std::list<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
  std::string execution_thread_ = "main";
};

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_COMPUTATION_H_
