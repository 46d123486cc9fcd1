//===- sequence_ops.cc - ONNX sequences and optionals as compile-time lists -===//
//
// tf2xla lowers a TensorList whose length is known at compile time to a list
// of XlaOps; ONNX's sequences and optionals are lowered the same way
// (XlaExpression's `elements`, see xla_op_kernel.h). A sequence's length
// comes from the signature (a sequence input is a tuple of tensors), from
// SequenceConstruct / SequenceEmpty and the inserts and erases after them,
// or from a Loop that unrolls; each of its tensors keeps its own shape.
// Positions (SequenceInsert, SequenceErase) and split sizes
// (SplitToSequence) must therefore be known at compile time: where they
// depend on data the kernel says Unimplemented. SequenceAt at a position
// that depends on data selects among the elements when they all have one
// shape.
//
// Optional, OptionalHasElement and OptionalGetElement work on a list of no
// element or one: whether an optional holds a value is known at compile
// time. Identity forwards any value. SequenceMap compiles its body once per
// element, inline.
//
//===----------------------------------------------------------------------===//
#include <map>

#include "absl/strings/match.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

using graph::Graph;
using graph::ValueKind;
using graph::XlaExpression;

XlaOp AsOp(XlaBuilder* b, const XlaExpression& e) {
  return e.op ? *e.op : ConstantLiteral(b, *e.constant);
}

// Input `i` as a sequence, or an error naming what it is.
absl::StatusOr<const XlaExpression*> SequenceInput(const XlaOpKernelContext& ctx, int i) {
  if (!ctx.HasInput(i)) return ctx.Error("input ", i, " (a sequence) is required");
  const XlaExpression& e = ctx.InputExpression(i);
  if (!e.is_sequence()) {
    return ctx.Error("input ", i, " ('", ctx.node().inputs[i], "') must be a sequence, it is a ",
                     graph::ValueKindName(e.kind));
  }
  return &e;
}

// Input `i` as a tensor, or an error.
absl::Status CheckTensorInput(const XlaOpKernelContext& ctx, int i) {
  if (!ctx.HasInput(i)) return ctx.Error("input ", i, " is required");
  if (!ctx.IsTensorInput(i)) {
    return ctx.Error("input ", i, " ('", ctx.node().inputs[i], "') must be a tensor, it is a ",
                     graph::ValueKindName(ctx.InputExpression(i).kind));
  }
  return absl::OkStatus();
}

// A tensor input as an expression (its constant kept).
XlaExpression TensorExpression(XlaOpKernelContext* ctx, int i) { return ctx->InputExpression(i); }

// A position input known at compile time (a scalar or one-element integer).
absl::StatusOr<int64_t> ConstantPosition(const XlaOpKernelContext& ctx, int i) {
  if (absl::Status s = CheckTensorInput(ctx, i); !s.ok()) return s;
  if (!ctx.IsConstantInput(i)) {
    return ctx.Unimplemented("the position (input ", i, ", '", ctx.node().inputs[i],
                             "') depends on data; a sequence's length and order must be known at "
                             "compile time");
  }
  absl::StatusOr<std::vector<int64_t>> v = ctx.ConstantInputAsIntVector(i);
  if (!v.ok()) return v.status();
  if (v->size() != 1) return ctx.Error("the position must be one integer, got ", v->size());
  return (*v)[0];
}

// SequenceInsert's and SequenceErase's optional position input `i` for a
// sequence of `n` tensors, in [0, n] (insert) or [0, n) (erase), negative
// counting from the back; `def` when the input is omitted.
absl::StatusOr<int64_t> PositionInput(const XlaOpKernelContext& ctx, int i, int64_t n, bool insert,
                                      int64_t def) {
  if (!ctx.HasInput(i)) return def;
  absl::StatusOr<int64_t> p = ConstantPosition(ctx, i);
  if (!p.ok()) return p.status();
  if (*p < -n || *p > (insert ? n : n - 1)) {
    return ctx.Error("position ", *p, " is out of range for ", insert ? "inserting into " : "",
                     "a sequence of ", n, " tensors");
  }
  return *p < 0 ? *p + n : *p;
}

absl::Status CheckElementType(const XlaOpKernelContext& ctx, const XlaExpression& seq,
                              PrimitiveType type) {
  if (seq.element_type != PRIMITIVE_TYPE_INVALID && seq.element_type != type) {
    return ctx.Error("the sequence holds ",
                     primitive_util::LowercasePrimitiveTypeName(seq.element_type), " tensors, not ",
                     primitive_util::LowercasePrimitiveTypeName(type));
  }
  return absl::OkStatus();
}

