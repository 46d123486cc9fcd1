// Registers the fusion passes under their --passes names.
#include "axle/hlo/pass/pass_registry.h"

namespace axle {

void AddFusionPasses(PassFactoryMap* registry) {}

}  // namespace axle
