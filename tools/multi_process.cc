//===- multi_process.cc - axle-run across several processes ----------------===//
#include "tools/multi_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/gloo_communicator.h"
#include "axle/core/npy.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/participants.h"
#include "axle/runtime/host_custom_call.h"
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

}  // namespace

bool IsWorkerProcess() { return EnvironmentOptions::Read().num_processes > 0; }

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
  int rank = environment.process_id;
  int size = environment.num_processes;
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        LoadModule(options.input_file, options.verify));
  AXLE_ASSIGN_OR_RETURN(auto grid, GridOf(*module, size, options.num_partitions));
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> arguments, ArgumentsFor(*module, options, rank));

  GlooOptions gloo;
  gloo.rank = rank;
  gloo.size = size;
  gloo.rendezvous_dir = environment.rendezvous_dir;
  gloo.coordinator = environment.coordinator;
  gloo.timeout = CollectiveTimeoutFromEnvironment();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> communicator, ConnectGloo(gloo));

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
  absl::StatusOr<Literal> result = evaluator.Evaluate(*module, Pointers(arguments));
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
    threads.timeout = gloo.timeout;
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
