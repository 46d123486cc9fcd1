//===- batchnorm_expander.h - batch-norm ops as reduces and arithmetic -----===//
//
// XLA's BatchNormExpander (`--passes=batchnorm-expander`): every
// batch-norm-training, batch-norm-inference and batch-norm-grad becomes
// reduces over all dimensions but feature_index and elementwise ops on
// per-feature values broadcast back, with the formulas of
// axle/eval/batch_norm.cc (biased variance, sum((x - mean)^2) / N). f64
// computes in f64, every other float type in f32, rounded once at the end. A tuple-shaped op is
// replaced by a tuple of its results.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_BATCHNORM_EXPANDER_H_
#define AXLE_HLO_TRANSFORMS_BATCHNORM_EXPANDER_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class BatchNormExpander : public HloPassInterface {
 public:
  absl::string_view name() const override { return "batchnorm-expander"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_BATCHNORM_EXPANDER_H_
