// Buffer assignment (see buffer_assignment.h).
//
// The steps: lay out the sequential order; make one value per subshape
// (but for a value the backend never stores); union the values that are
// the same memory by construction, or that a backend computes in their
// user's memory; union across control-flow boundaries where that is safe
// (else record a RequiredCopy); give each resulting buffer a live range;
// then hand the buffers to the core (buffer_allocation.cc): parameters,
// constants, live-out, and a first-fit packing of the rest into the temp
// arena.
#include "axle/hlo/analysis/buffer_assignment.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/in_place_sharing.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

namespace {

bool IsControlFlow(const HloInstruction& instruction) {
  return instruction.opcode() == HloOpcode::kWhile ||
         instruction.opcode() == HloOpcode::kConditional ||
         instruction.opcode() == HloOpcode::kCall;
}

}  // namespace

class BufferAssigner {
 public:
  BufferAssigner(const HloModule& module, const BufferAssignmentOptions& options)
      : module_(module), options_(options), out_(std::make_unique<BufferAssignment>()) {}

  absl::StatusOr<std::unique_ptr<BufferAssignment>> Run() {
    const HloComputation* entry = module_.entry_computation();
    if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
    Sequence(entry);
    MakeValues();
    MergeStructural();
    MergeValuesInUsers();
    ComputeValueTimes();
    ShareInPlace();
    MergeAcrossCalls();
    absl::Status status = MergeEntryAliases();
    if (!status.ok()) return status;
    status = Allocate();
    if (!status.ok()) return status;
    return std::move(out_);
  }

