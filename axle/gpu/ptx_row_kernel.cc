//===- ptx_row_kernel.cc - Row fusions as NVPTX kernels --------------------===//
//
// KernelEmitter's row-fusion half (ptx_kernel_emitter_internal.h): a warp
// or block per row, shuffles, vector loads and stores, the column loop.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/ptx_kernel_emitter_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace axle::gpu::ptx_internal {

namespace pu = primitive_util;

llvm::Value* KernelEmitter::Shuffle(llvm::Intrinsic::ID mode, llvm::Value* value, int offset) {
  // Shuffled as 32-bit words: narrower values widened, 64-bit ones in two.
  llvm::Type* type = value->getType();
  const unsigned bits = type->getPrimitiveSizeInBits();
  llvm::Type* word = bits > 32 ? b_.getInt64Ty() : b_.getInt32Ty();
  llvm::Type* as_int = b_.getIntNTy(bits);
  llvm::Value* bits_value = b_.CreateZExt(b_.CreateBitCast(value, as_int), word);
  auto shuffle = [&](llvm::Value* half) {
    return b_.CreateIntrinsic(
        b_.getInt32Ty(), mode,
        {b_.getInt32(-1), half, b_.getInt32(offset), b_.getInt32(kWarpSize - 1)});
  };
  llvm::Value* other = nullptr;
  if (bits > 32) {
    llvm::Value* low = shuffle(b_.CreateTrunc(bits_value, b_.getInt32Ty()));
    llvm::Value* high = shuffle(b_.CreateTrunc(b_.CreateLShr(bits_value, 32), b_.getInt32Ty()));
    other = b_.CreateOr(b_.CreateZExt(low, word), b_.CreateShl(b_.CreateZExt(high, word), 32));
  } else {
    other = shuffle(bits_value);
  }
  return b_.CreateBitCast(b_.CreateTrunc(other, as_int), type);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitWarpReduce(const HloInstruction& reduce,
                                                           llvm::Value* value, int min_offset,
                                                           int max_offset) {
  for (int offset = max_offset; offset >= min_offset; offset /= 2) {
    llvm::Value* other = Shuffle(llvm::Intrinsic::nvvm_shfl_sync_down_i32, value, offset);
    AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> combined,
                          elemental_.EmitScalarComputation(*reduce.to_apply(), {value, other}));
    value = combined[0];
  }
  return value;
}

llvm::Value* KernelEmitter::EntryArray(llvm::Type* element, int64_t count) {
  llvm::BasicBlock& entry = b_.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  return at_entry.CreateAlloca(llvm::ArrayType::get(element, static_cast<uint64_t>(count)));
}

void KernelEmitter::PreloadParameters(absl::Span<const int64_t> dims, llvm::Value* linear,
                                      const std::vector<llvm_ir::IrIndex>& indices) {
  const int64_t vector = static_cast<int64_t>(indices.size());
  if (vector < 2) return;
  const llvm::DataLayout& layout = module_->getDataLayout();
  for (const HloInstruction* parameter : fusion_.parameter_instructions()) {
    const Shape& shape = parameter->shape();
    if (!shape.IsArray() || shape.dimensions() != std::vector<int64_t>(dims.begin(), dims.end()) ||
        !ShapeUtil::HasDescendingLayout(shape)) {
      continue;
    }
    const PrimitiveType type = shape.element_type();
    llvm::Type* storage = elemental_.StorageType(type);
    if (!llvm::VectorType::isValidElementType(storage)) continue;  // complex: scalar loads
    auto* vector_type = llvm::FixedVectorType::get(storage, static_cast<unsigned>(vector));
    const int64_t bytes = static_cast<int64_t>(layout.getTypeAllocSize(storage)) * vector;
    const int64_t number = cast<HloParameterInstruction>(parameter)->parameter_number();
    llvm::Value* address = b_.CreateInBoundsGEP(storage, parameters_[number], linear);
    llvm::Value* loaded = b_.CreateAlignedLoad(
        vector_type, address, llvm::Align(static_cast<uint64_t>(std::min(kMaxVectorBytes, bytes))),
        absl::StrCat(parameter->name(), ".vector"));
    // Elements stored as their value type are the vector's; the others
    // (pred, sub-byte integers, 16-bit floats) convert as LoadElement does,
    // through a private array.
    llvm::Value* array = nullptr;
    if (storage != elemental_.ValueType(type)) {
      array = EntryArray(storage, vector);
      b_.CreateStore(loaded, array);
    }
    for (int64_t j = 0; j < vector; ++j) {
      llvm::Value* value = array == nullptr
                               ? b_.CreateExtractElement(loaded, static_cast<uint64_t>(j))
                               : elemental_.LoadElement(array, b_.getInt64(j), type);
      cache_[parameter].push_back(Cached{indices[j], value, elemental_.scope()});
    }
  }
}

