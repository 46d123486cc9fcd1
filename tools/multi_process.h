//===- multi_process.h - axle-run across several processes -----------------===//
//
//   axle-run --num_processes=N FILE [--seed=S] [--input=a.npy ...]
//            [--reference_platform=interpreter] [--print_literals]
//            [--output_dir=DIR] [--num_partitions=P]
//
// One module, N processes (SPMD). The launcher makes a fresh rendezvous
// folder and starts N copies of this binary with AXLE_PROCESS_ID=i,
// AXLE_NUM_PROCESSES=N and AXLE_RENDEZVOUS_DIR set; a copy started that way
// (AXLE_COORDINATOR=host:port instead of the folder: process 0 serves the
// rendezvous over TCP)
// (by axle-run, by hand or by another launcher) is a worker: it connects to
// the others over Gloo's TCP transport (loopback here) and runs the module
// as flattened device i of the module's replicas x partitions grid ((N/P)
// x P when the module does not say), its collectives going through the
// communicator. Arguments come from --input (the same for every process)
// or from the seed plus the process id.
//
// Each worker runs the module on --platform: the interpreter (the default)
// or a compiled backend (cpu; cuda, its collectives on NCCL: the launcher
// gives process i GPU i through CUDA_VISIBLE_DEVICES unless that is set;
// untested with several GPUs), compiled for the grid (its HloModuleConfig
// replica_count and num_partitions set to it) and run with this process's
// place in it and the communicator in its ExecutableRunOptions
// (set_participant). Before running, the workers compare a fingerprint of
// the module and their argument shapes, so that different modules or
// shapes are reported as such. With
// --reference_platform=interpreter each worker also runs the whole grid on
// threads in-process (the interpreter's multi-participant mode) and checks
// its own result against its participant's, bit for bit (exit 2 if not).
// Results are printed as "process i: ..." and written to DIR/process_i/.
//
// Under mpirun (`mpirun -n N axle-run FILE ...`, or any process with
// AXLE_COLLECTIVES_TRANSPORT=mpi that an MPI launcher started) every
// process is a worker whose rank and size are MPI's, joined by the MPI
// transport (axle/collectives/mpi_communicator.h) instead of Gloo;
// AXLE_COLLECTIVES_TRANSPORT=gloo|mpi picks the transport explicitly.
//
// A worker that fails, dies, or never arrives makes the others fail within
// AXLE_COLLECTIVE_TIMEOUT seconds; the launcher exits with the first
// non-zero worker status.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_TOOLS_MULTI_PROCESS_H_
#define AXLE_TOOLS_MULTI_PROCESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace axle {

struct WorkerOptions {
  std::string input_file;
  std::string platform = "interpreter";
  std::vector<std::string> inputs;
  uint64_t seed = 42;
  bool verify = true;
  bool print_literals = false;
  std::string output_dir;
  bool compare_with_threads = false;
  // Partitions of the grid when the module does not say (replicas = N / P).
  int num_partitions = 1;
};

// Starts `num_processes` copies of this binary with `argv` and waits for
// them; returns the exit status to use.
int LaunchProcesses(int num_processes, int argc, char** argv);

// Runs this process as worker AXLE_PROCESS_ID of AXLE_NUM_PROCESSES.
// DataLoss when the threads-mode reference disagrees.
absl::Status RunWorker(const WorkerOptions& options);

// Whether the environment makes this process a worker.
bool IsWorkerProcess();

}  // namespace axle

#endif  // AXLE_TOOLS_MULTI_PROCESS_H_
