//===- lowering.cc - Lazy-tensor IR to an XlaComputation --------------------===//
#include "axle/frontends/lazy/lowering.h"

#include <cmath>
#include <map>
#include <mutex>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"

namespace axle::lazy {
namespace {

struct LoweringRegistry {
  std::mutex mutex;
  std::map<std::string, LowerFn> fns;
};

std::vector<XlaOp> One(XlaOp op) { return {op}; }

using BinaryFn = XlaOp (*)(XlaOp, XlaOp, absl::Span<const int64_t>);
using UnaryFn = XlaOp (*)(XlaOp);

template <BinaryFn F>
absl::StatusOr<std::vector<XlaOp>> LowerBinary(XlaBuilder*, const Node&,
                                               absl::Span<const XlaOp> x) {
  return One(F(x[0], x[1], {}));
}

template <UnaryFn F>
absl::StatusOr<std::vector<XlaOp>> LowerUnary(XlaBuilder*, const Node&, absl::Span<const XlaOp> x) {
  return One(F(x[0]));
}

absl::StatusOr<std::vector<XlaOp>> LowerConstant(XlaBuilder* b, const Node& node,
                                                 absl::Span<const XlaOp>) {
  XlaOp scalar =
      ConvertElementType(ConstantR0<double>(b, node.attr_double(0)), node.shape().element_type());
  return One(Broadcast(scalar, node.shape().dimensions()));
}

absl::StatusOr<std::vector<XlaOp>> LowerSelect(XlaBuilder*, const Node&,
                                               absl::Span<const XlaOp> x) {
  return One(Select(x[0], x[1], x[2]));
}

absl::StatusOr<std::vector<XlaOp>> LowerConvert(XlaBuilder*, const Node& node,
                                                absl::Span<const XlaOp> x) {
  return One(ConvertElementType(x[0], node.shape().element_type()));
}

absl::StatusOr<std::vector<XlaOp>> LowerReshape(XlaBuilder*, const Node& node,
                                                absl::Span<const XlaOp> x) {
  return One(Reshape(x[0], node.shape().dimensions()));
}

absl::StatusOr<std::vector<XlaOp>> LowerTranspose(XlaBuilder*, const Node& node,
                                                  absl::Span<const XlaOp> x) {
  return One(Transpose(x[0], node.attr_ints(0)));
}

absl::StatusOr<std::vector<XlaOp>> LowerBroadcastInDim(XlaBuilder*, const Node& node,
                                                       absl::Span<const XlaOp> x) {
  return One(BroadcastInDim(x[0], node.shape().dimensions(), node.attr_ints(0)));
}

// The scalar reduction `kind` ("sum", "prod", "max", "min", "and", "or")
// of `type` for `node`'s reduce or reduce_window, and its identity (the
// initial value, and what padding reads as).
struct Reducer {
  XlaComputation computation;
  XlaOp init;
};

absl::StatusOr<Reducer> MakeReducer(XlaBuilder* b, const Node& node, PrimitiveType type,
                                    const std::string& kind) {
  std::unique_ptr<XlaBuilder> sub = b->CreateSubBuilder(absl::StrCat(node.op(), "_", kind));
  Shape scalar = ShapeUtil::MakeShape(type, {});
  XlaOp lhs = Parameter(sub.get(), 0, scalar, "lhs");
  XlaOp rhs = Parameter(sub.get(), 1, scalar, "rhs");
  Reducer reducer;
  if (kind == "sum") {
    Add(lhs, rhs);
    reducer.init = Zero(b, type);
  } else if (kind == "prod") {
    Mul(lhs, rhs);
    reducer.init = One(b, type);
  } else if (kind == "max") {
    Max(lhs, rhs);
    reducer.init = MinValue(b, type);
  } else if (kind == "min") {
    Min(lhs, rhs);
    reducer.init = MaxValue(b, type);
  } else if (kind == "and") {
    And(lhs, rhs);
    reducer.init = ConstantR0<bool>(b, true);
  } else if (kind == "or") {
    Or(lhs, rhs);
    reducer.init = ConstantR0<bool>(b, false);
  } else {
    return absl::UnimplementedError(absl::StrCat(node.op(), " kind '", kind, "'"));
  }
  absl::StatusOr<XlaComputation> computation = sub->Build();
  if (!computation.ok()) return computation.status();
  reducer.computation = std::move(*computation);
  return reducer;
}

absl::StatusOr<std::vector<XlaOp>> LowerReduce(XlaBuilder* b, const Node& node,
                                               absl::Span<const XlaOp> x) {
  absl::StatusOr<Reducer> reducer =
      MakeReducer(b, node, node.shape().element_type(), node.attr_string(1));
  if (!reducer.ok()) return reducer.status();
  return One(Reduce(x[0], reducer->init, reducer->computation, node.attr_ints(0)));
}

absl::StatusOr<std::vector<XlaOp>> LowerDotGeneral(XlaBuilder*, const Node& node,
                                                   absl::Span<const XlaOp> x) {
  DotDimensionNumbers dnums;
  *dnums.mutable_lhs_contracting_dimensions() = node.attr_ints(0);
  *dnums.mutable_rhs_contracting_dimensions() = node.attr_ints(1);
  *dnums.mutable_lhs_batch_dimensions() = node.attr_ints(2);
  *dnums.mutable_rhs_batch_dimensions() = node.attr_ints(3);
  return One(DotGeneral(x[0], x[1], dnums, nullptr, node.shape().element_type()));
}

absl::StatusOr<std::vector<XlaOp>> LowerSlice(XlaBuilder*, const Node& node,
                                              absl::Span<const XlaOp> x) {
  return One(Slice(x[0], node.attr_ints(0), node.attr_ints(1), node.attr_ints(2)));
}

absl::StatusOr<std::vector<XlaOp>> LowerConcatenate(XlaBuilder* b, const Node& node,
                                                    absl::Span<const XlaOp> x) {
  return One(ConcatInDim(b, x, node.attr_int(0)));
}

absl::StatusOr<std::vector<XlaOp>> LowerPad(XlaBuilder*, const Node& node,
                                            absl::Span<const XlaOp> x) {
  PaddingConfig config;
  const std::vector<int64_t>& low = node.attr_ints(0);
  const std::vector<int64_t>& high = node.attr_ints(1);
  const std::vector<int64_t>& interior = node.attr_ints(2);
  if (low.size() != high.size() || low.size() != interior.size()) {
    return absl::InvalidArgumentError("pad: low, high and interior differ in length");
  }
  for (size_t i = 0; i < low.size(); ++i) {
    auto* d = config.add_dimensions();
    d->set_edge_padding_low(low[i]);
    d->set_edge_padding_high(high[i]);
    d->set_interior_padding(interior[i]);
  }
  return One(Pad(x[0], x[1], config));
}

// convolution {strides, padding low, padding high, lhs dilation, rhs
// dilation, dimension numbers [input batch, input feature, input spatial...,
// kernel input feature, kernel output feature, kernel spatial..., output
// batch, output feature, output spatial...], feature group count}
absl::StatusOr<std::vector<XlaOp>> LowerConvolution(XlaBuilder*, const Node& node,
                                                    absl::Span<const XlaOp> x) {
  const std::vector<int64_t>& low = node.attr_ints(1);
  const std::vector<int64_t>& high = node.attr_ints(2);
  const std::vector<int64_t>& d = node.attr_ints(5);
  size_t n = low.size();
  if (high.size() != n || d.size() != 3 * (n + 2)) {
    return absl::InvalidArgumentError("convolution: inconsistent attributes");
  }
  std::vector<std::pair<int64_t, int64_t>> padding;
  padding.reserve(n);
  for (size_t i = 0; i < n; ++i) padding.emplace_back(low[i], high[i]);
  ConvolutionDimensionNumbers dnums;
  dnums.set_input_batch_dimension(d[0]);
  dnums.set_input_feature_dimension(d[1]);
  dnums.set_kernel_input_feature_dimension(d[n + 2]);
  dnums.set_kernel_output_feature_dimension(d[n + 3]);
  dnums.set_output_batch_dimension(d[2 * n + 4]);
  dnums.set_output_feature_dimension(d[2 * n + 5]);
  for (size_t i = 0; i < n; ++i) {
    dnums.add_input_spatial_dimensions(d[2 + i]);
    dnums.add_kernel_spatial_dimensions(d[n + 4 + i]);
    dnums.add_output_spatial_dimensions(d[2 * n + 6 + i]);
  }
  int64_t batch_groups = node.attrs().size() > 7 ? node.attr_int(7) : 1;
  return One(ConvGeneralDilated(x[0], x[1], node.attr_ints(0), padding, node.attr_ints(3),
                                node.attr_ints(4), dnums, node.attr_int(6), batch_groups, nullptr,
                                node.shape().element_type()));
}

// (low, high) pairs of a window op's padding attributes; an error when
// their lengths differ from the window's rank.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> WindowPadding(const Node& node,
                                                                       int low_attr, int high_attr,
                                                                       size_t rank) {
  const std::vector<int64_t>& low = node.attr_ints(low_attr);
  const std::vector<int64_t>& high = node.attr_ints(high_attr);
  if (low.size() != rank || high.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(node.op(), ": padding of rank ", low.size(), "/",
                                                   high.size(), " for a window of rank ", rank));
  }
  std::vector<std::pair<int64_t, int64_t>> padding;
  padding.reserve(rank);
  for (size_t i = 0; i < rank; ++i) padding.emplace_back(low[i], high[i]);
  return padding;
}

