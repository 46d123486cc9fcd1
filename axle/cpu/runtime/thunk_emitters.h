//===- thunk_emitters.h - The ops that run as their own thunk --------------===//
//
// One function per op (or op family) that is not a loop fusion; each is
// listed in FindThunkEmitter (program_builder.cc). See program_builder.h
// for what an emitter does.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_THUNK_EMITTERS_H_
#define AXLE_CPU_RUNTIME_THUNK_EMITTERS_H_

#include "absl/status/status.h"
#include "axle/cpu/runtime/program_builder.h"

namespace axle::cpu {

// dot, and kOutput fusions rooted at a dot epilogue (dot_thunk.cc).
absl::Status EmitDotThunk(const HloInstruction& instruction, ProgramBuilder& builder);

// while, conditional, and call (whose computation's thunks join the caller's
// sequence) (control_flow_thunk.cc).
absl::Status EmitWhileThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitConditionalThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitCallThunk(const HloInstruction& instruction, ProgramBuilder& builder);
// custom-call, on the executable's buffers (custom_call_thunk.cc).
absl::Status EmitCustomCallThunk(const HloInstruction& instruction, ProgramBuilder& builder);
// convolution, and kOutput fusions rooted at a convolution epilogue
// (convolution_thunk.cc).
absl::Status EmitConvolutionThunk(const HloInstruction& instruction, ProgramBuilder& builder);

// sort (sort_thunk.cc), scatter (scatter_thunk.cc), select-and-scatter
// (select_and_scatter_thunk.cc), rng-bit-generator, rng and
// rng-get-and-update-state (rng_thunk.cc).
absl::Status EmitSortThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitScatterThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitSelectAndScatterThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitRngBitGeneratorThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitRngThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitRngGetAndUpdateStateThunk(const HloInstruction& instruction,
                                           ProgramBuilder& builder);
// dynamic-update-slice, in place where it may be (dynamic_update_slice_thunk.cc).
absl::Status EmitDynamicUpdateSliceThunk(const HloInstruction& instruction,
                                         ProgramBuilder& builder);

// topk of the element types TopKThunkSupports (topk_thunk.cc); the others
// are decomposed into a sort first (hlo/transforms/topk_decomposer.h).
absl::Status EmitTopKThunk(const HloInstruction& instruction, ProgramBuilder& builder);

// fft on KISS FFT plans made at compile time, the batch split across the
// intra-op pool (fft_thunk.cc); shapes XLA's verifier rejects go to the
// interpreter's kernel.
absl::Status EmitFftThunk(const HloInstruction& instruction, ProgramBuilder& builder);

// cholesky, triangular-solve, ragged-dot, scaled-dot (and the fft shapes
// EmitFftThunk leaves): the interpreter's kernels on the executable's
// buffers (linalg_thunk.cc).
absl::Status EmitInterpreterKernelThunk(const HloInstruction& instruction, ProgramBuilder& builder);

// all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute,
// collective-broadcast and their -start forms among the devices of a
// multi-device module, through the run's communicator; replica-id and
// partition-id from the run's participant (collective_thunk.cc).
absl::Status EmitCollectiveThunk(const HloInstruction& instruction, ProgramBuilder& builder);
absl::Status EmitDeviceIdThunk(const HloInstruction& instruction, ProgramBuilder& builder);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_THUNK_EMITTERS_H_
