//===- signal_ops.cc - ONNX signal processing ops (opset 17) ----------------===//
//
// HannWindow, HammingWindow, BlackmanWindow from an iota; DFT and STFT as
// dots with cosine and sine matrices (built at compile time in double
// precision), which both platforms run for any length, power of two or not;
// MelWeightMatrix as a constant.
//
//===----------------------------------------------------------------------===//
#include <array>
#include <cmath>
#include <numbers>

#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

// The scalar integer constant input `i`.
absl::StatusOr<int64_t> ScalarConstant(const XlaOpKernelContext& ctx, int i, const char* what) {
  absl::StatusOr<std::vector<int64_t>> v = ctx.ConstantInputAsIntVector(i);
  if (!v.ok()) return v.status();
  if (v->size() != 1) return ctx.Error(what, " must hold one value");
  return (*v)[0];
}

// The output_datatype attribute (default float).
absl::StatusOr<PrimitiveType> OutputType(const XlaOpKernelContext& ctx) {
  absl::StatusOr<int64_t> dtype = ctx.GetAttrInt("output_datatype", 1);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*dtype));
  if (!type.ok()) return ctx.Error(type.status().message());
  return *type;
}

// sum_k a_k cos(2 pi k n / N) over the window, N = size (periodic) or
// size - 1 (symmetric).
template <int kTerms>
class WindowOp : public XlaOpKernel {
 public:
  explicit WindowOp(std::array<double, kTerms> coefficients) : coefficients_(coefficients) {}
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> size = ScalarConstant(*ctx, 0, "size");
    if (!size.ok()) return size.status();
    if (*size < 1) return ctx->Error("size must be positive, got ", *size);
    absl::StatusOr<int64_t> periodic = ctx->GetAttrInt("periodic", 1);
    if (!periodic.ok()) return periodic.status();
    absl::StatusOr<PrimitiveType> type = OutputType(*ctx);
    if (!type.ok()) return type.status();
    XlaBuilder* b = ctx->builder();
    int64_t n = *periodic ? *size : std::max<int64_t>(*size - 1, 1);
    XlaOp phase = Mul(Iota(b, F64, *size),
                      Broadcast(ConstantR0<double>(b, 2 * std::numbers::pi / n), {*size}));
    XlaOp w = Broadcast(ConstantR0<double>(b, coefficients_[0]), {*size});
    for (int k = 1; k < kTerms; ++k) {
      XlaOp term = Cos(Mul(phase, Broadcast(ConstantR0<double>(b, k), {*size})));
      w = Add(w, Mul(Broadcast(ConstantR0<double>(b, coefficients_[k]), {*size}), term));
    }
    ctx->SetOutput(0, ConvertElementType(w, *type));
    return absl::OkStatus();
  }

 private:
  std::array<double, kTerms> coefficients_;
};
class HannWindowOp : public WindowOp<2> {
 public:
  HannWindowOp() : WindowOp<2>({0.5, -0.5}) {}
};
class HammingWindowOp : public WindowOp<2> {
 public:
  HammingWindowOp() : WindowOp<2>({25.0 / 46, -(1 - 25.0 / 46)}) {}
};
class BlackmanWindowOp : public WindowOp<3> {
 public:
  BlackmanWindowOp() : WindowOp<3>({0.42, -0.5, 0.08}) {}
};
REGISTER_XLA_OP(Name("HannWindow").SinceVersion(17).CompileTimeConstantInput(0), HannWindowOp);
REGISTER_XLA_OP(Name("HammingWindow").SinceVersion(17).CompileTimeConstantInput(0),
                HammingWindowOp);
REGISTER_XLA_OP(Name("BlackmanWindow").SinceVersion(17).CompileTimeConstantInput(0),
                BlackmanWindowOp);

// The largest table (twiddles, mel filters) a kernel builds on the host:
// 2^28 elements, 2 GiB of doubles. Larger lengths are errors, not
// allocations that fail.
absl::Status CheckTableSize(const XlaOpKernelContext& ctx, const char* what, int64_t rows,
                            int64_t cols) {
  if (static_cast<double>(rows) * static_cast<double>(cols) <= double{1 << 28}) {
    return absl::OkStatus();
  }
  return ctx.Error(what, " needs a table of ", rows, " x ", cols,
                   " elements; at most 2^28 are supported");
}

