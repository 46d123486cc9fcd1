//===- shape_inference_elementwise.cc - Elementwise ops, convert, map ------===//
//
// Unary and binary arithmetic (with XLA's degenerate and in-dimension
// broadcasting for client-level binary ops), clamp, select, tuple, sort,
// convert, bitcast-convert, stochastic-convert, reduce-precision and map.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {
namespace {

using namespace shape_inference_internal;  // NOLINT

std::string OpName(HloOpcode opcode) { return std::string(HloOpcodeString(opcode)); }

// Both operands have the same rank: each pair of sizes must be equal, or one
// of them 1 (or unbounded); the result takes the other.
absl::StatusOr<Shape> InferDegenerateDimensionBroadcastShape(HloOpcode opcode, const Shape& lhs,
                                                             const Shape& rhs) {
  std::vector<int64_t> dims(lhs.rank());
  std::vector<bool> dynamic(lhs.rank());
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    int64_t l = lhs.dimensions(i), r = rhs.dimensions(i);
    if (l == 1 || lhs.is_unbounded_dynamic_dimension(i)) {
      dims[i] = r;
    } else if (l == r || r == 1 || rhs.is_unbounded_dynamic_dimension(i)) {
      dims[i] = l;
    } else {
      return InvalidArgument("Binary op ", OpName(opcode), " with incompatible shapes: ", Str(lhs),
                             " and ", Str(rhs), ".");
    }
    dynamic[i] = lhs.is_dynamic_dimension(i) || rhs.is_dynamic_dimension(i);
  }
  return MakeArray(HigherPrecisionElementType(lhs, rhs), dims, dynamic);
}

// The lower-rank operand's dimension i lines up with dimension
// broadcast_dimensions[i] of the higher-rank one.
absl::StatusOr<Shape> InferInDimBroadcastShape(HloOpcode opcode, const Shape& smaller,
                                               const Shape& larger,
                                               absl::Span<const int64_t> broadcast_dimensions) {
  if (broadcast_dimensions.empty() && !smaller.IsScalar()) {
    return InvalidArgument("Binary op ", OpName(opcode), ": shapes must be equal rank, but are ",
                           Str(smaller), " and ", Str(larger), ".");
  }
  if (static_cast<int64_t>(broadcast_dimensions.size()) != smaller.rank()) {
    return InvalidArgument("Binary op ", OpName(opcode),
                           ": size of broadcast_dimensions has to match the lower-rank operand's "
                           "rank; lower-rank operand's rank is ",
                           smaller.rank(), ", size of broadcast_dimensions is ",
                           broadcast_dimensions.size(), ".");
  }
  Shape output = larger;
  output.set_element_type(HigherPrecisionElementType(larger, smaller));
  for (int64_t i = 0; i < smaller.rank(); ++i) {
    int64_t to = broadcast_dimensions[i];
    if (to < 0 || to >= larger.rank()) {
      return InvalidArgument("Binary op ", OpName(opcode), ": broadcast dimension number (", to,
                             ") is out of range for the higher-rank operand of rank ",
                             larger.rank(), ".");
    }
    if (i > 0 && broadcast_dimensions[i - 1] >= to) {
      return InvalidArgument("Binary op ", OpName(opcode),
                             ": broadcast dimensions order is wrong: ", to, " comes after ",
                             broadcast_dimensions[i - 1], ".");
    }
    int64_t small_size = smaller.dimensions(i), large_size = larger.dimensions(to);
    if (small_size != large_size && small_size != 1 && large_size != 1 &&
        !smaller.is_unbounded_dynamic_dimension(i) && !larger.is_unbounded_dynamic_dimension(to)) {
      return InvalidArgument("Binary op ", OpName(opcode), ": broadcast dimension ", i,
                             " mismatch: ", small_size, " != ", large_size, "; ", Str(smaller),
                             " and ", Str(larger), ".");
    }
    output.set_dimensions(to, small_size);
    output.set_dynamic_dimension(to, smaller.is_dynamic_dimension(i));
  }
  return output;
}

