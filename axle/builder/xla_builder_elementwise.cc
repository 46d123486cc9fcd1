// Elementwise ops: unary, binary (with XLA's implicit broadcasting),
// comparisons, select/clamp, conversions and the XlaOp operators.
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder.h"
#include "axle/builder/xla_builder_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/shape_inference/shape_inference.h"

namespace axle {

using builder_internal::AddBroadcastSequence;
using builder_internal::BuilderOf;
using builder_internal::Emit;
using builder_internal::InDimBroadcast;
using builder_internal::RunOp;

namespace {

// An op of one operand and no attributes, whose result shape `infer` gives
// from the operand's.
XlaOp OneOperandOp(HloOpcode opcode, XlaOp operand, absl::string_view op_name,
                   absl::FunctionRef<absl::StatusOr<Shape>(const Shape&)> infer) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, op_name, [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, infer(*shape));
    return Emit(b, opcode, result, {operand});
  });
}

XlaOp UnaryOp(HloOpcode opcode, XlaOp operand, absl::string_view op_name) {
  return OneOperandOp(opcode, operand, op_name, [&](const Shape& shape) {
    return ShapeInference::InferUnaryOpShape(opcode, shape);
  });
}

ComparisonType DefaultComparisonType(PrimitiveType type) {
  if (primitive_util::IsFloatingPointType(type) || primitive_util::IsComplexType(type)) {
    return ComparisonType::kFloat;
  }
  if (primitive_util::IsSignedIntegralType(type)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

// XLA's XlaBuilder::BinaryOp. `compare` holds the direction and type of a
// comparison (type kDefault: the element type's default); `total_order`
// asks for the total order when the operands are floats.
struct CompareSpec {
  ComparisonDirection direction;
  ComparisonType type = ComparisonType::kDefault;
  bool total_order = false;
};

XlaOp BinaryOp(HloOpcode opcode, XlaOp lhs, XlaOp rhs,
               absl::Span<const int64_t> broadcast_dimensions, absl::string_view op_name,
               std::optional<CompareSpec> compare = std::nullopt) {
  XlaBuilder* b = BuilderOf({lhs, rhs});
  return RunOp(b, op_name, [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* lhs_shape, b->GetShapePtr(lhs));
    AXLE_ASSIGN_OR_RETURN(const Shape* rhs_shape, b->GetShapePtr(rhs));
    AXLE_ASSIGN_OR_RETURN(Shape shape, ShapeInference::InferBinaryOpShape(
                                           opcode, *lhs_shape, *rhs_shape, broadcast_dimensions));
    if (lhs_shape->element_type() != rhs_shape->element_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operands must have the same element type; got ", ShapeUtil::HumanString(*lhs_shape),
          " and ", ShapeUtil::HumanString(*rhs_shape), " (convert one with ConvertElementType)"));
    }
    XlaOp updated_lhs = lhs;
    XlaOp updated_rhs = rhs;
    if (!broadcast_dimensions.empty() && lhs_shape->rank() != rhs_shape->rank()) {
      // Map the lower-rank operand onto the result's dimensions first.
      const bool broadcast_lhs = lhs_shape->rank() < rhs_shape->rank();
      XlaOp from = broadcast_lhs ? lhs : rhs;
      const Shape& from_shape = broadcast_lhs ? *lhs_shape : *rhs_shape;
      Shape to = ShapeUtil::ChangeElementType(shape, from_shape.element_type());
      for (int64_t from_dim = 0; from_dim < from_shape.rank(); ++from_dim) {
        int64_t to_dim = broadcast_dimensions[from_dim];
        to.set_dimensions(to_dim, from_shape.dimensions(from_dim));
        to.set_dynamic_dimension(to_dim, from_shape.is_dynamic_dimension(from_dim));
      }
      AXLE_ASSIGN_OR_RETURN(XlaOp broadcast, InDimBroadcast(b, to, from, broadcast_dimensions));
      (broadcast_lhs ? updated_lhs : updated_rhs) = broadcast;
    }
    // Then scalars and size-1 dimensions.
    AXLE_ASSIGN_OR_RETURN(const Shape* new_lhs_shape, b->GetShapePtr(updated_lhs));
    AXLE_ASSIGN_OR_RETURN(const Shape* new_rhs_shape, b->GetShapePtr(updated_rhs));
    if (!ShapeUtil::SameDimensions(shape, *new_lhs_shape)) {
      AXLE_ASSIGN_OR_RETURN(updated_lhs, AddBroadcastSequence(b, shape, updated_lhs));
    }
    if (!ShapeUtil::SameDimensions(shape, *new_rhs_shape)) {
      AXLE_ASSIGN_OR_RETURN(updated_rhs, AddBroadcastSequence(b, shape, updated_rhs));
    }
    if (!compare.has_value()) return Emit(b, opcode, shape, {updated_lhs, updated_rhs});
    const PrimitiveType type = lhs_shape->element_type();
    ComparisonType compare_type = compare->type;
    if (compare->total_order && primitive_util::IsFloatingPointType(type)) {
      compare_type = ComparisonType::kFloatTotalOrder;
    }
    if (compare_type == ComparisonType::kFloatTotalOrder &&
        !primitive_util::IsFloatingPointType(type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("a total-order comparison needs floating-point operands; got ",
                       ShapeUtil::HumanString(*lhs_shape)));
    }
    // The element type's default is not printed (kDefault).
    if (compare_type == DefaultComparisonType(type)) compare_type = ComparisonType::kDefault;
    return Emit<HloCompareInstruction>(b, HloOpcode::kCompare, shape, {updated_lhs, updated_rhs},
                                       [&](HloCompareInstruction* instruction) {
                                         instruction->mutable_attrs()->direction =
                                             compare->direction;
                                         instruction->mutable_attrs()->type = compare_type;
                                       });
  });
}

