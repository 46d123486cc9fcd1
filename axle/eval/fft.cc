//===- fft.cc - fft on host literals ----------------------------------------===//
//
// XLA's Fft over the innermost fft_length.size() (1 to 3) dimensions, as a
// plain DFT per line (O(n^2)), computed in complex128 whatever the element
// type:
//
//   FFT    c -> c   X[k] = sum_n x[n] exp(-2 pi i nk/N) along each axis.
//   IFFT   c -> c   the inverse: exp(+2 pi i nk/N) and 1/N along each axis.
//   RFFT   f -> c   the forward transform of the real input; the innermost
//                   axis keeps its N/2 + 1 non-negative frequencies.
//   IRFFT  c -> f   the inverse of RFFT: the outer axes are inverse-
//                   transformed first (on the N/2 + 1 stored frequencies),
//                   then the innermost axis is rebuilt from conjugate
//                   symmetry, X[N - k] = conj(X[k]) for 0 < k < N - N/2,
//                   inverse-transformed, and its real part kept.
//
// As in XLA's evaluator, input extents that differ from the transform's are
// zero-padded or truncated per axis.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using kernel_util::CheckArray;
using kernel_util::CheckResultDims;
using kernel_util::DimsToString;
using kernel_util::InvalidArgument;
using kernel_util::NextIndex;
using kernel_util::Product;

constexpr absl::string_view kOp = "fft";

// In-place DFT of `line` (inverse: conjugate twiddles and 1/N).
void Dft(std::vector<complex128>* line, bool inverse) {
  const int64_t n = static_cast<int64_t>(line->size());
  if (n == 0) return;
  std::vector<complex128> twiddle(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t j = 0; j < n; ++j) {
    double angle = sign * 2.0 * M_PI * static_cast<double>(j) / static_cast<double>(n);
    twiddle[j] = complex128(std::cos(angle), std::sin(angle));
  }
  std::vector<complex128> out(n);
  for (int64_t k = 0; k < n; ++k) {
    complex128 sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += (*line)[j] * twiddle[(j * k) % n];
    out[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
  *line = std::move(out);
}

// Applies `transform` to every line of `data` (row-major, dimensions `dims`)
// along `axis`; along the last axis only coordinates below `last_limit`
// are visited (IRFFT's stored half).
template <typename Transform>
void ForEachLine(std::vector<complex128>* data, absl::Span<const int64_t> dims, int64_t axis,
                 int64_t last_limit, Transform transform) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(dims);
  std::vector<int64_t> others(dims.begin(), dims.end());
  others[axis] = 1;
  if (axis != rank - 1) others[rank - 1] = std::min(others[rank - 1], last_limit);
  if (Product(others) == 0 || dims[axis] == 0) return;
  std::vector<int64_t> index(rank, 0);
  std::vector<complex128> line(dims[axis]);
  do {
    int64_t base = 0;
    for (int64_t d = 0; d < rank; ++d) base += index[d] * strides[d];
    for (int64_t j = 0; j < dims[axis]; ++j) line[j] = (*data)[base + j * strides[axis]];
    transform(&line);
    for (int64_t j = 0; j < dims[axis]; ++j) (*data)[base + j * strides[axis]] = line[j];
  } while (NextIndex(others, absl::MakeSpan(index)));
}

}  // namespace

