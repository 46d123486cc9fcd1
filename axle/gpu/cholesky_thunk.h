//===- cholesky_thunk.h - cholesky on cuSOLVER potrf -----------------------===//
//
// A cholesky of f32, f64, c64 or c128 matrices [..., n, n] in the
// descending layout: a copied to the result, then cuSOLVER's potrf in
// place, one call per batch matrix. A row-major matrix is its column-major
// transpose (for a Hermitian a, its conjugate), so lower=true (a = L L^H,
// L row-major lower) is potrf of the upper triangle, and lower=false the
// lower. A kernel then finishes the result as the interpreter and XLA do:
// the other triangle zero (potrf leaves the input there), and a matrix
// that is not positive definite (potrf's info != 0) all NaN.
// CholeskyPlan is derived at compile time; the test executes it on the
// host (cholesky_thunk_test.cc); the finishing kernel's PTX is checked
// with ptxas.
//
// Scratch: potrf's info per matrix, then its workspace (n * n elements,
// more than potrf asks for; Execute checks potrf's own size against it).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CHOLESKY_THUNK_H_
#define AXLE_GPU_CHOLESKY_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

struct CholeskyPlan {
  bool potrf_lower = false;                       // cuSOLVER's triangle (column major)
  bool lower = true;                              // the HLO's (row major): the other one is zeroed
  int64_t n = 0, lda = 1, batch = 1, stride = 0;  // elements
  PrimitiveType type = F32;
  std::string ToString() const;
};

absl::StatusOr<CholeskyPlan> MakeCholeskyPlan(const HloInstruction& cholesky);

// values: a; the result.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeCholeskyThunk(const HloInstruction& cholesky,
                                                            GpuThunkValues values);

// The PTX of the finishing kernels (axle_cholesky_finish_b32, _b64).
const std::string& CholeskyFinishPtx();

}  // namespace axle::gpu

#endif  // AXLE_GPU_CHOLESKY_THUNK_H_
