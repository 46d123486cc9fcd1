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
//   AXLE_CPU_DOT_SPLIT    how a large f32 dot on oneDNN uses the cores:
//                         rows (pieces along its rows, or batch, each a
//                         one-thread primitive, taken by the intra-op pool's
//                         threads as they come free) or team (one primitive
//                         on oneDNN's OpenMP team); default team
//                         (axle/cpu/runtime/dot_split.h)
//   AXLE_CPU_DOT_PIECES   pieces per thread of a split dot (1-16, default 2)
//   AXLE_CPU_DOT_THREADS  the most threads one f32 / bf16 oneDNN dot uses
//                         (default: the intra-op pool's)
//   AXLE_CPU_DOT_PACK_ROWS  an f32 rhs that is no constant is packed on each
//                         run for dots of at least this many rows (default
//                         512; dot_thunk.cc)
//   AXLE_CPU_CONCAT_IN_PLACE  0/false/off/no: a concatenation of oneDNN
//                         convolutions keeps its own kernel instead of each
//                         convolution writing its slice (default on;
//                         axle/cpu/runtime/concat_in_place.h)
//   AXLE_CPU_CONV_CHAIN   0/false/off/no: a depthwise convolution and the
//                         1x1 ones around it run as separate thunks
//                         instead of one over bands of rows (default on;
//                         axle/cpu/runtime/conv_chain.h)
//   AXLE_CPU_WINOGRAD     0/false/off/no: f32 3x3 stride-1 convolutions
//                         run oneDNN's direct kernels instead of its
//                         Winograd ones (default on;
//                         axle/cpu/runtime/convolution_thunk.h)
//   AXLE_CPU_SPIN_BETWEEN_THUNKS  0/false/off/no: the intra-op pool's
//                         workers go to sleep after each thunk of a run
//                         instead of spinning briefly for the next one
//                         (default on; axle/cpu/runtime/cpu_executable.h)
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
//   OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK  any of them set: an MPI
//                         launcher started this process (mpi_communicator.h)
//   AXLE_FEED_TIMEOUT     milliseconds an infeed waits for its value (> 0;
//                         default 60 s; axle/core/host_feed.h)
//   TMPDIR                where scratch folders are made (default /tmp;
//                         axle/base/subprocess.h)
//
// The front ends:
//   AXLE_DEBUG            set (not "" or "0"): the lazy tensors and the
//                         PyTorch device say what they lower and why they fall
//                         back (axle/frontends/lazy, axle/frontends/torch)
//   AXLE_LAZY_PLATFORM    the platform lazy tensors run on (default: the
//                         default platform; axle/frontends/lazy/device.h)
//
// The cuda backend (axle/gpu):
//   AXLE_CUDA_DRIVER      the driver library (default libcuda.so.1)
//   AXLE_CUDA_LIBDEVICE   libdevice.10.bc (default: the toolkit's)
//   AXLE_CUDA_PTXAS       ptxas (default: the toolkit's)
//   AXLE_CUBLAS, AXLE_CUBLASLT, AXLE_CUSOLVER, AXLE_CUFFT, AXLE_NCCL  the library to
//                         open (default: the soname, then the toolkit's folder)
//   AXLE_CUDNN            0: no cuDNN convolutions; "" or 1: libcudnn.so.9;
//                         anything else: the library to open
//   AXLE_GPU_TF32         0/false/off/no: every f32 dot and convolution in
//                         exact f32 (FMA math), whatever its precision;
//                         unset or anything else: XLA:GPU's rule, TF32 on
//                         tensor cores for those whose operand precisions
//                         are DEFAULT or HIGH (axle/gpu/tf32.h)
//   AXLE_GPU_UNROLL, AXLE_GPU_SELECT_CONDITIONALS, AXLE_GPU_GRAPHS  switches
//                         (1/true/on/yes or 0/false/off/no; anything else:
//                         the default, on for all three): unroll counted loops,
//                         make cheap conditionals selects, replay runs of
//                         thunks as CUDA graphs (gpu_compiler.h, gpu_graph.h)
//   AXLE_GPU_SPLIT_COLUMNS  1/true/on/yes: large column reductions in two
//                         kernels (default: one; column_reduction_splitter.h)
//   AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE  1: a one-device module keeps its
//                         collectives, run by NCCL with one rank (tests)
//
// The tools:
//   CXX                   the C++ compiler axle_aot builds with (default c++)
//
// Tests have variables of their own (AXLE_JAX_DIR, AXLE_CONFORMANCE_DIR,
// AXLE_TRACE); they are not the library's and stay where they are used.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_ENVIRONMENT_OPTIONS_H_
#define AXLE_BASE_ENVIRONMENT_OPTIONS_H_

