//===- topk_thunk_emitter.cc - topk from HLO ------------------------------===//
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/cpu/runtime/topk_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

absl::Status EmitTopKThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const auto& topk = *cast<HloTopKInstruction>(&instruction);
  if (instruction.operand_count() != 1 || !instruction.operand(0)->shape().IsArray() ||
      instruction.operand(0)->shape().rank() < 1) {
    return Unsupported(instruction, "topk needs one operand of rank >= 1");
  }
  const Shape& shape = instruction.operand(0)->shape();
  if (!TopKThunkSupports(shape.element_type())) {
    return Unsupported(instruction, absl::StrCat("topk of ", shape.ToString(false),
                                                 " is not supported by the topk thunk"));
  }
  const int64_t length = shape.dimensions(shape.rank() - 1);
  if (topk.k() < 0 || topk.k() > length || length > INT32_MAX) {
    return Unsupported(instruction,
                       absl::StrCat("k=", topk.k(), " but rows have ", length, " elements"));
  }
  const Shape& result = instruction.shape();
  std::vector<int64_t> dimensions = shape.dimensions();
  dimensions.back() = topk.k();
  if (!result.IsTuple() || result.tuple_shapes().size() != 2 ||
      !ShapeUtil::Compatible(result.tuple_shapes(0),
                             ShapeUtil::MakeShape(shape.element_type(), dimensions)) ||
      !ShapeUtil::Compatible(result.tuple_shapes(1), ShapeUtil::MakeShape(S32, dimensions))) {
    return Unsupported(instruction, absl::StrCat("the result ", result.ToString(false),
                                                 " is not the (values, s32 indices) of k=",
                                                 topk.k(), " elements of each row"));
  }
  const int64_t rows = length == 0 ? 0 : ShapeUtil::ElementsIn(shape) / length;
  AXLE_ASSIGN_OR_RETURN(int64_t input, builder.ValueOf(instruction.operand(0)));
  std::vector<int64_t> outputs = builder.DefineTemporaries(&instruction);
  builder.AddThunk(MakeTopKThunk(instruction.name(), shape.element_type(), rows, length, topk.k(),
                                 topk.largest(), input, outputs[0], outputs[1]));
  return absl::OkStatus();
}

}  // namespace axle::cpu
