//===- value_slot.h - Where a backend program's array values live ----------===//
//
// The cpu and CUDA program builders (cpu/runtime/program_builder.h,
// gpu/gpu_program.h) both turn a prepared computation into thunks over
// numbered values: one ValueSlot per array leaf, held in an argument (a
// parameter's leaf), a constant of the program or one of the run's
// temporaries (ThunkProgram). Plumbing ops define no value: their leaves are their
// operands' (ForwardedLeaves says which). The builder also says, in the
// module's terms, what its steps compute in place (InPlaceChoices), for the
// HLO front of buffer assignment to show (buffer_assignment.h:
// InPlaceChoicesOptions).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_VALUE_SLOT_H_
#define AXLE_HLO_ANALYSIS_VALUE_SLOT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// Where an array value lives during a run.
struct ValueSlot {
  enum class Kind { kParameter, kConstant, kTemporary };
  Kind kind = Kind::kTemporary;
  int64_t parameter = 0;       // kParameter: which argument
  ShapeIndex parameter_index;  // ... and where in it
  int64_t constant = 0;        // kConstant: index into the program's constants
  int64_t temporary = 0;       // kTemporary: index into the run's temporaries
  int64_t size_bytes = 0;
  std::string name;  // the HLO value, for dumps ("%fusion.3", "%t{1}"); empty for copies
  // The HLO value it holds (null for a copy or scratch slot).
  const HloInstruction* instruction = nullptr;
  ShapeIndex index;
};

// Leaf `index` (an array of `shape`) of argument `parameter`.
ValueSlot ParameterSlot(int64_t parameter, const ShapeIndex& index, const Shape& shape);
// Constant `constant` of the program, an array of `shape`.
ValueSlot ConstantSlot(int64_t constant, const Shape& shape);

// The values a parameter or constant instruction defines: a slot for each
// of its array leaves, with its index, in index order (empty for any other
// op). A constant's leaves are appended to `constants`, the program's,
// which its slots name.
std::vector<std::pair<ShapeIndex, ValueSlot>> SourceSlots(const HloInstruction& instruction,
                                                          std::vector<Literal>& constants);

// The leaves of `shape` that hold arrays, with their indices, in index
// order (pre-order): the leaves that get a value.
std::vector<std::pair<ShapeIndex, Shape>> ArrayLeaves(const Shape& shape);

// Where a backend keeps an instruction's array value that has no slot of
// its own because a step of its one user computes it: written straight
// into the user's result, from byte `offset` on (a convolution writing its
// slice of a concatenation), or never stored at all (`stored` false: a
// scatter that starts its output from the fill value its broadcast
// operand would hold).
struct ValueInUser {
  const HloInstruction* user = nullptr;
  bool stored = true;
  int64_t offset = 0;
};

// What a program builder's steps do in place, in the module's terms: the
// (operand number, output index) pairs the steps of each instruction
// offer to the in-place rule (in_place_sharing.h), the values computed
// in their user's memory, and the instructions whose steps may not compute
// a while body's root leaf straight into the loop's state
// (WriteRootsInPlace's `may_write`: on CUDA, all but kernels).
struct InPlaceChoices {
  absl::flat_hash_map<const HloInstruction*, std::vector<std::pair<int64_t, ShapeIndex>>> pairs;
  absl::flat_hash_map<const HloInstruction*, ValueInUser> values_in_users;
  absl::flat_hash_set<const HloInstruction*> not_into_loop_state;
};

// A program builder's value of each array leaf it has met:
// (instruction, leaf index) -> value.
using LeafValueTable = std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t>;

// Reports into `choices.pairs`, in the module's terms, what `instruction`'s
// steps offered to the in-place rule: of `step_pairs`, their (operand
// value, output value) pairs over `values`, each whose output is a leaf of
// `instruction` and whose operand is the value of one of its (array)
// operands in `table`, as (operand number, output index).
void ReportInPlacePairs(const HloInstruction& instruction,
                        absl::Span<const std::pair<int64_t, int64_t>> step_pairs,
                        absl::Span<const ValueSlot> values, const LeafValueTable& table,
                        InPlaceChoices& choices);

// The same for steps `thunks` (a backend's thunks, each listing its pairs
// in in_place_pairs()), the ones a builder emitted for `instruction`.
template <typename ThunkType>
void ReportInPlacePairs(const HloInstruction& instruction,
                        absl::Span<const std::unique_ptr<ThunkType>> thunks,
                        absl::Span<const ValueSlot> values, const LeafValueTable& table,
                        InPlaceChoices& choices) {
  std::vector<std::pair<int64_t, int64_t>> step_pairs;
  for (const std::unique_ptr<ThunkType>& thunk : thunks) {
    for (const std::pair<int64_t, int64_t>& pair : thunk->in_place_pairs()) {
      step_pairs.push_back(pair);
    }
  }
  ReportInPlacePairs(instruction, step_pairs, values, table, choices);
}

// What a program builder makes of a computation: its values, the
// constants and the sizes of the temporaries they live in, the thunks (of
// the backend's `ThunkType`) to run in order, the value of each array
// leaf of the result (pre-order), and what the thunks do in place.
template <typename ThunkType>
struct ThunkProgram {
  std::vector<ValueSlot> values;
  std::vector<Literal> constants;
  std::vector<int64_t> temporary_sizes;
  std::vector<std::unique_ptr<ThunkType>> thunks;
  std::vector<std::pair<ShapeIndex, int64_t>> result_leaves;
  InPlaceChoices in_place;
};

// A value of a plumbing op's operand that is also the plumbing op's own:
// the leaves at `operand_index` of `operand` (and every leaf below) are its
// leaves at `index`.
struct ForwardedLeaf {
  const HloInstruction* operand;
  ShapeIndex operand_index;
  ShapeIndex index;
};

// What `instruction` forwards when it is plumbing that passes its operands'
// buffers on (tuple, get-tuple-element, bitcast, add-dependency,
// opt-barrier, domain); nullopt for every other op.
std::optional<std::vector<ForwardedLeaf>> ForwardedLeaves(const HloInstruction& instruction);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_VALUE_SLOT_H_