void KernelEmitter::StoreElements(const HloInstruction& output, llvm::Value* buffer,
                                  llvm::Value* linear, const std::vector<llvm_ir::IrIndex>& indices,
                                  const std::vector<llvm::Value*>& values) {
  const Shape& shape = output.shape();
  const PrimitiveType type = shape.element_type();
  const int64_t vector = static_cast<int64_t>(values.size());
  llvm::Type* storage = elemental_.StorageType(type);
  if (vector < 2 || !ShapeUtil::HasDescendingLayout(shape) ||
      !llvm::VectorType::isValidElementType(storage)) {
    for (int64_t j = 0; j < vector; ++j) {
      elemental_.StoreElement(values[j], buffer, LinearizeInLayout(indices[j], shape), type);
    }
    return;
  }
  auto* vector_type = llvm::FixedVectorType::get(storage, static_cast<unsigned>(vector));
  const int64_t bytes =
      static_cast<int64_t>(module_->getDataLayout().getTypeAllocSize(storage)) * vector;
  llvm::Value* stored = nullptr;
  if (storage == elemental_.ValueType(type)) {
    stored = llvm::PoisonValue::get(vector_type);
    for (int64_t j = 0; j < vector; ++j) {
      stored = b_.CreateInsertElement(stored, values[j], static_cast<uint64_t>(j));
    }
  } else {
    llvm::Value* array = EntryArray(storage, vector);
    for (int64_t j = 0; j < vector; ++j) {
      elemental_.StoreElement(values[j], array, b_.getInt64(j), type);
    }
    stored = b_.CreateLoad(vector_type, array);
  }
  b_.CreateAlignedStore(stored, b_.CreateInBoundsGEP(storage, buffer, linear),
                        llvm::Align(static_cast<uint64_t>(std::min(kMaxVectorBytes, bytes))));
}

KernelEmitter::Chunk KernelEmitter::MakeChunk(const RowGeometry& geometry, const RowPosition& at,
                                              int64_t vector, llvm::Value* column,
                                              bool always_in_range) {
  const std::vector<int64_t> column_dims(
      geometry.input_dims.begin() + static_cast<std::ptrdiff_t>(geometry.row_dims.size()),
      geometry.input_dims.end());
  Chunk chunk;
  chunk.start = column;
  if (!always_in_range) {
    // columns is a multiple of vector: a chunk is in the row or past it.
    chunk.in_range = b_.CreateICmpULT(column, b_.getInt64(geometry.columns), "in_row");
    chunk.start =
        b_.CreateSelect(chunk.in_range, column, b_.getInt64(geometry.columns - vector), "start");
  }
  for (int64_t j = 0; j < vector; ++j) {
    llvm::Value* position =
        j == 0 ? chunk.start : b_.CreateAdd(chunk.start, b_.getInt64(j), "", true, true);
    llvm_ir::IrIndex columns = Delinearize(position, column_dims);
    llvm_ir::IrIndex index = at.index;
    for (llvm::Value* value : columns) index.push_back(value);
    chunk.indices.push_back(std::move(index));
    chunk.column_indices.push_back(std::move(columns));
  }
  return chunk;
}

void KernelEmitter::PreloadChunk(const RowGeometry& geometry, const RowPosition& at,
                                 const Chunk& chunk) {
  PreloadParameters(geometry.input_dims, b_.CreateAdd(at.base, chunk.start, "", true, true),
                    chunk.indices);
  const std::vector<int64_t> column_dims(
      geometry.input_dims.begin() + static_cast<std::ptrdiff_t>(geometry.row_dims.size()),
      geometry.input_dims.end());
  if (column_dims != geometry.input_dims) {
    PreloadParameters(column_dims, chunk.start, chunk.column_indices);
  }
}

