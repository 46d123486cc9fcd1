//===- gpu_program.h - A prepared module as GPU thunks ---------------------===//
//
// After PrepareGpuModule (gpu_compiler.h) the entry computation, and every
// computation control flow runs, holds only plumbing (parameter, constant,
// tuple, get-tuple-element, bitcast, opt-barrier, domain, after-all,
// add-dependency), loop fusions, control flow (while, conditional, call),
// custom calls, replica-id / partition-id and library ops
// (gpu_thunk_factories.h). BuildGpuProgram walks the entry in post order
// and turns it into a GpuProgram: one value per array leaf (the
// parameters' leaves, each constant leaf, temporaries), one thunk per op.
// Plumbing defines no value: a tuple's, get-tuple-element's or bitcast's
// leaves are its operand's (aliases). Each loop fusion is compiled to PTX
// here (through the process's kernel cache); nothing touches a device, so
// this runs on machines without a GPU.
//
// Control flow: a while's state is temporaries of its own, initialized by
// copies from its operand; its condition and body are built into nested
// sequences with their parameter bound to the state; the body ends with
// copies of its root's leaves into the state (a leaf that is another state
// leaf being overwritten is first copied to a fresh temporary), except a
// leaf a kernel of the body computes after the last read of the state leaf
// it replaces: that value shares the state's temporary. A while
// with a known trip count (KnownTripCount) and a condition without side
// effects gets no condition sequence: its body runs that many times, with
// no predicate read on the host. A conditional's branches end with copies
// of their roots into the conditional's own temporaries (a root leaf the
// branch computes shares that temporary instead: no copy); one whose selector
// is a constant is just the branch it selects (a call). A call's callee is
// built in place.
//
// In place: a thunk that lists (operand, output) pairs in in_place_pairs()
// (scatter) gets the operand's temporary for its output where the shared
// rule allows (hlo/analysis/in_place_sharing.h, as on cpu: the operand is
// the sequence's own and dead after the thunk, or the while state the
// output replaces), in the entry, while bodies and conditional branches.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_PROGRAM_H_
#define AXLE_GPU_GPU_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/analysis/value_slot.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle::gpu {

// Where an array value lives during a run (value_slot.h, shared with the
// cpu backend).
using GpuValue = ValueSlot;

// The thunks, run in order on one stream, over GpuValues.
struct GpuProgram : ThunkProgram<GpuThunk> {
  // The PTX kernels the program's kernel thunks launch (one per distinct
  // fusion), in the order first used.
  std::vector<std::shared_ptr<const PtxKernel>> kernels;
};

// The program of `module`, prepared by PrepareGpuModule. Unimplemented,
// naming the instruction and CUDA, for what the backend cannot run yet.
absl::StatusOr<GpuProgram> BuildGpuProgram(const HloModule& module,
                                           const PtxOptions& options = PtxOptions());

// The thunks, one a line, nested sequences indented, with the values each
// reads and writes (tests and dumps).
std::string GpuProgramToString(const GpuProgram& program);

// The PTX of loop fusion `fused`, from the process's kernel cache: fused
// computations structurally identical (hlo_structural_hash.h: names do not
// count) compiled for the same options are compiled once per process. The
// kernel is named after the fingerprint ("axle_kernel_<hex>").
absl::StatusOr<std::shared_ptr<const PtxKernel>> CompileLoopFusionCached(
    const HloComputation& fused, const PtxOptions& options);
PtxCacheStats GetPtxCacheStats();

// The trip count of while loop `loop` when it is known: its backend_config
// is XLA's WhileLoopBackendConfig with `{"known_trip_count":{"n":"N"}}`
// (what PrepareGpuModule writes where CountWhileTrips finds the count, and
// what XLA writes in its optimized HLO). nullopt otherwise, or when N is not
// a non-negative integer.
std::optional<int64_t> KnownTripCount(const HloInstruction& loop);

// "CUDA backend: <why> (instruction %name, opcode)" as Unimplemented.
absl::Status GpuUnsupported(const HloInstruction& instruction, absl::string_view why);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_PROGRAM_H_
