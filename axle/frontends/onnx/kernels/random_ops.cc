//===- random_ops.cc - ONNX's random generators -----------------------------===//
//
// RandomUniform(Like), RandomNormal(Like), Bernoulli and Multinomial draw
// their bits with rng-bit-generator (Philox-4x32-10, XLA's bits on every
// platform) from a u64[3] state (key, counter, 0):
// - the key is the node's `seed` attribute when it has one (Dropout's too),
//   else a hash of
//   the node's name, so two seeded nodes with one seed draw alike and
//   unseeded nodes differ from each other;
// - the counter is one `rng` draw from the run's engine, which
//   ExecutableRunOptions::rng_seed seeds; Session sets that seed to its run
//   count, so each run draws afresh and a new Session with the same model
//   repeats the same sequence of draws (onnxruntime's seeded behaviour: a
//   seeded generator advances across runs and restarts with the session).
// Floats come from the top mantissa bits ([0, 1) exactly, as
// ((bits >> 9) | 0x3f800000) - 1 for f32); normals by Box-Muller; halfs
// and bfloat16 are drawn as f32 and rounded.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

// FNV-1a of the node's name (its key when it has no seed).
uint64_t NameKey(const graph::Node& node) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : node.name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

absl::StatusOr<uint64_t> KeyOf(const XlaOpKernelContext& ctx) {
  if (!ctx.HasAttr("seed")) return NameKey(ctx.node());
  // A float for the random generators, an int for Dropout.
  absl::StatusOr<float> seed = ctx.GetAttrFloat("seed", 0);
  if (!seed.ok()) {
    absl::StatusOr<int64_t> whole = ctx.GetAttrInt("seed");
    if (!whole.ok()) return seed.status();
    seed = static_cast<float>(*whole);
  }
  if (!std::isfinite(*seed)) return ctx.Error("seed ", *seed, " is not finite");
  // Seeds are whole numbers in practice; a fraction keeps its bits.
  uint32_t bits;
  std::memcpy(&bits, &*seed, sizeof(bits));
  return (static_cast<uint64_t>(static_cast<int64_t>(*seed)) << 32) ^ bits ^ 0x9e3779b97f4a7c15ULL;
}

// `count` random u32 (or u64 when `wide`) values, row-major in `dims`.
absl::StatusOr<XlaOp> RandomBits(const XlaOpKernelContext& ctx, bool wide,
                                 const std::vector<int64_t>& dims) {
  absl::StatusOr<uint64_t> key = KeyOf(ctx);
  if (!key.ok()) return key.status();
  XlaBuilder* b = ctx.builder();
  XlaOp counter = RngUniform(ConstantR0<int64_t>(b, 0),
                             ConstantR0<int64_t>(b, std::numeric_limits<int64_t>::max()),
                             ShapeUtil::MakeShape(S64, {1}));
  XlaOp state = ConcatInDim(b,
                            {ConstantR1<uint64_t>(b, {*key}), ConvertElementType(counter, U64),
                             ConstantR1<uint64_t>(b, {0})},
                            0);
  XlaOp pair = RngBitGenerator(RNG_PHILOX, state, ShapeUtil::MakeShape(wide ? U64 : U32, dims));
  return GetTupleElement(pair, 1);
}

// Uniform on [0, 1) of `type` (f32 or f64, the types arithmetic runs in).
absl::StatusOr<XlaOp> Uniform01(const XlaOpKernelContext& ctx, PrimitiveType type,
                                const std::vector<int64_t>& dims) {
  XlaBuilder* b = ctx.builder();
  const bool wide = type == F64;
  absl::StatusOr<XlaOp> bits = RandomBits(ctx, wide, dims);
  if (!bits.ok()) return bits.status();
  if (wide) {
    XlaOp m = ShiftRightLogical(*bits, Broadcast(ConstantR0<uint64_t>(b, 12), dims));
    m = Or(m, Broadcast(ConstantR0<uint64_t>(b, 0x3ff0000000000000ULL), dims));
    return Sub(BitcastConvertType(m, F64), Broadcast(ConstantR0<double>(b, 1), dims));
  }
  XlaOp m = ShiftRightLogical(*bits, Broadcast(ConstantR0<uint32_t>(b, 9), dims));
  m = Or(m, Broadcast(ConstantR0<uint32_t>(b, 0x3f800000U), dims));
  return Sub(BitcastConvertType(m, F32), Broadcast(ConstantR0<float>(b, 1), dims));
}

