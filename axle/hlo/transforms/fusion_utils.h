//===- fusion_utils.h - Building and growing fusion instructions -----------===//
//
// The mechanics the fusion passes share: wrap an instruction into a fusion,
// fuse a producer into a consumer (either of which may already be a fusion,
// whose fused computation is then inlined), and the opcode classes the passes
// reason about (cheap to duplicate or not).
//
// Every operation rebuilds the fused computation from scratch: parameters are
// the distinct outside values the fused instructions read, numbered in the
// order they are first read, so a fused computation never has unused
// parameters. The old fusion instruction and its fused computation are
// removed; the producer is removed too when the consumer was its only user,
// otherwise it stays (it was duplicated into the fusion).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_FUSION_UTILS_H_
#define AXLE_HLO_TRANSFORMS_FUSION_UTILS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

// The computations that run as programs of their own: the entry and,
// transitively, while conditions and bodies, conditional branches and call
// bodies, callees first. Reducers, comparators and fused computations are
// not among them.
std::vector<HloComputation*> ControlFlowComputations(const HloModule& module);

// Ops whose per-element cost is high enough that computing them twice (once
// in each of two fusions) would cost more than the memory traffic fusion
// saves: transcendentals, division, power, remainder.
bool IsExpensiveElementwise(HloOpcode opcode);
// True when no instruction of `instruction` (or of its fused computation)
// is expensive.
bool IsCheapToDuplicate(const HloInstruction& instruction);

// Wraps `instruction` into a new fusion instruction of `kind` (its fused
// computation holds a clone of it over one parameter per distinct operand)
// and replaces it. Returns the fusion.
absl::StatusOr<HloFusionInstruction*> WrapInFusion(HloInstruction* instruction, FusionKind kind);

// Fuses `producer` (an operand of `consumer`) into `consumer`; the result is
// a fusion of `kind` that replaces consumer. A fusion producer or consumer is
// inlined. The producer stays when it has users besides consumer.
absl::StatusOr<HloFusionInstruction*> FuseProducerIntoConsumer(HloInstruction* producer,
                                                               HloInstruction* consumer,
                                                               FusionKind kind);

// Merges two loop fusions of one iteration space (outputs of one shape)
// into one multi-output loop fusion computing the outputs of both, as XLA's
// multi-output fusion does: `second` may read `first`'s outputs
// (producer-consumer), or the two may only share operands (siblings).
// Instructions the two compute alike (same op, attributes and operands) are
// computed once. Whatever read either fusion reads a get-tuple-element of
// the merged one (or the fusion itself, when it has one output); an output
// of `first` that only `second` read is no output any more. Returns nullptr,
// changing nothing, when the merged fused computation would hold more than
// `max_instructions` instructions. The caller makes sure no path leads from
// one fusion to the other through a third instruction (the merged fusion
// would depend on itself).
absl::StatusOr<HloFusionInstruction*> MergeIntoMultiOutputFusion(HloFusionInstruction* first,
                                                                 HloFusionInstruction* second,
                                                                 int64_t max_instructions);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_FUSION_UTILS_H_
