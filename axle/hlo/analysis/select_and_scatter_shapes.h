//===- select_and_scatter_shapes.h - A select-and-scatter's shapes, checked ===//
//
// What every backend's select-and-scatter needs from the instruction,
// checked once: operand, source, init_value and result share one element
// type (init_value a scalar, the result the operand's dimensions); the
// window has the operand's rank, sizes >= 0 and strides and dilations >= 1;
// the source has the dimensions of the reduce-window output; select takes
// two scalars of the type and returns a pred, scatter returns the type. The
// cpu and cuda select-and-scatter thunks both start from it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_SELECT_AND_SCATTER_SHAPES_H_
#define AXLE_HLO_ANALYSIS_SELECT_AND_SCATTER_SHAPES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

struct SelectAndScatterShapes {
  std::vector<int64_t> operand_dims;
  // The reduce-window output's dimensions (the source's).
  std::vector<int64_t> source_dims;
  Window window;
  PrimitiveType type = F32;
  const HloComputation* select = nullptr;
  const HloComputation* scatter = nullptr;
  // Some dimension reverses its window (the caller says whether it can).
  bool window_reversal = false;
};

// The shapes of select-and-scatter `instruction` (operand, source,
// init_value; select, scatter). InvalidArgument saying what is inconsistent
// (the caller names the instruction and the platform).
absl::StatusOr<SelectAndScatterShapes> AnalyzeSelectAndScatter(const HloInstruction& instruction);

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_SELECT_AND_SCATTER_SHAPES_H_
