//===- call_inliner.h - Inline `call` instructions -------------------------===//
//
// XLA's CallInliner ("call-inliner"): every `call` is replaced by a copy of
// its computation's instructions, with the parameters bound to the call's
// operands. Copies get fresh module-unique names derived from the originals;
// computations no longer called are removed. Calls with control
// dependencies, and calls whose computation holds fusions or async ops and
// is called from elsewhere too, are left alone.
//
// InlineComputation is the shared mechanism (while-loop simplification uses
// it to unroll a loop that runs once).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_CALL_INLINER_H_
#define AXLE_HLO_TRANSFORMS_CALL_INLINER_H_

#include "absl/types/span.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class CallInliner : public HloPassInterface {
 public:
  absl::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

// How many times instructions of `module` name `computation` as a called
// computation.
int64_t CountCallSites(const HloModule& module, const HloComputation& computation);

// Whether `callee` can be copied into another computation: false when it
// holds fusion or async instructions (whose called computations belong to
// one instruction) and is used by more than one instruction of the module.
bool CanInlineComputation(const HloModule& module, const HloComputation& callee);

// Copies `callee`'s instructions into `into` with parameter i bound to
// args[i] (which must belong to `into`), and returns the copy of the root.
// Control dependencies inside `callee` are copied too.
absl::StatusOr<HloInstruction*> InlineComputation(const HloComputation& callee,
                                                  absl::Span<HloInstruction* const> args,
                                                  HloComputation* into);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_CALL_INLINER_H_
