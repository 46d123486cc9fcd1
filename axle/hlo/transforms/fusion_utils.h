//===- fusion_utils.h - Building and growing fusion instructions -----------===//
//
// The mechanics the fusion passes share: wrap an instruction into a fusion,
// fuse a producer into a consumer (either of which may already be a fusion,
// whose fused computation is then inlined), and the opcode classes the passes
// reason about (cheap to duplicate or not).
//
// Every operation but FuseProducerIntoFusionInPlace (below) rebuilds the
// fused computation from scratch: parameters are
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

#include "absl/container/flat_hash_map.h"
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

// Growing a fusion in place (for passes that fuse many producers into one
// consumer, where rebuilding the fused computation at each step would cost
// time quadratic in the fusion's size):
//
// FuseProducerIntoFusionInPlace adds a copy of `producer` (an operand of
// the fusion `consumer`; a fusion producer is inlined) to consumer's fused
// computation, reading consumer's existing parameters where producer's
// operands are already consumer's operands, the copies of earlier steps
// where they are producers fused before (growth.copies), and new parameters
// (appended) otherwise. The parameter(s) that stood for producer lose their users: the
// operand slot now reads `placeholder` (any instruction of consumer's
// computation the caller never fuses) until CompactFusion drops it. The
// producer is removed when nothing else reads it. Parameters without users
// break the rule above (a fused computation has no unused parameters), so a
// caller compacts every fusion it grew before anyone else sees it.
// `growth` (empty before the first step on a consumer, then kept by the
// caller) records what CompactFusion needs to build the fused computation
// FuseProducerIntoConsumer would have built step by step.
struct FusionGrowth {
  // The parameters' outside values in the order FuseProducerIntoConsumer
  // gives them: each producer's operands first, then the consumer's others.
  std::vector<HloInstruction*> parameter_order;
  // The fused computation's instruction count before each step.
  std::vector<int64_t> step_starts;
  // The copy inside the fusion of each producer fused so far that is still
  // in the outer computation (it has other readers): a later producer that
  // reads it reads the copy, so a value shared by several fused producers
  // is fused once and the fused computation stays a DAG (threefry's rounds,
  // each value read by two or three of the next round's ops, would
  // otherwise become a tree of copies).
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copies;
  // Producers fused earlier that nothing reads any more once a later step
  // reads their copies: removed from the outer computation (the caller
  // forgets them).
  std::vector<HloInstruction*> removed;
};
absl::Status FuseProducerIntoFusionInPlace(HloInstruction* producer, HloFusionInstruction* consumer,
                                           HloInstruction* placeholder, FusionGrowth& growth);
// Rebuilds `fusion` (no control edges) with the parameters its fused
// computation reads only and replaces it; returns the new fusion. With the
// `growth` of its in-place steps, parameters and instructions come in the
// order fusing step by step with FuseProducerIntoConsumer gives them (the
// last producer's first): some analyses pair parameters with outputs
// greedily in parameter order (elementwise_access.h:
// InPlaceOutputCandidates), and kernels are emitted in instruction order.
// Otherwise (or for what growth does not list) parameters are numbered in
// the order they are first read. A placeholder the old fusion read stays in
// the computation (without that user).
absl::StatusOr<HloFusionInstruction*> CompactFusion(HloFusionInstruction* fusion,
                                                    const FusionGrowth& growth);
// How many times the elemental emitter emits each instruction of a fused
// computation, as XLA's FusionNodeIndexingEvaluation counts it: a kernel
// computes an instruction once per distinct index expression its users read
// it at. An instruction's "indexing users" are its own users, except that an
// operand read through a user that keeps the index (same dimensions, or a
// transpose) inherits that user's indexing users; its count is the sum of
// its indexing users' counts, the outputs' (the roots') 1. Slices, pads and
// concatenations each add an index, so a chain of them reading a value two
// ways per level (lax.associative_scan's levels) multiplies its count at each
// level. Counts saturate at kIndexUsageSaturation. Parameters get no count.
inline constexpr int64_t kAllowedCodeDuplication = 15;
inline constexpr int64_t kIndexUsageSaturation = int64_t{1} << 40;
absl::flat_hash_map<const HloInstruction*, int64_t> IndexUsageCounts(
    const HloComputation& fused_computation);
// The largest count of IndexUsageCounts (0 for a computation of parameters).
int64_t MaxIndexUsageCount(const HloComputation& fused_computation);
// Whether fusing `producer` (maybe a fusion, inlined) into `consumer` (a
// fusion or an instruction, reading producer) would give some instruction
// of the result a count above kAllowedCodeDuplication that it did not have
// before. `copies` is FusionGrowth::copies, as FuseProducerIntoFusionInPlace
// takes it: the producer's operands that have a copy inside consumer read
// that copy. The result is evaluated as a whole,
// without building it: fusing a producer can raise the counts of what
// consumer already holds (through those copies).
bool ExceedsCodeDuplication(
    const HloInstruction& producer, const HloInstruction& consumer,
    const absl::flat_hash_map<const HloInstruction*, HloInstruction*>& copies = {});

// Merges two loop fusions of one iteration space (outputs of one shape)
// into one multi-output loop fusion (two fusions of one other kind, such as
// sibling kInput reductions: one of that kind) computing the outputs of both, as XLA's
// multi-output fusion does: `second` may read `first`'s outputs
// (producer-consumer), or the two may only share operands (siblings).
// Instructions the two compute alike (same op, attributes and operands) are
// computed once. Whatever read either fusion reads a get-tuple-element of
// the merged one (or the fusion itself, when it has one output); an output
// of `first` that only `second` read is no output any more. Returns nullptr,
// changing nothing, when the merged fused computation would hold more than
// `max_instructions` instructions, or when it would emit an instruction more
// than kAllowedCodeDuplication times (IndexUsageCounts) and more often than
// either fusion emits any (second reading first's outputs through slices or
// pads multiplies first's counts). The caller makes sure no path leads from
// one fusion to the other through a third instruction (the merged fusion
// would depend on itself).
absl::StatusOr<HloFusionInstruction*> MergeIntoMultiOutputFusion(HloFusionInstruction* first,
                                                                 HloFusionInstruction* second,
                                                                 int64_t max_instructions);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_FUSION_UTILS_H_