// A kernel whose input 0 is a sequence.
class SequenceKernel : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) final {
    absl::StatusOr<const XlaExpression*> seq = SequenceInput(*ctx, 0);
    if (!seq.ok()) return seq.status();
    return CompileWith(ctx, **seq);
  }
  virtual absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) = 0;
};

class SequenceConstructOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (ctx->num_inputs() == 0) return ctx->Error("needs at least one input");
    std::vector<XlaExpression> elements;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (absl::Status s = CheckTensorInput(*ctx, i); !s.ok()) return s;
      if (ctx->InputType(i) != ctx->InputType(0)) {
        return ctx->Error("input ", i, " is ", ctx->InputShape(i).ToString(false),
                          " but input 0 is ", ctx->InputShape(0).ToString(false),
                          "; a sequence has one element type");
      }
      elements.push_back(TensorExpression(ctx, i));
    }
    ctx->SetOutputExpression(0, XlaExpression::Sequence(std::move(elements), ctx->InputType(0)));
    return absl::OkStatus();
  }
};

class SequenceEmptyOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> dtype = ctx->GetAttrInt("dtype", 1);  // FLOAT
    if (!dtype.ok()) return dtype.status();
    absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*dtype));
    if (!type.ok()) return ctx->Error("attribute 'dtype': ", type.status().message());
    ctx->SetOutputExpression(0, XlaExpression::Sequence({}, *type));
    return absl::OkStatus();
  }
};

class SequenceLengthOp : public SequenceKernel {
 public:
  absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) override {
    ctx->SetConstantOutput(
        0, LiteralUtil::CreateR0<int64_t>(static_cast<int64_t>(seq.elements.size())));
    return absl::OkStatus();
  }
};

class SequenceAtOp : public SequenceKernel {
 public:
  absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) override {
    if (absl::Status s = CheckTensorInput(*ctx, 1); !s.ok()) return s;
    int64_t n = static_cast<int64_t>(seq.elements.size());
    if (ctx->IsConstantInput(1)) {
      absl::StatusOr<int64_t> pos = ConstantPosition(*ctx, 1);
      if (!pos.ok()) return pos.status();
      if (*pos < -n || *pos >= n) {
        return ctx->Error("position ", *pos, " is out of range for a sequence of ", n, " tensors");
      }
      ctx->SetOutputExpression(0, seq.elements[*pos < 0 ? *pos + n : *pos]);
      return absl::OkStatus();
    }
    // A position that depends on data: a select among elements of one shape.
    if (n == 0) return ctx->Error("the sequence is empty");
    for (int64_t k = 1; k < n; ++k) {
      if (!ShapeUtil::Equal(seq.elements[k].shape, seq.elements[0].shape)) {
        return ctx->Unimplemented(
            "the position depends on data and the sequence's tensors have different shapes (",
            seq.elements[0].shape.ToString(false), " and ", seq.elements[k].shape.ToString(false),
            ")");
      }
    }
    if (ShapeUtil::ElementsIn(ctx->InputShape(1)) != 1) {
      return ctx->Error("the position must be one integer, got ",
                        ctx->InputShape(1).ToString(false));
    }
    XlaBuilder* b = ctx->builder();
    XlaOp pos = ConvertElementType(Reshape(ctx->Input(1), {}), S64);
    pos = Select(Lt(pos, ConstantR0<int64_t>(b, 0)), Add(pos, ConstantR0<int64_t>(b, n)), pos);
    // Out of range reads the last element (ONNX leaves it undefined).
    XlaOp out = AsOp(b, seq.elements[n - 1]);
    const Shape& shape = seq.elements[0].shape;
    for (int64_t k = n - 2; k >= 0; --k) {
      XlaOp hit =
          Broadcast(Eq(pos, ConstantR0<int64_t>(b, k)),
                    std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end()));
      out = Select(hit, AsOp(b, seq.elements[k]), out);
    }
    ctx->SetOutput(0, out);
    return absl::OkStatus();
  }
};

