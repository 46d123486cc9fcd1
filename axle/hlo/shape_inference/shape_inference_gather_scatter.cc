//===- shape_inference_gather_scatter.cc - gather and scatter --------------===//
//
// XLA's gather and scatter, including batching dimensions
// (operand_batching_dims / start_indices_batching_dims for gather,
// input_batching_dims / scatter_indices_batching_dims for scatter). Indices
// whose index_vector_dim equals their rank get an implicit trailing 1.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

namespace {

bool Contains(absl::Span<const int64_t> values, int64_t v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool SortedUnique(absl::Span<const int64_t> values) {
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i - 1] >= values[i]) return false;
  }
  return true;
}

// Checks that `dims` (named `name`) are unique, in [0, bound), and sorted
// when `sorted` is set.
absl::Status CheckDims(absl::string_view op, absl::string_view name, absl::Span<const int64_t> dims,
                       int64_t bound, bool sorted) {
  for (int64_t d : dims) {
    if (d < 0 || d >= bound) {
      return InvalidArgument(op, ": ", name, "=", Str(dims), " has an entry out of range [0, ",
                             bound, ").");
    }
  }
  if (!AllUnique(dims)) {
    return InvalidArgument(op, ": ", name, "=", Str(dims), " repeats a dimension.");
  }
  if (sorted && !SortedUnique(dims)) {
    return InvalidArgument(op, ": ", name, "=", Str(dims), " must be sorted.");
  }
  return absl::OkStatus();
}

absl::Status CheckDisjoint(absl::string_view op, absl::string_view name_a,
                           absl::Span<const int64_t> a, absl::string_view name_b,
                           absl::Span<const int64_t> b) {
  for (int64_t d : a) {
    if (Contains(b, d)) {
      return InvalidArgument(op, ": dimension ", d, " is in both ", name_a, "=", Str(a), " and ",
                             name_b, "=", Str(b), ".");
    }
  }
  return absl::OkStatus();
}

