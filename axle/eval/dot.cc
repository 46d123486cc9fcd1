//===- dot.cc - dot, ragged-dot and scaled-dot on host literals ------------===//
//
// XLA's DotGeneral: the result dimensions are the batch dimensions (in
// lhs_batch_dimensions order), then lhs's free dimensions, then rhs's free
// dimensions (each in ascending order); every result element is the sum of
// products over the contracting dimensions.
//
// As XLA's evaluator does, operands whose element type differs from the
// result's (a "preferred element type") are converted to the result type
// first; sums are formed in kernel_util::Accumulator (float for the narrow
// floats, wrapping 64-bit integers, or-of-ands for pred) and rounded or
// wrapped to the result type once. PACKED_NIBBLE precision on both operands
// multiplies the low and high signed nibbles of integers pairwise.
//
// ragged-dot and scaled-dot follow StableHLO/XLA: see the comments on
// EvaluateRaggedDot and EvaluateScaledDot below.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/algorithm/container.h"
#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"
#include "axle/hlo/analysis/dot_dimensions.h"

namespace axle {
namespace {

using namespace kernel_util;  // NOLINT(google-build-using-namespace): the kernels' helpers

bool Contains(absl::Span<const int64_t> dims, int64_t d) { return absl::c_linear_search(dims, d); }

// Where each result dimension and each contraction step reads lhs and rhs
// (row-major element strides; 0 where an operand does not have the
// dimension).
struct DotGeometry {
  // out_dims: the batch dimensions, then lhs's free ones, then rhs's.
  size_t batch_rank = 0;
  size_t lhs_free_rank = 0;
  std::vector<int64_t> out_dims;
  std::vector<int64_t> lhs_out_stride, rhs_out_stride;
  std::vector<int64_t> contract_dims;
  std::vector<int64_t> lhs_contract_stride, rhs_contract_stride;
};

// Checks the dimension numbers against the operand shapes. `rhs_excluded`
// are rhs dimensions that take no part in the product (ragged-dot's group
// dimension).
absl::Status CheckDotDimensionNumbers(const DotDimensionNumbers& dnums, const Shape& lhs,
                                      const Shape& rhs, absl::Span<const int64_t> rhs_excluded,
                                      absl::string_view op) {
  if (dnums.lhs_batch_dimensions_size() != dnums.rhs_batch_dimensions_size()) {
    return InvalidArgument(op, ": lhs_batch_dims=", DimsToString(dnums.lhs_batch_dimensions()),
                           " and rhs_batch_dims=", DimsToString(dnums.rhs_batch_dimensions()),
                           " differ in length");
  }
  if (dnums.lhs_contracting_dimensions_size() != dnums.rhs_contracting_dimensions_size()) {
    return InvalidArgument(
        op, ": lhs_contracting_dims=", DimsToString(dnums.lhs_contracting_dimensions()),
        " and rhs_contracting_dims=", DimsToString(dnums.rhs_contracting_dimensions()),
        " differ in length");
  }
  std::vector<int64_t> lhs_used = dnums.lhs_batch_dimensions();
  absl::c_copy(dnums.lhs_contracting_dimensions(), std::back_inserter(lhs_used));
  AXLE_RETURN_IF_ERROR(
      CheckDimensionList(lhs_used, lhs.rank(), op, "lhs batch and contracting dims"));
  std::vector<int64_t> rhs_used = dnums.rhs_batch_dimensions();
  absl::c_copy(dnums.rhs_contracting_dimensions(), std::back_inserter(rhs_used));
  absl::c_copy(rhs_excluded, std::back_inserter(rhs_used));
  AXLE_RETURN_IF_ERROR(
      CheckDimensionList(rhs_used, rhs.rank(), op, "rhs batch, contracting and group dims"));
  for (int i = 0; i < dnums.lhs_batch_dimensions_size(); ++i) {
    int64_t l = dnums.lhs_batch_dimensions(i), r = dnums.rhs_batch_dimensions(i);
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return InvalidArgument(op, ": batch dimension ", l, " of lhs ", lhs.ToString(),
                             " and dimension ", r, " of rhs ", rhs.ToString(), " differ in size");
    }
  }
  for (int i = 0; i < dnums.lhs_contracting_dimensions_size(); ++i) {
    int64_t l = dnums.lhs_contracting_dimensions(i), r = dnums.rhs_contracting_dimensions(i);
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return InvalidArgument(op, ": contracting dimension ", l, " of lhs ", lhs.ToString(),
                             " and dimension ", r, " of rhs ", rhs.ToString(), " differ in size");
    }
  }
  return absl::OkStatus();
}

