//===- ptx_kernel_emitter_internal.h - The loop-fusion kernel emitter -----===//
//
// The KernelEmitter class behind EmitLoopFusionKernel (ptx_kernel_emitter.h),
// shared by its two source files: ptx_kernel_emitter.cc (the element and
// column-reduction kernels, values and indexing) and ptx_row_kernel.cc (row
// fusions: warps and blocks per row, shuffles, vector loads and stores).
// Only those two include it; it includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_KERNEL_EMITTER_INTERNAL_H_
#define AXLE_GPU_PTX_KERNEL_EMITTER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/gpu/nvptx_target_hooks.h"
#include "axle/gpu/ptx_kernel_emitter.h"
#include "axle/gpu/row_fusion.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::gpu::ptx_internal {

constexpr int kWarpSize = 32;
constexpr unsigned kSharedAddressSpace = 3;

// Row fusions (row_fusion.h): vector loads and stores of at most 16 bytes,
// at most 32 elements a thread kept in registers (beyond that the row is
// walked in steps, re-read from the caches for each reduction).
constexpr int64_t kMaxVectorBytes = 16;
constexpr int64_t kMaxVector = 8;
constexpr int64_t kMaxElementsPerThread = 32;

// How a row fusion's kernel walks its rows: `threads` (whole warps) a row,
// each taking `vector` consecutive columns at a time, chunks of threads *
// vector columns; all of a row's chunks emitted straight (each value
// computed once and kept: a softmax reads its row from memory once), or,
// for rows longer than that (`loop`), `chunks` a step of a loop that each
// reduction and the epilogue run again. Rows share a block of
// `rows_per_block` * threads.
struct RowSchedule {
  int64_t vector = 1;
  int64_t threads = kWarpSize;
  int64_t chunks = 1;
  bool loop = false;
  int64_t rows_per_block = 1;
};