// The type draws are computed in for an output of `type`.
PrimitiveType ComputeType(PrimitiveType type) { return type == F64 ? F64 : F32; }

absl::Status CheckFloatOutput(const XlaOpKernelContext& ctx, PrimitiveType type) {
  if (!IsFloat(type)) {
    return ctx.Unimplemented("dtype ", primitive_util::LowercasePrimitiveTypeName(type),
                             " is not a floating-point type");
  }
  return absl::OkStatus();
}

// The output type: attribute `dtype`, else `def`.
absl::StatusOr<PrimitiveType> DtypeAttr(const XlaOpKernelContext& ctx, PrimitiveType def) {
  if (!ctx.HasAttr("dtype")) return def;
  absl::StatusOr<int64_t> number = ctx.GetAttrInt("dtype");
  if (!number.ok()) return number.status();
  absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*number));
  if (!type.ok()) return ctx.Unimplemented("dtype: ", type.status().message());
  return *type;
}

// The output's dimensions and type: RandomX's `shape` attribute, or
// RandomXLike's input.
absl::Status OutputSignature(const XlaOpKernelContext& ctx, std::vector<int64_t>* dims,
                             PrimitiveType* type) {
  const bool like = absl::EndsWith(ctx.node().op_type, "Like");
  if (like) {
    const Shape& in = ctx.InputShape(0);
    dims->assign(in.dimensions().begin(), in.dimensions().end());
  } else {
    absl::StatusOr<std::vector<int64_t>> shape = ctx.GetAttrInts("shape");
    if (!shape.ok()) return shape.status();
    for (int64_t d : *shape) {
      if (d < 0) return ctx.Error("shape has a negative dimension ", d);
    }
    *dims = *shape;
  }
  absl::StatusOr<PrimitiveType> t = DtypeAttr(ctx, like ? ctx.InputType(0) : F32);
  if (!t.ok()) return t.status();
  *type = *t;
  return CheckFloatOutput(ctx, *type);
}

class RandomUniformOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    PrimitiveType type;
    if (absl::Status s = OutputSignature(*ctx, &dims, &type); !s.ok()) return s;
    absl::StatusOr<float> low = ctx->GetAttrFloat("low", 0);
    if (!low.ok()) return low.status();
    absl::StatusOr<float> high = ctx->GetAttrFloat("high", 1);
    if (!high.ok()) return high.status();
    if (!(*low <= *high)) return ctx->Error("low ", *low, " is above high ", *high);
    PrimitiveType compute = ComputeType(type);
    absl::StatusOr<XlaOp> u = Uniform01(*ctx, compute, dims);
    if (!u.ok()) return u.status();
    XlaBuilder* b = ctx->builder();
    XlaOp y = Add(Mul(*u, Broadcast(ScalarLike(b, compute, double{*high} - *low), dims)),
                  Broadcast(ScalarLike(b, compute, *low), dims));
    ctx->SetOutput(0, ConvertElementType(y, type));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("RandomUniform"), RandomUniformOp);
REGISTER_XLA_OP(Name("RandomUniformLike"), RandomUniformOp);

