//===- loop_kernel_emitter.cc - Compile a loop fusion to a JIT function ----===//
//
// Emits `kernel(buffers, begin, end)` as a thin wrapper that loads the
// buffer pointers and calls an always-inlined body whose pointer arguments
// are noalias (so, once inlined, the vectorizer needs no runtime alias
// checks). The body is a loop nest over the output shape, the range
// dimension (RangeDimension) [begin, end); its innermost block computes each output element
// through the elemental emitter, one generator per instruction, with a
// per-index cache so shared subexpressions are emitted once.
//
// A kernel whose one output is large (kNonTemporalMinBytes) stores it with
// non-temporal stores, on x86-64 targets that allow them (EmitNonTemporalRow,
// StoreOutput: a separate part of the emitter, outside the loop nest).
//
// A `reduce` root is a reduction kernel: the loop nest walks the output, and
// the elemental emitter's reduce folds, for each output element, the input's
// elements in a nest over the reduced dimensions. Values emitted inside such
// an inner loop are cached only for as long as the loop's scope is open.
// A reduce root that keeps the input's minor dimension (a column reduction)
// instead accumulates into the output row, input row by input row.
//
// Row values (row_index_analysis.h): a reduction inside a loop fusion is
// computed once per row, before the inner loops; a value both it and the
// rest of the kernel read is kept in a row buffer on the stack.
//
// LoopKernelModule (loop_kernel_module.cc) collects the kernels of an
// executable into LLVM modules and compiles them.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_emitter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/elemental_ir_emitter.h"
#include "axle/cpu/emitted_kernel_internal.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

// Outputs at least this large are stored with non-temporal stores (where
// UseNonTemporalStores allows): larger than the last-level cache of the
// machines Axle runs on (32 MiB of L3 on ../shared/PEERS.md's), so a cached
// copy would be evicted before anyone reads it, and bypassing the cache saves
// the read-for-ownership of every line (a fifth of the chain's traffic).
constexpr int64_t kNonTemporalMinBytes = int64_t{32} << 20;
// The alignment of the non-temporal vector stores (a cache line; also what a
// 512-bit store needs).
constexpr int64_t kNonTemporalAlignment = 64;
// Rows (the innermost dimension) shorter than this keep ordinary stores: the
// aligned main loop would be a few elements, and the alignment arithmetic
// per row would cost more than it saves.
constexpr int64_t kNonTemporalMinRowBytes = 1024;

bool HasDescendingLayout(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const auto& minor_to_major = shape.layout().minor_to_major();
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) return false;
  }
  return true;
}

