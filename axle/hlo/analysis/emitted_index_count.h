//===- emitted_index_count.h - How often a loop kernel emits each value ---===//
//
// A loop kernel's elemental emitter computes a fused value at the index its
// reader asks for, and reuses it only for the same index: readers that
// remap the index (slice, pad, reverse, concatenate, broadcast, transpose,
// gather, reduce, ...) each make it emit the value again, at an index of
// their own, and so on down the fused computation. A DAG whose shared
// values are read through remapping ops at every level (lax.associative_
// scan: strided slices of each level's interleaved result, interior pads
// interleaving the next) grows this count geometrically with its depth:
// its IR, and the compile, with it (a 1000-step scan did not compile in
// minutes). XLA bounds it the same way when fusing
// (FusionNodeIndexingEvaluation, kAllowedCodeDuplication).
//
// The count of a value is the sum, over the distinct index sources it is
// read at, of their own counts: an elementwise reader of the same
// dimensions passes its own sources on (same index, one emission), any
// other reader is a source itself (a concatenate counts once per operand:
// it may read each at another index). The root counts one.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_EMITTED_INDEX_COUNT_H_
#define AXLE_HLO_ANALYSIS_EMITTED_INDEX_COUNT_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle {

// For every instruction of `computation` (a fused computation), how many
// indices a loop kernel over its root emits it at (see above).
absl::flat_hash_map<const HloInstruction*, int64_t> EmittedIndexCounts(
    const HloComputation& computation);

// The largest of EmittedIndexCounts(computation).
int64_t MaxEmittedIndexCount(const HloComputation& computation);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_EMITTED_INDEX_COUNT_H_