class SequenceInsertOp : public SequenceKernel {
 public:
  absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) override {
    if (absl::Status s = CheckTensorInput(*ctx, 1); !s.ok()) return s;
    if (absl::Status s = CheckElementType(*ctx, seq, ctx->InputType(1)); !s.ok()) return s;
    int64_t n = static_cast<int64_t>(seq.elements.size());
    absl::StatusOr<int64_t> pos = PositionInput(*ctx, 2, n, /*insert=*/true, n);
    if (!pos.ok()) return pos.status();
    std::vector<XlaExpression> elements = seq.elements;
    elements.insert(elements.begin() + *pos, TensorExpression(ctx, 1));
    ctx->SetOutputExpression(0, XlaExpression::Sequence(std::move(elements), ctx->InputType(1)));
    return absl::OkStatus();
  }
};

class SequenceEraseOp : public SequenceKernel {
 public:
  absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) override {
    int64_t n = static_cast<int64_t>(seq.elements.size());
    if (n == 0) return ctx->Error("cannot erase from an empty sequence");
    absl::StatusOr<int64_t> pos = PositionInput(*ctx, 1, n, /*insert=*/false, n - 1);
    if (!pos.ok()) return pos.status();
    std::vector<XlaExpression> elements = seq.elements;
    elements.erase(elements.begin() + *pos);
    ctx->SetOutputExpression(0, XlaExpression::Sequence(std::move(elements), seq.element_type));
    return absl::OkStatus();
  }
};

class SplitToSequenceOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (absl::Status s = CheckTensorInput(*ctx, 0); !s.ok()) return s;
    const Shape& shape = ctx->InputShape(0);
    absl::StatusOr<int64_t> axis = AxisAttr(*ctx, 0, shape.rank());
    if (!axis.ok()) return axis.status();
    absl::StatusOr<int64_t> keepdims = ctx->GetAttrInt("keepdims", 1);
    if (!keepdims.ok()) return keepdims.status();
    int64_t dim = shape.dimensions(*axis);
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (!ctx->HasInput(1)) {
      sizes.assign(dim, 1);
      squeeze = *keepdims == 0;
    } else {
      if (absl::Status s = CheckTensorInput(*ctx, 1); !s.ok()) return s;
      if (!ctx->IsConstantInput(1)) {
        return ctx->Unimplemented(
            "the split sizes depend on data; a sequence's length must be known at compile time");
      }
      absl::StatusOr<std::vector<int64_t>> split = ctx->ConstantInputAsIntVector(1);
      if (!split.ok()) return split.status();
      if (ctx->InputShape(1).rank() == 0) {
        int64_t chunk = (*split)[0];
        if (chunk <= 0) return ctx->Error("the split size must be positive, got ", chunk);
        for (int64_t start = 0; start < dim; start += chunk) {
          sizes.push_back(std::min(chunk, dim - start));
        }
      } else {
        sizes = *split;
        int64_t total = 0;
        for (int64_t s : sizes) {
          if (s < 0) return ctx->Error("split sizes must not be negative, got ", s);
          total += s;
        }
        if (total != dim) {
          return ctx->Error("the split sizes add up to ", total, " but dimension ", *axis, " is ",
                            dim);
        }
      }
    }
    XlaOp x = ctx->Input(0);
    std::vector<XlaExpression> elements;
    int64_t start = 0;
    for (int64_t size : sizes) {
      XlaOp piece = SliceInDim(x, start, start + size, 1, *axis);
      start += size;
      if (squeeze) {
        std::vector<int64_t> dims;
        for (int64_t d = 0; d < shape.rank(); ++d) {
          if (d != *axis) dims.push_back(shape.dimensions(d));
        }
        piece = Reshape(piece, dims);
      }
      XlaExpression e;
      e.shape = *ctx->builder()->GetShape(piece);
      e.op = piece;
      elements.push_back(std::move(e));
    }
    ctx->SetOutputExpression(0, XlaExpression::Sequence(std::move(elements), shape.element_type()));
    return absl::OkStatus();
  }
};