class LoopKernelEmitter {
 public:
  LoopKernelEmitter(const HloComputation& computation, llvm::Module* module)
      : computation_(computation),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_) {}

  // Stores the (single) output with non-temporal stores: see EmitNonTemporalRow.
  void EnableNonTemporalStores() { nontemporal_ = true; }

  absl::Status Emit(absl::string_view kernel_name,
                    const std::vector<const HloInstruction*>& outputs) {
    const int64_t num_parameters = computation_.num_parameters();
    const int num_buffers = static_cast<int>(num_parameters + outputs.size());
    return EmitKernelFunctions(
        module_, b_, kernel_name, num_buffers, static_cast<int>(num_parameters),
        [&](const std::vector<llvm::Value*>& buffers, llvm::Value* begin,
            llvm::Value* end) -> absl::Status {
          llvm::Function* body = b_.GetInsertBlock()->getParent();
          BuildGenerators(buffers);
          std::optional<ScanPlan> scan = outputs.size() == 1 ? ScanOf(*outputs[0]) : std::nullopt;
          if (scan.has_value()) {
            const HloInstruction& root = *outputs[0];
            AXLE_ASSIGN_OR_RETURN(llvm::Value * init, generators_.at(root.operand(1))(IrIndex{}));
            AXLE_RETURN_IF_ERROR(EmitScan(elemental_, b_, root, *scan,
                                          generators_.at(root.operand(0)), init,
                                          buffers[num_parameters], begin, end));
          } else if (outputs.size() == 1 && IsColumnReduction(*outputs[0])) {
            AXLE_RETURN_IF_ERROR(
                EmitColumnReduction(*outputs[0], buffers[num_parameters], begin, end));
          } else {
            AXLE_RETURN_IF_ERROR(EmitLoopNest(body, outputs, buffers, begin, end));
          }
          // Non-temporal stores are weakly ordered: drain them before the
          // caller (another thread, after the thread pool's join) reads the
          // output.
          if (nontemporal_) {
            b_.CreateCall(
                llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::x86_sse_sfence));
          }
          return absl::OkStatus();
        });
  }

  // The loop nest over the outputs' shape, outermost dimension [begin, end).
  absl::Status EmitLoopNest(llvm::Function* body, const std::vector<const HloInstruction*>& outputs,
                            const std::vector<llvm::Value*>& buffers, llvm::Value* begin,
                            llvm::Value* end) {
    const int64_t num_parameters = computation_.num_parameters();
    const Shape& shape = outputs[0]->shape();
    std::vector<int64_t> dims = shape.dimensions();
    // Row values (row_index_analysis.h) by the loop depth they are computed
    // at: once per iteration of the loops outside that depth.
    std::vector<std::vector<const HloInstruction*>> row_values(dims.size() + 1);
    RowIndexAnalysis rows(computation_);
    for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
      if (!rows.IsHoistableRowValue(instruction)) continue;
      const size_t depth = static_cast<size_t>(instruction->shape().rank());
      if (depth <= dims.size()) row_values[depth].push_back(instruction);
    }
    PlanRowBuffers(rows, body);
    IrIndex index(dims.size());
    llvm::BasicBlock* after_nest = nullptr;
    bool has_row_values = false;
    for (const auto& values : row_values) has_row_values |= !values.empty();
    // [begin, end) ranges over this dimension (loop_kernel_plan.h); the
    // skewed and tiled nests take it over the outermost one only.
    const int64_t range = RangeDimension(outputs);
    if (range > 0) {
      // Past leading dimensions of one: the plain nest.
    } else if (const HloInstruction* reduce = SkewableRowReduction(
                   row_values, outputs, dims, nontemporal_, kMaxRowBufferBytes,
                   [&](const HloInstruction* instruction) {
                     auto row_buffer = row_buffers_.find(instruction);
                     return row_buffer != row_buffers_.end() && row_buffer->second.depth == 1;
                   });
               reduce != nullptr) {
      return EmitSkewedRows(body, *outputs[0], *reduce, row_values[1], buffers, dims, begin, end);
    } else if (!has_row_values) {
      if (auto tiled = TransposedDimension(computation_, rows, dims); tiled.has_value()) {
        // Tiles are whole (the last one starts earlier and overlaps its
        // neighbour), so a range of rows shorter than a tile takes the
        // plain loop nest below.
        llvm::LLVMContext& context = module_->getContext();
        auto* tiled_block = llvm::BasicBlock::Create(context, "tiled", body);
        auto* plain_block = llvm::BasicBlock::Create(context, "plain", body);
        auto* done_block = llvm::BasicBlock::Create(context, "nest.done", body);
        llvm::Value* enough = tiled->first == 0 ? b_.CreateICmpSGE(b_.CreateSub(end, begin),
                                                                   b_.getInt64(kTransposeTile))
                                                : b_.getTrue();
        b_.CreateCondBr(enough, tiled_block, plain_block);
        b_.SetInsertPoint(tiled_block);
        AXLE_RETURN_IF_ERROR(EmitTiledLoopNest(body, outputs, buffers, dims, tiled->first,
                                               *tiled->second, begin, end));
        b_.CreateBr(done_block);
        b_.SetInsertPoint(plain_block);
        tile_buffer_ = TileBuffer{};
        after_nest = done_block;
      }
    }
    std::function<absl::Status(size_t)> emit_dimension = [&](size_t d) -> absl::Status {
      // Computed here, each row value is in the cache for every read below;
      // meanwhile row buffers are filled.
      filling_row_buffers_ = true;
      const HloInstruction* last_reduce = LastRowReduction(row_values[d], dims);
      for (const HloInstruction* value : row_values[d]) {
        IrIndex row_index(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(d));
        ElementalIrEmitter::RowReductionHook hook;
        if (value == last_reduce) ArmRowReduction(hook, *value, dims, row_index, buffers);
        AXLE_RETURN_IF_ERROR(generators_.at(value)(row_index).status());
        elemental_.ClearRowReductionHook();
      }
      filling_row_buffers_ = false;
      if (d == dims.size()) {
        llvm::Value* linear = elemental_.Linearize(index, dims);
        for (size_t o = 0; o < outputs.size(); ++o) {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
          StoreOutput(value, buffers[num_parameters + o], linear,
                      outputs[o]->shape().element_type());
        }
        return absl::OkStatus();
      }
      const bool ranged = static_cast<int64_t>(d) == range;
      llvm::Value* low = ranged ? begin : b_.getInt64(0);
      llvm::Value* high = ranged ? end : b_.getInt64(dims[d]);
      if (nontemporal_ && d + 1 == dims.size()) {
        return EmitNonTemporalRow(low, high, buffers[num_parameters],
                                  outputs[0]->shape().element_type(), index, dims,
                                  [&](llvm::Value* i) {
                                    index[d] = i;
                                    return emit_dimension(d + 1);
                                  });
      }
      return elemental_.EmitForLoop(low, high, absl::StrCat("d", d), [&](llvm::Value* i) {
        index[d] = i;
        return emit_dimension(d + 1);
      });
    };
    if (dims.empty()) {
      // A scalar: one element when the range is non-empty.
      AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(
          begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, b_.getInt64(1)), "scalar",
          [&](llvm::Value*) { return emit_dimension(0); }));
    } else {
      AXLE_RETURN_IF_ERROR(emit_dimension(0));
    }
    if (after_nest != nullptr) {
      b_.CreateBr(after_nest);
      b_.SetInsertPoint(after_nest);
    }
    return absl::OkStatus();
  }

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
                                 llvm::Value* end) {
    const int64_t num_parameters = computation_.num_parameters();
    const size_t minor = dims.size() - 1;
    IrIndex index(dims.size());
    const PrimitiveType type = transpose.shape().element_type();
    {
      llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
      llvm::AllocaInst* buffer =
          entry.CreateAlloca(elemental_.StorageType(type),
                             entry.getInt64(kTransposeTile * kTransposeTile), "transpose.tile");
      buffer->setAlignment(llvm::Align(64));
      tile_buffer_ = TileBuffer{&transpose, buffer, a, minor, nullptr, nullptr};
      const int width = primitive_util::ByteWidth(type);
      if (type != PRED && (width == 2 || width == 4)) {
        llvm::AllocaInst* transposed =
            entry.CreateAlloca(elemental_.StorageType(type),
                               entry.getInt64(kTransposeTile * kTransposeTile), "transpose.tile_t");
        transposed->setAlignment(llvm::Align(64));
        tile_buffer_.transposed = transposed;
      }
    }
    const std::vector<int64_t>& permutation =
        cast<HloDimensionsInstruction>(&transpose)->dimensions();
    const ElementGenerator& operand = generators_.at(transpose.operand(0));
    auto low_of = [&](size_t d) { return d == 0 ? begin : b_.getInt64(0); };
    auto high_of = [&](size_t d) { return d == 0 ? end : b_.getInt64(dims[d]); };
    llvm::Value* tile = b_.getInt64(kTransposeTile);
    std::vector<size_t> outer;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d != a && d != minor) outer.push_back(d);
    }
    // The elements of one tile: `a`, then the minor dimension.
    auto emit_tile = [&](llvm::Value* a_start, llvm::Value* minor_start) -> absl::Status {
      llvm::Value* a_end = b_.CreateAdd(a_start, tile);
      llvm::Value* minor_end = b_.CreateAdd(minor_start, tile);
      // The operand's elements under the tile, in the operand's order
      // (dimension `a` of the transpose is the operand's minor one).
      tile_buffer_.a_start = nullptr;
      AXLE_RETURN_IF_ERROR(
          elemental_.EmitForLoop(minor_start, minor_end, "fill_minor", [&](llvm::Value* j) {
            index[minor] = j;
            return elemental_.EmitForLoop(
                a_start, a_end, "fill_a", [&](llvm::Value* i) -> absl::Status {
                  index[a] = i;
                  IrIndex operand_index(index.size());
                  for (size_t p = 0; p < index.size(); ++p)
                    operand_index[permutation[p]] = index[p];
                  AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operand(operand_index));
                  elemental_.StoreElement(value, tile_buffer_.buffer,
                                          TileOffset(index, a_start, minor_start), type);
                  return absl::OkStatus();
                });
          }));
      if (tile_buffer_.transposed != nullptr) EmitTileTranspose(elemental_.StorageType(type));
      tile_buffer_.a_start = a_start;
      tile_buffer_.minor_start = minor_start;
      return elemental_.EmitForLoop(a_start, a_end, "tile_a", [&](llvm::Value* i) {
        index[a] = i;
        return elemental_.EmitForLoop(
            minor_start, minor_end, "tile_minor", [&](llvm::Value* j) -> absl::Status {
              index[minor] = j;
              llvm::Value* linear = elemental_.Linearize(index, dims);
              for (size_t o = 0; o < outputs.size(); ++o) {
                AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
                elemental_.StoreElement(value, buffers[num_parameters + o], linear,
                                        outputs[o]->shape().element_type());
              }
              return absl::OkStatus();
            });
      });
    };
    // Tiles of dimension d: [low, high) in steps of a tile.
    auto emit_tiles = [&](size_t d, const std::function<absl::Status(llvm::Value*)>& tile_body) {
      llvm::Value* low = low_of(d);
      llvm::Value* count = b_.CreateUDiv(
          b_.CreateAdd(b_.CreateSub(high_of(d), low), b_.getInt64(kTransposeTile - 1)), tile);
      return elemental_.EmitForLoop(
          b_.getInt64(0), count, absl::StrCat("tiles", d),
          [&](llvm::Value* k) {
            // Whole tiles: the last one starts at most a tile before the end.
            llvm::Value* start = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                          b_.CreateAdd(low, b_.CreateMul(k, tile)),
                                                          b_.CreateSub(high_of(d), tile));
            return tile_body(start);
          },
          ElementalIrEmitter::kVectorizeNever);
    };
    std::function<absl::Status(size_t)> emit_outer = [&](size_t o) -> absl::Status {
      if (o < outer.size()) {
        const size_t d = outer[o];
        return elemental_.EmitForLoop(low_of(d), high_of(d), absl::StrCat("d", d),
                                      [&](llvm::Value* i) {
                                        index[d] = i;
                                        return emit_outer(o + 1);
                                      });
      }
      return emit_tiles(a, [&](llvm::Value* a_start) {
        return emit_tiles(
            minor, [&](llvm::Value* minor_start) { return emit_tile(a_start, minor_start); });
      });
    };
    return emit_outer(0);
  }

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
  llvm::Value* TileReadBuffer() const {
    return tile_buffer_.transposed != nullptr ? tile_buffer_.transposed : tile_buffer_.buffer;
  }
  llvm::Value* TileReadOffset(const IrIndex& index) {
    if (tile_buffer_.transposed == nullptr) {
      return TileOffset(index, tile_buffer_.a_start, tile_buffer_.minor_start);
    }
    return b_.CreateAdd(b_.CreateMul(b_.CreateSub(index[tile_buffer_.a], tile_buffer_.a_start),
                                     b_.getInt64(kTransposeTile)),
                        b_.CreateSub(index[tile_buffer_.minor], tile_buffer_.minor_start));
  }

  // Copies the tile buffer into its transposed copy through registers:
  // 16x16 blocks of 16-lane vectors, each transposed by 64 shuffles.
  void EmitTileTranspose(llvm::Type* element) {
    constexpr int kLanes = 16;
    llvm::Type* vector = llvm::FixedVectorType::get(element, kLanes);
    const llvm::Align align(static_cast<uint64_t>(kLanes) *
                            module_->getDataLayout().getTypeAllocSize(element).getFixedValue());
    // The blocks in a loop (kept rolled: one block's shuffles are a lot of
    // IR for LLVM to optimize).
    llvm::Value* blocks = b_.getInt64(kTransposeTile / kLanes);
    absl::Status status = elemental_.EmitForLoop(
        b_.getInt64(0), b_.CreateMul(blocks, blocks), "tile_blocks",
        [&](llvm::Value* block) -> absl::Status {
          llvm::Value* block_row = b_.CreateMul(b_.CreateUDiv(block, blocks), b_.getInt64(kLanes));
          llvm::Value* block_column =
              b_.CreateMul(b_.CreateURem(block, blocks), b_.getInt64(kLanes));
          EmitTileBlockTranspose(element, vector, align, block_row, block_column);
          return absl::OkStatus();
        },
        ElementalIrEmitter::kVectorizeNever);
    (void)status;  // the body cannot fail
  }

  // One 16x16 block of the tile, at (block_row, block_column) of the tile
  // buffer, into the transposed copy at (block_column, block_row).
  void EmitTileBlockTranspose(llvm::Type* element, llvm::Type* vector, llvm::Align align,
                              llvm::Value* block_row, llvm::Value* block_column) {
    constexpr int kLanes = 16;
    llvm::Value* tile = b_.getInt64(kTransposeTile);
    std::vector<llvm::Value*> rows(kLanes);
    for (int r = 0; r < kLanes; ++r) {
      llvm::Value* offset =
          b_.CreateAdd(b_.CreateMul(b_.CreateAdd(block_row, b_.getInt64(r)), tile), block_column);
      llvm::Value* address = b_.CreateInBoundsGEP(element, tile_buffer_.buffer, offset);
      rows[r] = b_.CreateAlignedLoad(vector, address, align);
    }
    // Round `step` swaps the off-diagonal step x step blocks of every
    // 2step x 2step block: after steps 8, 4, 2, 1, row c holds column c.
    for (int step = kLanes / 2; step >= 1; step /= 2) {
      std::vector<int> low_mask(kLanes), high_mask(kLanes);
      for (int e = 0; e < kLanes; ++e) {
        const bool first = (e / step) % 2 == 0;
        low_mask[e] = first ? e : kLanes + e - step;
        high_mask[e] = first ? e + step : kLanes + e;
      }
      for (int i = 0; i < kLanes; ++i) {
        if ((i / step) % 2 != 0) continue;
        llvm::Value* low = b_.CreateShuffleVector(rows[i], rows[i + step], low_mask);
        llvm::Value* high = b_.CreateShuffleVector(rows[i], rows[i + step], high_mask);
        rows[i] = low;
        rows[i + step] = high;
      }
    }
    for (int c = 0; c < kLanes; ++c) {
      llvm::Value* offset =
          b_.CreateAdd(b_.CreateMul(b_.CreateAdd(block_column, b_.getInt64(c)), tile), block_row);
      llvm::Value* address = b_.CreateInBoundsGEP(element, tile_buffer_.transposed, offset);
      b_.CreateAlignedStore(rows[c], address, align);
    }
  }

  llvm::Value* TileOffset(const IrIndex& index, llvm::Value* a_start, llvm::Value* minor_start) {
    return b_.CreateAdd(b_.CreateMul(b_.CreateSub(index[tile_buffer_.minor], minor_start),
                                     b_.getInt64(kTransposeTile)),
                        b_.CreateSub(index[tile_buffer_.a], a_start));
  }

  // A reduce root that keeps its input's minor dimension and reduces others
  // (a column reduction, such as a bias gradient). Folding the reduced
  // dimensions inside each output element would read the input a row apart
  // per step (and 4 KiB strides all land in one L1 set). Instead the output
  // row is the accumulator: it is set to the init value, then every input
  // row is folded into it with the minor dimension innermost (contiguous,
  // vectorized across output elements). Each element still folds its inputs
  // in order, as the interpreter does.
  absl::Status EmitColumnReduction(const HloInstruction& reduce, llvm::Value* output,
                                   llvm::Value* begin, llvm::Value* end) {
    const PrimitiveType type = reduce.shape().element_type();
    const std::vector<int64_t>& out_dims = reduce.shape().dimensions();
    const std::vector<int64_t>& in_dims = reduce.operand(0)->shape().dimensions();
    const int64_t out_rank = static_cast<int64_t>(out_dims.size());
    const int64_t in_rank = static_cast<int64_t>(in_dims.size());
    std::vector<bool> is_reduced(in_rank, false);
    for (int64_t d : cast<HloDimensionsInstruction>(&reduce)->dimensions()) is_reduced[d] = true;
    std::vector<int64_t> kept;    // input dimension of each output dimension
    std::vector<int64_t> folded;  // the reduced input dimensions, in order
    for (int64_t d = 0; d < in_rank; ++d) (is_reduced[d] ? folded : kept).push_back(d);
    if (static_cast<int64_t>(kept.size()) != out_rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce ", reduce.name(), ": the result must have the kept dimensions"));
    }
    const ElementGenerator& input = generators_.at(reduce.operand(0));
    AXLE_ASSIGN_OR_RETURN(llvm::Value * init, generators_.at(reduce.operand(1))(IrIndex{}));
    const HloComputation& combiner = *reduce.to_apply();
    IrIndex out_index(out_rank);
    IrIndex in_index(in_rank);
    const int64_t minor = out_rank - 1;
    std::function<absl::Status(size_t)> emit_folded = [&](size_t f) -> absl::Status {
      if (f < folded.size()) {
        const int64_t d = folded[f];
        return elemental_.EmitForLoop(b_.getInt64(0), b_.getInt64(in_dims[d]), absl::StrCat("r", d),
                                      [&](llvm::Value* i) {
                                        in_index[d] = i;
                                        return emit_folded(f + 1);
                                      });
      }
      llvm::Value* low = minor == 0 ? begin : b_.getInt64(0);
      llvm::Value* high = minor == 0 ? end : b_.getInt64(out_dims[minor]);
      return elemental_.EmitForLoop(low, high, "column", [&](llvm::Value* c) -> absl::Status {
        out_index[minor] = c;
        in_index[in_rank - 1] = c;
        llvm::Value* linear = elemental_.Linearize(out_index, out_dims);
        llvm::Value* accumulated = elemental_.LoadElement(output, linear, type);
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, input(in_index));
        AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded_value,
                              elemental_.EmitScalarComputation(combiner, {accumulated, value}));
        if (folded_value.size() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("reduce ", reduce.name(), ": the computation must return one value"));
        }
        elemental_.StoreElement(folded_value[0], output, linear, type);
        return absl::OkStatus();
      });
    };
    std::function<absl::Status(int64_t)> emit_outer = [&](int64_t d) -> absl::Status {
      if (d < minor) {
        return elemental_.EmitForLoop(d == 0 ? begin : b_.getInt64(0),
                                      d == 0 ? end : b_.getInt64(out_dims[d]), absl::StrCat("d", d),
                                      [&](llvm::Value* i) {
                                        out_index[d] = i;
                                        in_index[kept[d]] = i;
                                        return emit_outer(d + 1);
                                      });
      }
      llvm::Value* low = minor == 0 ? begin : b_.getInt64(0);
      llvm::Value* high = minor == 0 ? end : b_.getInt64(out_dims[minor]);
      AXLE_RETURN_IF_ERROR(
          elemental_.EmitForLoop(low, high, "init", [&](llvm::Value* c) -> absl::Status {
            out_index[minor] = c;
            elemental_.StoreElement(init, output, elemental_.Linearize(out_index, out_dims), type);
            return absl::OkStatus();
          }));
      return emit_folded(0);
    };
    return emit_outer(0);
  }

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
                                  PrimitiveType type, IrIndex index, absl::Span<const int64_t> dims,
                                  const std::function<absl::Status(llvm::Value*)>& body) {
    llvm::Type* storage = elemental_.StorageType(type);
    const int64_t size =
        static_cast<int64_t>(module_->getDataLayout().getTypeAllocSize(storage).getFixedValue());
    index[dims.size() - 1] = low;
    llvm::Value* row = b_.CreateInBoundsGEP(storage, out, elemental_.Linearize(index, dims));
    llvm::Value* address = b_.CreatePtrToInt(row, b_.getInt64Ty());
    // Bytes to the next boundary, and a pointer there: 64-byte aligned by
    // construction, so the assumption always holds (also when the main loop
    // is empty).
    llvm::Value* skip = b_.CreateAnd(b_.CreateNeg(address), kNonTemporalAlignment - 1);
    llvm::Value* aligned = b_.CreateGEP(b_.getInt8Ty(), row, skip, "nt.base");
    b_.CreateAlignmentAssumption(module_->getDataLayout(), aligned, kNonTemporalAlignment);
    // The main loop's first index; `high` (no main loop) when the output is
    // not even aligned to its element size.
    llvm::Value* element_aligned = b_.CreateICmpEQ(b_.CreateAnd(address, size - 1), b_.getInt64(0));
    llvm::Value* first = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(low, b_.CreateUDiv(skip, b_.getInt64(size))), high);
    first = b_.CreateSelect(element_aligned, first, high, "nt.first");
    AXLE_RETURN_IF_ERROR(
        elemental_.EmitForLoop(low, first, "nt_head", body, ElementalIrEmitter::kVectorizeNever));
    // The main loop counts from 0 (the offset from `aligned`), so that the
    // stores' addresses are `aligned` plus the induction variable (what
    // AlignmentFromAssumptions can follow, whatever becomes of `first`).
    nontemporal_base_ = aligned;
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    absl::Status status = elemental_.EmitForLoop(b_.getInt64(0), b_.CreateSub(high, first),
                                                 "nt_main", [&](llvm::Value* offset) {
                                                   nontemporal_offset_ = offset;
                                                   return body(b_.CreateAdd(first, offset));
                                                 });
    nontemporal_base_ = nullptr;
    nontemporal_offset_ = nullptr;
    AXLE_RETURN_IF_ERROR(status);
    ElementalIrEmitter::AddLoopProperty(preheader, kNonTemporalStoresLoopProperty);
    return absl::OkStatus();
  }

  // Stores an output element: inside EmitNonTemporalRow's main loop through
  // its aligned base, elsewhere as usual.
  void StoreOutput(llvm::Value* value, llvm::Value* out, llvm::Value* linear, PrimitiveType type) {
    if (nontemporal_base_ == nullptr) {
      elemental_.StoreElement(value, out, linear, type);
      return;
    }
    elemental_.StoreElement(value, nontemporal_base_, nontemporal_offset_, type);
  }

  void BuildGenerators(const std::vector<llvm::Value*>& buffers) {
    for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kTuple) continue;
      if (instruction->opcode() == HloOpcode::kParameter) {
        const int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
        llvm::Value* base = buffers[number];
        generators_[instruction] = [this, instruction,
                                    base](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
          const Shape& shape = instruction->shape();
          llvm::Value* linear =
              index.empty() ? b_.getInt64(0) : elemental_.Linearize(index, shape.dimensions());
          return elemental_.LoadElement(base, linear, shape.element_type());
        };
        continue;
      }
      generators_[instruction] =
          [this, instruction](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        for (const CacheEntry& entry : cache_[instruction]) {
          if (entry.index == index && elemental_.InScope(entry.scope)) return entry.value;
        }
        if (instruction == tile_buffer_.transpose && tile_buffer_.a_start != nullptr) {
          return elemental_.LoadElement(TileReadBuffer(), TileReadOffset(index),
                                        instruction->shape().element_type());
        }
        auto row_buffer = row_buffers_.find(instruction);
        if (row_buffer != row_buffers_.end() && !filling_row_buffers_) {
          return elemental_.LoadElement(RowBufferBase(row_buffer->second),
                                        RowBufferOffset(row_buffer->second, index),
                                        instruction->shape().element_type());
        }
        std::vector<ElementGenerator> operands;
        for (const HloInstruction* operand : instruction->operands()) {
          auto it = generators_.find(operand);
          if (it == generators_.end()) {
            return absl::UnimplementedError(absl::StrCat(
                "CPU codegen: ", HloOpcodeString(operand->opcode()),
                " as an operand inside a loop kernel is not implemented (", operand->name(), ")"));
          }
          operands.push_back(it->second);
        }
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value,
                              elemental_.EmitElement(*instruction, operands, index));
        cache_[instruction].push_back({index, value, elemental_.scope()});
        if (row_buffer != row_buffers_.end()) {
          elemental_.StoreElement(value, RowBufferBase(row_buffer->second),
                                  RowBufferOffset(row_buffer->second, index),
                                  instruction->shape().element_type());
        }
        return value;
      };
    }
  }

  absl::Status EmitSkewedRows(llvm::Function* body, const HloInstruction& output,
                              const HloInstruction& reduce,
                              const std::vector<const HloInstruction*>& values,
                              const std::vector<llvm::Value*>& buffers,
                              const std::vector<int64_t>& dims, llvm::Value* begin,
                              llvm::Value* end) {
    const int64_t columns = dims[1];
    llvm::Type* f32 = b_.getFloatTy();
    llvm::Value* out = buffers[computation_.num_parameters()];
    llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
    for (auto& [instruction, row_buffer] : row_buffers_) {
      if (row_buffer.depth != 1) continue;
      llvm::Type* storage = elemental_.StorageType(instruction->shape().element_type());
      auto* buffer = entry.CreateAlloca(storage, entry.getInt64(2 * row_buffer.elements),
                                        absl::StrCat(instruction->name(), ".rows"));
      buffer->setAlignment(llvm::Align(64));
      row_buffer.double_buffer = buffer;
      // Zeroed: a range's first row computes its nonexistent previous row
      // (into the spare row) from the other half.
      const int64_t bytes =
          2 * row_buffer.elements * primitive_util::ByteWidth(instruction->shape().element_type());
      b_.CreateMemSet(buffer, b_.getInt8(0), bytes, llvm::Align(64));
    }
    // Rows go straight to a 64-byte aligned output (always, from Axle's
    // allocators); to a misaligned one through the spare row and a copy.
    llvm::Value* aligned = b_.CreateICmpEQ(
        b_.CreateAnd(b_.CreatePtrToInt(out, b_.getInt64Ty()), kNonTemporalAlignment - 1),
        b_.getInt64(0));
    auto* spare_row = entry.CreateAlloca(f32, entry.getInt64(columns), "spare_row");
    spare_row->setAlignment(llvm::Align(64));
    std::map<const HloInstruction*, llvm::AllocaInst*> previous;
    for (const HloInstruction* value : values) {
      previous[value] = entry.CreateAlloca(f32, nullptr, absl::StrCat(value->name(), ".previous"));
      b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), previous[value]);
    }
    // The previous row's values, as row values of row `row`.
    auto recall_previous = [&](llvm::Value* row) {
      for (const auto& [value, slot] : previous) {
        cache_[value].push_back({IrIndex{row}, b_.CreateLoad(f32, slot), elemental_.scope()});
      }
    };
    skewing_ = true;
    absl::Status status = elemental_.EmitForLoop(begin, end, "skewed", [&](llvm::Value* row) {
      llvm::Value* previous_row = b_.CreateSub(row, b_.getInt64(1));
      recall_previous(previous_row);
      llvm::Value* has_previous = b_.CreateICmpSGT(row, begin);
      llvm::Value* previous_row_out =
          b_.CreateGEP(f32, out, b_.CreateMul(previous_row, b_.getInt64(columns)));
      llvm::Value* previous_out =
          b_.CreateSelect(b_.CreateAnd(has_previous, aligned), previous_row_out, spare_row);
      b_.CreateAlignmentAssumption(module_->getDataLayout(), previous_out, kNonTemporalAlignment);
      std::map<const HloInstruction*, llvm::Value*> current;
      filling_row_buffers_ = true;
      for (const HloInstruction* value : values) {
        ElementalIrEmitter::RowReductionHook hook;
        if (value == &reduce) {
          hook.columns = columns;
          hook.loop_property = kNonTemporalStoresLoopProperty;
          hook.per_column = [&](llvm::Value* column) -> absl::Status {
            filling_row_buffers_ = false;
            absl::StatusOr<llvm::Value*> element =
                generators_.at(&output)(IrIndex{previous_row, column});
            filling_row_buffers_ = true;
            AXLE_RETURN_IF_ERROR(element.status());
            elemental_.StoreElement(*element, previous_out, column, F32);
            return absl::OkStatus();
          };
          ArmRowReduction(hook, *value, dims, IrIndex{row}, buffers);
        }
        absl::StatusOr<llvm::Value*> computed = generators_.at(value)(IrIndex{row});
        elemental_.ClearRowReductionHook();
        AXLE_RETURN_IF_ERROR(computed.status());
        if (value == &reduce && !hook.taken) {
          return absl::InternalError(
              absl::StrCat("CPU codegen: skewed rows: ", reduce.name(), " did not take the hook"));
        }
        current[value] = *computed;
      }
      filling_row_buffers_ = false;
      for (const auto& [value, slot] : previous) b_.CreateStore(current.at(value), slot);
      // A misaligned output: the previous row went to the spare row; copy.
      llvm::LLVMContext& context = module_->getContext();
      llvm::Function* function = b_.GetInsertBlock()->getParent();
      auto* copy_block = llvm::BasicBlock::Create(context, "skewed.copy", function);
      auto* next_block = llvm::BasicBlock::Create(context, "skewed.next", function);
      b_.CreateCondBr(b_.CreateAnd(has_previous, b_.CreateNot(aligned)), copy_block, next_block);
      b_.SetInsertPoint(copy_block);
      b_.CreateMemCpy(previous_row_out, llvm::MaybeAlign(4), spare_row, llvm::Align(64),
                      columns * 4);
      b_.CreateBr(next_block);
      b_.SetInsertPoint(next_block);
      return absl::OkStatus();
    });
    if (status.ok()) {
      // The last row's output (none when the range is empty).
      llvm::Value* last =
          b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, begin, b_.CreateSub(end, b_.getInt64(1)));
      status = elemental_.EmitForLoop(
          last, end, "skewed_last",
          [&](llvm::Value* row) {
            recall_previous(row);
            IrIndex index = {row, nullptr};
            return EmitNonTemporalRow(
                b_.getInt64(0), b_.getInt64(columns), out, F32, index, dims,
                [&](llvm::Value* column) -> absl::Status {
                  index[1] = column;
                  AXLE_ASSIGN_OR_RETURN(llvm::Value * element, generators_.at(&output)(index));
                  StoreOutput(element, out, elemental_.Linearize(index, dims), F32);
                  return absl::OkStatus();
                });
          },
          ElementalIrEmitter::kVectorizeNever);
    }
    skewing_ = false;
    filling_row_buffers_ = false;
    return status;
  }

  // Hands `hook` to the elemental emitter for `reduce`, the row's last row
  // reduction, with prefetches of a row ahead when its input computes a
  // transcendental (enough work to hide them).
  void ArmRowReduction(ElementalIrEmitter::RowReductionHook& hook, const HloInstruction& reduce,
                       const std::vector<int64_t>& dims, const IrIndex& row_index,
                       const std::vector<llvm::Value*>& buffers) {
    if (ComputesTranscendentals(*reduce.operand(0))) {
      hook.prefetch_streams = NextRowStreams(dims, row_index, buffers);
    }
    elemental_.SetRowReductionHook(&hook);
  }

  // A row ahead (kPrefetchRowsAhead) of every parameter shaped like the
  // output, for the last row reduction to prefetch
  // (ElementalIrEmitter::RowReductionHook): that row's first pass, which
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
                                           const IrIndex& row_index,
                                           const std::vector<llvm::Value*>& buffers) {
    std::vector<llvm::Value*> streams;
    if (dims.size() < 2 || row_index.size() + 1 != dims.size()) return streams;
    for (int64_t p = 0; p < computation_.num_parameters(); ++p) {
      const Shape& shape = computation_.parameter_instruction(p)->shape();
      if (!shape.IsArray() || shape.dimensions() != dims) continue;
      const int64_t row_bytes = dims.back() * primitive_util::ByteWidth(shape.element_type());
      if (row_bytes < kPrefetchMinRowBytes) continue;
      llvm::Value* next_row = b_.CreateAdd(
          elemental_.Linearize(row_index, absl::MakeSpan(dims).subspan(0, dims.size() - 1)),
          b_.getInt64(kPrefetchRowsAhead));
      // No inbounds: past the last row this points past the buffer, which
      // a prefetch may (it never faults).
      streams.push_back(b_.CreateGEP(b_.getInt8Ty(), buffers[p],
                                     b_.CreateMul(next_row, b_.getInt64(row_bytes)), "next_row"));
    }
    return streams;
  }

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

  void PlanRowBuffers(const RowIndexAnalysis& rows, llvm::Function* body) {
    llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
    for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
      if (!rows.IsRowMaterializable(instruction)) continue;
      const PrimitiveType type = instruction->shape().element_type();
      if (primitive_util::IsComplexType(type) || type == PRED) continue;
      // The rank of the reductions that fill it; all must agree.
      int64_t depth = -1;
      bool agree = true;
      for (const HloInstruction* user : instruction->users()) {
        if (user->opcode() != HloOpcode::kReduce || !rows.IsHoistableRowValue(user)) continue;
        if (depth >= 0 && depth != user->shape().rank()) agree = false;
        depth = user->shape().rank();
      }
      if (!agree || depth < 1) continue;
      const std::vector<int64_t>& dims = instruction->shape().dimensions();
      std::vector<int64_t> row_dims(dims.begin() + depth, dims.end());
      int64_t elements = 1;
      for (int64_t d : row_dims) elements *= d;
      const int64_t bytes = elements * primitive_util::ByteWidth(type);
      if (elements < 1 || bytes > kMaxRowBufferBytes) continue;
      llvm::AllocaInst* buffer =
          entry.CreateAlloca(elemental_.StorageType(type), entry.getInt64(elements),
                             absl::StrCat(instruction->name(), ".row"));
      buffer->setAlignment(llvm::Align(64));
      row_buffers_[instruction] = {buffer, nullptr, elements, static_cast<size_t>(depth),
                                   std::move(row_dims)};
    }
  }

  llvm::Value* RowBufferBase(const RowBuffer& row_buffer) const {
    return skewing_ ? row_buffer.double_buffer : row_buffer.buffer;
  }
  llvm::Value* RowBufferOffset(const RowBuffer& row_buffer, const IrIndex& index) {
    IrIndex row_index(index.begin() + static_cast<std::ptrdiff_t>(row_buffer.depth), index.end());
    llvm::Value* offset = elemental_.Linearize(row_index, row_buffer.row_dims);
    if (!skewing_) return offset;
    // Skewed rows (depth 1): row r's copy at parity r & 1.
    llvm::Value* parity = b_.CreateAnd(index[0], b_.getInt64(1));
    return b_.CreateAdd(offset, b_.CreateMul(parity, b_.getInt64(row_buffer.elements)));
  }

  const HloComputation& computation_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  ElementalIrEmitter elemental_;
  std::map<const HloInstruction*, ElementGenerator> generators_;
  // Values emitted for an instruction at an index, in the loop scope that
  // emitted them (reused only while that scope is open).
  struct CacheEntry {
    IrIndex index;
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

}  // namespace

