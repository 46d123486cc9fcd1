//===- xla_builder_internal.h - Shared helpers of the op functions ---------===//
//
// What the xla_builder_*.cc files share: finding the builder of a call's
// operands, running an op body under the builder's error recording, creating
// and enqueueing an instruction, checking user-supplied shapes, and XLA's
// broadcast sequences. Not part of the API.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BUILDER_XLA_BUILDER_INTERNAL_H_
#define AXLE_BUILDER_XLA_BUILDER_INTERNAL_H_

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/shape_inference/shape_inference.h"

namespace axle::builder_internal {

// The builder of the first operand that has one; null when none has.
XlaBuilder* BuilderOf(absl::Span<const XlaOp> operands);
inline XlaBuilder* BuilderOf(std::initializer_list<XlaOp> operands) {
  return BuilderOf(absl::Span<const XlaOp>(operands.begin(), operands.size()));
}

// Runs `body` on `builder` under error recording, prefixing a failure with
// `op_name`. With no builder (only uninitialized operands) there is nowhere
// to record anything: returns an uninitialized XlaOp.
template <typename F>
XlaOp RunOp(XlaBuilder* builder, absl::string_view op_name, F&& body) {
  if (builder == nullptr) return XlaOp();
  return builder->ReportErrorOrReturn(op_name, std::forward<F>(body));
}

// The shapes of `operands` (pointers into the builder).
absl::StatusOr<std::vector<const Shape*>> OperandShapes(XlaBuilder* builder,
                                                        absl::Span<const XlaOp> operands);

// Creates an instruction of class T with the instructions of `operands`,
// lets `init` set its attributes and enqueues it.
template <typename T, typename Init>
absl::StatusOr<XlaOp> Emit(XlaBuilder* builder, HloOpcode opcode, const Shape& shape,
                           absl::Span<const XlaOp> operands, Init&& init) {
  AXLE_ASSIGN_OR_RETURN(std::vector<HloInstruction*> instructions,
                        builder->LookUpInstructions(operands));
  auto instruction = std::make_unique<T>(opcode, shape, instructions);
  init(instruction.get());
  return builder->AddInstruction(std::move(instruction));
}
// A plain instruction (an opcode without attributes).
absl::StatusOr<XlaOp> Emit(XlaBuilder* builder, HloOpcode opcode, const Shape& shape,
                           absl::Span<const XlaOp> operands);

// Checks a shape the user passed in (element type, sizes, layout) and
// returns it with default layouts where it has none.
absl::StatusOr<Shape> ValidatedShape(const Shape& shape);

// XLA's InDimBroadcast: a broadcast instruction to `shape`.
absl::StatusOr<XlaOp> InDimBroadcast(XlaBuilder* builder, const Shape& shape, XlaOp operand,
                                     absl::Span<const int64_t> broadcast_dimensions);
// XLA's AddBroadcastSequence: broadcasts a scalar, or an operand of the
// output's rank whose differing dimensions are 1, to `output_shape`'s
// dimensions (keeping its element type).
absl::StatusOr<XlaOp> AddBroadcastSequence(XlaBuilder* builder, const Shape& output_shape,
                                           XlaOp operand);

// A window from per-dimension sizes, strides, (low, high) padding and
// dilations; empty dilation spans mean 1. The spans must have equal sizes.
absl::StatusOr<Window> MakeWindow(absl::Span<const int64_t> window_dimensions,
                                  absl::Span<const int64_t> window_strides,
                                  absl::Span<const std::pair<int64_t, int64_t>> padding,
                                  absl::Span<const int64_t> lhs_dilation,
                                  absl::Span<const int64_t> rhs_dilation,
                                  const std::optional<std::vector<bool>>& window_reversal = {});

// Attributes shared by every custom-call variant.
struct CustomCallSpec {
  std::string target;
  Shape shape;
  std::string opaque;
  bool has_side_effect = false;
  std::vector<OutputOperandAlias> aliasing;
  const Literal* literal = nullptr;
  CustomCallSchedule schedule = SCHEDULE_NONE;
  CustomCallApiVersion api_version = API_VERSION_ORIGINAL;
  std::optional<std::vector<Shape>> operand_shapes_with_layout;
  const XlaComputation* computation = nullptr;
  std::optional<Window> window;
  std::optional<ConvolutionDimensionNumbers> dnums;
};
absl::StatusOr<XlaOp> EmitCustomCall(XlaBuilder* builder, absl::Span<const XlaOp> operands,
                                     const CustomCallSpec& spec);

}  // namespace axle::builder_internal

#endif  // AXLE_BUILDER_XLA_BUILDER_INTERNAL_H_