// XLA's TernaryOp: scalar operands broadcast to the non-scalar operands' shape.
XlaOp TernaryOp(HloOpcode opcode, XlaOp a, XlaOp b_op, XlaOp c, absl::string_view op_name) {
  XlaBuilder* b = BuilderOf({a, b_op, c});
  return RunOp(b, op_name, [&]() -> absl::StatusOr<XlaOp> {
    std::vector<XlaOp> ops = {a, b_op, c};
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes,
                          builder_internal::OperandShapes(b, ops));
    const Shape* non_scalar = nullptr;
    for (const Shape* shape : shapes) {
      if (!shape->IsArray() || shape->IsScalar()) continue;
      if (non_scalar == nullptr) {
        non_scalar = shape;
      } else if (!ShapeUtil::SameDimensions(*non_scalar, *shape)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "all non-scalar operands must have the same dimensions; got ",
            ShapeUtil::HumanString(*shapes[0]), ", ", ShapeUtil::HumanString(*shapes[1]), " and ",
            ShapeUtil::HumanString(*shapes[2])));
      }
    }
    if (non_scalar != nullptr) {
      const Shape target = *non_scalar;
      for (int i = 0; i < 3; ++i) {
        if (shapes[i]->IsScalar()) {
          AXLE_ASSIGN_OR_RETURN(ops[i], AddBroadcastSequence(b, target, ops[i]));
        }
      }
      AXLE_ASSIGN_OR_RETURN(shapes, builder_internal::OperandShapes(b, ops));
    }
    AXLE_ASSIGN_OR_RETURN(Shape shape, ShapeInference::InferTernaryOpShape(opcode, *shapes[0],
                                                                           *shapes[1], *shapes[2]));
    return Emit(b, opcode, shape, ops);
  });
}

}  // namespace

// --- Unary -----------------------------------------------------------------------

