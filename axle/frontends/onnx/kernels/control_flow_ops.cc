//===- control_flow_ops.cc - If, Loop and Scan as HLO Conditional and While -===//
//
// tf2xla's XlaIfOp and XlaWhileOp for ONNX: each subgraph (a GRAPH
// attribute) is compiled by XlaCompiler::CompileSubgraph into its own
// computation on a sub-builder, and the node becomes a Conditional or a
// While. The loader appended the values a subgraph reads from enclosing
// scopes (its captures) to the node's inputs; a capture known at compile
// time is bound as a constant inside the subgraph, any other one is passed
// in the operand tuple.
//
//   If    a constant condition inlines the chosen branch; otherwise a
//         Conditional whose branches must give outputs of the same shapes.
//   Loop  a While over (iteration, trip count, condition, loop-carried
//         values, scan accumulators, captures). Loop-carried values keep
//         their shapes across iterations (the trip count and condition may
//         depend on data); scan outputs, stacked per iteration, need a
//         trip count known at compile time and a condition that stays true.
//         A body with no While form (it needs the iteration number at
//         compile time, as a Slice at it does) unrolls when the trip count
//         is known and at most kMaxUnroll.
//   Scan  a While over batch x sequence: each iteration slices one element
//         of the states and scan inputs, runs the body and writes the new
//         state and the scan outputs back (opset 8's batch dimension; from
//         opset 9 a batch of one, with scan axes and directions).
//
// Sequences and optionals (compile-time lists, see sequence_ops.cc): a
// constant-condition If and an unrolled Loop bind them inline; a runtime If
// passes a sequence output's tensors through the Conditional when both
// branches give the same structure; a Loop that carries a sequence (or
// reads one) unrolls, which needs its trip count at compile time.
//
//===----------------------------------------------------------------------===//
#include <limits>
#include <map>
#include <memory>

#include "absl/strings/match.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

using graph::Graph;
using graph::XlaCompiler;
using graph::XlaExpression;
using graph::XlaOpKernel;
using graph::XlaOpKernelContext;

absl::StatusOr<const Graph*> Subgraph(const XlaOpKernelContext& ctx, const std::string& attr) {
  auto it = ctx.node().attrs.find(attr);
  if (it == ctx.node().attrs.end()) return ctx.Error("attribute '", attr, "' is required");
  const auto* g = std::get_if<std::shared_ptr<const Graph>>(&it->second);
  if (!g || !*g) return ctx.Error("attribute '", attr, "' must be a graph");
  return g->get();
}

// The node input the loader made for capture `name`, or -1.
int CaptureInput(const XlaOpKernelContext& ctx, const std::string& name) {
  const std::vector<std::string>& inputs = ctx.node().inputs;
  for (int i = static_cast<int>(inputs.size()) - 1; i >= 0; --i) {
    if (inputs[i] == name) return i;
  }
  return -1;
}

// The captures of a subgraph: constants to bind directly, and the node
// inputs to pass in the operand tuple.
struct Captures {
  std::map<std::string, XlaExpression> constants;
  // Sequences and optionals: bound only where the subgraph compiles inline
  // (a constant-condition If, an unrolled Loop).
  std::map<std::string, XlaExpression> lists;
  std::vector<std::string> names;  // passed at runtime, in tuple order
  std::vector<int> inputs;         // their node inputs
  std::vector<Shape> shapes;
};

absl::StatusOr<Captures> GetCaptures(const XlaOpKernelContext& ctx, const Graph& g,
                                     const std::string& attr) {
  Captures c;
  for (const std::string& name : g.captures) {
    int i = CaptureInput(ctx, name);
    if (i < 0 || !ctx.HasInput(i)) {
      return ctx.Error("attribute '", attr, "' reads '", name,
                       "', which is not an input of the node");
    }
    if (!ctx.IsTensorInput(i)) {
      c.lists[name] = ctx.InputExpression(i);
    } else if (ctx.IsConstantInput(i)) {
      absl::StatusOr<Literal> value = ctx.ConstantInput(i);
      if (!value.ok()) return value.status();
      c.constants[name] = XlaExpression{ctx.InputShape(i), std::nullopt, std::move(*value)};
    } else {
      c.names.push_back(name);
      c.inputs.push_back(i);
      c.shapes.push_back(ctx.InputShape(i));
    }
  }
  return c;
}

XlaOp AsOp(XlaBuilder* b, const XlaExpression& e) {
  return e.op ? *e.op : ConstantLiteral(b, *e.constant);
}

// A sub-builder cannot read the outer builder's lists.
absl::Status NoLists(const XlaOpKernelContext& ctx, const Captures& caps, const std::string& attr,
                     const char* why) {
  if (caps.lists.empty()) return absl::OkStatus();
  return ctx.Unimplemented("attribute '", attr, "' reads the ",
                           graph::ValueKindName(caps.lists.begin()->second.kind), " '",
                           caps.lists.begin()->first, "', ", why);
}

// The tensors of an expression, depth first (a tensor is its own).
void Leaves(const XlaExpression& e, std::vector<const XlaExpression*>* out) {
  if (e.is_tensor()) {
    out->push_back(&e);
    return;
  }
  for (const XlaExpression& element : e.elements) Leaves(element, out);
}

// Whether two expressions are the same kind of list with the same lengths
// (their tensors' shapes are compared separately).
bool SameStructure(const XlaExpression& a, const XlaExpression& b) {
  if (a.kind != b.kind || a.elements.size() != b.elements.size()) return false;
  for (size_t k = 0; k < a.elements.size(); ++k) {
    if (!SameStructure(a.elements[k], b.elements[k])) return false;
  }
  return true;
}

