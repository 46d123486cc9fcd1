#include "axle/hlo/pass/pass_registry.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/logging.h"
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

// The registered passes; a backend's library adds to them while it loads
// (RegisterBackendPasses), which may be while another thread compiles (a
// shared module loaded at run time), hence the lock.
struct Registry {
  std::mutex mutex;
  PassFactoryMap passes;
};

Registry& GetRegistry() {
  static Registry* registry = [] {
    auto* shared = new Registry;
    shared->passes = {
        {"dce", [] { return std::make_unique<HloDCE>(); }},
        {"verify", [] { return std::make_unique<VerifierPass>(); }},
    };
    AddSimplificationPasses(&shared->passes);
    AddCleanupPasses(&shared->passes);
    AddFusionPasses(&shared->passes);
    AddLoweringPasses(&shared->passes);
    return shared;
  }();
  return *registry;
}

std::vector<std::string> NamesLocked(const PassFactoryMap& passes) {
  std::vector<std::string> names;
  for (const auto& [name, factory] : passes) names.push_back(name);
  return names;
}

}  // namespace

bool RegisterBackendPasses(void (*add)(PassFactoryMap* registry)) {
  PassFactoryMap added;
  add(&added);
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (auto& [name, factory] : added) {
    CHECK(!registry.passes.contains(name));
    registry.passes.emplace(name, std::move(factory));
  }
  return true;
}

std::vector<std::string> RegisteredPassNames() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return NamesLocked(registry.passes);
}

absl::StatusOr<std::unique_ptr<HloPassInterface>> CreatePass(absl::string_view name) {
  PassFactory factory;
  {
    Registry& registry = GetRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.passes.find(name);
    if (it == registry.passes.end()) {
      return absl::NotFoundError(absl::StrCat("unknown pass '", name, "'; known passes: ",
                                              absl::StrJoin(NamesLocked(registry.passes), ", ")));
    }
    factory = it->second;
  }
  return factory();
}

}  // namespace axle