// reduce_window_argmax {window, strides, window dilations, padding low,
// padding high}: operands (value, index); outputs each window's maximum
// and the index of its first maximum (the smallest index among equal
// maxima; NaN wins, as in PyTorch). Padding reads as (-inf, INT64_MAX).
absl::StatusOr<std::vector<XlaOp>> LowerReduceWindowArgmax(XlaBuilder* b, const Node& node,
                                                           absl::Span<const XlaOp> x) {
  const std::vector<int64_t>& window = node.attr_ints(0);
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> padding =
      WindowPadding(node, 3, 4, window.size());
  if (!padding.ok()) return padding.status();
  PrimitiveType type = node.output_shape(0).element_type();
  PrimitiveType index_type = node.output_shape(1).element_type();
  std::unique_ptr<XlaBuilder> sub = b->CreateSubBuilder("argmax");
  Shape scalar = ShapeUtil::MakeShape(type, {});
  Shape index_scalar = ShapeUtil::MakeShape(index_type, {});
  XlaOp av = Parameter(sub.get(), 0, scalar, "av");
  XlaOp ai = Parameter(sub.get(), 1, index_scalar, "ai");
  XlaOp bv = Parameter(sub.get(), 2, scalar, "bv");
  XlaOp bi = Parameter(sub.get(), 3, index_scalar, "bi");
  XlaOp take_a = Or(Or(Gt(av, bv), Ne(av, av)), And(Eq(av, bv), Lt(ai, bi)));
  Tuple(sub.get(), {Select(take_a, av, bv), Select(take_a, ai, bi)});
  absl::StatusOr<XlaComputation> reducer = sub->Build();
  if (!reducer.ok()) return reducer.status();
  std::vector<int64_t> ones(window.size(), 1);
  XlaOp result = ReduceWindowWithGeneralPadding(
      {x[0], x[1]}, {MinValue(b, type), MaxValue(b, index_type)}, *reducer, window,
      node.attr_ints(1), ones, node.attr_ints(2), *padding);
  return std::vector<XlaOp>{GetTupleElement(result, 0), GetTupleElement(result, 1)};
}