// `like` with its tensors replaced, in Leaves order, by GetTupleElement of
// `tuple` from `*next` on.
XlaExpression Rebuild(const XlaExpression& like, XlaOp tuple, int64_t* next) {
  if (like.is_tensor()) {
    XlaExpression e;
    e.shape = like.shape;
    e.op = GetTupleElement(tuple, (*next)++);
    return e;
  }
  XlaExpression e = like;
  for (XlaExpression& element : e.elements) element = Rebuild(element, tuple, next);
  return e;
}

XlaOp ScalarPred(XlaOp op, const Shape& shape) {
  XlaOp scalar = shape.rank() == 0 ? op : Reshape(op, {});
  return shape.element_type() == PRED ? scalar : ConvertElementType(scalar, PRED);
}

// A one-element boolean (or number) known at compile time, as a bool.
absl::StatusOr<bool> ConstantBool(const XlaOpKernelContext& ctx, int i) {
  absl::StatusOr<Literal> v = ctx.ConstantInput(i);
  if (!v.ok()) return v.status();
  std::optional<int64_t> x = v->GetIntegralAsS64(0);
  if (x) return *x != 0;
  return ctx.Error("input ", i, " must be a boolean, got ", v->shape().ToString(false));
}

absl::Status CheckOutputs(const XlaOpKernelContext& ctx, const Graph& g, const std::string& attr,
                          size_t want) {
  if (g.outputs.size() != want) {
    return ctx.Error("attribute '", attr, "' has ", g.outputs.size(), " outputs but ", want,
                     " are needed");
  }
  return absl::OkStatus();
}

absl::Status WithAttr(const XlaOpKernelContext& ctx, const std::string& attr,
                      const absl::Status& s) {
  if (s.ok() || absl::StrContains(s.message(), ctx.node().Describe())) return s;
  return absl::Status(
      s.code(), absl::StrCat(ctx.node().Describe(), ": in attribute '", attr, "': ", s.message()));
}

class IfOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const char* attrs[2] = {"then_branch", "else_branch"};
    const Graph* branches[2];
    for (int k = 0; k < 2; ++k) {
      absl::StatusOr<const Graph*> g = Subgraph(*ctx, attrs[k]);
      if (!g.ok()) return g.status();
      branches[k] = *g;
      if (!(*g)->inputs.empty()) {
        return ctx->Error("attribute '", attrs[k], "' must have no inputs, it has ",
                          (*g)->inputs.size());
      }
      if (absl::Status s = CheckOutputs(*ctx, **g, attrs[k], ctx->num_outputs()); !s.ok()) {
        return s;
      }
    }
    if (!ctx->HasInput(0) || ShapeUtil::ElementsIn(ctx->InputShape(0)) != 1) {
      return ctx->Error("the condition must be one boolean");
    }
    XlaCompiler compiler(XlaCompiler::Options{ctx->device_type()});
    if (ctx->IsConstantInput(0)) {
      absl::StatusOr<bool> cond = ConstantBool(*ctx, 0);
      if (!cond.ok()) return cond.status();
      int k = *cond ? 0 : 1;
      absl::StatusOr<Captures> caps = GetCaptures(*ctx, *branches[k], attrs[k]);
      if (!caps.ok()) return caps.status();
      std::map<std::string, XlaExpression> values = caps->constants;
      values.insert(caps->lists.begin(), caps->lists.end());
      for (size_t j = 0; j < caps->names.size(); ++j) {
        values[caps->names[j]] = XlaExpression{caps->shapes[j], ctx->Input(caps->inputs[j]), {}};
      }
      absl::StatusOr<std::vector<XlaExpression>> outs =
          compiler.CompileSubgraph(ctx->builder(), *branches[k], std::move(values));
      if (!outs.ok()) return WithAttr(*ctx, attrs[k], outs.status());
      for (int i = 0; i < ctx->num_outputs(); ++i) {
        if (ctx->HasOutput(i)) ctx->SetOutputExpression(i, std::move((*outs)[i]));
      }
      return absl::OkStatus();
    }

    XlaComputation computations[2];
    XlaOp operands[2];
    std::vector<Shape> shapes[2];
    // Each branch's outputs (their tensors flattened into the root tuple).
    std::vector<XlaExpression> structure[2];
    for (int k = 0; k < 2; ++k) {
      absl::StatusOr<Captures> caps = GetCaptures(*ctx, *branches[k], attrs[k]);
      if (!caps.ok()) return caps.status();
      if (absl::Status s =
              NoLists(*ctx, *caps, attrs[k],
                      "which a Conditional cannot pass (the condition depends on data)");
          !s.ok()) {
        return s;
      }
      std::unique_ptr<XlaBuilder> sub = ctx->builder()->CreateSubBuilder(attrs[k]);
      XlaOp param = Parameter(sub.get(), 0, ShapeUtil::MakeTupleShape(caps->shapes), "captures");
      std::map<std::string, XlaExpression> values = caps->constants;
      std::vector<XlaOp> outer;
      for (size_t j = 0; j < caps->names.size(); ++j) {
        values[caps->names[j]] =
            XlaExpression{caps->shapes[j], GetTupleElement(param, static_cast<int64_t>(j)), {}};
        outer.push_back(ctx->Input(caps->inputs[j]));
      }
      absl::StatusOr<std::vector<XlaExpression>> outs =
          compiler.CompileSubgraph(sub.get(), *branches[k], std::move(values));
      if (!outs.ok()) return WithAttr(*ctx, attrs[k], outs.status());
      std::vector<XlaOp> roots;
      for (const XlaExpression& e : *outs) {
        std::vector<const XlaExpression*> leaves;
        Leaves(e, &leaves);
        for (const XlaExpression* leaf : leaves) roots.push_back(AsOp(sub.get(), *leaf));
        shapes[k].push_back(e.shape);
      }
      structure[k] = std::move(*outs);
      absl::StatusOr<XlaComputation> c = sub->Build(Tuple(sub.get(), roots));
      if (!c.ok()) return WithAttr(*ctx, attrs[k], c.status());
      computations[k] = std::move(*c);
      operands[k] = Tuple(ctx->builder(), outer);
    }
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if (!SameStructure(structure[0][i], structure[1][i])) {
        return ctx->Unimplemented(
            "output ", i, " is a ", graph::ValueKindName(structure[0][i].kind), " of ",
            structure[0][i].elements.size(), " in then_branch but a ",
            graph::ValueKindName(structure[1][i].kind), " of ", structure[1][i].elements.size(),
            " in else_branch; with a condition that depends on data both must have one structure");
      }
      if (!ShapeUtil::Equal(shapes[0][i], shapes[1][i])) {
        return ctx->Unimplemented("output ", i, " is ", shapes[0][i].ToString(false),
                                  " in then_branch but ", shapes[1][i].ToString(false),
                                  " in else_branch; a Conditional needs both the same");
      }
    }
    XlaOp pred = ScalarPred(ctx->Input(0), ctx->InputShape(0));
    XlaOp result = Conditional(pred, operands[0], computations[0], operands[1], computations[1]);
    int64_t next = 0;
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      XlaExpression e = Rebuild(structure[0][i], result, &next);
      if (ctx->HasOutput(i)) ctx->SetOutputExpression(i, std::move(e));
    }
    return absl::OkStatus();
  }
};

