//===- multi_process.cc - axle-run across several processes ----------------===//
#include "tools/multi_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/gloo_communicator.h"
#ifdef AXLE_HAVE_MPI
#include "axle/collectives/mpi_communicator.h"
#endif
#include "axle/core/npy.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/participants.h"
#include "axle/hlo/transforms/all_reduce_promotion.h"
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"
#include "axle/runtime/host_custom_call.h"
#include "axle/runtime/local_client.h"
#include "tools/fake_arguments.h"
#include "tools/tool_io.h"

namespace axle {
namespace {

// The module's grid, or (N / P) x P when it names none (P: --num_partitions).
absl::StatusOr<std::pair<int64_t, int64_t>> GridOf(const HloModule& module, int size,
                                                   int num_partitions) {
  int64_t replicas = std::max<int64_t>(module.config().replica_count, 1);
  int64_t partitions = std::max<int64_t>(module.config().num_partitions, 1);
  if (replicas * partitions == 1) {
    if (num_partitions < 1 || size % num_partitions != 0) {
      return absl::InvalidArgumentError(absl::StrCat("--num_partitions=", num_partitions,
                                                     " does not divide ", size, " processes"));
    }
    return std::make_pair<int64_t, int64_t>(size / num_partitions, num_partitions);
  }
  if (replicas * partitions != size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the module runs on ", replicas, " replicas x ", partitions,
        " partitions = ", replicas * partitions, " devices, but there are ", size, " processes"));
  }
  return std::make_pair(replicas, partitions);
}

absl::StatusOr<std::vector<Literal>> ArgumentsFor(const HloModule& module,
                                                  const WorkerOptions& options, int id) {
  if (options.inputs.empty()) return MakeFakeArguments(module, options.seed + id);
  std::vector<Literal> arguments;
  for (const std::string& path : options.inputs) {
    AXLE_ASSIGN_OR_RETURN(arguments.emplace_back(), ReadNpy(path));
  }
  return arguments;
}

// FNV-1a over `text`.
uint64_t Fingerprint(absl::string_view text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

// Every process runs the same module on arguments of the same shapes, or
// every process fails saying which differs.
absl::Status CheckSameModule(Communicator& communicator, const HloModule& module,
                             const std::vector<Literal>& arguments) {
  std::string text = module.ToString();
  for (const Literal& argument : arguments) absl::StrAppend(&text, argument.shape().ToString());
  const uint64_t mine = Fingerprint(text);
  std::vector<int> everyone(communicator.size());
  for (int i = 0; i < communicator.size(); ++i) everyone[i] = i;
  std::vector<uint64_t> all(communicator.size());
  AXLE_RETURN_IF_ERROR(communicator.AllGather(everyone, &mine, all.data(), sizeof(mine)));
  for (int i = 0; i < communicator.size(); ++i) {
    if (all[i] != mine) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", i, " runs a different module or argument shapes than process ",
                       communicator.rank(),
                       ": the processes must run the same module on arguments of the "
                       "same shapes"));
    }
  }
  return absl::OkStatus();
}

// The module compiled for `platform_name` on the grid, run once as device
// (replica, partition) with `communicator`.
absl::StatusOr<Literal> RunCompiled(const std::string& platform_name, const HloModule& module,
                                    std::pair<int64_t, int64_t> grid, int rank,
                                    Communicator* communicator,
                                    const std::vector<Literal>& arguments, uint64_t seed) {
  AXLE_ASSIGN_OR_RETURN(se::Platform * platform, PlatformUtil::GetPlatform(platform_name));
  AXLE_ASSIGN_OR_RETURN(LocalClient * client, ClientLibrary::GetOrCreateLocalClient(platform));
  std::unique_ptr<HloModule> copy = module.Clone();
  copy->mutable_config().replica_count = grid.first;
  copy->mutable_config().num_partitions = grid.second;
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<LocalExecutable> executable,
                        client->Compile(std::move(copy), ExecutableBuildOptions()));
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  for (const Literal& argument : arguments) {
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer, client->LiteralToShapedBuffer(argument, 0));
    buffers.push_back(std::move(buffer));
  }
  pointers.reserve(buffers.size());
  for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
  RunParticipant participant;
  participant.replica_count = grid.first;
  participant.partition_count = grid.second;
  participant.replica_id = rank / grid.second;
  participant.partition_id = rank % grid.second;
  participant.communicator = communicator;
  ExecutableRunOptions run_options;
  run_options.set_rng_seed(static_cast<int>(seed));
  run_options.set_participant(participant);
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable->Run(pointers, run_options));
  return client->ShapedBufferToLiteral(result);
}