DotGeometry MakeDotGeometry(const DotDimensionNumbers& dnums, const Shape& lhs, const Shape& rhs,
                            absl::Span<const int64_t> rhs_excluded = {}) {
  std::vector<int64_t> lhs_strides = ShapeUtil::RowMajorStrides(lhs.dimensions());
  std::vector<int64_t> rhs_strides = ShapeUtil::RowMajorStrides(rhs.dimensions());
  DotGeometry g;
  auto add_out = [&](int64_t size, int64_t lhs_stride, int64_t rhs_stride) {
    g.out_dims.push_back(size);
    g.lhs_out_stride.push_back(lhs_stride);
    g.rhs_out_stride.push_back(rhs_stride);
  };
  for (int i = 0; i < dnums.lhs_batch_dimensions_size(); ++i) {
    int64_t l = dnums.lhs_batch_dimensions(i), r = dnums.rhs_batch_dimensions(i);
    add_out(lhs.dimensions(l), lhs_strides[l], rhs_strides[r]);
  }
  g.batch_rank = g.out_dims.size();
  for (int64_t d : DotFreeDimensions(lhs.rank(), dnums.lhs_batch_dimensions(),
                                     dnums.lhs_contracting_dimensions())) {
    add_out(lhs.dimensions(d), lhs_strides[d], 0);
  }
  g.lhs_free_rank = g.out_dims.size() - g.batch_rank;
  for (int64_t d : DotFreeDimensions(rhs.rank(), dnums.rhs_batch_dimensions(),
                                     dnums.rhs_contracting_dimensions(), rhs_excluded)) {
    add_out(rhs.dimensions(d), 0, rhs_strides[d]);
  }
  for (int i = 0; i < dnums.lhs_contracting_dimensions_size(); ++i) {
    int64_t l = dnums.lhs_contracting_dimensions(i), r = dnums.rhs_contracting_dimensions(i);
    g.contract_dims.push_back(lhs.dimensions(l));
    g.lhs_contract_stride.push_back(lhs_strides[l]);
    g.rhs_contract_stride.push_back(rhs_strides[r]);
  }
  return g;
}

// Flat offsets of every contraction step, in row-major order of the
// contracting dimensions.
void ContractionOffsets(const DotGeometry& g, std::vector<int64_t>* lhs_offsets,
                        std::vector<int64_t>* rhs_offsets) {
  int64_t steps = Product(g.contract_dims);
  lhs_offsets->clear();
  rhs_offsets->clear();
  if (steps == 0) return;
  std::vector<int64_t> k(g.contract_dims.size(), 0);
  do {
    int64_t lo = 0, ro = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      lo += k[i] * g.lhs_contract_stride[i];
      ro += k[i] * g.rhs_contract_stride[i];
    }
    lhs_offsets->push_back(lo);
    rhs_offsets->push_back(ro);
  } while (NextIndex(g.contract_dims, absl::MakeSpan(k)));
}

