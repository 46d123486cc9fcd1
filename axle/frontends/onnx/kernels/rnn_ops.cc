//===- rnn_ops.cc - ONNX RNN, GRU, LSTM and ReverseSequence -----------------===//
//
// The recurrent ops as one HLO While loop over all directions. The input
// projection X * W^T + Wb of every time step is one dot per direction
// before the loop; the loop carries (t, H, C, Y, XW, R, Rb, P[, lengths]),
// each but t with the direction as its leading (XW and Y: second)
// dimension, and each step slices XW[t], adds H * R^T (one dot batched over
// the directions) and applies the op's cell to every direction at once, so
// a bidirectional layer costs one loop of T steps, not two. With
// sequence_lens, steps at or past a batch entry's length keep its state and
// write zeros to Y. The reverse direction runs forward over each sequence
// reversed within its length (ReverseSequence's gather) and reverses Y back.
//
//===----------------------------------------------------------------------===//
#include <functional>
#include <optional>

#include "absl/strings/ascii.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// `x` [T, B, ...] with each batch entry b's first lens[b] steps reversed
// (`lens` S64 [B]); the rest stay in place.
XlaOp ReverseWithinLengths(XlaOp x, XlaOp lens, const std::vector<int64_t>& dims) {
  XlaBuilder* b = x.builder();
  std::vector<int64_t> tb = {dims[0], dims[1]};
  Shape s64 = ShapeUtil::MakeShape(S64, tb);
  XlaOp t = Iota(b, s64, 0);
  XlaOp len = BroadcastInDim(lens, tb, {1});
  XlaOp src = Select(Lt(t, len), Sub(Sub(len, t), Broadcast(ConstantR0<int64_t>(b, 1), tb)), t);
  XlaOp idx = ConcatInDim(
      b, {Reshape(src, {dims[0], dims[1], 1}), Reshape(Iota(b, s64, 1), {dims[0], dims[1], 1})}, 2);
  GatherDimensionNumbers dnums;
  std::vector<int64_t> slice_sizes = {1, 1};
  dnums.add_collapsed_slice_dims(0);
  dnums.add_collapsed_slice_dims(1);
  dnums.add_start_index_map(0);
  dnums.add_start_index_map(1);
  for (size_t d = 2; d < dims.size(); ++d) {
    dnums.add_offset_dims(static_cast<int64_t>(d));
    slice_sizes.push_back(dims[d]);
  }
  dnums.set_index_vector_dim(2);
  return Gather(x, idx, dnums, slice_sizes);
}

class ReverseSequenceOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<int64_t> time_axis = ctx->GetAttrInt("time_axis", 0);
    absl::StatusOr<int64_t> batch_axis = ctx->GetAttrInt("batch_axis", 1);
    if (!time_axis.ok()) return time_axis.status();
    if (!batch_axis.ok()) return batch_axis.status();
    if (x.rank() < 2 || *time_axis + *batch_axis != 1 || *time_axis < 0 || *batch_axis < 0) {
      return ctx->Error("time_axis and batch_axis must be 0 and 1 of an input of rank >= 2, got ",
                        *time_axis, ", ", *batch_axis, " for ", x.ToString(false));
    }
    const Shape& lens = ctx->InputShape(1);
    if (lens.rank() != 1 || lens.dimensions(0) != x.dimensions(*batch_axis) ||
        !primitive_util::IsIntegralType(lens.element_type())) {
      return ctx->Error("sequence_lens ", lens.ToString(false), " must hold one integer per batch");
    }
    std::vector<int64_t> perm(x.rank());
    for (int64_t d = 0; d < x.rank(); ++d) perm[d] = d;
    std::swap(perm[0], perm[1]);
    std::vector<int64_t> dims = x.dimensions();
    XlaOp in = ctx->Input(0);
    if (*time_axis == 1) {
      in = Transpose(in, perm);
      std::swap(dims[0], dims[1]);
    }
    XlaOp out = ReverseWithinLengths(in, ConvertElementType(ctx->Input(1), S64), dims);
    ctx->SetOutput(0, *time_axis == 1 ? Transpose(out, perm) : out);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ReverseSequence"), ReverseSequenceOp);

// --- Activations -----------------------------------------------------------

