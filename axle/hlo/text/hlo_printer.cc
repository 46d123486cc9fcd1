// Placeholder until the HLO printer lands.
#include "axle/hlo/ir/hlo_module.h"
namespace axle {
std::string HloInstruction::ToString() const { return name(); }
std::string HloComputation::ToString() const { return name(); }
std::string HloModule::ToString() const { return name(); }
}  // namespace axle
