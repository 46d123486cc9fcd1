// Registers the algebraic simplification, reshape/transpose/broadcast simplification, layout
// normalization and batch-norm expansion passes under their --passes names.
#include <memory>

#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/algebraic_simplifier.h"
#include "axle/hlo/transforms/batchnorm_expander.h"
#include "axle/hlo/transforms/layout_normalization.h"
#include "axle/hlo/transforms/reshape_mover.h"

namespace axle {

void AddSimplificationPasses(PassFactoryMap* registry) {
  (*registry)["algsimp"] = [] { return std::make_unique<AlgebraicSimplifier>(); };
  (*registry)["batchnorm-expander"] = [] { return std::make_unique<BatchNormExpander>(); };
  (*registry)["layout-normalization"] = [] { return std::make_unique<LayoutNormalization>(); };
  (*registry)["reshape-mover"] = [] { return std::make_unique<ReshapeMover>(); };
}

}  // namespace axle
