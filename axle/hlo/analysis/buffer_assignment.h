//===- buffer_assignment.h - Where every value of a module lives -----------===//
//
// The one buffer assignment of Axle: every backend gets the slots, offsets
// and arena size of its values from here, and every
// `<module>.buffer-assignment.txt` dump is BufferAssignment::ToString().
// It has two layers.
//
// The target-neutral core (AssignLogicalBuffers) takes logical buffers: a
// piece of memory with a size, a kind (entry parameter, constant, live-out
// output, temporary), the values held in it and the span of positions, in
// the backend's sequential order, during which it must be kept. Parameters,
// constants and outputs get an allocation each; temporaries (including a
// backend's scratch memory, a buffer with a label and no value) are packed
// into one temp arena by liveness (PackArena): two share bytes only when
// their live ranges do not intersect. A temporary may be marked live out
// ("maybe live out", as XLA says): the backend may write it straight into
// the result, so it is kept to the end. LiveRangesOverSteps derives the
// ranges from what each step of a sequence reads and writes, for a backend
// whose steps are not HLO instructions (the cpu backend's thunks).
//
// The HLO front (AssignBuffers) makes the logical buffers of a module
// itself: every array value (each tuple leaf, and each tuple's index
// table) of the computations that run as programs — the entry and,
// transitively, while conditions and bodies, conditional branches and call
// bodies. Fused computations, reducers and comparators get no buffers: a
// fusion has one output buffer.
//
// Values that are the same memory share one buffer: a bitcast and its
// operand, a get-tuple-element and the tuple element it reads, a tuple's
// elements and its operands, a while's state with its body parameter and
// condition parameter, a callee's parameters with the caller's operands,
// and a call's result with the callee's root. Outputs take over their
// operands' memory, and a while body's / a conditional branch's root leaves
// are computed straight into the state / the result, by the rules every
// backend's program builder applies to its thunks (in_place_sharing.h:
// ShareInPlaceOperands, WriteRootsInPlace), here with each instruction of
// a computation as a step; a while's initial value shares the state when
// nothing reads it once the loop starts. A backend's steps may also compute
// a value in its user's memory (value_slot.h: ValueInUser, the hook
// BufferAssignmentOptions::value_in_user): such a value shares its user's
// buffer, or, never stored, gets none; the dump says which. A backend's
// program builder reports both hooks' answers as it builds
// (InPlaceChoices; InPlaceChoicesOptions makes them options), so the dump
// shows the choices its thunks make. Where sharing would be wrong (the
// initial value of a while is still read later, a root returns a parameter
// or a constant, a value would sit at two tuple indices, ...), the two
// keep separate buffers and a RequiredCopy says the backend must copy.
//
// Allocations of the HLO front:
//  - one per entry parameter value (never reused; an output aliased to it
//    by input_output_alias lives there when the in-place rules allow, the
//    parameter being the output's destination as a while's state is a body
//    root's: computed over it, or written into it once nothing reads it;
//    otherwise it gets its own buffer and needs_copy);
//  - one per constant (read-only);
//  - one per entry result buffer (live out);
//  - one temp arena for everything else, packed by liveness over a
//    sequential order (post order of each computation, a called computation
//    placed just before its caller): a buffer's space is reused once its last
//    user has run. Offsets and sizes are multiples of 64 bytes.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_BUFFER_ASSIGNMENT_H_
#define AXLE_HLO_ANALYSIS_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/base/alignment.h"
#include "axle/core/shape.h"
#include "axle/hlo/analysis/elementwise_access.h"
#include "axle/hlo/analysis/value_slot.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

