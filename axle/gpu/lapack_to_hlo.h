//===- lapack_to_hlo.h - jaxlib's CPU LAPACK calls as the HLO ops they are -===//
//
// A JAX program lowered for the CPU calls jaxlib's LAPACK targets through
// the typed FFI (`lapack_spotrf_ffi`, `lapack_strsm_ffi`, ...); on CUDA no
// such target exists (XLA:GPU programs call cuSOLVER targets instead). Two
// of them compute what an HLO op of XLA's defines, which the CUDA backend
// runs on cuSOLVER and cuBLAS (cholesky_thunk.h, triangular_solve_thunk.h),
// so this pass rewrites them into it:
//
//   lapack_{s,d,c,z}potrf_ffi(a), uplo   -> (cholesky(a), lower = uplo == 'L',
//                                            info)
//   lapack_{s,d,c,z}trsm_ffi(a, b), side, uplo, trans_x, diag
//                                        -> triangular-solve(a, b) with
//                                           left_side, lower, transpose_a
//                                           (N, T, C: none, transpose,
//                                           adjoint), unit_diagonal
//
// Both take the matrices' logical dimensions (LAPACK's column-major view of
// the operands' {0,1}-major layout is their logical order). potrf's info
// (0 where the matrix factors) becomes 1 where the factor holds a NaN: the
// CUDA cholesky NaN-fills what potrf rejects (as the interpreter), and JAX
// only tests info == 0. The triangle potrf leaves alone holds zeros, where
// LAPACK leaves the input (JAX masks it). Calls with other attributes or
// shapes are left alone (their target is then missing by name).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_LAPACK_TO_HLO_H_
#define AXLE_GPU_LAPACK_TO_HLO_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

// Whether the pass rewrites `call` (its target and attributes; its shapes
// are checked when it runs): what the CUDA compiler tells
// CheckModuleForPlatform it computes without a registered target.
bool LapackCallIsAnHloOp(const HloCustomCallInstruction& call);

class GpuLapackToHlo : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-lapack-to-hlo"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_LAPACK_TO_HLO_H_
