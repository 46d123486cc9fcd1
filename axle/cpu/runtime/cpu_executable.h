//===- cpu_executable.h - Programs compiled for the CPU --------------------===//
//
// A CpuExecutable runs the entry computation of a module the CPU compiler
// has prepared: after fusion every array-producing instruction of the entry
// is a thunk (thunk.h; today a fusion compiled into a loop or reduction
// kernel), and the rest is plumbing (parameter, constant, tuple,
// get-tuple-element, bitcast). Thunks run in the entry's post order; each
// reads its operands' buffers and writes its own; large kernels split their
// rows across the process's intra-op thread pool (ThreadPool::Default(),
// limited by ExecutableRunOptions::intra_op_threads). The root's leaves are
// copied into the result buffers at the end, except that a temporary which
// is exactly one result leaf is written in place into that result buffer
// (when the buffer is no argument's, i.e. not donated), saving a copy.
//
// Temporaries live in an arena: one 64-byte aligned block (2 MiB aligned
// and huge-page advised when large) holding every temporary at a fixed
// offset. The offsets come from the shared buffer assignment
// (axle/hlo/analysis/buffer_assignment.h): each temporary and each thunk's
// scratch memory is a logical buffer, live over the thunks that touch it
// (LiveRangesOverSteps over the thunks' buffer uses), and AssignLogicalBuffers
// packs them so that those whose live ranges do not intersect share
// memory. Which values share one temporary in the first place (plumbing,
// in-place thunks, loop state written in place) is the program builder's
// choice (program_builder.h, hlo/analysis/in_place_sharing.h). The executable keeps the
// arenas of finished runs and hands them to the next ones, so concurrent
// runs each have their own and a steady-state run allocates nothing from
// the OS (page faults cost 11-14 us per 4 KiB page here, PEERS.md).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_
#define AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/value_slot.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

// The thunks (run in order) over ValueSlots; shared with the CUDA backend:
// axle/hlo/analysis/value_slot.h.
using CpuProgram = ThunkProgram<Thunk>;

