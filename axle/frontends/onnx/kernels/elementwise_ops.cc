//===- elementwise_ops.cc - ONNX unary, binary and variadic elementwise ops -===//
//
// Unary math (Abs ... Erf), binary arithmetic, comparison and logic with
// numpy broadcasting, the variadic Sum/Mean/Max/Min, Where, Clip, Mod,
// BitShift and PRelu.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

using UnaryFn = XlaOp (*)(XlaOp);
using BinaryFn = XlaOp (*)(XlaOp, XlaOp);

template <UnaryFn kFn>
class UnaryOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    ctx->SetOutput(0, kFn(ctx->Input(0)));
    return absl::OkStatus();
  }
};

XlaOp ReciprocalFn(XlaOp x) {
  return Div(ScalarLike(x.builder(), x.builder()->GetShape(x)->element_type(), 1), x);
}
XlaOp IsNaNFn(XlaOp x) { return Ne(x, x); }
XlaOp ErfFn(XlaOp x) { return Erf(x); }

#define AXLE_UNARY(name, fn) REGISTER_XLA_OP(Name(name), UnaryOp<fn>)
AXLE_UNARY("Abs", Abs);
AXLE_UNARY("Neg", Neg);
AXLE_UNARY("Exp", Exp);
AXLE_UNARY("Log", Log);
AXLE_UNARY("Sqrt", Sqrt);
AXLE_UNARY("Floor", Floor);
AXLE_UNARY("Ceil", Ceil);
AXLE_UNARY("Round", RoundNearestEven);
AXLE_UNARY("Sin", Sin);
AXLE_UNARY("Cos", Cos);
AXLE_UNARY("Tan", Tan);
AXLE_UNARY("Asin", Asin);
AXLE_UNARY("Acos", Acos);
AXLE_UNARY("Atan", Atan);
AXLE_UNARY("Sinh", Sinh);
AXLE_UNARY("Cosh", Cosh);
AXLE_UNARY("Asinh", Asinh);
AXLE_UNARY("Acosh", Acosh);
AXLE_UNARY("Atanh", Atanh);
AXLE_UNARY("Erf", ErfFn);
AXLE_UNARY("Sign", Sign);
AXLE_UNARY("Not", Not);
AXLE_UNARY("Reciprocal", ReciprocalFn);
AXLE_UNARY("IsNaN", IsNaNFn);
#undef AXLE_UNARY

XlaOp AddFn(XlaOp a, XlaOp b) { return Add(a, b); }
XlaOp SubFn(XlaOp a, XlaOp b) { return Sub(a, b); }
XlaOp MulFn(XlaOp a, XlaOp b) { return Mul(a, b); }
XlaOp DivFn(XlaOp a, XlaOp b) { return Div(a, b); }
XlaOp PowFn(XlaOp a, XlaOp b) { return Pow(a, b); }
XlaOp MaxFn(XlaOp a, XlaOp b) { return Max(a, b); }
XlaOp MinFn(XlaOp a, XlaOp b) { return Min(a, b); }
XlaOp EqFn(XlaOp a, XlaOp b) { return Eq(a, b); }
XlaOp LtFn(XlaOp a, XlaOp b) { return Lt(a, b); }
XlaOp GtFn(XlaOp a, XlaOp b) { return Gt(a, b); }
XlaOp LeFn(XlaOp a, XlaOp b) { return Le(a, b); }
XlaOp GeFn(XlaOp a, XlaOp b) { return Ge(a, b); }
XlaOp AndFn(XlaOp a, XlaOp b) { return And(a, b); }
XlaOp OrFn(XlaOp a, XlaOp b) { return Or(a, b); }
XlaOp XorFn(XlaOp a, XlaOp b) { return Xor(a, b); }

// Binary ops; Pow may mix types (the result has the base's type).
template <BinaryFn kFn>
class BinaryOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, {0, 1});
    if (!ops.ok()) return ops.status();
    XlaOp rhs = (*ops)[1];
    if (ctx->InputType(0) != ctx->InputType(1)) {
      if (kFn != PowFn) {
        return ctx->Error(
            "inputs have different element types: ", ctx->InputShape(0).ToString(false), " and ",
            ctx->InputShape(1).ToString(false));
      }
      rhs = ConvertElementType(rhs, ctx->InputType(0));
    }
    ctx->SetOutput(0, kFn((*ops)[0], rhs));
    return absl::OkStatus();
  }
};

#define AXLE_BINARY(name, fn) REGISTER_XLA_OP(Name(name), BinaryOp<fn>)
AXLE_BINARY("Add", AddFn);
AXLE_BINARY("Sub", SubFn);
AXLE_BINARY("Mul", MulFn);
AXLE_BINARY("Div", DivFn);
AXLE_BINARY("Pow", PowFn);
AXLE_BINARY("Equal", EqFn);
AXLE_BINARY("Less", LtFn);
AXLE_BINARY("Greater", GtFn);
AXLE_BINARY("LessOrEqual", LeFn);
AXLE_BINARY("GreaterOrEqual", GeFn);
AXLE_BINARY("And", AndFn);
AXLE_BINARY("Or", OrFn);
AXLE_BINARY("Xor", XorFn);
#undef AXLE_BINARY

