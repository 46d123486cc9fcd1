//===- gpu_conditional_to_select.h - Cheap conditionals as selects ---------===//
//
// A conditional makes the GPU executable read its selector on the host:
// the stream drains, the host waits (about ten microseconds), and the work
// after it cannot join the graph before it (gpu_graph.h). JAX's lax.cond in
// a loop (fori_cond_dynamic) pays that once per iteration. Where every
// branch is cheap, computing all of them and selecting the result on the
// device costs less: this pass inlines each branch on its operand and
// replaces the conditional by selects (a pred selector: true takes branch
// 0; an s32 index: equal to i takes branch i, anything else the last
// branch, as XLA's conditional does), leaf by leaf for tuple results. The
// branches then simplify and fuse with their neighbours.
//
// A branch is cheap when it has no side effects and holds only elementwise
// ops, broadcasts, reshapes, slices, transposes, concatenates, iotas,
// reduces and plumbing, at most `max_instructions` instructions in all the
// branches together, none of more than `max_elements` elements. Computing
// a branch whose result is not taken is harmless: HLO ops do not trap.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_CONDITIONAL_TO_SELECT_H_
#define AXLE_GPU_GPU_CONDITIONAL_TO_SELECT_H_

#include <cstdint>

#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

struct ConditionalToSelectLimits {
  int64_t max_instructions = 64;
  int64_t max_elements = int64_t{1} << 16;
};

// Whether the pass replaces `conditional` under `limits`.
bool CheapConditional(const HloInstruction& conditional, const ConditionalToSelectLimits& limits);

class GpuConditionalToSelect : public HloPassInterface {
 public:
  explicit GpuConditionalToSelect(ConditionalToSelectLimits limits = ConditionalToSelectLimits())
      : limits_(limits) {}
  absl::string_view name() const override { return "gpu-conditional-to-select"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  ConditionalToSelectLimits limits_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_CONDITIONAL_TO_SELECT_H_