class ConcatFromSequenceOp : public SequenceKernel {
 public:
  absl::Status CompileWith(XlaOpKernelContext* ctx, const XlaExpression& seq) override {
    if (seq.elements.empty()) return ctx->Error("cannot concatenate an empty sequence");
    absl::StatusOr<int64_t> axis_attr = ctx->GetAttrInt("axis");
    if (!axis_attr.ok()) return axis_attr.status();
    absl::StatusOr<int64_t> new_axis = ctx->GetAttrInt("new_axis", 0);
    if (!new_axis.ok()) return new_axis.status();
    int64_t rank = seq.elements[0].shape.rank();
    absl::StatusOr<int64_t> axis = NormalizeAxis(*ctx, *axis_attr, rank + (*new_axis ? 1 : 0));
    if (!axis.ok()) return axis.status();
    XlaBuilder* b = ctx->builder();
    std::vector<XlaOp> parts;
    for (size_t k = 0; k < seq.elements.size(); ++k) {
      const Shape& s = seq.elements[k].shape;
      if (s.rank() != rank) {
        return ctx->Error("element ", k, " is ", s.ToString(false), " but element 0 is ",
                          seq.elements[0].shape.ToString(false));
      }
      XlaOp part = AsOp(b, seq.elements[k]);
      if (*new_axis) {
        std::vector<int64_t> dims(s.dimensions().begin(), s.dimensions().end());
        dims.insert(dims.begin() + *axis, 1);
        part = Reshape(part, dims);
      }
      parts.push_back(part);
    }
    ctx->SetOutput(0, ConcatInDim(b, parts, *axis));
    return absl::OkStatus();
  }
};

class OptionalOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (ctx->HasInput(0)) {
      const XlaExpression& value = ctx->InputExpression(0);
      if (value.is_optional()) return ctx->Error("the input is already an optional");
      ctx->SetOutputExpression(0, XlaExpression::Optional(value, value.is_sequence()));
      return absl::OkStatus();
    }
    absl::StatusOr<std::string> type = ctx->GetAttrString("type", "");
    if (!type.ok()) return type.status();
    if (type->empty()) return ctx->Error("an Optional without input needs the attribute 'type'");
    bool of_sequence = absl::StartsWith(*type, "seq(");
    if (!of_sequence && !absl::StartsWith(*type, "tensor(")) {
      return ctx->Unimplemented("an optional of ", *type, " (tensors and sequences only)");
    }
    ctx->SetOutputExpression(0, XlaExpression::Optional(std::nullopt, of_sequence));
    return absl::OkStatus();
  }
};

class OptionalHasElementOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    bool has = false;
    if (ctx->HasInput(0)) {
      const XlaExpression& e = ctx->InputExpression(0);
      // From opset 18 a tensor or sequence may be passed: it has a value.
      has = e.is_optional() ? !e.elements.empty() : true;
    }
    ctx->SetConstantOutput(0, LiteralUtil::CreateR0<bool>(has));
    return absl::OkStatus();
  }
};

class OptionalGetElementOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (!ctx->HasInput(0)) return ctx->Error("input 0 is required");
    const XlaExpression& e = ctx->InputExpression(0);
    if (!e.is_optional()) {
      ctx->SetOutputExpression(0, e);  // opset 18: a tensor or sequence is itself
      return absl::OkStatus();
    }
    if (e.elements.empty()) {
      return ctx->Error("the optional input '", ctx->node().inputs[0], "' holds no value");
    }
    ctx->SetOutputExpression(0, e.elements[0]);
    return absl::OkStatus();
  }
};

// Identity forwards any value (a tensor keeps its constant).
class IdentityOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (!ctx->HasInput(0)) return ctx->Error("input 0 is required");
    ctx->SetOutputExpression(0, ctx->InputExpression(0));
    return absl::OkStatus();
  }
};