// Sums of products of packed signed (or unsigned) nibbles, as XLA's
// evaluator does for PACKED_NIBBLE precision: low*low + high*high.
template <typename T>
uint64_t NibbleProducts(T a, T b) {
  auto split = [](T v, uint64_t* lo, uint64_t* hi) {
    if constexpr (is_intn_v<T> || std::is_signed_v<T>) {
      int64_t s = static_cast<int64_t>(ToAccumulator(v));
      *lo = static_cast<uint64_t>(static_cast<int64_t>(static_cast<uint64_t>(s) << 60) >> 60);
      *hi = static_cast<uint64_t>(s >> 4);
    } else {
      uint64_t u = ToAccumulator(v);
      *lo = u & 15;
      *hi = u >> 4;
    }
  };
  uint64_t alo, ahi, blo, bhi;
  split(a, &alo, &ahi);
  split(b, &blo, &bhi);
  return alo * blo + ahi * bhi;
}

// One operand's elements laid out as [batch, free, contraction] rows: row
// (b, f) holds the K elements the dot contracts for batch b and free index
// f, in the contraction's row-major order. The product loop then reads both
// operands sequentially, whatever their dimension numbers (a column of a
// row-major rhs was a cache miss per element), in the same order as before,
// so the sums are the same.
template <typename T>
std::unique_ptr<T[]> PackRows(absl::Span<const T> data,
                              absl::Span<const int64_t> batch_and_free_dims,
                              absl::Span<const int64_t> strides,
                              absl::Span<const int64_t> contract_k) {
  const int64_t rows = Product(batch_and_free_dims);
  const int64_t k_count = static_cast<int64_t>(contract_k.size());
  // (unique_ptr<T[]> rather than std::vector<T>, whose bool has no data().)
  auto packed = std::make_unique<T[]>(static_cast<size_t>(std::max<int64_t>(1, rows * k_count)));
  if (rows * k_count == 0) return packed;
  std::vector<int64_t> index(batch_and_free_dims.size(), 0);
  int64_t row = 0;
  do {
    int64_t base = 0;
    for (size_t i = 0; i < index.size(); ++i) base += index[i] * strides[i];
    T* out = packed.get() + row * k_count;
    for (int64_t k = 0; k < k_count; ++k) out[k] = data[base + contract_k[k]];
    ++row;
  } while (NextIndex(batch_and_free_dims, absl::MakeSpan(index)));
  return packed;
}

template <typename T>
Literal DotTyped(const DotGeometry& g, const Literal& lhs, const Literal& rhs, const Shape& shape,
                 bool packed_nibble) {
  Literal result(shape);
  absl::Span<T> out = result.data<T>();
  if (out.empty()) return result;
  std::vector<int64_t> lhs_k, rhs_k;
  ContractionOffsets(g, &lhs_k, &rhs_k);
  // The result's dimensions: batch, then lhs free, then rhs free.
  const size_t batch_rank = g.batch_rank;
  const size_t lhs_free_end = batch_rank + g.lhs_free_rank;
  auto dims = [&](size_t begin, size_t end) {
    return absl::MakeConstSpan(g.out_dims).subspan(begin, end - begin);
  };
  auto concat = [](absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
    std::vector<int64_t> v(a.begin(), a.end());
    v.insert(v.end(), b.begin(), b.end());
    return v;
  };
  const std::vector<int64_t> lhs_rows_dims =
      concat(dims(0, batch_rank), dims(batch_rank, lhs_free_end));
  const std::vector<int64_t> lhs_rows_strides =
      concat(absl::MakeConstSpan(g.lhs_out_stride).subspan(0, batch_rank),
             absl::MakeConstSpan(g.lhs_out_stride).subspan(batch_rank, g.lhs_free_rank));
  const std::vector<int64_t> rhs_rows_dims =
      concat(dims(0, batch_rank), dims(lhs_free_end, g.out_dims.size()));
  const std::vector<int64_t> rhs_rows_strides =
      concat(absl::MakeConstSpan(g.rhs_out_stride).subspan(0, batch_rank),
             absl::MakeConstSpan(g.rhs_out_stride).subspan(lhs_free_end));
  const std::unique_ptr<T[]> l = PackRows<T>(lhs.data<T>(), lhs_rows_dims, lhs_rows_strides, lhs_k);
  const std::unique_ptr<T[]> r = PackRows<T>(rhs.data<T>(), rhs_rows_dims, rhs_rows_strides, rhs_k);
  const int64_t batches = Product(dims(0, batch_rank));
  const int64_t lhs_rows = Product(dims(batch_rank, lhs_free_end));
  const int64_t rhs_rows = Product(dims(lhs_free_end, g.out_dims.size()));
  const int64_t k_count = static_cast<int64_t>(lhs_k.size());
  int64_t linear = 0;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < lhs_rows; ++i) {
      const T* a_row = l.get() + (b * lhs_rows + i) * k_count;
      for (int64_t j = 0; j < rhs_rows; ++j) {
        const T* b_row = r.get() + (b * rhs_rows + j) * k_count;
        Accumulator<T> acc{};
        for (int64_t k = 0; k < k_count; ++k) {
          if constexpr (is_integer_v<T>) {
            if (packed_nibble) {
              acc += NibbleProducts(a_row[k], b_row[k]);
              continue;
            }
          }
          acc = MultiplyAdd(acc, ToAccumulator(a_row[k]), ToAccumulator(b_row[k]));
        }
        out[linear++] = FromAccumulator<T>(acc);
      }
    }
  }
  return result;
}