// reduce_window {window, strides, base dilations, window dilations,
// padding low, padding high, kind (reduce's)}: padding reads as the
// reduction's identity.
absl::StatusOr<std::vector<XlaOp>> LowerReduceWindow(XlaBuilder* b, const Node& node,
                                                     absl::Span<const XlaOp> x) {
  const std::vector<int64_t>& window = node.attr_ints(0);
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> padding =
      WindowPadding(node, 4, 5, window.size());
  if (!padding.ok()) return padding.status();
  absl::StatusOr<Reducer> reducer =
      MakeReducer(b, node, node.shape().element_type(), node.attr_string(6));
  if (!reducer.ok()) return reducer.status();
  return One(ReduceWindowWithGeneralPadding(x[0], reducer->init, reducer->computation, window,
                                            node.attr_ints(1), node.attr_ints(2), node.attr_ints(3),
                                            *padding));
}

// select_and_scatter {window, strides, padding low, padding high}: operands
// (operand, source); each source element is added at its window's first
// maximum of the operand; zeros elsewhere. (The max pool's gradient.)
absl::StatusOr<std::vector<XlaOp>> LowerSelectAndScatter(XlaBuilder* b, const Node& node,
                                                         absl::Span<const XlaOp> x) {
  const std::vector<int64_t>& window = node.attr_ints(0);
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> padding =
      WindowPadding(node, 2, 3, window.size());
  if (!padding.ok()) return padding.status();
  PrimitiveType type = node.shape().element_type();
  Shape scalar = ShapeUtil::MakeShape(type, {});
  std::unique_ptr<XlaBuilder> select = b->CreateSubBuilder("select_ge");
  Ge(Parameter(select.get(), 0, scalar, "a"), Parameter(select.get(), 1, scalar, "b"));
  absl::StatusOr<XlaComputation> select_fn = select->Build();
  if (!select_fn.ok()) return select_fn.status();
  std::unique_ptr<XlaBuilder> scatter = b->CreateSubBuilder("scatter_add");
  Add(Parameter(scatter.get(), 0, scalar, "a"), Parameter(scatter.get(), 1, scalar, "b"));
  absl::StatusOr<XlaComputation> scatter_fn = scatter->Build();
  if (!scatter_fn.ok()) return scatter_fn.status();
  return One(SelectAndScatterWithGeneralPadding(x[0], *select_fn, window, node.attr_ints(1),
                                                *padding, x[1], Zero(b, type), *scatter_fn));
}

