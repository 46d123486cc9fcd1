//===- participants.cc - The interpreter with several participants ---------===//
#include "axle/eval/participants.h"

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/collectives/communicator.h"

namespace axle {

absl::StatusOr<std::vector<Literal>> EvaluateParticipants(
    const HloModule& module, absl::Span<const std::vector<const Literal*>> args,
    const ParticipantsOptions& options) {
  int64_t size = options.replica_count * options.partition_count;
  if (options.replica_count < 1 || options.partition_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad device grid ", options.replica_count, " x ", options.partition_count));
  }
  if (static_cast<int64_t>(args.size()) != size) {
    return absl::InvalidArgumentError(
        absl::StrCat(size, " participants but arguments for ", args.size()));
  }
  std::vector<std::unique_ptr<Communicator>> communicators =
      MakeInProcessCommunicators(static_cast<int>(size), options.timeout);
  std::vector<absl::StatusOr<Literal>> results(size, absl::UnknownError("did not run"));
  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int64_t id = 0; id < size; ++id) {
    threads.emplace_back([&, id] {
      HloEvaluator evaluator;
      if (options.setup) options.setup(evaluator);
      HloEvaluator::Participant participant;
      participant.replica_count = options.replica_count;
      participant.partition_count = options.partition_count;
      participant.replica_id = id / options.partition_count;
      participant.partition_id = id % options.partition_count;
      participant.communicator = communicators[id].get();
      evaluator.set_participant(participant);
      results[id] = evaluator.Evaluate(module, args[id]);
      // A participant that failed leaves, releasing those who wait for it.
      if (!results[id].ok()) communicators[id].reset();
    });
  }
  for (std::thread& thread : threads) thread.join();
  // The first failure that is not just another's departure.
  const absl::Status* first = nullptr;
  for (int64_t id = 0; id < size; ++id) {
    const absl::Status& status = results[id].status();
    if (status.ok()) continue;
    bool induced = absl::StrContains(status.message(), "left the run");
    if (first == nullptr || (!induced && absl::StrContains(first->message(), "left the run"))) {
      first = &status;
    }
  }
  if (first != nullptr) {
    for (int64_t id = 0; id < size; ++id) {
      if (&results[id].status() == first) {
        return absl::Status(
            first->code(),
            absl::StrCat("participant ", id, " (replica ", id / options.partition_count,
                         ", partition ", id % options.partition_count, "): ", first->message()));
      }
    }
  }
  std::vector<Literal> values;
  values.reserve(size);
  for (auto& result : results) values.push_back(std::move(result).value());
  return values;
}

}  // namespace axle
