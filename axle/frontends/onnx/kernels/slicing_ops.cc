//===- slicing_ops.cc - ONNX Concat, Split, Slice, Gather, Tile, Pad --------===//
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class ConcatOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> axis = ctx->GetAttrInt("axis", ctx->opset() < 4 ? 1 : 0);
    if (!axis.ok()) return axis.status();
    if (ctx->opset() >= 4 && !ctx->HasAttr("axis"))
      return ctx->Error("attribute 'axis' is required");
    std::vector<XlaOp> ops;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (ctx->HasInput(i)) ops.push_back(ctx->Input(i));
    }
    if (ops.empty()) return ctx->Error("needs at least one input");
    absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, *axis, ctx->InputShape(0).rank());
    if (!a.ok()) return a.status();
    ctx->SetOutput(0, ConcatInDim(ctx->builder(), ops, *a));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Concat"), ConcatOp);

class SplitOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, 0, shape.rank());
    if (!a.ok()) return a.status();
    int64_t size = shape.dimensions(*a);
    int n = ctx->num_outputs();
    std::vector<int64_t> split;
    if (ctx->opset() < 13 && ctx->HasAttr("split")) {
      absl::StatusOr<std::vector<int64_t>> s = ctx->GetAttrInts("split");
      if (!s.ok()) return s.status();
      split = *s;
    } else if (ctx->opset() >= 13 && ctx->HasInput(1)) {
      absl::StatusOr<std::vector<int64_t>> s = ctx->ConstantInputAsIntVector(1);
      if (!s.ok()) return s.status();
      split = *s;
    } else {
      int64_t chunk = (size + n - 1) / n;
      for (int i = 0; i < n; ++i) split.push_back(std::min(chunk, size - chunk * i));
    }
    int64_t total = 0;
    for (int64_t s : split) total += s;
    if (static_cast<int>(split.size()) != n || total != size) {
      return ctx->Error("split [", absl::StrJoin(split, ","), "] does not divide dimension ", *a,
                        " of ", shape.ToString(false), " into ", n, " outputs");
    }
    int64_t start = 0;
    for (int i = 0; i < n; ++i) {
      if (ctx->HasOutput(i)) {
        ctx->SetOutput(i, SliceInDim(ctx->Input(0), start, start + split[i], 1, *a));
      }
      start += split[i];
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Split").CompileTimeConstantInput(1), SplitOp);

class SliceOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::vector<int64_t>& dims = ctx->InputShape(0).dimensions();
    int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> starts, ends, axes, steps;
    auto get = [&](int input, const char* attr, std::vector<int64_t>* out) -> absl::Status {
      absl::StatusOr<std::vector<int64_t>> v =
          ctx->opset() < 10 ? ctx->GetAttrInts(attr) : ctx->ConstantInputAsIntVector(input);
      if (!v.ok()) return v.status();
      *out = *v;
      return absl::OkStatus();
    };
    if (absl::Status s = get(1, "starts", &starts); !s.ok()) return s;
    if (absl::Status s = get(2, "ends", &ends); !s.ok()) return s;
    bool has_axes = ctx->opset() < 10 ? ctx->HasAttr("axes") : ctx->HasInput(3);
    if (has_axes) {
      if (absl::Status s = get(3, "axes", &axes); !s.ok()) return s;
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
    }
    if (ctx->opset() >= 10 && ctx->HasInput(4)) {
      if (absl::Status s = get(4, "steps", &steps); !s.ok()) return s;
    } else {
      steps.assign(starts.size(), 1);
    }
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
      return ctx->Error("starts, ends, axes and steps have different lengths");
    }
    std::vector<int64_t> lo(rank, 0), hi = dims, stride(rank, 1);
    std::vector<int64_t> reversed;
    for (size_t i = 0; i < starts.size(); ++i) {
      absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, axes[i], rank);
      if (!a.ok()) return a.status();
      int64_t n = dims[*a], step = steps[i];
      if (step == 0) return ctx->Error("steps must not be 0");
      int64_t s = starts[i] < 0 ? starts[i] + n : starts[i];
      int64_t e = ends[i] < 0 ? ends[i] + n : ends[i];
      if (step > 0) {
        s = std::clamp<int64_t>(s, 0, n);
        e = std::clamp<int64_t>(e, 0, n);
        lo[*a] = s;
        hi[*a] = std::max(s, e);
        stride[*a] = step;
      } else {
        s = std::clamp<int64_t>(s, 0, n - 1);
        e = std::clamp<int64_t>(e, -1, n - 1);
        // On the reversed axis index i is n - 1 - i.
        reversed.push_back(*a);
        lo[*a] = n - 1 - s;
        hi[*a] = std::max(lo[*a], n - 1 - e);
        stride[*a] = -step;
        if (n == 0) lo[*a] = hi[*a] = 0;
      }
    }
    XlaOp x = ctx->Input(0);
    if (!reversed.empty()) x = Rev(x, reversed);
    ctx->SetOutput(0, Slice(x, lo, hi, stride));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Slice")
                    .CompileTimeConstantInput(1)
                    .CompileTimeConstantInput(2)
                    .CompileTimeConstantInput(3)
                    .CompileTimeConstantInput(4),
                SliceOp);

class GatherOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& data = ctx->InputShape(0);
    const Shape& indices = ctx->InputShape(1);
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, 0, data.rank());
    if (!a.ok()) return a.status();
    if (!primitive_util::IsIntegralType(indices.element_type())) {
      return ctx->Error("indices must be integers, got ", indices.ToString(false));
    }
    XlaBuilder* b = ctx->builder();
    XlaOp idx = ctx->Input(1);
    PrimitiveType it = indices.element_type();
    XlaOp n = ScalarLike(b, it, data.dimensions(*a));
    if (primitive_util::IsSignedIntegralType(it)) {
      idx =
          Select(Lt(idx, ScalarLike(b, it, 0)), Add(idx, Broadcast(n, indices.dimensions())), idx);
    }
    GatherDimensionNumbers dnums;
    int64_t r = indices.rank();
    for (int64_t d = 0; d < data.rank(); ++d) {
      if (d < *a) dnums.add_offset_dims(d);
      if (d > *a) dnums.add_offset_dims(d - 1 + r);
    }
    dnums.add_collapsed_slice_dims(*a);
    dnums.add_start_index_map(*a);
    dnums.set_index_vector_dim(r);
    std::vector<int64_t> sizes = data.dimensions();
    sizes[*a] = 1;
    ctx->SetOutput(0, Gather(ctx->Input(0), idx, dnums, sizes));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Gather"), GatherOp);

class TileOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<int64_t>> repeats = ctx->ConstantInputAsIntVector(1);
    if (!repeats.ok()) return repeats.status();
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    if (repeats->size() != in.size()) {
      return ctx->Error("repeats has ", repeats->size(), " values for rank ", in.size());
    }
    std::vector<int64_t> wide, mapping, out;
    for (size_t i = 0; i < in.size(); ++i) {
      if ((*repeats)[i] < 0) return ctx->Error("repeats must not be negative");
      wide.push_back((*repeats)[i]);
      wide.push_back(in[i]);
      mapping.push_back(2 * i + 1);
      out.push_back((*repeats)[i] * in[i]);
    }
    ctx->SetOutput(0, Reshape(BroadcastInDim(ctx->Input(0), wide, mapping), out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Tile").CompileTimeConstantInput(1), TileOp);

class PadOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "constant");
    if (!mode.ok()) return mode.status();
    if (*mode != "constant" && *mode != "edge" && *mode != "reflect") {
      return ctx->Error("mode '", *mode, "' is not constant, edge or reflect");
    }
    const Shape& shape = ctx->InputShape(0);
    int64_t rank = shape.rank();
    absl::StatusOr<std::vector<int64_t>> pads =
        ctx->opset() < 11 ? ctx->GetAttrInts("pads") : ctx->ConstantInputAsIntVector(1);
    if (!pads.ok()) return pads.status();
    if (static_cast<int64_t>(pads->size()) != 2 * rank) {
      return ctx->Error("pads has ", pads->size(), " values for rank ", rank);
    }
    if (ctx->opset() >= 18 && ctx->HasInput(3)) return ctx->Unimplemented("axes are not supported");
    XlaBuilder* b = ctx->builder();
    XlaOp value = Zero(b, shape.element_type());
    if (ctx->opset() < 11) {
      absl::StatusOr<float> v = ctx->GetAttrFloat("value", 0.0f);
      if (!v.ok()) return v.status();
      value = ScalarLike(b, shape.element_type(), *v);
    } else if (ctx->HasInput(2)) {
      value = Reshape(ctx->Input(2), {});
    }
    if (*mode != "constant") {
      XlaOp x = ctx->Input(0);
      std::vector<int64_t> dims = shape.dimensions(), identity(rank);
      for (int64_t i = 0; i < rank; ++i) identity[i] = i;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t lo = (*pads)[d], hi = (*pads)[d + rank], n = dims[d];
        if (lo < 0 || hi < 0) return ctx->Unimplemented("negative pads in mode ", *mode);
        if (lo == 0 && hi == 0) continue;
        bool reflect = *mode == "reflect";
        if (n == 0 || (reflect && (lo >= n || hi >= n))) {
          return ctx->Error("pads ", lo, ", ", hi, " do not fit dimension ", d, " of size ", n);
        }
        std::vector<XlaOp> parts;
        auto edge = [&](int64_t at, int64_t count) {
          std::vector<int64_t> sizes = dims;
          sizes[d] = count;
          return BroadcastInDim(SliceInDim(x, at, at + 1, 1, d), sizes, identity);
        };
        if (lo > 0)
          parts.push_back(reflect ? Rev(SliceInDim(x, 1, lo + 1, 1, d), {d}) : edge(0, lo));
        parts.push_back(x);
        if (hi > 0) {
          parts.push_back(reflect ? Rev(SliceInDim(x, n - 1 - hi, n - 1, 1, d), {d})
                                  : edge(n - 1, hi));
        }
        x = ConcatInDim(ctx->builder(), parts, d);
        dims[d] += lo + hi;
      }
      ctx->SetOutput(0, x);
      return absl::OkStatus();
    }
    PaddingConfig config;
    for (int64_t d = 0; d < rank; ++d) {
      auto* dim = config.add_dimensions();
      dim->set_edge_padding_low((*pads)[d]);
      dim->set_edge_padding_high((*pads)[d + rank]);
    }
    ctx->SetOutput(0, Pad(ctx->Input(0), value, config));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Pad").CompileTimeConstantInput(1), PadOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(slicing)

}  // namespace axle::onnx
