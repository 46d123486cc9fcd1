//===- backend_pipeline.h - The passes every backend runs before codegen ---===//
//
// The cpu and CUDA backends prepare a module with one list of passes, in
// XLA:CPU's order: bf16 reductions made f32 ones (its FloatNormalization),
// algebraic rewrites, tuple and loop clean-up, reshapes sunk to meet and cancel, constants folded,
// common subexpressions merged, loop-invariant constants sunk into loop bodies and dropped from the
// loop state and folded again there (an ONNX GRU's slices of its recurrent weight would otherwise
// be copied on every step), rewrites again on what CSE and folding exposed; then fusion,
// multi-output fusion, and CSE again (a producer fused into several consumers of one kernel is a
// copy per consumer, computed once per copy unless merged). Each backend edits the list where it
// differs (its dot rewrites, its fusion options) through a callback, instead of keeping a copy of
// it.
//
// Also here: the pass that wraps the ops needing a kernel into loop
// fusions, with the tuple root the loop emitters of both backends expect
// of a fusion whose root is a variadic reduce or reduce-window.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_
#define AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"

namespace axle {

// Called before each pass of the list is added, with its registered name
// (pass_registry.h): the backend may add passes of its own in front of it.
// Returns whether the named pass is added too (false: the backend put its
// own version in its place).
using BackendPassEdit =
    absl::FunctionRef<absl::StatusOr<bool>(absl::string_view name, HloPassPipeline& pipeline)>;

// Adds the shared list to `pipeline`. With `run_backend_only`
// (ExecutableBuildOptions, as XLA's: the module is optimized already) only
// what codegen needs: layout-normalization, batchnorm-expander and
// bf16-reductions-in-f32 (XLA's numerics: bf16 reductions accumulate in f32).
absl::Status AddBackendPreparationPasses(HloPassPipeline& pipeline, bool run_backend_only,
                                         BackendPassEdit edit);

// Gives every fusion in a computation control flow runs whose root has a
// tuple shape but is no tuple (a variadic reduce or reduce-window) the root
// tuple(get-tuple-element(root, 0), ...) a multi-output fusion has. Fusions
// for which `skip` is true are left as they are. Returns whether any
// changed.
bool AddTupleRootsToFusions(const HloModule& module,
                            absl::FunctionRef<bool(const HloInstruction& fusion)> skip);

// Ops that need no kernel in a backend's program: parameters, constants,
// tuples and their elements, bitcasts, tokens, dependencies, barriers and
// domains pass buffers on (value_slot.h), and a fusion is a kernel already.
bool IsPlumbing(HloOpcode opcode);

// Whether a loop fusion can compute `instruction`'s result: arrays, and the
// tuples of a variadic reduce / reduce-window; never an asynchronous start
// or done (a start and its done stay a pair).
bool LoopFusible(const HloInstruction& instruction);

// Wraps every op that needs a kernel (`needs_kernel`), in the entry and in
// every computation control flow runs, into a one-op loop fusion, then gives
// fusions the tuple roots of AddTupleRootsToFusions (except those
// `keeps_root` names). An op that needs a kernel but is not LoopFusible is
// left for the backend to name: with `stop_at_unfusible` nothing after it
// is wrapped either.
class WrapInLoopFusions : public HloPassInterface {
 public:
  using Predicate = std::function<bool(const HloInstruction&)>;
  WrapInLoopFusions(std::string name, Predicate needs_kernel, Predicate keeps_root,
                    bool stop_at_unfusible)
      : name_(std::move(name)),
        needs_kernel_(std::move(needs_kernel)),
        keeps_root_(std::move(keeps_root)),
        stop_at_unfusible_(stop_at_unfusible) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  std::string name_;
  Predicate needs_kernel_;
  Predicate keeps_root_;
  bool stop_at_unfusible_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_