// `literal` converted to `type`, or `literal` itself when it already has it.
absl::StatusOr<const Literal*> ConvertedTo(const Literal& literal, PrimitiveType type,
                                           Literal* storage) {
  if (literal.shape().element_type() == type) return &literal;
  AXLE_ASSIGN_OR_RETURN(*storage, literal.Convert(type));
  return storage;
}

absl::StatusOr<bool> IsPackedNibble(const HloDotInstruction& dot, absl::string_view op) {
  int64_t count =
      absl::c_count(dot.precision_config().operand_precision(), PrecisionConfig::PACKED_NIBBLE);
  if (count == 0) return false;
  if (count != 2 || !primitive_util::IsIntegralType(dot.shape().element_type())) {
    return InvalidArgument(op, ": PACKED_NIBBLE precision needs both operands packed and an ",
                           "integer type");
  }
  return true;
}

// The dot of lhs and rhs (whose dimension numbers were checked) into
// `shape`, operands converted to the result type first.
absl::StatusOr<Literal> ComputeDot(const DotDimensionNumbers& dnums, const Literal& lhs,
                                   const Literal& rhs, const Shape& shape, bool packed_nibble,
                                   absl::string_view op) {
  DotGeometry g = MakeDotGeometry(dnums, lhs.shape(), rhs.shape());
  AXLE_RETURN_IF_ERROR(CheckResultDims(shape, g.out_dims, op));
  PrimitiveType type = shape.element_type();
  Literal lhs_storage, rhs_storage;
  AXLE_ASSIGN_OR_RETURN(const Literal* l, ConvertedTo(lhs, type, &lhs_storage));
  AXLE_ASSIGN_OR_RETURN(const Literal* r, ConvertedTo(rhs, type, &rhs_storage));
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> Literal { return DotTyped<T>(g, *l, *r, shape, packed_nibble); }, type);
}

absl::Status CheckDotOperands(const HloDotInstruction& dot, const Literal& lhs, const Literal& rhs,
                              absl::string_view op) {
  AXLE_RETURN_IF_ERROR(CheckArray(lhs, op, "lhs"));
  AXLE_RETURN_IF_ERROR(CheckArray(rhs, op, "rhs"));
  if (!dot.shape().IsArray()) {
    return InvalidArgument(op, ": result must be an array, got ", dot.shape().ToString());
  }
  return absl::OkStatus();
}

// --- ragged-dot ----------------------------------------------------------------

enum class RaggedMode { kNonContracting, kContracting, kBatch };

