//===- pass_registry.h - Passes by name ------------------------------------===//
//
// Every pass that can run alone is registered here under its --passes name.
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
void AddFusionPasses(PassFactoryMap* registry);          // loop / reduction / epilogue fusion
void AddLoweringPasses(PassFactoryMap* registry);        // scan, topk, one-device collectives

// Names of all registered passes, sorted.
std::vector<std::string> RegisteredPassNames();
// A new instance of the named pass; NotFound (listing the known names) if
// there is none.
absl::StatusOr<std::unique_ptr<HloPassInterface>> CreatePass(absl::string_view name);

}  // namespace axle

#endif  // AXLE_HLO_PASS_PASS_REGISTRY_H_