// The While state: iteration, trip count, condition, the N loop-carried
// values, the K scan accumulators, the runtime captures.
constexpr int kFixed = 3;
// The longest loop Loop unrolls when its body has no While form.
constexpr int64_t kMaxUnroll = 64;

// Compiles `trip` iterations of `body` one after another on the node's
// builder, the iteration number a constant each time.
absl::Status Unroll(XlaOpKernelContext* ctx, const Graph& body, const Captures& caps, int64_t trip,
                    int64_t n, int64_t k_scan, const XlaCompiler& compiler) {
  XlaBuilder* b = ctx->builder();
  std::vector<XlaExpression> carried;
  for (int64_t j = 0; j < n; ++j) {
    int i = static_cast<int>(2 + j);
    if (!ctx->IsTensorInput(i)) {
      carried.push_back(ctx->InputExpression(i));
    } else if (ctx->IsConstantInput(i)) {
      absl::StatusOr<Literal> v = ctx->ConstantInput(i);
      if (!v.ok()) return v.status();
      carried.push_back(XlaExpression{ctx->InputShape(i), std::nullopt, std::move(*v)});
    } else {
      carried.push_back(XlaExpression{ctx->InputShape(i), ctx->Input(i), {}});
    }
  }
  std::vector<std::vector<XlaOp>> scans(k_scan);
  std::vector<Shape> scan_shapes(k_scan);
  for (int64_t it = 0; it < trip; ++it) {
    std::map<std::string, XlaExpression> values = caps.constants;
    values.insert(caps.lists.begin(), caps.lists.end());
    for (size_t c = 0; c < caps.names.size(); ++c) {
      values[caps.names[c]] = XlaExpression{caps.shapes[c], ctx->Input(caps.inputs[c]), {}};
    }
    values[body.inputs[0].name] = XlaExpression{ShapeUtil::MakeShape(S64, {}), std::nullopt,
                                                LiteralUtil::CreateR0<int64_t>(it)};
    values[body.inputs[1].name] = XlaExpression{ShapeUtil::MakeShape(PRED, {}), std::nullopt,
                                                LiteralUtil::CreateR0<bool>(true)};
    for (int64_t j = 0; j < n; ++j) values[body.inputs[2 + j].name] = carried[j];
    absl::StatusOr<std::vector<XlaExpression>> outs =
        compiler.CompileSubgraph(b, body, std::move(values));
    if (!outs.ok()) return WithAttr(*ctx, "body", outs.status());
    const XlaExpression& cond = (*outs)[0];
    if (!cond.constant || cond.constant->GetIntegralAsS64(0).value_or(0) == 0) {
      return ctx->Unimplemented("the body's condition may turn false; the loop cannot unroll");
    }
    for (int64_t j = 0; j < n; ++j) carried[j] = (*outs)[1 + j];
    for (int64_t k = 0; k < k_scan; ++k) {
      const XlaExpression& e = (*outs)[1 + n + k];
      if (!e.is_tensor()) return ctx->Unimplemented("scan output ", k, " is not a tensor");
      if (it == 0) scan_shapes[k] = e.shape;
      if (!ShapeUtil::Equal(e.shape, scan_shapes[k])) {
        return ctx->Error("scan output ", k, " is ", scan_shapes[k].ToString(false),
                          " in the first iteration but ", e.shape.ToString(false), " in iteration ",
                          it);
      }
      std::vector<int64_t> dims = {1};
      for (int64_t d : e.shape.dimensions()) dims.push_back(d);
      scans[k].push_back(Reshape(AsOp(b, e), dims));
    }
  }
  if (k_scan > 0 && trip == 0) {
    return ctx->Unimplemented("scan outputs of a loop that runs no iteration");
  }
  for (int o = 0; o < ctx->num_outputs(); ++o) {
    if (!ctx->HasOutput(o)) continue;
    if (o < n) {
      ctx->SetOutputExpression(o, std::move(carried[o]));
    } else {
      ctx->SetOutput(o, ConcatInDim(b, scans[o - n], 0));
    }
  }
  return absl::OkStatus();
}

class LoopOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<const Graph*> body_or = Subgraph(*ctx, "body");
    if (!body_or.ok()) return body_or.status();
    const Graph& body = **body_or;
    int64_t n_body_in = static_cast<int64_t>(body.inputs.size());
    if (n_body_in < 2) {
      return ctx->Error(
          "the body must have at least 2 inputs (iteration number, condition), it has ", n_body_in);
    }
    int64_t n = n_body_in - 2;
    if (ctx->num_inputs() < n_body_in) {
      return ctx->Error("the body takes ", n, " loop-carried values but the node has ",
                        std::max(0, ctx->num_inputs() - 2));
    }
    if (static_cast<int64_t>(body.outputs.size()) < 1 + n) {
      return ctx->Error("the body must have at least ", 1 + n,
                        " outputs (condition and loop-carried values), it has ",
                        body.outputs.size());
    }
    int64_t k_scan = static_cast<int64_t>(body.outputs.size()) - 1 - n;
    if (ctx->num_outputs() > n + k_scan) {
      return ctx->Error("the node has ", ctx->num_outputs(), " outputs but the body gives ",
                        n + k_scan);
    }
    for (int64_t j = 0; j < n; ++j) {
      if (!ctx->HasInput(static_cast<int>(2 + j))) {
        return ctx->Error("loop-carried value ", j, " has no initial value");
      }
    }
    absl::StatusOr<Captures> caps = GetCaptures(*ctx, body, "body");
    if (!caps.ok()) return caps.status();
    XlaBuilder* b = ctx->builder();
    // A loop that carries or reads a sequence or optional has no While form
    // (the list's length may change per iteration): it unrolls.
    bool lists = !caps->lists.empty();
    for (int64_t j = 0; j < n; ++j) lists |= !ctx->IsTensorInput(static_cast<int>(2 + j));
    for (const graph::ValueInfo& out : body.outputs) lists |= out.kind != graph::ValueKind::kTensor;
    if (lists) {
      std::optional<int64_t> trip;
      if (ctx->HasInput(0) && ctx->IsConstantInput(0)) {
        absl::StatusOr<std::vector<int64_t>> v = ctx->ConstantInputAsIntVector(0);
        if (!v.ok()) return v.status();
        if (v->size() != 1) return ctx->Error("the trip count M must be one integer");
        trip = std::max<int64_t>(0, (*v)[0]);
      }
      bool cond_true = true;
      if (ctx->HasInput(1)) {
        if (!ctx->IsConstantInput(1)) {
          cond_true = false;
        } else {
          absl::StatusOr<bool> v = ConstantBool(*ctx, 1);
          if (!v.ok()) return v.status();
          cond_true = *v;
        }
      }
      if (!trip || !cond_true || *trip > kMaxUnroll) {
        return ctx->Unimplemented(
            "the loop carries or reads a sequence or optional, so it unrolls, which needs a trip "
            "count known at compile time (at most ",
            kMaxUnroll, ") and a condition that stays true");
      }
      return Unroll(ctx, body, *caps, *trip, n, k_scan,
                    XlaCompiler(XlaCompiler::Options{ctx->device_type()}));
    }

    std::optional<int64_t> trip;
    XlaOp m = ConstantR0<int64_t>(b, std::numeric_limits<int64_t>::max());
    if (ctx->HasInput(0)) {
      if (ShapeUtil::ElementsIn(ctx->InputShape(0)) != 1) {
        return ctx->Error("the trip count M must be one integer");
      }
      if (ctx->IsConstantInput(0)) {
        absl::StatusOr<std::vector<int64_t>> v = ctx->ConstantInputAsIntVector(0);
        if (!v.ok()) return v.status();
        trip = std::max<int64_t>(0, (*v)[0]);
        m = ConstantR0<int64_t>(b, *trip);
      } else {
        XlaOp in = ctx->Input(0);
        if (ctx->InputShape(0).rank() != 0) in = Reshape(in, {});
        m = ConvertElementType(in, S64);
      }
    }
    bool always_true = true;
    XlaOp cond = ConstantR0<bool>(b, true);
    if (ctx->HasInput(1)) {
      if (ShapeUtil::ElementsIn(ctx->InputShape(1)) != 1) {
        return ctx->Error("the condition must be one boolean");
      }
      if (ctx->IsConstantInput(1)) {
        absl::StatusOr<bool> v = ConstantBool(*ctx, 1);
        if (!v.ok()) return v.status();
        always_true = *v;
      } else {
        always_true = false;
      }
      cond = ScalarPred(ctx->Input(1), ctx->InputShape(1));
    }

    std::vector<XlaOp> init = {ConstantR0<int64_t>(b, 0), m, cond};
    std::vector<Shape> carried;
    for (int64_t j = 0; j < n; ++j) {
      init.push_back(ctx->Input(static_cast<int>(2 + j)));
      carried.push_back(ctx->InputShape(static_cast<int>(2 + j)));
    }
    XlaCompiler compiler(XlaCompiler::Options{ctx->device_type()});

    // Compiles the body on `sub` against a state of `state_shapes` (with
    // `k_acc` accumulators after the carried values).
    auto run_body =
        [&](XlaBuilder* sub, const std::vector<Shape>& state_shapes, int64_t k_acc,
            bool cond_true) -> absl::StatusOr<std::pair<XlaOp, std::vector<XlaExpression>>> {
      XlaOp st = Parameter(sub, 0, ShapeUtil::MakeTupleShape(state_shapes), "state");
      std::map<std::string, XlaExpression> values = caps->constants;
      values[body.inputs[0].name] =
          XlaExpression{ShapeUtil::MakeShape(S64, {}), GetTupleElement(st, 0), {}};
      values[body.inputs[1].name] =
          cond_true ? XlaExpression{ShapeUtil::MakeShape(PRED, {}), std::nullopt,
                                    LiteralUtil::CreateR0<bool>(true)}
                    : XlaExpression{ShapeUtil::MakeShape(PRED, {}), GetTupleElement(st, 2), {}};
      for (int64_t j = 0; j < n; ++j) {
        values[body.inputs[2 + j].name] =
            XlaExpression{carried[j], GetTupleElement(st, kFixed + j), {}};
      }
      for (size_t c = 0; c < caps->names.size(); ++c) {
        values[caps->names[c]] = XlaExpression{
            caps->shapes[c], GetTupleElement(st, kFixed + n + k_acc + static_cast<int64_t>(c)), {}};
      }
      absl::StatusOr<std::vector<XlaExpression>> outs =
          compiler.CompileSubgraph(sub, body, std::move(values));
      if (!outs.ok()) return WithAttr(*ctx, "body", outs.status());
      return std::make_pair(st, std::move(*outs));
    };

    // Pass 1: the shapes the body gives. With the condition bound to true,
    // a body that then gives a constant true keeps it true (by induction).
    std::vector<Shape> state_shapes = {ShapeUtil::MakeShape(S64, {}), ShapeUtil::MakeShape(S64, {}),
                                       ShapeUtil::MakeShape(PRED, {})};
    state_shapes.insert(state_shapes.end(), carried.begin(), carried.end());
    std::vector<Shape> probe_shapes = state_shapes;
    probe_shapes.insert(probe_shapes.end(), caps->shapes.begin(), caps->shapes.end());
    std::vector<Shape> scan_shapes;
    {
      std::unique_ptr<XlaBuilder> probe = b->CreateSubBuilder("loop_probe");
      auto outs = run_body(probe.get(), probe_shapes, 0, always_true);
      if (!outs.ok()) {
        // A body that needs the iteration number at compile time (a Slice
        // at it) has no While form; a short loop of known length unrolls.
        if (trip && *trip <= kMaxUnroll && always_true) {
          absl::Status unrolled = Unroll(ctx, body, *caps, *trip, n, k_scan, compiler);
          if (unrolled.ok()) return unrolled;
        }
        return outs.status();
      }
      const std::vector<XlaExpression>& e = outs->second;
      if (ShapeUtil::ElementsIn(e[0].shape) != 1) {
        return ctx->Error("the body's condition output must be one boolean, it is ",
                          e[0].shape.ToString(false));
      }
      if (!e[0].constant || e[0].constant->GetIntegralAsS64(0).value_or(0) == 0) {
        always_true = false;
      }
      for (int64_t j = 0; j < n; ++j) {
        if (!ShapeUtil::Equal(e[1 + j].shape, carried[j])) {
          return ctx->Unimplemented("loop-carried value ", j, " ('", body.inputs[2 + j].name,
                                    "') is ", carried[j].ToString(false), " on entry but ",
                                    e[1 + j].shape.ToString(false),
                                    " after an iteration; a While needs static shapes");
        }
      }
      for (int64_t k = 0; k < k_scan; ++k) scan_shapes.push_back(e[1 + n + k].shape);
    }
    if (k_scan > 0 && (!trip || !always_true)) {
      return ctx->Unimplemented(
          "scan outputs need a trip count known at compile time and a condition that stays "
          "true (the number of iterations depends on data here)");
    }
    for (int64_t k = 0; k < k_scan; ++k) {
      std::vector<int64_t> dims = {*trip};
      for (int64_t d : scan_shapes[k].dimensions()) dims.push_back(d);
      Shape acc = ShapeUtil::MakeShape(scan_shapes[k].element_type(), dims);
      state_shapes.push_back(acc);
      init.push_back(Broadcast(Zero(b, acc.element_type()), dims));
    }
    state_shapes.insert(state_shapes.end(), caps->shapes.begin(), caps->shapes.end());
    for (int input : caps->inputs) init.push_back(ctx->Input(input));

    // Pass 2: the While's body and condition.
    std::unique_ptr<XlaBuilder> sub = b->CreateSubBuilder("loop_body");
    XlaBuilder* s = sub.get();
    auto outs = run_body(s, state_shapes, k_scan, false);
    if (!outs.ok()) return outs.status();
    XlaOp st = outs->first;
    const std::vector<XlaExpression>& e = outs->second;
    XlaOp i = GetTupleElement(st, 0);
    std::vector<XlaOp> next = {Add(i, ConstantR0<int64_t>(s, 1)), GetTupleElement(st, 1),
                               ScalarPred(AsOp(s, e[0]), e[0].shape)};
    for (int64_t j = 0; j < n; ++j) next.push_back(AsOp(s, e[1 + j]));
    for (int64_t k = 0; k < k_scan; ++k) {
      std::vector<int64_t> dims = {1};
      for (int64_t d : scan_shapes[k].dimensions()) dims.push_back(d);
      std::vector<XlaOp> starts = {i};
      for (int64_t d = 0; d < scan_shapes[k].rank(); ++d)
        starts.push_back(ConstantR0<int64_t>(s, 0));
      next.push_back(DynamicUpdateSlice(GetTupleElement(st, kFixed + n + k),
                                        Reshape(AsOp(s, e[1 + n + k]), dims), starts));
    }
    for (size_t c = 0; c < caps->names.size(); ++c) {
      next.push_back(GetTupleElement(st, kFixed + n + k_scan + static_cast<int64_t>(c)));
    }
    absl::StatusOr<XlaComputation> body_c = s->Build(Tuple(s, next));
    if (!body_c.ok()) return WithAttr(*ctx, "body", body_c.status());

    std::unique_ptr<XlaBuilder> cb = b->CreateSubBuilder("loop_cond");
    XlaOp cst = Parameter(cb.get(), 0, ShapeUtil::MakeTupleShape(state_shapes), "state");
    And(Lt(GetTupleElement(cst, 0), GetTupleElement(cst, 1)), GetTupleElement(cst, 2));
    absl::StatusOr<XlaComputation> cond_c = cb->Build();
    if (!cond_c.ok()) return cond_c.status();

    XlaOp result = While(*cond_c, *body_c, Tuple(b, init));
    for (int o = 0; o < ctx->num_outputs(); ++o) {
      if (ctx->HasOutput(o)) ctx->SetOutput(o, GetTupleElement(result, kFixed + o));
    }
    return absl::OkStatus();
  }
};

