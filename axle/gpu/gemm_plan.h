//===- gemm_plan.h - A dot as one (strided-batched) cuBLAS GEMM ------------===//
//
// MakeGemmPlan derives, at compile time and from the HLO alone, the
// parameters of the one column-major cuBLAS call that computes a kDot in
// its operands' and result's layouts:
//
//   for b < batch:  C_b = op(A_b) * op(B_b)     (m x n, inner size k)
//   X_b = X + b * stride_x,  op(X) = X or X^T,  X(i, j) = X[i + j * ldx]
//
// The dot's dimensions are grouped as batch, lhs free (M), contracting (K)
// and rhs free (N); each group collapses into one dimension when its dims
// are nested in memory in the same order in every array that has them
// (size-1 dims ignored). A result whose N dimension is the dense one (row
// major) is computed as its transpose, C^T = B^T A^T: swap_operands, with
// cuBLAS's A the dot's rhs. An operand whose rows are dense is read
// transposed. Where no such call exists (a group not collapsible, no dense
// dimension in a matrix, batch strides that are not uniform), MakeGemmPlan
// is Unimplemented and GemmSupports false: GpuDotCanonicalizer
// (dot_canonicalizer.h) first rewrites those dots with transposes.
//
// Types (lhs, rhs -> result; accumulation):
//   f32, f32 -> f32          f32, or tf32 when allowed (below)
//   f64, f64 -> f64          f64
//   f16, f16 -> f16 | f32    f32
//   bf16, bf16 -> bf16 | f32 f32
//   c64, c64 -> c64          f32 (or tf32 as f32);   c128, c128 -> c128   f64
//   s8, s8 -> s32            s32 (cuBLAS wants lda, ldb, ldc and the batch
//                            strides multiples of 4: else Unimplemented)
// Anything else is Unimplemented naming the dot.
//
// TF32: as XLA:GPU, f32 and c64 dots whose operand precisions are DEFAULT
// or HIGH (and no algorithm but dot_tf32_tf32_f32) accumulate with
// CUBLAS_COMPUTE_32F_FAST_TF32 (about 1e-3 relative error), HIGHEST in
// full f32; AXLE_GPU_TF32=0 forces full f32 (tf32.h).
//
// No CUDA here: the plan is data, checked on any machine by executing it on
// the host (gemm_plan_test.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GEMM_PLAN_H_
#define AXLE_GPU_GEMM_PLAN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

enum class GemmCompute { kF32, kTf32, kF64, kS32 };

struct GemmPlan {
  // cuBLAS's A is the dot's rhs and B its lhs (the result is computed as
  // its transpose).
  bool swap_operands = false;
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t lda = 1, ldb = 1, ldc = 1;
  // Elements between consecutive batch matrices (0 when batch is 1).
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  PrimitiveType a_type = F32, b_type = F32, c_type = F32;
  GemmCompute compute = GemmCompute::kF32;

  // Elements of the result (batch * m * n) and of each operand buffer.
  int64_t output_elements() const { return batch * m * n; }
  std::string ToString() const;
};

// The plan of `dot` (a kDot; arrays without a layout count as descending).
// `allow_tf32`: Tf32Enabled() (tf32.h), or a test's choice.
absl::StatusOr<GemmPlan> MakeGemmPlan(const HloInstruction& dot, bool allow_tf32);
absl::StatusOr<GemmPlan> MakeGemmPlan(const HloInstruction& dot);

// Whether MakeGemmPlan takes `dot`.
bool GemmSupports(const HloInstruction& dot);
// Whether its element types are ones a GEMM takes (whatever the layouts):
// the canonicalizer's test for dots it should rewrite.
bool GemmSupportsTypes(const HloInstruction& dot);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GEMM_PLAN_H_