absl::StatusOr<Shape> InferElementwiseBinaryOpShape(HloOpcode opcode, const Shape& lhs,
                                                    const Shape& rhs,
                                                    absl::Span<const int64_t> broadcast_dims) {
  if (!SameElementTypeIgnoringFpPrecision(lhs, rhs)) {
    return InvalidArgument("Binary op ", OpName(opcode),
                           " with different element types: ", Str(lhs), " and ", Str(rhs), ".");
  }
  if (lhs.rank() == rhs.rank() && !broadcast_dims.empty()) {
    for (int64_t i = 0; i < static_cast<int64_t>(broadcast_dims.size()); ++i) {
      if (broadcast_dims[i] != i || static_cast<int64_t>(broadcast_dims.size()) != lhs.rank()) {
        return InvalidArgument("Binary op ", OpName(opcode),
                               ": broadcast_dimensions must be empty or the identity for operands "
                               "of the same rank; got ",
                               Str(broadcast_dims), ".");
      }
    }
  }
  if (lhs.rank() == rhs.rank()) return InferDegenerateDimensionBroadcastShape(opcode, lhs, rhs);
  const Shape& larger = lhs.rank() > rhs.rank() ? lhs : rhs;
  const Shape& smaller = lhs.rank() > rhs.rank() ? rhs : lhs;
  auto in_dim = InferInDimBroadcastShape(opcode, smaller, larger, broadcast_dims);
  if (!in_dim.ok()) return in_dim.status();
  return InferDegenerateDimensionBroadcastShape(opcode, *in_dim, larger);
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferUnaryOpShape(HloOpcode opcode, const Shape& shape) {
  if (opcode == HloOpcode::kCopy || opcode == HloOpcode::kDomain ||
      opcode == HloOpcode::kOptimizationBarrier) {
    return shape;
  }
  if (auto s = ExpectArray(shape, absl::StrCat("operand of ", OpName(opcode))); !s.ok()) return s;
  const std::string type = Str(shape.element_type());
  // The transcendental functions (sin, exp, erf, ...).
  if (HloOpcodeIsTranscendental(opcode) && HloOpcodeArity(opcode) == 1) {
    if (!IsFloat(shape) && !IsComplex(shape)) {
      return InvalidArgument(OpName(opcode), ": expected a floating-point or complex operand; got ",
                             type, ".");
    }
    return shape;
  }
  switch (opcode) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
      if (!IsFloat(shape)) {
        return InvalidArgument(OpName(opcode), ": expected a floating-point operand; got ", type,
                               ".");
      }
      return shape;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (IsComplex(shape)) {
        return ShapeUtil::ChangeElementType(
            shape, primitive_util::ComplexComponentType(shape.element_type()));
      }
      if (IsFloat(shape)) return shape;
      return InvalidArgument(OpName(opcode), ": expected a floating-point or complex operand; got ",
                             type, ".");
    case HloOpcode::kAbs:
      if (IsComplex(shape)) {
        return ShapeUtil::ChangeElementType(
            shape, primitive_util::ComplexComponentType(shape.element_type()));
      }
      if (IsSigned(shape)) return shape;
      return InvalidArgument(OpName(opcode),
                             ": expected a signed, floating-point or complex operand; got ", type,
                             ".");
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
      if (!IsIntegral(shape)) {
        return InvalidArgument(OpName(opcode), ": expected an integral operand; got ", type, ".");
      }
      return shape;
    case HloOpcode::kNegate:
      if (!IsIntegral(shape) && !IsFloat(shape) && !IsComplex(shape)) {
        return InvalidArgument(OpName(opcode),
                               ": expected an integral, floating-point or complex operand; got ",
                               type, ".");
      }
      return shape;
    case HloOpcode::kSign:
      if (!IsSigned(shape) && !IsComplex(shape)) {
        return InvalidArgument(OpName(opcode),
                               ": expected a signed, floating-point or complex operand; got ", type,
                               ".");
      }
      return shape;
    case HloOpcode::kNot:
      if (shape.element_type() != PRED && !IsIntegral(shape)) {
        return InvalidArgument(OpName(opcode), ": expected a pred or integral operand; got ", type,
                               ".");
      }
      return shape;
    case HloOpcode::kIsFinite:
      if (!IsFloat(shape)) {
        return InvalidArgument(OpName(opcode), ": expected a floating-point operand; got ", type,
                               ".");
      }
      return ShapeUtil::ChangeElementType(shape, PRED);
    default:
      return InvalidArgument("Unknown operation for unary shape inference: ", OpName(opcode), ".");
  }
}

