//===- column_reduction_emitter.cc - Column reductions in a loop kernel -----===//
//
// A reduce root that keeps its input's minor dimension accumulates into the
// output row, input row by input row (IsColumnReduction). Sibling column
// reductions merged into one kernel (ColumnReductions) accumulate into
// their output rows in the same loops, reading their inputs once. A block
// of columns keeps its accumulators in registers across the input rows
// and stores them once; wide rows stream through the output row. Over
// many input rows, a reduction to one row folds chunks of rows into
// partial rows and combines them (ColumnChunks), so that threads split the
// rows instead of the columns.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Metadata.h"

namespace axle::cpu {

// A reduce root that keeps its input's minor dimension and reduces others
// (a column reduction, such as a bias gradient). Folding the reduced
// dimensions inside each output element would read the input a row apart
// per step (and 4 KiB strides all land in one L1 set). Instead the output
// row is the accumulator: it is set to the init value, then every input
// row is folded into it with the minor dimension innermost (contiguous,
// vectorized across output elements). Each element still folds its inputs
// in order, as the interpreter does. Several reduces of one input shape over
// the same dimensions fold side by side in the same column loop.
//
// Loading and storing every accumulator per input row costs more than the
// fold on short rows (32 columns: 26 GB/s), so the columns go in blocks of
// up to kMaxColumnBlockVectors vectors whose accumulators stay in
// registers while the block folds every row, then are
// stored once: the same folds in the same order.
namespace {

// A column reduction's accumulators held in registers across the input
// rows: blocks of `vectors` (a power of two) 512-bit vectors of `lanes`
// columns each.
struct ColumnBlocking {
  int64_t lanes = 1;
  int64_t vectors = 1;
};

// Registers a block's accumulators may take, all reduces together (of the
// 32 AVX-512 registers; the rest hold the inputs and the values computed
// from them), and vectors per block at most (each shorter block, down to
// one vector, is emitted once more for the columns whole blocks leave).
constexpr int64_t kColumnAccumulatorRegisters = 16;
constexpr int64_t kMaxColumnBlockVectors = 8;

// Lanes: a 512-bit vector of the widest result type. Vectors: as many as
// fit kColumnAccumulatorRegisters, a result narrower than f32 counting as
// f32 (bf16 and f16 compute in f32).
ColumnBlocking BlockColumns(const std::vector<PrimitiveType>& types, PrimitiveType widest) {
  ColumnBlocking blocking;
  blocking.lanes =
      std::max<int64_t>(1, 512 / std::max<int64_t>(8, primitive_util::BitWidth(widest)));
  int64_t registers = 0;
  for (PrimitiveType type : types) {
    int64_t bits = std::max<int64_t>(8, primitive_util::BitWidth(type));
    if (primitive_util::IsFloatingPointType(type)) bits = std::max<int64_t>(32, bits);
    registers += std::max<int64_t>(1, (blocking.lanes * bits + 511) / 512);
  }
  while (blocking.vectors * 2 <= kMaxColumnBlockVectors &&
         blocking.vectors * 2 * registers <= kColumnAccumulatorRegisters) {
    blocking.vectors *= 2;
  }
  return blocking;
}

// Marks the loop entered from `preheader` to vectorize with vectors of
// `lanes` and `interleave` of them per iteration.
void SetColumnLoopVectorization(llvm::BasicBlock* preheader, int64_t lanes, int64_t interleave) {
  llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
  llvm::LLVMContext& context = header->getContext();
  auto property = [&](const char* key, int64_t value) -> llvm::Metadata* {
    llvm::Metadata* entry[] = {llvm::MDString::get(context, key),
                               llvm::ConstantAsMetadata::get(
                                   llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))};
    return llvm::MDNode::get(context, entry);
  };
  for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
    if (latch == preheader) continue;
    std::vector<llvm::Metadata*> properties = {nullptr};
    properties.push_back(llvm::MDNode::get(
        context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(context))}));
    properties.push_back(property("llvm.loop.vectorize.width", lanes));
    properties.push_back(property("llvm.loop.interleave.count", interleave));
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
}