// One element of each instruction at an index, emitted once per index (and
// scope: a value emitted inside a reduce's loop is not reused outside it).
class KernelEmitter {
 public:
  KernelEmitter(const HloComputation& fusion, llvm::Module* module)
      : fusion_(fusion),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, NvptxTargetHooks()) {}

  absl::StatusOr<EmittedKernel> Emit(absl::string_view name, int block_size,
                                     const std::vector<const HloInstruction*>& outputs);

 private:
  // The kernel function with its buffers, marked as a kernel launched with
  // at most `block_size` threads a block.
  llvm::Function* CreateKernel(absl::string_view name, int block_size,
                               const std::vector<const HloInstruction*>& outputs);
  // A thread per output element, or per `vector` consecutive ones
  // (ElementVectorWidth).
  absl::Status EmitElementPerThread(llvm::Function* kernel,
                                    const std::vector<const HloInstruction*>& outputs,
                                    int64_t vector);
  // A row fusion (row_fusion.h) as `schedule` walks it.
  absl::Status EmitRowFusion(llvm::Function* kernel, const RowFusionAnalysis& analysis,
                             const RowSchedule& schedule,
                             const std::vector<const HloInstruction*>& outputs);
  // A block per `width` output columns (see ColumnReductionOf), with
  // `block_rows` threads a column.
  absl::Status EmitColumnReduction(llvm::Function* kernel, const HloInstruction& reduce,
                                   int64_t rows, int64_t width, int64_t block_rows);
  // `value` combined across the warp by `reduce`'s computation (lane 0
  // gets the result); with `min_offset` w > 1, across the lanes equal
  // modulo w (lanes 0..w-1 get the results); with `max_offset` m < 16,
  // only lanes 0..2m-1 take part in lane 0's result.
  absl::StatusOr<llvm::Value*> EmitWarpReduce(const HloInstruction& reduce, llvm::Value* value,
                                              int min_offset = 1, int max_offset = kWarpSize / 2);
  // shfl.sync of `value` (a scalar of at most 64 bits) in `mode`
  // (nvvm_shfl_sync_down_i32: from the lane `offset` further;
  // nvvm_shfl_sync_idx_i32: from lane `offset`).
  llvm::Value* Shuffle(llvm::Intrinsic::ID mode, llvm::Value* value, int offset);

  // One thread's `vector` consecutive columns of its row.
  struct Chunk {
    // Whether they are in the row (nullptr: always); `start` is clamped
    // into the row when they are not, so that loads stay in bounds.
    llvm::Value* in_range = nullptr;
    llvm::Value* start = nullptr;
    std::vector<llvm_ir::IrIndex> indices;
    // The columns' part of them.
    std::vector<llvm_ir::IrIndex> column_indices;
  };
  // Where a row fusion's thread is.
  struct RowPosition {
    llvm::Value* row = nullptr;  // clamped to the last row
    llvm::Value* valid = nullptr;
    llvm::Value* in_block = nullptr;  // the row's number in the block
    llvm::Value* thread = nullptr;    // within the row
    llvm::Value* lane = nullptr;
    llvm::Value* warp = nullptr;  // within the row
    llvm::Value* base = nullptr;  // row * columns
    llvm_ir::IrIndex index;       // of the row (row_dims)
  };
  Chunk MakeChunk(const RowGeometry& geometry, const RowPosition& at, int64_t vector,
                  llvm::Value* column, bool always_in_range);
  // The vector loads of a chunk: parameters of the input's dimensions and
  // of the columns' (a layer norm's scale, broadcast along the rows).
  void PreloadChunk(const RowGeometry& geometry, const RowPosition& at, const Chunk& chunk);
  // Loads each parameter of dimensions `dims` laid out row-major at
  // `linear` .. linear + indices.size() - 1 as one vector, and caches its
  // elements as that parameter's values at `indices`.
  void PreloadParameters(absl::Span<const int64_t> dims, llvm::Value* linear,
                         const std::vector<llvm_ir::IrIndex>& indices);
  // Stores `values` (the output's elements at `indices`) into `buffer`:
  // one vector store at `linear` when the output is row-major, else each
  // at its position in the output's layout.
  void StoreElements(const HloInstruction& output, llvm::Value* buffer, llvm::Value* linear,
                     const std::vector<llvm_ir::IrIndex>& indices,
                     const std::vector<llvm::Value*>& values);
  // A private array in the kernel's entry block (SROA makes registers of it).
  llvm::Value* EntryArray(llvm::Type* element, int64_t count);
  // `reduce`'s row total from each thread's `partial`, in every thread of
  // the row.
  absl::StatusOr<llvm::Value*> CombineRow(const HloInstruction& reduce, const RowPosition& at,
                                          const RowSchedule& schedule, llvm::Value* partial,
                                          llvm::Function* kernel);
  // One thread's fold of `reduce`'s input over its columns of the row.
  absl::StatusOr<llvm::Value*> FoldRow(const HloInstruction& reduce, const RowGeometry& geometry,
                                       const RowPosition& at, const RowSchedule& schedule,
                                       llvm::Value* init, llvm::Function* kernel);
  // The outputs of the input's dimensions, every element stored.
  absl::Status StoreRowOutputs(const std::vector<const HloInstruction*>& outputs,
                               const RowGeometry& geometry, const RowPosition& at,
                               const RowSchedule& schedule, llvm::Function* kernel);
  // A loop over the row's columns: `body` for the chunk steps starting at
  // `first`, then `step` columns further each, while in the row's
  // `columns`; `carried` values (phis) become what body returns. Leaves
  // the builder after the loop and drops the values cached in it.
  using StepBody = std::function<absl::StatusOr<std::vector<llvm::Value*>>(
      llvm::Value*, const std::vector<llvm::Value*>&)>;
  absl::StatusOr<std::vector<llvm::Value*>> EmitColumnLoop(llvm::Function* kernel,
                                                           llvm::Value* first, int64_t columns,
                                                           int64_t step,
                                                           const std::vector<llvm::Value*>& carried,
                                                           const StepBody& body);
  // Runs `visit` on each of this thread's chunks of the row, threading
  // `carried` through: the kept chunks_ (a straight schedule), or the chunks
  // of every step of a column loop (EmitColumnLoop), each preloaded.
  // Returns the carried values after the last chunk.
  using ChunkVisit = std::function<absl::Status(const Chunk&, std::vector<llvm::Value*>&)>;
  absl::StatusOr<std::vector<llvm::Value*>> ForEachRowChunk(
      llvm::Function* kernel, const RowGeometry& geometry, const RowPosition& at,
      const RowSchedule& schedule, std::vector<llvm::Value*> carried, const ChunkVisit& visit);
  // The row fusion's chunks kept for all passes (straight schedules).
  std::vector<Chunk> chunks_;
  // A special register (tid.x, ...) as i64.
  llvm::Value* Special(llvm::Intrinsic::ID id, const char* name);
  // `linear` as a row-major index of `dims`.
  llvm_ir::IrIndex Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims);
  // The same in `shape`'s layout (its physical order), and the position of
  // `index` in an array of `shape` laid out in its layout.
  llvm_ir::IrIndex DelinearizeInLayout(llvm::Value* linear, const Shape& shape);
  llvm::Value* LinearizeInLayout(const llvm_ir::IrIndex& index, const Shape& shape);
  absl::StatusOr<llvm::Value*> Generate(const HloInstruction* hlo, const llvm_ir::IrIndex& index);

  struct Cached {
    llvm_ir::IrIndex index;
    llvm::Value* value;
    int64_t scope;
  };

  const HloComputation& fusion_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  std::vector<llvm::Value*> parameters_;
  std::map<const HloInstruction*, std::vector<Cached>> cache_;
  // A row fusion's reductions once computed: their value at the thread's
  // row, whatever the index (row_fusion.h: every reader reads that row).
  std::map<const HloInstruction*, llvm::Value*> row_values_;
};

}  // namespace axle::gpu::ptx_internal

#endif  // AXLE_GPU_PTX_KERNEL_EMITTER_INTERNAL_H_
