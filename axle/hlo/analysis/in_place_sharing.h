//===- in_place_sharing.h - Outputs that take over their operand's memory --===//
//
// The one rule, for every backend, of when a program step (a thunk) writes
// its result into an operand's memory: the result's temporary is given
// up and the output lives in the operand's (ShareTemporary), so the step
// need not copy the operand and writes only what changes. The backend says
// which (operand, output) pairs each step computes correctly in one
// buffer (InPlaceStep::pairs: its per-target hook); this decides whether
// they share, from what the steps read and write.
//
// Which pairs are safe is the target's: the cpu backend's loop kernels
// offer an operand they read only at the index they write
// (elementwise_access.h: InPlaceOutputCandidates), and its
// dynamic-update-slice, scatter and dot-with-bias thunks their updated
// operand; the CUDA backend's scatter and dynamic-update-slice thunks
// offer their updated operands, while its loop kernels mark their pointers
// noalias and offer none.
//
// The rule, for step W of a sequence S with pair (a, o), where T is a's
// temporary: a and o are distinct temporaries of one size, and
//   0. o is at most one of the root values (below);
//   1. W touches T only through a (no other operand of W lives in T);
//   2. no step after W in S reads or writes T;
//   3. T's old value is needed by nobody after S, either because
//      a. a step before W in S wrote T (T is S's own value), no root
//         value other than o lives in T, and, in a nested sequence, o is
//         no root value (a backend may later give a nested root a
//         destination's memory; a and o must not follow it there), or
//      b. S is a while body, a is the state leaf k, and root leaf k is o
//         itself while no other root leaf lives in T: the body replaces
//         that state leaf by o, so o can be computed right in the state.
//         Root leaf k then becomes a (already in place: no copy).
// Rules 2 and 3 make T dead after W except as o; 1 keeps W's other inputs
// intact while it writes. Parameters and constants never qualify (not
// temporaries): their memory is the caller's.
//
// A nested sequence S (a while body, a conditional's branch) ends by
// storing its root leaves s_k into destinations d_k (the loop state, the
// conditional's result). The second rule, WriteRootsInPlace, lets the step
// W that computes s_k write it straight into d_k's memory, so no copy is
// made, when, with D the temporary of d_k:
//   4. s_k and d_k are distinct temporaries of one size, s_k is no
//      destination (nor in a destination's temporary), and no other root
//      leaf lives in D (its old value still moves on to another leaf);
//   5. W is the one step of S that writes s_k, and the backend lets W
//      write into a destination (its hook; the CUDA backend allows only
//      its kernels in a while body);
//   6. no step from W on (W included: a step's outputs never alias its
//      inputs) reads or writes D.
// Every other leaf not already in its destination is copied (StoreCopies).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_IN_PLACE_SHARING_H_
#define AXLE_HLO_ANALYSIS_IN_PLACE_SHARING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/value_slot.h"

namespace axle {

// One step of a backend program as the rule sees it: the value ids it
// reads and writes, and the (operand value, output value) pairs it computes
// correctly when the two share memory (the backend's hook).
struct InPlaceStep {
  StepUses uses;
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

// Makes every value held in `value`'s temporary use `with`'s instead (both
// temporaries of one size); the temporary left unused takes no memory
// (its size becomes 0). Nothing happens when they already share one.
void ShareTemporary(std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                    int64_t value, int64_t with);

// Applies the rule above to sequence `steps` of a program whose values and
// temporaries are `values` and `temporary_sizes`, in step order. `roots`:
// the values S leaves behind (the entry's result leaves, a nested
// sequence's root leaves); `destinations`: for a while body, the state
// leaf each root leaf is stored into (null otherwise); rule 3b replaces
// roots[k] by destinations[k]. `nested`: S is not the entry's sequence.
// Does nothing when a step's uses are unknown (nullopt).
void ShareInPlaceOperands(absl::Span<const std::optional<InPlaceStep>> steps,
                          std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                          std::vector<int64_t>& roots, const std::vector<int64_t>* destinations,
                          bool nested);

// Applies rules 4-6 above to nested sequence `steps`, whose root leaves
// `sources` are stored into `destinations` (same length): each leaf that
// may be written in place shares its destination's temporary and becomes
// that destination in `sources`. `may_write(i)`: whether step i may write
// into a destination (null: every step may). Does nothing when a step's
// uses are unknown (nullopt). Run it after ShareInPlaceOperands.
void WriteRootsInPlace(absl::Span<const std::optional<InPlaceStep>> steps,
                       std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                       std::vector<int64_t>& sources, absl::Span<const int64_t> destinations,
                       const std::function<bool(size_t)>& may_write = nullptr);

// What is left to copy where a nested sequence's root leaves cannot share
// their destinations' memory (a while body's state, a conditional's
// results): the (from, to) copies that store `sources[i]` into
// `destinations[i]` for every i where `in_place(i)` is false. A source that
// is another destination being overwritten (a body that swaps two state
// leaves) is first copied to a fresh temporary, `snapshot(i)` (called in
// order of i, once per such leaf). The copies to fresh temporaries come
// first; empty when every leaf is in place.
std::vector<std::pair<int64_t, int64_t>> StoreCopies(
    absl::Span<const int64_t> sources, absl::Span<const int64_t> destinations,
    const std::function<bool(size_t)>& in_place, const std::function<int64_t(size_t)>& snapshot);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_IN_PLACE_SHARING_H_