// Whether a kernel stores its outputs with non-temporal stores: one array
// output of at least kNonTemporalMinBytes, in rows of at least
// kNonTemporalMinRowBytes, with a plain scalar element type,
// written once per element (not a reduction: its output is small and its
// loop nest is not the output's rows), for an x86-64 target (the kernel ends
// with an sfence).
bool UseNonTemporalStores(const std::vector<const HloInstruction*>& outputs, const Jit& jit) {
  if (outputs.size() != 1) return false;
  const HloInstruction* output = outputs[0];
  if (output->opcode() == HloOpcode::kReduce || output->shape().rank() == 0) return false;
  // A scan reads back the row it stored last.
  if (ScanOf(*output).has_value()) return false;
  const PrimitiveType type = output->shape().element_type();
  if (!primitive_util::IsFloatingPointType(type) && !primitive_util::IsIntegralType(type)) {
    return false;
  }
  const int64_t bytes = ShapeUtil::ByteSizeOfElements(output->shape());
  if (bytes < kNonTemporalMinBytes) return false;
  const int64_t row_bytes = bytes / ShapeUtil::ElementsIn(output->shape()) *
                            output->shape().dimensions(output->shape().rank() - 1);
  if (row_bytes < kNonTemporalMinRowBytes) return false;
  return absl::StartsWith(jit.target_triple(), "x86_64");
}