// cos or sin(2 pi n k / length) for n < rows, k < cols, as `type`.
XlaOp Twiddles(XlaBuilder* b, int64_t rows, int64_t cols, int64_t length, bool sine,
               PrimitiveType type) {
  std::vector<double> m(rows * cols);
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t k = 0; k < cols; ++k) {
      double angle = 2 * std::numbers::pi * static_cast<double>((n * k) % length) /
                     static_cast<double>(length);
      m[n * cols + k] = sine ? std::sin(angle) : std::cos(angle);
    }
  }
  return ConvertElementType(ConstantFromArray<double>(b, {rows, cols}, m), type);
}

// The DFT along dimension `axis` of (re, im) (im absent for a real signal)
// of dimensions `dims`, `length` points (the signal truncated or zero
// padded), the first `bins` of them; returns (re, im) with the bins in
// place of the axis.
std::pair<XlaOp, XlaOp> Dft(XlaOp re, std::optional<XlaOp> im, std::vector<int64_t> dims,
                            int64_t axis, int64_t length, int64_t bins, bool inverse,
                            PrimitiveType type) {
  XlaBuilder* b = re.builder();
  int64_t n = std::min(dims[axis], length);
  if (dims[axis] > n) {
    re = SliceInDim(re, 0, n, 1, axis);
    if (im) im = SliceInDim(*im, 0, n, 1, axis);
  }
  // Zero padding adds nothing to the sums: the matrices have n rows.
  XlaOp c = Twiddles(b, n, bins, length, false, type);
  XlaOp s = Twiddles(b, n, bins, length, true, type);
  DotDimensionNumbers dn;
  dn.add_lhs_contracting_dimensions(axis);
  dn.add_rhs_contracting_dimensions(0);
  auto dot = [&](XlaOp x, XlaOp m) { return DotGeneral(x, m, dn); };
  // forward: re' = re c + im s, im' = im c - re s; inverse flips the sines.
  XlaOp out_re = dot(re, c);
  XlaOp out_im = inverse ? dot(re, s) : Neg(dot(re, s));
  if (im) {
    XlaOp im_s = dot(*im, s);
    out_re = inverse ? Sub(out_re, im_s) : Add(out_re, im_s);
    out_im = Add(out_im, dot(*im, c));
  }
  // The bins (the dot's last dimension) go back to `axis`.
  int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> perm(r);
  for (int64_t d = 0; d < r; ++d) perm[d] = d < axis ? d : (d == axis ? r - 1 : d - 1);
  out_re = Transpose(out_re, perm);
  out_im = Transpose(out_im, perm);
  if (inverse) {
    XlaOp scale = ScalarLike(b, type, 1.0 / static_cast<double>(length));
    dims[axis] = bins;
    out_re = Mul(out_re, Broadcast(scale, dims));
    out_im = Mul(out_im, Broadcast(scale, dims));
  }
  return {out_re, out_im};
}

// x [..., 1 or 2] split into (re, im) without the last dimension.
std::pair<XlaOp, std::optional<XlaOp>> SplitComplex(XlaOp x, const Shape& s) {
  std::vector<int64_t> dims(s.dimensions().begin(), s.dimensions().end() - 1);
  int64_t last = s.rank() - 1;
  XlaOp re = Reshape(SliceInDim(x, 0, 1, 1, last), dims);
  if (s.dimensions(last) == 1) return {re, std::nullopt};
  return {re, Reshape(SliceInDim(x, 1, 2, 1, last), dims)};
}

XlaOp JoinComplex(XlaOp re, XlaOp im, const std::vector<int64_t>& dims) {
  std::vector<int64_t> one = dims;
  one.push_back(1);
  return ConcatInDim(re.builder(), {Reshape(re, one), Reshape(im, one)},
                     static_cast<int64_t>(dims.size()));
}

class DftOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    int64_t r = x.rank();
    if (r < 2 || (x.dimensions(r - 1) != 1 && x.dimensions(r - 1) != 2) ||
        !IsFloat(x.element_type())) {
      return ctx->Error("input ", x.ToString(false),
                        " must be floating-point [..., 1] (real) or [..., 2] (complex)");
    }
    absl::StatusOr<int64_t> axis = ctx->GetAttrInt("axis", 1);
    absl::StatusOr<int64_t> inverse = ctx->GetAttrInt("inverse", 0);
    absl::StatusOr<int64_t> onesided = ctx->GetAttrInt("onesided", 0);
    for (const absl::Status& s : {axis.status(), inverse.status(), onesided.status()}) {
      if (!s.ok()) return s;
    }
    absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, *axis, r - 1);
    if (!a.ok()) return a.status();
    int64_t length = x.dimensions(*a);
    if (ctx->HasInput(1)) {
      absl::StatusOr<int64_t> v = ScalarConstant(*ctx, 1, "dft_length");
      if (!v.ok()) return v.status();
      length = *v;
    }
    if (length < 1) return ctx->Error("dft_length must be positive, got ", length);
    if (*onesided && *inverse) {
      return ctx->Unimplemented("attribute 'onesided' = 1 with 'inverse' = 1 is not supported");
    }
    int64_t bins = *onesided ? length / 2 + 1 : length;
    absl::Status table =
        CheckTableSize(*ctx, "the DFT's twiddles", std::min(x.dimensions(*a), length), bins);
    if (!table.ok()) return table;
    auto [re, im] = SplitComplex(ctx->Input(0), x);
    std::vector<int64_t> dims(x.dimensions().begin(), x.dimensions().end() - 1);
    auto [out_re, out_im] = Dft(re, im, dims, *a, length, bins, *inverse != 0, x.element_type());
    dims[*a] = bins;
    ctx->SetOutput(0, JoinComplex(out_re, out_im, dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("DFT").SinceVersion(17).CompileTimeConstantInput(1), DftOp);

// STFT: signal [batch, length, 1 or 2], frame_step, window, frame_length ->
// [batch, frames, bins, 2].
class StftOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() != 3 || (x.dimensions(2) != 1 && x.dimensions(2) != 2) ||
        !IsFloat(x.element_type())) {
      return ctx->Error("signal ", x.ToString(false),
                        " must be floating-point [batch, length, 1 or 2]");
    }
    absl::StatusOr<int64_t> step = ScalarConstant(*ctx, 1, "frame_step");
    if (!step.ok()) return step.status();
    absl::StatusOr<int64_t> onesided = ctx->GetAttrInt("onesided", 1);
    if (!onesided.ok()) return onesided.status();
    int64_t frame = -1;
    if (ctx->HasInput(3)) {
      absl::StatusOr<int64_t> v = ScalarConstant(*ctx, 3, "frame_length");
      if (!v.ok()) return v.status();
      frame = *v;
    }
    if (ctx->HasInput(2)) {
      const Shape& w = ctx->InputShape(2);
      if (w.rank() != 1 || (frame >= 0 && w.dimensions(0) != frame)) {
        return ctx->Error("window ", w.ToString(false), " must be 1-D of frame_length ", frame);
      }
      frame = w.dimensions(0);
    }
    int64_t batch = x.dimensions(0), length = x.dimensions(1);
    if (frame < 1 || frame > length || *step < 1) {
      return ctx->Error("frame_length ", frame, " and frame_step ", *step,
                        " do not fit a signal of length ", length);
    }
    int64_t frames = (length - frame) / *step + 1;
    int64_t bins = *onesided ? frame / 2 + 1 : frame;
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    // Frames [batch, frames, frame, 1 or 2] from strided slices.
    std::vector<XlaOp> parts;
    for (int64_t f = 0; f < frames; ++f) {
      XlaOp s = SliceInDim(ctx->Input(0), f * *step, f * *step + frame, 1, 1);
      parts.push_back(Reshape(s, {batch, 1, frame, x.dimensions(2)}));
    }
    XlaOp framed = ConcatInDim(b, parts, 1);
    Shape framed_shape = ShapeUtil::MakeShape(t, {batch, frames, frame, x.dimensions(2)});
    auto [re, im] = SplitComplex(framed, framed_shape);
    std::vector<int64_t> dims = {batch, frames, frame};
    if (ctx->HasInput(2)) {
      XlaOp w = BroadcastInDim(ConvertElementType(ctx->Input(2), t), dims, {2});
      re = Mul(re, w);
      if (im) im = Mul(*im, w);
    }
    auto [out_re, out_im] = Dft(re, im, dims, 2, frame, bins, false, t);
    dims[2] = bins;
    ctx->SetOutput(0, JoinComplex(out_re, out_im, dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(
    Name("STFT").SinceVersion(17).CompileTimeConstantInput(1).CompileTimeConstantInput(3), StftOp);

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters,
// num_mel_bins + 2 points evenly spaced on the mel scale between the edge
// frequencies, mapped to DFT bins. All inputs are compile-time constants,
// so the matrix is one.
class MelWeightMatrixOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> mel_bins = ScalarConstant(*ctx, 0, "num_mel_bins");
    absl::StatusOr<int64_t> dft_length = ScalarConstant(*ctx, 1, "dft_length");
    absl::StatusOr<int64_t> sample_rate = ScalarConstant(*ctx, 2, "sample_rate");
    for (const absl::Status& s : {mel_bins.status(), dft_length.status(), sample_rate.status()}) {
      if (!s.ok()) return s;
    }
    double edges[2];
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<Literal> v = ctx->ConstantInput(3 + i);
      if (!v.ok()) return v.status();
      if (v->element_count() != 1) return ctx->Error("input ", 3 + i, " must hold one value");
      edges[i] = v->GetAsDouble(0);
    }
    if (*mel_bins < 1 || *dft_length < 1 || *sample_rate < 1 || edges[0] < 0 ||
        edges[1] < edges[0]) {
      return ctx->Error("bad MelWeightMatrix inputs: ", *mel_bins, " bins, dft_length ",
                        *dft_length, ", sample_rate ", *sample_rate, ", edges ", edges[0], " to ",
                        edges[1]);
    }
    absl::StatusOr<PrimitiveType> type = OutputType(*ctx);
    if (!type.ok()) return type.status();
    int64_t spectrogram = *dft_length / 2 + 1, n = *mel_bins;
    if (absl::Status s = CheckTableSize(*ctx, "MelWeightMatrix", spectrogram, n); !s.ok()) {
      return s;
    }
    auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
    double low = mel(edges[0]), step = (mel(edges[1]) - low) / static_cast<double>(n + 2);
    std::vector<int64_t> points(n + 2);
    for (int64_t i = 0; i < n + 2; ++i) {
      double hz = 700 * (std::pow(10.0, (low + step * static_cast<double>(i)) / 2595) - 1);
      points[i] = static_cast<int64_t>(std::floor(static_cast<double>(*dft_length + 1) * hz /
                                                  static_cast<double>(*sample_rate)));
    }
    Literal out(ShapeUtil::MakeShape(*type, {spectrogram, n}));
    auto set = [&](int64_t bin, int64_t i, double v) {
      if (bin >= 0 && bin < spectrogram) out.SetFromDouble(bin * n + i, v);
    };
    for (int64_t i = 0; i < n; ++i) {
      int64_t left = points[i], center = points[i + 1], right = points[i + 2];
      if (center == left) {
        set(center, i, 1);
      } else {
        for (int64_t j = left; j <= center; ++j) {
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
        }
      }
      for (int64_t j = center; j < right; ++j) {
        set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
      }
    }
    ctx->SetConstantOutput(0, std::move(out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MelWeightMatrix")
                    .SinceVersion(17)
                    .CompileTimeConstantInput(0)
                    .CompileTimeConstantInput(1)
                    .CompileTimeConstantInput(2)
                    .CompileTimeConstantInput(3)
                    .CompileTimeConstantInput(4),
                MelWeightMatrixOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(signal)

}  // namespace axle::onnx
