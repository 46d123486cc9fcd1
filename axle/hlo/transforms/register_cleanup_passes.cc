// Registers the constant folding, CSE, call inlining, tuple simplification, while-loop
// simplification passes under their --passes names.
#include <memory>

#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/call_inliner.h"
#include "axle/hlo/transforms/constant_folding.h"
#include "axle/hlo/transforms/cse.h"
#include "axle/hlo/transforms/tuple_simplifier.h"
#include "axle/hlo/transforms/while_loop_constant_sinking.h"
#include "axle/hlo/transforms/while_loop_invariant_code_motion.h"
#include "axle/hlo/transforms/while_loop_simplifier.h"

namespace axle {
namespace {

template <typename Pass>
void Add(PassFactoryMap* registry) {
  Pass pass;
  registry->emplace(std::string(pass.name()), [] { return std::make_unique<Pass>(); });
}

}  // namespace

void AddCleanupPasses(PassFactoryMap* registry) {
  Add<HloConstantFolding>(registry);
  Add<HloCSE>(registry);
  Add<CallInliner>(registry);
  Add<TupleSimplifier>(registry);
  Add<WhileLoopSimplifier>(registry);
  Add<WhileLoopInvariantCodeMotion>(registry);
  Add<WhileLoopConstantSinking>(registry);
}

}  // namespace axle