// The outputs of a loop fusion: the root, or the elements of a root tuple.
absl::StatusOr<std::vector<const HloInstruction*>> LoopOutputs(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) return absl::InvalidArgumentError("loop kernel: computation has no root");
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  if (outputs.empty()) return absl::InvalidArgumentError("loop kernel: the root tuple is empty");
  for (const HloInstruction* output : outputs) {
    if (!output->shape().IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop kernel: output ", output->name(),
                       " is not an array: ", output->shape().ToString()));
    }
    if (output->shape().dimensions() != outputs[0]->shape().dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop kernel: outputs of a multi-output fusion must have one shape; ",
                       output->name(), " is ", output->shape().ToString(), ", ", outputs[0]->name(),
                       " is ", outputs[0]->shape().ToString()));
    }
    // A bitcast (from layout-normalization) reads its operand linearly, as
    // memory holds it, so it may read or write an array in any layout.
    if (!HasDescendingLayout(output->shape()) && output->opcode() != HloOpcode::kBitcast) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: output ", output->name(), " has a non-default layout"));
    }
  }
  for (const HloInstruction* parameter : computation.parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " is not an array"));
    }
    const bool only_bitcasts = std::all_of(
        parameter->users().begin(), parameter->users().end(),
        [](const HloInstruction* user) { return user->opcode() == HloOpcode::kBitcast; });
    if (!HasDescendingLayout(parameter->shape()) && !only_bitcasts) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " has a non-default layout"));
    }
  }
  return outputs;
}

absl::Status EmitLoopKernel(const HloComputation& computation, absl::string_view kernel_name,
                            const std::vector<const HloInstruction*>& outputs, bool nontemporal,
                            llvm::Module* module) {
  LoopKernelEmitter emitter(computation, module);
  if (nontemporal) emitter.EnableNonTemporalStores();
  return emitter.Emit(kernel_name, outputs);
}

}  // namespace axle::cpu
