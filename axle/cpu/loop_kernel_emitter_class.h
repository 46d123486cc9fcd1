//===- loop_kernel_emitter_class.h - The loop-kernel emitter ---------------===//
//
// The class behind CompileLoopKernel / EmitLoopKernel: one loop kernel's
// IR builder, elemental emitter, generators and schedule state. Each
// schedule is defined in a file of its own:
//
//   loop_kernel_emitter.cc       Emit, the plain loop nest, generators
//   tiled_transpose_emitter.cc   transposes in 32x32 tiles
//   column_reduction_emitter.cc  reductions into the output row
//   skewed_rows_emitter.cc       row reductions a row ahead of their use
//   nontemporal_row_emitter.cc   rows stored with non-temporal stores
//   row_buffers_emitter.cc       row buffers and next-row prefetches
//   scan_kernel_emitter.cc       prefix / suffix scans (a free function)
//   side_by_side_reduction_emitter.cc
//                                variadic reduces (argmax) folded across
//                                output elements (a free function)
//
// Internal to axle/cpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_LOOP_KERNEL_EMITTER_CLASS_H_
#define AXLE_CPU_LOOP_KERNEL_EMITTER_CLASS_H_

#include <functional>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "axle/cpu/cpu_target_hooks.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {

// Outputs at least as large as the target's last-level cache
// (Jit::last_level_cache_bytes, host_cache_sizes.h) are stored with
// non-temporal stores (where UseNonTemporalStores allows): a cached copy
// would be evicted before anyone reads it, and bypassing the cache saves the
// read-for-ownership of every line (a fifth of the chain's traffic).
// Rows (the innermost dimension) shorter than this keep ordinary stores: the
// aligned main loop would be a few elements, and the alignment arithmetic
// per row would cost more than it saves. The stores align to
// kBufferAlignment (a cache line; also what a 512-bit store needs).
inline constexpr int64_t kNonTemporalMinRowBytes = 1024;

