//===- lu_pivots_thunk.h - jaxlib's cu_lu_pivots_to_permutation ------------===//
//
// JAX's LU on a GPU (jax.lax.linalg.lu, and so solve, inv, det) follows
// cusolver_getrf_ffi (solver_thunk.h) with jaxlib's
// `cu_lu_pivots_to_permutation`: s32 pivots [batch..., k] (0-based row
// swaps, applied in order) -> s32 permutation [batch..., n], n the result's
// last dimension (the `permutation_size` attribute where given, which must
// agree), k <= n: the identity with pivots[i] swapped into row i, a pivot
// outside [0, n) skipped, as jaxlib's kernel does. One thread per batch
// row of a hand-written PTX kernel (ptx_text.h); row-major operand and
// result. Anything else is Unimplemented naming CUDA, the target and the
// instruction.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_LU_PIVOTS_THUNK_H_
#define AXLE_GPU_LU_PIVOTS_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {

inline constexpr char kLuPivotsToPermutationTarget[] = "cu_lu_pivots_to_permutation";

struct LuPivotsPlan {
  int64_t batch = 1, pivots = 0, permutation = 0;  // rows, k, n
};

absl::StatusOr<LuPivotsPlan> MakeLuPivotsPlan(const HloCustomCallInstruction& call);

// values: the pivots; the permutation.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLuPivotsToPermutationThunk(
    const HloCustomCallInstruction& call, GpuThunkValues values);

// The kernel's PTX (axle_lu_pivots_to_permutation).
const std::string& LuPivotsToPermutationPtx();

}  // namespace axle::gpu

#endif  // AXLE_GPU_LU_PIVOTS_THUNK_H_
