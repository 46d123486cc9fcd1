// Registers the lowering passes (ops a backend does not run itself, rewritten
// into ops it does) under their --passes names.
#include <memory>

#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/all_reduce_promotion.h"
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"
#include "axle/hlo/transforms/scan_to_while.h"
#include "axle/hlo/transforms/sharding_remover.h"
#include "axle/hlo/transforms/single_device_collectives.h"
#include "axle/hlo/transforms/topk_decomposer.h"

namespace axle {

void AddLoweringPasses(PassFactoryMap* registry) {
  (*registry)["scan-to-while"] = [] { return std::make_unique<ScanToWhile>(); };
  (*registry)["sharding-remover"] = [] { return std::make_unique<ShardingRemover>(); };
  (*registry)["topk-decomposer"] = [] { return std::make_unique<TopKDecomposer>(); };
  // XLA:CPU's types; the GPU backend adds its own list.
  (*registry)["all-reduce-promotion"] = [] {
    return std::make_unique<AllReducePromotion>(AllReducePromotion::CpuTypes());
  };
  (*registry)["bf16-reductions-in-f32"] = [] { return std::make_unique<Bf16ReductionsInF32>(); };
  (*registry)["single-device-collectives"] = [] {
    return std::make_unique<LowerSingleDeviceCollectives>();
  };
}

}  // namespace axle
