//===- associative_selection.h - Proving a reducer's fold can be split ----===//
//
// A reduce folds its inputs in order, ((init op x0) op x1) op ...; a kernel
// that splits the fold into runs folded apart (one per vector lane) and
// combines the runs' results in order gets the same bits only when `op` is
// associative. Floating-point sums are not, but the comparators of argmax
// and argmin are, and they are what a split fold is for: variadic reduces
// that LLVM cannot vectorize.
//
// IsAssociativeSelection proves it for a class of reducers: those whose
// every result is one of its inputs, picked by comparisons of inputs. Such a
// reducer (parameters, pred constants, compare, select, and/or/xor/not on
// preds, integer maximum/minimum, tuple, get-tuple-element) does the same
// for any two inputs whose values compare alike: it depends on the "order
// type" of the values only. So op(op(a, b), c) and op(a, op(b, c)) pick the
// same input for each result over all inputs when they do over every order
// type of three inputs a, b, c: for each result slot, each of the three
// values below, above or equal to the others, or (floats) NaN. That is a
// finite set (64 per float slot, 27 per integer slot), evaluated on the
// reducer symbolically: a value is "input e's slot k", a comparison is read
// off the order type. Equal integers are the same bits, so picking either
// of two equal integers counts as the same pick; equal floats may differ
// (-0 and +0), so for floats the same input must be picked. Comparisons
// must be between values of one slot and in the slot type's own order
// (floats by IEEE-754, not the total order).
//
// JAX's argmax / argmin (the NaN-first comparator with the lowest index on
// ties) pass. XLA's builder ArgMax does not: a NaN loses on the left of its
// comparison and wins on the right, so op(op(1, NaN), 0) is 0 and
// op(1, op(NaN, 0)) is 1. A sum (an add) is not in the class.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_ASSOCIATIVE_SELECTION_H_
#define AXLE_HLO_ANALYSIS_ASSOCIATIVE_SELECTION_H_

#include "axle/hlo/ir/hlo_computation.h"

namespace axle {

// Whether `reducer` (a reduce's to_apply: N accumulators and N inputs,
// scalars, returning N scalars or, for N = 1, one) is in the class above
// and associative: op(op(a, b), c) has the bits of op(a, op(b, c)) for all
// a, b, c. False when it cannot tell (any other op, more than 4 slots).
bool IsAssociativeSelection(const HloComputation& reducer);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_ASSOCIATIVE_SELECTION_H_
