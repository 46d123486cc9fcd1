//===- multi_output_fusion.h - Loop fusions merged into one kernel ---------===//
//
// XLA's multi-output fusion, run after "fusion": two loop
// fusions over one iteration space (outputs of the same dimensions) become
// one fusion with the outputs of both (a root tuple; its readers read
// get-tuple-elements), so one kernel computes them in one pass, when
//  - one reads the other's output only at the index it computes
//    (producer-consumer): the value is used where it is computed instead of
//    being written and read back; or
//  - they read a common array operand (siblings): it is read once, and what
//    the fusion pass duplicated into both (a cheap producer fused into each
//    of its users) is computed once, since identical instructions of the two
//    are merged (fusion_utils.h).
// Random-bit generators are the typical case: JAX's threefry round updates
// two arrays from both, and the fusion pass leaves one kernel per array with
// the shared rounds recomputed in each.
//
// What merges: kLoop fusions whose fused computations hold only elementwise
// ops and the data movement that keeps the kernel a plain loop (broadcast,
// slice, reshape, concatenate, pad, reverse, iota, dynamic-slice; no reduce,
// transpose or gather: those kernels have schedules of their own), with
// descending layouts and outputs under kMaxOutputBytes each (a larger single
// output keeps its kernel, which stores it non-temporally), where no path
// leads from one to the other through a third instruction. A merged fused
// computation holds at most kMaxFusedInstructions instructions.
//
// Both backends run it as "multi-output-fusion". A backend whose kernels
// compute several reductions in one pass gives Options::reduction_space,
// its hook: the iteration space of a kInput fusion it can merge with a
// sibling of the same space (the cpu backend's column reductions:
// cpu/runtime/cpu_multi_output_fusion.h, "cpu-multi-output-fusion").
// Without it no reduction merges (the GPU's emitters take one reduce
// root). Reductions merge only as siblings that share an operand, never
// with loop fusions, nor with one that reads the other's result.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_
#define AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class MultiOutputFusion : public HloPassInterface {
 public:
  // The fusion pass's cap (instruction_fusion.h).
  static constexpr int64_t kMaxFusedInstructions = 200;
  static constexpr int64_t kMaxOutputBytes = int64_t{32} << 20;

  // What a kernel walks: a loop fusion its outputs' dimensions; a fusion of
  // reductions (`reduction`) the dimensions of their inputs, and the
  // dimensions it reduces. Only fusions over equal spaces merge.
  struct IterationSpace {
    std::vector<int64_t> dimensions;
    bool reduction = false;
    std::vector<int64_t> reduced;
    bool operator==(const IterationSpace& other) const = default;
  };

  struct Options {
    // The backend's hook for kInput fusions (reductions): the iteration
    // space of the fusion computing `fused` whose outputs (its root, or the
    // elements of a root tuple) are `outputs`, when the backend's kernels
    // compute several such fusions of that space in one; nullopt when it
    // cannot merge. Called only for fusions whose outputs are arrays of
    // one shape, in descending layouts, read through get-tuple-elements.
    // Null: no reduction merges.
    std::function<std::optional<IterationSpace>(const HloComputation& fused,
                                                const std::vector<const HloInstruction*>& outputs)>
        reduction_space;
  };

  MultiOutputFusion() = default;
  explicit MultiOutputFusion(Options options) : options_(std::move(options)) {}

  absl::string_view name() const override { return "multi-output-fusion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  Options options_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_
