#include "axle/hlo/pass/pass_registry.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/transforms/dce.h"

namespace axle {
namespace {

// The verifier as a pass ("verify"): changes nothing, fails on a bad module.
class VerifierPass : public HloPassInterface {
 public:
  absl::string_view name() const override { return "verify"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    absl::Status status = VerifyHloModule(*module);
    if (!status.ok()) return status;
    return false;
  }
};

const PassFactoryMap& Registry() {
  static const PassFactoryMap* registry = [] {
    auto* map = new PassFactoryMap{
        {"dce", [] { return std::make_unique<HloDCE>(); }},
        {"verify", [] { return std::make_unique<VerifierPass>(); }},
    };
    AddSimplificationPasses(map);
    AddCleanupPasses(map);
    AddFusionPasses(map);
    AddLoweringPasses(map);
    return map;
  }();
  return *registry;
}

}  // namespace

std::vector<std::string> RegisteredPassNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Registry()) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<HloPassInterface>> CreatePass(absl::string_view name) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    return absl::NotFoundError(absl::StrCat(
        "unknown pass '", name, "'; known passes: ", absl::StrJoin(RegisteredPassNames(), ", ")));
  }
  return it->second();
}

}  // namespace axle
