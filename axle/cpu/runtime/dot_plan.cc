//===- dot_plan.cc - A dot as its thunks read it ---------------------------===//
#include "axle/cpu/runtime/dot_plan.h"

#include <algorithm>
#include <cstring>

#include "axle/core/shape_util.h"

namespace axle::cpu::dot {

// Copies the elements of `source` at data `base` into a dense array of
// dims `order` (a permutation of the source's dims), elements of `size`
// bytes.
void GatherInto(const char* base, const Source& source, absl::Span<const int64_t> order,
                int64_t size, char* out) {
  int64_t rank = static_cast<int64_t>(order.size());
  std::vector<int64_t> dims(rank), strides(rank), index(rank, 0);
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = source.dims[order[i]];
    strides[i] = source.strides[order[i]] * size;
    count *= dims[i];
  }
  if (count == 0) return;
  if (rank == 0) {
    std::memcpy(out, base, size);
    return;
  }
  // Row by row along the innermost dimension: one memcpy per contiguous
  // row, a typed strided loop otherwise (a memcpy call per element made the
  // gathers of attention's batched dots a third of its run time).
  const int64_t row = dims[rank - 1];
  const int64_t row_stride = strides[rank - 1];
  const int64_t rows = count / row;
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const char* from = base + offset;
    char* to = out + r * row * size;
    if (row_stride == size) {
      std::memcpy(to, from, row * size);
    } else if (size == 4) {
      // Unrolled: one element per iteration ran 1.5x slower whenever the
      // binary's layout put the 4-instruction loop across a 64-byte line
      // (a bf16 decode step's K-cache gather, 8 -> 12 us, from an
      // unrelated change elsewhere).
#pragma GCC unroll 4
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + 4 * j, from + j * row_stride, 4);
    } else if (size == 2) {
#pragma GCC unroll 4
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + 2 * j, from + j * row_stride, 2);
    } else {
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + j * size, from + j * row_stride, size);
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

std::optional<View3> Collapse(const Source& source,
                              const std::vector<std::vector<int64_t>>& groups) {
  View3 view;
  for (int g = 0; g < 3; ++g) {
    view.dims[g] = 1;
    view.strides[g] = 0;
    int64_t expected = -1;
    for (auto it = groups[g].rbegin(); it != groups[g].rend(); ++it) {
      int64_t dim = source.dims[*it];
      if (dim == 1) continue;
      int64_t stride = source.strides[*it];
      if (expected == -1) {
        view.strides[g] = stride;
      } else if (stride != expected) {
        return std::nullopt;
      }
      expected = stride * dim;
      view.dims[g] *= dim;
    }
  }
  return view;
}

std::vector<int64_t> Flatten(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> all;
  for (const auto& group : groups) all.insert(all.end(), group.begin(), group.end());
  return all;
}

// The output dims grouped as batch, M, N.
std::vector<std::vector<int64_t>> OutputGroups(const DotPlan& plan) {
  std::vector<std::vector<int64_t>> groups(3);
  for (int64_t d = 0; d < static_cast<int64_t>(plan.output_dims.size()); ++d) {
    int g = d < plan.output_batch_rank                        ? 0
            : d < plan.output_batch_rank + plan.output_m_rank ? 1
                                                              : 2;
    groups[g].push_back(d);
  }
  return groups;
}

}  // namespace axle::cpu::dot