absl::StatusOr<std::vector<XlaOp>> LowerRev(XlaBuilder*, const Node& node,
                                            absl::Span<const XlaOp> x) {
  return One(Rev(x[0], node.attr_ints(0)));
}

absl::StatusOr<std::vector<XlaOp>> LowerIota(XlaBuilder* b, const Node& node,
                                             absl::Span<const XlaOp>) {
  return One(Iota(b, node.shape(), node.attr_int(0)));
}

// rng_uniform: operand the Philox state (u64[2] or u64[3]); outputs the
// advanced state and values uniform in [0, 1) of the node's second shape:
// the top m bits of each random word (m = the type's mantissa with its
// implicit bit: 24 f32, 53 f64, 11 f16, 8 bf16) times 2^-m, exact in the
// type, so never 1.
absl::StatusOr<std::vector<XlaOp>> LowerRngUniform(XlaBuilder* b, const Node& node,
                                                   absl::Span<const XlaOp> x) {
  const Shape& out = node.output_shape(1);
  PrimitiveType type = out.element_type();
  int mantissa = 0;
  switch (type) {
    case F32:
      mantissa = 24;
      break;
    case F64:
      mantissa = 53;
      break;
    case F16:
      mantissa = 11;
      break;
    case BF16:
      mantissa = 8;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("rng_uniform of ", primitive_util::LowercasePrimitiveTypeName(type),
                       " (a floating type only)"));
  }
  bool wide = type == F64;
  PrimitiveType bits_type = wide ? U64 : U32;
  XlaOp generated =
      RngBitGenerator(RNG_PHILOX, x[0], ShapeUtil::MakeShape(bits_type, out.dimensions()));
  XlaOp bits = GetTupleElement(generated, 1);
  int width = wide ? 64 : 32;
  XlaOp shift = wide ? ConstantR0<uint64_t>(b, static_cast<uint64_t>(width - mantissa))
                     : ConstantR0<uint32_t>(b, static_cast<uint32_t>(width - mantissa));
  PrimitiveType compute = wide ? F64 : F32;
  XlaOp top = ConvertElementType(ShiftRightLogical(bits, shift), compute);
  XlaOp scale = wide ? ConstantR0<double>(b, std::ldexp(1.0, -mantissa))
                     : ConstantR0<float>(b, std::ldexp(1.0F, -mantissa));
  XlaOp values = ConvertElementType(Mul(top, scale), type);
  return std::vector<XlaOp>{GetTupleElement(generated, 0), values};
}

// gather {offset dims, collapsed slice dims, start index map, index vector
// dim, slice sizes}: operands (operand, start indices).
absl::StatusOr<std::vector<XlaOp>> LowerGather(XlaBuilder*, const Node& node,
                                               absl::Span<const XlaOp> x) {
  GatherDimensionNumbers dnums;
  *dnums.mutable_offset_dims() = node.attr_ints(0);
  *dnums.mutable_collapsed_slice_dims() = node.attr_ints(1);
  *dnums.mutable_start_index_map() = node.attr_ints(2);
  dnums.set_index_vector_dim(node.attr_int(3));
  return One(Gather(x[0], x[1], dnums, node.attr_ints(4)));
}

