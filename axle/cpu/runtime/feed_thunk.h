//===- feed_thunk.h - infeed and outfeed on the cpu platform ---------------===//
//
// infeed takes the oldest value of its device's infeed queue and outfeed
// queues a copy of its operand in its device's outfeed queue
// (axle/core/host_feed.h; the host side is LocalClient::TransferToInfeedLocal
// and TransferFromOutfeedLocal). The device is the run's participant (its
// flattened id) in a multi-device run, else the run's device ordinal. The
// values are copied leaf by leaf, tuples included; an infeed value of
// another shape, or none within AXLE_FEED_TIMEOUT, fails the run naming the
// op. The interpreter does the same (hlo_evaluator.cc), on the queues of
// platform "Interpreter".
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_FEED_THUNK_H_
#define AXLE_CPU_RUNTIME_FEED_THUNK_H_

#include "absl/status/status.h"
#include "axle/cpu/runtime/program_builder.h"

namespace axle::cpu {

absl::Status EmitInfeedThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitOutfeedThunk(const HloInstruction& instruction, ProgramBuilder& builder);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_FEED_THUNK_H_