 private:
  // --- Order ----------------------------------------------------------------
  void Sequence(const HloComputation* computation) {
    std::vector<const HloInstruction*> order;
    span_start_[computation] = static_cast<int64_t>(out_->sequence_.size());
    for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      order.push_back(instruction);
      if (IsControlFlow(*instruction)) {
        for (const HloComputation* callee : instruction->called_computations()) {
          if (callee == nullptr) continue;
          if (caller_.contains(callee)) {
            multi_called_.insert(callee);
            continue;
          }
          caller_[callee] = instruction;
          Sequence(callee);
        }
      }
      time_[instruction] = static_cast<int64_t>(out_->sequence_.size());
      out_->sequence_.push_back(instruction);
    }
    out_->orders_[computation] = std::move(order);
    computations_.push_back(computation);
  }

  // The position at which `user` (anywhere) acts in `frame`'s order: its own
  // when it is in frame, else that of the instruction in frame that
  // (transitively) calls it; -1 when frame does not contain it.
  int64_t TimeIn(const HloInstruction* user, const HloComputation* frame) const {
    const HloInstruction* at = user;
    while (at->parent() != frame) {
      auto it = caller_.find(at->parent());
      if (it == caller_.end()) return -1;
      at = it->second;
    }
    return time_.at(at);
  }

  // --- Values ---------------------------------------------------------------
  int64_t ValueId(const HloInstruction* instruction, const ShapeIndex& index) const {
    auto it = value_ids_.find({instruction, index});
    return it == value_ids_.end() ? -1 : it->second;
  }

  void MakeValues() {
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : out_->orders_[computation]) {
        std::optional<ValueInUser> in_user;
        if (options_.value_in_user && instruction->shape().IsArray()) {
          in_user = options_.value_in_user(*instruction);
        }
        if (in_user.has_value()) {
          out_->values_in_users_.emplace_back(instruction, *in_user);
          if (!in_user->stored) continue;  // no value: nothing holds it
        }
        ShapeUtil::ForEachSubshape(
            instruction->shape(), [&](const Shape& shape, const ShapeIndex& index) {
              if (!shape.IsArray() && !shape.IsTuple()) return;
              value_ids_[{instruction, index}] = static_cast<int64_t>(values_.size());
              values_.push_back({instruction, index});
              sizes_.push_back(shape.IsTuple() ? shape.tuple_shapes_size() * options_.pointer_size
                                               : ShapeUtil::ByteSizeOfElements(shape));
            });
      }
    }
    parent_.resize(values_.size());
    std::iota(parent_.begin(), parent_.end(), 0);
    members_.resize(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) members_[i] = {static_cast<int64_t>(i)};
  }

  int64_t Find(int64_t v) {
    while (parent_[v] != v) {
      parent_[v] = parent_[parent_[v]];
      v = parent_[v];
    }
    return v;
  }

  void Union(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return;
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (members_[a].size() < members_[b].size()) std::swap(a, b);
    parent_[b] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
  }

  // Unions instruction `a` at prefix_a + X with `b` at prefix_b + X for
  // every subshape X of `shape`.
  void UnionSubshapes(const Shape& shape, const HloInstruction* a, const ShapeIndex& prefix_a,
                      const HloInstruction* b, const ShapeIndex& prefix_b) {
    ShapeUtil::ForEachSubshape(shape, [&](const Shape&, const ShapeIndex& index) {
      ShapeIndex ia = prefix_a, ib = prefix_b;
      ia.insert(ia.end(), index.begin(), index.end());
      ib.insert(ib.end(), index.begin(), index.end());
      Union(ValueId(a, ia), ValueId(b, ib));
    });
  }

  void MergeStructural() {
    for (const HloInstruction* instruction : out_->sequence_) {
      switch (instruction->opcode()) {
        case HloOpcode::kBitcast:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
          UnionSubshapes(instruction->shape(), instruction, {}, instruction->operand(0), {});
          break;
        case HloOpcode::kGetTupleElement: {
          int64_t i = cast<HloGetTupleElementInstruction>(instruction)->tuple_index();
          UnionSubshapes(instruction->shape(), instruction, {}, instruction->operand(0), {i});
          break;
        }
        case HloOpcode::kTuple:
          for (int64_t i = 0; i < instruction->operand_count(); ++i) {
            UnionSubshapes(instruction->operand(i)->shape(), instruction, {i},
                           instruction->operand(i), {});
          }
          break;
        case HloOpcode::kWhile:
          for (const HloComputation* callee : instruction->called_computations()) {
            if (multi_called_.contains(callee)) continue;
            UnionSubshapes(instruction->shape(), instruction, {}, callee->parameter_instruction(0),
                           {});
          }
          break;
        case HloOpcode::kConditional:
        case HloOpcode::kCall: {
          // Callee parameters are the caller's operands (read only).
          bool conditional = instruction->opcode() == HloOpcode::kConditional;
          const auto& callees = instruction->called_computations();
          for (size_t c = 0; c < callees.size(); ++c) {
            if (multi_called_.contains(callees[c])) continue;
            for (int64_t p = 0; p < callees[c]->num_parameters(); ++p) {
              const HloInstruction* operand =
                  instruction->operand(conditional ? static_cast<int64_t>(c) + 1 : p);
              UnionSubshapes(operand->shape(), callees[c]->parameter_instruction(p), {}, operand,
                             {});
            }
          }
          break;
        }
        default:
          break;
      }
    }
  }

  // A value the backend writes straight into its user's result shares the
  // user's buffer.
  void MergeValuesInUsers() {
    for (const auto& [instruction, in_user] : out_->values_in_users_) {
      if (in_user.stored) Union(ValueId(instruction, {}), ValueId(in_user.user, {}));
    }
  }

  // Definition and last-use positions of each value (in its own
  // computation's frame, nested uses at the calling instruction).
  void ComputeValueTimes() {
    const int64_t end = static_cast<int64_t>(out_->sequence_.size());
    def_.assign(values_.size(), 0);
    last_use_.assign(values_.size(), 0);
    for (size_t v = 0; v < values_.size(); ++v) {
      const HloInstruction* instruction = values_[v].instruction;
      const HloComputation* computation = instruction->parent();
      if (multi_called_.contains(computation)) {
        def_[v] = 0;
        last_use_[v] = end;
        continue;
      }
      def_[v] = instruction->opcode() == HloOpcode::kParameter ? span_start_.at(computation)
                                                               : time_.at(instruction);
      int64_t last = def_[v];
      for (const HloInstruction* user : instruction->users()) {
        int64_t t = TimeIn(user, computation);
        if (t >= 0) last = std::max(last, t);
      }
      if (instruction == computation->root_instruction()) {
        auto it = caller_.find(computation);
        last = it == caller_.end() ? end : std::max(last, time_.at(it->second));
      }
      last_use_[v] = last;
    }
  }

  // --- Sharing across calls -------------------------------------------------
  // The buffer of value `v` holds only values computed in `computation` by
  // instructions that are neither parameters nor constants, and none at two
  // indices of `holder`.
  bool IsFreshLocal(int64_t v, const HloComputation* computation, const HloInstruction* holder) {
    int64_t root = Find(v);
    for (int64_t m : members_[root]) {
      const HloInstruction* instruction = values_[m].instruction;
      if (instruction->parent() != computation || instruction->opcode() == HloOpcode::kParameter ||
          instruction->opcode() == HloOpcode::kConstant) {
        return false;
      }
    }
    int occurrences = 0;
    ShapeUtil::ForEachSubshape(holder->shape(), [&](const Shape&, const ShapeIndex& index) {
      int64_t id = ValueId(holder, index);
      if (id >= 0 && Find(id) == root) ++occurrences;
    });
    return occurrences == 1;
  }

  // Shares `root_value` (the root of `callee`, a call's, at index) with
  // `target` (the call's value, which nothing in the callee reads), or
  // records a copy.
  void MergeCallRoot(const HloComputation* callee, const ShapeIndex& index, int64_t target,
                     const HloInstruction* copy_target) {
    const HloInstruction* root = callee->root_instruction();
    int64_t value = ValueId(root, index);
    if (value < 0 || target < 0 || Find(value) == Find(target)) return;
    if (IsFreshLocal(value, callee, root)) {
      Union(value, target);
      return;
    }
    out_->copies_.push_back({{root, index}, {copy_target, index}});
  }

  void MergeWhileInit(const HloInstruction* loop, const ShapeIndex& index) {
    const HloInstruction* init = loop->operand(0);
    int64_t value = ValueId(init, index), state = ValueId(loop, index);
    if (value < 0 || state < 0 || Find(value) == Find(state)) return;
    bool ok = IsFreshLocal(value, loop->parent(), init);
    // Nothing but the loop may read the initial value once the loop starts.
    int64_t loop_start = span_start_.at(loop->while_condition());
    loop_start = std::min(loop_start, span_start_.at(loop->while_body()));
    for (int64_t m : members_[Find(value)]) {
      if (!ok) break;
      if (time_.at(values_[m].instruction) >= loop_start) ok = false;
      for (const HloInstruction* user : values_[m].instruction->users()) {
        if (user != loop && TimeIn(user, loop->parent()) >= loop_start) ok = false;
      }
    }
    if (ok) {
      Union(value, state);
      return;
    }
    out_->copies_.push_back({{init, index}, {loop, index}});
  }

  // While bodies' and conditional branches' roots were stored in place
  // where the rules allow (ShareInPlace); the rest is copied. A call's
  // callee root is its result; a multi-called computation copies.
  void MergeAcrossCalls() {
    for (const HloInstruction* instruction : out_->sequence_) {
      if (!IsControlFlow(*instruction)) continue;
      bool is_while = instruction->opcode() == HloOpcode::kWhile;
      for (const HloComputation* callee : instruction->called_computations()) {
        bool multi = multi_called_.contains(callee);
        if (is_while && callee == instruction->while_condition()) continue;
        const HloInstruction* param =
            callee->num_parameters() > 0 ? callee->parameter_instruction(0) : nullptr;
        const HloInstruction* copy_target = is_while ? param : instruction;
        ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape&,
                                                             const ShapeIndex& index) {
          const int64_t target = ValueId(copy_target, index);
          if (ValueId(instruction, index) < 0 || target < 0) return;
          if (!multi && instruction->opcode() == HloOpcode::kCall) {
            MergeCallRoot(callee, index, ValueId(instruction, index), instruction);
            return;
          }
          const int64_t root = ValueId(callee->root_instruction(), index);
          if (multi || (root >= 0 && Find(root) != Find(target))) {
            out_->copies_.push_back({{callee->root_instruction(), index}, {copy_target, index}});
          }
        });
        if (multi && !is_while) {
          for (int64_t p = 0; p < callee->num_parameters(); ++p) {
            out_->copies_.push_back(
                {{instruction->operand(p), {}}, {callee->parameter_instruction(p), {}}});
          }
        }
      }
      if (is_while) {
        if (multi_called_.contains(instruction->while_body()) ||
            multi_called_.contains(instruction->while_condition())) {
          out_->copies_.push_back({{instruction->operand(0), {}}, {instruction, {}}});
          continue;
        }
        ShapeUtil::ForEachSubshape(
            instruction->shape(),
            [&](const Shape&, const ShapeIndex& index) { MergeWhileInit(instruction, index); });
      }
    }
  }

  // --- In place: the shared rules (in_place_sharing.h) ----------------------
  // The value `instruction` holds at `index`: plumbing (a bitcast, a
  // get-tuple-element, a tuple's element, ...) holds its operand's, as a
  // backend's program builder forwards it; -1 for none.
  int64_t Defining(const HloInstruction* instruction, ShapeIndex index) const {
    while (true) {
      switch (instruction->opcode()) {
        case HloOpcode::kBitcast:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
          instruction = instruction->operand(0);
          continue;
        case HloOpcode::kGetTupleElement:
          index.insert(index.begin(),
                       cast<HloGetTupleElementInstruction>(instruction)->tuple_index());
          instruction = instruction->operand(0);
          continue;
        case HloOpcode::kTuple:
          if (index.empty()) break;
          instruction = instruction->operand(index.front());
          index.erase(index.begin());
          continue;
        default:
          break;
      }
      return ValueId(instruction, index);
    }
  }

  // The values of every subshape of `instruction` that has one (Defining).
  std::vector<int64_t> DefiningValues(const HloInstruction* instruction) const {
    std::vector<int64_t> ids;
    ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape&, const ShapeIndex& index) {
      if (ValueId(instruction, index) >= 0) ids.push_back(Defining(instruction, index));
    });
    return ids;
  }

  // The steps of `computation` as the rules see them: every instruction
  // but parameters, constants and plumbing (a tuple writes its index
  // table), reading its operands' values and writing its own, with the
  // hook's pairs (control flow offers none; nor, but in an elementwise op,
  // does an operand whose value the instruction reads twice).
  // `instructions` gets the instruction of each step.
  std::vector<std::optional<InPlaceStep>> Steps(
      const HloComputation* computation, std::vector<const HloInstruction*>& instructions) const {
    std::vector<std::optional<InPlaceStep>> steps;
    for (const HloInstruction* instruction : out_->orders_.at(computation)) {
      switch (instruction->opcode()) {
        case HloOpcode::kParameter:
        case HloOpcode::kConstant:
        case HloOpcode::kBitcast:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
        case HloOpcode::kGetTupleElement:
          continue;
        default:
          break;
      }
      InPlaceStep step;
      instructions.push_back(instruction);
      if (instruction->opcode() == HloOpcode::kTuple) {
        step.uses.writes.push_back(ValueId(instruction, {}));
        steps.emplace_back(std::move(step));
        continue;
      }
      std::vector<int64_t> operand_values;
      for (const HloInstruction* operand : instruction->operands()) {
        for (int64_t id : DefiningValues(operand)) {
          if (id >= 0) step.uses.reads.push_back(id);
        }
        operand_values.push_back(Defining(operand, {}));
      }
      ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape&, const ShapeIndex& index) {
        const int64_t id = ValueId(instruction, index);
        if (id >= 0) step.uses.writes.push_back(id);
      });
      // An elementwise op reads every operand at the output's index only:
      // the same value twice is no hazard.
      const bool elementwise =
          instruction->opcode() != HloOpcode::kFusion && instruction->IsElementwise();
      if (options_.in_place_pairs && !IsControlFlow(*instruction)) {
        for (const auto& [number, output_index] : options_.in_place_pairs(*instruction)) {
          const int64_t operand = operand_values.at(number);
          const int64_t output = ValueId(instruction, output_index);
          if (operand < 0 || output < 0 || !instruction->operand(number)->shape().IsArray() ||
              (!elementwise &&
               std::count(operand_values.begin(), operand_values.end(), operand) != 1)) {
            continue;
          }
          step.pairs.emplace_back(operand, output);
        }
      }
      steps.emplace_back(std::move(step));
    }
    return steps;
  }

  // Applies the rules to every computation that runs once per call,
  // callees first (as a program builder meets them): outputs take over
  // their operands' memory, and a while body's / a branch's root leaves are
  // computed in the state / the conditional's result. The rules work on
  // value slots: each value's temporary is its buffer (union-find), a
  // buffer holding an entry parameter, a constant or a value of a
  // multi-called computation is not a temporary, and what the rules share
  // is united here.
  void ShareInPlace() {
    const HloComputation* entry = module_.entry_computation();
    for (const HloComputation* computation : computations_) {
      if (multi_called_.contains(computation)) continue;
      auto it = caller_.find(computation);
      const HloInstruction* caller = it == caller_.end() ? nullptr : it->second;
      const HloInstruction* root = computation->root_instruction();
      std::vector<int64_t> roots = DefiningValues(root);
      if (std::count(roots.begin(), roots.end(), -1) > 0) continue;
      // The destination of each root value: a while body's state, a
      // conditional's result (a call's result is its callee's root).
      std::vector<int64_t> destinations;
      if (caller != nullptr && caller->opcode() != HloOpcode::kCall &&
          !(caller->opcode() == HloOpcode::kWhile && computation == caller->while_condition())) {
        const HloInstruction* destination =
            caller->opcode() == HloOpcode::kWhile ? computation->parameter_instruction(0) : caller;
        ShapeUtil::ForEachSubshape(root->shape(), [&](const Shape&, const ShapeIndex& index) {
          if (ValueId(root, index) >= 0) destinations.push_back(ValueId(destination, index));
        });
        if (std::count(destinations.begin(), destinations.end(), -1) > 0 ||
            destinations.size() != roots.size()) {
          destinations.clear();
        }
      }
      // The entry's: the parameter an input_output_alias puts an output
      // in (the output itself where none does), whose buffer is then no
      // longer the caller's alone.
      std::vector<int64_t> aliased;
      if (computation == entry) destinations = EntryDestinations(roots, aliased);
      std::vector<const HloInstruction*> step_instructions;
      const std::vector<std::optional<InPlaceStep>> steps = Steps(computation, step_instructions);
      std::vector<ValueSlot> slots = Slots(aliased);
      std::vector<int64_t> temporary_sizes = sizes_;
      ShareInPlaceOperands(steps, slots, temporary_sizes, roots,
                           destinations.empty() ? nullptr : &destinations, computation != entry);
      if (!destinations.empty()) {
        std::function<bool(size_t)> may_write;
        if (options_.writes_into_loop_state && caller != nullptr &&
            caller->opcode() == HloOpcode::kWhile) {
          may_write = [&](size_t i) {
            return options_.writes_into_loop_state(*step_instructions[i]);
          };
        }
        WriteRootsInPlace(steps, slots, temporary_sizes, roots, destinations, may_write);
      }
      for (size_t v = 0; v < slots.size(); ++v) {
        if (slots[v].kind == ValueSlot::Kind::kTemporary) {
          Union(static_cast<int64_t>(v), slots[v].temporary);
        }
      }
    }
  }

  // For the entry's root values `roots` (DefiningValues of its root): the
  // parameter value each is aliased to (input_output_alias), or itself;
  // empty when there are no aliases. `aliased` gets those parameter values.
  std::vector<int64_t> EntryDestinations(const std::vector<int64_t>& roots,
                                         std::vector<int64_t>& aliased) {
    const HloComputation* entry = module_.entry_computation();
    const HloInstruction* root = entry->root_instruction();
    std::vector<ShapeIndex> indices;
    ShapeUtil::ForEachSubshape(root->shape(), [&](const Shape&, const ShapeIndex& index) {
      if (ValueId(root, index) >= 0) indices.push_back(index);
    });
    std::vector<int64_t> destinations = roots;
    for (const auto& alias : module_.input_output_alias_config().aliases()) {
      if (alias.parameter_number < 0 || alias.parameter_number >= entry->num_parameters()) {
        continue;  // MergeEntryAliases says why
      }
      const int64_t target =
          ValueId(entry->parameter_instruction(alias.parameter_number), alias.parameter_index);
      auto at = std::find(indices.begin(), indices.end(), alias.output_index);
      if (target < 0 || at == indices.end()) continue;
      destinations[at - indices.begin()] = target;
      aliased.push_back(target);
    }
    if (aliased.empty()) destinations.clear();
    return destinations;
  }

  // Every value as a slot of the rules: a temporary (its buffer's
  // representative), or, when its buffer holds an entry parameter (but for
  // one of `aliased`, which an output may be written into), a constant or
  // a value of a multi-called computation, the caller's memory.
  std::vector<ValueSlot> Slots(const std::vector<int64_t>& aliased) {
    const HloComputation* entry = module_.entry_computation();
    std::vector<char> callers(values_.size(), 0);
    for (size_t v = 0; v < values_.size(); ++v) {
      const HloInstruction* instruction = values_[v].instruction;
      if ((instruction->opcode() == HloOpcode::kParameter && instruction->parent() == entry) ||
          instruction->opcode() == HloOpcode::kConstant ||
          multi_called_.contains(instruction->parent())) {
        callers[Find(static_cast<int64_t>(v))] = 1;
      }
    }
    for (int64_t v : aliased) callers[Find(v)] = 0;
    std::vector<ValueSlot> slots(values_.size());
    for (size_t v = 0; v < values_.size(); ++v) {
      const int64_t root = Find(static_cast<int64_t>(v));
      slots[v].kind = callers[root] ? ValueSlot::Kind::kParameter : ValueSlot::Kind::kTemporary;
      slots[v].temporary = root;
      slots[v].size_bytes = sizes_[v];
    }
    return slots;
  }

  absl::Status MergeEntryAliases() {
    const HloComputation* entry = module_.entry_computation();
    for (const auto& alias : module_.input_output_alias_config().aliases()) {
      if (alias.parameter_number < 0 || alias.parameter_number >= entry->num_parameters()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias names parameter ", alias.parameter_number,
                         " but the entry has ", entry->num_parameters()));
      }
      const HloInstruction* parameter = entry->parameter_instruction(alias.parameter_number);
      const HloInstruction* root = entry->root_instruction();
      int64_t target = ValueId(parameter, alias.parameter_index);
      int64_t value = ValueId(root, alias.output_index);
      if (target < 0 || value < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias: output ", ShapeIndexToString(alias.output_index),
                         " or parameter ", alias.parameter_number, " index ",
                         ShapeIndexToString(alias.parameter_index), " is not an array or tuple"));
      }
      AliasedOutput assigned{alias.output_index, alias.parameter_number, alias.parameter_index,
                             false};
      // Written into the parameter where the rules allowed (ShareInPlace).
      if (Find(value) != Find(target)) {
        assigned.needs_copy = true;
        out_->copies_.push_back({{root, alias.output_index}, {parameter, alias.parameter_index}});
      }
      out_->aliased_outputs_.push_back(assigned);
    }
    return absl::OkStatus();
  }

  // --- Allocations ----------------------------------------------------------
  // One logical buffer per union of values, in the order of their first
  // value; the core (AssignLogicalBuffers) places them.
  absl::Status Allocate() {
    const HloComputation* entry = module_.entry_computation();
    absl::flat_hash_set<int64_t> live_out;
    ShapeUtil::ForEachSubshape(entry->root_instruction()->shape(),
                               [&](const Shape&, const ShapeIndex& index) {
                                 int64_t id = ValueId(entry->root_instruction(), index);
                                 if (id >= 0) live_out.insert(Find(id));
                               });
    std::vector<LogicalBuffer> buffers;
    for (size_t v = 0; v < values_.size(); ++v) {
      const int64_t root = static_cast<int64_t>(v);
      if (Find(root) != root) continue;
      LogicalBuffer buffer;
      std::vector<int64_t> members = members_[root];
      std::sort(members.begin(), members.end());
      const HloInstruction* parameter = nullptr;
      const HloInstruction* constant = nullptr;
      buffer.first = -1;
      for (int64_t m : members) {
        buffer.size = std::max(buffer.size, sizes_[m]);
        buffer.first = buffer.first < 0 ? def_[m] : std::min(buffer.first, def_[m]);
        buffer.last = std::max(buffer.last, last_use_[m]);
        buffer.values.push_back(values_[m]);
        const HloInstruction* instruction = values_[m].instruction;
        if (instruction->opcode() == HloOpcode::kParameter && instruction->parent() == entry) {
          if (parameter != nullptr) {
            return absl::InternalError(absl::StrCat("entry parameters ", parameter->name(), " and ",
                                                    instruction->name(), " share a buffer"));
          }
          parameter = instruction;
          buffer.parameter_number = cast<HloParameterInstruction>(parameter)->parameter_number();
          buffer.parameter_index = values_[m].index;
        }
        if (instruction->opcode() == HloOpcode::kConstant) constant = instruction;
      }
      buffer.last = std::max(buffer.last, buffer.first);
      buffer.live_out = live_out.contains(root);
      if (parameter != nullptr) {
        buffer.kind = BufferAllocation::Kind::kParameter;
      } else if (constant != nullptr) {
        buffer.kind = BufferAllocation::Kind::kConstant;
      } else if (buffer.live_out) {
        buffer.kind = BufferAllocation::Kind::kOutput;
      }
      buffers.push_back(std::move(buffer));
    }
    absl::StatusOr<std::unique_ptr<BufferAssignment>> assigned =
        AssignLogicalBuffers(std::move(buffers), options_);
    if (!assigned.ok()) return assigned.status();
    std::unique_ptr<BufferAssignment> out = std::move(assigned).value();
    out->sequence_ = std::move(out_->sequence_);
    out->orders_ = std::move(out_->orders_);
    out->copies_ = std::move(out_->copies_);
    out->aliased_outputs_ = std::move(out_->aliased_outputs_);
    out->values_in_users_ = std::move(out_->values_in_users_);
    out_ = std::move(out);
    return absl::OkStatus();
  }

  const HloModule& module_;
  BufferAssignmentOptions options_;
  std::unique_ptr<BufferAssignment> out_;
  std::vector<const HloComputation*> computations_;
  absl::flat_hash_map<const HloComputation*, const HloInstruction*> caller_;
  absl::flat_hash_set<const HloComputation*> multi_called_;
  absl::flat_hash_map<const HloComputation*, int64_t> span_start_;
  absl::flat_hash_map<const HloInstruction*, int64_t> time_;
  std::vector<BufferValue> values_;
  std::vector<int64_t> sizes_;
  absl::flat_hash_map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> value_ids_;
  std::vector<int64_t> parent_;
  std::vector<std::vector<int64_t>> members_;
  std::vector<int64_t> def_, last_use_;
};

