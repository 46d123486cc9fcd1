//===- program_builder.h - HLO entry computation -> CpuProgram -------------===//
//
// After PrepareModule (cpu_compiler.cc) the entry computation, and every
// computation control flow runs, holds only plumbing (parameter, constant
// (one value per leaf of a tuple constant), tuple, get-tuple-element,
// bitcast, opt-barrier, domain; the token ops after-all and
// add-dependency), loop fusions and the ops that have a thunk emitter
// (below). ProgramBuilder walks the entry in post order and turns it into a
// CpuProgram: one value slot per array leaf (parameters, constants,
// temporaries), one thunk per op.
//
// Control flow (control_flow_thunk.h): while, conditional and call emitters
// bind a nested computation's parameters to existing values (BindParameter)
// and build it into a thunk sequence of its own (BuildSequence) that uses
// the same value table as the rest of the program.
// Loop fusions (of every sequence) and the scalar functions thunks call
// are emitted into one LoopKernelModule that is compiled once at the end of
// Build; their thunks share its Jit.
//
// Thunk emitters: an op that is not a loop fusion gets its thunk from a
// function `absl::Status Emit...Thunk(const HloInstruction&, ProgramBuilder&)`
// declared in thunk_emitters.h and listed in FindThunkEmitter
// (program_builder.cc). An emitter looks up its operands' values
// (ValueOf / LeavesOf), defines its result's temporaries
// (DefineTemporary), and appends its thunk (AddThunk). What the thunks
// compute in place is reported in the module's terms as well
// (CpuProgram::in_place, value_slot.h: InPlaceChoices): the pairs each
// thunk offers (Thunk::in_place_pairs), and the values an emitter has
// their user's thunk compute (ReportValueInUser). The HLO front of buffer
// assignment shows them (CpuExecutable::HloBufferAssignment).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_PROGRAM_BUILDER_H_
#define AXLE_CPU_RUNTIME_PROGRAM_BUILDER_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle::cpu {

class ProgramBuilder;
using ThunkEmitter = absl::Status (*)(const HloInstruction& instruction, ProgramBuilder& builder);

// The thunk emitter of `instruction`, or null when it is plumbing or runs as
// a loop fusion.
ThunkEmitter FindThunkEmitter(const HloInstruction& instruction);

// "cpu platform: <why> (instruction %name, opcode)" as Unimplemented.
absl::Status Unsupported(const HloInstruction& instruction, absl::string_view why);

// What the cpu platform's compiler does (cpu_compiler.cc: the cpu-prepare
// passes, then ProgramBuilder), with the caller's options and no caches:
// axle-aot compiles so, with position-independent kernels whose objects it
// collects from options.jit.cache_dir.
absl::StatusOr<std::unique_ptr<CpuExecutable>> CompileCpuExecutable(
    std::unique_ptr<HloModule> module, const CpuCompileOptions& options);

class ProgramBuilder {
 public:
  explicit ProgramBuilder(CpuCompileOptions options = {}) : options_(std::move(options)) {}

  absl::StatusOr<CpuProgram> Build(const HloModule& module);

  // Before Build: the loop kernels' code comes from `jit` (the kernels_jit()
  // of an earlier Build of the same module with the same options), so no
  // LLVM runs.
  void set_precompiled_kernels(std::shared_ptr<const Jit> jit) { precompiled_ = std::move(jit); }
  // After Build: the Jit holding the loop kernels (null when there are none)
  // and the milliseconds spent emitting their IR.
  std::shared_ptr<const Jit> kernels_jit() const { return kernels_ ? kernels_->jit() : nullptr; }
  double kernel_emit_ms() const { return kernels_ ? kernels_->emit_ms() : 0; }
  // After Build: LoopKernelModule::signature() of the loop kernels.
  std::string kernels_signature() const { return kernels_ ? kernels_->signature() : ""; }

  // --- For thunk emitters ---

