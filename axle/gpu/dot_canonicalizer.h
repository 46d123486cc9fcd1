//===- dot_canonicalizer.h - Dots into the shapes one GEMM takes -----------===//
//
// Rewrites every dot of a type cuBLAS takes (GemmSupportsTypes) that no
// single GEMM computes in its layouts (GemmSupports is false: batch
// dimensions not one strided dimension, several contracting or free
// dimensions not nested alike in both operands, no dense matrix dimension)
// into the canonical form, as XLA's DotDecomposer does:
//
//   lhs' = reshape(transpose(lhs, batch..., free..., contracting...))
//            : [batch..., M, K]
//   rhs' = reshape(transpose(rhs, batch..., contracting..., free...))
//            : [batch..., K, N]
//   dot' = dot(lhs', rhs'), batch dims {0..b-1}, contracting {b+1} x {b}
//            : [batch..., M, N]
//   result = reshape(dot') : the original dot's shape (and layout)
//
// with transposes and reshapes that change nothing left out. The new
// arrays have descending layouts, which GemmSupports takes. Dots of other
// types and dots already supported are left alone; returns whether any
// dot changed. Fusion computations are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_DOT_CANONICALIZER_H_
#define AXLE_GPU_DOT_CANONICALIZER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuDotCanonicalizer : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-dot-canonicalizer"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_DOT_CANONICALIZER_H_
