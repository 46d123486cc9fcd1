//===- hlo_creation_utils.h - Adding new instructions to a computation -----===//
//
// Small builders the rewriting passes share: each adds one new instruction
// (with a result shape in the default, descending layout unless given) to
// the computation of its first operand and returns it. Callers have checked
// that the operation is well formed; these CHECK what they rely on.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_HLO_CREATION_UTILS_H_
#define AXLE_HLO_TRANSFORMS_HLO_CREATION_UTILS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// The Unimplemented error of a rewriting pass that cannot handle
// `instruction`: "<pass>: <why> (instruction %name, opcode)".
absl::Status PassUnimplemented(absl::string_view pass, const HloInstruction& instruction,
                               absl::string_view why);

// `shape` with its layout made explicit and descending (arrays only).
Shape WithDescendingLayout(Shape shape);
// Same element type and dimensions, and the same layout where "no layout"
// counts as the descending one.
bool SameShapeAndLayout(const Shape& a, const Shape& b);

// A scalar constant.
HloInstruction* MakeConstant(HloComputation* computation, Literal literal);
// `value` (a scalar literal) broadcast to `shape` (a scalar shape gives the
// constant itself). The result has exactly `shape`, layout included.
HloInstruction* MakeFilledArray(HloComputation* computation, const Literal& value,
                                const Shape& shape);

// A tuple of `elements` in `computation`.
HloInstruction* MakeTuple(HloComputation* computation,
                          const std::vector<HloInstruction*>& elements);
// Element `index` of `tuple`: a get-tuple-element in tuple's computation.
HloInstruction* MakeGetTupleElement(HloInstruction* tuple, int64_t index);

HloInstruction* MakeBroadcast(HloInstruction* operand, const Shape& shape,
                              absl::Span<const int64_t> dimensions);
HloInstruction* MakeReshape(HloInstruction* operand, const Shape& shape);
// The result shape is the operand's dimensions permuted (descending layout).
HloInstruction* MakeTranspose(HloInstruction* operand, absl::Span<const int64_t> permutation);
HloInstruction* MakeBitcast(HloInstruction* operand, const Shape& shape);
// `operand` converted to element type `type` (its dimensions and layout
// kept), or `operand` itself where it has that type already.
HloInstruction* MakeConvert(HloInstruction* operand, PrimitiveType type);
HloInstruction* MakeSlice(HloInstruction* operand, const Shape& shape, std::vector<int64_t> starts,
                          std::vector<int64_t> limits, std::vector<int64_t> strides);
HloInstruction* MakeBinary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs,
                           const Shape& shape);

// A new computation of `module` named `name` that combines two
// scalars of `type`, parameters lhs and rhs, by `opcode`: a reducer.
HloComputation* AddScalarCombiner(HloModule* module, absl::string_view name, HloOpcode opcode,
                                  PrimitiveType type);

// Permutation helpers: the inverse, the composition `outer o inner` of two
// transposes (transpose(transpose(x, inner), outer) == transpose(x, result)),
// and whether a permutation is the identity.
std::vector<int64_t> InversePermutation(absl::Span<const int64_t> permutation);
std::vector<int64_t> ComposePermutations(absl::Span<const int64_t> inner,
                                         absl::Span<const int64_t> outer);
bool IsIdentityPermutation(absl::Span<const int64_t> permutation);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_HLO_CREATION_UTILS_H_
