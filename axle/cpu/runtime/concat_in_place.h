//===- concat_in_place.h - Convolutions that write their concat slices ----===//
//
// A concatenation of convolutions (an inception or fire module's branches,
// concatenated along the features) would copy every branch's result into
// its own. Here each branch's convolution writes its result straight into
// its slice of the concatenation's buffer instead (XLA:CPU's concatenate
// in place, by its buffer assignment), and the concatenation gets no
// kernel: one pass over the branches' outputs fewer, and one thunk fewer.
//
// The rule, for a loop fusion C: C is one concatenate of its parameters,
// each read once, and is not its computation's root; every operand P of C
// is a convolution (or convolution epilogue fusion, emitted by
// EmitConvolutionThunk) that C alone reads, once, whose plan oneDNN takes
// (conv::DnnlTakes), in f32, without a residual addend (whose sum post-op
// reads and writes the output in place). Then
//   - ConcatFilledByOperands(C) is true: the program builder emits no
//     kernel for C;
//   - ConcatSliceOf(P) says where P's slice lies (the element offset and
//     strides of ConvPlan::output_strides), and EmitConvolutionThunk gives
//     P's thunk C's temporary as its output (ProgramBuilder::SharedResult).
// Both read the HLO alone, so they agree. A concatenation with any other
// operand keeps its kernel, and its convolutions their own outputs.
//
// The thunk's side (convolution_thunk.cc): oneDNN's primitive writes the
// slice's pixels dense (its direct kernels take no strided output) and
// copies them in, each row piece its own rows right after computing them;
// a 1x1 convolution runs on the small-dot kernel instead, which stores
// its results at the slice's strides (convolution_thunk_pointwise.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONCAT_IN_PLACE_H_
#define AXLE_CPU_RUNTIME_CONCAT_IN_PLACE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

// Off when the environment turns AXLE_CPU_CONCAT_IN_PLACE off (read at each
// compile), for A/B runs of one binary: then every concatenation keeps its
// kernel.
bool ConcatInPlaceEnabled();

// Whether `instruction` is a concatenation its operands fill (see above).
bool ConcatFilledByOperands(const HloInstruction& instruction);

// Where an operand of such a concatenation writes its result.
struct ConcatSlice {
  const HloInstruction* concat = nullptr;
  // The slice's first element in the concatenation's result, and the
  // element strides of that result (row-major), per dim.
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

// The slice `producer` writes, when it is an operand of a concatenation
// its operands fill; nullopt otherwise.
std::optional<ConcatSlice> ConcatSliceOf(const HloInstruction& producer);

// EmitConvolutionThunk's part for such an operand: its oneDNN convolution
// thunk writing into `slice` of the concatenation's temporary.
absl::Status EmitConvolutionIntoConcat(const HloInstruction& instruction, const ConcatSlice& slice,
                                       ProgramBuilder& builder);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONCAT_IN_PLACE_H_