namespace {

// A backend's assignment (AssignLogicalBuffers): the live ranges it gave.
absl::Status VerifyLogicalBuffers(const BufferAssignment& assignment,
                                  const BufferAssignmentOptions& options) {
  struct Entry {
    int64_t buffer;
    BufferSlice slice;
    std::pair<int64_t, int64_t> range;
  };
  std::vector<Entry> temps;
  for (int64_t b = 0; b < assignment.num_buffers(); ++b) {
    const BufferSlice& slice = assignment.buffer_slice(b);
    const BufferAllocation& allocation = assignment.Allocations().at(slice.allocation);
    if (slice.offset < 0 || slice.offset + slice.size > allocation.size()) {
      return absl::InternalError(
          absl::StrCat("buffer ", b, " lies outside allocation ", slice.allocation));
    }
    if (allocation.kind() != BufferAllocation::Kind::kTemp) continue;
    if (slice.offset % options.alignment != 0) {
      return absl::InternalError(
          absl::StrCat("buffer ", b, " is at unaligned offset ", slice.offset));
    }
    if (slice.size > 0) temps.push_back({b, slice, assignment.buffer_live_range(b)});
  }
  std::sort(temps.begin(), temps.end(),
            [](const Entry& a, const Entry& b) { return a.range.first < b.range.first; });
  for (size_t i = 0; i < temps.size(); ++i) {
    for (size_t j = i + 1; j < temps.size() && temps[j].range.first <= temps[i].range.second; ++j) {
      if (!temps[i].slice.Overlaps(temps[j].slice)) continue;
      return absl::InternalError(absl::StrCat("buffers ", temps[i].buffer, " and ", temps[j].buffer,
                                              " are live together at ", temps[j].range.first,
                                              " but share bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyBufferAssignment(const BufferAssignment& assignment,
                                    const BufferAssignmentOptions& options) {
  if (assignment.sequence().empty()) return VerifyLogicalBuffers(assignment, options);
  // Liveness recomputed from the sequence alone: a value is live from its
  // instruction (a called computation's parameters: from the computation's
  // first instruction) to its last user, a user inside a called computation
  // counting at the instruction that calls it, a root at its caller (the
  // entry's root: to the end). A buffer is live over the union of its
  // values' ranges.
  const std::vector<const HloInstruction*>& sequence = assignment.sequence();
  const int64_t end = static_cast<int64_t>(sequence.size());
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  absl::flat_hash_map<const HloComputation*, const HloInstruction*> caller;
  absl::flat_hash_map<const HloComputation*, int64_t> first;
  for (int64_t i = 0; i < end; ++i) {
    const HloInstruction* instruction = sequence[i];
    position[instruction] = i;
    first.try_emplace(instruction->parent(), i);
    if (IsControlFlow(*instruction)) {
      for (const HloComputation* callee : instruction->called_computations()) {
        caller.try_emplace(callee, instruction);
      }
    }
  }
  auto time_in = [&](const HloInstruction* user, const HloComputation* frame) -> int64_t {
    while (user->parent() != frame) {
      auto it = caller.find(user->parent());
      if (it == caller.end()) return -1;
      user = it->second;
    }
    return position.at(user);
  };
  absl::flat_hash_map<int64_t, std::pair<int64_t, int64_t>> buffer_range;
  for (const auto& [value, buffer] : assignment.ValuesWithBufferIds()) {
    const HloInstruction* instruction = value.instruction;
    const HloComputation* computation = instruction->parent();
    int64_t def = instruction->opcode() == HloOpcode::kParameter ? first.at(computation)
                                                                 : position.at(instruction);
    int64_t last = def;
    for (const HloInstruction* user : instruction->users())
      last = std::max(last, time_in(user, computation));
    if (instruction == computation->root_instruction()) {
      auto it = caller.find(computation);
      last = it == caller.end() ? end : std::max(last, position.at(it->second));
    }
    auto [it, inserted] = buffer_range.try_emplace(buffer, def, last);
    if (!inserted) {
      it->second.first = std::min(it->second.first, def);
      it->second.second = std::max(it->second.second, last);
    }
  }
  struct Entry {
    BufferValue value;
    int64_t buffer;
    BufferSlice slice;
    std::pair<int64_t, int64_t> range;
  };
  std::vector<Entry> temps;
  for (const auto& [value, buffer] : assignment.ValuesWithBufferIds()) {
    BufferSlice slice = *assignment.GetUniqueSlice(value.instruction, value.index);
    const BufferAllocation& allocation = assignment.Allocations().at(slice.allocation);
    std::string name =
        absl::StrCat("%", value.instruction->name(), ShapeIndexToString(value.index));
    if (slice.offset < 0 || slice.offset + slice.size > allocation.size()) {
      return absl::InternalError(absl::StrCat(name, " lies outside allocation ", slice.allocation));
    }
    if (allocation.kind() != BufferAllocation::Kind::kTemp) continue;
    if (slice.offset % options.alignment != 0) {
      return absl::InternalError(absl::StrCat(name, " is at unaligned offset ", slice.offset));
    }
    temps.push_back({value, buffer, slice, buffer_range.at(buffer)});
  }
  // Sweep by start of live range: only ranges that overlap are compared.
  std::sort(temps.begin(), temps.end(),
            [](const Entry& a, const Entry& b) { return a.range.first < b.range.first; });
  for (size_t i = 0; i < temps.size(); ++i) {
    for (size_t j = i + 1; j < temps.size() && temps[j].range.first <= temps[i].range.second; ++j) {
      if (temps[i].buffer == temps[j].buffer || !temps[i].slice.Overlaps(temps[j].slice)) continue;
      return absl::InternalError(absl::StrCat(
          "%", temps[i].value.instruction->name(), ShapeIndexToString(temps[i].value.index),
          " and %", temps[j].value.instruction->name(), ShapeIndexToString(temps[j].value.index),
          " are live together at [", temps[j].range.first, ", ",
          std::min(temps[i].range.second, temps[j].range.second), "] but share bytes"));
    }
  }
  return absl::OkStatus();
}

BufferAssignmentOptions InPlaceChoicesOptions(const InPlaceChoices& choices) {
  BufferAssignmentOptions options;
  options.in_place_pairs = [&choices](const HloInstruction& instruction) {
    auto it = choices.pairs.find(&instruction);
    return it == choices.pairs.end() ? std::vector<std::pair<int64_t, ShapeIndex>>{} : it->second;
  };
  options.value_in_user = [&choices](const HloInstruction& instruction) {
    auto it = choices.values_in_users.find(&instruction);
    return it == choices.values_in_users.end() ? std::nullopt
                                               : std::optional<ValueInUser>(it->second);
  };
  options.writes_into_loop_state = [&choices](const HloInstruction& instruction) {
    return !choices.not_into_loop_state.contains(&instruction);
  };
  return options;
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(
    const HloModule& module, const BufferAssignmentOptions& options) {
  if (options.alignment <= 0) return absl::InvalidArgumentError("alignment must be positive");
  return BufferAssigner(module, options).Run();
}

}  // namespace axle
