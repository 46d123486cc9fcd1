//===- environment_options.h - The environment variables Axle reads ---------===//
//
// Every environment variable the library reads, in one struct (XLA keeps
// its equivalents in DebugOptions, set through XLA_FLAGS). Read() reads
// them all when called, so a caller that sets one between two compiles sees
// it take effect; nothing else in the library calls getenv.
//
//   AXLE_DUMP_TO          the HLO after every pass that changed it (text and
//                         Graphviz DOT), an HTML page with the final module's
//                         picture, pass timings, buffer assignment and LLVM IR
//                         go to this folder (hlo_pass_pipeline.h,
//                         hlo_graph_dumper.h, cpu_compiler.cc)
//   AXLE_PROFILE          set (not "" or "0"): executables time every thunk
//                         and print the table at exit (cpu_executable.cc)
//   AXLE_CACHE_DIR        compiled code persists in this folder across
//                         processes (cpu_compiler.cc, jit.h)
//   AXLE_COMPILE_THREADS  threads LLVM compiles kernels on; unset or 0: the
//                         JIT's default (jit.h)
//   AXLE_LLVM_OPTIONS     extra LLVM command-line options, space-separated,
//                         applied once per process (jit.cc)
//   AXLE_NUM_THREADS      worker threads of the default thread pool, an
//                         integer in [1, 1024]; anything else: one per core
//                         (thread_pool.h)
//   AXLE_COLLECTIVE_TIMEOUT  seconds a collective waits for its peers before
//                         every participant fails (default 60;
//                         axle/collectives/communicator.h)
//   AXLE_PROCESS_ID, AXLE_NUM_PROCESSES  this process's rank and the
//                         number of processes of a multi-process run
//   AXLE_RENDEZVOUS_DIR   the folder the processes of a run meet in (Gloo's
//                         file store; axle/collectives/gloo_communicator.h)
//   AXLE_COORDINATOR      host:port where process 0 serves the rendezvous
//                         instead (axle/collectives/tcp_store.h)
//   AXLE_COLLECTIVES_TRANSPORT  gloo or mpi: what joins the processes of
//                         a run (default: mpi when mpirun started this
//                         process, else gloo; tools/multi_process.h)
//
// Tests and tools have variables of their own (AXLE_JAX_DIR, AXLE_TRACE);
// they are not the library's and stay where they are used.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_ENVIRONMENT_OPTIONS_H_
#define AXLE_BASE_ENVIRONMENT_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

namespace axle {

struct EnvironmentOptions {
  std::string dump_to;
  bool profile = false;
  std::string cache_dir;
  int compile_threads = 0;
  std::vector<std::string> llvm_options;
  // The raw AXLE_NUM_THREADS text, validated by ThreadPool::ParseNumThreads.
  std::optional<std::string> num_threads;
  // AXLE_COLLECTIVE_TIMEOUT in seconds (> 0), or 60.
  double collective_timeout_s = 60;
  // AXLE_PROCESS_ID / AXLE_NUM_PROCESSES when both are set; else -1 / 0.
  int process_id = -1;
  int num_processes = 0;
  std::string rendezvous_dir;
  std::string coordinator;
  // AXLE_COLLECTIVES_TRANSPORT as given (empty: unset).
  std::string collectives_transport;

  // The variables as the environment has them now.
  static EnvironmentOptions Read();
};

}  // namespace axle

#endif  // AXLE_BASE_ENVIRONMENT_OPTIONS_H_
