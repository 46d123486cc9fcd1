//===- dynamic_update_slice_thunk.h - dynamic-update-slice, in place --------===//
//
// XLA's dynamic-update-slice: the result is the operand with the update
// written over the window that starts at the start indices, each start
// clamped to [0, operand_dim - update_dim] (signed types: negative starts
// clamp to 0; unsigned ones compare unsigned), as the elemental emitter
// and the interpreter do.
//
// The thunk copies the operand into the output, then copies the update's
// rows into the window. When the output shares the operand's memory
// (in_place_pairs(): ShareInPlaceOperands, in_place_sharing.h, decides that at
// compile time) the first copy is skipped and only the window is written:
// a loop that updates one row of a large loop-state array per iteration
// moves that row only, not the whole array twice.
//
// Dense row-major arrays of byte-sized elements (the cpu platform's only
// layout); DynamicUpdateSliceRunsAsThunk says when a dynamic-update-slice
// gets this thunk, the rest stays a loop fusion (both it and the emitter:
// dynamic_update_slice_thunk_emitter.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DYNAMIC_UPDATE_SLICE_THUNK_H_
#define AXLE_CPU_RUNTIME_DYNAMIC_UPDATE_SLICE_THUNK_H_

#include <string>
#include <utility>
#include <vector>

#include "axle/core/shape.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

// Whether `instruction` (a dynamic-update-slice) runs as a
// DynamicUpdateSliceThunk: array operand and update of one rank, byte-sized
// elements, integer start indices, one scalar per dimension or one vector.
bool DynamicUpdateSliceRunsAsThunk(const HloInstruction& instruction);

class DynamicUpdateSliceThunk : public Thunk {
 public:
  struct Geometry {
    std::vector<int64_t> operand_dims;
    std::vector<int64_t> update_dims;
    int64_t element_bytes = 0;
    // One start per dimension, or (start_vector) all of them in one value.
    PrimitiveType start_type = S32;
    bool start_vector = false;
  };

  DynamicUpdateSliceThunk(std::string name, Geometry geometry, int64_t operand_value,
                          int64_t update_value, std::vector<int64_t> start_values,
                          int64_t output_value)
      : Thunk(std::move(name)),
        geometry_(std::move(geometry)),
        strides_(ShapeUtil::RowMajorStrides(geometry_.operand_dims)),
        operand_value_(operand_value),
        update_value_(update_value),
        start_values_(std::move(start_values)),
        output_value_(output_value) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override;
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    return {{operand_value_, output_value_}};
  }
  // Its geometry and values (LoadDynamicUpdateSliceThunk,
  // thunk_serialization.h, checks them against the values' sizes).
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  Geometry geometry_;
  // The operand's row-major strides in elements (computed once: a loop
  // runs the thunk at every step).
  std::vector<int64_t> strides_;
  int64_t operand_value_;
  int64_t update_value_;
  std::vector<int64_t> start_values_;
  int64_t output_value_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DYNAMIC_UPDATE_SLICE_THUNK_H_