// SequenceMap: the body, compiled inline once per element of the first
// input; other sequence inputs give their element of the same position,
// tensor inputs are passed whole. Each body output makes a sequence.
class SequenceMapOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    auto it = ctx->node().attrs.find("body");
    const auto* g = it == ctx->node().attrs.end()
                        ? nullptr
                        : std::get_if<std::shared_ptr<const Graph>>(&it->second);
    if (!g || !*g) return ctx->Error("attribute 'body' (a graph) is required");
    const Graph& body = **g;
    int n_in = static_cast<int>(body.inputs.size());
    if (n_in < 1 || ctx->num_inputs() < n_in) {
      return ctx->Error("the body takes ", n_in, " inputs but the node has ", ctx->num_inputs());
    }
    if (static_cast<int>(body.outputs.size()) != ctx->num_outputs()) {
      return ctx->Error("the body has ", body.outputs.size(), " outputs but the node has ",
                        ctx->num_outputs());
    }
    absl::StatusOr<const XlaExpression*> first = SequenceInput(*ctx, 0);
    if (!first.ok()) return first.status();
    size_t n = (*first)->elements.size();
    for (int i = 0; i < n_in; ++i) {
      if (!ctx->HasInput(i)) return ctx->Error("input ", i, " is required");
      const XlaExpression& e = ctx->InputExpression(i);
      if (e.is_optional()) return ctx->Error("input ", i, " must be a tensor or a sequence");
      if (e.is_sequence() && e.elements.size() != n) {
        return ctx->Error("input ", i, " has ", e.elements.size(), " tensors but input 0 has ", n);
      }
    }
    graph::XlaCompiler compiler(graph::XlaCompiler::Options{ctx->device_type()});
    std::vector<std::vector<XlaExpression>> outputs(body.outputs.size());
    for (size_t k = 0; k < n; ++k) {
      std::map<std::string, XlaExpression> values;
      // Captures: the loader appended them to the node's inputs by name.
      for (const std::string& name : body.captures) {
        for (int i = ctx->num_inputs() - 1; i >= n_in; --i) {
          if (ctx->node().inputs[i] == name && ctx->HasInput(i)) {
            values[name] = ctx->InputExpression(i);
            break;
          }
        }
        if (!values.count(name)) {
          return ctx->Error("attribute 'body' reads '", name,
                            "', which is not an input of the node");
        }
      }
      for (int i = 0; i < n_in; ++i) {
        const XlaExpression& e = ctx->InputExpression(i);
        values[body.inputs[i].name] = e.is_sequence() ? e.elements[k] : e;
      }
      absl::StatusOr<std::vector<XlaExpression>> outs =
          compiler.CompileSubgraph(ctx->builder(), body, std::move(values));
      if (!outs.ok()) {
        return absl::Status(outs.status().code(),
                            absl::StrCat(ctx->node().Describe(), ": in attribute 'body' (element ",
                                         k, "): ", outs.status().message()));
      }
      for (size_t m = 0; m < outs->size(); ++m) {
        if (!(*outs)[m].is_tensor()) {
          return ctx->Unimplemented("body output ", m, " is a ",
                                    graph::ValueKindName((*outs)[m].kind),
                                    " (sequences of sequences are not supported)");
        }
        outputs[m].push_back(std::move((*outs)[m]));
      }
    }
    for (int m = 0; m < ctx->num_outputs(); ++m) {
      PrimitiveType type = body.outputs[m].element_type;
      if (!outputs[m].empty()) type = outputs[m][0].shape.element_type();
      ctx->SetOutputExpression(m, XlaExpression::Sequence(std::move(outputs[m]), type));
    }
    return absl::OkStatus();
  }
};

REGISTER_XLA_OP(Name("SequenceConstruct").SinceVersion(11), SequenceConstructOp);
REGISTER_XLA_OP(Name("SequenceEmpty").SinceVersion(11), SequenceEmptyOp);
REGISTER_XLA_OP(Name("SequenceLength").SinceVersion(11).TakesNonTensors().MetadataOnly(),
                SequenceLengthOp);
REGISTER_XLA_OP(Name("SequenceAt").SinceVersion(11).TakesNonTensors(), SequenceAtOp);
// Positions and split sizes fix the sequence's structure: graph inputs that
// reach them are specialized on (the JIT compiles per value, as for Range's
// limits).
REGISTER_XLA_OP(
    Name("SequenceInsert").SinceVersion(11).TakesNonTensors().CompileTimeConstantInput(2),
    SequenceInsertOp);
REGISTER_XLA_OP(
    Name("SequenceErase").SinceVersion(11).TakesNonTensors().CompileTimeConstantInput(1),
    SequenceEraseOp);
REGISTER_XLA_OP(Name("SplitToSequence").SinceVersion(11).CompileTimeConstantInput(1),
                SplitToSequenceOp);
REGISTER_XLA_OP(Name("ConcatFromSequence").SinceVersion(11).TakesNonTensors(),
                ConcatFromSequenceOp);
REGISTER_XLA_OP(Name("SequenceMap").SinceVersion(17).TakesNonTensors(), SequenceMapOp);
REGISTER_XLA_OP(Name("Optional").SinceVersion(15).TakesNonTensors(), OptionalOp);
REGISTER_XLA_OP(Name("OptionalHasElement").SinceVersion(15).TakesNonTensors().MetadataOnly(),
                OptionalHasElementOp);
REGISTER_XLA_OP(Name("OptionalGetElement").SinceVersion(15).TakesNonTensors(),
                OptionalGetElementOp);
REGISTER_XLA_OP(Name("Identity").TakesNonTensors(), IdentityOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(sequence)

}  // namespace axle::onnx
