//===- in_place.h - Outputs that take over their operand's memory ----------===//
//
// A thunk lists in in_place_pairs() the (operand, output) values it
// computes correctly when they share memory (dynamic-update-slice, scatter:
// then only the updated elements are written). ShareInPlaceOperands gives
// the output the operand's temporary (ProgramBuilder::ShareTemporary) when
// the operand's old contents are dead once the thunk has read them.
//
// The rule, for thunk W of a sequence S with pair (a, o), where T is a's
// temporary: a and o are distinct temporaries of one size, and
//   0. o is at most one of the root values (below);
//   1. W touches T only through a (no other operand of W lives in T);
//   2. no thunk after W in S reads or writes T;
//   3. T's old value is needed by nobody after S, either because
//      a. a thunk before W in S wrote T (T is S's own value), no root
//         value other than o lives in T, and, in a nested sequence, o is
//         no root value (WriteInPlace in control_flow_thunk.cc may give o
//         a destination's memory; a and o must not follow it there), or
//      b. S is a while body, a is the state leaf k, and root leaf k is o
//         itself while no other root leaf lives in T: the body replaces
//         that state leaf by o, so o can be computed right in the state.
//         Root leaf k then becomes a (already in place: no copy).
// Rules 2 and 3 make T dead after W except as o; 1 keeps W's other inputs
// intact while it writes. Parameters and constants never qualify (not
// temporaries): their memory is the caller's.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_IN_PLACE_H_
#define AXLE_CPU_RUNTIME_IN_PLACE_H_

#include <memory>
#include <vector>

#include "axle/cpu/runtime/program_builder.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

// `roots`: the values S leaves behind (the entry's result leaves, a nested
// sequence's root leaves); `destinations`: for a while body, the state leaf
// each root leaf is stored into (null otherwise). Rule 3b replaces roots[k]
// by destinations[k]. Does nothing when a thunk of S does not know its
// buffer uses.
void ShareInPlaceOperands(const std::vector<std::unique_ptr<Thunk>>& sequence,
                          std::vector<int64_t>& roots, const std::vector<int64_t>* destinations,
                          bool nested, ProgramBuilder& builder);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_IN_PLACE_H_
