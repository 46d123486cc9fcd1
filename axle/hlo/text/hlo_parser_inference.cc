//===- hlo_parser_inference.cc - Result shapes the text may leave out -----===//
//
// Where HLO text omits an instruction's shape (`add(x, y)` in a nested
// operand, say), XLA's parser infers it. These are the inferences the parser
// makes itself, with InvalidArgument for operands that do not fit; the full
// shape inference lives in axle/hlo/analysis.
//
//===----------------------------------------------------------------------===//
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

absl::Status InferError(absl::string_view message) { return absl::InvalidArgumentError(message); }

absl::StatusOr<Shape> InferUnary(HloOpcode opcode, const Shape& operand) {
  if (!operand.IsArray()) return InferError("operand must be an array");
  Shape result = operand;
  switch (opcode) {
    case HloOpcode::kAbs:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      result.set_element_type(primitive_util::ComplexComponentType(operand.element_type()));
      break;
    case HloOpcode::kIsFinite:
      result.set_element_type(PRED);
      break;
    default:
      break;
  }
  return result;
}

absl::StatusOr<Shape> InferBinary(HloOpcode opcode, const Shape& lhs, const Shape& rhs) {
  if (!lhs.IsArray() || !rhs.IsArray()) return InferError("operands must be arrays");
  if (!ShapeUtil::SameDimensions(lhs, rhs)) {
    return InferError(absl::StrCat("operand shapes ", ShapeUtil::HumanString(lhs), " and ",
                                   ShapeUtil::HumanString(rhs), " differ"));
  }
  Shape result = lhs;
  if (opcode == HloOpcode::kCompare) result.set_element_type(PRED);
  if (opcode == HloOpcode::kComplex) {
    if (lhs.element_type() == F32)
      result.set_element_type(C64);
    else if (lhs.element_type() == F64)
      result.set_element_type(C128);
    else
      return InferError("complex needs f32 or f64 operands");
  }
  return result;
}

absl::StatusOr<Shape> InferDot(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d) {
  if (!lhs.IsArray() || !rhs.IsArray()) return InferError("dot operands must be arrays");
  auto valid = [](const std::vector<int64_t>& dims, const Shape& s) {
    for (int64_t x : dims) {
      if (x < 0 || x >= s.rank()) return false;
    }
    return true;
  };
  if (!valid(d.lhs_batch_dimensions(), lhs) || !valid(d.lhs_contracting_dimensions(), lhs) ||
      !valid(d.rhs_batch_dimensions(), rhs) || !valid(d.rhs_contracting_dimensions(), rhs)) {
    return InferError("dot dimension numbers out of range");
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch_dimensions()) dims.push_back(lhs.dimensions(b));
  auto append_free = [&](const Shape& s, const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& contracting) {
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), i) == contracting.end()) {
        dims.push_back(s.dimensions(i));
      }
    }
  };
  append_free(lhs, d.lhs_batch_dimensions(), d.lhs_contracting_dimensions());
  append_free(rhs, d.rhs_batch_dimensions(), d.rhs_contracting_dimensions());
  return ShapeUtil::MakeShape(
      primitive_util::HigherPrecisionType(lhs.element_type(), rhs.element_type()), dims);
}

absl::StatusOr<Shape> InferReduce(const Operands& operands, const std::vector<int64_t>& dims) {
  size_t n = operands.size() / 2;
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& input = operands[i]->shape();
    if (!input.IsArray()) return InferError("reduce inputs must be arrays");
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < input.rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(input.dimensions(d));
    }
    for (int64_t d : dims) {
      if (d < 0 || d >= input.rank()) return InferError("reduce dimension out of range");
    }
    results.push_back(ShapeUtil::MakeShape(operands[n + i]->shape().element_type(), kept));
  }
  if (results.size() == 1) return results[0];
  return ShapeUtil::MakeTupleShape(std::move(results));
}

absl::StatusOr<Shape> InferTranspose(const Shape& operand, const std::vector<int64_t>& perm) {
  if (!operand.IsArray() || static_cast<int64_t>(perm.size()) != operand.rank()) {
    return InferError("transpose permutation does not match the operand rank");
  }
  std::vector<int64_t> dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= operand.rank()) return InferError("transpose dimension out of range");
    dims.push_back(operand.dimensions(p));
  }
  return ShapeUtil::MakeShape(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferConcatenate(const Operands& operands, int64_t dimension) {
  if (operands.empty()) return InferError("concatenate needs operands");
  Shape result = operands[0]->shape();
  if (!result.IsArray() || dimension < 0 || dimension >= result.rank()) {
    return InferError("concatenate dimension out of range");
  }
  int64_t size = 0;
  for (HloInstruction* operand : operands) {
    if (operand->shape().rank() != result.rank()) return InferError("concatenate ranks differ");
    size += operand->shape().dimensions(dimension);
  }
  result.set_dimensions(dimension, size);
  return result;
}

absl::StatusOr<Shape> InferPad(const Shape& operand, const PaddingConfig& padding) {
  if (!operand.IsArray() || padding.dimensions_size() != operand.rank()) {
    return InferError("padding config does not match the operand rank");
  }
  Shape result = operand;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const auto& p = padding.dimensions(i);
    int64_t d = operand.dimensions(i);
    int64_t size = d + p.edge_padding_low() + p.edge_padding_high() +
                   std::max<int64_t>(d - 1, 0) * p.interior_padding();
    if (size < 0) return InferError("padded dimension is negative");
    result.set_dimensions(i, size);
  }
  return result;
}

absl::StatusOr<Shape> InferReduceWindow(const Operands& operands, const Window& window) {
  size_t n = operands.size() / 2;
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& in = operands[i]->shape();
    if (!in.IsArray() || window.dimensions_size() != in.rank()) {
      return InferError("the window does not match the operand rank");
    }
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const WindowDimension& w = window.dimensions(d);
      if (w.stride() <= 0 || w.base_dilation() <= 0 || w.window_dilation() <= 0 || w.size() < 0) {
        return InferError("invalid window");
      }
      int64_t base = in.dimensions(d) == 0 ? 0 : (in.dimensions(d) - 1) * w.base_dilation() + 1;
      int64_t padded = base + w.padding_low() + w.padding_high();
      int64_t span = w.size() == 0 ? 0 : (w.size() - 1) * w.window_dilation() + 1;
      dims.push_back(padded < span ? 0 : (padded - span) / w.stride() + 1);
    }
    results.push_back(ShapeUtil::MakeShape(operands[n + i]->shape().element_type(), dims));
  }
  if (results.size() == 1) return results[0];
  return ShapeUtil::MakeTupleShape(std::move(results));
}

}  // namespace hlo_parser_internal
}  // namespace axle
