//===- epilogue_plan.h - The epilogue of a dot or convolution fusion -------===//
//
// What dot-epilogue-fusion put above a dot or convolution, read from the
// kOutput fusion's root down, as both thunks need it (dot_plan.h,
// convolution_plan.h): an activation (relu as max with 0, logistic, tanh,
// exp, clamp with constant bounds, or max then min with constants as a
// clamp; above a dot, GELU's tanh approximation), a bias add and, above a convolution only, a scale
// multiply and a second add (an addend of the output's shape: a residual connection). No oneDNN
// here.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_EPILOGUE_PLAN_H_
#define AXLE_CPU_RUNTIME_EPILOGUE_PLAN_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/epilogue_activation.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

struct EpiloguePlan {
  // The dot or convolution: the fusion's, or the instruction itself.
  const HloInstruction* core = nullptr;
  Activation activation = Activation::kNone;
  double low = 0, high = 0;  // clamp bounds
  // The other operand of the bias add / of the scale multiply, or null.
  const HloInstruction* bias = nullptr;
  const HloInstruction* bias_add = nullptr;  // the add of `bias`
  const HloInstruction* scale = nullptr;
  // Convolutions only: the add of a residual (or null), and its other
  // operand: the add above the bias add, or a lone add of a value of the
  // output's size that is not a broadcast.
  const HloInstruction* addend_add = nullptr;
  const HloInstruction* addend = nullptr;
  // The fusion's ops above the core, top down, each with the number of its
  // operand that is the value below it (the emitted loops apply them; a
  // GELU's ops read values below them at several operands: each is listed
  // before the ops it reads, with the first such operand's number).
  std::vector<std::pair<const HloInstruction*, int64_t>> chain;
};

// The epilogue of `instruction`: a `core_opcode` (kDot or kConvolution), or
// a kOutput fusion rooted at its epilogue. `constants[i]` is the literal of
// the fusion's operand i when it is a constant (activation bounds must be).
// Unimplemented, naming the instruction, for any other fusion.
absl::StatusOr<EpiloguePlan> PlanEpilogue(const HloInstruction& instruction, HloOpcode core_opcode,
                                          const std::vector<const Literal*>& constants);

class LoopKernelModule;
class ProgramBuilder;
class Thunk;

// How a dot or a convolution (plain, or a fusion with its epilogue) makes
// its thunk (CreateDotThunk, CreateConvolutionThunk): from its operands'
// values, their literals where constant (else null), its result's value,
// the loop kernels and a kernel name.
using EpilogueThunkFactory = absl::StatusOr<std::unique_ptr<Thunk>> (*)(
    const HloInstruction& instruction, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name);
// Appends to `builder` the thunk `create` makes for `instruction` (its
// result a new temporary; a loop kernel it needs named "<kernel_prefix>_<n>").
absl::Status EmitEpilogueThunk(const HloInstruction& instruction, ProgramBuilder& builder,
                               EpilogueThunkFactory create, absl::string_view kernel_prefix);

// Moves what a DotPlan and a ConvPlan take alike from `epilogue`: the
// activation, its clamp bounds and the chain of ops.
template <typename Plan>
void TakeActivationAndChain(EpiloguePlan& epilogue, Plan& plan) {
  plan.activation = epilogue.activation;
  plan.low = epilogue.low;
  plan.high = epilogue.high;
  plan.chain = std::move(epilogue.chain);
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_PLAN_H_
