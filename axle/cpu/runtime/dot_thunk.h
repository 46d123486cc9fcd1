//===- dot_thunk.h - dot (and dot + epilogue) on the CPU --------------------===//
//
// A DotThunk runs an HLO `dot` with XLA's general dimension numbers, or a
// kOutput fusion from `dot-epilogue-fusion` (dot, then optionally a bias
// add, then optionally relu / logistic / tanh / exp / clamp).
//
// Each operand is viewed as a 3-d array: lhs [B, M, K], rhs [B, K, N],
// output [B, M, N] (B the batch dims, M / N the free dims, K the
// contracting dims, each group collapsed). An operand whose dims collapse
// to strides oneDNN takes (row-major or transposed in its last two dims) is
// read in place; any other is copied into that layout first (at compile
// time when it is a constant).
//
// f32 x f32 -> f32 and bf16 x bf16 -> bf16 / f32 run a oneDNN matmul
// primitive created at compile time, the epilogue as the primitive's own
// bias (one value per output column) or post-ops (binary add or sum,
// eltwise); an f32 GELU after the primitive (vector_activations.h), on the
// intra-op pool; a constant rhs is reordered once into the primitive's
// preferred weights layout. An unbatched bf16 dot uses 2-d descs, for which
// that layout is oneDNN's packed BA16a64b2a, and packs a rhs that is not a
// constant on each run (lhs of 64 rows or more; on the intra-op pool):
// oneDNN's brgemm would otherwise copy it for every block of rows. An
// unbatched f32 dot packs such a rhs into BA16a64b from more rows
// (rhs_packing.h; a transposed rhs, as a backward dot's dX = dY W^T, too).
// A plain bf16 dot's result is rounded by oneDNN; a bf16 epilogue runs
// after it, rounding after each op. Every other element type (and anything
// oneDNN declines) runs a kernel emitted into the program's LLVM module
// (dot_loop_emitter.h: operands read in place, the interpreter's sums and
// rounding, the epilogue fused), split by output rows across the intra-op
// pool.
//
// Thread-safe: each run makes its own stream and memory objects; the
// scratchpad and the packed rhs are per calling thread and reused.
// An f32 dot large enough for two threads runs as pieces along its rows
// (or batch), one-thread primitives that the intra-op pool's threads claim
// as they come free (dot_split.h; AXLE_CPU_DOT_SPLIT=team: one primitive
// on oneDNN's OpenMP team instead). oneDNN's OpenMP team is sized per
// calling thread (omp_team.h): the intra-op pool's size (capped by
// ExecutableRunOptions::intra_op_threads) divided among the oneDNN thunks
// running at that moment, and no more threads than the dot's multiply-adds
// keep busy (TeamSizeForWork: a small dot runs on the calling thread
// alone; AXLE_CPU_DOT_THREADS caps it).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DOT_THUNK_H_
#define AXLE_CPU_RUNTIME_DOT_THUNK_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

// `instruction` is a dot or a kOutput fusion rooted at a dot epilogue.
// `operand_values[i]` is the value of its operand i, `constants[i]` that
// operand's literal when it is a constant (else null; the thunk copies what
// it keeps). A dot oneDNN does not run becomes the kernel `kernel_name` in
// `kernels` (compiled with the program's loop kernels). Unimplemented for
// fusions that are not dot epilogues (dot_thunk_emitter.cc).
absl::StatusOr<std::unique_ptr<Thunk>> CreateDotThunk(const HloInstruction& instruction,
                                                      std::vector<int64_t> operand_values,
                                                      const std::vector<const Literal*>& constants,
                                                      int64_t output_value,
                                                      LoopKernelModule& kernels,
                                                      absl::string_view kernel_name);

// The OpenMP team size oneDNN uses on one thread when nothing else runs
// (the intra-op pool's size, ThreadPool::DefaultNumThreads()).
int DotThreads();

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DOT_THUNK_H_