XlaOp Abs(XlaOp operand) { return UnaryOp(HloOpcode::kAbs, operand, "Abs"); }
XlaOp Neg(XlaOp operand) { return UnaryOp(HloOpcode::kNegate, operand, "Neg"); }
XlaOp Exp(XlaOp operand) { return UnaryOp(HloOpcode::kExp, operand, "Exp"); }
XlaOp Expm1(XlaOp operand) { return UnaryOp(HloOpcode::kExpm1, operand, "Expm1"); }
XlaOp Log(XlaOp operand) { return UnaryOp(HloOpcode::kLog, operand, "Log"); }
XlaOp Log1p(XlaOp operand) { return UnaryOp(HloOpcode::kLog1p, operand, "Log1p"); }
XlaOp Logistic(XlaOp operand) { return UnaryOp(HloOpcode::kLogistic, operand, "Logistic"); }
XlaOp Sqrt(XlaOp operand) { return UnaryOp(HloOpcode::kSqrt, operand, "Sqrt"); }
XlaOp Rsqrt(XlaOp operand) { return UnaryOp(HloOpcode::kRsqrt, operand, "Rsqrt"); }
XlaOp Cbrt(XlaOp operand) { return UnaryOp(HloOpcode::kCbrt, operand, "Cbrt"); }
XlaOp Tanh(XlaOp operand) { return UnaryOp(HloOpcode::kTanh, operand, "Tanh"); }
XlaOp Tan(XlaOp operand) { return UnaryOp(HloOpcode::kTan, operand, "Tan"); }
XlaOp Acos(XlaOp operand) { return UnaryOp(HloOpcode::kAcos, operand, "Acos"); }
XlaOp Acosh(XlaOp operand) { return UnaryOp(HloOpcode::kAcosh, operand, "Acosh"); }
XlaOp Asin(XlaOp operand) { return UnaryOp(HloOpcode::kAsin, operand, "Asin"); }
XlaOp Asinh(XlaOp operand) { return UnaryOp(HloOpcode::kAsinh, operand, "Asinh"); }
XlaOp Atan(XlaOp operand) { return UnaryOp(HloOpcode::kAtan, operand, "Atan"); }
XlaOp Atanh(XlaOp operand) { return UnaryOp(HloOpcode::kAtanh, operand, "Atanh"); }
XlaOp Cosh(XlaOp operand) { return UnaryOp(HloOpcode::kCosh, operand, "Cosh"); }
XlaOp Sinh(XlaOp operand) { return UnaryOp(HloOpcode::kSinh, operand, "Sinh"); }
XlaOp Sin(XlaOp operand) { return UnaryOp(HloOpcode::kSin, operand, "Sin"); }
XlaOp Cos(XlaOp operand) { return UnaryOp(HloOpcode::kCos, operand, "Cos"); }
XlaOp Erf(XlaOp operand) { return UnaryOp(HloOpcode::kErf, operand, "Erf"); }
XlaOp Floor(XlaOp operand) { return UnaryOp(HloOpcode::kFloor, operand, "Floor"); }
XlaOp Ceil(XlaOp operand) { return UnaryOp(HloOpcode::kCeil, operand, "Ceil"); }
XlaOp Round(XlaOp operand) { return UnaryOp(HloOpcode::kRoundNearestAfz, operand, "Round"); }
XlaOp RoundNearestEven(XlaOp operand) {
  return UnaryOp(HloOpcode::kRoundNearestEven, operand, "RoundNearestEven");
}
XlaOp Sign(XlaOp operand) { return UnaryOp(HloOpcode::kSign, operand, "Sign"); }
XlaOp Not(XlaOp operand) { return UnaryOp(HloOpcode::kNot, operand, "Not"); }
XlaOp Clz(XlaOp operand) { return UnaryOp(HloOpcode::kClz, operand, "Clz"); }
XlaOp PopulationCount(XlaOp operand) {
  return UnaryOp(HloOpcode::kPopulationCount, operand, "PopulationCount");
}
XlaOp IsFinite(XlaOp operand) { return UnaryOp(HloOpcode::kIsFinite, operand, "IsFinite"); }
XlaOp Real(XlaOp operand) { return UnaryOp(HloOpcode::kReal, operand, "Real"); }
XlaOp Imag(XlaOp operand) { return UnaryOp(HloOpcode::kImag, operand, "Imag"); }
XlaOp Copy(XlaOp operand) { return UnaryOp(HloOpcode::kCopy, operand, "Copy"); }
XlaOp OptimizationBarrier(XlaOp operand) {
  return UnaryOp(HloOpcode::kOptimizationBarrier, operand, "OptimizationBarrier");
}
XlaOp Conj(XlaOp operand) { return Complex(Real(operand), Neg(Imag(operand))); }
XlaOp Square(XlaOp operand) { return Mul(operand, operand); }

XlaOp ReducePrecision(XlaOp operand, int exponent_bits, int mantissa_bits) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "ReducePrecision", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferReducePrecisionShape(
                                            *shape, exponent_bits, mantissa_bits));
    return Emit<HloReducePrecisionInstruction>(
        b, HloOpcode::kReducePrecision, result, {operand},
        [&](HloReducePrecisionInstruction* instruction) {
          instruction->mutable_attrs()->exponent_bits = exponent_bits;
          instruction->mutable_attrs()->mantissa_bits = mantissa_bits;
        });
  });
}

// --- Binary ------------------------------------------------------------------------

#define AXLE_BINARY_OP_(Name, opcode)                                                \
  XlaOp Name(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions) { \
    return BinaryOp(HloOpcode::opcode, lhs, rhs, broadcast_dimensions, #Name);       \
  }
AXLE_BINARY_OP_(Add, kAdd)
AXLE_BINARY_OP_(Sub, kSubtract)
AXLE_BINARY_OP_(Mul, kMultiply)
AXLE_BINARY_OP_(Div, kDivide)
AXLE_BINARY_OP_(Rem, kRemainder)
AXLE_BINARY_OP_(Max, kMaximum)
AXLE_BINARY_OP_(Min, kMinimum)
AXLE_BINARY_OP_(Pow, kPower)
AXLE_BINARY_OP_(Atan2, kAtan2)
AXLE_BINARY_OP_(Complex, kComplex)
AXLE_BINARY_OP_(And, kAnd)
AXLE_BINARY_OP_(Or, kOr)
AXLE_BINARY_OP_(Xor, kXor)
AXLE_BINARY_OP_(ShiftLeft, kShiftLeft)
AXLE_BINARY_OP_(ShiftRightArithmetic, kShiftRightArithmetic)
AXLE_BINARY_OP_(ShiftRightLogical, kShiftRightLogical)
#undef AXLE_BINARY_OP_

// --- Comparisons -----------------------------------------------------------------------

#define AXLE_COMPARE_OP_(Name, direction)                                                         \
  XlaOp Name(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions) {              \
    return BinaryOp(HloOpcode::kCompare, lhs, rhs, broadcast_dimensions, #Name,                   \
                    CompareSpec{ComparisonDirection::direction});                                 \
  }                                                                                               \
  XlaOp Name##TotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions) {  \
    return BinaryOp(HloOpcode::kCompare, lhs, rhs, broadcast_dimensions, #Name "TotalOrder",      \
                    CompareSpec{ComparisonDirection::direction, ComparisonType::kDefault, true}); \
  }
