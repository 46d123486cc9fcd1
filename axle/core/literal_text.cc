// Placeholder until the literal text printer lands.
#include "axle/core/literal.h"
namespace axle {
std::string Literal::ToString() const { return shape_.ToString() + " <unprinted>"; }
std::string Literal::ToStringWithoutShape() const { return "<unprinted>"; }
}  // namespace axle
