//===- omp_team.h - Sizing oneDNN's OpenMP team for one thunk run ----------===//
//
// oneDNN (Debian's build) runs its primitives on libgomp's OpenMP team,
// whose size is a per-calling-thread setting. An OmpTeamShare, held for the
// duration of one oneDNN call, sets that size to the cores this run may use:
// the intra-op pool's size (capped by ExecutableRunOptions::intra_op_threads)
// divided among the oneDNN thunks (dot, convolution) running at that moment,
// so concurrent runs do not oversubscribe the machine.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_OMP_TEAM_H_
#define AXLE_CPU_RUNTIME_OMP_TEAM_H_

#include "axle/runtime/executable.h"

namespace axle::cpu {

class OmpTeamShare {
 public:
  explicit OmpTeamShare(const ExecutableRunOptions* options);
  ~OmpTeamShare();
  OmpTeamShare(const OmpTeamShare&) = delete;
  OmpTeamShare& operator=(const OmpTeamShare&) = delete;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_OMP_TEAM_H_
