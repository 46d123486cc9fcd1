//===- dot_loop_emitter.h - A dot (and its epilogue) as an emitted loop kernel ===//
//
// The dots oneDNN does not run (f64, f16, f8, integers, complex, pred, mixed
// types) become one LLVM function with the loop kernel's signature
// (loop_kernel_emitter.h):
//
//   void dot(void** buffers, int64_t begin, int64_t end);
//
// buffers = lhs, rhs, [bias], output. The output is [rows, columns] dense:
// rows are the batch dims then lhs's free dims, columns rhs's free dims (the
// HLO dot's output order, row-major). [begin, end) is a range of rows, so a
// thunk splits the work across threads as for a loop kernel. Operands are
// read in place at their element strides (any batch / contracting dims,
// broadcasts as stride 0): no gather copies.
//
// The loops: columns outermost, in chunks of 512 bytes of sums per row (64
// f64, 128 f32 or s32 columns), so that the rhs panel of a chunk stays in
// cache while every row of [begin, end) reads it; inside, blocks of 8 rows
// of one batch (4 when a batch has fewer; single rows where a block does
// not fit) whose sums live on the stack. Per contraction step the block's
// lhs elements are loaded once and the innermost loop runs over the chunk's
// columns (contiguous in the output, at the rhs's column stride) and is
// vectorized by LLVM, each rhs element loaded once for the block's rows.
//
// Semantics are the interpreter's (axle/eval/dot.cc): operands converted to
// the output type first; sums in f32 for f16/bf16/f8/f4 (rounded once), in
// the type itself for f32/f64/complex, wrapping in the output's width for
// integers, or-of-ands for pred; every sum in contraction order with
// separate multiplies and adds (no reassociation, no FMA), so float results
// equal the interpreter's bit for bit. The epilogue (the fusion's ops above
// the dot: a bias add, an activation) is emitted by the elemental emitter
// on each result, as a loop kernel computes those ops.
//
// This header is LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_DOT_LOOP_EMITTER_H_
#define AXLE_CPU_DOT_LOOP_EMITTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

struct DotLoopSpec {
  // One loop dimension: its size and the element strides at which it moves
  // through lhs, rhs and the bias (0 where an operand does not vary).
  struct Dim {
    int64_t size = 1;
    int64_t lhs_stride = 0;
    int64_t rhs_stride = 0;
    int64_t bias_stride = 0;
  };
  // One op of the epilogue, bottom up: an elementwise instruction of the
  // output's shape whose operand `chain_operand` is the value below it (the
  // dot, or the op before). Its other operands are the bias (operand
  // `bias_operand`, read from the bias buffer) or splat constants
  // (`constants[i]`, a scalar of operand i's element type).
  struct EpilogueOp {
    const HloInstruction* instruction = nullptr;
    int64_t chain_operand = 0;
    int64_t bias_operand = -1;
    // Per operand: the number of the value below it that it reads (0: the
    // dot's sum, j: epilogue op j - 1), or -1 (the bias or a constant). Empty:
    // only `chain_operand` reads the value just below.
    std::vector<int64_t> operand_values;
    std::vector<std::shared_ptr<const Literal>> constants;
  };

  PrimitiveType lhs_type = F32, rhs_type = F32, output_type = F32;
  PrimitiveType bias_type = F32;
  // Output rows: `batch` (moves lhs, rhs and bias) then `m` (lhs and bias);
  // columns: `n` (rhs and bias); contracted: `k` (lhs and rhs). Outermost
  // first in each list.
  std::vector<Dim> batch, m, n, k;
  bool has_bias = false;
  // PACKED_NIBBLE precision (integers): each product is low nibble x low
  // nibble + high nibble x high nibble, as the interpreter computes it.
  bool packed_nibble = false;
  std::vector<EpilogueOp> epilogue;  // must stay alive until AddDotLoopKernel returns

  int64_t rows() const;
};

// Unimplemented (naming `instruction`) when the emitter cannot compute
// `spec` (an element type or an epilogue op it does not handle).
absl::Status CheckDotLoopSpec(const DotLoopSpec& spec, const HloInstruction& instruction);

// Emits the kernel for `spec` into `module` as the function `name`; its
// function is set when the module compiles. outer_size() is spec.rows().
absl::StatusOr<std::unique_ptr<CompiledKernel>> AddDotLoopKernel(LoopKernelModule& module,
                                                                 const DotLoopSpec& spec,
                                                                 absl::string_view name);

}  // namespace axle::cpu

#endif  // AXLE_CPU_DOT_LOOP_EMITTER_H_
