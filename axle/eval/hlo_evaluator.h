//===- hlo_evaluator.h - The reference interpreter -------------------------===//
//
// HloEvaluator runs an HLO module or computation on host literals, one
// instruction at a time in post order. It is the "interpreter" platform and
// the oracle every backend is compared against, so it favours being plainly
// right over being fast. The corner cases it follows (integer division by
// zero, shifts past the bit width, NaN in max/min, clamping of dynamic-slice
// starts, ...) are written down in axle/hlo/ir/hlo_semantics.md.
//
// The simple ops live in evaluator_*.cc by family; the heavy kernels (dot,
// convolution, gather/scatter, fft, linear algebra, batch norm,
// select-and-scatter) are the free functions of kernels.h. Computations
// applied per element (reduce, map, sort, reduce-window, scatter) run
// "lane-wise" when they are built from scalar elementwise ops: every
// instruction is evaluated for a whole vector of elements at once, so the
// per-element cost is a plain loop (lanewise_computation.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_HLO_EVALUATOR_H_
#define AXLE_EVAL_HLO_EVALUATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

class Communicator;  // axle/collectives/communicator.h

namespace eval_internal {
struct Lanes;
class LanewiseComputation;
}  // namespace eval_internal

class HloEvaluator {
 public:
  // Runs custom calls: gets the instruction and its evaluated operands and
  // returns a literal of the instruction's shape.
  using CustomCallHandler = std::function<absl::StatusOr<Literal>(
      const HloCustomCallInstruction& custom_call, absl::Span<const Literal* const> operands)>;

  // `max_loop_iterations` < 0: while loops may run forever; otherwise a loop
  // that wants more iterations fails with ResourceExhausted.
  explicit HloEvaluator(int64_t max_loop_iterations = -1);
  ~HloEvaluator();
  HloEvaluator(const HloEvaluator&) = delete;
  HloEvaluator& operator=(const HloEvaluator&) = delete;

  // Evaluates the entry computation on `args`, one literal per parameter
  // whose shape must match the parameter's (layouts aside).
  absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal* const> args);
  absl::StatusOr<Literal> Evaluate(const HloComputation& computation,
                                   absl::Span<const Literal* const> args);

  // Seeds rng / rng-get-and-update-state: the same seed gives the same
  // values. The default seed is 0.
  void set_seed(uint64_t seed);
  void set_custom_call_handler(CustomCallHandler handler) {
    custom_call_handler_ = std::move(handler);
  }

  // Multi-participant mode: this evaluator plays device (replica_id,
  // partition_id) of a replica_count x partition_count grid. replica-id and
  // partition-id return those ids, and collectives exchange values with the
  // other participants through `communicator`, whose rank must be the
  // flattened id replica_id * partition_count + partition_id and whose size
  // the grid's (evaluator_collectives.cc; EvaluateParticipants in
  // participants.h runs every participant on a thread). Without it a module
  // runs as the one device of a one-device grid.
  struct Participant {
    int64_t replica_count = 1;
    int64_t partition_count = 1;
    int64_t replica_id = 0;
    int64_t partition_id = 0;
    Communicator* communicator = nullptr;
  };
  void set_participant(const Participant& participant) { participant_ = participant; }

  // --- Internal: used by the op families (evaluator_*.cc) ------------------
  // Evaluates a called computation; no argument checking beyond counts.
  absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                              absl::Span<const Literal* const> args);
  // Applies a computation of scalars to `n` lanes: args[i] supplies n
  // elements (or one, broadcast) of parameter i; results[j] receives n
  // elements of the j-th leaf of the root (the root itself when it is not a
  // tuple), in the root's element types.
  absl::Status RunLanewise(const HloComputation& computation,
                           absl::Span<const eval_internal::Lanes> args,
                           absl::Span<void* const> results, int64_t n);
  std::mt19937_64& engine() { return engine_; }

 private:
  absl::StatusOr<Literal> EvaluateInstruction(const HloInstruction& instruction,
                                              absl::Span<const Literal* const> operands);
  absl::StatusOr<Literal> EvaluateWhile(const HloInstruction& instruction, const Literal& init);
  absl::StatusOr<Literal> EvaluateConditional(const HloInstruction& instruction,
                                              absl::Span<const Literal* const> operands);
  absl::StatusOr<Literal> EvaluateCollective(const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands);
  absl::StatusOr<Literal> EvaluateCustomCall(const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands);
  absl::StatusOr<Literal> EvaluateKernel(const HloInstruction& instruction,
                                         absl::Span<const Literal* const> operands);
  // The lane-wise form of `computation`, or null when it has non-scalar or
  // non-elementwise instructions (then RunLanewise evaluates lane by lane).
  eval_internal::LanewiseComputation* GetLanewise(const HloComputation& computation);

  struct ComputationPlan;
  const ComputationPlan& GetPlan(const HloComputation& computation);

  int64_t max_loop_iterations_;
  uint64_t seed_ = 0;
  std::mt19937_64 engine_;
  uint64_t rng_state_ = 0;
  CustomCallHandler custom_call_handler_;
  const HloModule* module_ = nullptr;  // while evaluating a module
  std::optional<Participant> participant_;
  // send/recv among participants: what each recv-done will return, by
  // channel and source-target pairs (evaluator_collectives.cc).
  absl::flat_hash_map<std::string, Literal> received_;
  // How many times each send ran in this run (_xla_send_recv_validation).
  absl::flat_hash_map<const HloInstruction*, int64_t> send_executions_;
  absl::flat_hash_map<const HloComputation*, std::unique_ptr<eval_internal::LanewiseComputation>>
      lanewise_cache_;
  absl::flat_hash_map<const HloComputation*, std::unique_ptr<ComputationPlan>> plans_;
};

}  // namespace axle

#endif  // AXLE_EVAL_HLO_EVALUATOR_H_