struct BufferAssignmentOptions {
  // Offsets and sizes in the temp arena are multiples of this.
  int64_t alignment = kBufferAlignment;
  // Bytes of one entry of a tuple's index table (a pointer).
  int64_t pointer_size = 8;
  // AssignBuffers only, a backend's hook (XLA's can-share-buffer): the
  // (operand number, output index) pairs whose output `instruction`
  // computes correctly over that operand's memory (an array), nearest
  // first. Which of them share is the one in-place rule of every backend
  // (in_place_sharing.h: ShareInPlaceOperands), over the computation's
  // instructions as steps. The default is the target-neutral list the cpu
  // backend's thunks offer (elementwise_access.h: InPlaceOperandPairs);
  // null: no output takes over an operand.
  std::function<std::vector<std::pair<int64_t, ShapeIndex>>(const HloInstruction& instruction)>
      in_place_pairs = InPlaceOperandPairs;
  // AssignBuffers only, a backend's hook: where a step of `instruction`'s
  // one user computes its (array) value in the user's memory (ValueInUser),
  // or nullopt. Null: nowhere.
  std::function<std::optional<ValueInUser>(const HloInstruction& instruction)> value_in_user;
  // AssignBuffers only, a backend's hook: whether `instruction`'s step may
  // compute a while body's root leaf straight into the loop's state
  // (in_place_sharing.h: WriteRootsInPlace). Null: every step may.
  std::function<bool(const HloInstruction& instruction)> writes_into_loop_state;
};

// Options whose hooks answer from `choices` (a backend program builder's
// report, which must outlive them): the pairs it offered, none for an
// instruction it reported none for, the values it computed in their
// users, and which steps may write into a loop's state.
BufferAssignmentOptions InPlaceChoicesOptions(const InPlaceChoices& choices);

// One value: the subshape `index` of `instruction`'s result.
struct BufferValue {
  const HloInstruction* instruction = nullptr;
  ShapeIndex index;
};

class BufferAllocation {
 public:
  enum class Kind { kParameter, kConstant, kOutput, kTemp };

  int64_t index() const { return index_; }
  Kind kind() const { return kind_; }
  int64_t size() const { return size_; }
  // kParameter: the entry parameter and index.
  int64_t parameter_number() const { return parameter_number_; }
  const ShapeIndex& parameter_index() const { return parameter_index_; }
  // Holds (part of) the entry result: the caller reads it after the run.
  bool is_live_out() const { return live_out_; }
  bool is_read_only() const { return kind_ == Kind::kConstant; }
  // The values assigned here with their offsets, in assignment order. A
  // buffer that holds no value (a backend's scratch memory) has one entry
  // with a null instruction and its label.
  struct Assigned {
    BufferValue value;
    int64_t offset = 0;
    int64_t size = 0;
    std::string label;
    int64_t buffer = -1;  // the logical buffer
  };
  const std::vector<Assigned>& assigned() const { return assigned_; }

 private:
  friend class BufferAllocator;
  int64_t index_ = 0;
  Kind kind_ = Kind::kTemp;
  int64_t size_ = 0;
  int64_t parameter_number_ = -1;
  ShapeIndex parameter_index_;
  bool live_out_ = false;
  std::vector<Assigned> assigned_;
};

absl::string_view BufferAllocationKindName(BufferAllocation::Kind kind);

// Where a value lives.
struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const BufferSlice&) const = default;
  bool Overlaps(const BufferSlice& other) const {
    return allocation == other.allocation && offset < other.offset + other.size &&
           other.offset < offset + size;
  }
};

// Two values that could not share a buffer: at the point named, the backend
// copies `from` into `to`'s buffer.
//  - while: from = the initial value (operand 0) at index, to = the while at
//    index, before the loop; or from = the body root at index, to = the body
//    parameter at index, after each iteration;
//  - conditional / call: from = a branch's / the callee's root at index, to =
//    the conditional / call at index, when that branch returns;
//  - an entry output aliased to a parameter that is still read after the
//    output is written: from = the entry root at the output index, to = the
//    parameter (see AliasedOutput).
struct RequiredCopy {
  BufferValue from;
  BufferValue to;
};

// One input_output_alias entry as assigned.
struct AliasedOutput {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  // The output could not be computed in place: it has its own buffer and is
  // copied into the parameter's at the end of the run.
  bool needs_copy = false;
};

