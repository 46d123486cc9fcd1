//===- cpu_multi_output_fusion.h - Sibling column reductions in one kernel -===//
//
// The cpu backend's multi-output fusion ("cpu-multi-output-fusion", added
// to cpu-prepare by name: register_cpu_passes.cc): the shared pass
// (hlo/transforms/multi_output_fusion.h) with the cpu backend's hook for
// reduction kernels, as XLA's multi-output fusion of sibling reductions.
// The cpu backend's column reduction emitter computes several reduces in
// one pass over their inputs; the GPU's emitters take one reduce root, so
// the shared pass merges no reductions by itself.
//
// What merges besides loop fusions: kInput fusions whose roots are reduces
// that keep their input's minor dimension (column reductions: batch norm
// backward's four sums over N, H and W of expressions of the same two
// arrays, a layer norm's scale and offset gradients), of inputs of one
// shape over the same dimensions, computed from plain loop ops (no other
// reduce, transpose or gather), that share an operand. The merged kInput
// fusion's root is a tuple of the reduces, and the column reduction kernel
// folds them all in one pass over the inputs. Reductions never merge with
// loop fusions, nor with reductions over other dimensions, nor with one
// that reads the other's result.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CPU_MULTI_OUTPUT_FUSION_H_
#define AXLE_CPU_RUNTIME_CPU_MULTI_OUTPUT_FUSION_H_

#include <optional>
#include <vector>

#include "axle/hlo/transforms/multi_output_fusion.h"

namespace axle::cpu {

// The iteration space of a fusion of column reductions whose outputs are
// `outputs`: every output a reduce that keeps its input's minor dimension,
// of floats or integers (a pred fold stays scalar, and would keep a merged
// loop scalar too), in descending layouts, of an input of one shape over
// the same dimensions, computed from plain loop ops only (no reduce other
// than the roots, no transpose or gather). Nullopt otherwise.
std::optional<MultiOutputFusion::IterationSpace> ColumnReductionSpace(
    const HloComputation& fused, const std::vector<const HloInstruction*>& outputs);

class CpuMultiOutputFusion : public MultiOutputFusion {
 public:
  CpuMultiOutputFusion() : MultiOutputFusion(Options{.reduction_space = ColumnReductionSpace}) {}
  absl::string_view name() const override { return "cpu-multi-output-fusion"; }
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CPU_MULTI_OUTPUT_FUSION_H_