std::vector<int64_t> Dims(std::initializer_list<int64_t> front, const Shape& shape, int64_t skip) {
  std::vector<int64_t> dims(front);
  for (int64_t d = skip; d < shape.rank(); ++d) dims.push_back(shape.dimensions(d));
  return dims;
}

std::vector<XlaOp> Zeros(XlaBuilder* b, XlaOp first, int64_t count) {
  std::vector<XlaOp> out = {first};
  for (int64_t d = 0; d < count; ++d) out.push_back(ConstantR0<int64_t>(b, 0));
  return out;
}

// Permutation moving dimension `from` of a rank-`rank` array to `to`.
std::vector<int64_t> MoveAxis(int64_t rank, int64_t from, int64_t to) {
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != from) rest.push_back(d);
  }
  rest.insert(rest.begin() + to, from);
  return rest;
}

// Scan: one While over batch x time (opset 8 has a batch dimension; from
// opset 9 the batch is 1). The state holds the iteration, the N states
// [B, ...], the K scan accumulators [B, T, ...], the M scan inputs
// [B, T, ...] (axis moved first, reversed as asked) and the captures.
class ScanOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<const Graph*> body_or = Subgraph(*ctx, "body");
    if (!body_or.ok()) return body_or.status();
    const Graph& body = **body_or;
    absl::StatusOr<int64_t> m_or = ctx->GetAttrInt("num_scan_inputs");
    if (!m_or.ok()) return m_or.status();
    int64_t m = *m_or;
    int64_t n = static_cast<int64_t>(body.inputs.size()) - m;
    if (m < 1 || n < 0) {
      return ctx->Error("num_scan_inputs is ", m, " but the body has ", body.inputs.size(),
                        " inputs");
    }
    bool batched = ctx->opset() < 9;
    int off = batched ? 1 : 0;
    if (ctx->num_inputs() < off + n + m) {
      return ctx->Error("the body takes ", n + m, " inputs but the node has ",
                        std::max(0, ctx->num_inputs() - off));
    }
    for (int64_t j = 0; j < n + m; ++j) {
      if (!ctx->HasInput(static_cast<int>(off + j)))
        return ctx->Error("input ", off + j, " is missing");
    }
    if (batched && ctx->HasInput(0)) {
      return ctx->Unimplemented("sequence_lens is not supported");
    }
    int64_t k_scan = static_cast<int64_t>(body.outputs.size()) - n;
    if (k_scan < 0) {
      return ctx->Error("the body has ", body.outputs.size(), " outputs but ", n,
                        " states need as many");
    }
    if (ctx->num_outputs() > n + k_scan) {
      return ctx->Error("the node has ", ctx->num_outputs(), " outputs but the body gives ",
                        n + k_scan);
    }
    std::vector<int64_t> in_axes(m, 0), in_dirs(m, 0), out_axes(k_scan, 0), out_dirs(k_scan, 0);
    if (!batched) {
      for (auto [attr, vec] :
           {std::pair<const char*, std::vector<int64_t>*>{"scan_input_axes", &in_axes},
            {"scan_input_directions", &in_dirs},
            {"scan_output_axes", &out_axes},
            {"scan_output_directions", &out_dirs}}) {
        if (!ctx->HasAttr(attr)) continue;
        absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts(attr);
        if (!v.ok()) return v.status();
        if (v->size() != vec->size()) {
          return ctx->Error("attribute '", attr, "' has ", v->size(), " values but ", vec->size(),
                            " are needed");
        }
        *vec = *v;
      }
    } else if (ctx->HasAttr("directions")) {
      absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts("directions");
      if (!v.ok()) return v.status();
      if (static_cast<int64_t>(v->size()) != m)
        return ctx->Error("'directions' needs ", m, " values");
      in_dirs = *v;
    }
    absl::StatusOr<Captures> caps = GetCaptures(*ctx, body, "body");
    if (!caps.ok()) return caps.status();
    if (absl::Status s = NoLists(*ctx, *caps, "body", "which Scan's While cannot pass"); !s.ok()) {
      return s;
    }
    XlaBuilder* b = ctx->builder();

    // States [B, ...] and scan inputs [B, T, ...].
    std::vector<XlaOp> states, xs;
    std::vector<Shape> state_shapes, x_shapes;
    for (int64_t j = 0; j < n; ++j) {
      int i = static_cast<int>(off + j);
      Shape shape = ctx->InputShape(i);
      XlaOp op = ctx->Input(i);
      if (!batched) {
        op = Reshape(op, Dims({1}, shape, 0));
        shape = ShapeUtil::MakeShape(shape.element_type(), Dims({1}, shape, 0));
      }
      if (shape.rank() < 1) return ctx->Error("state ", j, " has no batch dimension");
      states.push_back(op);
      state_shapes.push_back(shape);
    }
    int64_t t_len = -1, batch = batched ? -1 : 1;
    for (int64_t k = 0; k < m; ++k) {
      int i = static_cast<int>(off + n + k);
      Shape shape = ctx->InputShape(i);
      XlaOp op = ctx->Input(i);
      if (!batched) {
        int64_t axis = in_axes[k] < 0 ? in_axes[k] + shape.rank() : in_axes[k];
        if (axis < 0 || axis >= shape.rank()) {
          return ctx->Error("scan input ", k, " has rank ", shape.rank(), "; axis ", in_axes[k],
                            " is out of range");
        }
        if (axis != 0) {
          std::vector<int64_t> perm = MoveAxis(shape.rank(), axis, 0);
          op = Transpose(op, perm);
          std::vector<int64_t> dims(perm.size());
          for (size_t p = 0; p < perm.size(); ++p) dims[p] = shape.dimensions(perm[p]);
          shape = ShapeUtil::MakeShape(shape.element_type(), dims);
        }
        if (in_dirs[k]) op = Rev(op, {0});
        op = Reshape(op, Dims({1}, shape, 0));
        shape = ShapeUtil::MakeShape(shape.element_type(), Dims({1}, shape, 0));
      } else if (in_dirs[k]) {
        if (shape.rank() >= 2) op = Rev(op, {1});
      }
      if (shape.rank() < 2) return ctx->Error("scan input ", k, " has no sequence dimension");
      if (t_len >= 0 && shape.dimensions(1) != t_len) {
        return ctx->Error("scan inputs have different lengths (", t_len, " and ",
                          shape.dimensions(1), ")");
      }
      t_len = shape.dimensions(1);
      batch = shape.dimensions(0);
      xs.push_back(op);
      x_shapes.push_back(shape);
    }
    for (const Shape& s : state_shapes) {
      if (s.dimensions(0) != batch)
        return ctx->Error("the states and scan inputs differ in batch size");
    }
    XlaCompiler compiler(XlaCompiler::Options{ctx->device_type()});

    // Runs the body for element `idx` (b = idx / T, t = idx % T) of `st`.
    auto run_body = [&](XlaBuilder* s, const std::vector<Shape>& shapes, int64_t k_acc)
        -> absl::StatusOr<std::tuple<XlaOp, XlaOp, XlaOp, std::vector<XlaExpression>>> {
      XlaOp st = Parameter(s, 0, ShapeUtil::MakeTupleShape(shapes), "state");
      XlaOp idx = GetTupleElement(st, 0);
      XlaOp t_op = ConstantR0<int64_t>(s, std::max<int64_t>(t_len, 1));
      XlaOp bi = Div(idx, t_op);
      XlaOp ti = Rem(idx, t_op);
      std::map<std::string, XlaExpression> values = caps->constants;
      for (int64_t j = 0; j < n; ++j) {
        const Shape& sh = state_shapes[j];
        XlaOp slice =
            DynamicSlice(GetTupleElement(st, 1 + j), Zeros(s, bi, sh.rank() - 1), Dims({1}, sh, 1));
        Shape one = ShapeUtil::MakeShape(sh.element_type(), Dims({}, sh, 1));
        values[body.inputs[j].name] = XlaExpression{one, Reshape(slice, one.dimensions()), {}};
      }
      for (int64_t k = 0; k < m; ++k) {
        const Shape& sh = x_shapes[k];
        std::vector<XlaOp> starts = Zeros(s, bi, sh.rank() - 1);
        starts[1] = ti;
        XlaOp slice =
            DynamicSlice(GetTupleElement(st, 1 + n + k_acc + k), starts, Dims({1, 1}, sh, 2));
        Shape one = ShapeUtil::MakeShape(sh.element_type(), Dims({}, sh, 2));
        values[body.inputs[n + k].name] = XlaExpression{one, Reshape(slice, one.dimensions()), {}};
      }
      for (size_t c = 0; c < caps->names.size(); ++c) {
        values[caps->names[c]] = XlaExpression{
            caps->shapes[c], GetTupleElement(st, 1 + n + k_acc + m + static_cast<int64_t>(c)), {}};
      }
      absl::StatusOr<std::vector<XlaExpression>> outs =
          compiler.CompileSubgraph(s, body, std::move(values));
      if (!outs.ok()) return WithAttr(*ctx, "body", outs.status());
      return std::make_tuple(st, bi, ti, std::move(*outs));
    };

    std::vector<Shape> shapes = {ShapeUtil::MakeShape(S64, {})};
    shapes.insert(shapes.end(), state_shapes.begin(), state_shapes.end());
    std::vector<Shape> probe_shapes = shapes;
    probe_shapes.insert(probe_shapes.end(), x_shapes.begin(), x_shapes.end());
    probe_shapes.insert(probe_shapes.end(), caps->shapes.begin(), caps->shapes.end());
    std::vector<Shape> scan_shapes;
    {
      std::unique_ptr<XlaBuilder> probe = b->CreateSubBuilder("scan_probe");
      auto outs = run_body(probe.get(), probe_shapes, 0);
      if (!outs.ok()) return outs.status();
      const std::vector<XlaExpression>& e = std::get<3>(*outs);
      for (int64_t j = 0; j < n; ++j) {
        Shape want =
            ShapeUtil::MakeShape(state_shapes[j].element_type(), Dims({}, state_shapes[j], 1));
        if (!ShapeUtil::Equal(e[j].shape, want)) {
          return ctx->Error("state ", j, " ('", body.inputs[j].name, "') is ", want.ToString(false),
                            " but the body gives ", e[j].shape.ToString(false));
        }
      }
      for (int64_t k = 0; k < k_scan; ++k) scan_shapes.push_back(e[n + k].shape);
    }
    std::vector<XlaOp> init = {ConstantR0<int64_t>(b, 0)};
    init.insert(init.end(), states.begin(), states.end());
    for (int64_t k = 0; k < k_scan; ++k) {
      std::vector<int64_t> dims = Dims({batch, t_len}, scan_shapes[k], 0);
      shapes.push_back(ShapeUtil::MakeShape(scan_shapes[k].element_type(), dims));
      init.push_back(Broadcast(Zero(b, scan_shapes[k].element_type()), dims));
    }
    shapes.insert(shapes.end(), x_shapes.begin(), x_shapes.end());
    init.insert(init.end(), xs.begin(), xs.end());
    shapes.insert(shapes.end(), caps->shapes.begin(), caps->shapes.end());
    for (int input : caps->inputs) init.push_back(ctx->Input(input));

    std::unique_ptr<XlaBuilder> sub = b->CreateSubBuilder("scan_body");
    XlaBuilder* s = sub.get();
    auto outs = run_body(s, shapes, k_scan);
    if (!outs.ok()) return outs.status();
    auto& [st, bi, ti, e] = *outs;
    std::vector<XlaOp> next = {Add(GetTupleElement(st, 0), ConstantR0<int64_t>(s, 1))};
    for (int64_t j = 0; j < n; ++j) {
      const Shape& sh = state_shapes[j];
      next.push_back(DynamicUpdateSlice(GetTupleElement(st, 1 + j),
                                        Reshape(AsOp(s, e[j]), Dims({1}, sh, 1)),
                                        Zeros(s, bi, sh.rank() - 1)));
    }
    for (int64_t k = 0; k < k_scan; ++k) {
      std::vector<XlaOp> starts = Zeros(s, bi, scan_shapes[k].rank() + 1);
      starts[1] = ti;
      next.push_back(DynamicUpdateSlice(GetTupleElement(st, 1 + n + k),
                                        Reshape(AsOp(s, e[n + k]), Dims({1, 1}, scan_shapes[k], 0)),
                                        starts));
    }
    for (int64_t r = 1 + n + k_scan; r < static_cast<int64_t>(shapes.size()); ++r) {
      next.push_back(GetTupleElement(st, r));
    }
    absl::StatusOr<XlaComputation> body_c = s->Build(Tuple(s, next));
    if (!body_c.ok()) return WithAttr(*ctx, "body", body_c.status());

    std::unique_ptr<XlaBuilder> cb = b->CreateSubBuilder("scan_cond");
    XlaOp cst = Parameter(cb.get(), 0, ShapeUtil::MakeTupleShape(shapes), "state");
    Lt(GetTupleElement(cst, 0), ConstantR0<int64_t>(cb.get(), batch * t_len));
    absl::StatusOr<XlaComputation> cond_c = cb->Build();
    if (!cond_c.ok()) return cond_c.status();

    XlaOp result = While(*cond_c, *body_c, Tuple(b, init));
    for (int64_t j = 0; j < n && j < ctx->num_outputs(); ++j) {
      if (!ctx->HasOutput(static_cast<int>(j))) continue;
      XlaOp out = GetTupleElement(result, 1 + j);
      if (!batched) out = Reshape(out, Dims({}, state_shapes[j], 1));
      ctx->SetOutput(static_cast<int>(j), out);
    }
    for (int64_t k = 0; k < k_scan && n + k < ctx->num_outputs(); ++k) {
      int o = static_cast<int>(n + k);
      if (!ctx->HasOutput(o)) continue;
      XlaOp out = GetTupleElement(result, 1 + n + k);
      if (!batched) {
        out = Reshape(out, Dims({t_len}, scan_shapes[k], 0));
        if (out_dirs[k]) out = Rev(out, {0});
        int64_t rank = scan_shapes[k].rank() + 1;
        int64_t axis = out_axes[k] < 0 ? out_axes[k] + rank : out_axes[k];
        if (axis < 0 || axis >= rank) {
          return ctx->Error("scan output ", k, " has rank ", rank, "; axis ", out_axes[k],
                            " is out of range");
        }
        if (axis != 0) out = Transpose(out, MoveAxis(rank, 0, axis));
      }
      ctx->SetOutput(o, out);
    }
    return absl::OkStatus();
  }
};

REGISTER_XLA_OP(Name("If").TakesNonTensors(), IfOp);
REGISTER_XLA_OP(Name("Scan").SinceVersion(8), ScanOp);
// The trip count and the initial condition are compile-time constant inputs
// (graph inputs that reach them are specialized on, like Range's), so that
// scan outputs get static shapes; a Loop whose trip count is computed from
// data still compiles, as a While in a later cluster.
REGISTER_XLA_OP(
    Name("Loop").CompileTimeConstantInput(0).CompileTimeConstantInput(1).TakesNonTensors(), LoopOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(control_flow)

}  // namespace axle::onnx
