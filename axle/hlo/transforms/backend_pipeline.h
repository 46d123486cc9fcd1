//===- backend_pipeline.h - The passes every backend runs before codegen ---===//
//
// The cpu and CUDA backends prepare a module with one list of passes, in
// XLA:CPU's order: algebraic rewrites, tuple and loop clean-up, reshapes sunk
// to meet and cancel, constants folded, common subexpressions merged,
// loop-invariant constants sunk into loop bodies and dropped from the loop
// state, rewrites again on what CSE and folding exposed; then fusion,
// multi-output fusion, and CSE again (a producer fused into several
// consumers of one kernel is a copy per consumer, computed once per copy
// unless merged). Each backend edits the list where it differs (its dot
// rewrites, its fusion options) through a callback, instead of keeping a
// copy of it.
//
// Also here: the tuple root the loop emitters of both backends expect of a
// fusion whose root is a variadic reduce or reduce-window.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_
#define AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_

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
// what codegen needs: layout-normalization and batchnorm-expander.
absl::Status AddBackendPreparationPasses(HloPassPipeline& pipeline, bool run_backend_only,
                                         BackendPassEdit edit);

// Gives every fusion in a computation control flow runs whose root has a
// tuple shape but is no tuple (a variadic reduce or reduce-window) the root
// tuple(get-tuple-element(root, 0), ...) a multi-output fusion has. Fusions
// for which `skip` is true are left as they are. Returns whether any
// changed.
bool AddTupleRootsToFusions(const HloModule& module,
                            absl::FunctionRef<bool(const HloInstruction& fusion)> skip);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_BACKEND_PIPELINE_H_