std::vector<const Literal*> Pointers(const std::vector<Literal>& literals) {
  std::vector<const Literal*> pointers;
  pointers.reserve(literals.size());
  for (const Literal& literal : literals) pointers.push_back(&literal);
  return pointers;
}

void Leaves(const Literal& literal, std::vector<const Literal*>& out) {
  if (!literal.shape().IsTuple()) {
    out.push_back(&literal);
    return;
  }
  for (int64_t i = 0; i < literal.tuple_size(); ++i) Leaves(literal.tuple_element(i), out);
}

// The transport AXLE_COLLECTIVES_TRANSPORT names: gloo, or mpi; unset,
// mpi when an MPI launcher started this process and AXLE_NUM_PROCESSES is
// not set, else gloo.
absl::StatusOr<std::string> TransportOf(const EnvironmentOptions& environment) {
  const std::string& named = environment.collectives_transport;
  if (named == "gloo" || named == "mpi") return named;
  if (!named.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AXLE_COLLECTIVES_TRANSPORT=", named, ": the transports are gloo and mpi"));
  }
#ifdef AXLE_HAVE_MPI
  if (environment.num_processes == 0 && StartedByMpiLauncher()) return std::string("mpi");
#endif
  return std::string("gloo");
}

absl::StatusOr<std::unique_ptr<Communicator>> Connect(const EnvironmentOptions& environment,
                                                      std::chrono::milliseconds timeout) {
  AXLE_ASSIGN_OR_RETURN(std::string transport, TransportOf(environment));
  if (transport == "mpi") {
#ifdef AXLE_HAVE_MPI
    if (!StartedByMpiLauncher()) {
      return absl::InvalidArgumentError(
          "AXLE_COLLECTIVES_TRANSPORT=mpi: start the processes with mpirun -n N axle-run ..., "
          "not with --num_processes");
    }
    return ConnectMpi(timeout);
#else
    return absl::UnimplementedError(
        "AXLE_COLLECTIVES_TRANSPORT=mpi: this axle-run was built without MPI (AXLE_MPI; "
        "libopenmpi-dev)");
#endif
  }
  if (environment.num_processes == 0) {
    return absl::InvalidArgumentError(
        "gloo: AXLE_PROCESS_ID and AXLE_NUM_PROCESSES are not set (launch with axle-run "
        "--num_processes=N, or with mpirun and AXLE_COLLECTIVES_TRANSPORT=mpi)");
  }
  GlooOptions gloo;
  gloo.rank = environment.process_id;
  gloo.size = environment.num_processes;
  gloo.rendezvous_dir = environment.rendezvous_dir;
  gloo.coordinator = environment.coordinator;
  gloo.timeout = timeout;
  return ConnectGloo(gloo);
}

}  // namespace

bool IsWorkerProcess() {
  EnvironmentOptions environment = EnvironmentOptions::Read();
  if (environment.num_processes > 0) return true;
#ifdef AXLE_HAVE_MPI
  absl::StatusOr<std::string> transport = TransportOf(environment);
  return StartedByMpiLauncher() && (!transport.ok() || *transport == "mpi");
#else
  return false;
#endif
}

int LaunchProcesses(int num_processes, int argc, char** argv) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "axle-rendezvous-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "axle-run: cannot make a rendezvous folder: %s\n", std::strerror(errno));
    return 1;
  }
  std::vector<pid_t> children;
  for (int i = 0; i < num_processes; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "axle-run: fork failed: %s\n", std::strerror(errno));
      break;
    }
    if (pid == 0) {
      setenv("AXLE_PROCESS_ID", std::to_string(i).c_str(), 1);
      setenv("AXLE_NUM_PROCESSES", std::to_string(num_processes).c_str(), 1);
      setenv("AXLE_RENDEZVOUS_DIR", pattern.c_str(), 1);
      // --platform=cuda: process i sees GPU i alone as its device 0 (NCCL
      // refuses two ranks on one GPU), unless the caller chose the devices.
      setenv("CUDA_VISIBLE_DEVICES", std::to_string(i).c_str(), /*overwrite=*/0);
      execv("/proc/self/exe", argv);
      std::fprintf(stderr, "axle-run: exec failed: %s\n", std::strerror(errno));
      _exit(127);
    }
    children.push_back(pid);
  }
  int result = static_cast<int>(children.size()) == num_processes ? 0 : 1;
  for (pid_t child : children) {
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) result = code;
  }
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  (void)argc;
  return result;
}

