//===- scatter_indexing.cc - A scatter's geometry from shapes --------------===//
#include "axle/core/scatter_indexing.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "axle/core/shape_util.h"

namespace axle {
namespace {

bool DistinctInRange(absl::Span<const int64_t> values, int64_t bound) {
  std::vector<bool> seen(std::max<int64_t>(bound, 0), false);
  for (int64_t v : values) {
    if (v < 0 || v >= bound || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

}  // namespace

absl::StatusOr<ScatterIndexing> AnalyzeScatterIndexing(const Shape& operand, const Shape& indices,
                                                       const Shape& update,
                                                       const ScatterDimensionNumbers& dn) {
  ScatterIndexing g;
  g.operand_dims = operand.dimensions();
  g.update_dims = update.dimensions();
  g.indices_dims = indices.dimensions();
  g.indices_type = indices.element_type();
  g.index_vector_dim = dn.index_vector_dim();
  const int64_t operand_rank = operand.rank(), update_rank = update.rank();
  const int64_t indices_rank = indices.rank();
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices_rank) {
    return absl::InvalidArgumentError(absl::StrCat("index_vector_dim=", g.index_vector_dim,
                                                   " is out of range for indices of rank ",
                                                   indices_rank));
  }
  const auto& window_dims = dn.update_window_dims();
  const auto& inserted = dn.inserted_window_dims();
  const auto& to_operand = dn.scatter_dims_to_operand_dims();
  const auto& input_batching = dn.input_batching_dims();
  const auto& indices_batching = dn.scatter_indices_batching_dims();
  if (!DistinctInRange(window_dims, update_rank) ||
      !std::is_sorted(window_dims.begin(), window_dims.end())) {
    return absl::InvalidArgumentError(absl::StrCat("update_window_dims={",
                                                   absl::StrJoin(window_dims, ","),
                                                   "} must be sorted dimensions of the updates"));
  }
  std::vector<int64_t> not_window(inserted.begin(), inserted.end());
  not_window.insert(not_window.end(), input_batching.begin(), input_batching.end());
  if (!DistinctInRange(not_window, operand_rank) ||
      static_cast<int64_t>(window_dims.size() + not_window.size()) != operand_rank) {
    return absl::InvalidArgumentError(
        "update_window_dims, inserted_window_dims and input_batching_dims do not account for "
        "each operand dimension once");
  }
  const int64_t vector_size =
      g.index_vector_dim == indices_rank ? 1 : indices.dimensions(g.index_vector_dim);
  if (!DistinctInRange(to_operand, operand_rank) ||
      static_cast<int64_t>(to_operand.size()) != vector_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scatter_dims_to_operand_dims={", absl::StrJoin(to_operand, ","),
        "} must be distinct operand dimensions, one per index vector element (", vector_size, ")"));
  }
  if (input_batching.size() != indices_batching.size()) {
    return absl::InvalidArgumentError(
        "input_batching_dims and scatter_indices_batching_dims differ in length");
  }
  g.update_window_dims.assign(window_dims.begin(), window_dims.end());
  for (int64_t d = 0; d < update_rank; ++d) {
    if (!std::binary_search(window_dims.begin(), window_dims.end(), d)) {
      g.update_scatter_dims.push_back(d);
    }
  }
  // The update scatter dimensions walk the indices' dimensions but
  // index_vector_dim, in order: their sizes must agree.
  std::vector<int64_t> batch_sizes;
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != g.index_vector_dim) batch_sizes.push_back(indices.dimensions(d));
  }
  std::vector<int64_t> scatter_sizes;
  for (int64_t d : g.update_scatter_dims) scatter_sizes.push_back(update.dimensions(d));
  if (scatter_sizes != batch_sizes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update scatter dimensions {", absl::StrJoin(scatter_sizes, ","),
        "} do not match the indices' batch dimensions {", absl::StrJoin(batch_sizes, ","), "}"));
  }
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (std::find(not_window.begin(), not_window.end(), d) == not_window.end()) {
      g.window_operand_dims.push_back(d);
    }
  }
  g.scatter_dims_to_operand_dims.assign(to_operand.begin(), to_operand.end());
  for (size_t i = 0; i < input_batching.size(); ++i) {
    const int64_t d = indices_batching[i];
    if (d < 0 || d >= indices_rank || d == g.index_vector_dim) {
      return absl::InvalidArgumentError(absl::StrCat("scatter_indices_batching_dims entry ", d,
                                                     " is not a batch dimension of the indices"));
    }
    if (operand.dimensions(input_batching[i]) != indices.dimensions(d)) {
      return absl::InvalidArgumentError(
          "a batching dimension's size differs between operand and indices");
    }
    g.input_batching_dims.push_back(input_batching[i]);
    g.batch_positions.push_back(d < g.index_vector_dim ? d : d - 1);
  }
  return g;
}

ScatterWalk ScatterWalkOf(const ScatterIndexing& g) {
  ScatterWalk walk;
  walk.operand_strides = ShapeUtil::RowMajorStrides(g.operand_dims);
  walk.indices_strides = ShapeUtil::RowMajorStrides(g.indices_dims);
  const auto indices_rank = static_cast<int64_t>(g.indices_dims.size());
  if (g.index_vector_dim < indices_rank) {
    walk.vector_size = g.indices_dims[g.index_vector_dim];
    walk.vector_stride = walk.indices_strides[g.index_vector_dim];
  }
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != g.index_vector_dim) walk.batch_strides.push_back(walk.indices_strides[d]);
  }
  walk.window_extent.assign(g.operand_dims.size(), 1);
  for (size_t k = 0; k < g.update_window_dims.size(); ++k) {
    walk.window_extent[g.window_operand_dims[k]] = g.update_dims[g.update_window_dims[k]];
  }
  return walk;
}

}  // namespace axle
