//===- pass_registry.h - Passes by name ------------------------------------===//
//
// Every pass that can run alone is registered here under its --passes name:
// the shared families below, and each backend's own passes, which its
// library registers (RegisterBackendPasses).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PASS_PASS_REGISTRY_H_
#define AXLE_HLO_PASS_PASS_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

using PassFactory = std::function<std::unique_ptr<HloPassInterface>()>;
using PassFactoryMap = std::map<std::string, PassFactory, std::less<>>;

// Each family of transforms adds its passes in its own file
// (transforms/register_*.cc), so that families can grow independently.
void AddSimplificationPasses(PassFactoryMap* registry);  // algsimp, reshape/transpose/...
void AddCleanupPasses(PassFactoryMap* registry);         // constant folding, CSE, inlining, ...
void AddFusionPasses(PassFactoryMap* registry);          // loop / reduction fusion
void AddLoweringPasses(PassFactoryMap* registry);        // scan, topk, one-device collectives

// A backend's own passes (the cpu backend's: cpu/runtime/register_cpu_passes.cc)
// are added by its library, from a static initializer:
//   const bool kRegistered = RegisterBackendPasses(AddCpuPasses);
// so that the backend's compiler and any tool linked with the library
// (axle-opt --passes=...) find them by name. A name registered twice is a
// bug (CHECK). Returns true, for the initializer.
bool RegisterBackendPasses(void (*add)(PassFactoryMap* registry));

// Names of all registered passes, sorted.
std::vector<std::string> RegisteredPassNames();
// A new instance of the named pass; NotFound (listing the known names) if
// there is none.
absl::StatusOr<std::unique_ptr<HloPassInterface>> CreatePass(absl::string_view name);

}  // namespace axle

#endif  // AXLE_HLO_PASS_PASS_REGISTRY_H_