// One piece of memory as a backend (or the HLO front) defines it: the
// values that share it and when it must be kept.
struct LogicalBuffer {
  BufferAllocation::Kind kind = BufferAllocation::Kind::kTemp;
  int64_t size = 0;
  // Live range: inclusive positions in the sequential order the backend
  // runs (written at `first`, read last at `last`). Only temporaries use it.
  int64_t first = 0;
  int64_t last = 0;
  // kParameter: which entry parameter, and where in it.
  int64_t parameter_number = -1;
  ShapeIndex parameter_index;
  // The caller reads it after the run (a kOutput buffer always is; a
  // kTemp one may be written straight into the result).
  bool live_out = false;
  // The HLO values held (lookups with GetUniqueSlice, dumps); a value held
  // by several buffers is looked up in the first.
  std::vector<BufferValue> values;
  // What the buffer is when it holds no value ("scratch of %dot.3").
  std::string label;
};

// Blocks of memory placed in one arena: offsets[i] for blocks[i] and the
// arena's size, both multiples of `alignment`. Greedy first fit, largest
// first (ties in the order given), as XLA's heap simulator starts from:
// each block goes at the lowest offset free of every placed block whose
// live range intersects its own. An empty block is at 0.
struct ArenaBlock {
  int64_t size = 0;
  int64_t first = 0;
  int64_t last = 0;
};
struct ArenaPacking {
  std::vector<int64_t> offsets;
  int64_t size = 0;
};
ArenaPacking PackArena(absl::Span<const ArenaBlock> blocks, int64_t alignment);

// What one step of a backend's sequence reads and writes (buffer ids), or
// nullopt when it may touch any buffer.
struct StepUses {
  std::vector<int64_t> reads;
  std::vector<int64_t> writes;
};
// The live range over step indices of buffers 0..num_buffers-1: from the
// first step that touches it to the last. A buffer no step touches lives
// throughout [0, steps.size()]; so does every buffer when a step's uses are
// unknown. Sharing a step is a conflict (a kernel's outputs must not
// overlap its inputs).
std::vector<std::pair<int64_t, int64_t>> LiveRangesOverSteps(
    int64_t num_buffers, absl::Span<const std::optional<StepUses>> steps);

// The logical buffers of a backend program's temporaries 0..n-1 (sizes
// `temporary_sizes`; `values` says which value ids live in which). `steps[i]`
// names the value ids step i reads and writes (nullopt: any): a temporary
// lives from the first step that touches one of its values to the last
// (LiveRangesOverSteps), and one holding a value of `result_leaves` is kept
// past the last step and marked live out.
std::vector<LogicalBuffer> TemporaryBuffers(
    absl::Span<const ValueSlot> values, absl::Span<const int64_t> temporary_sizes,
    absl::Span<const std::pair<ShapeIndex, int64_t>> result_leaves,
    absl::Span<const std::optional<StepUses>> steps);

// For each temporary 0..num_temporaries-1 of such a program: the index in
// `result_leaves` of the one result leaf it holds, which the run may then
// compute straight into the caller's result buffer, or -1 when it holds no
// result leaf or several (those are copied out).
std::vector<int64_t> TemporaryResultLeaves(
    absl::Span<const ValueSlot> values, int64_t num_temporaries,
    absl::Span<const std::pair<ShapeIndex, int64_t>> result_leaves);

// Appends to `buffers` one temporary for each step of `steps` (pointers to
// thunks with scratch_bytes() and name()) that asks for scratch memory, live
// during that step only and labelled "scratch of thunk <i> %<name>".
// Returns each step's buffer id, or -1 for a step without scratch.
template <typename Steps>
std::vector<int64_t> AppendScratchBuffers(const Steps& steps, std::vector<LogicalBuffer>& buffers) {
  std::vector<int64_t> scratch_buffer(steps.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t bytes = steps[i]->scratch_bytes();
    if (bytes <= 0) continue;
    scratch_buffer[i] = static_cast<int64_t>(buffers.size());
    LogicalBuffer scratch;
    scratch.size = bytes;
    scratch.first = scratch.last = static_cast<int64_t>(i);
    scratch.label = absl::StrCat("scratch of thunk ", i, " %", steps[i]->name());
    buffers.push_back(std::move(scratch));
  }
  return scratch_buffer;
}

