//===- elementwise_access.h - Which fused values a loop reads at its index -===//
//
// A "plain" loop kernel walks its outputs' shape once, element by element,
// and computes each output element from operand elements: its fused
// computation holds only elementwise ops and the data movement that keeps
// the kernel a simple loop nest (broadcast, slice, reshape, concatenate,
// pad, reverse, iota, dynamic-slice, constants; a root tuple for several
// outputs), all in descending layouts. No reduce, transpose, gather or
// window: those kernels have schedules of their own (row buffers, tiles).
//
// In such a kernel, a parameter whose every path to the root goes through
// elementwise ops of its own dimensions is read only at the index being
// computed: element j of it is read while computing element j of the
// outputs, and never again. Two things follow:
//  - multi-output fusion (hlo/transforms/multi_output_fusion.h) can compute
//    such a producer inside its consumer;
//  - an output of the same shape that depends on such a parameter may take
//    over the parameter's memory (the cpu backend's in-place outputs): each
//    output element is stored after the one read of the parameter's
//    element at that index, which it depends on, so nothing unread is
//    overwritten.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_ELEMENTWISE_ACCESS_H_
#define AXLE_HLO_ANALYSIS_ELEMENTWISE_ACCESS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "axle/hlo/ir/hlo_computation.h"

namespace axle {

// The data movement a plain loop kernel computes by remapping its index
// (broadcast, concatenate, dynamic-slice, iota, pad, reshape, reverse,
// slice); the fusion pass also fuses transposes, which take a schedule of
// their own.
bool IsIndexRemappingOp(HloOpcode opcode);
// An op a plain loop kernel may hold (see above).
bool IsPlainLoopOp(const HloInstruction& instruction);
// Every instruction of `fused` is one.
bool IsPlainLoopComputation(const HloComputation& fused);

// Whether every path from `instruction` (a fused value) to its
// computation's root goes through elementwise ops of its dimensions only,
// so the kernel reads it at the output index alone.
bool ReadOnlyAtOutputIndex(const HloInstruction& instruction);

// The (parameter number, output index) pairs of a plain loop kernel whose
// output may share the parameter's memory: same shape, the parameter read
// only at the output index, the output computed from it. Every such pair,
// those with the fewest ops from parameter to output first (an update
// `w - lr * v'` lists (w, it) before (v, it)); a user realizes at most one
// pair per parameter and one per output (in_place.h). Outputs: the root,
// or the elements of a root tuple.
std::vector<std::pair<int64_t, int64_t>> InPlaceOutputCandidates(const HloComputation& fused);

// The (operand number, output index) pairs whose output `instruction`
// computes correctly over that operand's memory, nearest first: a plain
// loop fusion's InPlaceOutputCandidates, an elementwise op's operands of
// its own shape (as the one-op loop kernel it becomes, which reads each
// at the output's index only), a dynamic-update-slice's operand 0 and a
// scatter's operands (each into its output); but for an elementwise op,
// never an operand passed twice. The target-neutral in-place hook
// of buffer assignment (BufferAssignmentOptions::in_place_pairs), which the
// cpu backend's loop kernels, dynamic-update-slice and scatter thunks
// offer alike; whether a pair shares is in_place_sharing.h's rule.
std::vector<std::pair<int64_t, ShapeIndex>> InPlaceOperandPairs(const HloInstruction& instruction);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_ELEMENTWISE_ACCESS_H_