  // The value of leaf `index` of `instruction`'s result; Unimplemented when
  // that leaf has none (not an array, or not produced yet).
  absl::StatusOr<int64_t> ValueOf(const HloInstruction* instruction,
                                  const ShapeIndex& index = {}) const;
  // The value of each of `instruction`'s operands (each an array), in order.
  absl::StatusOr<std::vector<int64_t>> OperandValues(const HloInstruction& instruction) const;
  // Every array leaf of `instruction`'s result with its value, in index order.
  std::vector<std::pair<ShapeIndex, int64_t>> LeavesOf(const HloInstruction* instruction) const;
  // A new temporary holding leaf `index` (of shape `shape`) of `instruction`.
  int64_t DefineTemporary(const HloInstruction* instruction, const ShapeIndex& index,
                          const Shape& shape);
  // Temporaries for every array leaf of `instruction`'s result, in index order.
  std::vector<int64_t> DefineTemporaries(const HloInstruction* instruction);
  // The temporary holding `instruction`'s (array) result when `writers`
  // thunks each write part of it (concat_in_place.h): the first of the
  // `writers` calls defines it, the others get the same value.
  int64_t SharedResult(const HloInstruction* instruction, int64_t writers);
  // A temporary of `size_bytes` that is no instruction's leaf (a thunk's
  // scratch memory).
  int64_t DefineScratch(int64_t size_bytes);
  // Reports that a thunk of `instruction`'s one user computes its value in
  // the user's memory (CpuProgram::in_place; the thunks' in-place pairs
  // are reported without asking).
  void ReportValueInUser(const HloInstruction& instruction, ValueInUser where) {
    program_.in_place.values_in_users[&instruction] = where;
  }
  const ValueSlot& slot(int64_t value) const { return program_.values[value]; }
  // The literal of a constant value, else null. Stable until Build returns.
  const Literal* ConstantOf(int64_t value) const;
  // ConstantOf of each of `values`.
  std::vector<const Literal*> ConstantsOf(absl::Span<const int64_t> values) const;
  // Appends to the sequence being built (the entry's, or a nested one).
  void AddThunk(std::unique_ptr<Thunk> thunk) { sequence_->push_back(std::move(thunk)); }
  // A function name not used before in this program ("<prefix>_<n>").
  std::string UniqueName(absl::string_view prefix);
  const CpuCompileOptions& compile_options() const { return options_; }
  // During Build: the module the loop kernels and scalar functions (sort
  // comparators, scatter combiners) are compiled in at the end of Build.
  LoopKernelModule& kernels() { return *kernels_; }

  // --- For control flow ---

  // A new temporary that no instruction's leaf names.
  int64_t NewTemporary(const Shape& shape);
  // The shared in-place rules (hlo/analysis/in_place_sharing.h) on nested
  // `sequence`, whose root leaves `sources` are stored into `destinations`
  // (a while's state, a conditional's results): an output takes over its
  // operand's temporary (ShareInPlaceOperands, each thunk's in_place_pairs()
  // the cpu backend's hook), then a root leaf is computed straight into its
  // destination (WriteRootsInPlace, any thunk may). A source that now lives
  // in its destination becomes that destination in `sources`.
  void ShareNestedInPlace(const std::vector<std::unique_ptr<Thunk>>& sequence,
                          std::vector<int64_t>& sources, const std::vector<int64_t>& destinations);
  // Every array leaf of `from` is also the leaf of `to` at the same index.
  void ForwardLeaves(const HloInstruction* from, const HloInstruction* to) {
    Forward(from, {}, to, {});
  }
  // The leaves of parameter `number` of `computation` (not the entry) are
  // those of `source`. Bind before each BuildSequence of `computation`.
  void BindParameter(const HloComputation& computation, int64_t number,
                     const HloInstruction* source);
  // The thunks of `computation`, built as the entry is but into a sequence
  // of their own; the values its instructions define join the program.
  absl::StatusOr<std::vector<std::unique_ptr<Thunk>>> BuildSequence(
      const HloComputation& computation);

 private:
  // Appends the thunks of `computation`'s instructions to the current
  // sequence.
  absl::Status EmitComputation(const HloComputation& computation);
  absl::Status AddLoopKernelThunk(const HloInstruction& fusion);
  // Reports, in the module's terms (CpuProgram::in_place), the pairs the
  // thunks emitted for `instruction` from `first_thunk` on offer
  // (Thunk::in_place_pairs) for `instruction`'s own outputs.
  void ReportInPlacePairs(const HloInstruction& instruction, size_t first_thunk);
  int64_t Define(const HloInstruction* instruction, const ShapeIndex& index, ValueSlot slot);
  // Every array leaf of `from` under `from_index` is also the leaf of `to`
  // under `to_index`.
  void Forward(const HloInstruction* from, const ShapeIndex& from_index, const HloInstruction* to,
               const ShapeIndex& to_index);

  CpuCompileOptions options_;
  std::shared_ptr<const Jit> precompiled_;
  std::unique_ptr<LoopKernelModule> kernels_;
  CpuProgram program_;
  const HloComputation* entry_ = nullptr;
  // Where AddThunk appends.
  std::vector<std::unique_ptr<Thunk>>* sequence_ = &program_.thunks;
  LeafValueTable values_;
  // SharedResult's values, with the calls still to come.
  std::map<const HloInstruction*, std::pair<int64_t, int64_t>> shared_results_;
  int64_t next_name_ = 0;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_PROGRAM_BUILDER_H_
