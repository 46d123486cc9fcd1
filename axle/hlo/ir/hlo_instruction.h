//===- hlo_instruction.h - One HLO operation -------------------------------===//
//
// The base class holds what every instruction has: opcode, shape, operands,
// users, name, called computations, control dependencies and the generic
// attributes (metadata, sharding, frontend attributes, backend config).
// Op-specific attributes live in the small subclasses of hlo_instructions.h;
// use isa<>/cast<>/dyn_cast<> (keyed on the opcode) to reach them.
//
// An instruction is owned by its parent HloComputation.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_INSTRUCTION_H_
#define AXLE_HLO_IR_HLO_INSTRUCTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/base/logging.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_opcode.h"

namespace axle {

class HloComputation;
class HloModule;
class HloPrintOptions;  // hlo/text/hlo_printer.h

// `sharding={...}`: kept as its canonical text. (Axle runs on one device; the
// sharding is carried through for the tools and for XLA compatibility.)
class HloSharding {
 public:
  HloSharding() = default;
  explicit HloSharding(std::string text) : text_(std::move(text)) {}
  // The text between and including the outer braces: "{replicated}".
  const std::string& ToString() const { return text_; }
  bool operator==(const HloSharding& other) const = default;

 private:
  std::string text_;
};

// An attribute the parser accepted but Axle does not interpret: kept verbatim
// (name and value text) so that printing gives it back.
struct RawAttribute {
  std::string name;
  std::string value;
  bool operator==(const RawAttribute&) const = default;
};

// Ordered string map, as XLA prints frontend attributes sorted by key.
using FrontendAttributes = std::map<std::string, std::string>;

class HloInstruction {
 public:
  virtual ~HloInstruction();
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  // Creates an instruction of an opcode that has no op-specific attributes
  // (elementwise ops, tuple, copy, ...). Ops with attributes are created
  // through their subclass constructors.
  static std::unique_ptr<HloInstruction> Create(HloOpcode opcode, const Shape& shape,
                                                absl::Span<HloInstruction* const> operands);

  HloOpcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }

