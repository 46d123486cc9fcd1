//===- plan_serialization.h - Dot and convolution plans as bytes -----------===//
//
// The plans the dot and convolution thunks are built from (dot_plan.h,
// convolution_plan.h), written and read through thunk_serialization.h. What
// refers to HLO (the epilogue chain, the add of the bias or addend) is
// compile-time only: it is not written, and a read plan has none.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_PLAN_SERIALIZATION_H_
#define AXLE_CPU_RUNTIME_PLAN_SERIALIZATION_H_

#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {

void WriteDotPlan(const dot::DotPlan& plan, ThunkWriter& writer);
dot::DotPlan ReadDotPlan(ThunkReader& reader);

// Whether every operand `plan` reads is a literal or one of the first
// `operands` thunk operands (what a loader checks before it builds).
bool DotPlanOperandsIn(const dot::DotPlan& plan, size_t operands);
bool ConvPlanOperandsIn(const conv::ConvPlan& plan, size_t operands);

void WriteConvOperand(const conv::Operand& operand, ThunkWriter& writer);
conv::Operand ReadConvOperand(ThunkReader& reader);

void WriteConvPlan(const conv::ConvPlan& plan, ThunkWriter& writer);
conv::ConvPlan ReadConvPlan(ThunkReader& reader);

void WriteActivation(Activation activation, ThunkWriter& writer);
Activation ReadActivation(ThunkReader& reader);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_PLAN_SERIALIZATION_H_
