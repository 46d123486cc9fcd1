//===- fake_arguments.h - Deterministic inputs for running modules ---------===//
//
// Random arguments from a seed, as `axle-run` and the conformance tests use
// them: integers in [0, 10) so that index operands (dynamic-slice starts,
// gather indices, conditional branch indices) stay meaningful, floats in
// [-1, 1), pred true or false. The same seed gives the same values on every
// machine (no std:: distributions, whose output is implementation-defined).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_TOOLS_FAKE_ARGUMENTS_H_
#define AXLE_TOOLS_FAKE_ARGUMENTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

Literal MakeFakeLiteral(const Shape& shape, uint64_t seed);
// One literal per entry parameter, parameter i seeded with (seed, i).
absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const HloModule& module, uint64_t seed);

}  // namespace axle

#endif  // AXLE_TOOLS_FAKE_ARGUMENTS_H_
