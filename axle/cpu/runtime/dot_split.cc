// Splitting a large oneDNN dot into pieces (see dot_split.h).
#include "axle/cpu/runtime/dot_split.h"

#include <algorithm>

namespace axle::cpu::dot {

DotSplitOptions DotSplitOptionsFrom(const EnvironmentOptions& environment) {
  DotSplitOptions options;
  options.rows = environment.cpu_dot_split == "rows";
  if (environment.cpu_dot_pieces > 0) options.pieces_per_thread = environment.cpu_dot_pieces;
  options.max_threads = environment.cpu_dot_threads;
  options.pack_rows = environment.cpu_dot_pack_rows;
  return options;
}

std::vector<DotPiece> SplitLeadingDim(int64_t extent, int64_t unit, int64_t min_length, int threads,
                                      int pieces_per_thread) {
  if (threads < 2 || extent < 2) return {};
  unit = std::max<int64_t>(unit, 1);
  const int64_t wanted = int64_t{threads} * std::max(pieces_per_thread, 1);
  int64_t length = (extent + wanted - 1) / wanted;
  length = std::max(length, min_length);
  length = (length + unit - 1) / unit * unit;
  std::vector<DotPiece> pieces;
  for (int64_t begin = 0; begin < extent; begin += length) {
    pieces.push_back({begin, std::min(extent, begin + length)});
  }
  if (pieces.size() < 2) return {};
  return pieces;
}

}  // namespace axle::cpu::dot
