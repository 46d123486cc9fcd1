//===- register_cpu_passes.cc - The cpu backend's passes by name -----------===//
//
// The passes only the cpu backend runs, registered under their --passes
// names (pass_registry.h: RegisterBackendPasses) when a program links the
// library axle_cpu_passes: cpu_compiler.cc adds them to cpu-prepare by
// name, and axle-opt --passes= finds them. The linker keeps this file
// through axle_cpu_passes_anchor (CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include <memory>

#include "axle/cpu/runtime/cpu_multi_output_fusion.h"
#include "axle/cpu/runtime/epilogue_fusion.h"
#include "axle/hlo/pass/pass_registry.h"

// Referenced by the link options of axle_cpu_passes so that this object
// file, and the registration below, is kept in every program.
extern "C" {
int axle_cpu_passes_anchor = 0;
}

namespace axle::cpu {
namespace {

void AddCpuPasses(PassFactoryMap* registry) {
  (*registry)["dot-epilogue-fusion"] = [] { return std::make_unique<DotEpilogueFusion>(); };
  // Multi-output fusion as the GPU runs it ("multi-output-fusion"), plus
  // sibling column reductions merged into one kernel: the cpu backend's
  // column reduction emitter computes several reduces, the GPU's emitters
  // take one reduce root.
  (*registry)["cpu-multi-output-fusion"] = [] { return std::make_unique<CpuMultiOutputFusion>(); };
}

[[maybe_unused]] const bool kRegistered = RegisterBackendPasses(AddCpuPasses);

}  // namespace
}  // namespace axle::cpu
