//===- loop_kernel_plan.h - What shape of loop nest a loop kernel gets -----===//
//
// The decisions loop_kernel_emitter.cc takes from the fused computation
// alone, before emitting anything: a tiled transpose, a column reduction,
// the row reduction that prefetches the next row, skewed rows. No LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_LOOP_KERNEL_PLAN_H_
#define AXLE_CPU_LOOP_KERNEL_PLAN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

// A transpose that moves its operand's minor dimension to output dimension
// `a` reads that operand a whole row apart for consecutive output
// elements; for large power-of-two rows every read misses (the lines map
// to a few cache sets). Such a kernel walks the output in tiles of
// kTransposeTile x kTransposeTile over dimensions `a` and the minor one,
// so the lines a tile reads stay in L1 until all their elements are used.
inline constexpr int64_t kTransposeTile = 32;

// Output dimension `a` (not the minor one) of a transpose in `computation`
// read at the kernel's full loop index (of output dimensions `dims`) that
// puts its operand's minor dimension there, when both it and the minor
// output dimension are at least a tile long; and that transpose.
std::optional<std::pair<size_t, const HloInstruction*>> TransposedDimension(
    const HloComputation& computation, const RowIndexAnalysis& rows,
    const std::vector<int64_t>& dims);

// A reduce root that keeps the input's minor dimension (a bias gradient):
// emitted by accumulating into the output row, input row by input row.
bool IsColumnReduction(const HloInstruction& root);

// The column reductions one kernel with these outputs computes together,
// in one pass over their inputs: every output a column reduction of inputs
// of one shape over the same dimensions (a multi-output fusion of sibling
// reductions, runtime/cpu_multi_output_fusion.h: batch norm backward's sums
// over N, H and W). `outputs` itself then (one is enough), empty otherwise.
std::vector<const HloInstruction*> ColumnReductions(
    const std::vector<const HloInstruction*>& outputs);

// Column reductions to one row (ColumnReductions with rank-1 results: every
// input dimension but the minor one folded) split across threads by
// their columns make each thread read a slice of every input row, and
// from memory two threads then ran slower than one (f32[16384,1024]: 1.7
// -> 2.9 ms; f32[32768,512]: 1.7 -> 6.3). When they fold at least
// 2 x kMinColumnChunkBytes of input with combiners that are one
// associative op of their two parameters (IsCommutativeFold), their input
// rows are cut into consecutive chunks instead (at most kMaxColumnChunks,
// each at least kMinColumnChunkBytes), and the kernel's range [0, chunks]
// means: chunk 0 folds the init value and its rows into the outputs, chunk
// c > 0 folds its rows (from its first row, without the init value) into
// its partial row in the partial results' buffer passed after the
// outputs, and row `chunks`, run after all the others, folds the partial
// rows in order into the outputs. Each thread reads whole rows of its
// chunks; the chunks depend only on the shape, so the results are the
// same at any thread count (a float sum rounds as chunked sums do). The
// number of chunks (0: not chunked).
inline constexpr int64_t kMinColumnChunkBytes = int64_t{1} << 20;
inline constexpr int64_t kMaxColumnChunks = 16;
inline constexpr int64_t kMaxColumnChunkPartialsBytes = int64_t{256} << 10;
int64_t ColumnChunks(const std::vector<const HloInstruction*>& outputs);
// The byte offset of reduce `r`'s partial rows (chunks - 1 rows of its
// results, 64-byte aligned) in the partial results' buffer; r = the number
// of reduces: the buffer's size.
int64_t ColumnChunkPartialsOffset(const std::vector<const HloInstruction*>& reduces, size_t r,
                                  int64_t chunks);

