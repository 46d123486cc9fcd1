//===- convolution_loop_emitter.h - A convolution as an emitted loop kernel ===//
//
// The convolutions oneDNN does not run (f64, f16, f8, integers, complex,
// pred, mixed types, groups of both kinds, no spatial dims or more than 3)
// become one LLVM function with the loop kernel's signature
// (loop_kernel_emitter.h):
//
//   void convolution(void** buffers, int64_t begin, int64_t end);
//
// buffers = lhs, rhs, the epilogue's side operands (scale, bias), output;
// [begin, end) is a range of the output's outermost (HLO) dimension, so a
// thunk splits the work across threads as for a loop kernel. When the
// output's innermost dim is its feature dim and there are no groups (NHWC
// and the like), the output features are computed in chunks whose sums live
// on the stack: per kernel position and input feature the lhs element is
// loaded once and the loop over the chunk's features is vectorized.
// Otherwise one element at a time (scalar code). Each output
// element is computed as the interpreter does (axle/eval/convolution.cc):
// every kernel spatial position whose input position lands inside the input
// (padding and base-dilation holes skipped), then the input features of the
// element's group, operands read in place at their strides and converted to
// the output type; sums in f32 for f32 and the narrow floats (rounded once),
// f64, complex, 64 bits for integers (saturated to narrower results, as
// XLA's evaluator does), or-of-ands for pred; in the interpreter's order,
// no FMA: float results equal its bit for bit. The epilogue (scale
// multiply, bias add, activation) is the fusion's own ops, emitted by the
// elemental emitter.
//
// This header is LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_CONVOLUTION_LOOP_EMITTER_H_
#define AXLE_CPU_CONVOLUTION_LOOP_EMITTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

struct ConvLoopSpec {
  PrimitiveType lhs_type = F32, rhs_type = F32, output_type = F32;
  // Canonical order: lhs [batch, feature, spatial...], rhs [output feature,
  // input feature, spatial...], output [batch, feature, spatial...]; strides
  // in elements.
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  std::vector<int64_t> lhs_strides, rhs_strides;
  // The output buffer is row-major over `output_shape_dims` (HLO order);
  // canonical output dim c is HLO dim out_order[c].
  std::vector<int64_t> output_shape_dims;
  std::vector<int64_t> out_order;
  struct Window {
    int64_t stride = 1, padding_low = 0, window_dilation = 1, base_dilation = 1;
    bool reversal = false;
  };
  std::vector<Window> window;  // per spatial dim
  int64_t feature_groups = 1, batch_groups = 1;

  // An epilogue operand read from a buffer (after lhs and rhs, in order):
  // its type and its strides over the output's HLO dims.
  struct Side {
    PrimitiveType type = F32;
    std::vector<int64_t> strides;
  };
  std::vector<Side> sides;
  // One op of the epilogue, bottom up (as DotLoopSpec::EpilogueOp): operand
  // `chain_operand` is the value below; operand i is side `side[i]` when
  // that is >= 0, else the splat constant `constants[i]`.
  struct EpilogueOp {
    const HloInstruction* instruction = nullptr;
    int64_t chain_operand = 0;
    std::vector<int64_t> side;
    std::vector<std::shared_ptr<const Literal>> constants;
  };
  std::vector<EpilogueOp> epilogue;  // must stay alive until AddConvLoopKernel returns

  // Rows of the kernel: the output's outermost dimension.
  int64_t rows() const { return output_shape_dims.empty() ? 1 : output_shape_dims[0]; }
};

// Emits the kernel for `spec` into `module` as the function `name`
// (Unimplemented naming `instruction` for an element type the emitter does
// not handle); its function is set when the module compiles.
absl::StatusOr<std::unique_ptr<CompiledKernel>> AddConvLoopKernel(LoopKernelModule& module,
                                                                  const ConvLoopSpec& spec,
                                                                  const HloInstruction& instruction,
                                                                  absl::string_view name);

}  // namespace axle::cpu

#endif  // AXLE_CPU_CONVOLUTION_LOOP_EMITTER_H_
