//===- convolution_thunk.h - convolution (and convolution + epilogue) ------===//
//
// A convolution thunk runs an HLO `convolution` with all of XLA's
// parameters (dim_labels in any order, window size, stride, padding
// including negative, lhs and rhs dilation, window reversal,
// feature_group_count, batch_group_count, any number of spatial dims), or a
// kOutput fusion from `dot-epilogue-fusion` (convolution, then optionally a
// scale multiply, a bias add, and relu / logistic / tanh / exp / clamp).
//
// f32 x f32 -> f32 and bf16 x bf16 -> bf16 / f32 with 1 to 3 spatial dims
// run a oneDNN forward-inference convolution primitive created at compile
// time:
//   - XLA's dimension numbers become strides of oneDNN memory descriptors
//     ([N, C, spatial...] for input and output, [G, O/G, I, spatial...] for
//     the kernel), so the input and output are read and written in place;
//     negative padding crops the input view. If the primitive oneDNN picks
//     for those layouts is a fallback (reference, or im2col + gemm as for
//     NCHW f32), the thunk asks for its preferred layouts instead and
//     reorders input and output around the call.
//   - lhs dilation and batch groups are copied at run time into a dense
//     channels-last input (holes as zeros; batch group g becomes feature
//     group g), which oneDNN then convolves as a grouped convolution.
//   - rhs dilation is oneDNN dilation (minus one), feature groups oneDNN
//     groups. The kernel is reordered into the primitive's preferred
//     layout: once at compile time when it is a constant, else every run.
//   - An f32 3x3 convolution at stride 1 (no dilation, no groups) runs on
//     oneDNN's Winograd kernels when oneDNN takes it (WinogradCandidate in
//     convolution_thunk_internal.h; AXLE_CPU_WINOGRAD=0 turns them off),
//     its input, output and addend reordered to and from their blocked
//     layout: split over the output features where the weights hold at
//     least 4x the input's elements (each piece reordering the whole input
//     and its features of the output; row pieces would each read all of
//     the transformed weights), else into rows as below (each piece
//     reordering its own rows), or whole on oneDNN's team where the rows
//     split unevenly.
//   - An f32 weight gradient (a window of more elements than the output
//     has pixels, as JAX's dim_labels=f01b_i01o->01bf: the minibatch is
//     the input feature) runs as oneDNN's backward-weights primitive on the
//     relabeled problem, input and output gradient read in place, one
//     primitive per range of the minibatch on the intra-op pool, the
//     partial sums added, the epilogue after (convolution_thunk_weight_grad.cc).
//   - A 1x1 f32 convolution at stride 1 with constant weights that writes
//     its slice of a concatenation (concat_in_place.h), batch 1, at most
//     640 input features, its input and the slice channels-last with
//     evenly strided pixels, runs as a product over its pixels on the small-dot kernel
//     (small_dot.h; convolution_thunk_pointwise.cc): the weights (a per-feature constant scale
//     folded in) packed once, bias and activation in its tiles, one range of pixels per thread,
//     each tile stored at the slice's pixel stride, where oneDNN would compute the pixels dense and
//     copy them in.
//   - The epilogue runs as post-ops (binary mul and add, eltwise); with
//     a bf16 result it runs after the primitive, rounding after each step as
//     the HLO does.
//   - A small batch-1 convolution with constant weights, read and written in place
//     with its rows (outermost spatial dim) outermost, as channels-last is,
//     runs as one primitive per thread of the intra-op pool, each over a
//     range of output rows (conv_row_split.h), on a team of one: the pool's
//     workers spin between such convolutions where oneDNN's OpenMP workers
//     sleep and are woken twice per primitive (omp_team.h). Rows that divide
//     unevenly between the threads (7 on 2: 4 + 3) split over the output
//     features instead, each piece over every pixel into its own dense
//     buffer, copied into the output. An input that is not channels-last
//     (an NCHW image into the first convolution) is gathered channels-last
//     by each piece, its own rows only, instead of reordered whole.
// Every other element type, rank and anything oneDNN declines runs a
// kernel emitted into the program's LLVM module (convolution_loop_emitter.h:
// operands read in place, the interpreter's sums and rounding, integer
// results narrower than 64 bits saturated, the epilogue fused), split over
// the output's outermost dimension across the intra-op pool.
//
// Thread-safe: each run makes its own memory objects and scratch (and its
// stream; the pieces use their thread's own, made once).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_H_
#define AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

// `instruction` is a convolution or a kOutput fusion rooted at a
// convolution epilogue. `operand_values[i]` is the value of its operand i,
// `constants[i]` that operand's literal when it is a constant (else null;
// the thunk copies what it keeps). A convolution oneDNN does not run
// becomes the kernel `kernel_name` in `kernels` (compiled with the program's
// loop kernels).
absl::StatusOr<std::unique_ptr<Thunk>> CreateConvolutionThunk(
    const HloInstruction& instruction, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name);

// How a thunk from CreateConvolutionThunk runs: "onednn", "onednn-rows" or
// "onednn-features" (split into rows or output features across the intra-op
// pool), "onednn-winograd", "onednn-winograd-rows" or
// "onednn-winograd-features" (oneDNN's Winograd kernels, whole or split
// into rows or output features),
// "onednn-weight-grad" (oneDNN's backward-weights primitive),
// "onednn-backward-data" (an lhs-dilated convolution on oneDNN's
// backward-data primitive),
// "small-dot-pointwise" (a 1x1 convolution into a concatenation's slice on
// the small-dot kernel),
// "onednn-reference" (oneDNN's slow reference implementation) or "loop"
// (for tests).
absl::StatusOr<std::string> ConvolutionThunkKind(const Thunk& thunk);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONVOLUTION_THUNK_H_
