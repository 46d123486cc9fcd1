//===- while_loop_constant_sinking.h - Loop-invariant constants into bodies -===//
//
// XLA's WhileLoopConstantSinking ("while-loop-constant-sinking"). A loop
// state element whose init value is a constant and that the body passes
// through unchanged is the constant on every iteration: its reads in the
// body and the condition become the constant itself. The element is then
// read by nothing but its own pass-through, and while-loop-simplifier drops
// it from the state, so the loop no longer copies the constant into its
// state on every run (an ONNX LSTM's 256 KiB recurrent weights per
// direction). A body or condition shared with another loop is first cloned
// for this one, since the other loop's constants differ.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_WHILE_LOOP_CONSTANT_SINKING_H_
#define AXLE_HLO_TRANSFORMS_WHILE_LOOP_CONSTANT_SINKING_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class WhileLoopConstantSinking : public HloPassInterface {
 public:
  absl::string_view name() const override { return "while-loop-constant-sinking"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_WHILE_LOOP_CONSTANT_SINKING_H_
