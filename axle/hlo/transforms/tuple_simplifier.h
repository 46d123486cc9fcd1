//===- tuple_simplifier.h - Remove tuple/get-tuple-element round trips -----===//
//
// XLA's TupleSimplifier ("tuple-simplifier"):
//   get-tuple-element(tuple(a0, a1, ...), index=i)       -> ai
//   tuple(gte(x, 0), gte(x, 1), ..., gte(x, n-1))          -> x
// (the second when x has exactly those n elements and the same shape).
// Instructions left dead are removed unless they have side effects.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_TUPLE_SIMPLIFIER_H_
#define AXLE_HLO_TRANSFORMS_TUPLE_SIMPLIFIER_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class TupleSimplifier : public HloPassInterface {
 public:
  absl::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_TUPLE_SIMPLIFIER_H_