struct Activation {
  std::string name;  // lower case
  float alpha = 0, beta = 0;
};

XlaOp Apply(const Activation& a, XlaOp x, PrimitiveType t, const std::vector<int64_t>& dims) {
  XlaBuilder* b = x.builder();
  auto c = [&](double v) { return Broadcast(ScalarLike(b, t, v), dims); };
  if (a.name == "relu") return Max(x, c(0));
  if (a.name == "tanh") return Tanh(x);
  if (a.name == "sigmoid") return Logistic(x);
  if (a.name == "affine") return Add(Mul(c(a.alpha), x), c(a.beta));
  if (a.name == "leakyrelu") return Select(Lt(x, c(0)), Mul(c(a.alpha), x), x);
  if (a.name == "thresholdedrelu") return Select(Gt(x, c(a.alpha)), x, c(0));
  if (a.name == "scaledtanh") return Mul(c(a.alpha), Tanh(Mul(c(a.beta), x)));
  if (a.name == "hardsigmoid") return Clamp(c(0), Add(Mul(c(a.alpha), x), c(a.beta)), c(1));
  if (a.name == "elu") return Select(Lt(x, c(0)), Mul(c(a.alpha), Sub(Exp(x), c(1))), x);
  if (a.name == "softsign") return Div(x, Add(c(1), Abs(x)));
  return Log1p(Exp(x));  // softplus
}

// The activations attribute (`per_direction` of them for each direction,
// else `defaults`), with activation_alpha and activation_beta consumed in
// order by the functions that take them.
absl::StatusOr<std::vector<Activation>> GetActivations(const XlaOpKernelContext& ctx,
                                                       const std::vector<std::string>& defaults,
                                                       int64_t directions) {
  std::vector<std::string> names;
  auto it = ctx.node().attrs.find("activations");
  if (it != ctx.node().attrs.end()) {
    const auto* list = std::get_if<std::vector<std::string>>(&it->second);
    if (!list) return ctx.Error("attribute 'activations' must be a list of strings");
    names = *list;
  } else {
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != defaults.size() * directions) {
    return ctx.Error("attribute 'activations' has ", names.size(), " functions, expected ",
                     defaults.size() * directions);
  }
  std::vector<float> alphas, betas;
  if (ctx.HasAttr("activation_alpha")) {
    absl::StatusOr<std::vector<float>> v = ctx.GetAttrFloats("activation_alpha");
    if (!v.ok()) return v.status();
    alphas = *v;
  }
  if (ctx.HasAttr("activation_beta")) {
    absl::StatusOr<std::vector<float>> v = ctx.GetAttrFloats("activation_beta");
    if (!v.ok()) return v.status();
    betas = *v;
  }
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    Activation a{absl::AsciiStrToLower(name)};
    const std::string& n = a.name;
    bool alpha = true, beta = false;
    if (n == "affine" || n == "scaledtanh") {
      a.alpha = 1, beta = true;
    } else if (n == "hardsigmoid") {
      a.alpha = 0.2f, a.beta = 0.5f, beta = true;
    } else if (n == "leakyrelu") {
      a.alpha = 0.01f;
    } else if (n == "thresholdedrelu" || n == "elu") {
      a.alpha = 1;
    } else if (n == "relu" || n == "tanh" || n == "sigmoid" || n == "softsign" || n == "softplus") {
      alpha = false;
    } else {
      return ctx.Unimplemented("activation '", name, "' is not supported");
    }
    if (alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (beta && bi < betas.size()) a.beta = betas[bi++];
    out.push_back(a);
  }
  return out;
}

// --- The recurrence ----------------------------------------------------------

enum class Cell { kRnn, kGru, kLstm };

