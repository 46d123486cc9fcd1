//===- row_fusion.h - Row reductions with their epilogue in one kernel -----===//
//
// XLA:GPU's "row reduction with epilogue": softmax and layer norm as one
// kernel, a warp or block per row computing the row's reductions in turn
// and then the elementwise consumers of those results and of the row's
// inputs, instead of a kernel per reduction and a last elementwise one.
//
// A fused computation is a *row fusion* when:
//   - every reduce in it reduces the trailing dimensions (`columns`
//     elements, at least a warp) of an input of one and the same shape
//     (`input_dims`) into the leading ones (`row_dims`, `rows` elements),
//     with one operand, an init value, and a non-complex result of at most
//     64 bits (what a warp shuffles);
//   - every instruction that depends on a reduce (reads its value, directly
//     or through others) reads it at the row it computes: it is elementwise,
//     a reshape, a copy or a bitcast (layouts row-major) of an operand with
//     `rows` or rows * columns elements (row-major position p is row p for
//     the former, row p / columns for the latter), a broadcast that only
//     adds degenerate dimensions or that spreads `rows` elements along the
//     trailing `columns` (its operand's non-degenerate dimensions are, in
//     order, the output's leading ones whose product is `rows`), another of
//     the reductions, or the root tuple;
//   - (`outputs_ok`) every output has the dimensions `input_dims` (written
//     per element) or `row_dims` (written once per row).
// Instructions that depend on no reduce are anything the kernels compute.
//
// Then a kernel computes each reduction once per row (a value every thread
// of the row holds) and every dependent instruction from those values, which
// is the whole point: a loop kernel would fold the row again for each
// element. The emitter (ptx_kernel_emitter.h) and the pipeline's merge pass
// (GpuRowFusionMerger, gpu_compiler.cc) use the same analysis, so the pass
// never builds a fusion the emitter would compute per element.
//
// LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_ROW_FUSION_H_
#define AXLE_GPU_ROW_FUSION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

struct RowGeometry {
  // Every reduction's input dimensions and result dimensions (its leading
  // ones).
  std::vector<int64_t> input_dims;
  std::vector<int64_t> row_dims;
  int64_t rows = 0;
  int64_t columns = 0;
};

struct RowFusionAnalysis {
  RowGeometry geometry;
  // The reduces, in post order (each one's dependencies first).
  std::vector<const HloInstruction*> reductions;
  // Whether the root depends on a reduction.
  bool root_dependent = false;
  // Whether every output has the dimensions input_dims or row_dims.
  bool outputs_ok = false;
};

// The row geometry of `reduce` when it is a row reduction a row fusion may
// hold (above); nullopt otherwise.
std::optional<RowGeometry> RowReductionGeometry(const HloInstruction& reduce);

// `computation` as a row fusion, or nullopt. `known` fixes the geometry
// (nullopt: the reductions' own); the parameters numbered in
// `dependent_parameters` count as depending on a reduction (the merge pass
// asks whether a consumer would stay a row fusion with a producer's
// reductions fused in). A computation without reductions or dependent
// parameters is not one.
std::optional<RowFusionAnalysis> AnalyzeRowFusion(
    const HloComputation& computation, const std::optional<RowGeometry>& known = std::nullopt,
    absl::Span<const int64_t> dependent_parameters = {});

// Fuses loop fusions that compute row reductions into the loop fusions that
// consume them while the result is a row fusion whose outputs the kernel
// writes (softmax: the row max, the exp-and-sum and the exp-and-divide
// fusions become one). A producer with other users stays for them (its
// reductions then run twice) only when the consumer already reads every
// operand the producer reads, so no kernel reads more memory than before.
class GpuRowFusionMerger : public HloPassInterface {
 public:
  // Fused computations above this many instructions take no more.
  static constexpr int64_t kMaxInstructions = 400;
  absl::string_view name() const override { return "gpu-row-fusion-merger"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_ROW_FUSION_H_