// Group boundaries of ragged-dot: group_sizes has shape [prefix..., g]; for
// each prefix row, group i covers [start(row, i), start(row, i) + size).
class GroupTable {
 public:
  GroupTable(const Literal& group_sizes, int64_t num_groups)
      : num_groups_(num_groups), sizes_(group_sizes.element_count()) {
    for (int64_t i = 0; i < static_cast<int64_t>(sizes_.size()); ++i) {
      sizes_[i] = group_sizes.GetIntegralAsS64(i).value_or(0);
    }
    starts_.resize(sizes_.size());
    for (size_t row = 0; row * num_groups_ < sizes_.size(); ++row) {
      int64_t start = 0;
      for (int64_t i = 0; i < num_groups_; ++i) {
        starts_[row * num_groups_ + i] = start;
        start += std::max<int64_t>(0, sizes_[row * num_groups_ + i]);
      }
    }
  }
  // The group containing `coordinate` in prefix row `row`, or -1.
  int64_t GroupOf(int64_t row, int64_t coordinate) const {
    for (int64_t i = 0; i < num_groups_; ++i) {
      if (Contains(row, i, coordinate)) return i;
    }
    return -1;
  }
  bool Contains(int64_t row, int64_t group, int64_t coordinate) const {
    int64_t start = starts_[row * num_groups_ + group];
    return coordinate >= start && coordinate < start + sizes_[row * num_groups_ + group];
  }

 private:
  int64_t num_groups_;
  std::vector<int64_t> sizes_, starts_;
};

template <typename T>
Literal RaggedDotTyped(const HloDotInstruction& dot, RaggedMode mode, int64_t ragged_dim,
                       int64_t group_dim, absl::Span<const int64_t> prefix_dims,
                       const GroupTable& groups, const Literal& lhs, const Literal& rhs) {
  const DotDimensionNumbers& dnums = dot.dot_dimension_numbers();
  const Shape& shape = dot.shape();
  Literal result(shape);
  absl::Span<T> out = result.data<T>();
  if (out.empty()) return result;
  absl::Span<const T> l = lhs.data<T>();
  absl::Span<const T> r = rhs.data<T>();
  std::vector<int64_t> lhs_free = DotFreeDimensions(
      lhs.shape().rank(), dnums.lhs_batch_dimensions(), dnums.lhs_contracting_dimensions());
  std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs.shape().rank(), dnums.rhs_batch_dimensions(),
                        dnums.rhs_contracting_dimensions(), std::vector<int64_t>{group_dim});
  std::vector<int64_t> contract_dims;
  for (int64_t d : dnums.lhs_contracting_dimensions()) {
    contract_dims.push_back(lhs.shape().dimensions(d));
  }
  const int64_t steps = Product(contract_dims);
  const std::vector<int64_t>& lhs_dims = lhs.shape().dimensions();
  // Linear index of the group_sizes prefix row for the current lhs index.
  auto prefix_row = [&](absl::Span<const int64_t> lhs_index) {
    int64_t row = 0;
    for (int64_t d : prefix_dims) row = row * lhs_dims[d] + lhs_index[d];
    return row;
  };

  std::vector<int64_t> index(shape.rank(), 0);
  std::vector<int64_t> lhs_index(lhs.shape().rank()), rhs_index(rhs.shape().rank());
  std::vector<int64_t> k(contract_dims.size());
  int64_t linear = 0;
  do {
    int64_t pos = 0;
    int64_t group = -1;
    if (mode == RaggedMode::kContracting) group = index[pos++];
    for (int i = 0; i < dnums.lhs_batch_dimensions_size(); ++i, ++pos) {
      lhs_index[dnums.lhs_batch_dimensions(i)] = index[pos];
      rhs_index[dnums.rhs_batch_dimensions(i)] = index[pos];
    }
    for (int64_t d : lhs_free) lhs_index[d] = index[pos++];
    for (int64_t d : rhs_free) rhs_index[d] = index[pos++];
    bool in_group = true;
    if (mode == RaggedMode::kNonContracting) {
      int64_t g = groups.GroupOf(prefix_row(lhs_index), lhs_index[ragged_dim]);
      in_group = g >= 0;
      rhs_index[group_dim] = std::max<int64_t>(g, 0);
    }
    Accumulator<T> acc{};
    absl::c_fill(k, 0);
    for (int64_t step = 0; in_group && step < steps; ++step) {
      for (size_t i = 0; i < k.size(); ++i) {
        lhs_index[dnums.lhs_contracting_dimensions(i)] = k[i];
        rhs_index[dnums.rhs_contracting_dimensions(i)] = k[i];
      }
      if (mode != RaggedMode::kContracting ||
          groups.Contains(prefix_row(lhs_index), group, lhs_index[ragged_dim])) {
        acc = MultiplyAdd(acc, ToAccumulator(l[lhs.LinearIndex(lhs_index)]),
                          ToAccumulator(r[rhs.LinearIndex(rhs_index)]));
      }
      NextIndex(contract_dims, absl::MakeSpan(k));
    }
    out[linear++] = FromAccumulator<T>(acc);
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return result;
}

