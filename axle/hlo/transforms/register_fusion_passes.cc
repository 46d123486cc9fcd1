// Registers the fusion passes under their --passes names.
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/epilogue_fusion.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "axle/hlo/transforms/multi_output_fusion.h"

namespace axle {

void AddFusionPasses(PassFactoryMap* registry) {
  (*registry)["fusion"] = [] { return std::make_unique<CpuInstructionFusion>(); };
  (*registry)["multi-output-fusion"] = [] { return std::make_unique<CpuMultiOutputFusion>(); };
  (*registry)["cpu-multi-output-fusion"] = [] {
    return std::make_unique<CpuMultiOutputFusion>(
        CpuMultiOutputFusion::Options{.merge_sibling_reductions = true});
  };
  (*registry)["dot-epilogue-fusion"] = [] { return std::make_unique<DotEpilogueFusion>(); };
}

}  // namespace axle
