//===- solver_thunk.h - jaxlib's LAPACK-style targets on cuSOLVER ----------===//
//
// The custom calls JAX emits for its linear algebra, run on cuSOLVER's
// dense API: jaxlib's GPU targets (jaxlib/gpu/solver_kernels_ffi.cc) and,
// for a program lowered for the CPU, its LAPACK ones (the same operands and
// results; potrf and trsm are HLO ops instead, lapack_to_hlo.h):
//
//   cusolver_getrf_ffi, lapack_?getrf_ffi   a -> (lu, ipiv s32, info s32)
//   cusolver_geqrf_ffi, lapack_?geqrf_ffi   a -> (qr, tau)
//   cusolver_orgqr_ffi, lapack_{s,d}orgqr_ffi, lapack_{c,z}ungqr_ffi
//                                           (a, tau) -> q
//   cusolver_syevd_ffi (lower, algorithm), lapack_{s,d}syevd_ffi,
//   lapack_{c,z}heevd_ffi (uplo, mode)      a -> (v, w real, info s32)
//   cusolver_gesvd_ffi (full_matrices, compute_uv, transposed = false),
//   lapack_?gesdd_ffi (mode A, S or N)      a -> (a', s real, u, vt, info s32)
//   cusolver_gesvdj_ffi (full_matrices, compute_uv)
//                                           a -> (a', s real, u, v, info s32)
//
// a is [batch..., m, n] with each matrix column-major (jaxlib's layouts:
// minor-to-major {r-2, r-1, r-3, ..., 0}), as are the matrix results; ipiv
// [batch..., min(m, n)] holds LAPACK's 1-based pivots, info one s32 per
// matrix (0, or LAPACK's positive code). a is copied to the first result
// (unless they share memory), then one cuSOLVER call per matrix works in
// place there: getrf, geqrf, orgqr/ungqr (k = tau's length), syevd/heevd
// (jobz from mode / vectors always for cusolver_syevd_ffi, whose algorithm
// choice, Jacobi or QR, gives the same decomposition), gesvd (cuSOLVER's
// gesvd needs m >= n: wider matrices are refused, as jaxlib's GPU gesvd
// does; gesdd's divide and conquer becomes gesvd, the same decomposition),
// gesvdj (Jacobi, any m and n; V itself, u and v [..., m, m or min] and
// [..., n, n or min] written whether or not compute_uv, as jaxlib
// allocates them).
// With mode N the unreferenced u and vt are zeroed, as on the CPU.
//
// Anything else under these names (types other than f32, f64, c64, c128,
// other layouts or attributes, shapes that disagree) is Unimplemented
// naming cuSOLVER, the target and the instruction. Scratch: info where the
// target has none, gesvd's real work array, then a workspace planned at
// compile time from the matrices' sizes (IsSolverCall has no device);
// Execute checks cuSOLVER's own size against it.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_SOLVER_THUNK_H_
#define AXLE_GPU_SOLVER_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {

enum class SolverRoutine { kGetrf, kGeqrf, kOrgqr, kSyevd, kGesvd, kGesvdj };

struct SolverPlan {
  SolverRoutine routine = SolverRoutine::kGetrf;
  PrimitiveType type = F32;  // a's
  // Matrices, each m x n column-major (lda = m) and `a_stride` elements
  // apart; orgqr's k reflectors.
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool lower = true;    // syevd's triangle (column major)
  bool vectors = true;  // syevd's eigenvectors, gesvd's u and vt
  char job = 'S';       // gesvd: 'A' (u m x m, vt n x n), 'S' (m x k, k x n), 'N'
  int64_t u_cols = 0;   // gesvd: u is m x u_cols, vt vt_rows x n
  int64_t vt_rows = 0;
  int64_t workspace_elements = 0;  // planned (of a's type)

  std::string ToString() const;
};

// Whether `call` names one of the targets above (its shapes and attributes
// are checked by MakeSolverPlan): what the CUDA compiler computes without a
// registered target.
bool IsSolverCall(const HloCustomCallInstruction& call);

absl::StatusOr<SolverPlan> MakeSolverPlan(const HloCustomCallInstruction& call);

// values: the operands' (a; orgqr: a, tau) then the results' leaves.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSolverThunk(const HloCustomCallInstruction& call,
                                                          GpuThunkValues values);

}  // namespace axle::gpu

#endif  // AXLE_GPU_SOLVER_THUNK_H_