absl::StatusOr<std::vector<llvm::Value*>> KernelEmitter::EmitColumnLoop(
    llvm::Function* kernel, llvm::Value* first, int64_t columns, int64_t step,
    const std::vector<llvm::Value*>& carried, const StepBody& body) {
  llvm::LLVMContext& context = module_->getContext();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context, "columns.header", kernel);
  auto* loop = llvm::BasicBlock::Create(context, "columns", kernel);
  auto* done = llvm::BasicBlock::Create(context, "columns.done", kernel);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* column = b_.CreatePHI(b_.getInt64Ty(), 2, "column");
  column->addIncoming(first, preheader);
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::Value*> values;
  for (llvm::Value* value : carried) {
    llvm::PHINode* phi = b_.CreatePHI(value->getType(), 2);
    phi->addIncoming(value, preheader);
    phis.push_back(phi);
    values.push_back(phi);
  }
  b_.CreateCondBr(b_.CreateICmpULT(column, b_.getInt64(columns)), loop, done);
  b_.SetInsertPoint(loop);
  // Values cached before the loop stay valid; those of a body never leave it.
  const std::map<const HloInstruction*, std::vector<Cached>> before = cache_;
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> next, body(column, values));
  column->addIncoming(b_.CreateAdd(column, b_.getInt64(step), "", true, true), b_.GetInsertBlock());
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(next[i], b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(done);
  cache_ = before;
  return values;
}

absl::StatusOr<llvm::Value*> KernelEmitter::FoldRow(const HloInstruction& reduce,
                                                    const RowGeometry& geometry,
                                                    const RowPosition& at,
                                                    const RowSchedule& schedule, llvm::Value* init,
                                                    llvm::Function* kernel) {
  const HloInstruction* input = reduce.operand(0);
  // An accumulator per column of a chunk: independent folds, combined last.
  auto fold = [&](const Chunk& chunk, std::vector<llvm::Value*>& partials) -> absl::Status {
    for (size_t j = 0; j < partials.size(); ++j) {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * element, Generate(input, chunk.indices[j]));
      AXLE_ASSIGN_OR_RETURN(
          std::vector<llvm::Value*> combined,
          elemental_.EmitScalarComputation(*reduce.to_apply(), {partials[j], element}));
      partials[j] = chunk.in_range == nullptr
                        ? combined[0]
                        : b_.CreateSelect(chunk.in_range, combined[0], partials[j]);
    }
    return absl::OkStatus();
  };
  AXLE_ASSIGN_OR_RETURN(
      std::vector<llvm::Value*> partials,
      ForEachRowChunk(kernel, geometry, at, schedule,
                      std::vector<llvm::Value*>(static_cast<size_t>(schedule.vector), init), fold));
  llvm::Value* partial = partials[0];
  for (size_t j = 1; j < partials.size(); ++j) {
    AXLE_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> combined,
        elemental_.EmitScalarComputation(*reduce.to_apply(), {partial, partials[j]}));
    partial = combined[0];
  }
  return partial;
}