// scatter_add {update window dims, inserted window dims, scatter dims to
// operand dims, index vector dim}: operands (operand, scatter indices,
// updates); each update is added to the operand's element it indexes
// (repeated indices accumulate).
absl::StatusOr<std::vector<XlaOp>> LowerScatterAdd(XlaBuilder* b, const Node& node,
                                                   absl::Span<const XlaOp> x) {
  Shape scalar = ShapeUtil::MakeShape(node.shape().element_type(), {});
  std::unique_ptr<XlaBuilder> sub = b->CreateSubBuilder("scatter_add");
  Add(Parameter(sub.get(), 0, scalar, "a"), Parameter(sub.get(), 1, scalar, "b"));
  absl::StatusOr<XlaComputation> add = sub->Build();
  if (!add.ok()) return add.status();
  ScatterDimensionNumbers dnums;
  *dnums.mutable_update_window_dims() = node.attr_ints(0);
  *dnums.mutable_inserted_window_dims() = node.attr_ints(1);
  *dnums.mutable_scatter_dims_to_operand_dims() = node.attr_ints(2);
  dnums.set_index_vector_dim(node.attr_int(3));
  return One(Scatter(x[0], x[1], x[2], *add, dnums));
}

XlaOp LogisticOp(XlaOp x) { return Logistic(x); }

LoweringRegistry& Registry() {
  static LoweringRegistry* registry = [] {
    auto* r = new LoweringRegistry();
    auto& f = r->fns;
    f["constant"] = LowerConstant;
    f["add"] = LowerBinary<Add>;
    f["sub"] = LowerBinary<Sub>;
    f["mul"] = LowerBinary<Mul>;
    f["div"] = LowerBinary<Div>;
    f["max"] = LowerBinary<Max>;
    f["min"] = LowerBinary<Min>;
    f["pow"] = LowerBinary<Pow>;
    f["rem"] = LowerBinary<Rem>;
    f["atan2"] = LowerBinary<Atan2>;
    f["and"] = LowerBinary<And>;
    f["or"] = LowerBinary<Or>;
    f["xor"] = LowerBinary<Xor>;
    f["eq"] = LowerBinary<Eq>;
    f["ne"] = LowerBinary<Ne>;
    f["lt"] = LowerBinary<Lt>;
    f["le"] = LowerBinary<Le>;
    f["gt"] = LowerBinary<Gt>;
    f["ge"] = LowerBinary<Ge>;
    f["neg"] = LowerUnary<Neg>;
    f["exp"] = LowerUnary<Exp>;
    f["expm1"] = LowerUnary<Expm1>;
    f["log"] = LowerUnary<Log>;
    f["log1p"] = LowerUnary<Log1p>;
    f["sqrt"] = LowerUnary<Sqrt>;
    f["rsqrt"] = LowerUnary<Rsqrt>;
    f["tanh"] = LowerUnary<Tanh>;
    f["logistic"] = LowerUnary<LogisticOp>;
    f["abs"] = LowerUnary<Abs>;
    f["sign"] = LowerUnary<Sign>;
    f["floor"] = LowerUnary<Floor>;
    f["ceil"] = LowerUnary<Ceil>;
    f["round"] = LowerUnary<RoundNearestEven>;
    f["erf"] = LowerUnary<Erf>;
    f["sin"] = LowerUnary<Sin>;
    f["cos"] = LowerUnary<Cos>;
    f["not"] = LowerUnary<Not>;
    f["select"] = LowerSelect;
    f["convert"] = LowerConvert;
    f["reshape"] = LowerReshape;
    f["transpose"] = LowerTranspose;
    f["broadcast_in_dim"] = LowerBroadcastInDim;
    f["reduce"] = LowerReduce;
    f["dot_general"] = LowerDotGeneral;
    f["slice"] = LowerSlice;
    f["concatenate"] = LowerConcatenate;
    f["iota"] = LowerIota;
    f["pad"] = LowerPad;
    f["convolution"] = LowerConvolution;
    f["rev"] = LowerRev;
    f["reduce_window"] = LowerReduceWindow;
    f["reduce_window_argmax"] = LowerReduceWindowArgmax;
    f["select_and_scatter"] = LowerSelectAndScatter;
    f["rng_uniform"] = LowerRngUniform;
    f["gather"] = LowerGather;
    f["scatter_add"] = LowerScatterAdd;
    return r;
  }();
  return *registry;
}