class BufferAssignment {
 public:
  const std::vector<BufferAllocation>& Allocations() const { return allocations_; }
  // The slice of `instruction`'s value at `index`; NotFound for values that
  // have none (tokens, instructions of fused computations, reducers, ...).
  absl::StatusOr<BufferSlice> GetUniqueSlice(const HloInstruction* instruction,
                                             const ShapeIndex& index = {}) const;
  bool HasSlice(const HloInstruction* instruction, const ShapeIndex& index = {}) const;
  // The logical buffers in the order given (AssignLogicalBuffers) or made
  // (AssignBuffers), each with its slice and live range.
  int64_t num_buffers() const { return static_cast<int64_t>(buffers_.size()); }
  const BufferSlice& buffer_slice(int64_t buffer) const { return buffers_[buffer].slice; }
  std::pair<int64_t, int64_t> buffer_live_range(int64_t buffer) const {
    return buffers_[buffer].range;
  }
  // The single temp arena's size (0 when there are no temporaries).
  int64_t temp_allocation_total_size() const;
  // The allocation index of the temp arena, or -1.
  int64_t temp_allocation_index() const { return temp_allocation_; }

  // The sequential order the liveness was computed over: every instruction
  // of every assigned computation, a called computation's instructions
  // placed right before the instruction that calls it.
  const std::vector<const HloInstruction*>& sequence() const { return sequence_; }
  // The order used for one computation (its post order).
  const std::vector<const HloInstruction*>& order(const HloComputation* computation) const {
    return orders_.at(computation);
  }
  // The span [first, last] of positions in sequence() during which a
  // value's buffer must be kept (tests and the liveness checker use it).
  std::pair<int64_t, int64_t> LiveRange(const HloInstruction* instruction,
                                        const ShapeIndex& index = {}) const;

  const std::vector<RequiredCopy>& required_copies() const { return copies_; }
  const std::vector<AliasedOutput>& aliased_outputs() const { return aliased_outputs_; }
  // AssignBuffers: the values computed in their user's memory
  // (BufferAssignmentOptions::value_in_user), in sequence order.
  const std::vector<std::pair<const HloInstruction*, ValueInUser>>& values_in_users() const {
    return values_in_users_;
  }
  // Every assigned value with its buffer id (values with equal ids are the
  // same memory by construction), in no particular order.
  std::vector<std::pair<BufferValue, int64_t>> ValuesWithBufferIds() const;

  // One line per allocation (index, kind, size, flags) then one indented
  // line per value in it (instruction, index, offset, size, and for the
  // temp arena the live range), the aliased outputs, the values computed
  // in their users, the copies and the arena's size.
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  friend class BufferAllocator;
  struct ValueInfo {
    BufferSlice slice;
    int64_t buffer = -1;  // the logical buffer
  };
  struct BufferInfo {
    BufferSlice slice;
    std::pair<int64_t, int64_t> range;
  };
  std::vector<BufferAllocation> allocations_;
  int64_t temp_allocation_ = -1;
  absl::flat_hash_map<std::pair<const HloInstruction*, ShapeIndex>, ValueInfo> values_;
  std::vector<BufferInfo> buffers_;
  std::vector<const HloInstruction*> sequence_;
  absl::flat_hash_map<const HloComputation*, std::vector<const HloInstruction*>> orders_;
  std::vector<RequiredCopy> copies_;
  std::vector<AliasedOutput> aliased_outputs_;
  std::vector<std::pair<const HloInstruction*, ValueInUser>> values_in_users_;
};

// Checks the assignment: no two buffers live together share bytes (ranges
// recomputed from sequence(), or as given to AssignLogicalBuffers when it
// is empty), every slice lies inside its allocation and every temp offset
// is aligned. For tests and for debugging a backend.
absl::Status VerifyBufferAssignment(const BufferAssignment& assignment,
                                    const BufferAssignmentOptions& options = {});

// The HLO front: the logical buffers of `module` (above), assigned.
absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(
    const HloModule& module, const BufferAssignmentOptions& options = {});

// The core: `buffers` in the order given (buffer ids are their indices).
// Parameters, constants and outputs get one allocation each, in that order;
// temporaries share the temp arena, the last allocation. InvalidArgument
// for a negative size or live range, or a parameter without its number.
absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignLogicalBuffers(
    std::vector<LogicalBuffer> buffers, const BufferAssignmentOptions& options = {});

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_BUFFER_ASSIGNMENT_H_
