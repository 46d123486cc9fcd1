// OmpTeamShare: oneDNN's OpenMP team sized per run (see omp_team.h).
#include "axle/cpu/runtime/omp_team.h"

#include <algorithm>
#include <atomic>

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

}  // namespace

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