LowerFn FindLowering(const std::string& op) {
  LoweringRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.fns.find(op);
  return it == r.fns.end() ? nullptr : it->second;
}

}  // namespace

void RegisterLowering(const std::string& op, LowerFn fn) {
  LoweringRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.fns[op] = fn;
}

bool HasLowering(const std::string& op) {
  return op == "device_data" || FindLowering(op) != nullptr;
}

PostOrder ComputePostOrder(absl::Span<const Value> roots) {
  PostOrder order;
  PostOrderScratch scratch;
  ComputePostOrder(roots, &order, &scratch);
  return order;
}

void ComputePostOrder(absl::Span<const Value> roots, PostOrder* order, PostOrderScratch* scratch) {
  order->nodes.clear();
  order->parameters.clear();
  order->leaf_parameters_hash = 0;
  // Each walk has its own number: a node or a value marked with it was
  // seen by this walk (no set to build, fill and free). The marks are
  // shared by all threads, hence the lock.
  static auto* const walks = new std::mutex();
  static uint64_t last_walk = 0;
  std::lock_guard<std::mutex> lock(*walks);
  const uint64_t walk = ++last_walk;
  std::vector<std::pair<const Node*, size_t>>& stack = scratch->stack;
  stack.clear();
  for (const Value& root : roots) {
    if (!root.node->FirstVisit(walk)) continue;
    stack.emplace_back(root.node.get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands().size()) {
        const Node* operand = node->operands()[next++].node.get();
        if (operand->FirstVisit(walk)) stack.emplace_back(operand, 0);
        continue;
      }
      order->nodes.push_back(node);
      if (const std::shared_ptr<DeviceData>& data = node->data(); data != nullptr) {
        // A shared value (a cached scalar) is a parameter per leaf
        // (ParameterKey): each leaf is visited once.
        auto next_number = static_cast<int64_t>(order->parameters.size());
        int64_t number = data->shared() ? next_number : data->ParameterIn(walk, next_number);
        if (number == next_number) order->parameters.push_back(data);
        order->leaf_parameters_hash =
            HashCombine(order->leaf_parameters_hash, static_cast<uint64_t>(number));
      }
      stack.pop_back();
    }
  }
}

absl::StatusOr<XlaComputation> LowerGraph(absl::Span<const Value> roots, const PostOrder& order,
                                          const std::string& name,
                                          absl::Span<const std::pair<int64_t, int64_t>> aliases) {
  XlaBuilder builder(name);
  // The parameters in order of first use (ComputePostOrder's).
  std::unordered_map<const void*, XlaOp> parameters;  // by ParameterKey
  std::unordered_map<const Node*, std::vector<XlaOp>> lowered;
  for (const Node* node : order.nodes) {
    if (node->data() != nullptr) {
      auto [it, added] = parameters.try_emplace(ParameterKey(*node));
      if (added) {
        auto i = static_cast<int64_t>(parameters.size() - 1);
        if (i >= static_cast<int64_t>(order.parameters.size())) {
          return absl::InternalError("lazy tensors: a graph with more leaves than its post order");
        }
        it->second = Parameter(&builder, i, order.parameters[i]->shape(), absl::StrCat("p", i));
      }
      lowered[node] = {it->second};
      continue;
    }
    LowerFn fn = FindLowering(node->op());
    if (fn == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("lazy tensors: no lowering for op '", node->op(), "'"));
    }
    std::vector<XlaOp> operands;
    operands.reserve(node->operands().size());
    for (const Value& v : node->operands())
      operands.push_back(lowered.at(v.node.get()).at(v.index));
    absl::StatusOr<std::vector<XlaOp>> outputs = fn(&builder, *node, operands);
    if (!outputs.ok()) {
      return absl::Status(outputs.status().code(), absl::StrCat("lowering ", node->ToString(), ": ",
                                                                outputs.status().message()));
    }
    if (!builder.first_error().ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("lowering ", node->ToString(), ": ", builder.first_error().message()));
    }
    lowered[node] = std::move(*outputs);
  }
  std::vector<XlaOp> results;
  results.reserve(roots.size());
  for (const Value& root : roots) results.push_back(lowered.at(root.node.get()).at(root.index));
  XlaOp tuple = Tuple(&builder, results);
  for (const auto& [output, parameter] : aliases) builder.SetUpAlias({output}, parameter, {});
  return builder.Build(tuple);
}

}  // namespace axle::lazy
