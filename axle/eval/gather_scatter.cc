//===- gather_scatter.cc - gather and scatter on host literals -------------===//
//
// XLA's gather and scatter with full dimension numbers, batching dimensions
// included.
//
// Both read index vectors out of an indices array along index_vector_dim
// (index_vector_dim == rank means an implicit trailing dimension of size 1);
// the other indices dimensions are the "batch" of the operation: gather's
// output batch dimensions (those not in offset_dims) and scatter's update
// scatter dimensions (those not in update_window_dims), in order.
//
// The operand index of an output (update) element is
//   start + batching + window offset:
// start scatters the index vector through start_index_map
// (scatter_dims_to_operand_dims); batching puts the batch coordinate of
// start_indices_batching_dims[i] (scatter_indices_batching_dims[i]) at
// operand_batching_dims[i] (input_batching_dims[i]); the window offset puts
// the offset (window) coordinates, in order, at the operand dimensions that
// are neither collapsed (inserted) nor batching.
//
// Gather clamps each start so that the whole slice lies inside the operand.
// Scatter skips an index vector's whole update window when any part of it
// would fall outside the operand (as XLA's evaluator does), visits index
// vectors in row-major order and, within one, the window in row-major order,
// and combines through the to_apply computation: (current values...,
// update values...) -> new values. Common combiners (add, multiply, and, or,
// integer max/min, and "take the update") run natively.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using namespace kernel_util;  // NOLINT(google-build-using-namespace): the kernels' helpers

bool Contains(absl::Span<const int64_t> dims, int64_t d) { return absl::c_linear_search(dims, d); }

// Reads the index vectors of a gather's start_indices or a scatter's
// indices.
class IndexVectors {
 public:
  IndexVectors(const Literal& indices, int64_t index_vector_dim)
      : indices_(indices), index_vector_dim_(index_vector_dim) {
    const std::vector<int64_t>& dims = indices.shape().dimensions();
    std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(dims);
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (d == index_vector_dim) continue;
      batch_dims_.push_back(dims[d]);
      batch_strides_.push_back(strides[d]);
    }
    implicit_ = index_vector_dim == static_cast<int64_t>(dims.size());
    vector_size_ = implicit_ ? 1 : dims[index_vector_dim];
    vector_stride_ = implicit_ ? 0 : strides[index_vector_dim];
  }

  int64_t vector_size() const { return vector_size_; }
  // The sizes of every indices dimension but index_vector_dim, in order.
  const std::vector<int64_t>& batch_dims() const { return batch_dims_; }
  // Position of indices dimension `d` among the batch dimensions.
  int64_t BatchPosition(int64_t d) const { return d < index_vector_dim_ ? d : d - 1; }

  void Read(absl::Span<const int64_t> batch, std::vector<int64_t>* vector) const {
    int64_t base = 0;
    for (size_t j = 0; j < batch.size(); ++j) base += batch[j] * batch_strides_[j];
    vector->resize(vector_size_);
    for (int64_t i = 0; i < vector_size_; ++i) {
      (*vector)[i] = indices_.GetIntegralAsS64(base + i * vector_stride_).value_or(0);
    }
  }

 private:
  const Literal& indices_;
  int64_t index_vector_dim_;
  bool implicit_ = false;
  int64_t vector_size_ = 1;
  int64_t vector_stride_ = 0;
  std::vector<int64_t> batch_dims_, batch_strides_;
};

absl::Status CheckIndices(const Literal& indices, int64_t index_vector_dim, absl::string_view op) {
  AXLE_RETURN_IF_ERROR(CheckArray(indices, op, "indices"));
  PrimitiveType type = indices.shape().element_type();
  if (!primitive_util::IsIntegralType(type)) {
    return InvalidArgument(op, ": indices must have an integer type, got ",
                           indices.shape().ToString());
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.shape().rank()) {
    return InvalidArgument(op, ": index_vector_dim=", index_vector_dim,
                           " is out of range for indices ", indices.shape().ToString());
  }
  return absl::OkStatus();
}

absl::Status CheckSorted(absl::Span<const int64_t> dims, absl::string_view op,
                         absl::string_view what) {
  if (!absl::c_is_sorted(dims)) {
    return InvalidArgument(op, ": ", what, "=", DimsToString(dims), " must be sorted");
  }
  return absl::OkStatus();
}

