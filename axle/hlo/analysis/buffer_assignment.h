//===- buffer_assignment.h - Where every value of a module lives -----------===//
//
// Buffer assignment gives every array value (each tuple leaf, and each
// tuple's index table) of the computations that run as programs — the entry
// and, transitively, while conditions and bodies, conditional branches and
// call bodies — an allocation and an offset in it. Fused computations,
// reducers and comparators get no buffers: a fusion has one output buffer.
//
// Values that are the same memory share one buffer: a bitcast and its
// operand, a get-tuple-element and the tuple element it reads, a tuple's
// elements and its operands, a while's state with its body parameter, body
// root, condition parameter and initial value, a conditional's / call's
// result with each branch's / the callee's root, and a callee's parameters
// with the caller's operands. Where sharing would be wrong (the initial
// value of a while is still read later, a root returns a parameter or a
// constant, a value would sit at two tuple indices, ...), the two keep
// separate buffers and a RequiredCopy says the backend must copy.
//
// Allocations:
//  - one per entry parameter value (never reused; an output aliased to it
//    by input_output_alias lives there when the parameter is not read after
//    the output is written, otherwise it gets its own buffer and needs_copy);
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
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "axle/base/alignment.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

struct BufferAssignmentOptions {
  // Offsets and sizes in the temp arena are multiples of this.
  int64_t alignment = kBufferAlignment;
  // Bytes of one entry of a tuple's index table (a pointer).
  int64_t pointer_size = 8;
};

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
  // The values assigned here with their offsets, in assignment order.
  struct Assigned {
    BufferValue value;
    int64_t offset = 0;
    int64_t size = 0;
  };
  const std::vector<Assigned>& assigned() const { return assigned_; }

 private:
  friend class BufferAssigner;
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

class BufferAssignment {
 public:
  const std::vector<BufferAllocation>& Allocations() const { return allocations_; }
  // The slice of `instruction`'s value at `index`; NotFound for values that
  // have none (tokens, instructions of fused computations, reducers, ...).
  absl::StatusOr<BufferSlice> GetUniqueSlice(const HloInstruction* instruction,
                                             const ShapeIndex& index = {}) const;
  bool HasSlice(const HloInstruction* instruction, const ShapeIndex& index = {}) const;
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
  // Every assigned value with its buffer id (values with equal ids are the
  // same memory by construction), in no particular order.
  std::vector<std::pair<BufferValue, int64_t>> ValuesWithBufferIds() const;

  // One line per allocation (index, kind, size, flags) then one indented
  // line per value in it (instruction, index, offset, size).
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  struct ValueInfo {
    BufferSlice slice;
    int64_t buffer = -1;  // the shared-buffer id
  };
  std::vector<BufferAllocation> allocations_;
  int64_t temp_allocation_ = -1;
  absl::flat_hash_map<std::pair<const HloInstruction*, ShapeIndex>, ValueInfo> values_;
  std::vector<std::pair<int64_t, int64_t>> buffer_ranges_;
  std::vector<const HloInstruction*> sequence_;
  absl::flat_hash_map<const HloComputation*, std::vector<const HloInstruction*>> orders_;
  std::vector<RequiredCopy> copies_;
  std::vector<AliasedOutput> aliased_outputs_;
};

// Checks the assignment against its own liveness: no two values of
// different buffers whose live ranges overlap share bytes, every slice lies
// inside its allocation and every temp offset is aligned. For tests and for
// debugging a backend.
absl::Status VerifyBufferAssignment(const BufferAssignment& assignment,
                                    const BufferAssignmentOptions& options = {});

absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(
    const HloModule& module, const BufferAssignmentOptions& options = {});

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_BUFFER_ASSIGNMENT_H_