// Emits `then` where `condition` holds, and leaves the builder after it.
absl::Status EmitIf(llvm::IRBuilderBase& b, llvm::Value* condition, const std::string& name,
                    const std::function<absl::Status()>& then) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  auto* then_block = llvm::BasicBlock::Create(b.getContext(), name + ".then", function);
  auto* after = llvm::BasicBlock::Create(b.getContext(), name + ".after", function);
  b.CreateCondBr(condition, then_block, after);
  b.SetInsertPoint(then_block);
  AXLE_RETURN_IF_ERROR(then());
  b.CreateBr(after);
  b.SetInsertPoint(after);
  return absl::OkStatus();
}

}  // namespace

absl::Status LoopKernelEmitter::EmitColumnReduction(
    const std::vector<const HloInstruction*>& reduces, const std::vector<llvm::Value*>& outputs,
    llvm::Value* begin, llvm::Value* end, int64_t chunks, llvm::Value* partials) {
  // ColumnReductions: one input shape, one set of reduced dimensions.
  const HloInstruction& reduce = *reduces[0];
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
  // The vector width of the widest result type (a 512-bit vector of it).
  PrimitiveType widest = reduce.shape().element_type();
  std::vector<PrimitiveType> types;
  std::vector<llvm::Value*> inits;
  for (const HloInstruction* r : reduces) {
    const PrimitiveType type = r->shape().element_type();
    types.push_back(type);
    if (primitive_util::BitWidth(type) > primitive_util::BitWidth(widest)) widest = type;
    AXLE_ASSIGN_OR_RETURN(inits.emplace_back(), generators_.at(r->operand(1))(llvm_ir::IrIndex{}));
  }
  const ColumnBlocking blocking = BlockColumns(types, widest);
  llvm_ir::IrIndex out_index(out_rank);
  llvm_ir::IrIndex in_index(in_rank);
  const int64_t minor = out_rank - 1;
  const std::vector<int64_t> column_splits = InnerLoopSplits(computation_, in_dims);

  // Every reduce's element of the current input row at column `c`, folded
  // into its accumulator at `accumulators[r]`, element `at`: the input is
  // read once for all of them (values they share are emitted once, the
  // generators' cache).
  auto fold = [&](llvm::Value* c, const std::vector<llvm::Value*>& accumulators,
                  llvm::Value* at) -> absl::Status {
    in_index[in_rank - 1] = c;
    for (size_t r = 0; r < reduces.size(); ++r) {
      llvm::Value* accumulated = elemental_.LoadElement(accumulators[r], at, types[r]);
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(reduces[r]->operand(0))(in_index));
      AXLE_ASSIGN_OR_RETURN(
          std::vector<llvm::Value*> folded_value,
          elemental_.EmitScalarComputation(*reduces[r]->to_apply(), {accumulated, value}));
      if (folded_value.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("reduce ", reduces[r]->name(), ": the computation must return one value"));
      }
      elemental_.StoreElement(folded_value[0], accumulators[r], at, types[r]);
    }
    return absl::OkStatus();
  };
  // The linear index of output column `c` (the outer dimensions in out_index).
  auto output_at = [&](llvm::Value* c) {
    out_index[minor] = c;
    return elemental_.Linearize(out_index, out_dims);
  };
  // The loops over the reduced dimensions, in order, around `row`.
  // The input rows of a chunk (ColumnChunks: every dimension but the minor
  // one folded, flattened), [row_first, row_last); null: every row.
  llvm::Value* row_first = nullptr;
  llvm::Value* row_last = nullptr;
  // Input row `r` of the flattened folded dimensions set in in_index.
  auto set_row = [&](llvm::Value* r) {
    for (size_t f = folded.size(); f-- > 0;) {
      const int64_t d = folded[f];
      in_index[d] = f == 0 ? r : b_.CreateURem(r, b_.getInt64(in_dims[d]));
      if (f > 0) r = b_.CreateUDiv(r, b_.getInt64(in_dims[d]));
    }
  };
  std::function<absl::Status(size_t, const std::function<absl::Status()>&)> emit_rows =
      [&](size_t f, const std::function<absl::Status()>& row) -> absl::Status {
    if (row_first != nullptr) {
      return elemental_.EmitForLoop(
          row_first, row_last, "chunk.row",
          [&](llvm::Value* r) {
            set_row(r);
            return row();
          },
          llvm_ir::ElementalIrEmitter::kVectorizeNever);
    }
    if (f == folded.size()) return row();
    const int64_t d = folded[f];
    return elemental_.EmitForLoop(b_.getInt64(0), b_.getInt64(in_dims[d]), absl::StrCat("r", d),
                                  [&](llvm::Value* i) {
                                    in_index[d] = i;
                                    return emit_rows(f + 1, row);
                                  });
  };
  // A loop over `length` (a constant) columns from `first`, vectorized
  // one 512-bit vector at a time, `length / lanes` vectors per iteration:
  // a single iteration, no remainder.
  auto block_loop = [&](int64_t length, const std::string& name,
                        const std::function<absl::Status(llvm::Value*)>& body) -> absl::Status {
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    absl::Cleanup vectors = [&] {
      SetColumnLoopVectorization(preheader, blocking.lanes, length / blocking.lanes);
    };
    return elemental_.EmitForLoop(b_.getInt64(0), b_.getInt64(length), name, body);
  };
  // Columns [first, first + length) (a constant length, whole vectors):
  // their accumulators are copied into arrays of the block's length, every
  // input row is folded into those, and they are copied back. The arrays
  // are only read and written at constant positions once the loops over
  // the block are vectorized, so LLVM keeps them in registers (SROA) across
  // the rows: no load and store of an accumulator per input row.
  std::map<int64_t, std::vector<llvm::Value*>> block_arrays;
  // The rows every fold below accumulates into: the outputs, or a chunk's
  // partial rows.
  std::vector<llvm::Value*> targets = outputs;
  auto emit_block = [&](llvm::Value* first, int64_t length) -> absl::Status {
    std::vector<llvm::Value*>& arrays = block_arrays[length];
    if (arrays.empty()) arrays = EntryArrays(elemental_, b_, types, length);
    AXLE_RETURN_IF_ERROR(block_loop(length, "block.load", [&](llvm::Value* j) {
      llvm::Value* at = output_at(b_.CreateAdd(first, j));
      for (size_t r = 0; r < reduces.size(); ++r) {
        elemental_.StoreElement(elemental_.LoadElement(targets[r], at, types[r]), arrays[r], j,
                                types[r]);
      }
      return absl::OkStatus();
    }));
    AXLE_RETURN_IF_ERROR(emit_rows(0, [&] {
      return block_loop(length, "block.column",
                        [&](llvm::Value* j) { return fold(b_.CreateAdd(first, j), arrays, j); });
    }));
    return block_loop(length, "block.store", [&](llvm::Value* j) {
      llvm::Value* at = output_at(b_.CreateAdd(first, j));
      for (size_t r = 0; r < reduces.size(); ++r) {
        elemental_.StoreElement(elemental_.LoadElement(arrays[r], j, types[r]), targets[r], at,
                                types[r]);
      }
      return absl::OkStatus();
    });
  };
  // Whether the columns stream through the output row (wide rows, below).
  bool streamed = false;
  // Columns [low, high): whole blocks, then blocks of halving lengths down
  // to one vector (one each at most), then the columns left (fewer than a
  // vector) folded into the output row itself, row by row. Streamed: every
  // input row folded into the output row.
  auto emit_columns = [&](llvm::Value* low, llvm::Value* high,
                          const std::string& name) -> absl::Status {
    if (streamed) {
      // Every input row folded into the output row: one vector wide, not
      // interleaved (LLVM's choice, 4 vectors of 16 f32, leaves a range
      // of fewer than 64 columns to the scalar remainder loop).
      return emit_rows(0, [&] {
        llvm::BasicBlock* preheader = b_.GetInsertBlock();
        absl::Cleanup one_vector = [&] {
          SetColumnLoopVectorization(preheader, blocking.lanes, 1);
        };
        return elemental_.EmitForLoop(low, high, name, [&](llvm::Value* column) {
          return fold(column, targets, output_at(column));
        });
      });
    }
    // Lengths longer than the minor dimension never fit: not emitted.
    const int64_t block = blocking.lanes * blocking.vectors;
    llvm::Value* blocks = b_.getInt64(0);
    if (block <= out_dims[minor]) {
      blocks = b_.CreateUDiv(b_.CreateSub(high, low), b_.getInt64(block));
      AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(
          b_.getInt64(0), blocks, name + ".blocks",
          [&](llvm::Value* i) {
            return emit_block(b_.CreateAdd(low, b_.CreateMul(i, b_.getInt64(block))), block);
          },
          llvm_ir::ElementalIrEmitter::kVectorizeNever));
    }
    llvm::Value* c = b_.CreateAdd(low, b_.CreateMul(blocks, b_.getInt64(block)));
    for (int64_t vectors = blocking.vectors / 2; vectors >= 1; vectors /= 2) {
      const int64_t length = vectors * blocking.lanes;
      if (length > out_dims[minor]) continue;
      llvm::Value* fits = b_.CreateICmpSGE(b_.CreateSub(high, c), b_.getInt64(length));
      AXLE_RETURN_IF_ERROR(EmitIf(b_, fits, absl::StrCat(name, ".block", length),
                                  [&] { return emit_block(c, length); }));
      c = b_.CreateAdd(c, b_.CreateSelect(fits, b_.getInt64(length), b_.getInt64(0)));
    }
    llvm::Value* rest = b_.CreateICmpSLT(c, high);
    return EmitIf(b_, rest, name + ".rest", [&] {
      return emit_rows(0, [&] {
        return elemental_.EmitForLoop(
            c, high, name + ".rest.column",
            [&](llvm::Value* column) { return fold(column, targets, output_at(column)); },
            llvm_ir::ElementalIrEmitter::kVectorizeNever);
      });
    });
  };
  // Every input row (or a chunk's) folded into `targets` at columns
  // [low, high) of the current output row, which hold their first values.
  auto emit_folds = [&](llvm::Value* low, llvm::Value* high) -> absl::Status {
    auto emit_parts = [&]() -> absl::Status {
      if (minor == 0 || column_splits.empty()) return emit_columns(low, high, "column");
      // The columns in parts at a minor concatenate's (or edge pad's)
      // operand boundaries (InnerLoopSplits: GoogLeNet's global average
      // pool of its last inception module's concatenation), each part
      // reading one operand with vector loads instead of gathers and
      // selects.
      int64_t part_begin = 0;
      for (size_t part = 0; part <= column_splits.size(); ++part) {
        const int64_t part_end =
            part < column_splits.size() ? column_splits[part] : out_dims[minor];
        AXLE_RETURN_IF_ERROR(emit_columns(b_.getInt64(part_begin), b_.getInt64(part_end),
                                          absl::StrCat("column.part", part)));
        part_begin = part_end;
      }
      return absl::OkStatus();
    };
    const int64_t block = blocking.lanes * blocking.vectors;
    if (out_dims[minor] <= block) return emit_parts();
    // Rows wider than a block stream through the output row: blocks would
    // each read a slice of every row, and in whole programs (the input
    // just written by the kernel before) that was slower than streaming
    // (transformer_train_step's layer norm gradients, f32[512,256] in two
    // blocks of 128: 0.027 -> 0.075 ms), though not alone. Decided per
    // range of columns: a thread's range may fit a block.
    auto emit_streamed = [&]() -> absl::Status {
      streamed = true;
      absl::Status status = emit_parts();
      streamed = false;
      return status;
    };
    if (minor != 0) return emit_streamed();
    llvm::Value* wide = b_.CreateICmpSGT(b_.CreateSub(high, low), b_.getInt64(block));
    AXLE_RETURN_IF_ERROR(EmitIf(b_, wide, "streamed", emit_streamed));
    return EmitIf(b_, b_.CreateNot(wide), "blocked", emit_parts);
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
          llvm::Value* linear = output_at(c);
          for (size_t r = 0; r < reduces.size(); ++r) {
            elemental_.StoreElement(inits[r], outputs[r], linear, types[r]);
          }
          return absl::OkStatus();
        }));
    return emit_folds(low, high);
  };
  if (chunks == 0) return emit_outer(0);

  // Chunked (loop_kernel_plan.h: ColumnChunks): rows [begin, end) are
  // chunks of input rows, row `chunks` their combine.
  if (out_rank != 1 || partials == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduce ", reduce.name(), ": only a column reduction to one row is cut into chunks"));
  }
  const int64_t columns = out_dims[0];
  const int64_t rows = ShapeUtil::ElementsIn(reduce.operand(0)->shape()) / columns;
  // Reduce r's partial row of chunk c > 0.
  auto partial_row = [&](size_t r, llvm::Value* c) {
    llvm::Value* offset =
        b_.CreateAdd(b_.getInt64(ColumnChunkPartialsOffset(reduces, r, chunks)),
                     b_.CreateMul(b_.CreateSub(c, b_.getInt64(1)),
                                  b_.getInt64(columns * primitive_util::ByteWidth(types[r]))));
    return b_.CreateGEP(b_.getInt8Ty(), partials, offset);
  };
  AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(
      begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, b_.getInt64(chunks)), "chunk",
      [&](llvm::Value* c) -> absl::Status {
        // Chunk c: input rows [c * rows / chunks, (c + 1) * rows / chunks).
        auto first_row_of = [&](llvm::Value* chunk) {
          return b_.CreateUDiv(b_.CreateMul(chunk, b_.getInt64(rows)), b_.getInt64(chunks));
        };
        llvm::Value* first = first_row_of(c);
        llvm::Value* last = first_row_of(b_.CreateAdd(c, b_.getInt64(1)));
        // Chunk 0 folds into the outputs from the init values, chunk c > 0
        // into its partial rows from its first row.
        llvm::Value* is_first = b_.CreateICmpEQ(c, b_.getInt64(0));
        for (size_t r = 0; r < reduces.size(); ++r) {
          targets[r] = b_.CreateSelect(is_first, outputs[r], partial_row(r, c));
        }
        set_row(first);
        AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(
            b_.getInt64(0), b_.getInt64(columns), "chunk.init",
            [&](llvm::Value* column) -> absl::Status {
              in_index[in_rank - 1] = column;
              for (size_t r = 0; r < reduces.size(); ++r) {
                AXLE_ASSIGN_OR_RETURN(llvm::Value * value,
                                      generators_.at(reduces[r]->operand(0))(in_index));
                elemental_.StoreElement(b_.CreateSelect(is_first, inits[r], value), targets[r],
                                        column, types[r]);
              }
              return absl::OkStatus();
            }));
        row_first = b_.CreateSelect(is_first, first, b_.CreateAdd(first, b_.getInt64(1)));
        row_last = last;
        absl::Status status = emit_folds(b_.getInt64(0), b_.getInt64(columns));
        row_first = row_last = nullptr;
        targets = outputs;
        return status;
      },
      llvm_ir::ElementalIrEmitter::kVectorizeNever));
  // The combine: each partial row folded in order into the outputs.
  return elemental_.EmitForLoop(
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, begin, b_.getInt64(chunks)), end, "combine",
      [&](llvm::Value*) {
        return elemental_.EmitForLoop(
            b_.getInt64(1), b_.getInt64(chunks), "combine.chunk",
            [&](llvm::Value* c) {
              return elemental_.EmitForLoop(
                  b_.getInt64(0), b_.getInt64(columns), "combine.column",
                  [&](llvm::Value* column) -> absl::Status {
                    for (size_t r = 0; r < reduces.size(); ++r) {
                      llvm::Value* accumulated =
                          elemental_.LoadElement(outputs[r], column, types[r]);
                      llvm::Value* partial =
                          elemental_.LoadElement(partial_row(r, c), column, types[r]);
                      AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded_value,
                                            elemental_.EmitScalarComputation(
                                                *reduces[r]->to_apply(), {accumulated, partial}));
                      elemental_.StoreElement(folded_value[0], outputs[r], column, types[r]);
                    }
                    return absl::OkStatus();
                  });
            },
            llvm_ir::ElementalIrEmitter::kVectorizeNever);
      },
      llvm_ir::ElementalIrEmitter::kVectorizeNever);
}

}  // namespace axle::cpu