absl::StatusOr<Shape> ShapeInference::InferBinaryOpShape(
    HloOpcode opcode, const Shape& lhs, const Shape& rhs,
    absl::Span<const int64_t> broadcast_dimensions) {
  if (auto s = ExpectArray(lhs, absl::StrCat("lhs of ", OpName(opcode))); !s.ok()) return s;
  if (auto s = ExpectArray(rhs, absl::StrCat("rhs of ", OpName(opcode))); !s.ok()) return s;
  switch (opcode) {
    case HloOpcode::kAdd:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
      return InferElementwiseBinaryOpShape(opcode, lhs, rhs, broadcast_dimensions);
    case HloOpcode::kSubtract:
    case HloOpcode::kAtan2:
    case HloOpcode::kPower:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      if (lhs.element_type() == PRED || rhs.element_type() == PRED) {
        return InvalidArgument(OpName(opcode), ": expected arithmetic operands; got pred.");
      }
      return InferElementwiseBinaryOpShape(opcode, lhs, rhs, broadcast_dimensions);
    case HloOpcode::kComplex: {
      if (!IsFloat(lhs)) {
        return InvalidArgument("complex: expected floating-point operands; got ",
                               Str(lhs.element_type()), ".");
      }
      auto shape = InferElementwiseBinaryOpShape(opcode, lhs, rhs, broadcast_dimensions);
      if (!shape.ok()) return shape;
      if (lhs.element_type() == F32 && rhs.element_type() == F32) {
        return ShapeUtil::ChangeElementType(*shape, C64);
      }
      if (lhs.element_type() == F64 && rhs.element_type() == F64) {
        return ShapeUtil::ChangeElementType(*shape, C128);
      }
      return absl::UnimplementedError(
          absl::StrCat("complex: component type ", Str(lhs.element_type()), " is not supported."));
    }
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      if (lhs.element_type() != PRED && !IsIntegral(lhs)) {
        return InvalidArgument(OpName(opcode), ": expected pred or integral operands; got ",
                               Str(lhs.element_type()), ".");
      }
      return InferElementwiseBinaryOpShape(opcode, lhs, rhs, broadcast_dimensions);
    case HloOpcode::kCompare: {
      auto shape = InferElementwiseBinaryOpShape(opcode, lhs, rhs, broadcast_dimensions);
      if (!shape.ok()) return shape;
      return ShapeUtil::ChangeElementType(*shape, PRED);
    }
    default:
      return InvalidArgument("Unknown operation for binary shape inference: ", OpName(opcode), ".");
  }
}

absl::StatusOr<Shape> ShapeInference::InferTernaryOpShape(HloOpcode opcode, const Shape& lhs,
                                                          const Shape& rhs, const Shape& ehs) {
  switch (opcode) {
    case HloOpcode::kClamp:
      return InferClampShape(lhs, rhs, ehs);
    case HloOpcode::kSelect:
      return InferSelectShape(lhs, rhs, ehs);
    default:
      return InvalidArgument("Unknown operation for ternary shape inference: ", OpName(opcode),
                             ".");
  }
}

absl::StatusOr<Shape> ShapeInference::InferClampShape(const Shape& min, const Shape& operand,
                                                      const Shape& max) {
  if (auto s = ExpectArray(min, "clamp min"); !s.ok()) return s;
  if (auto s = ExpectArray(operand, "clamp operand"); !s.ok()) return s;
  if (auto s = ExpectArray(max, "clamp max"); !s.ok()) return s;
  if (!SameElementTypeIgnoringFpPrecision(min, operand) ||
      !SameElementTypeIgnoringFpPrecision(max, operand)) {
    return InvalidArgument("clamp with incompatible element types: ", Str(min), ", ", Str(operand),
                           ", ", Str(max), ".");
  }
  if ((!min.IsScalar() && !CompatibleShapes(min, operand, true)) ||
      (!max.IsScalar() && !CompatibleShapes(max, operand, true))) {
    return InvalidArgument("clamp with incompatible shapes: ", Str(min), ", ", Str(operand), ", ",
                           Str(max), " (min and max must be scalars or have the operand's shape).");
  }
  return operand;
}