  const std::string& name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }
  int64_t unique_id() const { return unique_id_; }
  void SetUniqueId(int64_t id) { unique_id_ = id; }

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* parent) { parent_ = parent; }
  // True for the root of its computation.
  bool IsRoot() const;

  // --- Operands and users ---------------------------------------------------
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  const HloInstruction* operand(int64_t i) const { return operands_[i]; }
  HloInstruction* mutable_operand(int64_t i) { return operands_[i]; }
  // Adds `operand` as the last operand and records this as its user.
  void AppendOperand(HloInstruction* operand);
  // Replaces operand i (updating user lists).
  absl::Status ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Replaces every use of `old_operand` among this instruction's operands.
  absl::Status ReplaceUseWith(HloInstruction* user, HloInstruction* new_producer);
  // Makes every user of this instruction (and its computation's root, if it
  // is the root) use `new_producer` instead. Shapes must be compatible.
  absl::Status ReplaceAllUsesWith(HloInstruction* new_producer);
  void RemoveAllOperands();

  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  bool IsUserOf(const HloInstruction* operand) const;

  // --- Control dependencies -------------------------------------------------
  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_successors_; }
  // `this` must run before `successor`.
  void AddControlDependencyTo(HloInstruction* successor);
  void RemoveControlDependencyTo(HloInstruction* successor);
  void DropAllControlDeps();

  // --- Called computations --------------------------------------------------
  // In XLA's order: to_apply; condition, body; branch computations; fused
  // computation; async wrapped computation; select, scatter.
  const std::vector<HloComputation*>& called_computations() const { return called_computations_; }
  void AppendCalledComputation(HloComputation* computation) {
    called_computations_.push_back(computation);
  }
  void set_called_computation(int64_t i, HloComputation* computation) {
    called_computations_[i] = computation;
  }
  void ClearCalledComputations() { called_computations_.clear(); }
  // Role accessors; each CHECKs the opcode has that role.
  HloComputation* to_apply()
      const;  // reduce, map, sort, reduce-window, scatter, call, all-reduce, ...
  void set_to_apply(HloComputation* computation);
  HloComputation* while_condition() const;
  HloComputation* while_body() const;
  const std::vector<HloComputation*>& branch_computations() const;  // conditional
  HloComputation* select() const;                                   // select-and-scatter
  HloComputation* scatter() const;                                  // select-and-scatter

  // --- Generic attributes ---------------------------------------------------
  const OpMetadata& metadata() const { return metadata_; }
  OpMetadata* mutable_metadata() { return &metadata_; }
  void set_metadata(OpMetadata metadata) { metadata_ = std::move(metadata); }

  bool has_sharding() const { return sharding_.has_value(); }
  const HloSharding& sharding() const { return *sharding_; }
  void set_sharding(HloSharding sharding) { sharding_ = std::move(sharding); }
  void clear_sharding() { sharding_.reset(); }

  const FrontendAttributes& frontend_attributes() const { return frontend_attributes_; }
  FrontendAttributes* mutable_frontend_attributes() { return &frontend_attributes_; }
  void set_frontend_attributes(FrontendAttributes attrs) {
    frontend_attributes_ = std::move(attrs);
  }

  // `backend_config=...`: a string or JSON object text, kept verbatim.
  const std::string& raw_backend_config_string() const { return backend_config_; }
  void set_raw_backend_config_string(std::string config) { backend_config_ = std::move(config); }

  // Attributes kept verbatim (see RawAttribute), printed in their order.
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attributes_; }
  std::vector<RawAttribute>* mutable_raw_attributes() { return &raw_attributes_; }
  const RawAttribute* FindRawAttribute(absl::string_view name) const;

  // --- Whole-instruction operations -----------------------------------------
  // A copy with a new shape and operands; the clone has no parent, no users
  // and no control dependencies, and keeps the called computations.
  std::unique_ptr<HloInstruction> CloneWithNewOperands(
      const Shape& shape, absl::Span<HloInstruction* const> operands) const;

  bool IsElementwise() const { return HloOpcodeIsElementwise(opcode_); }
  // Has side effects: never removed as dead, never merged with an equal twin.
  bool HasSideEffect() const;

  // The instruction printed as one line of HLO text (see hlo/text/).
  std::string ToString() const;
  std::string ToString(const HloPrintOptions& options) const;

 protected:
  HloInstruction(HloOpcode opcode, const Shape& shape);

  // Subclasses copy their op-specific attributes into a fresh instance.
  virtual std::unique_ptr<HloInstruction> CloneImpl(
      const Shape& shape, absl::Span<HloInstruction* const> operands) const;

 private:
  void RemoveUser(HloInstruction* user);

  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  std::vector<HloComputation*> called_computations_;
  OpMetadata metadata_;
  std::optional<HloSharding> sharding_;
  FrontendAttributes frontend_attributes_;
  std::string backend_config_;
  std::vector<RawAttribute> raw_attributes_;
};

// LLVM-style casts keyed on the opcode: each subclass has
// `static bool ClassOf(const HloInstruction*)`.
template <typename T>
bool isa(const HloInstruction* instruction) {
  return instruction != nullptr && T::ClassOf(instruction);
}
template <typename T>
T* cast(HloInstruction* instruction) {
  CHECK(isa<T>(instruction)) << "bad cast of " << instruction->name();
  return static_cast<T*>(instruction);
}
template <typename T>
const T* cast(const HloInstruction* instruction) {
  CHECK(isa<T>(instruction)) << "bad cast of " << instruction->name();
  return static_cast<const T*>(instruction);
}
template <typename T>
T* dyn_cast(HloInstruction* instruction) {
  return isa<T>(instruction) ? static_cast<T*>(instruction) : nullptr;
}
template <typename T>
const T* dyn_cast(const HloInstruction* instruction) {
  return isa<T>(instruction) ? static_cast<const T*>(instruction) : nullptr;
}

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_INSTRUCTION_H_
