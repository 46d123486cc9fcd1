//===- instruction_fusion.h - Loop and reduction fusion --------------------===//
//
// Greedy producer-into-consumer fusion, as XLA's InstructionFusion: the
// instructions of each control-flow computation (entry, while, conditional,
// call bodies; not reducers or comparators) are visited consumers first
// (reverse post order), and each consumer absorbs the operands it can, then
// their operands, and so on.
//
// What fuses:
//  - producers: elementwise ops (no rng, no side effects), broadcast,
//    reshape, bitcast, transpose, reverse, slice, dynamic-slice, gather,
//    concatenate, pad, iota, copy, small constants (<= 64 elements), and
//    kLoop fusions;
//  - consumers: the same ops (the result is a kLoop fusion) and reduce (a
//    kInput fusion whose root is the reduce: producers fused into its
//    operands). Existing kLoop / kInput fusions keep growing the same way.
//  - row reductions (a reduce of its input's trailing dimensions, or a
//    kInput fusion whose root is one) fuse into consumers that read them
//    at the kernel's outer loop index: through row broadcasts
//    (dimensions={0,...,r-1}) followed by elementwise ops, or directly (a
//    reduction epilogue). The kernel then computes the reduction once per
//    row (row_index_analysis.h), with the row in cache: softmax and layer
//    norm are one kernel and one pass over memory. A fusion never gets a
//    reduce it would recompute per element, and a reduce is never
//    duplicated into two consumers. A pass made with
//    fuse_reductions_into_consumers false (the GPU's: its loop kernels
//    have a thread per output element and would recompute the reduction
//    for each) fuses no producer that holds a reduce into anything: a
//    reduction is always the root of its own kInput fusion.
//  - A producer read by several instructions is duplicated into the consumer
//    only when it is cheap (no exp, log, tanh, divide, power, ... inside) and
//    every one of its users can host a fusion; otherwise it stays a separate
//    value (with duplicate_fast_gpu_math, the GPU's, f32 exp / divide /
//    sqrt / rsqrt count as cheap here: softmax's exp goes into both the sum
//    and the divide). An expensive producer does not fuse where a broadcast
//    or a gather would read each of its elements many times (nor, with
//    max_recomputed_instructions, a cheap one past that budget). Nothing
//    with control dependencies fuses.
//  - A producer fused into a fusion that already holds a copy of one of its
//    operands (fused earlier for another reader) reads that copy: values
//    shared inside the fused computation are computed once
//    (fusion_utils.h: FusionGrowth::copies), and a chain whose values are
//    each read two or three times (threefry's rounds, unrolled) stays a
//    DAG instead of becoming a tree of copies.
//  - A producer does not fuse when the fusion it would give emits some
//    instruction more than kAllowedCodeDuplication (15) times per output
//    element, and more often than before (fusion_utils.h:
//    IndexUsageCounts, XLA's FusionNodeIndexingEvaluation): slices, pads
//    and concatenations each read their operand at an index of their own,
//    so lax.associative_scan's levels, fused whole, would emit the input
//    ~2^depth times. The would-be fusion is evaluated as a whole at each
//    step: a producer read through copies shared in the fusion raises the
//    counts of what was fused before.
//
// Never fused: parameters, side-effecting ops, custom calls, rng, dot and
// convolution (see epilogue_fusion.h), while / conditional / call, sort,
// scatter, reduce-window, tuples.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_INSTRUCTION_FUSION_H_
#define AXLE_HLO_TRANSFORMS_INSTRUCTION_FUSION_H_

#include <cstdint>
#include <optional>

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class InstructionFusion : public HloPassInterface {
 public:
  // A fused computation stops growing at this many instructions.
  static constexpr int64_t kMaxFusedInstructions = 200;
  // Larger constants stay outside fusions (a read-only buffer each).
  static constexpr int64_t kMaxFusedConstantElements = 64;

  struct Options {
    // Row reductions fuse into consumers that read them per row (the cpu
    // kernels hoist them). False: no producer holding a reduce fuses.
    bool fuse_reductions_into_consumers = true;
    // f32 (and narrower) exp, divide, sqrt and rsqrt count as cheap when
    // deciding whether to duplicate a producer into several consumers
    // (XLA:GPU's rule: on a GPU they cost less than a round trip through
    // memory).
    bool duplicate_fast_gpu_math = false;
    // When set, a producer that a consumer would read many times per
    // element (through a broadcast or a gather) fuses only while the
    // consumer's kernel recomputes at most this many instructions per
    // element that way (the GPU's: a thread per output element computes
    // what lies behind a broadcast again; a random-number generator's key
    // derivation, unrolled, is a chain of hundreds of cheap ops on a few
    // values, which each element of the generated array would rerun).
    std::optional<int64_t> max_recomputed_instructions;
    // A fused computation stops growing at this many instructions.
    int64_t max_fused_instructions = kMaxFusedInstructions;
  };

  InstructionFusion() = default;
  explicit InstructionFusion(const Options& options) : options_(options) {}

  absl::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  Options options_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_INSTRUCTION_FUSION_H_