// A variadic reduce (argmax and argmin: a value and an iota folded by a
// comparator that reads both accumulators) folds each output element's
// inputs one after another, and LLVM cannot split such a fold into vector
// lanes: one scalar dependency chain per element. Its kernel folds a block
// of output elements (along the output's minor dimension) side by side
// instead, one per vector lane (EmitSideBySideReduction). Each element
// still folds its inputs in order, so the results are the interpreter's
// bit for bit, whatever the combiner. The reduce whose results `outputs`
// are (get-tuple-elements of one variadic reduce, any subset), when that
// pays: the output's minor dimension has at least kMinSideBySideLanes
// elements, every result is an integer of 8 to 64 bits or a 16- to 64-bit
// float, and nothing the reduce reads is another reduce or reduce-window (a
// row value would be computed again for every element). Null otherwise.
inline constexpr int64_t kMinSideBySideLanes = 4;
// Output elements folded side by side at most (each block's accumulators
// stay in L1, and so do the input lines its next steps read).
inline constexpr int64_t kSideBySideBlock = 64;
const HloInstruction* SideBySideReduction(const std::vector<const HloInstruction*>& outputs);

// The vector width, in lanes, of a side-by-side reduction's fold: a
// 512-bit vector of its widest value type (bf16 and f16 compute in f32),
// no more than the lanes of one block (a power of two).
int64_t SideBySideVectorLanes(const HloInstruction& reduce);

// A variadic reduce SideBySideReduction does not take (its output's minor
// dimension is shorter than kMinSideBySideLanes, or it is a scalar: argmax
// of a whole vector) has one scalar fold per output element. When its
// combiner is an associative selection (associative_selection.h: argmax,
// argmin) and each element folds at least SplitFoldVectorLanes x
// kMinSplitFoldRun inputs, each element's fold is split instead: vector
// lane j folds the j-th of SplitFoldVectorLanes consecutive runs of the
// inputs (in row-major order of the reduced dimensions), and the init
// value, the runs' results and the inputs left over are folded in order.
// Associativity makes that the in-order fold's bits. The reduce, or null.
// It also takes a reduce side by side would fold a row apart (the input's
// minor dimension reduced) when each element folds at least
// kMinSplitFoldRow inputs: a block of side by side elements then streams
// from a row per element (64), a split fold from one row.
inline constexpr int64_t kMinSplitFoldRun = 16;
inline constexpr int64_t kMinSplitFoldRow = 4096;
const HloInstruction* SplitFoldReduction(const std::vector<const HloInstruction*>& outputs);

// The lanes of a split fold: a 512-bit vector of the reduce's widest result
// type (bf16 and f16 compute in f32).
int64_t SplitFoldVectorLanes(const HloInstruction& reduce);

// A split fold to a scalar (argmax of a whole array) has one output
// element, so one range for the whole kernel: one thread. When it folds at
// least 2 x kMinFoldChunk inputs, its inputs are cut into that many
// consecutive chunks instead (at most kMaxFoldChunks, each at least
// kMinFoldChunk inputs), and the kernel's range [0, chunks] means: rows
// [0, chunks) fold one chunk each (a split fold of the chunk's inputs,
// without the init value) into a buffer of partial results passed after
// the outputs, and row `chunks`, run after all the others, folds the init
// value and the partial results in order into the outputs. The chunks
// can run on different threads; associativity makes the result the
// in-order fold's bits. The number of chunks (0: not chunked); their
// partial results take FoldChunkBytes bytes, at most kMaxFoldChunkBytes.
inline constexpr int64_t kMinFoldChunk = 16384;
inline constexpr int64_t kMaxFoldChunks = 16;
inline constexpr int64_t kMaxFoldChunkBytes = 1024;
int64_t FoldChunks(const std::vector<const HloInstruction*>& outputs);
// Bytes of the partial results of `chunks` chunks of `reduce`: per result,
// `chunks` slots of 8 bytes.
int64_t FoldChunkBytes(const HloInstruction& reduce, int64_t chunks);

