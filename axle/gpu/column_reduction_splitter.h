//===- column_reduction_splitter.h - Large column reductions in two passes -===//
//
// The column kernel (ptx_kernel_emitter.h) gives a block to each 32-byte
// tile of output columns. A reduction of few columns then has few blocks:
// f32[R,1024] -> [1024] is 128 blocks on the H200's 132 SMs, one block an
// SM, and reached 76% of the copy bandwidth; a full reduction (no kept
// dimension) is a single block. As XLA:GPU's tree reduction rewriter does,
// this pass splits such a reduction's rows into k interleaved parts:
//
//   x: [R, C] (the reduced leading dims flattened, the kept trailing ones)
//   partial = reduce(bitcast(x, [R/k, k*C]), dims={0})   : k*C columns
//   result  = bitcast(reduce(bitcast(partial, [k, C]), dims={0}), result)
//
// Row r goes to part r mod k; the bitcasts reshape row-major
// arrays. k is the smallest power of two that gives at least
// kTargetColumnTiles tiles (two blocks per SM), dividing R and leaving each
// part at least kMinRowsPerPart rows. Only reductions of at least
// kMinBytes, single-operand, of reduced leading dimensions of a row-major
// operand and result, by a computation that is one add, multiply, maximum,
// minimum (or and/or of preds) of its two parameters, whose init value is a
// constant identity of it (the init is folded in at both levels; a
// non-identity init, which XLA does not define, is left alone). Fusion
// computations are skipped; returns whether any reduce changed.
//
// Off unless `AXLE_GPU_SPLIT_COLUMNS=1` (gpu_compiler.cc): on an H200
// (2026-11-28) cuda-bandwidth's f32[R,1024] column sum ran at 69% of the
// copy bandwidth split in two parts (256 blocks) against 77% as one kernel
// (128 blocks): the second launch and the halved rows per block cost more
// than the idle SMs. What the column kernel itself needs (more loads in
// flight per thread, or several blocks of a column combined by atomics)
// is still open.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_COLUMN_REDUCTION_SPLITTER_H_
#define AXLE_GPU_COLUMN_REDUCTION_SPLITTER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuColumnReductionSplitter : public HloPassInterface {
 public:
  static constexpr int64_t kMinBytes = int64_t{4} << 20;
  static constexpr int64_t kTargetColumnTiles = 256;
  static constexpr int64_t kMinRowsPerPart = 64;
  static constexpr int64_t kTileBytes = 32;

  // The thresholds (tests make them small).
  explicit GpuColumnReductionSplitter(int64_t min_bytes = kMinBytes,
                                      int64_t target_tiles = kTargetColumnTiles,
                                      int64_t min_rows_per_part = kMinRowsPerPart)
      : min_bytes_(min_bytes), target_tiles_(target_tiles), min_rows_per_part_(min_rows_per_part) {}

  absl::string_view name() const override { return "gpu-column-reduction-splitter"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

  // The parts a reduction of `rows` rows of `columns` columns of
  // `element_bytes`-byte elements is split into; 1: left alone.
  int64_t PartsFor(int64_t rows, int64_t columns, int64_t element_bytes) const;

 private:
  int64_t min_bytes_;
  int64_t target_tiles_;
  int64_t min_rows_per_part_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_COLUMN_REDUCTION_SPLITTER_H_
