//===- triangular_solve_thunk.h - triangular-solve on cuBLAS trsm ----------===//
//
// A triangular-solve (op(a) x = b when left_side, x op(a) = b otherwise;
// op: none, transpose or adjoint; only a's `lower` or upper triangle read;
// unit_diagonal: its diagonal taken as ones) of f32, f64, c64 or c128 in
// row-major layouts, as cuBLAS's column-major trsm: a row-major matrix is
// its column-major transpose, so x^T op(a)^T = b^T is the same solve on
// the other side of the transposed a, with the other triangle and the same
// op. The result is b copied to the output, then solved in place: one
// trsm, or for a batch one trsmBatched over arrays of the matrices'
// pointers that a small PTX kernel writes into the scratch memory. TriangularSolvePlan is derived
// at compile time; the test executes it on the host (triangular_solve_thunk_test.cc).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_TRIANGULAR_SOLVE_THUNK_H_
#define AXLE_GPU_TRIANGULAR_SOLVE_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// The parameters of cublas<t>trsm, column major, B overwritten with X:
//   left:  op(A) X = B (A m x m);   right: X op(A) = B (A n x n);  B m x n.
struct TriangularSolvePlan {
  bool left = true;
  bool lower = true;
  char op = 'N';  // 'N', 'T' or 'C' (conjugate transpose)
  bool unit_diagonal = false;
  int64_t m = 0, n = 0, lda = 1, ldb = 1;
  int64_t batch = 1, stride_a = 0, stride_b = 0;  // elements
  PrimitiveType type = F32;
  std::string ToString() const;
};

// Unimplemented naming the instruction for other types or layouts.
absl::StatusOr<TriangularSolvePlan> MakeTriangularSolvePlan(const HloInstruction& solve);

// values: a, b; the result.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeTriangularSolveThunk(const HloInstruction& solve,
                                                                   GpuThunkValues values);

// The PTX of the kernel that writes the batch's pointers.
const char* TriangularSolveBatchPointersPtx();

}  // namespace axle::gpu

#endif  // AXLE_GPU_TRIANGULAR_SOLVE_THUNK_H_