// Sum, Mean, Max, Min over any number of broadcast inputs.
template <BinaryFn kFn, bool kMean>
class VariadicOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    std::vector<int> indices;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (ctx->HasInput(i)) indices.push_back(i);
    }
    if (indices.empty()) return ctx->Error("needs at least one input");
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, indices);
    if (!ops.ok()) return ops.status();
    XlaOp acc = (*ops)[0];
    for (size_t i = 1; i < ops->size(); ++i) acc = kFn(acc, (*ops)[i]);
    if (kMean) acc = Div(acc, ScalarLike(ctx->builder(), ctx->InputType(0), indices.size()));
    ctx->SetOutput(0, acc);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Sum"), VariadicOp<AddFn, false>);
REGISTER_XLA_OP(Name("Mean"), VariadicOp<AddFn, true>);
REGISTER_XLA_OP(Name("Max"), VariadicOp<MaxFn, false>);
REGISTER_XLA_OP(Name("Min"), VariadicOp<MinFn, false>);

class WhereOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, {0, 1, 2});
    if (!ops.ok()) return ops.status();
    ctx->SetOutput(0, Select((*ops)[0], (*ops)[1], (*ops)[2]));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Where"), WhereOp);

// Clip: bounds are attributes before opset 11, optional inputs after.
class ClipOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    XlaOp x = ctx->Input(0);
    PrimitiveType type = ctx->InputType(0);
    XlaBuilder* b = ctx->builder();
    if (ctx->opset() < 11) {
      absl::StatusOr<float> lo = ctx->GetAttrFloat("min", -3.402823e+38f);
      absl::StatusOr<float> hi = ctx->GetAttrFloat("max", 3.402823e+38f);
      if (!lo.ok()) return lo.status();
      if (!hi.ok()) return hi.status();
      x = Max(x, ScalarLike(b, type, *lo));
      x = Min(x, ScalarLike(b, type, *hi));
    } else {
      if (ctx->HasInput(1)) x = Max(x, ctx->Input(1));
      if (ctx->HasInput(2)) x = Min(x, ctx->Input(2));
    }
    ctx->SetOutput(0, x);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Clip"), ClipOp);

// Mod: fmod=1 is C's fmod (sign of the dividend), fmod=0 is Python's %
// (sign of the divisor).
class ModOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> fmod = ctx->GetAttrInt("fmod", 0);
    if (!fmod.ok()) return fmod.status();
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, {0, 1});
    if (!ops.ok()) return ops.status();
    XlaOp a = (*ops)[0], d = (*ops)[1];
    XlaOp r = Rem(a, d);
    if (!*fmod) {
      XlaOp zero = ScalarLike(ctx->builder(), ctx->InputType(0), 0);
      XlaOp fix = And(Ne(r, zero), Ne(Lt(r, zero), Lt(d, zero)));
      r = Select(fix, Add(r, d), r);
    }
    ctx->SetOutput(0, r);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Mod"), ModOp);

class BitShiftOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::string> direction = ctx->GetAttrString("direction", "");
    if (!direction.ok()) return direction.status();
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, {0, 1});
    if (!ops.ok()) return ops.status();
    if (*direction == "LEFT") {
      ctx->SetOutput(0, ShiftLeft((*ops)[0], (*ops)[1]));
    } else if (*direction == "RIGHT") {
      ctx->SetOutput(0, ShiftRightLogical((*ops)[0], (*ops)[1]));
    } else {
      return ctx->Error("direction must be LEFT or RIGHT, got '", *direction, "'");
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("BitShift"), BitShiftOp);

class IsInfOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> pos = ctx->GetAttrInt("detect_positive", 1);
    absl::StatusOr<int64_t> neg = ctx->GetAttrInt("detect_negative", 1);
    if (!pos.ok()) return pos.status();
    if (!neg.ok()) return neg.status();
    XlaOp x = ctx->Input(0);
    XlaBuilder* b = ctx->builder();
    PrimitiveType type = ctx->InputType(0);
    XlaOp result = Broadcast(ConstantR0<bool>(b, false), ctx->InputShape(0).dimensions());
    if (*pos) result = Or(result, Eq(x, ScalarLike(b, type, INFINITY)));
    if (*neg) result = Or(result, Eq(x, ScalarLike(b, type, -INFINITY)));
    ctx->SetOutput(0, result);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("IsInf"), IsInfOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(elementwise)

}  // namespace axle::onnx
