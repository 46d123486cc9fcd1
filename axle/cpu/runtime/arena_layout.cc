//===- arena_layout.cc - Offsets of a run's temporaries in one arena -------===//
#include "axle/cpu/runtime/arena_layout.h"

#include <algorithm>
#include <numeric>

namespace axle::cpu {

ArenaLayout LayOutArena(absl::Span<const int64_t> sizes, absl::Span<const LiveRange> live,
                        int64_t alignment) {
  const size_t n = sizes.size();
  auto round_up = [&](int64_t value) { return (value + alignment - 1) / alignment * alignment; };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  ArenaLayout layout;
  layout.offsets.assign(n, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of conflicting placed ones
  for (size_t t : order) {
    const int64_t size = round_up(sizes[t]);
    taken.clear();
    for (size_t p : placed) {
      if (live[p].Intersects(live[t])) {
        taken.emplace_back(layout.offsets[p], layout.offsets[p] + round_up(sizes[p]));
      }
    }
    std::sort(taken.begin(), taken.end());
    // The lowest gap that fits.
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (begin - offset >= size) break;
      offset = std::max(offset, end);
    }
    layout.offsets[t] = offset;
    layout.size_bytes = std::max(layout.size_bytes, offset + size);
    placed.push_back(t);
  }
  return layout;
}

}  // namespace axle::cpu
