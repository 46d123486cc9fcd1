//===- scatter_indexing.h - How a scatter's updates map onto its operand ---===//
//
// What every backend's scatter kernel needs from a scatter's dimension
// numbers and shapes, checked once: which update dimensions pick index
// vectors and which are window dimensions, the operand dimension of each
// window dimension, where each operand batching dimension takes its
// coordinate, and the shapes themselves. The cpu and cuda scatter thunks
// both start from it. The geometry from shapes alone (ScatterIndexing,
// AnalyzeScatterIndexing, ScatterWalkOf) is axle/core/scatter_indexing.h;
// this file adds the checks of an instruction.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_SCATTER_INDEXING_H_
#define AXLE_HLO_ANALYSIS_SCATTER_INDEXING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/scatter_indexing.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// The indexing of scatter `instruction` (AnalyzeScatterIndexing), once its
// operands are checked: n operands, the indices and n updates, all arrays,
// each operand of operand 0's dimensions, each update of update 0's and of
// its operand's element type, and a combiner that takes 2n scalars of the
// operands' types and returns n of them. InvalidArgument saying what is
// wrong (the caller names the instruction and the platform; the index type
// is the caller's to check).
absl::StatusOr<ScatterIndexing> AnalyzeScatter(const HloInstruction& instruction);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_SCATTER_INDEXING_H_