// The shared index mapping of gather and scatter, resolved against shapes.
struct IndexMapping {
  int64_t operand_rank = 0;
  std::vector<int64_t> start_index_map;        // index vector entry -> operand dim
  std::vector<int64_t> operand_batching_dims;  // -> operand dim
  std::vector<int64_t> batch_positions;        // batch coordinate feeding each of the above
  std::vector<int64_t> window_operand_dims;    // window (offset) coordinate k -> operand dim
};

absl::StatusOr<IndexMapping> MakeIndexMapping(const Shape& operand, const IndexVectors& vectors,
                                              absl::Span<const int64_t> start_index_map,
                                              absl::Span<const int64_t> collapsed_dims,
                                              absl::Span<const int64_t> operand_batching_dims,
                                              absl::Span<const int64_t> indices_batching_dims,
                                              int64_t index_vector_dim, int64_t indices_rank,
                                              absl::string_view op) {
  IndexMapping m;
  m.operand_rank = operand.rank();
  AXLE_RETURN_IF_ERROR(CheckSorted(collapsed_dims, op, "collapsed (inserted) dims"));
  std::vector<int64_t> removed(collapsed_dims.begin(), collapsed_dims.end());
  absl::c_copy(operand_batching_dims, std::back_inserter(removed));
  AXLE_RETURN_IF_ERROR(
      CheckDimensionList(removed, operand.rank(), op, "collapsed (inserted) and batching dims"));
  AXLE_RETURN_IF_ERROR(CheckDimensionList(start_index_map, operand.rank(), op,
                                          "start_index_map (scatter_dims_to_operand_dims)"));
  if (static_cast<int64_t>(start_index_map.size()) != vectors.vector_size()) {
    return InvalidArgument(op, ": index vectors have ", vectors.vector_size(),
                           " entries but start_index_map (scatter_dims_to_operand_dims) maps ",
                           start_index_map.size());
  }
  if (operand_batching_dims.size() != indices_batching_dims.size()) {
    return InvalidArgument(op, ": operand and indices batching dims differ in number: ",
                           DimsToString(operand_batching_dims), " vs ",
                           DimsToString(indices_batching_dims));
  }
  AXLE_RETURN_IF_ERROR(
      CheckDimensionList(indices_batching_dims, indices_rank, op, "indices batching dims"));
  for (size_t i = 0; i < indices_batching_dims.size(); ++i) {
    int64_t d = indices_batching_dims[i];
    if (d == index_vector_dim) {
      return InvalidArgument(op, ": indices batching dim ", d, " is the index_vector_dim");
    }
    int64_t position = vectors.BatchPosition(d);
    if (vectors.batch_dims()[position] != operand.dimensions(operand_batching_dims[i])) {
      return InvalidArgument(op, ": batching dimension ", operand_batching_dims[i],
                             " of the operand and dimension ", d, " of the indices differ in size");
    }
    m.batch_positions.push_back(position);
  }
  m.start_index_map.assign(start_index_map.begin(), start_index_map.end());
  m.operand_batching_dims.assign(operand_batching_dims.begin(), operand_batching_dims.end());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!Contains(removed, d)) m.window_operand_dims.push_back(d);
  }
  return m;
}

}  // namespace

// --- gather -------------------------------------------------------------------