absl::Status RunWorker(const WorkerOptions& options) {
  EnvironmentOptions environment = EnvironmentOptions::Read();
  const std::chrono::milliseconds timeout = CollectiveTimeoutFromEnvironment();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> communicator, Connect(environment, timeout));
  int rank = communicator->rank();
  int size = communicator->size();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        LoadModule(options.input_file, options.verify));
  // bf16 reductions accumulate in f32 on every platform's compile (the
  // interpreter platform's too); the evaluator runs below, and the threads
  // reference, see them so as well.
  AXLE_RETURN_IF_ERROR(Bf16ReductionsInF32().Run(module.get()).status());
  // So do bf16 all-reduce and reduce-scatter on cpu (XLA:CPU's promotion,
  // all_reduce_promotion.h), the interpreter the cpu is compared with, and
  // both of their threads references; XLA:GPU sums bf16 in bf16.
  if (options.platform != "cuda") {
    AXLE_RETURN_IF_ERROR(
        AllReducePromotion(AllReducePromotion::CpuTypes()).Run(module.get()).status());
  }
  AXLE_ASSIGN_OR_RETURN(auto grid, GridOf(*module, size, options.num_partitions));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> arguments, ArgumentsFor(*module, options, rank));

  absl::StatusOr<Literal> result = absl::UnknownError("did not run");
  if (options.platform == "interpreter") {
    HloEvaluator evaluator;
    InstallHostCustomCalls(&evaluator);
    evaluator.set_seed(options.seed);
    HloEvaluator::Participant participant;
    participant.replica_count = grid.first;
    participant.partition_count = grid.second;
    participant.replica_id = rank / grid.second;
    participant.partition_id = rank % grid.second;
    participant.communicator = communicator.get();
    evaluator.set_participant(participant);
    result = evaluator.Evaluate(*module, Pointers(arguments));
  } else {
    absl::Status same = CheckSameModule(*communicator, *module, arguments);
    result = same.ok() ? RunCompiled(options.platform, *module, grid, rank, communicator.get(),
                                     arguments, options.seed)
                       : same;
  }
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("process ", rank, ": ", result.status().message()));
  }
  // Every process finishes its collectives before any leaves. The word
  // exchanged is the size of a collective's fingerprint, so a process still
  // at a collective sees this one's end as a mismatch, not a hang.
  std::vector<int> everyone(size);
  for (int i = 0; i < size; ++i) everyone[i] = i;
  constexpr uint64_t kFinished = 0xF1A15EDF1A15EDULL;
  std::vector<uint64_t> words(size);
  AXLE_RETURN_IF_ERROR(
      communicator->AllGather(everyone, &kFinished, words.data(), sizeof(kFinished)));
  for (int i = 0; i < size; ++i) {
    if (words[i] != kFinished) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", rank, " finished the module while process ", i,
                       " is still at a collective: the processes must run the same module"));
    }
  }

  if (options.print_literals) std::printf("process %d: %s\n", rank, result->ToString().c_str());
  if (!options.output_dir.empty()) {
    std::string dir = absl::StrCat(options.output_dir, "/process_", rank);
    std::filesystem::create_directories(dir);
    std::vector<const Literal*> leaves;
    Leaves(*result, leaves);
    for (size_t i = 0; i < leaves.size(); ++i) {
      AXLE_RETURN_IF_ERROR(WriteNpy(*leaves[i], absl::StrCat(dir, "/out_", i, ".npy")));
    }
  }
  if (options.compare_with_threads) {
    std::vector<std::vector<Literal>> all_arguments;
    for (int id = 0; id < size; ++id) {
      AXLE_ASSIGN_OR_RETURN(all_arguments.emplace_back(), ArgumentsFor(*module, options, id));
    }
    std::vector<std::vector<const Literal*>> all_pointers;
    all_pointers.reserve(size);
    for (const auto& args : all_arguments) all_pointers.push_back(Pointers(args));
    ParticipantsOptions threads;
    threads.replica_count = grid.first;
    threads.partition_count = grid.second;
    threads.timeout = timeout;
    threads.setup = [&](HloEvaluator& e) {
      InstallHostCustomCalls(&e);
      e.set_seed(options.seed);
    };
    AXLE_ASSIGN_OR_RETURN(std::vector<Literal> reference,
                          EvaluateParticipants(*module, all_pointers, threads));
    if (!(reference[rank] == *result)) {
      return absl::DataLossError(absl::StrCat(
          "process ", rank, ": the result differs from the interpreter's threads mode:\n  got ",
          result->ToString(), "\n  expected ", reference[rank].ToString()));
    }
    std::printf("process %d: matches the interpreter's threads mode bit for bit\n", rank);
  }
  return absl::OkStatus();
}

}  // namespace axle