int64_t Gates(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

struct CellParams {
  Cell cell;
  int64_t hidden;
  std::vector<Activation> acts;  // this direction's
  float clip;                    // 0: none
  bool linear_before_reset = false, input_forget = false;
};

// One step of D directions: xw [D, B, G*H] (X * W^T + Wb), h and c
// [D, B, H], r [D, G*H, H], rb [D, G*H], p [D, 3*H] -> (H', C'). Each
// direction's recurrent dot is one batch of a single dot.
std::pair<XlaOp, XlaOp> Step(const CellParams& cp, PrimitiveType t, XlaOp xw, XlaOp h, XlaOp c,
                             XlaOp r, XlaOp rb, XlaOp p, int64_t dirs, int64_t batch) {
  XlaBuilder* b = xw.builder();
  int64_t hs = cp.hidden;
  std::vector<int64_t> bh = {dirs, batch, hs};
  DotDimensionNumbers dn;
  dn.add_lhs_batch_dimensions(0);
  dn.add_rhs_batch_dimensions(0);
  dn.add_lhs_contracting_dimensions(2);
  dn.add_rhs_contracting_dimensions(2);
  auto gate = [&](XlaOp v, int64_t g) { return SliceInDim(v, g * hs, (g + 1) * hs, 1, 2); };
  auto vec = [&](XlaOp v, int64_t g) {
    return BroadcastInDim(SliceInDim(v, g * hs, (g + 1) * hs, 1, 1), bh, {0, 2});
  };
  auto clip = [&](XlaOp v) {
    if (cp.clip <= 0) return v;
    return Clamp(Broadcast(ScalarLike(b, t, -cp.clip), bh), v,
                 Broadcast(ScalarLike(b, t, cp.clip), bh));
  };
  auto f = [&](int i, XlaOp v) { return Apply(cp.acts[i], clip(v), t, bh); };
  auto one = Broadcast(ScalarLike(b, t, 1), bh);
  if (cp.cell == Cell::kRnn) {
    XlaOp hr = Add(DotGeneral(h, r, dn), vec(rb, 0));
    return {f(0, Add(xw, hr)), c};
  }
  if (cp.cell == Cell::kGru) {
    XlaOp r_zr = SliceInDim(r, 0, 2 * hs, 1, 1), r_h = SliceInDim(r, 2 * hs, 3 * hs, 1, 1);
    XlaOp hr = DotGeneral(h, r_zr, dn);
    XlaOp z = f(0, Add(Add(gate(xw, 0), gate(hr, 0)), vec(rb, 0)));
    XlaOp rt = f(0, Add(Add(gate(xw, 1), gate(hr, 1)), vec(rb, 1)));
    XlaOp hh = cp.linear_before_reset ? Mul(rt, Add(DotGeneral(h, r_h, dn), vec(rb, 2)))
                                      : Add(DotGeneral(Mul(rt, h), r_h, dn), vec(rb, 2));
    XlaOp cand = f(1, Add(gate(xw, 2), hh));
    return {Add(Mul(Sub(one, z), cand), Mul(z, h)), c};
  }
  // LSTM gates i, o, f, c; peepholes i, o, f. X * W^T + Wb is added per
  // gate with the cell's other terms, not to the dot (as a dot epilogue's
  // bias it would be copied out of the loop state first: a thunk a step).
  XlaOp hr = DotGeneral(h, r, dn);
  auto g = [&](int64_t k) { return Add(Add(gate(xw, k), gate(hr, k)), vec(rb, k)); };
  XlaOp it = f(0, Add(g(0), Mul(vec(p, 0), c)));
  XlaOp ft = cp.input_forget ? Sub(one, it) : f(0, Add(g(2), Mul(vec(p, 2), c)));
  XlaOp ct = f(1, g(3));
  XlaOp c_new = Add(Mul(ft, c), Mul(it, ct));
  XlaOp ot = f(0, Add(g(1), Mul(vec(p, 1), c_new)));
  return {Mul(ot, Apply(cp.acts[2], c_new, t, bh)), c_new};
}

// One step of every direction (state [D, ...]): directions with the same
// activations share one Step, so the usual bidirectional layer computes
// both directions' gates in the same ops.
std::pair<XlaOp, XlaOp> StepAll(const std::vector<CellParams>& cps, PrimitiveType t, XlaOp xw,
                                XlaOp h, XlaOp c, XlaOp r, XlaOp rb, XlaOp p, int64_t batch) {
  bool same = true;
  for (const CellParams& cp : cps) {
    for (size_t i = 0; i < cp.acts.size(); ++i) {
      const Activation &a = cp.acts[i], &a0 = cps[0].acts[i];
      same = same && a.name == a0.name && a.alpha == a0.alpha && a.beta == a0.beta;
    }
  }
  if (same) return Step(cps[0], t, xw, h, c, r, rb, p, static_cast<int64_t>(cps.size()), batch);
  std::vector<XlaOp> hs, cs;
  for (int64_t d = 0; d < static_cast<int64_t>(cps.size()); ++d) {
    auto at = [&](XlaOp v) { return SliceInDim(v, d, d + 1, 1, 0); };
    auto [h_d, c_d] = Step(cps[d], t, at(xw), at(h), at(c), at(r), at(rb), at(p), 1, batch);
    hs.push_back(h_d);
    cs.push_back(c_d);
  }
  return {ConcatInDim(h.builder(), hs, 0), ConcatInDim(h.builder(), cs, 0)};
}

// Runs every direction in one loop: xw [T, D, B, G*H], each direction's
// steps in the order it reads them; returns (Y [T, D, B, H], H_T, C_T
// [D, B, H]). Without `lens` (S64 [B]) every step is valid.
absl::StatusOr<std::vector<XlaOp>> RunDirections(XlaOpKernelContext* ctx,
                                                 const std::vector<CellParams>& cps,
                                                 PrimitiveType t, XlaOp xw, XlaOp h0, XlaOp c0,
                                                 XlaOp r, XlaOp rb, XlaOp p,
                                                 std::optional<XlaOp> lens, int64_t steps,
                                                 int64_t batch) {
  XlaBuilder* b = ctx->builder();
  int64_t hs = cps[0].hidden, dirs = static_cast<int64_t>(cps.size());
  XlaOp y0 = Broadcast(Zero(b, t), {steps, dirs, batch, hs});
  std::vector<XlaOp> init = {ConstantR0<int64_t>(b, 0), h0, c0, y0, xw, r, rb, p};
  if (lens) init.push_back(*lens);
  const int n = static_cast<int>(init.size());
  absl::StatusOr<Shape> state = b->GetShape(Tuple(b, init));
  if (!state.ok()) return state.status();

  std::unique_ptr<XlaBuilder> cond = b->CreateSubBuilder("rnn_cond");
  Lt(GetTupleElement(Parameter(cond.get(), 0, *state, "state"), 0),
     ConstantR0<int64_t>(cond.get(), steps));
  absl::StatusOr<XlaComputation> cond_c = cond->Build();
  if (!cond_c.ok()) return cond_c.status();

  std::unique_ptr<XlaBuilder> body = b->CreateSubBuilder("rnn_body");
  XlaBuilder* s = body.get();
  XlaOp st = Parameter(s, 0, *state, "state");
  std::vector<XlaOp> e(n);
  for (int i = 0; i < n; ++i) e[i] = GetTupleElement(st, i);
  XlaOp zero = ConstantR0<int64_t>(s, 0);
  int64_t g = Gates(cps[0].cell);
  XlaOp xw_t = Reshape(DynamicSlice(e[4], {e[0], zero, zero, zero}, {1, dirs, batch, g * hs}),
                       {dirs, batch, g * hs});
  auto [h_new, c_new] = StepAll(cps, t, xw_t, e[1], e[2], e[5], e[6], e[7], batch);
  std::vector<int64_t> bh = {dirs, batch, hs};
  XlaOp y_t = h_new;
  if (lens) {
    XlaOp valid = BroadcastInDim(Lt(Broadcast(e[0], {batch}), e[8]), bh, {1});
    h_new = Select(valid, h_new, e[1]);
    c_new = Select(valid, c_new, e[2]);
    y_t = Select(valid, h_new, Broadcast(Zero(s, t), bh));
  }
  XlaOp y = DynamicUpdateSlice(e[3], Reshape(y_t, {1, dirs, batch, hs}), {e[0], zero, zero, zero});
  std::vector<XlaOp> next = {Add(e[0], ConstantR0<int64_t>(s, 1)), h_new, c_new, y};
  next.insert(next.end(), e.begin() + 4, e.end());
  Tuple(s, next);
  absl::StatusOr<XlaComputation> body_c = body->Build();
  if (!body_c.ok()) return body_c.status();
  XlaOp out = While(*cond_c, *body_c, Tuple(b, init));
  return std::vector<XlaOp>{GetTupleElement(out, 3), GetTupleElement(out, 1),
                            GetTupleElement(out, 2)};
}

// RNN, GRU and LSTM: inputs X, W, R, B, sequence_lens, initial_h (and
// initial_c, P for LSTM); outputs Y, Y_h (and Y_c).
template <Cell kCell>
class RecurrentOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> hidden = ctx->GetAttrInt("hidden_size");
    absl::StatusOr<std::string> direction = ctx->GetAttrString("direction", "forward");
    absl::StatusOr<int64_t> layout = ctx->GetAttrInt("layout", 0);
    absl::StatusOr<float> clip = ctx->GetAttrFloat("clip", 0);
    absl::StatusOr<int64_t> lbr = ctx->GetAttrInt("linear_before_reset", 0);
    absl::StatusOr<int64_t> input_forget = ctx->GetAttrInt("input_forget", 0);
    for (const absl::Status& st : {hidden.status(), direction.status(), layout.status(),
                                   clip.status(), lbr.status(), input_forget.status()}) {
      if (!st.ok()) return st;
    }
    if (*direction != "forward" && *direction != "reverse" && *direction != "bidirectional") {
      return ctx->Unimplemented("attribute 'direction' = '", *direction, "' is not supported");
    }
    if (*layout != 0 && *layout != 1) return ctx->Error("attribute 'layout' must be 0 or 1");
    int64_t dirs = *direction == "bidirectional" ? 2 : 1;
    int64_t hs = *hidden, g = Gates(kCell);
    const Shape& xs = ctx->InputShape(0);
    if (xs.rank() != 3 || !IsFloat(xs.element_type())) {
      return ctx->Error("X ", xs.ToString(false), " must be a floating-point tensor of rank 3");
    }
    PrimitiveType t = xs.element_type();
    int64_t steps = xs.dimensions(*layout), batch = xs.dimensions(1 - *layout);
    int64_t in = xs.dimensions(2);
    auto check = [&](int i, const std::vector<int64_t>& dims) -> absl::Status {
      if (!ctx->HasInput(i)) return absl::OkStatus();
      const Shape& s = ctx->InputShape(i);
      if (s.dimensions() != dims || s.element_type() != t) {
        return ctx->Error("input ", i, " ", s.ToString(false), " must be ",
                          ShapeUtil::MakeShape(t, dims).ToString(false));
      }
      return absl::OkStatus();
    };
    std::vector<int64_t> state_dims = *layout == 0 ? std::vector<int64_t>{dirs, batch, hs}
                                                   : std::vector<int64_t>{batch, dirs, hs};
    std::vector<std::pair<int, std::vector<int64_t>>> expected = {
        {1, {dirs, g * hs, in}}, {2, {dirs, g * hs, hs}}, {3, {dirs, 2 * g * hs}}, {5, state_dims}};
    if (kCell == Cell::kLstm) {
      expected.push_back({6, state_dims});
      expected.push_back({7, {dirs, 3 * hs}});
    }
    for (const auto& [i, dims] : expected) {
      if (absl::Status st = check(i, dims); !st.ok()) return st;
    }
    CellParams cp{kCell, hs, {}, *clip, *lbr != 0, *input_forget != 0};
    static const auto* kDefaults = new std::vector<std::vector<std::string>>{
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const std::vector<std::string>& defaults = (*kDefaults)[static_cast<int>(kCell)];
    absl::StatusOr<std::vector<Activation>> acts = GetActivations(*ctx, defaults, dirs);
    if (!acts.ok()) return acts.status();

    XlaBuilder* b = ctx->builder();
    XlaOp x = *layout == 0 ? ctx->Input(0) : Transpose(ctx->Input(0), {1, 0, 2});
    bool has_lens = ctx->HasInput(4);
    XlaOp lens = has_lens ? ConvertElementType(ctx->Input(4), S64)
                          : Broadcast(ConstantR0<int64_t>(b, steps), {batch});
    if (has_lens && ctx->InputShape(4).dimensions() != std::vector<int64_t>{batch}) {
      return ctx->Error("sequence_lens ", ctx->InputShape(4).ToString(false), " must have ", batch,
                        " elements");
    }
    auto per_dir = [&](int i, int64_t d, const std::vector<int64_t>& dims) {
      if (!ctx->HasInput(i)) return Broadcast(Zero(b, t), dims);
      XlaOp v = ctx->Input(i);
      if ((i == 5 || i == 6) && *layout == 1) v = Transpose(v, {1, 0, 2});
      return Reshape(SliceInDim(v, d, d + 1, 1, 0), dims);
    };
    auto reverse = [&](XlaOp v, const std::vector<int64_t>& dims) {
      return has_lens ? ReverseWithinLengths(v, lens, dims) : Rev(v, {0});
    };
    // Per direction: X * W^T + Wb (each sequence reversed for a backward
    // direction), then one loop over every direction.
    std::vector<CellParams> cps;
    std::vector<XlaOp> xws, h0s, c0s, rs, rbs, ps;
    auto backward = [&](int64_t d) { return *direction == "reverse" || d == 1; };
    for (int64_t d = 0; d < dirs; ++d) {
      cp.acts.assign(acts->begin() + d * defaults.size(),
                     acts->begin() + (d + 1) * defaults.size());
      cps.push_back(cp);
      DotDimensionNumbers dn;
      dn.add_lhs_contracting_dimensions(2);
      dn.add_rhs_contracting_dimensions(1);
      XlaOp xw = DotGeneral(x, per_dir(1, d, {g * hs, in}), dn);
      XlaOp bias = per_dir(3, d, {2 * g * hs});
      xw = Add(xw, BroadcastInDim(SliceInDim(bias, 0, g * hs, 1, 0), {steps, batch, g * hs}, {2}));
      if (backward(d)) xw = reverse(xw, {steps, batch, g * hs});
      xws.push_back(Reshape(xw, {steps, 1, batch, g * hs}));
      rbs.push_back(Reshape(SliceInDim(bias, g * hs, 2 * g * hs, 1, 0), {1, g * hs}));
      h0s.push_back(per_dir(5, d, {1, batch, hs}));
      c0s.push_back(per_dir(6, d, {1, batch, hs}));
      rs.push_back(per_dir(2, d, {1, g * hs, hs}));
      ps.push_back(per_dir(7, d, {1, 3 * hs}));
    }
    std::optional<XlaOp> loop_lens;
    if (has_lens) loop_lens = lens;
    absl::StatusOr<std::vector<XlaOp>> out =
        RunDirections(ctx, cps, t, ConcatInDim(b, xws, 1), ConcatInDim(b, h0s, 0),
                      ConcatInDim(b, c0s, 0), ConcatInDim(b, rs, 0), ConcatInDim(b, rbs, 0),
                      ConcatInDim(b, ps, 0), loop_lens, steps, batch);
    if (!out.ok()) return out.status();
    XlaOp y = (*out)[0], yh = (*out)[1], yc = (*out)[2];
    if (backward(dirs - 1)) {
      std::vector<XlaOp> ys;
      for (int64_t d = 0; d < dirs; ++d) {
        XlaOp y_d = Reshape(SliceInDim(y, d, d + 1, 1, 1), {steps, batch, hs});
        if (backward(d)) y_d = reverse(y_d, {steps, batch, hs});
        ys.push_back(Reshape(y_d, {steps, 1, batch, hs}));
      }
      y = ConcatInDim(b, ys, 1);
    }
    if (*layout == 1) {
      y = Transpose(y, {2, 0, 1, 3});
      yh = Transpose(yh, {1, 0, 2});
      yc = Transpose(yc, {1, 0, 2});
    }
    if (ctx->HasOutput(0)) ctx->SetOutput(0, y);
    if (ctx->HasOutput(1)) ctx->SetOutput(1, yh);
    if (kCell == Cell::kLstm && ctx->HasOutput(2)) ctx->SetOutput(2, yc);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("RNN").SinceVersion(7), RecurrentOp<Cell::kRnn>);
REGISTER_XLA_OP(Name("GRU").SinceVersion(7), RecurrentOp<Cell::kGru>);
REGISTER_XLA_OP(Name("LSTM").SinceVersion(7), RecurrentOp<Cell::kLstm>);

}  // namespace

AXLE_ONNX_KERNEL_FILE(rnn)

}  // namespace axle::onnx