absl::StatusOr<Shape> ShapeInference::InferSelectShape(const Shape& pred, const Shape& on_true,
                                                       const Shape& on_false) {
  if (auto s = ExpectArray(pred, "select pred"); !s.ok()) return s;
  if (auto s = ExpectArray(on_true, "select on-true"); !s.ok()) return s;
  if (auto s = ExpectArray(on_false, "select on-false"); !s.ok()) return s;
  if (!CompatibleShapes(on_true, on_false, /*ignore_fp_precision=*/true)) {
    return InvalidArgument("select: on_true and on_false must have the same shape; got ",
                           Str(on_true), " and ", Str(on_false), ".");
  }
  if (pred.element_type() != PRED) {
    return InvalidArgument("select: the predicate must have element type pred; got ", Str(pred),
                           ".");
  }
  if (!SameDimensions(pred, on_true)) {
    return InvalidArgument("select: the predicate and the operands must have the same shape; got ",
                           Str(pred), " and ", Str(on_true), ".");
  }
  return ShapeUtil::ChangeElementType(on_true, HigherPrecisionElementType(on_true, on_false));
}

absl::StatusOr<Shape> ShapeInference::InferVariadicOpShape(
    HloOpcode opcode, absl::Span<const Shape* const> operands) {
  switch (opcode) {
    case HloOpcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* s : operands) elements.push_back(*s);
      return ShapeUtil::MakeTupleShape(std::move(elements));
    }
    case HloOpcode::kSort: {
      if (operands.empty()) return InvalidArgument("sort: expected at least one operand.");
      if (operands.size() == 1) return *operands[0];
      std::vector<Shape> elements;
      for (size_t i = 0; i < operands.size(); ++i) {
        if (!SameDimensions(*operands[0], *operands[i])) {
          return InvalidArgument("sort: keys and values dimensions must match; keys shape is ",
                                 Str(*operands[0]), ", operand ", i, " has shape ",
                                 Str(*operands[i]), ".");
        }
        elements.push_back(*operands[i]);
      }
      return ShapeUtil::MakeTupleShape(std::move(elements));
    }
    default:
      return InvalidArgument("Unknown operation for variadic shape inference: ", OpName(opcode),
                             ".");
  }
}

absl::StatusOr<Shape> ShapeInference::InferConvertShape(const Shape& operand,
                                                        PrimitiveType new_type) {
  if (!operand.IsArray() || !primitive_util::IsArrayType(new_type)) {
    return InvalidArgument("convert does not allow non-arrays, so cannot convert from ",
                           Str(operand), " to ", Str(new_type), ".");
  }
  return ShapeUtil::ChangeElementType(operand, new_type);
}