absl::StatusOr<Literal> EvaluateFft(const HloFftInstruction& fft, const Literal& operand) {
  AXLE_RETURN_IF_ERROR(CheckArray(operand, kOp, "operand"));
  const FftType type = fft.fft_type();
  const std::vector<int64_t>& lengths = fft.fft_length();
  const Shape& in = operand.shape();
  const Shape& shape = fft.shape();
  const int64_t fft_rank = static_cast<int64_t>(lengths.size());
  if (fft_rank < 1 || fft_rank > 3 || in.rank() < fft_rank) {
    return InvalidArgument(kOp, ": fft_length=", DimsToString(lengths), " must name 1 to 3 ",
                           "innermost dimensions of ", in.ToString());
  }
  for (int64_t l : lengths) {
    if (l < 0) return InvalidArgument(kOp, ": negative fft_length ", DimsToString(lengths));
  }
  const PrimitiveType in_type = in.element_type();
  const bool real_in = type == RFFT;
  const bool real_out = type == IRFFT;
  PrimitiveType expected_out = in_type;
  if (real_in) {
    if (in_type != F32 && in_type != F64) {
      return InvalidArgument(kOp, ": RFFT needs an f32 or f64 operand, got ", in.ToString());
    }
    expected_out = in_type == F32 ? C64 : C128;
  } else {
    if (in_type != C64 && in_type != C128) {
      return InvalidArgument(kOp, ": FFT, IFFT and IRFFT need a c64 or c128 operand, got ",
                             in.ToString());
    }
    if (real_out) expected_out = in_type == C64 ? F32 : F64;
  }
  if (!shape.IsArray() || shape.element_type() != expected_out) {
    return InvalidArgument(kOp, ": result ", shape.ToString(), " must have element type ",
                           primitive_util::LowercasePrimitiveTypeName(expected_out));
  }
  const int64_t batch_rank = in.rank() - fft_rank;
  std::vector<int64_t> out_dims(in.dimensions().begin(), in.dimensions().begin() + batch_rank);
  for (int64_t l : lengths) out_dims.push_back(l);
  const int64_t n_last = lengths.back();
  const int64_t half = n_last / 2 + 1;  // stored frequencies of the last axis
  if (type == RFFT && n_last != 0) out_dims.back() = half;
  AXLE_RETURN_IF_ERROR(CheckResultDims(shape, out_dims, kOp));

  Literal result(shape);
  if (result.element_count() == 0) return result;
  // Per batch element: load the working set, transform, store.
  std::vector<int64_t> batch_dims(in.dimensions().begin(), in.dimensions().begin() + batch_rank);
  std::vector<int64_t> in_strides = ShapeUtil::RowMajorStrides(in.dimensions());
  std::vector<int64_t> out_strides = ShapeUtil::RowMajorStrides(shape.dimensions());
  std::vector<int64_t> batch(batch_rank, 0);
  std::vector<complex128> data(Product(lengths));
  const bool inverse = type == IFFT || type == IRFFT;
  auto dft = [inverse](std::vector<complex128>* line) { Dft(line, inverse); };
  do {
    int64_t in_base = 0, out_base = 0;
    for (int64_t d = 0; d < batch_rank; ++d) {
      in_base += batch[d] * in_strides[d];
      out_base += batch[d] * out_strides[d];
    }
    // Load (IRFFT: only the stored half of the last axis).
    const int64_t load_last = type == IRFFT ? std::min(half, n_last) : n_last;
    std::vector<int64_t> w(fft_rank, 0);
    do {
      int64_t linear = 0, offset = in_base;
      bool inside = w.back() < load_last;
      for (int64_t a = 0; a < fft_rank; ++a) {
        linear = linear * lengths[a] + w[a];
        inside &= w[a] < in.dimensions(batch_rank + a);
        offset += w[a] * in_strides[batch_rank + a];
      }
      data[linear] = inside ? operand.GetAsComplex128(offset) : complex128(0);
    } while (NextIndex(lengths, absl::MakeSpan(w)));

    if (type == IRFFT) {
      for (int64_t a = 0; a < fft_rank - 1; ++a) ForEachLine(&data, lengths, a, half, dft);
      ForEachLine(&data, lengths, fft_rank - 1, n_last, [&](std::vector<complex128>* line) {
        for (int64_t k = 1; k < n_last - half + 1; ++k) (*line)[n_last - k] = std::conj((*line)[k]);
        Dft(line, /*inverse=*/true);
      });
    } else {
      for (int64_t a = 0; a < fft_rank; ++a) ForEachLine(&data, lengths, a, n_last, dft);
    }

    // Store (RFFT: the non-negative frequencies of the last axis).
    std::vector<int64_t> o(fft_rank, 0);
    absl::Span<const int64_t> store_dims(out_dims.data() + batch_rank, fft_rank);
    do {
      int64_t linear = 0, offset = out_base;
      for (int64_t a = 0; a < fft_rank; ++a) {
        linear = linear * lengths[a] + o[a];
        offset += o[a] * out_strides[batch_rank + a];
      }
      if (real_out) {
        result.SetFromDouble(offset, data[linear].real());
      } else {
        result.SetFromComplex128(offset, data[linear]);
      }
    } while (NextIndex(store_dims, absl::MakeSpan(o)));
  } while (NextIndex(batch_dims, absl::MakeSpan(batch)));
  return result;
}

}  // namespace axle
