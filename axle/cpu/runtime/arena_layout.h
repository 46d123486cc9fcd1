//===- arena_layout.h - Offsets of a run's temporaries in one arena --------===//
//
// A CpuExecutable keeps all temporaries of a run in one block (see
// cpu_executable.h). LayOutArena places them: each temporary has a size and
// a live range [first, last] of thunk indices (inclusive: it is written at
// `first`, read last at `last`), and two temporaries may share bytes only
// when their ranges do not intersect. Sharing an index is a conflict on
// purpose: a kernel's outputs must not overlap its inputs (the emitted
// kernels mark every buffer noalias).
//
// Greedy best-fit by decreasing size (the classic heuristic XLA's heap
// simulator also starts from): each temporary goes to the lowest aligned
// offset that does not collide with any placed temporary whose range it
// intersects. Offsets and the total are multiples of `alignment`.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_ARENA_LAYOUT_H_
#define AXLE_CPU_RUNTIME_ARENA_LAYOUT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace axle::cpu {

struct LiveRange {
  int64_t first = 0;
  int64_t last = 0;
  bool Intersects(const LiveRange& other) const {
    return first <= other.last && other.first <= last;
  }
};

struct ArenaLayout {
  std::vector<int64_t> offsets;  // per temporary
  int64_t size_bytes = 0;
};

// `sizes` and `live` have one entry per temporary; `alignment` is a power of
// two.
ArenaLayout LayOutArena(absl::Span<const int64_t> sizes, absl::Span<const LiveRange> live,
                        int64_t alignment);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_ARENA_LAYOUT_H_
