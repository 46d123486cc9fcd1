// OmpTeamShare: oneDNN's OpenMP team sized per run (see omp_team.h).
#include "axle/cpu/runtime/omp_team.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "axle/base/thread_pool.h"

// libgomp (oneDNN's threading runtime in Debian's build).
extern "C" {
void omp_set_num_threads(int threads);
int omp_get_max_threads(void);
}

namespace axle::cpu {
namespace {

// The oneDNN calls running right now, across all thunks and runs.
std::atomic<int> running_calls{0};

bool passive_set_by_axle = false;

// Runs before libgomp's constructor reads the environment (omp_team.h).
// libc has not set `environ` yet at this point (it is null): it starts
// from `envp`, so that libgomp sees the user's variables beside ours.
// (__libc_start_main later points `environ` at `envp` again, so main()
// does not see OMP_WAIT_POLICY; libgomp has read it by then.)
void DefaultToPassiveWait(int, char**, char** envp) {
  if (envp == nullptr) return;
  for (char** entry = envp; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "OMP_WAIT_POLICY=", 16) == 0 ||
        std::strncmp(*entry, "GOMP_SPINCOUNT=", 15) == 0) {
      return;
    }
  }
  if (environ == nullptr) environ = envp;
  passive_set_by_axle = setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0) == 0;
}

__attribute__((section(".preinit_array"),
               used)) void (*const kDefaultToPassiveWait)(int, char**,
                                                          char**) = DefaultToPassiveWait;

}  // namespace

bool OmpPassiveWaitSetByAxle() { return passive_set_by_axle; }

OmpTeamShare::OmpTeamShare(const ExecutableRunOptions* options) {
  int running = running_calls.fetch_add(1) + 1;
  int cores = ThreadPool::DefaultNumThreads();
  if (options != nullptr && options->intra_op_threads() > 0) {
    cores = std::min(cores, options->intra_op_threads());
  }
  int threads = std::max(1, cores / running);
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

OmpTeamShare::~OmpTeamShare() { running_calls.fetch_sub(1); }

}  // namespace axle::cpu
