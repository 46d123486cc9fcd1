// The .preinit_array entry that runs ThrottleOmpSpinning (omp_team.h) before
// any shared library's constructor. It is alone in its object file so that a
// shared object linking axle_cpu_runtime (the PyTorch device) leaves it out:
// only executables name its anchor (axle_cpu_runtime's link options), and a
// shared object may have no .preinit_array.
#include "axle/cpu/runtime/omp_team.h"

extern "C" {
int axle_omp_preinit_anchor = 0;
}

namespace {

__attribute__((section(".preinit_array"),
               used)) void (*const kThrottleOmpSpinning)(int, char**,
                                                         char**) = axle::cpu::ThrottleOmpSpinning;

}  // namespace
