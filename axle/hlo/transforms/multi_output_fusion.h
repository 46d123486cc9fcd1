//===- multi_output_fusion.h - Loop fusions merged into one kernel ---------===//
//
// XLA's multi-output fusion for the CPU, run after "fusion": two loop
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
// Both backends run it as "multi-output-fusion". With
// Options::merge_sibling_reductions (the cpu backend's
// "cpu-multi-output-fusion", registered by
// cpu/runtime/register_cpu_passes.cc), sibling reduction fusions merge too, as
// XLA's multi-output fusion of sibling reductions: kInput fusions whose
// roots are reduces that keep their input's minor dimension (column
// reductions: batch norm backward's four sums over N, H and W of
// expressions of the same two arrays, a layer norm's scale and offset
// gradients), of inputs of one shape over the same dimensions, computed
// from plain loop ops (no other reduce, transpose or gather), that share
// an operand. The merged kInput fusion's root is a tuple of the reduces,
// and the column reduction kernel folds them all in one pass over the
// inputs. Reductions never merge with loop fusions, nor with reductions
// over other dimensions, nor with one that reads the other's result.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_
#define AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_

#include <cstdint>

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class CpuMultiOutputFusion : public HloPassInterface {
 public:
  // The fusion pass's cap (instruction_fusion.h).
  static constexpr int64_t kMaxFusedInstructions = 200;
  static constexpr int64_t kMaxOutputBytes = int64_t{32} << 20;

  struct Options {
    // Sibling column reductions merge too (the cpu backend's column
    // reduction kernel computes several; the GPU's emitters take one
    // reduce root).
    bool merge_sibling_reductions = false;
  };

  CpuMultiOutputFusion() = default;
  explicit CpuMultiOutputFusion(Options options) : options_(options) {}

  absl::string_view name() const override {
    return options_.merge_sibling_reductions ? "cpu-multi-output-fusion" : "multi-output-fusion";
  }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  Options options_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_MULTI_OUTPUT_FUSION_H_