absl::StatusOr<llvm::Value*> KernelEmitter::CombineRow(const HloInstruction& reduce,
                                                       const RowPosition& at,
                                                       const RowSchedule& schedule,
                                                       llvm::Value* partial,
                                                       llvm::Function* kernel) {
  llvm::LLVMContext& context = module_->getContext();
  AXLE_ASSIGN_OR_RETURN(llvm::Value * total, EmitWarpReduce(reduce, partial));
  const int64_t warps = schedule.threads / kWarpSize;
  if (warps > 1) {
    // Each warp's total through shared memory (a slot per warp of each row
    // of the block; a reduction's own slots), folded by every warp of the
    // row alike.
    llvm::Type* type = partial->getType();
    auto* slots_type =
        llvm::ArrayType::get(type, static_cast<uint64_t>(warps * schedule.rows_per_block));
    auto* slots = new llvm::GlobalVariable(
        *module_, slots_type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::PoisonValue::get(slots_type), absl::StrCat(kernel->getName().str(), ".warps"),
        nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
    llvm::Value* row_slots = b_.CreateMul(at.in_block, b_.getInt64(warps));
    auto* write = llvm::BasicBlock::Create(context, "warp.write", kernel);
    auto* written = llvm::BasicBlock::Create(context, "warp.written", kernel);
    b_.CreateCondBr(b_.CreateICmpEQ(at.lane, b_.getInt64(0)), write, written);
    b_.SetInsertPoint(write);
    b_.CreateStore(total, b_.CreateInBoundsGEP(slots_type, slots,
                                               {b_.getInt64(0), b_.CreateAdd(row_slots, at.warp)}));
    b_.CreateBr(written);
    b_.SetInsertPoint(written);
    b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_barrier0, {});
    llvm::Value* mine = b_.CreateLoad(
        type, b_.CreateInBoundsGEP(
                  slots_type, slots,
                  {b_.getInt64(0),
                   b_.CreateAdd(row_slots, b_.CreateAnd(at.lane, b_.getInt64(warps - 1)))}));
    AXLE_ASSIGN_OR_RETURN(total, EmitWarpReduce(reduce, mine, 1, static_cast<int>(warps / 2)));
  }
  // Lane 0's total to every lane.
  return Shuffle(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, total, 0);
}

absl::Status KernelEmitter::StoreRowOutputs(const std::vector<const HloInstruction*>& outputs,
                                            const RowGeometry& geometry, const RowPosition& at,
                                            const RowSchedule& schedule, llvm::Function* kernel) {
  llvm::LLVMContext& context = module_->getContext();
  const unsigned first_output = static_cast<unsigned>(fusion_.num_parameters());
  auto store_chunk = [&](const Chunk& chunk) -> absl::Status {
    std::vector<std::vector<llvm::Value*>> values(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i]->shape().dimensions() != geometry.input_dims) continue;
      for (const llvm_ir::IrIndex& index : chunk.indices) {
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, Generate(outputs[i], index));
        values[i].push_back(value);
      }
    }
    // Computed before the branch (later chunks may reuse values), stored
    // by the threads of real rows, for columns in the row.
    llvm::Value* store_it =
        chunk.in_range == nullptr ? at.valid : b_.CreateAnd(at.valid, chunk.in_range);
    auto* store = llvm::BasicBlock::Create(context, "store", kernel);
    auto* stored = llvm::BasicBlock::Create(context, "stored", kernel);
    b_.CreateCondBr(store_it, store, stored);
    b_.SetInsertPoint(store);
    llvm::Value* linear = b_.CreateAdd(at.base, chunk.start, "", true, true);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (values[i].empty()) continue;
      StoreElements(*outputs[i], kernel->getArg(first_output + static_cast<unsigned>(i)), linear,
                    chunk.indices, values[i]);
    }
    b_.CreateBr(stored);
    b_.SetInsertPoint(stored);
    return absl::OkStatus();
  };
  return ForEachRowChunk(
             kernel, geometry, at, schedule, {},
             [&](const Chunk& chunk, std::vector<llvm::Value*>&) { return store_chunk(chunk); })
      .status();
}

absl::StatusOr<std::vector<llvm::Value*>> KernelEmitter::ForEachRowChunk(
    llvm::Function* kernel, const RowGeometry& geometry, const RowPosition& at,
    const RowSchedule& schedule, std::vector<llvm::Value*> carried, const ChunkVisit& visit) {
  if (!schedule.loop) {
    for (const Chunk& chunk : chunks_) AXLE_RETURN_IF_ERROR(visit(chunk, carried));
    return carried;
  }
  const int64_t chunk_columns = schedule.threads * schedule.vector;
  return EmitColumnLoop(
      kernel, b_.CreateMul(at.thread, b_.getInt64(schedule.vector), "", true, true),
      geometry.columns, chunk_columns * schedule.chunks, carried,
      [&](llvm::Value* column,
          const std::vector<llvm::Value*>& values) -> absl::StatusOr<std::vector<llvm::Value*>> {
        std::vector<llvm::Value*> step = values;
        for (int64_t k = 0; k < schedule.chunks; ++k) {
          // The first chunk is in the row (the loop's condition).
          llvm::Value* start =
              k == 0 ? column
                     : b_.CreateAdd(column, b_.getInt64(k * chunk_columns), "", true, true);
          Chunk chunk = MakeChunk(geometry, at, schedule.vector, start, k == 0);
          PreloadChunk(geometry, at, chunk);
          AXLE_RETURN_IF_ERROR(visit(chunk, step));
        }
        return step;
      });
}

