//===- multi_device_test_util.h - Running a module on several cpu devices -===//
//
// For the tests of the cpu platform's collectives among several devices:
// each device a thread of this process running the compiled executable
// with its place in the grid and an in-process communicator in its run
// options, and the interpreter's multi-participant mode
// (axle/eval/participants.h) as the reference, bit for bit, on the module
// with the cpu compiler's numerics passes run: bf16 reductions and bf16
// all-reduce / reduce-scatter in f32, as XLA:CPU compiles them.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_MULTI_DEVICE_TEST_UTIL_H_
#define AXLE_CPU_RUNTIME_MULTI_DEVICE_TEST_UTIL_H_

#include <thread>
#include <vector>

#include "axle/collectives/communicator.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/eval/participants.h"
#include "axle/hlo/transforms/all_reduce_promotion.h"
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"
#include "gtest/gtest.h"

namespace axle {
namespace testing {

// Runs `text` (whose header names the grid) on `size` cpu devices, the
// arguments of device d being args[d]; returns each device's result (of
// the last of `runs` runs of one executable).
inline absl::StatusOr<std::vector<Literal>> RunOnCpuDevices(
    absl::string_view text, const std::vector<std::vector<Literal>>& args, int runs = 1) {
  AXLE_ASSIGN_OR_RETURN(auto module, ParseAndReturnUnverifiedModule(text));
  const int64_t replicas = module->config().replica_count;
  const int64_t partitions = module->config().num_partitions;
  const auto size = static_cast<int>(replicas * partitions);
  if (static_cast<int>(args.size()) != size) {
    return absl::InvalidArgumentError("one argument list per device");
  }
  LocalClient* client = ClientFor("cpu");
  AXLE_ASSIGN_OR_RETURN(auto executable, client->Compile(std::move(module), {}));
  auto communicators = MakeInProcessCommunicators(size, std::chrono::seconds(60));
  std::vector<absl::StatusOr<Literal>> results(size, absl::UnknownError("did not run"));
  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int d = 0; d < size; ++d) {
    threads.emplace_back([&, d] {
      results[d] = [&]() -> absl::StatusOr<Literal> {
        std::vector<ScopedShapedBuffer> buffers;
        std::vector<const ShapedBuffer*> pointers;
        for (const Literal& argument : args[d]) {
          AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer,
                                client->LiteralToShapedBuffer(argument, 0));
          buffers.push_back(std::move(buffer));
        }
        pointers.reserve(buffers.size());
        for (const auto& buffer : buffers) pointers.push_back(&buffer);
        RunParticipant participant;
        participant.replica_count = replicas;
        participant.partition_count = partitions;
        participant.replica_id = d / partitions;
        participant.partition_id = d % partitions;
        participant.communicator = communicators[d].get();
        ExecutableRunOptions options;
        options.set_participant(participant);
        AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable->Run(pointers, options));
        for (int run = 1; run < runs; ++run) {
          AXLE_ASSIGN_OR_RETURN(result, executable->Run(pointers, options));
        }
        return client->ShapedBufferToLiteral(result);
      }();
      if (!results[d].ok()) communicators[d].reset();
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<Literal> values;
  for (auto& result : results) {
    AXLE_RETURN_IF_ERROR(result.status());
    values.push_back(*std::move(result));
  }
  return values;
}

// The cpu devices and the interpreter's participants agree bit for bit;
// returns the cpu results.
inline std::vector<Literal> RunBoth(absl::string_view text,
                                    const std::vector<std::vector<Literal>>& args) {
  absl::StatusOr<std::vector<Literal>> cpu = RunOnCpuDevices(text, args);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return {};
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  absl::StatusOr<bool> promoted =
      AllReducePromotion(AllReducePromotion::CpuTypes()).Run(module->get());
  EXPECT_TRUE(promoted.ok()) << promoted.status();
  absl::StatusOr<bool> widened = Bf16ReductionsInF32().Run(module->get());
  EXPECT_TRUE(widened.ok()) << widened.status();
  ParticipantsOptions options;
  options.replica_count = (*module)->config().replica_count;
  options.partition_count = (*module)->config().num_partitions;
  std::vector<std::vector<const Literal*>> pointers;
  for (const auto& list : args) {
    std::vector<const Literal*>& p = pointers.emplace_back();
    for (const Literal& literal : list) p.push_back(&literal);
  }
  absl::StatusOr<std::vector<Literal>> reference =
      EvaluateParticipants(**module, pointers, options);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    for (size_t d = 0; d < cpu->size(); ++d) {
      EXPECT_EQ((*cpu)[d], (*reference)[d]) << "device " << d << ": " << (*cpu)[d] << "\nvs\n"
                                            << (*reference)[d];
    }
  }
  return std::move(*cpu);
}

}  // namespace testing
}  // namespace axle

#endif  // AXLE_CPU_RUNTIME_MULTI_DEVICE_TEST_UTIL_H_
