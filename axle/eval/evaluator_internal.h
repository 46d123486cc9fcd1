//===- evaluator_internal.h - Shared pieces of HloEvaluator's op families --===//
//
// Private to axle/eval. Each op family (evaluator_elementwise.cc,
// evaluator_data_movement.cc, ...) exports the functions HloEvaluator's
// dispatcher calls: they take the instruction and its evaluated operands and
// return the result, or a Status naming the instruction when the input is
// malformed.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_EVALUATOR_INTERNAL_H_
#define AXLE_EVAL_EVALUATOR_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
class HloEvaluator;

namespace eval_internal {

// `n` consecutive elements of `type` at `data`, or one element standing for
// all n when `broadcast` is set.
struct Lanes {
  PrimitiveType type = PRIMITIVE_TYPE_INVALID;
  const void* data = nullptr;
  bool broadcast = false;
};

// "add.3 (add)": how errors name an instruction.
std::string Describe(const HloInstruction& instruction);
absl::Status InvalidInstruction(const HloInstruction& instruction, absl::string_view message);

// --- Elementwise (evaluator_elementwise.cc) ----------------------------------
// Evaluates the elementwise op `instruction` over n lanes of its operands
// into `out` (n elements of `out_type`). Handles every op with the
// kElementwise property plus bitcast-convert between equal bit widths.
absl::Status EvaluateElementwiseLanes(const HloInstruction& instruction,
                                      absl::Span<const Lanes> operands, PrimitiveType out_type,
                                      void* out, int64_t n);
// The same on whole arrays; scalar operands broadcast.
absl::StatusOr<Literal> EvaluateElementwise(const HloInstruction& instruction,
                                            absl::Span<const Literal* const> operands);
// bitcast-convert, including between different bit widths.
absl::StatusOr<Literal> EvaluateBitcastConvert(const HloInstruction& instruction,
                                               const Literal& operand);
// The type-changing elementwise ops over n lanes
// (evaluator_convert_compare.cc): compare into pred, convert to `out_type`,
// stochastic-convert of `a` with the random bits `random`.
absl::Status EvaluateCompareLanes(const HloInstruction& instruction, const Lanes& a, const Lanes& b,
                                  bool* out, int64_t n);
absl::Status EvaluateConvertLanes(const Lanes& a, PrimitiveType out_type, void* out, int64_t n);
absl::Status EvaluateStochasticConvertLanes(const HloInstruction& instruction, const Lanes& a,
                                            const Lanes& random, PrimitiveType out_type, void* out,
                                            int64_t n);
// Converts one scalar literal to `type` (convert semantics).
absl::StatusOr<Literal> ConvertScalar(const Literal& scalar, PrimitiveType type);

// --- Data movement (evaluator_data_movement.cc) ------------------------------
absl::StatusOr<Literal> EvaluateIota(const HloInstruction& instruction);
absl::StatusOr<Literal> EvaluateBroadcast(const HloInstruction& instruction,
                                          const Literal& operand);
absl::StatusOr<Literal> EvaluateReshape(const HloInstruction& instruction, const Literal& operand);
absl::StatusOr<Literal> EvaluateTranspose(const HloInstruction& instruction,
                                          const Literal& operand);
absl::StatusOr<Literal> EvaluateReverse(const HloInstruction& instruction, const Literal& operand);
absl::StatusOr<Literal> EvaluateSlice(const HloInstruction& instruction, const Literal& operand);
absl::StatusOr<Literal> EvaluateDynamicSlice(const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateDynamicUpdateSlice(const HloInstruction& instruction,
                                                   absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateRaggedAllToAll(const HloInstruction& instruction,
                                               absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateConcatenate(const HloInstruction& instruction,
                                            absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluatePad(const HloInstruction& instruction, const Literal& operand,
                                    const Literal& padding_value);
absl::StatusOr<Literal> EvaluateGetDimensionSize(const HloInstruction& instruction,
                                                 const Literal& operand);

// --- Reductions (evaluator_reduce.cc) ----------------------------------------
absl::StatusOr<Literal> EvaluateReduce(HloEvaluator& evaluator, const HloInstruction& instruction,
                                       absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateReduceWindow(HloEvaluator& evaluator,
                                             const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateMap(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateScan(HloEvaluator& evaluator, const HloInstruction& instruction,
                                     absl::Span<const Literal* const> operands);

// --- Sorting (evaluator_sort.cc) ---------------------------------------------
absl::StatusOr<Literal> EvaluateSort(HloEvaluator& evaluator, const HloInstruction& instruction,
                                     absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateTopK(const HloInstruction& instruction, const Literal& operand);

// --- Random numbers (evaluator_rng.cc) ---------------------------------------
absl::StatusOr<Literal> EvaluateRng(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands);
absl::StatusOr<Literal> EvaluateRngBitGenerator(const HloInstruction& instruction,
                                                const Literal& state);

// --- Collectives among participants (evaluator_collectives.cc) -------------
// `executions` counts each collective-permute's executions in the run, for
// _xla_send_recv_validation (collectives/replica_groups.h).
absl::StatusOr<Literal> EvaluateCollectiveAmongParticipants(
    HloEvaluator& evaluator, const HloCollectiveInstruction& collective,
    absl::Span<const Literal* const> operands, const HloEvaluator::Participant& participant,
    absl::flat_hash_map<const HloInstruction*, int64_t>& executions);
// collective-permute's in-place form (collectives/in_place_permute.h) for
// participant `me` of `grid` through `communicator` (one rank for a single
// device); `me` is its flattened id.
absl::StatusOr<Literal> EvaluateInPlacePermute(const HloCollectiveInstruction& collective,
                                               absl::Span<const Literal* const> operands,
                                               Communicator& communicator, int64_t replica_count,
                                               int64_t partition_count, int64_t me);
// send, recv, send-done, recv-done with _xla_send_recv_source_target_pairs:
// the send hands its data to every participant; the recv-done of a target
// returns its source's. `received` carries the data from send to recv-done;
// `executions` counts each send's executions in the run, for
// _xla_send_recv_validation (collectives/replica_groups.h).
absl::StatusOr<Literal> EvaluateSendRecvAmongParticipants(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands,
    const HloEvaluator::Participant& participant,
    absl::flat_hash_map<std::string, Literal>& received,
    absl::flat_hash_map<const HloInstruction*, int64_t>& executions);

// --- Helpers -----------------------------------------------------------------
// Row-major strides of `shape`'s dimensions.
std::vector<int64_t> Strides(const Shape& shape);
// Lanes over every element of an array literal.
inline Lanes LanesOf(const Literal& literal) {
  return Lanes{literal.shape().element_type(), literal.untyped_data(), false};
}
// Checks that `literal` is an array and returns an error naming `what` otherwise.
absl::Status ExpectArray(const HloInstruction& instruction, const Literal& literal,
                         absl::string_view what);

}  // namespace eval_internal
}  // namespace axle

#endif  // AXLE_EVAL_EVALUATOR_INTERNAL_H_