// Dequantizes a block-scaled operand: value * scale[index / block], where
// the block size of each dimension is operand_dim / scale_dim. A scalar
// scale applies to every element.
absl::StatusOr<Literal> Dequantize(const Literal& operand, const Literal& scale, PrimitiveType type,
                                   absl::string_view what) {
  const Shape& os = operand.shape();
  const Shape& ss = scale.shape();
  const bool scalar = ss.rank() == 0;
  if (!scalar && ss.rank() != os.rank()) {
    return InvalidArgument("scaled-dot: ", what, " scale ", ss.ToString(),
                           " must be a scalar or have the rank of ", os.ToString());
  }
  std::vector<int64_t> block(os.rank(), 1);
  for (int64_t d = 0; !scalar && d < os.rank(); ++d) {
    if (ss.dimensions(d) == 0 ? os.dimensions(d) != 0 : os.dimensions(d) % ss.dimensions(d) != 0) {
      return InvalidArgument("scaled-dot: ", what, " ", os.ToString(),
                             " is not a whole number of blocks of its scale ", ss.ToString());
    }
    if (ss.dimensions(d) != 0) block[d] = os.dimensions(d) / ss.dimensions(d);
  }
  Literal result(ShapeUtil::MakeShape(type, os.dimensions()));
  if (operand.element_count() == 0) return result;
  std::vector<int64_t> index(os.rank(), 0), scale_index(os.rank());
  int64_t linear = 0;
  do {
    int64_t s = 0;
    if (!scalar) {
      for (int64_t d = 0; d < os.rank(); ++d) scale_index[d] = index[d] / block[d];
      s = scale.LinearIndex(scale_index);
    }
    result.SetFromDouble(linear, operand.GetAsDouble(linear) * scale.GetAsDouble(s));
    ++linear;
  } while (NextIndex(os.dimensions(), absl::MakeSpan(index)));
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvaluateDot(const HloDotInstruction& dot, const Literal& lhs,
                                    const Literal& rhs) {
  AXLE_RETURN_IF_ERROR(CheckDotOperands(dot, lhs, rhs, "dot"));
  AXLE_RETURN_IF_ERROR(
      CheckDotDimensionNumbers(dot.dot_dimension_numbers(), lhs.shape(), rhs.shape(), {}, "dot"));
  AXLE_ASSIGN_OR_RETURN(bool packed_nibble, IsPackedNibble(dot, "dot"));
  return ComputeDot(dot.dot_dimension_numbers(), lhs, rhs, dot.shape(), packed_nibble, "dot");
}

// ragged-dot (StableHLO's three modes, picked by where lhs_ragged_dims[0]
// lies):
//   ragged non-contracting: [b,m,k] x [g,b,k,n] -> [b,m,n]: the rows of m
//     are split into consecutive groups of group_sizes; rows of group i use
//     rhs[i]; rows past the last group are zero.
//   ragged contracting: [b,m,k] x [b,k,n] -> [g,b,m,n]: result group i sums
//     only over group i's range of k.
//   ragged batch: [b,m,k] x [b,k,n] -> [b,m,n]: an ordinary dot.
// group_sizes is [g] or [prefix..., g], where the prefix is lhs's batch
// dimensions followed by (non-contracting mode) lhs's free dimensions before
// the ragged one or (contracting mode) the contracting dimensions listed
// before it; (batch mode) the batch dimensions listed before it.
absl::StatusOr<Literal> EvaluateRaggedDot(const HloDotInstruction& dot, const Literal& lhs,
                                          const Literal& rhs, const Literal& group_sizes) {
  constexpr absl::string_view op = "ragged-dot";
  AXLE_RETURN_IF_ERROR(CheckDotOperands(dot, lhs, rhs, op));
  AXLE_RETURN_IF_ERROR(CheckArray(group_sizes, op, "group_sizes"));
  if (!primitive_util::IsIntegralType(group_sizes.shape().element_type()) ||
      group_sizes.shape().rank() < 1) {
    return InvalidArgument(op, ": group_sizes must be an integer array of rank >= 1, got ",
                           group_sizes.shape().ToString());
  }
  const DotDimensionNumbers& dnums = dot.dot_dimension_numbers();
  const std::vector<int64_t>& ragged = dot.attrs().lhs_ragged_dimensions;
  const std::vector<int64_t>& group_dims = dot.attrs().rhs_group_dimensions;
  if (ragged.size() != 1 || ragged[0] < 0 || ragged[0] >= lhs.shape().rank()) {
    return InvalidArgument(op, ": needs exactly one lhs ragged dimension in range, got ",
                           DimsToString(ragged));
  }
  const int64_t ragged_dim = ragged[0];
  AXLE_RETURN_IF_ERROR(CheckDotDimensionNumbers(dnums, lhs.shape(), rhs.shape(), group_dims, op));
  const int64_t num_groups = group_sizes.shape().dimensions().back();

  RaggedMode mode = RaggedMode::kNonContracting;
  std::vector<int64_t> prefix_dims = dnums.lhs_batch_dimensions();
  if (Contains(dnums.lhs_batch_dimensions(), ragged_dim)) {
    mode = RaggedMode::kBatch;
    prefix_dims.resize(absl::c_find(dnums.lhs_batch_dimensions(), ragged_dim) -
                       dnums.lhs_batch_dimensions().begin());
  } else if (Contains(dnums.lhs_contracting_dimensions(), ragged_dim)) {
    mode = RaggedMode::kContracting;
    for (int64_t d : dnums.lhs_contracting_dimensions()) {
      if (d == ragged_dim) break;
      prefix_dims.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < ragged_dim; ++d) {
      if (!Contains(dnums.lhs_batch_dimensions(), d) &&
          !Contains(dnums.lhs_contracting_dimensions(), d)) {
        prefix_dims.push_back(d);
      }
    }
  }
  if ((mode == RaggedMode::kNonContracting) != (group_dims.size() == 1) || group_dims.size() > 1) {
    return InvalidArgument(op, ": rhs_group_dims=", DimsToString(group_dims),
                           " must name one dimension exactly when the ragged dimension is "
                           "non-contracting");
  }
  if (mode == RaggedMode::kNonContracting && rhs.shape().dimensions(group_dims[0]) != num_groups) {
    return InvalidArgument(op, ": rhs group dimension has size ",
                           rhs.shape().dimensions(group_dims[0]), " but group_sizes has ",
                           num_groups, " groups");
  }
  if (group_sizes.shape().rank() == 1) {
    prefix_dims.clear();
  } else {
    std::vector<int64_t> expected;
    expected.reserve(prefix_dims.size() + 1);
    for (int64_t d : prefix_dims) expected.push_back(lhs.shape().dimensions(d));
    expected.push_back(num_groups);
    if (absl::Span<const int64_t>(group_sizes.shape().dimensions()) != expected) {
      return InvalidArgument(op, ": group_sizes ", group_sizes.shape().ToString(),
                             " does not have the expected dimensions ", DimsToString(expected));
    }
  }

  AXLE_ASSIGN_OR_RETURN(bool packed_nibble, IsPackedNibble(dot, op));
  if (mode == RaggedMode::kBatch) {
    return ComputeDot(dnums, lhs, rhs, dot.shape(), packed_nibble, op);
  }
  if (packed_nibble) return absl::UnimplementedError("ragged-dot: PACKED_NIBBLE precision");

  std::vector<int64_t> out_dims;
  if (mode == RaggedMode::kContracting) out_dims.push_back(num_groups);
  const int64_t group_dim = group_dims.empty() ? -1 : group_dims[0];
  DotGeometry g = MakeDotGeometry(dnums, lhs.shape(), rhs.shape(), group_dims);
  absl::c_copy(g.out_dims, std::back_inserter(out_dims));
  AXLE_RETURN_IF_ERROR(CheckResultDims(dot.shape(), out_dims, op));

  PrimitiveType type = dot.shape().element_type();
  Literal lhs_storage, rhs_storage;
  AXLE_ASSIGN_OR_RETURN(const Literal* l, ConvertedTo(lhs, type, &lhs_storage));
  AXLE_ASSIGN_OR_RETURN(const Literal* r, ConvertedTo(rhs, type, &rhs_storage));
  GroupTable groups(group_sizes, num_groups);
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> Literal {
        return RaggedDotTyped<T>(dot, mode, ragged_dim, group_dim, prefix_dims, groups, *l, *r);
      },
      type);
}