absl::Status KernelEmitter::EmitRowFusion(llvm::Function* kernel, const RowFusionAnalysis& analysis,
                                          const RowSchedule& schedule,
                                          const std::vector<const HloInstruction*>& outputs) {
  llvm::LLVMContext& context = module_->getContext();
  const RowGeometry& geometry = analysis.geometry;
  b_.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", kernel));
  llvm::Value* thread = Special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "thread");
  llvm::Value* block = Special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "block");
  RowPosition at;
  at.in_block = b_.CreateUDiv(thread, b_.getInt64(schedule.threads), "row_in_block");
  at.thread = b_.CreateURem(thread, b_.getInt64(schedule.threads), "row_thread");
  at.lane = b_.CreateAnd(thread, b_.getInt64(kWarpSize - 1), "lane");
  at.warp = b_.CreateLShr(at.thread, b_.getInt64(5), "row_warp");
  llvm::Value* row = b_.CreateAdd(b_.CreateMul(block, b_.getInt64(schedule.rows_per_block)),
                                  at.in_block, "row", true, true);
  // Every thread takes part in the shuffles and barriers: those of the
  // last block past the last row compute it again and store nothing.
  at.valid = b_.CreateICmpULT(row, b_.getInt64(geometry.rows), "real_row");
  at.row = b_.CreateSelect(at.valid, row, b_.getInt64(geometry.rows - 1), "clamped_row");
  at.base = b_.CreateMul(at.row, b_.getInt64(geometry.columns), "row_base", true, true);
  at.index = Delinearize(at.row, geometry.row_dims);

  // Straight schedules: the chunks (and their parameters' vector loads)
  // once, for every reduction and the epilogue.
  chunks_.clear();
  if (!schedule.loop) {
    const int64_t chunk_columns = schedule.threads * schedule.vector;
    llvm::Value* first = b_.CreateMul(at.thread, b_.getInt64(schedule.vector), "", true, true);
    for (int64_t k = 0; k < schedule.chunks; ++k) {
      Chunk chunk = MakeChunk(
          geometry, at, schedule.vector,
          k == 0 ? first : b_.CreateAdd(first, b_.getInt64(k * chunk_columns), "", true, true),
          (k + 1) * chunk_columns <= geometry.columns);
      PreloadChunk(geometry, at, chunk);
      chunks_.push_back(std::move(chunk));
    }
  }

  // Each reduction in turn, its row total then every thread's value of it.
  for (const HloInstruction* reduce : analysis.reductions) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * init, Generate(reduce->operand(1), {}));
    AXLE_ASSIGN_OR_RETURN(llvm::Value * partial,
                          FoldRow(*reduce, geometry, at, schedule, init, kernel));
    AXLE_ASSIGN_OR_RETURN(llvm::Value * total, CombineRow(*reduce, at, schedule, partial, kernel));
    row_values_[reduce] = total;
  }

  // The epilogue: outputs of the input's dimensions element by element,
  // then those of the rows' by the row's first thread.
  AXLE_RETURN_IF_ERROR(StoreRowOutputs(outputs, geometry, at, schedule, kernel));
  std::vector<llvm::Value*> row_outputs(outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i]->shape().dimensions() == geometry.input_dims) continue;
    AXLE_ASSIGN_OR_RETURN(row_outputs[i], Generate(outputs[i], at.index));
  }
  auto* store = llvm::BasicBlock::Create(context, "store.rows", kernel);
  auto* exit = llvm::BasicBlock::Create(context, "exit", kernel);
  b_.CreateCondBr(b_.CreateAnd(at.valid, b_.CreateICmpEQ(at.thread, b_.getInt64(0))), store, exit);
  b_.SetInsertPoint(store);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (row_outputs[i] == nullptr) continue;
    elemental_.StoreElement(
        row_outputs[i], kernel->getArg(static_cast<unsigned>(fusion_.num_parameters() + i)),
        LinearizeInLayout(at.index, outputs[i]->shape()), outputs[i]->shape().element_type());
  }
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace axle::gpu::ptx_internal