// The batching dimensions of the indices: unique, in range, not the index
// vector dimension, as many as the operand's, with matching sizes.
absl::Status CheckIndicesBatchingDims(absl::string_view op, absl::string_view operand_name,
                                      absl::Span<const int64_t> operand_batching,
                                      absl::string_view indices_name,
                                      absl::Span<const int64_t> indices_batching,
                                      const Shape& operand, const Shape& indices,
                                      int64_t index_vector_dim) {
  if (auto s = CheckDims(op, indices_name, indices_batching, indices.rank(), false); !s.ok()) {
    return s;
  }
  if (Contains(indices_batching, index_vector_dim)) {
    return InvalidArgument(op, ": ", indices_name, "=", Str(indices_batching),
                           " must not contain index_vector_dim=", index_vector_dim, ".");
  }
  if (operand_batching.size() != indices_batching.size()) {
    return InvalidArgument(op, ": ", operand_name, "=", Str(operand_batching), " and ",
                           indices_name, "=", Str(indices_batching), " must have the same length.");
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    if (operand.dimensions(operand_batching[i]) != indices.dimensions(indices_batching[i])) {
      return InvalidArgument(op, ": batching dimension ", operand_batching[i], " of the operand (",
                             Str(operand), ") and dimension ", indices_batching[i],
                             " of the indices (", Str(indices), ") have different sizes.");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferGatherShape(const Shape& operand,
                                                       const Shape& start_indices,
                                                       const GatherDimensionNumbers& dnums,
                                                       absl::Span<const int64_t> slice_sizes) {
  constexpr absl::string_view kOp = "gather";
  if (auto s = ExpectArray(operand, "operand of gather"); !s.ok()) return s;
  if (auto s = ExpectArray(start_indices, "start indices of gather"); !s.ok()) return s;
  if (!IsIntegral(start_indices)) {
    return InvalidArgument("gather: start indices must be integral; got ", Str(start_indices), ".");
  }
  const int64_t ivd = dnums.index_vector_dim();
  if (ivd < 0 || ivd > start_indices.rank()) {
    return InvalidArgument("gather: index_vector_dim=", ivd, " must be in [0, ",
                           start_indices.rank() + 1, ") for start indices ", Str(start_indices),
                           ".");
  }
  std::vector<int64_t> indices_dims = start_indices.dimensions();
  std::vector<bool> indices_dynamic = start_indices.dynamic_dimensions();
  if (ivd == start_indices.rank()) {
    indices_dims.push_back(1);
    indices_dynamic.push_back(false);
  }
  const int64_t output_rank =
      dnums.offset_dims_size() + static_cast<int64_t>(indices_dims.size()) - 1;
  if (auto s = CheckDims(kOp, "offset_dims", dnums.offset_dims(), output_rank, true); !s.ok()) {
    return s;
  }
  if (dnums.start_index_map_size() != indices_dims[ivd]) {
    return InvalidArgument("gather: start_index_map=", Str(dnums.start_index_map()), " has ",
                           dnums.start_index_map_size(),
                           " entries but dimension index_vector_dim=", ivd,
                           " of the start indices has size ", indices_dims[ivd], ".");
  }
  if (auto s = CheckDims(kOp, "start_index_map", dnums.start_index_map(), operand.rank(), false);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckDims(kOp, "collapsed_slice_dims", dnums.collapsed_slice_dims(), operand.rank(),
                         true);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckDims(kOp, "operand_batching_dims", dnums.operand_batching_dims(),
                         operand.rank(), true);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckDisjoint(kOp, "collapsed_slice_dims", dnums.collapsed_slice_dims(),
                             "operand_batching_dims", dnums.operand_batching_dims());
      !s.ok()) {
    return s;
  }
  if (auto s = CheckDisjoint(kOp, "start_index_map", dnums.start_index_map(),
                             "operand_batching_dims", dnums.operand_batching_dims());
      !s.ok()) {
    return s;
  }
  Shape expanded_indices = MakeArray(start_indices.element_type(), indices_dims);
  if (auto s = CheckIndicesBatchingDims(kOp, "operand_batching_dims", dnums.operand_batching_dims(),
                                        "start_indices_batching_dims",
                                        dnums.start_indices_batching_dims(), operand,
                                        expanded_indices, ivd);
      !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArgument("gather: slice_sizes=", Str(slice_sizes), " has ", slice_sizes.size(),
                           " entries but the operand has rank ", operand.rank(), ".");
  }
  if (static_cast<int64_t>(slice_sizes.size()) != dnums.offset_dims_size() +
                                                      dnums.collapsed_slice_dims_size() +
                                                      dnums.operand_batching_dims_size()) {
    return InvalidArgument(
        "gather: every operand dimension must be an offset dimension, "
        "collapsed or a batching dimension; got ",
        slice_sizes.size(), " slice sizes, offset_dims=", Str(dnums.offset_dims()),
        ", collapsed_slice_dims=", Str(dnums.collapsed_slice_dims()),
        ", operand_batching_dims=", Str(dnums.operand_batching_dims()), ".");
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 ||
        (!operand.is_unbounded_dynamic_dimension(d) && slice_sizes[d] > operand.dimensions(d))) {
      return InvalidArgument("gather: slice size ", slice_sizes[d], " of dimension ", d,
                             " is out of range [0, ", operand.dimensions(d), "] for ", Str(operand),
                             ".");
    }
  }
  for (int64_t d : dnums.collapsed_slice_dims()) {
    if (slice_sizes[d] > 1) {
      return InvalidArgument("gather: collapsed dimension ", d, " has slice size ", slice_sizes[d],
                             " (must be 0 or 1).");
    }
  }
  for (int64_t d : dnums.operand_batching_dims()) {
    if (slice_sizes[d] > 1) {
      return InvalidArgument("gather: batching dimension ", d, " has slice size ", slice_sizes[d],
                             " (must be 0 or 1).");
    }
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  int64_t offset_seen = 0, gather_seen = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    if (Contains(dnums.offset_dims(), i)) {
      while (Contains(dnums.collapsed_slice_dims(), offset_seen) ||
             Contains(dnums.operand_batching_dims(), offset_seen)) {
        ++offset_seen;
      }
      dims.push_back(slice_sizes[offset_seen]);
      dynamic.push_back(slice_sizes[offset_seen] == operand.dimensions(offset_seen) &&
                        operand.is_dynamic_dimension(offset_seen));
      ++offset_seen;
    } else {
      if (gather_seen == ivd) ++gather_seen;
      dims.push_back(indices_dims[gather_seen]);
      dynamic.push_back(indices_dynamic[gather_seen]);
      ++gather_seen;
    }
  }
  return MakeArray(operand.element_type(), dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferScatterShape(absl::Span<const Shape* const> args,
                                                        const ProgramShape& to_apply,
                                                        const ScatterDimensionNumbers& dnums) {
  constexpr absl::string_view kOp = "scatter";
  const int64_t n = static_cast<int64_t>(args.size()) / 2;
  if (n < 1 || n * 2 + 1 != static_cast<int64_t>(args.size())) {
    return InvalidArgument(
        "scatter: expected N operands, the indices and N updates (2N+1 "
        "operands); got ",
        args.size(), ".");
  }
  const Shape& indices = *args[n];
  if (auto s = ExpectArray(indices, "scatter indices of scatter"); !s.ok()) return s;
  if (!IsIntegral(indices)) {
    return InvalidArgument("scatter: scatter indices must be integral; got ", Str(indices), ".");
  }
  const int64_t ivd = dnums.index_vector_dim();
  if (ivd < 0 || ivd > indices.rank()) {
    return InvalidArgument("scatter: index_vector_dim=", ivd, " must be in [0, ",
                           indices.rank() + 1, ") for scatter indices ", Str(indices), ".");
  }
  std::vector<int64_t> indices_dims = indices.dimensions();
  if (ivd == indices.rank()) indices_dims.push_back(1);
  Shape expanded_indices = MakeArray(indices.element_type(), indices_dims);

  auto operands = args.first(n);
  auto updates = args.last(n);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& operand = *operands[i];
    const Shape& update = *updates[i];
    if (auto s = ExpectArray(operand, absl::StrCat("operand ", i, " of scatter")); !s.ok()) {
      return s;
    }
    if (auto s = ExpectArray(update, absl::StrCat("updates ", i, " of scatter")); !s.ok()) {
      return s;
    }
    if (!SameDimensions(operand, *operands[0])) {
      return InvalidArgument("scatter: all operands must have the same dimensions; operand 0 is ",
                             Str(*operands[0]), ", operand ", i, " is ", Str(operand), ".");
    }
    if (!SameDimensions(update, *updates[0])) {
      return InvalidArgument("scatter: all updates must have the same dimensions; updates 0 is ",
                             Str(*updates[0]), ", updates ", i, " is ", Str(update), ".");
    }
    const int64_t expected_updates_rank =
        static_cast<int64_t>(indices_dims.size()) - 1 + dnums.update_window_dims_size();
    if (update.rank() != expected_updates_rank) {
      return InvalidArgument("scatter: updates ", Str(update), " must have rank ",
                             expected_updates_rank, " (indices batch rank + update_window_dims).");
    }
    if (auto s =
            CheckDims(kOp, "update_window_dims", dnums.update_window_dims(), update.rank(), true);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckDims(kOp, "inserted_window_dims", dnums.inserted_window_dims(),
                           operand.rank(), true);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckDims(kOp, "input_batching_dims", dnums.input_batching_dims(), operand.rank(),
                           true);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckDisjoint(kOp, "inserted_window_dims", dnums.inserted_window_dims(),
                               "input_batching_dims", dnums.input_batching_dims());
        !s.ok()) {
      return s;
    }
    const int64_t window_size = dnums.update_window_dims_size() +
                                dnums.inserted_window_dims_size() +
                                dnums.input_batching_dims_size();
    if (window_size != operand.rank()) {
      return InvalidArgument(
          "scatter: update_window_dims, inserted_window_dims and "
          "input_batching_dims have ",
          window_size, " entries in all but the operand has rank ", operand.rank(), ".");
    }
    if (dnums.scatter_dims_to_operand_dims_size() != indices_dims[ivd]) {
      return InvalidArgument(
          "scatter: scatter_dims_to_operand_dims=", Str(dnums.scatter_dims_to_operand_dims()),
          " has ", dnums.scatter_dims_to_operand_dims_size(),
          " entries but dimension index_vector_dim=", ivd, " of the indices has size ",
          indices_dims[ivd], ".");
    }
    if (auto s = CheckDims(kOp, "scatter_dims_to_operand_dims",
                           dnums.scatter_dims_to_operand_dims(), operand.rank(), false);
        !s.ok()) {
      return s;
    }
    if (auto s =
            CheckDisjoint(kOp, "scatter_dims_to_operand_dims", dnums.scatter_dims_to_operand_dims(),
                          "input_batching_dims", dnums.input_batching_dims());
        !s.ok()) {
      return s;
    }
    if (auto s = CheckIndicesBatchingDims(kOp, "input_batching_dims", dnums.input_batching_dims(),
                                          "scatter_indices_batching_dims",
                                          dnums.scatter_indices_batching_dims(), operand,
                                          expanded_indices, ivd);
        !s.ok()) {
      return s;
    }
    std::vector<int64_t> max_window_sizes;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (Contains(dnums.inserted_window_dims(), d) || Contains(dnums.input_batching_dims(), d)) {
        continue;
      }
      max_window_sizes.push_back(operand.dimensions(d));
    }
    for (int j = 0; j < dnums.update_window_dims_size(); ++j) {
      int64_t ud = dnums.update_window_dims(j);
      if (update.dimensions(ud) > max_window_sizes[j]) {
        return InvalidArgument("scatter: window dimension ", ud, " of the updates (", Str(update),
                               ") is larger than the corresponding operand "
                               "dimension (",
                               max_window_sizes[j], ").");
      }
    }
    int64_t scatter_seen = 0;
    for (int64_t d = 0; d < update.rank(); ++d) {
      if (Contains(dnums.update_window_dims(), d)) continue;
      if (scatter_seen == ivd) ++scatter_seen;
      if (update.dimensions(d) != indices_dims[scatter_seen]) {
        return InvalidArgument("scatter: scatter dimension ", d, " of the updates (", Str(update),
                               ") must match dimension ", scatter_seen, " of the indices (",
                               Str(indices), ").");
      }
      ++scatter_seen;
    }
  }
  // The update computation is checked like a reducer: N accumulators (of
  // the operands' element types), then N update elements.
  std::vector<Shape> init_shapes;
  std::vector<PrimitiveType> update_types;
  for (int64_t i = 0; i < n; ++i) {
    init_shapes.push_back(MakeScalar(operands[i]->element_type()));
    update_types.push_back(updates[i]->element_type());
  }
  if (static_cast<int64_t>(to_apply.parameters().size()) != 2 * n) {
    return InvalidArgument("scatter: the update computation must take ", 2 * n,
                           " parameters, but takes ", to_apply.parameters().size(), " (",
                           Str(to_apply), ").");
  }
  const Shape& result = to_apply.result();
  for (int64_t i = 0; i < n; ++i) {
    const Shape* accumulator = result.IsTuple() && result.tuple_shapes_size() == n
                                   ? &result.tuple_shapes(i)
                               : n == 1 && result.IsArray() ? &result
                                                            : nullptr;
    if (accumulator == nullptr || !accumulator->IsScalar()) {
      return InvalidArgument("scatter: the update computation must return ",
                             n == 1 ? "a scalar" : absl::StrCat("a tuple of ", n, " scalars"),
                             "; got ", Str(result), ".");
    }
    if (!CompatibleShapes(*accumulator, to_apply.parameters()[i])) {
      return InvalidArgument("scatter: parameter ", i, " of the update computation (",
                             Str(to_apply.parameters()[i]), ") differs from its result ",
                             Str(*accumulator), ".");
    }
    if (!CompatibleShapes(*accumulator, init_shapes[i], true)) {
      return InvalidArgument("scatter: the update computation's result ", Str(*accumulator),
                             " differs from the element type of operand ", i, " (",
                             Str(*operands[i]), ").");
    }
    if (!CompatibleShapes(MakeScalar(update_types[i]), to_apply.parameters()[n + i], true)) {
      return InvalidArgument("scatter: parameter ", n + i, " of the update computation (",
                             Str(to_apply.parameters()[n + i]),
                             ") differs from the element type of updates ", i, " (",
                             Str(*updates[i]), ").");
    }
  }
  if (n == 1) return *operands[0];
  std::vector<Shape> results;
  for (const Shape* s : operands) results.push_back(*s);
  return ShapeUtil::MakeTupleShape(std::move(results));
}

}  // namespace axle
