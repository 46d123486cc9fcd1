//===- kernels.h - The interpreter's heavy kernels -------------------------===//
//
// Free functions that evaluate the ops with big index arithmetic (dot,
// convolution, gather/scatter, fft, linear algebra, batch norm,
// select-and-scatter) on host literals. HloEvaluator (hlo_evaluator.h)
// dispatches to them; each takes the instruction (for its attributes and
// result shape) and the already evaluated operands, in operand order.
//
// Contract: operands have the shapes the instruction's operands have (the
// evaluator has checked nothing else); a kernel returns a literal of
// instruction.shape(), or an error status (InvalidArgument for malformed
// attributes, Unimplemented for an element type it does not support). A
// kernel never CHECK-fails on user input.
//
// Ops that call a computation (scatter's combiner, select-and-scatter's
// select and scatter) receive a ComputationRunner: it evaluates a
// computation on argument literals (scalars here) and returns its result.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_KERNELS_H_
#define AXLE_EVAL_KERNELS_H_

#include <functional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

// Evaluates `computation` on `args` (one literal per parameter).
using ComputationRunner = std::function<absl::StatusOr<Literal>(
    const HloComputation& computation, absl::Span<const Literal* const> args)>;

// dot(lhs, rhs).
absl::StatusOr<Literal> EvaluateDot(const HloDotInstruction& dot, const Literal& lhs,
                                    const Literal& rhs);
// ragged-dot(lhs, rhs, group_sizes).
absl::StatusOr<Literal> EvaluateRaggedDot(const HloDotInstruction& dot, const Literal& lhs,
                                          const Literal& rhs, const Literal& group_sizes);
// scaled-dot(lhs, rhs, lhs_scale, rhs_scale).
absl::StatusOr<Literal> EvaluateScaledDot(const HloDotInstruction& dot, const Literal& lhs,
                                          const Literal& rhs, const Literal& lhs_scale,
                                          const Literal& rhs_scale);
// convolution(lhs, rhs).
absl::StatusOr<Literal> EvaluateConvolution(const HloConvolutionInstruction& conv,
                                            const Literal& lhs, const Literal& rhs);
// gather(operand, start_indices); out-of-range starts are clamped.
absl::StatusOr<Literal> EvaluateGather(const HloGatherInstruction& gather, const Literal& operand,
                                       const Literal& start_indices);
// scatter(operands..., scatter_indices, updates...); the combiner is
// scatter.to_apply(), run through `run`. Out-of-bounds updates are skipped.
// A single-operand scatter returns the array; a variadic one a tuple.
absl::StatusOr<Literal> EvaluateScatter(const HloScatterInstruction& scatter,
                                        absl::Span<const Literal* const> operands,
                                        const Literal& scatter_indices,
                                        absl::Span<const Literal* const> updates,
                                        const ComputationRunner& run);
// select-and-scatter(operand, source, init_value); select() and scatter()
// are run through `run`.
absl::StatusOr<Literal> EvaluateSelectAndScatter(const HloWindowInstruction& select_and_scatter,
                                                 const Literal& operand, const Literal& source,
                                                 const Literal& init_value,
                                                 const ComputationRunner& run);
// fft(operand).
absl::StatusOr<Literal> EvaluateFft(const HloFftInstruction& fft, const Literal& operand);
// cholesky(a).
absl::StatusOr<Literal> EvaluateCholesky(const HloCholeskyInstruction& cholesky, const Literal& a);
// triangular-solve(a, b).
absl::StatusOr<Literal> EvaluateTriangularSolve(const HloTriangularSolveInstruction& solve,
                                                const Literal& a, const Literal& b);
// batch-norm-training(operand, scale, offset) -> (output, mean, variance).
absl::StatusOr<Literal> EvaluateBatchNormTraining(const HloBatchNormInstruction& bn,
                                                  const Literal& operand, const Literal& scale,
                                                  const Literal& offset);
// batch-norm-inference(operand, scale, offset, mean, variance).
absl::StatusOr<Literal> EvaluateBatchNormInference(const HloBatchNormInstruction& bn,
                                                   const Literal& operand, const Literal& scale,
                                                   const Literal& offset, const Literal& mean,
                                                   const Literal& variance);
// batch-norm-grad(operand, scale, mean, variance, grad_output)
//   -> (grad_operand, grad_scale, grad_offset).
absl::StatusOr<Literal> EvaluateBatchNormGrad(const HloBatchNormInstruction& bn,
                                              const Literal& operand, const Literal& scale,
                                              const Literal& mean, const Literal& variance,
                                              const Literal& grad_output);

}  // namespace axle

#endif  // AXLE_EVAL_KERNELS_H_
