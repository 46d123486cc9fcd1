//===- conditional_branch.h - Which branch a conditional runs ---------------===//
//
// The conditionals the cpu and CUDA program builders run
// (cpu/runtime/control_flow_thunk.h, gpu/gpu_thunks.h), and the branch each
// runs for its selector, as XLA defines it: a pred selects branch 0 when
// true and branch 1 when false; an s32 selects its branch, and a value out
// of range the last one.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_CONDITIONAL_BRANCH_H_
#define AXLE_HLO_ANALYSIS_CONDITIONAL_BRANCH_H_

#include <cstdint>

#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// Whether the program builders run `conditional`: a conditional with a pred
// selector and two branches or an s32 selector, and one operand per branch. The reason they
// give for any other form is kRunnableConditionalForm.
bool IsRunnableConditional(const HloInstruction& conditional);
inline constexpr char kRunnableConditionalForm[] =
    "a conditional needs a pred or s32 selector, one operand per branch, and two branches for "
    "a pred";

// The branch a runnable conditional of `branch_count` branches runs for
// `selector`: the pred's byte (selector_is_pred) or the s32 value.
// Inline: the runtime that runs serialized programs (cpu/runtime/
// thunk_serialization.h) links no HLO library.
inline int64_t SelectedBranch(bool selector_is_pred, int32_t selector, int64_t branch_count) {
  if (selector_is_pred) return selector != 0 ? 0 : 1;
  return selector < 0 || selector >= branch_count ? branch_count - 1 : selector;
}

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_CONDITIONAL_BRANCH_H_