absl::StatusOr<Shape> ShapeInference::InferBitcastConvertShape(const Shape& operand,
                                                               PrimitiveType new_type) {
  PrimitiveType old_type = operand.element_type();
  if (!operand.IsArray() || !primitive_util::IsArrayType(new_type)) {
    return InvalidArgument("bitcast-convert cannot convert from or to a non-array: ", Str(operand),
                           " => ", Str(new_type), ".");
  }
  if (primitive_util::IsComplexType(old_type) != primitive_util::IsComplexType(new_type)) {
    return InvalidArgument("bitcast-convert between complex and real types: ", Str(operand), " => ",
                           Str(new_type), ".");
  }
  int in_bits = primitive_util::BitWidth(old_type);
  int out_bits = primitive_util::BitWidth(new_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return InvalidArgument("bitcast-convert between types with indivisible bit widths: ",
                           Str(old_type), " => ", Str(new_type), ".");
  }
  int64_t ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  Shape result = ShapeUtil::ChangeElementType(operand, new_type);
  std::vector<int64_t> dims = operand.dimensions();
  std::vector<bool> dynamic = operand.dynamic_dimensions();
  if (in_bits > out_bits) {
    dims.push_back(ratio);
    dynamic.push_back(false);
  } else if (in_bits < out_bits) {
    if (dims.empty() || dims.back() != ratio) {
      return InvalidArgument("bitcast-convert from ", Str(operand), " to ", Str(new_type),
                             ": the last dimension must equal the ratio of bit widths (", ratio,
                             ").");
    }
    dims.pop_back();
    dynamic.pop_back();
  } else {
    return result;
  }
  return MakeArray(new_type, dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferStochasticConvertShape(const Shape& operand,
                                                                  const Shape& random,
                                                                  PrimitiveType new_type) {
  if (auto s = ExpectArray(operand, "lhs of stochastic-convert"); !s.ok()) return s;
  if (auto s = ExpectArray(random, "rhs of stochastic-convert"); !s.ok()) return s;
  if (!primitive_util::IsUnsignedIntegralType(random.element_type())) {
    return InvalidArgument("stochastic-convert: random numbers must be unsigned integers; got ",
                           Str(random), ".");
  }
  if (!IsFloat(operand)) {
    return InvalidArgument("stochastic-convert: the operand must be floating point; got ",
                           Str(operand), ".");
  }
  if (primitive_util::BitWidth(operand.element_type()) !=
      primitive_util::BitWidth(random.element_type())) {
    return InvalidArgument(
        "stochastic-convert: the random numbers must have the operand's bit "
        "width; got ",
        Str(random), " for ", Str(operand), ".");
  }
  if (!CompatibleIgnoringElementType(operand, random)) {
    return InvalidArgument("stochastic-convert: operand shape ", Str(operand),
                           " does not match the random numbers' shape ", Str(random), ".");
  }
  return ShapeUtil::ChangeElementType(operand, new_type);
}

absl::StatusOr<Shape> ShapeInference::InferReducePrecisionShape(const Shape& operand,
                                                                int exponent_bits,
                                                                int mantissa_bits) {
  if (!operand.IsArray() || !IsFloat(operand)) {
    return InvalidArgument("reduce-precision: expected a floating-point operand; got ",
                           Str(operand), ".");
  }
  if (exponent_bits < 1) {
    return InvalidArgument("reduce-precision: expected exponent_bits >= 1; got ", exponent_bits,
                           ".");
  }
  if (mantissa_bits < 0) {
    return InvalidArgument("reduce-precision: expected mantissa_bits >= 0; got ", mantissa_bits,
                           ".");
  }
  return operand;
}

absl::StatusOr<Shape> ShapeInference::InferMapShape(absl::Span<const Shape* const> operands,
                                                    const ProgramShape& to_apply,
                                                    absl::Span<const int64_t> dimensions) {
  if (operands.empty()) return InvalidArgument("map: expected at least one operand.");
  const Shape* arg = operands[0];
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of map"); !st.ok()) return st;
    if (CompatibleIgnoringElementType(*s, *arg)) continue;
    if (SameElementTypeIgnoringFpPrecision(*s, *arg)) {
      if (s->IsScalar()) continue;
      if (arg->IsScalar()) {
        arg = s;
        continue;
      }
    }
    std::vector<std::string> pieces;
    for (const Shape* p : operands) pieces.push_back(Str(*p));
    return InvalidArgument("map: all operands must have the same shape; got ",
                           absl::StrJoin(pieces, ", "), ".");
  }
  if (static_cast<int64_t>(dimensions.size()) != arg->rank()) {
    return InvalidArgument("map: must map over all ", arg->rank(),
                           " dimensions; got dimensions=", Str(dimensions), ".");
  }
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] != static_cast<int64_t>(i)) {
      return InvalidArgument("map: dimensions must be {0,1,...}; got ", Str(dimensions), ".");
    }
  }
  if (operands.size() != to_apply.parameters().size()) {
    return InvalidArgument("map: the mapped computation takes ", to_apply.parameters().size(),
                           " parameters but there are ", operands.size(), " operands.");
  }
  if (!to_apply.result().IsScalar()) {
    return InvalidArgument("map: the mapped computation must return a scalar; got ",
                           Str(to_apply.result()), ".");
  }
  for (size_t i = 0; i < to_apply.parameters().size(); ++i) {
    const Shape& param = to_apply.parameters()[i];
    if (!param.IsScalar()) {
      return InvalidArgument("map: parameter ", i,
                             " of the mapped computation must be a scalar; got ", Str(param), ".");
    }
    if (!SameElementTypeIgnoringFpPrecision(param, *operands[i])) {
      return InvalidArgument("map: parameter ", i, " of the mapped computation (", Str(param),
                             ") does not match the element type of operand ", i, " (",
                             Str(*operands[i]), ").");
    }
  }
  return MakeArray(to_apply.result().element_type(), arg->dimensions(), arg->dynamic_dimensions());
}

}  // namespace axle