AXLE_COMPARE_OP_(Eq, kEq)
AXLE_COMPARE_OP_(Ne, kNe)
AXLE_COMPARE_OP_(Ge, kGe)
AXLE_COMPARE_OP_(Gt, kGt)
AXLE_COMPARE_OP_(Lt, kLt)
AXLE_COMPARE_OP_(Le, kLe)
#undef AXLE_COMPARE_OP_

XlaOp Compare(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions,
              ComparisonDirection direction, Comparison::Type compare_type) {
  return BinaryOp(HloOpcode::kCompare, lhs, rhs, broadcast_dimensions, "Compare",
                  CompareSpec{direction, compare_type});
}
XlaOp Compare(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions,
              ComparisonDirection direction) {
  return BinaryOp(HloOpcode::kCompare, lhs, rhs, broadcast_dimensions, "Compare",
                  CompareSpec{direction});
}
XlaOp Compare(XlaOp lhs, XlaOp rhs, ComparisonDirection direction) {
  return Compare(lhs, rhs, {}, direction);
}

// --- Select, clamp, conversions -------------------------------------------------------------

XlaOp Select(XlaOp pred, XlaOp on_true, XlaOp on_false) {
  return TernaryOp(HloOpcode::kSelect, pred, on_true, on_false, "Select");
}
XlaOp Clamp(XlaOp min, XlaOp operand, XlaOp max) {
  return TernaryOp(HloOpcode::kClamp, min, operand, max, "Clamp");
}

XlaOp ConvertElementType(XlaOp operand, PrimitiveType new_element_type) {
  return OneOperandOp(HloOpcode::kConvert, operand, "ConvertElementType", [&](const Shape& shape) {
    return ShapeInference::InferConvertShape(shape, new_element_type);
  });
}

XlaOp BitcastConvertType(XlaOp operand, PrimitiveType new_element_type) {
  return OneOperandOp(HloOpcode::kBitcastConvert, operand, "BitcastConvertType",
                      [&](const Shape& shape) {
                        return ShapeInference::InferBitcastConvertShape(shape, new_element_type);
                      });
}

XlaOp StochasticConvertType(XlaOp operand, XlaOp random, PrimitiveType new_element_type) {
  XlaBuilder* b = BuilderOf({operand, random});
  return RunOp(b, "StochasticConvertType", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(const Shape* random_shape, b->GetShapePtr(random));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferStochasticConvertShape(
                                            *shape, *random_shape, new_element_type));
    return Emit(b, HloOpcode::kStochasticConvert, result, {operand, random});
  });
}

// --- Operators ------------------------------------------------------------------------------

XlaOp operator-(XlaOp x) { return Neg(x); }
XlaOp operator+(XlaOp x, XlaOp y) { return Add(x, y); }
XlaOp operator-(XlaOp x, XlaOp y) { return Sub(x, y); }
XlaOp operator*(XlaOp x, XlaOp y) { return Mul(x, y); }
XlaOp operator/(XlaOp x, XlaOp y) { return Div(x, y); }
XlaOp operator%(XlaOp x, XlaOp y) { return Rem(x, y); }
XlaOp operator~(XlaOp x) { return Not(x); }
XlaOp operator&(XlaOp x, XlaOp y) { return And(x, y); }
XlaOp operator|(XlaOp x, XlaOp y) { return Or(x, y); }
XlaOp operator^(XlaOp x, XlaOp y) { return Xor(x, y); }
XlaOp operator<<(XlaOp x, XlaOp y) { return ShiftLeft(x, y); }
XlaOp operator>>(XlaOp x, XlaOp y) {
  XlaBuilder* b = BuilderOf({x, y});
  return RunOp(b, "operator>>", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(x));
    if (!primitive_util::IsIntegralType(shape->element_type())) {
      return absl::InvalidArgumentError(
          absl::StrCat("shifts need integral operands; got ", ShapeUtil::HumanString(*shape)));
    }
    return primitive_util::IsSignedIntegralType(shape->element_type()) ? ShiftRightArithmetic(x, y)
                                                                       : ShiftRightLogical(x, y);
  });
}

}  // namespace axle
