//===- hlo_verifier.h - Checks that an HLO module is well formed -----------===//
//
// The verifier checks what XLA's HloVerifier checks: every instruction's
// shape is the one shape inference gives for its operands and attributes,
// operand and called-computation counts and signatures, dense parameter
// numbers, unique names, consistent operand/user and control edges, no
// cycles, valid replica groups and source-target pairs, async and send/recv
// pairing, fusion bodies, the entry computation layout, input/output aliasing
// and buffer donors.
//
// Every error names the computation and the instruction (`%name`) and says
// what is wrong. The verifier changes nothing: Run() returns false, as a pass
// that did not change the module.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_HLO_VERIFIER_H_
#define AXLE_HLO_ANALYSIS_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle {

class HloModule;

struct HloVerifierOptions {
  // Compare layouts too (after layout assignment).
  bool layout_sensitive = false;
  // Let instructions mix floating-point precisions (f32 operands, bf16
  // result, ...), as XLA's test base allows.
  bool allow_mixed_precision = false;
  // Accept unbounded (`?`) dimensions.
  bool allow_unbounded_dynamism = false;
  // Require broadcast dimensions to be sorted.
  bool verify_broadcast_dimensions_order = false;
};

class HloVerifier {
 public:
  explicit HloVerifier(bool layout_sensitive = false, bool allow_mixed_precision = false);
  explicit HloVerifier(HloVerifierOptions options) : options_(options) {}

  absl::string_view name() const { return "hlo-verifier"; }
  // The pass interface: OK(false) when the module is well formed.
  absl::StatusOr<bool> Run(HloModule* module);
  absl::Status Verify(const HloModule& module) const;

 private:
  HloVerifierOptions options_;
};

// Verifies `module` with the given options.
absl::Status VerifyHloModule(const HloModule& module, const HloVerifierOptions& options = {});

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_HLO_VERIFIER_H_