#include <chrono>
#include <cstdint>
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
  // The cpu dot's knobs as given (empty / 0: the default; dot_split.h).
  std::string cpu_dot_split;
  int cpu_dot_pieces = 0;
  int cpu_dot_threads = 0;
  int64_t cpu_dot_pack_rows = 0;
  // AXLE_CPU_CONCAT_IN_PLACE when set to a recognised switch value.
  std::optional<bool> cpu_concat_in_place;
  // AXLE_CPU_CONV_CHAIN when set to a recognised switch value.
  std::optional<bool> cpu_conv_chain;
  // AXLE_CPU_SPIN_BETWEEN_THUNKS when set to a recognised switch value.
  std::optional<bool> cpu_spin_between_thunks;
  // AXLE_CPU_THREAD_TEAM as given, lower-cased ("omp": the intra-op pool
  // runs on libgomp's team, cpu/runtime/omp_team.h; else its own workers).
  std::string cpu_thread_team;
  // AXLE_CPU_WINOGRAD when set to a recognised switch value.
  std::optional<bool> cpu_winograd;
  // AXLE_COLLECTIVE_TIMEOUT in seconds (> 0), or 60.
  double collective_timeout_s = 60;
  // AXLE_PROCESS_ID / AXLE_NUM_PROCESSES when both are set; else -1 / 0.
  int process_id = -1;
  int num_processes = 0;
  std::string rendezvous_dir;
  std::string coordinator;
  // AXLE_COLLECTIVES_TRANSPORT as given (empty: unset).
  std::string collectives_transport;
  // Whether an MPI launcher's variables are set.
  bool started_by_mpi_launcher = false;
  // AXLE_FEED_TIMEOUT in milliseconds (> 0), or 60 s.
  std::chrono::milliseconds feed_timeout{std::chrono::seconds(60)};
  // TMPDIR, or "/tmp" when unset or empty.
  std::string temporary_directory = "/tmp";

  // The front ends.
  bool debug = false;
  std::string lazy_platform;

  // The cuda backend: the paths as given (empty: unset).
  std::string cuda_driver;
  std::string cuda_libdevice;
  std::string cuda_ptxas;
  std::string cublas;
  std::string cublaslt;
  std::string cusolver;
  std::string cufft;
  std::string nccl;
  // AXLE_CUDNN as given: "0" turns cuDNN off, "" and "1" name the default
  // library, anything else is the library's path.
  std::string cudnn;
  // AXLE_GPU_TF32 when set to a recognised switch value; nullopt otherwise
  // (TF32 allowed as XLA:GPU allows it).
  std::optional<bool> gpu_tf32;
  // The switches when set to a recognised value; nullopt otherwise.
  std::optional<bool> gpu_unroll;
  std::optional<bool> gpu_select_conditionals;
  std::optional<bool> gpu_graphs;
  std::optional<bool> gpu_split_columns;
  // AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE=1: a one-device module's collectives
  // run through NCCL with a one-rank communicator (axle/gpu/README.md).
  bool gpu_collectives_on_one_device = false;

  // The tools: CXX as given (empty: unset).
  std::string cxx;

  // The variables as the environment has them now.
  static EnvironmentOptions Read();
};

}  // namespace axle

#endif  // AXLE_BASE_ENVIRONMENT_OPTIONS_H_
