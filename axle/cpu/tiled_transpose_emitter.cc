//===- tiled_transpose_emitter.cc - Tiled transposes in a loop kernel -------===//
//
// A loop kernel that transposes its operand's minor dimension to output
// dimension `a` (loop_kernel_plan.h: TransposedDimension) walks `a` and the
// minor dimension in 32x32 tiles through a stack tile buffer, transposed in
// registers for 2- and 4-byte elements (see cpu/README.md).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace axle::cpu {

// Tiled transposes (loop_kernel_plan.h: TransposedDimension).

// The loop nest with dimensions `a` and the minor one tiled: the other
// dimensions outermost (in order), then the tiles of `a` and of the minor
// dimension, then the elements of a tile. The outermost dimension (tiled
// or not) covers [begin, end). For each tile, the transpose's operand is
// first copied into a tile buffer in its own order (contiguous reads of
// whole lines), and the tile's elements read the transpose from there.
absl::Status LoopKernelEmitter::EmitTiledLoopNest(llvm::Function* body,
                                                  const std::vector<const HloInstruction*>& outputs,
                                                  const std::vector<llvm::Value*>& buffers,
                                                  const std::vector<int64_t>& dims, size_t a,
                                                  const HloInstruction& transpose,
                                                  llvm::Value* begin, llvm::Value* end) {
  const int64_t num_parameters = computation_.num_parameters();
  const size_t minor = dims.size() - 1;
  llvm_ir::IrIndex index(dims.size());
  const PrimitiveType type = transpose.shape().element_type();
  {
    llvm::IRBuilder<> entry(&body->getEntryBlock(), body->getEntryBlock().begin());
    llvm::AllocaInst* buffer =
        entry.CreateAlloca(elemental_.StorageType(type),
                           entry.getInt64(kTransposeTile * kTransposeTile), "transpose.tile");
    buffer->setAlignment(llvm::Align(kBufferAlignment));
    tile_buffer_ = TileBuffer{&transpose, buffer, a, minor, nullptr, nullptr};
    const int width = primitive_util::ByteWidth(type);
    if (type != PRED && (width == 2 || width == 4)) {
      llvm::AllocaInst* transposed =
          entry.CreateAlloca(elemental_.StorageType(type),
                             entry.getInt64(kTransposeTile * kTransposeTile), "transpose.tile_t");
      transposed->setAlignment(llvm::Align(kBufferAlignment));
      tile_buffer_.transposed = transposed;
    }
  }
  const std::vector<int64_t>& permutation =
      cast<HloDimensionsInstruction>(&transpose)->dimensions();
  const llvm_ir::ElementGenerator& operand = generators_.at(transpose.operand(0));
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
                llvm_ir::IrIndex operand_index(index.size());
                for (size_t p = 0; p < index.size(); ++p) operand_index[permutation[p]] = index[p];
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
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
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
      return emit_tiles(minor,
                        [&](llvm::Value* minor_start) { return emit_tile(a_start, minor_start); });
    });
  };
  return emit_outer(0);
}

// Where the tile's elements are read from: the transposed copy, when
// there is one, at (a - a_start) * tile + (minor - minor_start).
llvm::Value* LoopKernelEmitter::TileReadBuffer() const {
  return tile_buffer_.transposed != nullptr ? tile_buffer_.transposed : tile_buffer_.buffer;
}

llvm::Value* LoopKernelEmitter::TileReadOffset(const llvm_ir::IrIndex& index) {
  if (tile_buffer_.transposed == nullptr) {
    return TileOffset(index, tile_buffer_.a_start, tile_buffer_.minor_start);
  }
  return b_.CreateAdd(b_.CreateMul(b_.CreateSub(index[tile_buffer_.a], tile_buffer_.a_start),
                                   b_.getInt64(kTransposeTile)),
                      b_.CreateSub(index[tile_buffer_.minor], tile_buffer_.minor_start));
}

// Copies the tile buffer into its transposed copy through registers:
// 16x16 blocks of 16-lane vectors, each transposed by 64 shuffles.
void LoopKernelEmitter::EmitTileTranspose(llvm::Type* element) {
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
        llvm::Value* block_column = b_.CreateMul(b_.CreateURem(block, blocks), b_.getInt64(kLanes));
        EmitTileBlockTranspose(element, vector, align, block_row, block_column);
        return absl::OkStatus();
      },
      llvm_ir::ElementalIrEmitter::kVectorizeNever);
  (void)status;  // the body cannot fail
}

// One 16x16 block of the tile, at (block_row, block_column) of the tile
// buffer, into the transposed copy at (block_column, block_row).
void LoopKernelEmitter::EmitTileBlockTranspose(llvm::Type* element, llvm::Type* vector,
                                               llvm::Align align, llvm::Value* block_row,
                                               llvm::Value* block_column) {
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

llvm::Value* LoopKernelEmitter::TileOffset(const llvm_ir::IrIndex& index, llvm::Value* a_start,
                                           llvm::Value* minor_start) {
  return b_.CreateAdd(b_.CreateMul(b_.CreateSub(index[tile_buffer_.minor], minor_start),
                                   b_.getInt64(kTransposeTile)),
                      b_.CreateSub(index[tile_buffer_.a], a_start));
}

}  // namespace axle::cpu
