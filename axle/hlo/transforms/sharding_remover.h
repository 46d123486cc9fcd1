//===- sharding_remover.h - Sharding annotations on a one-device run -------===//
//
// JAX marks shardings with custom calls that carry no computation: a
// `with_sharding_constraint` is `custom-call(x), custom_call_target="Sharding"`
// (GSPMD and Shardy alike), and Shardy's round trip through HLO text writes a
// `shard_map` as `xla.sdy.GlobalToLocalShape` -> `call` of its body
// (`xla.sdy.manual_computation_body`) -> `xla.sdy.LocalToGlobalShape`, and an
// output's sharding as `xla.sdy.FuncResultSharding`; GSPMD's shard_map uses
// `SPMDFullToShardShape` / `SPMDShardToFullShape`. XLA's partitioner consumes
// them; on one device each is the identity (its operands, a tuple of them when
// it has several), as XLA's ShardingRemover does for the GSPMD targets.
// `xla.sdy.ShardingGroup` (an empty-tuple marker) and
// `xla.sdy.PropagationBarrier` go the same way.
//
// An annotation whose result is not its operands' shapes (a shard of a
// program partitioned over several devices) stays an Unimplemented error
// naming it: running it needs SPMD partitioning.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_SHARDING_REMOVER_H_
#define AXLE_HLO_TRANSFORMS_SHARDING_REMOVER_H_

#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

// Whether `target` is one of the custom-call targets above.
bool IsShardingAnnotationTarget(absl::string_view target);

class ShardingRemover : public HloPassInterface {
 public:
  absl::string_view name() const override { return "sharding-remover"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_SHARDING_REMOVER_H_