absl::StatusOr<Literal> EvaluateGather(const HloGatherInstruction& gather, const Literal& operand,
                                       const Literal& start_indices) {
  constexpr absl::string_view op = "gather";
  const GatherDimensionNumbers& dn = gather.gather_dimension_numbers();
  const std::vector<int64_t>& slice_sizes = gather.gather_slice_sizes();
  const Shape& shape = gather.shape();
  AXLE_RETURN_IF_ERROR(CheckArray(operand, op, "operand"));
  AXLE_RETURN_IF_ERROR(CheckIndices(start_indices, dn.index_vector_dim(), op));
  if (!shape.IsArray() || shape.element_type() != operand.shape().element_type()) {
    return InvalidArgument(op, ": result ", shape.ToString(), " must be an array of the operand's ",
                           "element type");
  }
  const Shape& os = operand.shape();
  if (static_cast<int64_t>(slice_sizes.size()) != os.rank()) {
    return InvalidArgument(op, ": slice_sizes=", DimsToString(slice_sizes), " must have one entry ",
                           "per operand dimension of ", os.ToString());
  }
  for (int64_t d = 0; d < os.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > os.dimensions(d)) {
      return InvalidArgument(op, ": slice_sizes=", DimsToString(slice_sizes),
                             " does not fit operand ", os.ToString());
    }
    if ((Contains(dn.collapsed_slice_dims(), d) || Contains(dn.operand_batching_dims(), d)) &&
        slice_sizes[d] != 1) {
      return InvalidArgument(op, ": collapsed or batching dimension ", d,
                             " must have slice size 1");
    }
  }
  IndexVectors vectors(start_indices, dn.index_vector_dim());
  AXLE_ASSIGN_OR_RETURN(
      IndexMapping m, MakeIndexMapping(os, vectors, dn.start_index_map(), dn.collapsed_slice_dims(),
                                       dn.operand_batching_dims(), dn.start_indices_batching_dims(),
                                       dn.index_vector_dim(), start_indices.shape().rank(), op));

  // Expected output dimensions.
  const int64_t out_rank =
      static_cast<int64_t>(vectors.batch_dims().size() + dn.offset_dims_size());
  AXLE_RETURN_IF_ERROR(CheckSorted(dn.offset_dims(), op, "offset_dims"));
  AXLE_RETURN_IF_ERROR(CheckDimensionList(dn.offset_dims(), out_rank, op, "offset_dims"));
  if (m.window_operand_dims.size() != static_cast<size_t>(dn.offset_dims_size())) {
    return InvalidArgument(op, ": offset_dims=", DimsToString(dn.offset_dims()), " must name ",
                           m.window_operand_dims.size(), " output dimensions");
  }
  std::vector<int64_t> out_dims(out_rank);
  std::vector<int64_t> out_batch_dims;  // output dims holding batch coordinates
  for (int64_t d = 0, b = 0, k = 0; d < out_rank; ++d) {
    if (Contains(dn.offset_dims(), d)) {
      out_dims[d] = slice_sizes[m.window_operand_dims[k++]];
    } else {
      out_dims[d] = vectors.batch_dims()[b++];
      out_batch_dims.push_back(d);
    }
  }
  AXLE_RETURN_IF_ERROR(CheckResultDims(shape, out_dims, op));

  Literal result(shape);
  if (result.element_count() == 0) return result;
  const int64_t width = primitive_util::ByteWidth(shape.element_type());
  const auto* src = static_cast<const uint8_t*>(operand.untyped_data());
  auto* dst = static_cast<uint8_t*>(result.untyped_data());
  std::vector<int64_t> operand_strides = ShapeUtil::RowMajorStrides(os.dimensions());
  std::vector<int64_t> out(out_rank, 0), batch(out_batch_dims.size()), vector;
  int64_t linear = 0;
  do {
    for (size_t j = 0; j < out_batch_dims.size(); ++j) batch[j] = out[out_batch_dims[j]];
    vectors.Read(batch, &vector);
    int64_t offset = 0;
    for (size_t k = 0; k < m.start_index_map.size(); ++k) {
      int64_t d = m.start_index_map[k];
      int64_t start = std::clamp<int64_t>(vector[k], 0, os.dimensions(d) - slice_sizes[d]);
      offset += start * operand_strides[d];
    }
    for (size_t i = 0; i < m.operand_batching_dims.size(); ++i) {
      offset += batch[m.batch_positions[i]] * operand_strides[m.operand_batching_dims[i]];
    }
    for (int64_t k = 0; k < dn.offset_dims_size(); ++k) {
      offset += out[dn.offset_dims(k)] * operand_strides[m.window_operand_dims[k]];
    }
    std::memcpy(dst + linear * width, src + offset * width, width);
    ++linear;
  } while (NextIndex(out_dims, absl::MakeSpan(out)));
  return result;
}

// --- scatter -------------------------------------------------------------------

