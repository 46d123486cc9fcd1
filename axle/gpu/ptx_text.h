//===- ptx_text.h - Small PTX kernels written as text ----------------------===//
//
// The library thunks' helper kernels (cholesky's finish, trsm's batch
// pointers) are a few lines of PTX each, one thread per element. What they
// share is written here once: the entry and its parameters, each parameter
// loaded into its register, the thread's global index in %idx
// (blockIdx.x * blockDim.x + threadIdx.x, a u64), and the branch past the
// body for threads at or beyond the element count. A kernel gives its
// registers and its body, which ends by falling through to (or branching
// to) $L_done.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_TEXT_H_
#define AXLE_GPU_PTX_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace axle::gpu {

// A kernel parameter: `.param .<type> <name>` loaded into `reg`.
struct PtxParameter {
  absl::string_view type;  // "u64", "u32", ...
  absl::string_view name;  // "p_data"
  absl::string_view reg;   // "%rd1"
};

// The text of `.visible .entry <name>(...)`: `registers` (the body's
// `.reg` declarations), the parameters loaded, %idx computed, and `body`
// for the threads whose %idx is below the register `count` (a u64).
std::string PtxThreadPerElementKernel(absl::string_view name,
                                      absl::Span<const PtxParameter> parameters,
                                      absl::string_view registers, absl::string_view count,
                                      absl::string_view body);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_TEXT_H_
