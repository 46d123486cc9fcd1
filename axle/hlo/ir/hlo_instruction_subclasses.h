//===- hlo_instruction_subclasses.h - Every subclass of hlo_instructions.h -===//
//
// One list of the instruction subclasses that carry attributes, for the
// code that must visit each of them: HloInstruction::Create's guard against
// opcodes that need a subclass, and the structural hash and equality. A new
// subclass is added here once.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_INSTRUCTION_SUBCLASSES_H_
#define AXLE_HLO_IR_HLO_INSTRUCTION_SUBCLASSES_H_

#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

template <typename... T>
struct HloClassList {};

using HloInstructionSubclasses = HloClassList<
    HloParameterInstruction, HloConstantInstruction, HloGetTupleElementInstruction,
    HloIotaInstruction, HloDimensionsInstruction, HloSortInstruction, HloReshapeInstruction,
    HloSliceInstruction, HloDynamicSliceInstruction, HloPadInstruction, HloCompareInstruction,
    HloDotInstruction, HloConvolutionInstruction, HloWindowInstruction, HloGatherInstruction,
    HloScatterInstruction, HloFftInstruction, HloRngInstruction, HloRngBitGeneratorInstruction,
    HloTriangularSolveInstruction, HloCholeskyInstruction, HloReducePrecisionInstruction,
    HloBatchNormInstruction, HloCustomCallInstruction, HloFusionInstruction,
    HloCollectiveInstruction, HloSendRecvInstruction, HloFeedInstruction, HloTopKInstruction,
    HloScanInstruction, HloAsyncInstruction, HloCopyStartInstruction>;

// Whether `instruction` is of one of the subclasses `list` names.
template <typename... T>
bool IsOfAnyHloSubclass(const HloInstruction* instruction, HloClassList<T...> /*list*/) {
  return (T::ClassOf(instruction) || ...);
}

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_INSTRUCTION_SUBCLASSES_H_
