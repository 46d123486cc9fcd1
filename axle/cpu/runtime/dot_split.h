//===- dot_split.h - How a large oneDNN dot uses the intra-op threads ------===//
//
// A large f32 dot (dot_thunk.cc) runs either as one oneDNN primitive on
// oneDNN's OpenMP team, which splits it statically (each thread a fixed
// share), or as pieces along its leading output dimension (its rows, or
// its batch when it has one), each a one-thread primitive, that the
// intra-op pool's threads claim as they come free (ThreadPool::ParallelFor).
// The team is the default. The pieces were meant for a core that the OS,
// another process or a hypervisor takes away for a while (it delays only
// the pieces it runs, where a static split waits for it; no OpenMP worker
// is woken; an f32 GELU epilogue runs on each piece's rows while they are
// in cache), but on the lent Xeon (2026-11-28 06:47Z, 2 pinned cores, min
// of 50 runs) the team was faster: geomean xla/axle 1.35 against 1.20 over
// six dot-heavy programs (resnet_block_infer 15.3 against 23.0 ms,
// transformer_train_step 12.9 against 16.9 ms). AXLE_CPU_DOT_SPLIT=rows
// turns the pieces on.
//
// Knobs (environment_options.h), read when the thunk is made, so that one
// binary can be A/B'd on another machine: AXLE_CPU_DOT_SPLIT=team|rows,
// AXLE_CPU_DOT_PIECES (pieces per thread), AXLE_CPU_DOT_THREADS (the most
// threads one dot uses), AXLE_CPU_DOT_PACK_ROWS (dot_thunk.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DOT_SPLIT_H_
#define AXLE_CPU_RUNTIME_DOT_SPLIT_H_

#include <cstdint>
#include <vector>

#include "axle/base/environment_options.h"

namespace axle::cpu::dot {

struct DotSplitOptions {
  bool rows = false;  // pieces on the pool (AXLE_CPU_DOT_SPLIT=rows); false: oneDNN's team
  int pieces_per_thread = 2;
  int max_threads = 0;    // 0: no cap beyond the pool's
  int64_t pack_rows = 0;  // 0: dot_thunk.cc's default
};

// The options AXLE_CPU_DOT_* give (defaults where unset or invalid).
DotSplitOptions DotSplitOptionsFrom(const EnvironmentOptions& environment);

// A range [begin, end) of the leading dimension.
struct DotPiece {
  int64_t begin = 0, end = 0;
};

// The pieces of a leading dimension of `extent` for `threads` threads:
// threads * pieces_per_thread of them (fewer when `extent` is short), each
// a multiple of `unit` long but the last, none shorter than `min_length`
// (unless `extent` is). Empty when fewer than two pieces result or
// threads < 2: the dot is not split.
std::vector<DotPiece> SplitLeadingDim(int64_t extent, int64_t unit, int64_t min_length, int threads,
                                      int pieces_per_thread);

}  // namespace axle::cpu::dot

#endif  // AXLE_CPU_RUNTIME_DOT_SPLIT_H_