// Standard normals of `type` (f32 or f64) by Box-Muller.
absl::StatusOr<XlaOp> StandardNormal(const XlaOpKernelContext& ctx, PrimitiveType type,
                                     const std::vector<int64_t>& dims) {
  std::vector<int64_t> two = {2};
  two.insert(two.end(), dims.begin(), dims.end());
  absl::StatusOr<XlaOp> u = Uniform01(ctx, type, two);
  if (!u.ok()) return u.status();
  XlaBuilder* b = ctx.builder();
  std::vector<int64_t> start(two.size(), 0), limit = two;
  limit[0] = 1;
  XlaOp u1 = Reshape(Slice(*u, start, limit, std::vector<int64_t>(two.size(), 1)), dims);
  start[0] = 1;
  limit[0] = 2;
  XlaOp u2 = Reshape(Slice(*u, start, limit, std::vector<int64_t>(two.size(), 1)), dims);
  // 1 - u1 is in (0, 1]: its log is finite.
  XlaOp r = Sqrt(Mul(Broadcast(ScalarLike(b, type, -2), dims),
                     Log(Sub(Broadcast(ScalarLike(b, type, 1), dims), u1))));
  XlaOp theta = Mul(Broadcast(ScalarLike(b, type, 2 * M_PI), dims), u2);
  return Mul(r, Cos(theta));
}

class RandomNormalOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    PrimitiveType type;
    if (absl::Status s = OutputSignature(*ctx, &dims, &type); !s.ok()) return s;
    absl::StatusOr<float> mean = ctx->GetAttrFloat("mean", 0);
    if (!mean.ok()) return mean.status();
    absl::StatusOr<float> scale = ctx->GetAttrFloat("scale", 1);
    if (!scale.ok()) return scale.status();
    PrimitiveType compute = ComputeType(type);
    absl::StatusOr<XlaOp> z = StandardNormal(*ctx, compute, dims);
    if (!z.ok()) return z.status();
    XlaBuilder* b = ctx->builder();
    XlaOp y = Add(Mul(*z, Broadcast(ScalarLike(b, compute, *scale), dims)),
                  Broadcast(ScalarLike(b, compute, *mean), dims));
    ctx->SetOutput(0, ConvertElementType(y, type));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("RandomNormal"), RandomNormalOp);
REGISTER_XLA_OP(Name("RandomNormalLike"), RandomNormalOp);

// Bernoulli: y = 1 where U[0, 1) < p, else 0, of `dtype` (the input's type
// by default; any numeric type or bool).
class BernoulliOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& in = ctx->InputShape(0);
    if (!IsFloat(in.element_type())) {
      return ctx->Error("input type ",
                        primitive_util::LowercasePrimitiveTypeName(in.element_type()),
                        " is not a floating-point type");
    }
    absl::StatusOr<PrimitiveType> type = DtypeAttr(*ctx, in.element_type());
    if (!type.ok()) return type.status();
    std::vector<int64_t> dims(in.dimensions().begin(), in.dimensions().end());
    PrimitiveType compute = ComputeType(in.element_type());
    absl::StatusOr<XlaOp> u = Uniform01(*ctx, compute, dims);
    if (!u.ok()) return u.status();
    XlaOp p = ConvertElementType(ctx->Input(0), compute);
    XlaOp hit = Lt(*u, p);
    ctx->SetOutput(0, ConvertElementType(hit, *type));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Bernoulli"), BernoulliOp);