// scaled-dot: dot(lhs * broadcast(lhs_scale), rhs * broadcast(rhs_scale)).
// Each scale has its operand's rank (or is a scalar) and every operand
// dimension is a whole number of blocks of the scale's dimension (MX block
// scaling: typically blocks of 32 along the contracting dimension). The
// products are formed in double and rounded to the result type, then the
// dot runs in the result type.
absl::StatusOr<Literal> EvaluateScaledDot(const HloDotInstruction& dot, const Literal& lhs,
                                          const Literal& rhs, const Literal& lhs_scale,
                                          const Literal& rhs_scale) {
  constexpr absl::string_view op = "scaled-dot";
  AXLE_RETURN_IF_ERROR(CheckDotOperands(dot, lhs, rhs, op));
  AXLE_RETURN_IF_ERROR(CheckArray(lhs_scale, op, "lhs_scale"));
  AXLE_RETURN_IF_ERROR(CheckArray(rhs_scale, op, "rhs_scale"));
  PrimitiveType type = dot.shape().element_type();
  for (PrimitiveType t : {type, lhs.shape().element_type(), rhs.shape().element_type(),
                          lhs_scale.shape().element_type(), rhs_scale.shape().element_type()}) {
    if (primitive_util::IsComplexType(t)) {
      return absl::UnimplementedError("scaled-dot: complex element types");
    }
  }
  AXLE_RETURN_IF_ERROR(
      CheckDotDimensionNumbers(dot.dot_dimension_numbers(), lhs.shape(), rhs.shape(), {}, op));
  AXLE_ASSIGN_OR_RETURN(Literal l, Dequantize(lhs, lhs_scale, type, "lhs"));
  AXLE_ASSIGN_OR_RETURN(Literal r, Dequantize(rhs, rhs_scale, type, "rhs"));
  return ComputeDot(dot.dot_dimension_numbers(), l, r, dot.shape(), /*packed_nibble=*/false, op);
}

}  // namespace axle
