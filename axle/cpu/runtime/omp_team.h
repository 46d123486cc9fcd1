//===- omp_team.h - Sizing oneDNN's OpenMP team for one thunk run ----------===//
//
// oneDNN (Debian's build) runs its primitives on libgomp's OpenMP team,
// whose size is a per-calling-thread setting. An OmpTeamShare, held for the
// duration of one oneDNN call, sets that size to the cores this run may use:
// the intra-op pool's size (capped by ExecutableRunOptions::intra_op_threads)
// divided among the oneDNN thunks (dot, convolution) running at that moment,
// so concurrent runs do not oversubscribe the machine.
//
// Wait policy: libgomp's workers spin (by default up to 300000 rounds) after
// each parallel region, i.e. after every oneDNN primitive, and on a
// machine with few cores they then take the cores the intra-op pool's loop
// kernels run on (MLP step at 2 threads on 2 loaded cores: 206 ms with
// spinning workers, 84 ms with sleeping ones). libgomp reads
// OMP_WAIT_POLICY / GOMP_SPINCOUNT once, in its own constructor, before any
// of ours runs; so omp_team.cc sets OMP_WAIT_POLICY=PASSIVE from the
// executable's .preinit_array, which the dynamic loader runs before the
// constructors of shared libraries. A user who sets OMP_WAIT_POLICY or
// GOMP_SPINCOUNT keeps that setting. (Only executables have a
// .preinit_array: Axle linked into a shared library would keep libgomp's
// default.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_OMP_TEAM_H_
#define AXLE_CPU_RUNTIME_OMP_TEAM_H_

#include "axle/runtime/executable.h"

namespace axle::cpu {

// Whether Axle set OMP_WAIT_POLICY=PASSIVE at process start (false when
// the user had set OMP_WAIT_POLICY or GOMP_SPINCOUNT).
bool OmpPassiveWaitSetByAxle();

class OmpTeamShare {
 public:
  explicit OmpTeamShare(const ExecutableRunOptions* options);
  ~OmpTeamShare();
  OmpTeamShare(const OmpTeamShare&) = delete;
  OmpTeamShare& operator=(const OmpTeamShare&) = delete;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_OMP_TEAM_H_