absl::StatusOr<Literal> EvaluateScatter(const HloScatterInstruction& scatter,
                                        absl::Span<const Literal* const> operands,
                                        const Literal& scatter_indices,
                                        absl::Span<const Literal* const> updates,
                                        const ComputationRunner& run) {
  constexpr absl::string_view op = "scatter";
  const ScatterDimensionNumbers& dn = scatter.scatter_dimension_numbers();
  const size_t n = operands.size();
  if (n == 0 || updates.size() != n) {
    return InvalidArgument(op, ": needs N >= 1 operands and as many updates, got ", n, " and ",
                           updates.size());
  }
  if (scatter.called_computations().size() != 1) {
    return InvalidArgument(op, ": needs exactly one to_apply computation");
  }
  const Shape& os = operands[0]->shape();
  const Shape& us = updates[0]->shape();
  for (size_t i = 0; i < n; ++i) {
    AXLE_RETURN_IF_ERROR(CheckArray(*operands[i], op, "operand"));
    AXLE_RETURN_IF_ERROR(CheckArray(*updates[i], op, "updates"));
    if (operands[i]->shape().dimensions() != os.dimensions() ||
        updates[i]->shape().dimensions() != us.dimensions()) {
      return InvalidArgument(op, ": all operands (and all updates) must have the same dimensions");
    }
    if (updates[i]->shape().element_type() != operands[i]->shape().element_type()) {
      return InvalidArgument(op, ": updates ", i, " ", updates[i]->shape().ToString(),
                             " must have the element type of operand ",
                             operands[i]->shape().ToString());
    }
  }
  const Shape& expected_shape = scatter.shape();
  const bool shape_ok = n == 1 ? ShapeUtil::Compatible(expected_shape, os)
                               : expected_shape.IsTuple() &&
                                     expected_shape.tuple_shapes_size() == static_cast<int64_t>(n);
  if (!shape_ok) {
    return InvalidArgument(op, ": result ", expected_shape.ToString(),
                           " does not match the operands");
  }
  AXLE_RETURN_IF_ERROR(CheckIndices(scatter_indices, dn.index_vector_dim(), op));
  IndexVectors vectors(scatter_indices, dn.index_vector_dim());
  AXLE_ASSIGN_OR_RETURN(
      IndexMapping m,
      MakeIndexMapping(os, vectors, dn.scatter_dims_to_operand_dims(), dn.inserted_window_dims(),
                       dn.input_batching_dims(), dn.scatter_indices_batching_dims(),
                       dn.index_vector_dim(), scatter_indices.shape().rank(), op));

  // Update dimensions: window dims map to m.window_operand_dims in order;
  // the others carry the index batch.
  AXLE_RETURN_IF_ERROR(CheckSorted(dn.update_window_dims(), op, "update_window_dims"));
  AXLE_RETURN_IF_ERROR(
      CheckDimensionList(dn.update_window_dims(), us.rank(), op, "update_window_dims"));
  if (m.window_operand_dims.size() != static_cast<size_t>(dn.update_window_dims_size()) ||
      us.rank() !=
          static_cast<int64_t>(vectors.batch_dims().size()) + dn.update_window_dims_size()) {
    return InvalidArgument(op, ": updates ", us.ToString(),
                           " do not fit update_window_dims=", DimsToString(dn.update_window_dims()),
                           " and the indices");
  }
  std::vector<int64_t> scatter_dims, scatter_sizes, window_sizes;
  for (int64_t d = 0; d < us.rank(); ++d) {
    if (!Contains(dn.update_window_dims(), d)) {
      scatter_dims.push_back(d);
      scatter_sizes.push_back(us.dimensions(d));
    }
  }
  if (scatter_sizes != vectors.batch_dims()) {
    return InvalidArgument(op, ": update scatter dimensions ", DimsToString(scatter_sizes),
                           " differ from the indices' batch dimensions ",
                           DimsToString(vectors.batch_dims()));
  }
  // Window size per operand dimension (1 where inserted or batching).
  std::vector<int64_t> window_extent(os.rank(), 1);
  for (int64_t k = 0; k < dn.update_window_dims_size(); ++k) {
    int64_t size = us.dimensions(dn.update_window_dims(k));
    window_sizes.push_back(size);
    if (size > os.dimensions(m.window_operand_dims[k])) {
      return InvalidArgument(op, ": update window dimension ", dn.update_window_dims(k),
                             " is larger than operand dimension ", m.window_operand_dims[k]);
    }
    window_extent[m.window_operand_dims[k]] = size;
  }

  // (operand element, update element) pairs in application order.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<int64_t> operand_strides = ShapeUtil::RowMajorStrides(os.dimensions());
  std::vector<int64_t> update_strides = ShapeUtil::RowMajorStrides(us.dimensions());
  std::vector<int64_t> s(scatter_sizes.size(), 0), w(window_sizes.size(), 0), vector;
  std::vector<int64_t> start(os.rank());
  if (Product(scatter_sizes) > 0 && Product(window_sizes) > 0) {
    do {
      vectors.Read(s, &vector);
      absl::c_fill(start, 0);
      for (size_t k = 0; k < m.start_index_map.size(); ++k) start[m.start_index_map[k]] = vector[k];
      for (size_t i = 0; i < m.operand_batching_dims.size(); ++i) {
        start[m.operand_batching_dims[i]] = s[m.batch_positions[i]];
      }
      bool in_bounds = true;
      for (int64_t d = 0; d < os.rank(); ++d) {
        in_bounds &= start[d] >= 0 && start[d] <= os.dimensions(d) - window_extent[d];
      }
      if (!in_bounds) continue;
      int64_t operand_base = 0, update_base = 0;
      for (int64_t d = 0; d < os.rank(); ++d) operand_base += start[d] * operand_strides[d];
      for (size_t j = 0; j < scatter_dims.size(); ++j) {
        update_base += s[j] * update_strides[scatter_dims[j]];
      }
      do {
        int64_t operand_offset = operand_base, update_offset = update_base;
        for (size_t k = 0; k < w.size(); ++k) {
          operand_offset += w[k] * operand_strides[m.window_operand_dims[k]];
          update_offset += w[k] * update_strides[dn.update_window_dims(k)];
        }
        pairs.emplace_back(operand_offset, update_offset);
      } while (NextIndex(window_sizes, absl::MakeSpan(w)));
    } while (NextIndex(scatter_sizes, absl::MakeSpan(s)));
  }

  std::vector<Literal> results;
  for (size_t i = 0; i < n; ++i) results.push_back(operands[i]->Clone());
  const HloComputation& combiner = *scatter.called_computations()[0];
  PrimitiveType type = os.element_type();
  Combiner kind = n == 1 ? ClassifyCombiner(combiner, type) : Combiner::kGeneric;
  if (kind != Combiner::kGeneric) {
    PrimitiveTypeSwitch(
        [&]<typename T>() {
          absl::Span<T> out = results[0].data<T>();
          absl::Span<const T> upd = updates[0]->data<T>();
          for (const auto& [o, u] : pairs) out[o] = Combine<T>(kind, out[o], upd[u]);
        },
        type);
  } else {
    std::vector<Literal> args(2 * n);
    std::vector<const Literal*> arg_ptrs(2 * n);
    for (const auto& [o, u] : pairs) {
      for (size_t i = 0; i < n; ++i) {
        args[i] = ScalarAt(results[i], o);
        args[n + i] = ScalarAt(*updates[i], u);
      }
      for (size_t i = 0; i < 2 * n; ++i) arg_ptrs[i] = &args[i];
      AXLE_ASSIGN_OR_RETURN(Literal combined, run(combiner, arg_ptrs));
      if (n > 1 &&
          (!combined.shape().IsTuple() || combined.tuple_size() != static_cast<int64_t>(n))) {
        return InvalidArgument(op, ": to_apply must return a tuple of ", n, " scalars");
      }
      for (size_t i = 0; i < n; ++i) {
        const Literal& value = n == 1 ? combined : combined.tuple_element(i);
        if (!ShapeUtil::Compatible(value.shape(),
                                   ShapeUtil::MakeScalarShape(results[i].shape().element_type()))) {
          return InvalidArgument(op, ": to_apply returned ", value.shape().ToString(),
                                 " where a scalar of the operand's type was expected");
        }
        StoreScalar(value, &results[i], o);
      }
    }
  }
  if (n == 1) {
    Literal out = std::move(results[0]);
    if (expected_shape.has_layout()) out.set_layout(expected_shape.layout());
    return out;
  }
  return Literal::MakeTuple(std::move(results));
}

}  // namespace axle