// Multinomial: input [batch, classes] unnormalized log-probabilities;
// output [batch, sample_size] class indices (int32 by default, or int64),
// by inverse CDF: the number of classes whose cumulative probability is at
// most a uniform draw, clamped to the last class.
class MultinomialOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& in = ctx->InputShape(0);
    if (in.rank() != 2 || !IsFloat(in.element_type())) {
      return ctx->Error("input must be a [batch, classes] floating-point tensor, not ",
                        ShapeUtil::HumanString(in));
    }
    absl::StatusOr<int64_t> samples = ctx->GetAttrInt("sample_size", 1);
    if (!samples.ok()) return samples.status();
    if (*samples < 1) return ctx->Error("sample_size ", *samples, " is below 1");
    absl::StatusOr<PrimitiveType> type = DtypeAttr(*ctx, S32);
    if (!type.ok()) return type.status();
    if (*type != S32 && *type != S64) {
      return ctx->Unimplemented("dtype ", primitive_util::LowercasePrimitiveTypeName(*type),
                                " is not int32 or int64");
    }
    const int64_t batch = in.dimensions(0), classes = in.dimensions(1);
    if (classes == 0) return ctx->Error("input has no classes");
    XlaBuilder* b = ctx->builder();
    PrimitiveType compute = ComputeType(in.element_type());
    XlaOp x = ConvertElementType(ctx->Input(0), compute);
    // Softmax over classes, stably.
    XlaOp max = Reduce(x, ReducerInit(b, Reducer::kMax, compute),
                       ReducerComputation(Reducer::kMax, compute), {1});
    XlaOp e = Exp(Sub(x, max, {0}));
    XlaOp sum = Reduce(e, ReducerInit(b, Reducer::kAdd, compute),
                       ReducerComputation(Reducer::kAdd, compute), {1});
    XlaOp p = Div(e, sum, {0});
    // cdf[b, j] = sum over i <= j of p[b, i]: a dot with an upper triangle.
    XlaOp row = Iota(b, ShapeUtil::MakeShape(S32, {classes, classes}), 0);
    XlaOp col = Iota(b, ShapeUtil::MakeShape(S32, {classes, classes}), 1);
    XlaOp upper = ConvertElementType(Le(row, col), compute);
    XlaOp cdf = Dot(p, upper);
    absl::StatusOr<XlaOp> u = Uniform01(*ctx, compute, {batch, *samples});
    if (!u.ok()) return u.status();
    // below[b, s, j] = cdf[b, j] <= u[b, s].
    std::vector<int64_t> cube = {batch, *samples, classes};
    XlaOp below = Le(BroadcastInDim(cdf, cube, {0, 2}), BroadcastInDim(*u, cube, {0, 1}));
    XlaOp count = Reduce(ConvertElementType(below, S32), ReducerInit(b, Reducer::kAdd, S32),
                         ReducerComputation(Reducer::kAdd, S32), {2});
    XlaOp last =
        Broadcast(ConstantR0<int32_t>(b, static_cast<int32_t>(classes - 1)), {batch, *samples});
    ctx->SetOutput(0, ConvertElementType(Min(count, last), *type));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Multinomial"), MultinomialOp);

// Dropout: at inference (and at ratio 0) the identity and a mask of all
// true; in training (opset 12's training_mode input) mask = U[0, 1) >= ratio
// and y = x * mask / (1 - ratio), drawn as above (the seed attribute is
// honoured). ratio and training_mode are compile-time constants.
class DropoutOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    bool training = false;
    if (ctx->opset() >= 12 && ctx->HasInput(2)) {
      absl::StatusOr<Literal> mode = ctx->ConstantInput(2);
      if (!mode.ok()) return mode.status();
      if (mode->element_count() != 1) return ctx->Error("training_mode must hold one value");
      training = mode->GetAsDouble(0) != 0;
    }
    double ratio = 0.5;
    if (training && ctx->HasInput(1)) {
      absl::StatusOr<Literal> r = ctx->ConstantInput(1);
      if (!r.ok()) return r.status();
      if (r->element_count() != 1) return ctx->Error("ratio must hold one value");
      ratio = r->GetAsDouble(0);
    }
    if (ratio < 0 || ratio >= 1) return ctx->Error("ratio ", ratio, " is not in [0, 1)");
    const Shape& x = ctx->InputShape(0);
    std::vector<int64_t> dims(x.dimensions().begin(), x.dimensions().end());
    XlaBuilder* b = ctx->builder();
    XlaOp mask = Broadcast(ConstantR0<bool>(b, true), dims);
    XlaOp y = ctx->Input(0);
    if (training && ratio > 0) {
      PrimitiveType compute = ComputeType(x.element_type());
      absl::StatusOr<XlaOp> u = Uniform01(*ctx, compute, dims);
      if (!u.ok()) return u.status();
      mask = Ge(*u, Broadcast(ScalarLike(b, compute, ratio), dims));
      XlaOp scale = Broadcast(ScalarLike(b, x.element_type(), 1 / (1 - ratio)), dims);
      y = Select(mask, Mul(y, scale), Broadcast(Zero(b, x.element_type()), dims));
    }
    ctx->SetOutput(0, y);
    if (ctx->HasOutput(1)) ctx->SetOutput(1, mask);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Dropout").CompileTimeConstantInput(1).CompileTimeConstantInput(2), DropoutOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(random)

}  // namespace axle::onnx
