//===- participants.h - The interpreter with several participants ----------===//
//
// Runs one module as every device of a replicas x partitions grid, each
// participant an HloEvaluator on its own thread of this process, all joined
// by an in-process communicator (axle/collectives/communicator.h). This is
// the reference that multi-process runs (axle-run --num_processes) are
// compared with: the collectives fold in the same order, so the results are
// bit-identical.
//
// A participant that fails (an error in its evaluation) leaves the run:
// the others fail at their next collective with an error naming it, and
// the first real failure is returned. A collective that waits longer than
// AXLE_COLLECTIVE_TIMEOUT fails everyone.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_PARTICIPANTS_H_
#define AXLE_EVAL_PARTICIPANTS_H_

#include <chrono>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

struct ParticipantsOptions {
  int64_t replica_count = 1;
  int64_t partition_count = 1;
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
  // Called on each participant's evaluator before it runs (custom calls,
  // seeds, ...).
  std::function<void(HloEvaluator&)> setup;
};

// args[i]: the arguments of participant i (flattened id replica *
// partition_count + partition). Returns each participant's result.
absl::StatusOr<std::vector<Literal>> EvaluateParticipants(
    const HloModule& module, absl::Span<const std::vector<const Literal*>> args,
    const ParticipantsOptions& options);

}  // namespace axle

#endif  // AXLE_EVAL_PARTICIPANTS_H_
