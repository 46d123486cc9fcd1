// Registers the fusion passes every backend runs under their --passes names
// (the cpu backend's own, dot-epilogue-fusion and cpu-multi-output-fusion:
// cpu/runtime/register_cpu_passes.cc).
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "axle/hlo/transforms/multi_output_fusion.h"

namespace axle {

void AddFusionPasses(PassFactoryMap* registry) {
  (*registry)["fusion"] = [] { return std::make_unique<InstructionFusion>(); };
  (*registry)["multi-output-fusion"] = [] { return std::make_unique<MultiOutputFusion>(); };
}

}  // namespace axle
