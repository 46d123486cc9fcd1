//===- constant_folding.h - Evaluate instructions of constants -------------===//
//
// XLA's HloConstantFolding ("constant-folding"): an instruction whose
// operands are all constants is evaluated with the reference interpreter
// (axle/eval) and replaced by a constant holding the result. Left alone:
// instructions without operands (parameters, iota, rng state, replica and
// partition ids), broadcasts and iotas (XLA keeps those: folding them only
// makes large constants), tuples and other non-array results, while loops,
// custom calls, dynamic shapes, anything with a side effect or calling a computation with
// one (rng, infeed, recv, ...; see side_effects.h), constants whose values
// were elided in the text, and results or operands of more than 45M
// elements. An instruction the interpreter cannot evaluate is left as it is.
//
// This is the one transform that runs the interpreter, which is why
// axle_hlo_pass links axle_eval (eval uses only analysis and below, so
// there is no cycle).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_CONSTANT_FOLDING_H_
#define AXLE_HLO_TRANSFORMS_CONSTANT_FOLDING_H_

#include <cstdint>

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class HloConstantFolding : public HloPassInterface {
 public:
  // XLA's limit on the elements of a folded result (and of its operands).
  static constexpr int64_t kMaxElements = 45 * 1000 * 1000;

  absl::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_CONSTANT_FOLDING_H_