// A reduce-window that is a running fold along one dimension: cumsum,
// cumprod, cummax and cummin as JAX lowers them (`window={size=1xN
// pad=0_0x(N-1)_0}`). Output element i along `dimension` folds input
// elements [0, i] (a prefix scan) or, `reverse`, [i, N) (a suffix scan);
// every other dimension has a window of one. Computed element by element
// that is O(N^2); a scan kernel folds each output from its neighbour's
// instead, in O(N). A prefix scan folds the same values in the same order
// as the window does (bit for bit the interpreter's result). A suffix
// scan folds them from the end, so it is only taken for a combiner that is
// one commutative, associative op of its two parameters (add, multiply,
// max, min, and, or, xor); floating-point sums then round differently,
// as XLA's own tree rewrite of these windows does.
struct ScanPlan {
  int64_t dimension = 0;
  bool reverse = false;
};
std::optional<ScanPlan> ScanOf(const HloInstruction& root);

// The output dimension whose range [begin, end) a loop kernel with these
// outputs is called over (loop_kernel_emitter.h): the outermost one that
// is not of size one (all but the innermost may be), so that a kernel of
// shape [1, 16, 256] still splits across threads; column reductions'
// (ColumnReductions) outermost; for a scan along dimension 0 the next (a rank-1 scan: none,
// -1, and its range is [0, 1)). Scalars: -1 (a
// chunked fold's range is over its chunks: FoldChunks).
int64_t RangeDimension(const std::vector<const HloInstruction*>& outputs);

// Whether computing `hlo` elementwise takes a transcendental function:
// enough work per element for the row reduction over it to hide a
// prefetch of the next row. Over cheap ones (layer norm's squares) the
// prefetches and the chunking cost more than they save (1.6 -> 2.1 ms).
bool ComputesTranscendentals(const HloInstruction& hlo);

// The last reduce among `values` (row values computed per row of a 2-d or
// deeper kernel's innermost dimension) that reduces exactly that dimension
// of an input shaped `dims` (the output's): softmax's exp-and-sum, layer
// norm's sum of squares. Its loop prefetches the next row and, in skewed
// kernels, stores the previous row's output. Null if none.
const HloInstruction* LastRowReduction(const std::vector<const HloInstruction*>& values,
                                       const std::vector<int64_t>& dims);

// Skewed rows, for a 2-d kernel whose output is computed from row values
// and row buffers only (softmax: exp in a row buffer divided by the row
// sum): row r's output is stored inside row r+1's last row reduction (the
// exp-and-sum loop), so the output's work (softmax's divides, on the
// divider) overlaps that loop's (the exp, on the FMA units) instead of
// following it, and its non-temporal stores overlap the next row's reads.
// Needs non-temporal stores (`nontemporal`: a large output), one f32
// output with rows a multiple of 64 bytes and at most `max_row_bytes`, f32
// row values, and an output that reads nothing but constants, broadcasts,
// elementwise ops, row values (`row_values`, by depth) and instructions
// `in_row_buffer` says are kept in a row buffer. The reduce whose loop
// takes the previous row's output (LastRowReduction), or null.
const HloInstruction* SkewableRowReduction(
    const std::vector<std::vector<const HloInstruction*>>& row_values,
    const std::vector<const HloInstruction*>& outputs, const std::vector<int64_t>& dims,
    bool nontemporal, int64_t max_row_bytes,
    const std::function<bool(const HloInstruction*)>& in_row_buffer);

// A concatenate (or an edge pad) along the innermost dimension makes each
// element choose its operand: both are read (gathers, once vectorized) and
// one is selected. Where the kernel's innermost dimension (of size
// `dims.back()`) is such an instruction's, its loop is split at the
// operand boundaries, and in each part LLVM folds the choice away (the
// loop bounds are constants). The split points inside (0, dims.back()),
// ascending; empty for none, or when the body, emitted once per part, would
// be emitted more than kMaxInnerLoopParts times and, all parts together,
// take more than kMaxInnerLoopInstructions of the computation's
// instructions (a DenseNet batch norm of a channel concat of 25 feature
// maps is 25 parts of a small body).
inline constexpr int64_t kMaxInnerLoopParts = 8;
inline constexpr int64_t kMaxInnerLoopInstructions = 4096;
std::vector<int64_t> InnerLoopSplits(const HloComputation& computation,
                                     const std::vector<int64_t>& dims);

}  // namespace axle::cpu

#endif  // AXLE_CPU_LOOP_KERNEL_PLAN_H_