class LoopKernelEmitter {
 public:
  LoopKernelEmitter(const HloComputation& computation, llvm::Module* module)
      : computation_(computation),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, CpuTargetHooks()) {}

  // Stores the (single) output with non-temporal stores: see EmitNonTemporalRow.
  void EnableNonTemporalStores() { nontemporal_ = true; }

  absl::Status Emit(absl::string_view kernel_name,
                    const std::vector<const HloInstruction*>& outputs);

  // The loop nest over the outputs' shape, outermost dimension [begin, end).
  absl::Status EmitLoopNest(llvm::Function* body, const std::vector<const HloInstruction*>& outputs,
                            const std::vector<llvm::Value*>& buffers, llvm::Value* begin,
                            llvm::Value* end);

  // Tiled transposes (loop_kernel_plan.h: TransposedDimension).

  // The loop nest with dimensions `a` and the minor one tiled: the other
  // dimensions outermost (in order), then the tiles of `a` and of the minor
  // dimension, then the elements of a tile. The outermost dimension (tiled
  // or not) covers [begin, end). For each tile, the transpose's operand is
  // first copied into a tile buffer in its own order (contiguous reads of
  // whole lines), and the tile's elements read the transpose from there.
  absl::Status EmitTiledLoopNest(llvm::Function* body,
                                 const std::vector<const HloInstruction*>& outputs,
                                 const std::vector<llvm::Value*>& buffers,
                                 const std::vector<int64_t>& dims, size_t a,
                                 const HloInstruction& transpose, llvm::Value* begin,
                                 llvm::Value* end);

  // The tile buffer of a tiled transpose: (minor - minor_start) * tile +
  // (a - a_start), set while a tile's elements are emitted.
  struct TileBuffer {
    const HloInstruction* transpose = nullptr;
    llvm::Value* buffer = nullptr;
    size_t a = 0, minor = 0;
    llvm::Value* a_start = nullptr;
    llvm::Value* minor_start = nullptr;
    // The tile transposed in registers (2- and 4-byte elements), or null.
    llvm::Value* transposed = nullptr;
  };
  // Where the tile's elements are read from: the transposed copy, when
  // there is one, at (a - a_start) * tile + (minor - minor_start).
  llvm::Value* TileReadBuffer() const;
  llvm::Value* TileReadOffset(const llvm_ir::IrIndex& index);

  // Copies the tile buffer into its transposed copy through registers:
  // 16x16 blocks of 16-lane vectors, each transposed by 64 shuffles.
  void EmitTileTranspose(llvm::Type* element);

  // One 16x16 block of the tile, at (block_row, block_column) of the tile
  // buffer, into the transposed copy at (block_column, block_row).
  void EmitTileBlockTranspose(llvm::Type* element, llvm::Type* vector, llvm::Align align,
                              llvm::Value* block_row, llvm::Value* block_column);

  llvm::Value* TileOffset(const llvm_ir::IrIndex& index, llvm::Value* a_start,
                          llvm::Value* minor_start);

  // A reduce root that keeps its input's minor dimension and reduces others
  // (a column reduction, such as a bias gradient). Folding the reduced
  // dimensions inside each output element would read the input a row apart
  // per step (and 4 KiB strides all land in one L1 set). Instead the output
  // row is the accumulator: it is set to the init value, then every input
  // row is folded into it with the minor dimension innermost (contiguous,
  // vectorized across output elements). Each element still folds its inputs
  // in order, as the interpreter does. `reduces` (ColumnReductions: one
  // input shape, the same reduced dimensions) fold in the same loops, each
  // into its buffer of `outputs`, so their inputs are read once. Blocks of
  // columns keep their accumulators in registers across the rows
  // (column_reduction_emitter.cc).
  // `chunks` > 0 (loop_kernel_plan.h: ColumnChunks): [begin, end) ranges
  // over the chunks of input rows and their combine, and `partials` is the
  // partial results' buffer.
  absl::Status EmitColumnReduction(const std::vector<const HloInstruction*>& reduces,
                                   const std::vector<llvm::Value*>& outputs, llvm::Value* begin,
                                   llvm::Value* end, int64_t chunks = 0,
                                   llvm::Value* partials = nullptr);

 private:
  // The innermost loop [low, high) over one row of the output `out` (the
  // outer dimensions fixed in `index`), split in two: ordinary stores up to
  // the first 64-byte boundary of the row's output (kVectorizeNever: at
  // most 63 bytes), then the main loop, whose stores (StoreOutput) address
  // the output from a base pointer that llvm.assume declares 64-byte
  // aligned, and which is tagged kNonTemporalStoresLoopProperty. LLVM's
  // vectorizer copies the scalar store's alignment (4) to its vector
  // stores; the AlignmentFromAssumptions pass (after vectorization) raises
  // them to 64 from the assumption; then the Jit marks the aligned vector
  // stores of tagged loops !nontemporal (jit.cc: a scalar store marked
  // before vectorization keeps the loop scalar on x86, and an under-aligned
  // non-temporal vector store is split into scalar ones). A range that
  // starts anywhere (a thread's block, a misaligned buffer) is handled: the
  // main loop always starts aligned; its remainder stores stay ordinary.
  absl::Status EmitNonTemporalRow(llvm::Value* low, llvm::Value* high, llvm::Value* out,
                                  PrimitiveType type, llvm_ir::IrIndex index,
                                  absl::Span<const int64_t> dims,
                                  const std::function<absl::Status(llvm::Value*)>& body);

  // Stores an output element: inside EmitNonTemporalRow's main loop through
  // its aligned base, elsewhere as usual.
  void StoreOutput(llvm::Value* value, llvm::Value* out, llvm::Value* linear, PrimitiveType type);

  void BuildGenerators(const std::vector<llvm::Value*>& buffers);

  absl::Status EmitSkewedRows(llvm::Function* body, const HloInstruction& output,
                              const HloInstruction& reduce,
                              const std::vector<const HloInstruction*>& values,
                              const std::vector<llvm::Value*>& buffers,
                              const std::vector<int64_t>& dims, llvm::Value* begin,
                              llvm::Value* end);

  // Hands `hook` to the elemental emitter for `reduce`, the row's last row
  // reduction, with prefetches of a row ahead when its input computes a
  // transcendental (enough work to hide them).
  void ArmRowReduction(llvm_ir::ElementalIrEmitter::RowReductionHook& hook,
                       const HloInstruction& reduce, const std::vector<int64_t>& dims,
                       const llvm_ir::IrIndex& row_index, const std::vector<llvm::Value*>& buffers);

  // A row ahead (kPrefetchRowsAhead) of every parameter shaped like the
  // output, for the last row reduction to prefetch
  // (llvm_ir::ElementalIrEmitter::RowReductionHook): that row's first pass, which
  // reads memory, then finds it in the cache.
  // Rows shorter than kPrefetchMinRowBytes are left to the hardware
  // prefetcher.
  static constexpr int64_t kPrefetchMinRowBytes = 2048;
  // The row prefetched is this many rows ahead: two rows gave softmax
  // 4096x4096 5.2-5.6 ms (one thread, most runs) where one row gave
  // 5.9-6.2 (the memory had not delivered the next row by the time its first
  // pass read it).
  static constexpr int64_t kPrefetchRowsAhead = 2;
  std::vector<llvm::Value*> NextRowStreams(const std::vector<int64_t>& dims,
                                           const llvm_ir::IrIndex& row_index,
                                           const std::vector<llvm::Value*>& buffers);

  // A row buffer holds one row (the trailing dimensions from `depth` on) of
  // a materializable value (RowIndexAnalysis::IsRowMaterializable): the row
  // reductions that read it store it, the rest of the kernel loads it.
  struct RowBuffer {
    llvm::Value* buffer;
    // EmitSkewedRows' two rows (alternating by row parity), or null.
    llvm::Value* double_buffer = nullptr;
    int64_t elements = 0;
    size_t depth;
    std::vector<int64_t> row_dims;
  };
  static constexpr int64_t kMaxRowBufferBytes = 64 << 10;

  void PlanRowBuffers(const RowIndexAnalysis& rows, llvm::Function* body);

  llvm::Value* RowBufferBase(const RowBuffer& row_buffer) const;
  llvm::Value* RowBufferOffset(const RowBuffer& row_buffer, const llvm_ir::IrIndex& index);

  const HloComputation& computation_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  std::map<const HloInstruction*, llvm_ir::ElementGenerator> generators_;
  // Values emitted for an instruction at an index, in the loop scope that
  // emitted them (reused only while that scope is open).
  struct CacheEntry {
    llvm_ir::IrIndex index;
    llvm::Value* value;
    int64_t scope;
  };
  std::map<const HloInstruction*, std::vector<CacheEntry>> cache_;
  std::map<const HloInstruction*, RowBuffer> row_buffers_;
  TileBuffer tile_buffer_;
  // Whether row values are being emitted (row buffers are stored, not read).
  bool filling_row_buffers_ = false;
  // Inside EmitSkewedRows: row buffers are the double ones.
  bool skewing_ = false;
  bool nontemporal_ = false;
  // Inside EmitNonTemporalRow's main loop: its aligned output pointer and
  // the element's offset from it (the loop's induction variable).
  llvm::Value* nontemporal_base_ = nullptr;
  llvm::Value* nontemporal_offset_ = nullptr;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_LOOP_KERNEL_EMITTER_CLASS_H_
