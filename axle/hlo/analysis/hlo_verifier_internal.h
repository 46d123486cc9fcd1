//===- hlo_verifier_internal.h - Per-instruction checks of the verifier ----===//
//
// Internal to axle/hlo/analysis: hlo_verifier.cc checks the module's
// structure and calls VerifyInstruction (hlo_verifier_instructions.cc) for
// every instruction.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_HLO_VERIFIER_INTERNAL_H_
#define AXLE_HLO_ANALYSIS_HLO_VERIFIER_INTERNAL_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::verifier_internal {

struct ModuleFacts {
  // Computations wrapped by async-start/update/done.
  absl::flat_hash_set<const HloComputation*> async_computations;
  // The thread each computation runs on. As in XLA, an async op's
  // async_execution_thread also sets the thread of its wrapped computation
  // and of everything that computation calls.
  absl::flat_hash_map<const HloComputation*, std::string> execution_thread;
};

// Shape equality as the verifier means it: element types and dimensions
// (unbounded `?` matches anything), tuple structure, never dynamic markers;
// layouts (minor_to_major only) when `compare_layouts`; float precisions may
// differ when `ignore_fp_precision`.
bool ShapesMatch(const Shape& a, const Shape& b, bool compare_layouts, bool ignore_fp_precision);

// "%name (opcode) in computation comp: message".
absl::Status InstructionError(const HloInstruction& instruction, absl::string_view message);

absl::Status VerifyInstruction(const HloInstruction& instruction, const HloVerifierOptions& options,
                               const ModuleFacts& facts);

}  // namespace axle::verifier_internal

#endif  // AXLE_HLO_ANALYSIS_HLO_VERIFIER_INTERNAL_H_
