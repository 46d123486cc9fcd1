//===- hlo_opcode_families.h - Case lists for switches over opcodes -------===//
//
// The opcodes that every consumer treats alike, as X-macro lists, so that a
// switch over HloOpcode names them in one line and needs no `default:`:
//
//   switch (opcode) {
//     case HloOpcode::kCompare:
//       AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
//       return Binary(...);
//     ...                                // every other opcode, one by one
//   }
//
// (clang-format indents the macro like a statement: it goes after the case
// labels of its group, or first in the switch between clang-format off/on.)
//
// The switches that dispatch on every opcode (the parser's CreateInstruction,
// ShapeInference::InferInstructionShape, the evaluator's EvaluateInstruction,
// the cpu backend's FindThunkEmitter and ProgramBuilder::EmitComputation, the
// CUDA backend's EmitComputation) have no default and are compiled with
// -Werror=switch, so a new opcode that one of them does not handle fails the
// build; the elemental emitter must compute every opcode of the elementwise
// lists and AXLE_HLO_LOOP_FUSED_OPCODES (a static_assert there), the others
// it rejects (scripts/check-opcode-switches checks both; docs/CONTRIBUTING.md,
// "Adding an opcode"). The static_asserts below keep the elementwise and
// collective lists equal to the opcode table's properties: a new elementwise
// opcode of one or two operands must be added to its list here (or, when it
// has attributes of its own, to HasAttributes), a new collective to
// AXLE_HLO_COLLECTIVE_OPCODES.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_OPCODE_FAMILIES_H_
#define AXLE_HLO_IR_HLO_OPCODE_FAMILIES_H_

#include "axle/hlo/ir/hlo_opcode.h"

namespace axle {

#define AXLE_HLO_OPCODE_CASE(e) case HloOpcode::e:

// clang-format off
// One operand, elementwise, no attributes: the result has the operand's
// shape (is-finite: pred; real, imag, abs of complex: the component type).
#define AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(V)                                                 \
  V(kAbs) V(kAcos) V(kAcosh) V(kAsin) V(kAsinh) V(kAtan) V(kAtanh) V(kCbrt) V(kCeil) V(kClz)  \
  V(kCopy) V(kCos) V(kCosh) V(kErf) V(kExp) V(kExpm1) V(kFloor) V(kImag) V(kIsFinite) V(kLog) \
  V(kLog1p) V(kLogistic) V(kNegate) V(kNot) V(kPopulationCount) V(kReal) V(kRoundNearestAfz)  \
  V(kRoundNearestEven) V(kRsqrt) V(kSign) V(kSin) V(kSinh) V(kSqrt) V(kTan) V(kTanh)

// Two operands of one shape, elementwise, no attributes (compare has a
// direction, so it is not one of them).
#define AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(V)                                                \
  V(kAdd) V(kAnd) V(kAtan2) V(kComplex) V(kDivide) V(kMaximum) V(kMinimum) V(kMultiply) V(kOr) \
  V(kPower) V(kRemainder) V(kShiftLeft) V(kShiftRightArithmetic) V(kShiftRightLogical)        \
  V(kSubtract) V(kXor)

// Not in the lists above, but computed one element at a time by the
// elemental emitter (ElementalIrEmitter::EmitElement; a static_assert there
// requires a rule for each): the backends always run them, like the
// elementwise lists, in loop fusions (WrapInLoopFusions), so their switches
// name this list and a new op of the kind touches no backend file.
#define AXLE_HLO_LOOP_FUSED_OPCODES(V)                                                        \
  V(kBitcastConvert) V(kBroadcast) V(kClamp) V(kCompare) V(kConcatenate) V(kConvert)          \
  V(kDynamicReshape) V(kDynamicSlice) V(kGather) V(kGetDimensionSize) V(kIota) V(kMap) V(kPad) \
  V(kReduce) V(kReducePrecision) V(kReduceWindow) V(kReshape) V(kReverse) V(kSelect)          \
  V(kSetDimensionSize) V(kSlice) V(kStochasticConvert) V(kTranspose)

// The collectives (property kCollective): several devices in general.
#define AXLE_HLO_COLLECTIVE_OPCODES(V)                                                        \
  V(kAllGather) V(kAllGatherDone) V(kAllGatherStart) V(kAllReduce) V(kAllReduceDone)          \
  V(kAllReduceStart) V(kAllToAll) V(kCollectiveBroadcast) V(kCollectivePermute)               \
  V(kCollectivePermuteDone) V(kCollectivePermuteStart) V(kRaggedAllToAll) V(kReduceScatter)
// clang-format on

namespace hlo_opcode_families_internal {

struct Row {
  int arity;
  int properties;
};
inline constexpr Row kRows[] = {
#define AXLE_OPCODE_ROW_(e, name, arity, props) {arity, props},
    AXLE_HLO_OPCODE_LIST(AXLE_OPCODE_ROW_)
#undef AXLE_OPCODE_ROW_
};

// Elementwise opcodes with attributes of their own, in no family list.
constexpr bool HasAttributes(HloOpcode op) {
  return op == HloOpcode::kConvert || op == HloOpcode::kReducePrecision ||
         op == HloOpcode::kCompare || op == HloOpcode::kStochasticConvert;
}

#define AXLE_OPCODE_IN_(e) || op == HloOpcode::e
constexpr bool InUnaryList(HloOpcode op) {
  return false AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_IN_);
}
constexpr bool InBinaryList(HloOpcode op) {
  return false AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_OPCODE_IN_);
}
constexpr bool InCollectiveList(HloOpcode op) {
  return false AXLE_HLO_COLLECTIVE_OPCODES(AXLE_OPCODE_IN_);
}
#undef AXLE_OPCODE_IN_

// Each elementwise list holds exactly the elementwise opcodes of its arity
// that have no attributes; the collective list, the opcodes with kCollective.
constexpr bool ListsMatchTable() {
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    auto op = static_cast<HloOpcode>(i);
    bool elementwise = (kRows[i].properties & kElementwise) != 0 && !HasAttributes(op);
    if (InUnaryList(op) != (elementwise && kRows[i].arity == 1)) return false;
    if (InBinaryList(op) != (elementwise && kRows[i].arity == 2)) return false;
    if (InCollectiveList(op) != ((kRows[i].properties & kCollective) != 0)) return false;
  }
  return true;
}
static_assert(ListsMatchTable(),
              "AXLE_HLO_{UNARY,BINARY}_ELEMENTWISE_OPCODES and AXLE_HLO_COLLECTIVE_OPCODES "
              "must match the opcode table's properties (see hlo_opcode_families.h)");

}  // namespace hlo_opcode_families_internal
}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_OPCODE_FAMILIES_H_