class CpuExecutable : public Executable {
 public:
  CpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                CpuProgram program);
  ~CpuExecutable() override;

  // Bytes of one run's temporaries arena, and how many arenas this
  // executable has allocated so far (one per run that found none free).
  int64_t arena_size_bytes() const { return arena_size_; }
  // The temporaries' bytes without reuse (each rounded to 64).
  int64_t temporaries_bytes() const { return temporaries_bytes_; }
  int64_t arenas_allocated() const { return arenas_allocated_.load(); }

  // With AXLE_PROFILE=1 in the environment when the executable is made, the
  // time of each top-level thunk (a kernel, a dot, a while loop, ...) is
  // summed over the runs; the table (slowest first, with each thunk's share)
  // is printed to stderr when the executable is destroyed, as XLA's HLO
  // profile. Empty when profiling is off.
  std::string ProfileReport() const;

  // The shared buffer assignment the arena was laid out by: logical
  // buffers are the temporaries, then each thunk's scratch memory, then
  // the parameters and constants.
  const BufferAssignment& buffer_assignment() const { return *assignment_; }

  // The buffer assignment as text: BufferAssignment::ToString() (every
  // allocation with the values in it, temporaries with arena offset and
  // live range over thunk indices), then each thunk in order with the
  // values it reads and writes. AXLE_DUMP_TO writes it as
  // MODULE.buffer-assignment.txt.
  std::string BufferAssignmentText() const;
  // The HLO front of buffer assignment (AssignBuffers) on the module with
  // the in-place choices the program's thunks made (program().in_place):
  // the module's values as the program keeps them, a value a convolution
  // writes into its concatenation's memory or a scatter's unstored fill
  // included. Dumped as MODULE.hlo-buffer-assignment.txt.
  absl::StatusOr<std::unique_ptr<BufferAssignment>> HloBufferAssignment() const;

  // The program and its arena layout, for serialization
  // (program_serialization.h): each temporary's offset in the arena, and
  // each top-level thunk's scratch offset (-1: none).
  const CpuProgram& program() const { return program_; }
  const std::vector<int64_t>& temporary_offsets() const { return temporary_offsets_; }
  const std::vector<int64_t>& scratch_offsets() const { return scratch_offsets_; }

 protected:
  absl::Status ExecuteOnBuffers(const ExecutableRunOptions& options,
                                absl::Span<const ShapedBuffer* const> arguments,
                                const ShapedBuffer& result) const override;
  absl::Status ExecuteOnArrays(const ExecutableRunOptions& options,
                               absl::Span<const se::DeviceMemoryBase> arguments,
                               absl::Span<const se::DeviceMemoryBase> results) const override;

 private:
  class Arena;
  // The run both entry points share: the buffer of parameter leaf
  // (parameter, index) and of result leaf `index`, and which argument an
  // address is the buffer of (the parameter number; -1: none; -2: more
  // than one). A result whose buffer is an argument's (donated) is
  // computed right into it when no thunk touches that argument once the
  // result's temporary is first touched (WritesIntoArgument); otherwise in
  // the arena, and copied at the end.
  // Parameter leaves are named by (parameter, node): the leaf's position in
  // the pre-order of the parameter's shape (its ShapeTree's node); result
  // leaves by their number in program_.result_leaves.
  absl::Status RunProgram(const ExecutableRunOptions& options,
                          absl::FunctionRef<se::DeviceMemoryBase(int64_t, int64_t)> argument_buffer,
                          absl::FunctionRef<se::DeviceMemoryBase(int64_t)> result_buffer,
                          absl::FunctionRef<int64_t(const void*)> argument_at) const;
  // Whether result temporary `r` (a position in result_temporaries_) may
  // live in the buffer of argument `parameter` for the whole run: every
  // thunk that touches the argument comes before the first that touches
  // the temporary, or that first thunk reads the argument only as the
  // operand of an in-place pair whose output is the temporary's value
  // (Thunk::in_place_pairs, as in_place.h's rule 1).
  bool WritesIntoArgument(size_t r, int64_t parameter) const;
  // Sets parameter_last_use_, result_first_touch_ and result_in_place_
  // from the thunks' buffer uses.
  void FindArgumentUses(const std::vector<int64_t>& result_temporary);
  // Lays out the temporaries and scratch memory with the shared buffer
  // assignment (sets assignment_, temporary_offsets_, scratch_offsets_,
  // arena_size_).
  void LayOutBuffers();
  // A free arena, or a new one when none is free.
  absl::StatusOr<std::unique_ptr<Arena>> AcquireArena() const;
  void ReleaseArena(std::unique_ptr<Arena> arena) const;

  CpuProgram program_;
  // Offset of each temporary in the arena (multiples of 64).
  std::vector<int64_t> temporary_offsets_;
  std::unique_ptr<const BufferAssignment> assignment_;
  // Offset of each thunk's scratch memory in the arena, or -1.
  std::vector<int64_t> scratch_offsets_;
  // For each temporary: the index into program_.result_leaves of the one
  // result leaf it is, or -1.
  std::vector<int64_t> temporary_result_leaf_;
  // The temporaries that are a result leaf (temporary_result_leaf_ >= 0),
  // and the values whose address a run sets: each parameter value (with
  // its leaf's node in the parameter's ShapeTree), and each value in one
  // of those temporaries (its position in result_temporaries_; -1 for a
  // parameter). The addresses of the other values (constants, the other
  // temporaries) are set once per arena.
  std::vector<int64_t> result_temporaries_;
  struct RunValue {
    int64_t value;
    int64_t result_temporary;
    int64_t parameter_node;
  };
  std::vector<RunValue> run_values_;
  // Per parameter: the last thunk that touches one of its leaves (-1:
  // none). Per result temporary: the first thunk that touches it
  // (thunks.size(): none). The (result temporary, parameter) pairs where
  // that first thunk reads the parameter only as the operand of an
  // in-place pair into the temporary, sorted. A thunk that does not know
  // its buffer uses touches everything.
  std::vector<int64_t> parameter_last_use_;
  std::vector<int64_t> result_first_touch_;
  std::vector<std::pair<int64_t, int64_t>> result_in_place_;
  // Each value's size in bytes (ThunkContext::value_bytes).
  std::vector<int64_t> value_bytes_;
  // Each result leaf's node in the result's ShapeTree.
  std::vector<int64_t> result_leaf_nodes_;
  int64_t arena_size_ = 0;
  int64_t temporaries_bytes_ = 0;
  mutable std::mutex arenas_mutex_;
  mutable std::vector<std::unique_ptr<Arena>> free_arenas_;
  mutable std::atomic<int64_t> arenas_allocated_{0};
  struct Profile;
  std::unique_ptr<Profile> profile_;
  // Whether a run holds a ThreadPool::SpinScope over its thunks (more than
  // one, and AXLE_CPU_SPIN_BETWEEN_THUNKS not off): the pool's workers,
  // done with one thunk's split, wait for the next one's spinning (up to
  // ThreadPool::kSpinMicroseconds) instead of asleep, so a short split
  // thunk (a 1x1 convolution, a pooling kernel) does not pay a wake-up that
  // costs about what its second half saves. oneDNN calls on OpenMP's team
  // send them to sleep meanwhile (OmpTeamShare).
  bool spin_between_thunks_ = false;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_
