//===- ptx_kernel_emitter.cc - A loop fusion as an NVPTX kernel function ---===//
#include "axle/gpu/ptx_kernel_emitter.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/nvptx_target_hooks.h"
#include "axle/gpu/ptx_kernel_emitter_internal.h"
#include "axle/gpu/ptx_module.h"
#include "axle/gpu/row_fusion.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/delinearize.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace axle::gpu::ptx_internal {

namespace {

namespace pu = primitive_util;

// What the emitter cannot compute. (8- and 4-bit floats it can: stored as
// their bits, computed in f32 and rounded inline, llvm_ir/narrow_float_ir.h.)
absl::Status CheckShape(const HloInstruction& hlo, const Shape& shape) {
  // Layouts are where parameters are read and outputs written; the ops in
  // between are logical, except bitcast, a reinterpretation of the bytes:
  // the kernel emitter maps its indices through both layouts (Generate)
  // when the element type and count stay.
  const bool layout_bitcast = hlo.opcode() == HloOpcode::kBitcast &&
                              (!ShapeUtil::HasDescendingLayout(shape) ||
                               !ShapeUtil::HasDescendingLayout(hlo.operand(0)->shape()));
  if (layout_bitcast && (shape.element_type() != hlo.operand(0)->shape().element_type() ||
                         shape.num_elements() != hlo.operand(0)->shape().num_elements())) {
    return absl::UnimplementedError(absl::StrCat(
        "CUDA codegen: bitcast ", hlo.name(), " between layouts (", shape.ToString(true), " of ",
        hlo.operand(0)->shape().ToString(true), ") is not supported yet"));
  }
  return absl::OkStatus();
}

absl::Status CheckComputation(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    AXLE_RETURN_IF_ERROR(CheckShape(*instruction, instruction->shape()));
    for (const HloComputation* called : instruction->called_computations()) {
      AXLE_RETURN_IF_ERROR(CheckComputation(*called));
    }
  }
  return absl::OkStatus();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t StorageBytes(PrimitiveType type) { return std::max<int64_t>(1, pu::ByteWidth(type)); }

// Elements a thread loads or stores at once: 16 bytes of the widest
// element, fewer until `divides` is a multiple of it.
int64_t VectorWidthFor(int64_t max_bytes, int64_t divides) {
  int64_t width =
      std::clamp<int64_t>(kMaxVectorBytes / std::max<int64_t>(1, max_bytes), 1, kMaxVector);
  while (width > 1 && divides % width != 0) width /= 2;
  return width;
}

RowSchedule PlanRows(const RowFusionAnalysis& analysis, const HloComputation& fusion,
                     const std::vector<const HloInstruction*>& outputs, int block_size) {
  const RowGeometry& geometry = analysis.geometry;
  int64_t max_bytes = 0;
  for (const HloInstruction* parameter : fusion.parameter_instructions()) {
    if (parameter->shape().dimensions() == geometry.input_dims) {
      max_bytes = std::max(max_bytes, StorageBytes(parameter->shape().element_type()));
    }
  }
  for (const HloInstruction* output : outputs) {
    if (output->shape().dimensions() == geometry.input_dims) {
      max_bytes = std::max(max_bytes, StorageBytes(output->shape().element_type()));
    }
  }
  if (max_bytes == 0) {
    max_bytes = StorageBytes(analysis.reductions[0]->operand(0)->shape().element_type());
  }
  RowSchedule schedule;
  schedule.vector = VectorWidthFor(max_bytes, geometry.columns);
  // Short rows: every lane of the warp gets columns.
  while (schedule.vector > 1 && geometry.columns < kWarpSize * schedule.vector) {
    schedule.vector /= 2;
  }
  const int64_t max_chunks = std::max<int64_t>(1, kMaxElementsPerThread / schedule.vector);
  while (schedule.threads < 1024 &&
         CeilDiv(geometry.columns, schedule.threads * schedule.vector) > max_chunks) {
    schedule.threads *= 2;
  }
  schedule.chunks = CeilDiv(geometry.columns, schedule.threads * schedule.vector);
  if (schedule.chunks > max_chunks) {
    schedule.loop = true;
    schedule.chunks = std::max<int64_t>(1, max_chunks / 2);
  }
  schedule.rows_per_block = std::max<int64_t>(1, block_size / schedule.threads);
  return schedule;
}

// Elements a thread of an elementwise kernel computes (consecutive, loaded
// and stored as vectors): 1 where a fusion folds (reduce, reduce-window,
// ...), an output is not row-major or the last dimension is not a multiple.
int64_t ElementVectorWidth(const HloComputation& fusion,
                           const std::vector<const HloInstruction*>& outputs) {
  const Shape& shape = outputs[0]->shape();
  if (shape.rank() == 0) return 1;
  for (const HloInstruction* instruction : fusion.instructions()) {
    if (!instruction->called_computations().empty()) return 1;
  }
  int64_t max_bytes = 0;
  for (const HloInstruction* output : outputs) {
    if (!ShapeUtil::HasDescendingLayout(output->shape())) return 1;
    max_bytes = std::max(max_bytes, StorageBytes(output->shape().element_type()));
  }
  for (const HloInstruction* parameter : fusion.parameter_instructions()) {
    if (parameter->shape().dimensions() == shape.dimensions()) {
      max_bytes = std::max(max_bytes, StorageBytes(parameter->shape().element_type()));
    }
  }
  return VectorWidthFor(max_bytes, shape.dimensions().back());
}

// Column reductions: blocks of up to 1024 threads.
constexpr int64_t kColumnBlockThreads = 1024;
// Rows each column-reduction thread loads before folding them (in order):
// 32 bytes of its column, at least 4 and at most 16 rows. A block per SM
// of 1024 threads then keeps 32 KiB of loads in flight, which a device
// with HBM needs to near its copy bandwidth (16 KiB, 4 f32 rows, gave 69%
// of it on an H200).
int64_t ColumnUnroll(PrimitiveType type) {
  const int64_t bytes = std::max<int64_t>(1, pu::ByteWidth(type));
  return std::clamp<int64_t>(32 / bytes, 4, 16);
}

// The number of rows of a root that reduces its input's leading dimensions
// (the output is the trailing ones, rows of the input laid out row-major)
// with one input: a column reduction, which gets a block per
// ColumnTileWidth output columns (a 32-byte sector of a row: 8 f32
// columns), so that even 1024 columns make a block per SM. Its threads
// are the tile's columns by kColumnBlockThreads / width rows; each folds
// every such row of its column (ColumnUnroll loads in flight); the warp's
// lanes of a column combine by shuffles, the warps' by shared memory. As
// for rows, the computation must be associative and the init value its
// identity. nullopt for any other root, or too few rows to share.
std::optional<int64_t> ColumnReductionOf(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kReduce || root.operand_count() != 2 || !root.shape().IsArray() ||
      root.shape().rank() < 1 || pu::IsComplexType(root.shape().element_type())) {
    return std::nullopt;
  }
  const Shape& input = root.operand(0)->shape();
  std::vector<int64_t> reduced = cast<HloDimensionsInstruction>(&root)->dimensions();
  std::sort(reduced.begin(), reduced.end());
  int64_t rows = 1;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] != static_cast<int64_t>(i)) return std::nullopt;
    rows *= input.dimensions()[reduced[i]];
  }
  constexpr int64_t kMinRows = 8;
  if (reduced.empty() || rows < kMinRows || root.shape().num_elements() == 0) return std::nullopt;
  return rows;
}

// The columns of a column reduction's tile: a 32-byte sector of its
// elements (at least 4, at most a warp), a power of two dividing kWarpSize.
int64_t ColumnTileWidth(const HloInstruction& root) {
  const int64_t bytes = std::max<int64_t>(1, pu::ByteWidth(root.shape().element_type()));
  return std::clamp<int64_t>(32 / bytes, 4, kWarpSize);
}

}  // namespace

absl::StatusOr<llvm::Value*> KernelEmitter::Generate(const HloInstruction* hlo,
                                                     const llvm_ir::IrIndex& index) {
  if (auto row_value = row_values_.find(hlo); row_value != row_values_.end()) {
    return row_value->second;
  }
  for (const Cached& cached : cache_[hlo]) {
    if (cached.index == index && elemental_.InScope(cached.scope)) return cached.value;
  }
  const int64_t scope = elemental_.scope();
  llvm::Value* value = nullptr;
  if (hlo->opcode() == HloOpcode::kParameter) {
    const int64_t number = cast<HloParameterInstruction>(hlo)->parameter_number();
    value = elemental_.LoadElement(parameters_[number], LinearizeInLayout(index, hlo->shape()),
                                   hlo->shape().element_type());
  } else if (hlo->opcode() == HloOpcode::kBitcast &&
             (!ShapeUtil::HasDescendingLayout(hlo->shape()) ||
              !ShapeUtil::HasDescendingLayout(hlo->operand(0)->shape()))) {
    // The operand's element at the same position in memory.
    const Shape& operand = hlo->operand(0)->shape();
    AXLE_ASSIGN_OR_RETURN(
        value, Generate(hlo->operand(0),
                        DelinearizeInLayout(LinearizeInLayout(index, hlo->shape()), operand)));
  } else {
    std::vector<llvm_ir::ElementGenerator> operands;
    operands.reserve(hlo->operand_count());
    for (const HloInstruction* operand : hlo->operands()) {
      operands.push_back(
          [this, operand](const llvm_ir::IrIndex& at) { return Generate(operand, at); });
    }
    AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitElement(*hlo, operands, index));
  }
  cache_[hlo].push_back(Cached{index, value, scope});
  return value;
}

llvm::Function* KernelEmitter::CreateKernel(absl::string_view name, int block_size,
                                            const std::vector<const HloInstruction*>& outputs) {
  llvm::Module* module = module_;
  llvm::LLVMContext& context = module->getContext();
  const int64_t num_parameters = fusion_.num_parameters();
  const size_t num_buffers = static_cast<size_t>(num_parameters) + outputs.size();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(),
                                       std::vector<llvm::Type*>(num_buffers, b_.getPtrTy()), false);
  llvm::Function* kernel = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                                  llvm::Twine(std::string(name)), module);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  // Buffers: distinct, 16-byte aligned (device buffers are 64), and
  // dereferenceable for their whole size.
  for (size_t i = 0; i < num_buffers; ++i) {
    const Shape& shape = i < static_cast<size_t>(num_parameters)
                             ? fusion_.parameter_instruction(static_cast<int64_t>(i))->shape()
                             : outputs[i - num_parameters]->shape();
    llvm::Argument* argument = kernel->getArg(static_cast<unsigned>(i));
    argument->setName(i < static_cast<size_t>(num_parameters)
                          ? absl::StrCat("p", i)
                          : absl::StrCat("out", i - num_parameters));
    argument->addAttr(llvm::Attribute::NoAlias);
    argument->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(16)));
    const int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
    if (bytes > 0) {
      argument->addAttr(llvm::Attribute::getWithDereferenceableBytes(context, bytes));
    }
    if (i < static_cast<size_t>(num_parameters)) {
      argument->addAttr(llvm::Attribute::ReadOnly);
      parameters_.push_back(argument);
    }
  }
  // Marked as a kernel, with the block size it is launched with.
  MarkKernel(kernel, block_size);
  return kernel;
}

llvm::Value* KernelEmitter::Special(llvm::Intrinsic::ID id, const char* name) {
  return b_.CreateZExt(b_.CreateIntrinsic(b_.getInt32Ty(), id, {}), b_.getInt64Ty(), name);
}

llvm_ir::IrIndex KernelEmitter::Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims) {
  return llvm_ir::Delinearize(b_, linear, dims);  // row-major: the last dimension varies fastest
}

llvm_ir::IrIndex KernelEmitter::DelinearizeInLayout(llvm::Value* linear, const Shape& shape) {
  if (ShapeUtil::HasDescendingLayout(shape)) return Delinearize(linear, shape.dimensions());
  const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major();
  llvm_ir::IrIndex index(shape.rank());
  llvm::Value* rest = linear;
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    const int64_t d = minor_to_major[i];
    if (i + 1 == minor_to_major.size()) {
      index[d] = rest;
    } else {
      index[d] = b_.CreateURem(rest, b_.getInt64(shape.dimensions()[d]));
      rest = b_.CreateUDiv(rest, b_.getInt64(shape.dimensions()[d]));
    }
  }
  return index;
}

llvm::Value* KernelEmitter::LinearizeInLayout(const llvm_ir::IrIndex& index, const Shape& shape) {
  if (ShapeUtil::HasDescendingLayout(shape)) return elemental_.Linearize(index, shape.dimensions());
  const std::vector<int64_t> strides = ShapeUtil::LayoutStrides(shape);
  llvm::Value* linear = b_.getInt64(0);
  for (int64_t d : shape.layout().minor_to_major()) {
    linear = b_.CreateAdd(linear, b_.CreateMul(index[d], b_.getInt64(strides[d])));
  }
  return linear;
}

absl::Status KernelEmitter::EmitElementPerThread(llvm::Function* kernel,
                                                 const std::vector<const HloInstruction*>& outputs,
                                                 int64_t vector) {
  llvm::LLVMContext& context = module_->getContext();
  const int64_t num_parameters = fusion_.num_parameters();
  auto* entry = llvm::BasicBlock::Create(context, "entry", kernel);
  auto* body = llvm::BasicBlock::Create(context, "element", kernel);
  auto* exit = llvm::BasicBlock::Create(context, "exit", kernel);
  b_.SetInsertPoint(entry);
  llvm::Value* thread_linear = b_.CreateAdd(
      b_.CreateMul(Special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "block"),
                   Special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, "block_size"), "", true,
                   true),
      Special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "thread"), "linear", true, true);
  // The thread's first element: with vectors, `vector` consecutive ones of
  // a row-major output whose count and last dimension are multiples.
  llvm::Value* linear = vector == 1
                            ? thread_linear
                            : b_.CreateMul(thread_linear, b_.getInt64(vector), "", true, true);
  const Shape& shape = outputs[0]->shape();
  b_.CreateCondBr(b_.CreateICmpULT(linear, b_.getInt64(shape.num_elements())), body, exit);

  b_.SetInsertPoint(body);
  if (vector > 1) {
    std::vector<llvm_ir::IrIndex> indices(static_cast<size_t>(vector),
                                          Delinearize(linear, shape.dimensions()));
    for (int64_t j = 1; j < vector; ++j) {
      indices[j].back() = b_.CreateAdd(indices[0].back(), b_.getInt64(j), "", true, true);
    }
    PreloadParameters(shape.dimensions(), linear, indices);
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::vector<llvm::Value*> values;
      for (const llvm_ir::IrIndex& index : indices) {
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, Generate(outputs[i], index));
        values.push_back(value);
      }
      StoreElements(*outputs[i], kernel->getArg(static_cast<unsigned>(num_parameters + i)), linear,
                    indices, values);
    }
    b_.CreateBr(exit);
    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }
  // Threads walk the first output in its layout (so its stores are
  // contiguous); outputs in another layout are stored at their own offset.
  const llvm_ir::IrIndex index = DelinearizeInLayout(linear, shape);
  for (size_t i = 0; i < outputs.size(); ++i) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * value, Generate(outputs[i], index));
    const Shape& output = outputs[i]->shape();
    const bool same_layout =
        ShapeUtil::HasDescendingLayout(output) == ShapeUtil::HasDescendingLayout(shape) &&
        (ShapeUtil::HasDescendingLayout(output) ||
         output.layout().minor_to_major() == shape.layout().minor_to_major());
    elemental_.StoreElement(value, kernel->getArg(static_cast<unsigned>(num_parameters + i)),
                            same_layout ? linear : LinearizeInLayout(index, output),
                            output.element_type());
  }
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitColumnReduction(llvm::Function* kernel,
                                                const HloInstruction& reduce, int64_t rows,
                                                int64_t width, int64_t block_rows) {
  llvm::LLVMContext& context = module_->getContext();
  const HloInstruction* input = reduce.operand(0);
  const std::vector<int64_t>& input_dims = input->shape().dimensions();
  const std::vector<int64_t>& column_dims = reduce.shape().dimensions();
  const std::vector<int64_t> row_dims(
      input_dims.begin(), input_dims.end() - static_cast<std::ptrdiff_t>(column_dims.size()));
  const int64_t columns = reduce.shape().num_elements();
  auto* entry = llvm::BasicBlock::Create(context, "entry", kernel);
  auto* unrolled_header = llvm::BasicBlock::Create(context, "rows.header", kernel);
  auto* unrolled_body = llvm::BasicBlock::Create(context, "rows", kernel);
  auto* header = llvm::BasicBlock::Create(context, "tail.header", kernel);
  auto* body = llvm::BasicBlock::Create(context, "tail", kernel);
  auto* folded = llvm::BasicBlock::Create(context, "folded", kernel);
  b_.SetInsertPoint(entry);
  llvm::Value* block = Special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "block");
  llvm::Value* thread = Special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "thread");
  llvm::Value* tile_column = b_.CreateURem(thread, b_.getInt64(width), "tile_column");
  llvm::Value* first_row = b_.CreateUDiv(thread, b_.getInt64(width), "first_row");
  llvm::Value* column =
      b_.CreateAdd(b_.CreateMul(block, b_.getInt64(width)), tile_column, "column", true, true);
  llvm::Value* in_range = b_.CreateICmpULT(column, b_.getInt64(columns), "in_range");
  // In the entry block: the loops read it and the store after them.
  const llvm_ir::IrIndex column_index = Delinearize(column, column_dims);
  AXLE_ASSIGN_OR_RETURN(llvm::Value * init, Generate(reduce.operand(1), {}));
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  b_.CreateBr(unrolled_header);

  // ColumnUnroll rows at a time (their loads independent), while they
  // are all in the input, folded in order.
  const int64_t unroll = ColumnUnroll(input->shape().element_type());
  const int64_t last_of_step = (unroll - 1) * block_rows;
  b_.SetInsertPoint(unrolled_header);
  llvm::PHINode* unrolled_row = b_.CreatePHI(b_.getInt64Ty(), 2, "unrolled_row");
  llvm::PHINode* unrolled_partial = b_.CreatePHI(init->getType(), 2, "unrolled_partial");
  unrolled_row->addIncoming(first_row, preheader);
  unrolled_partial->addIncoming(init, preheader);
  b_.CreateCondBr(
      b_.CreateAnd(in_range, b_.CreateICmpULT(b_.CreateAdd(unrolled_row, b_.getInt64(last_of_step)),
                                              b_.getInt64(rows))),
      unrolled_body, header);
  b_.SetInsertPoint(unrolled_body);
  std::vector<llvm::Value*> elements;
  for (int64_t k = 0; k < unroll; ++k) {
    llvm::Value* row = b_.CreateAdd(unrolled_row, b_.getInt64(k * block_rows));
    llvm_ir::IrIndex index = Delinearize(row, row_dims);
    for (llvm::Value* position : column_index) index.push_back(position);
    AXLE_ASSIGN_OR_RETURN(llvm::Value * element, Generate(input, index));
    elements.push_back(element);
  }
  llvm::Value* unrolled_value = unrolled_partial;
  for (llvm::Value* element : elements) {
    AXLE_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> combined,
        elemental_.EmitScalarComputation(*reduce.to_apply(), {unrolled_value, element}));
    unrolled_value = combined[0];
  }
  unrolled_row->addIncoming(b_.CreateAdd(unrolled_row, b_.getInt64(unroll * block_rows)),
                            b_.GetInsertBlock());
  unrolled_partial->addIncoming(unrolled_value, b_.GetInsertBlock());
  b_.CreateBr(unrolled_header);

  // The remaining rows (fewer than `unroll`) in one step alike: every load
  // in the input (rows past the end read the last row) and independent,
  // the rows past the end folding the init value (the identity).
  b_.SetInsertPoint(header);
  b_.CreateCondBr(b_.CreateAnd(in_range, b_.CreateICmpULT(unrolled_row, b_.getInt64(rows))), body,
                  folded);
  b_.SetInsertPoint(body);
  // Nothing emitted in the unrolled loop's body dominates this one (a
  // column's value cached there would be reused here).
  cache_.clear();
  std::vector<llvm::Value*> tail_elements;
  for (int64_t k = 0; k < unroll; ++k) {
    llvm::Value* row = b_.CreateAdd(unrolled_row, b_.getInt64(k * block_rows));
    llvm::Value* present = b_.CreateICmpULT(row, b_.getInt64(rows));
    llvm_ir::IrIndex index =
        Delinearize(b_.CreateSelect(present, row, b_.getInt64(rows - 1)), row_dims);
    for (llvm::Value* position : column_index) index.push_back(position);
    AXLE_ASSIGN_OR_RETURN(llvm::Value * element, Generate(input, index));
    tail_elements.push_back(b_.CreateSelect(present, element, init));
  }
  llvm::Value* tail_value = unrolled_partial;
  for (llvm::Value* element : tail_elements) {
    AXLE_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> combined,
        elemental_.EmitScalarComputation(*reduce.to_apply(), {tail_value, element}));
    tail_value = combined[0];
  }
  llvm::BasicBlock* tail_end = b_.GetInsertBlock();
  b_.CreateBr(folded);
  cache_.clear();  // nor does this one dominate what follows

  // Every thread takes part (out-of-range columns with the init value):
  // the lanes of a column across each warp, then the warps' results
  // through shared memory, folded by the block's first row of threads.
  b_.SetInsertPoint(folded);
  llvm::PHINode* partial = b_.CreatePHI(init->getType(), 2, "partial");
  partial->addIncoming(unrolled_partial, header);
  partial->addIncoming(tail_value, tail_end);
  AXLE_ASSIGN_OR_RETURN(llvm::Value * warp_value,
                        EmitWarpReduce(reduce, partial, static_cast<int>(width)));
  const int64_t warps = block_rows * width / kWarpSize;
  auto* slots_type = llvm::ArrayType::get(init->getType(), warps * width);
  auto* slots = new llvm::GlobalVariable(
      *module_, slots_type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::PoisonValue::get(slots_type), absl::StrCat(kernel->getName().str(), ".warps"), nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  llvm::Value* lane = b_.CreateAnd(thread, b_.getInt64(kWarpSize - 1), "lane");
  llvm::Value* warp = b_.CreateLShr(thread, b_.getInt64(5), "warp");
  auto* write = llvm::BasicBlock::Create(context, "warp.write", kernel);
  auto* written = llvm::BasicBlock::Create(context, "warp.written", kernel);
  b_.CreateCondBr(b_.CreateICmpULT(lane, b_.getInt64(width)), write, written);
  b_.SetInsertPoint(write);
  b_.CreateStore(warp_value,
                 b_.CreateInBoundsGEP(
                     slots_type, slots,
                     {b_.getInt64(0), b_.CreateAdd(b_.CreateMul(warp, b_.getInt64(width)), lane)}));
  b_.CreateBr(written);
  b_.SetInsertPoint(written);
  b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_barrier0, {});
  auto* gather = llvm::BasicBlock::Create(context, "gather", kernel);
  auto* gather_header = llvm::BasicBlock::Create(context, "gather.header", kernel);
  auto* gather_body = llvm::BasicBlock::Create(context, "gather.warp", kernel);
  auto* store = llvm::BasicBlock::Create(context, "store", kernel);
  auto* exit = llvm::BasicBlock::Create(context, "exit", kernel);
  b_.CreateCondBr(b_.CreateAnd(in_range, b_.CreateICmpULT(thread, b_.getInt64(width))), gather,
                  exit);
  b_.SetInsertPoint(gather);
  llvm::Value* own = b_.CreateLoad(
      init->getType(), b_.CreateInBoundsGEP(slots_type, slots, {b_.getInt64(0), thread}));
  b_.CreateBr(gather_header);
  b_.SetInsertPoint(gather_header);
  llvm::PHINode* slot_warp = b_.CreatePHI(b_.getInt64Ty(), 2, "slot_warp");
  llvm::PHINode* total = b_.CreatePHI(init->getType(), 2, "total");
  slot_warp->addIncoming(b_.getInt64(1), gather);
  total->addIncoming(own, gather);
  b_.CreateCondBr(b_.CreateICmpULT(slot_warp, b_.getInt64(warps)), gather_body, store);
  b_.SetInsertPoint(gather_body);
  llvm::Value* slot = b_.CreateAdd(b_.CreateMul(slot_warp, b_.getInt64(width)), thread);
  llvm::Value* other = b_.CreateLoad(
      init->getType(), b_.CreateInBoundsGEP(slots_type, slots, {b_.getInt64(0), slot}));
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> merged,
                        elemental_.EmitScalarComputation(*reduce.to_apply(), {total, other}));
  slot_warp->addIncoming(b_.CreateAdd(slot_warp, b_.getInt64(1)), b_.GetInsertBlock());
  total->addIncoming(merged[0], b_.GetInsertBlock());
  b_.CreateBr(gather_header);
  b_.SetInsertPoint(store);
  elemental_.StoreElement(total, kernel->getArg(static_cast<unsigned>(fusion_.num_parameters())),
                          LinearizeInLayout(column_index, reduce.shape()),
                          reduce.shape().element_type());
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  return absl::OkStatus();
}

absl::StatusOr<EmittedKernel> KernelEmitter::Emit(
    absl::string_view name, int block_size, const std::vector<const HloInstruction*>& outputs) {
  EmittedKernel emitted;
  const int64_t elements = outputs[0]->shape().num_elements();
  if (std::optional<RowFusionAnalysis> row = AnalyzeRowFusion(fusion_);
      row.has_value() && !row->reductions.empty() && row->outputs_ok) {
    const RowSchedule schedule = PlanRows(*row, fusion_, outputs, block_size);
    emitted.block = static_cast<int>(schedule.rows_per_block * schedule.threads);
    emitted.grid = CeilDiv(row->geometry.rows, schedule.rows_per_block);
    emitted.function = CreateKernel(name, emitted.block, outputs);
    AXLE_RETURN_IF_ERROR(EmitRowFusion(emitted.function, *row, schedule, outputs));
    return emitted;
  }
  if (outputs.size() == 1) {
    if (std::optional<int64_t> rows = ColumnReductionOf(*outputs[0]); rows.has_value()) {
      // A block per tile of `width` columns, with as many rows of threads
      // as fit (fewer for fewer rows, whole warps).
      const int64_t width = ColumnTileWidth(*outputs[0]);
      const int64_t per_warp = kWarpSize / width;
      const int64_t block_rows =
          (std::min(kColumnBlockThreads / width, *rows) + per_warp - 1) / per_warp * per_warp;
      emitted.block = static_cast<int>(block_rows * width);
      emitted.grid = (elements + width - 1) / width;
      emitted.function = CreateKernel(name, emitted.block, outputs);
      AXLE_RETURN_IF_ERROR(
          EmitColumnReduction(emitted.function, *outputs[0], *rows, width, block_rows));
      return emitted;
    }
  }
  const int64_t vector = ElementVectorWidth(fusion_, outputs);
  emitted.block = block_size;
  emitted.grid = CeilDiv(elements / vector, block_size);
  emitted.function = CreateKernel(name, block_size, outputs);
  AXLE_RETURN_IF_ERROR(EmitElementPerThread(emitted.function, outputs, vector));
  return emitted;
}

}  // namespace axle::gpu::ptx_internal

namespace axle::gpu {

absl::StatusOr<std::vector<const HloInstruction*>> LoopFusionOutputs(const HloComputation& fusion) {
  const HloInstruction* root = fusion.root_instruction();
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  if (outputs.empty()) {
    return absl::InvalidArgumentError("loop fusion: the root is an empty tuple");
  }
  // A row fusion's outputs have the rows' or the input's dimensions.
  if (std::optional<RowFusionAnalysis> row = AnalyzeRowFusion(fusion);
      row.has_value() && !row->reductions.empty() && row->outputs_ok) {
    return outputs;
  }
  for (const HloInstruction* output : outputs) {
    if (!output->shape().IsArray() ||
        output->shape().dimensions() != outputs[0]->shape().dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop fusion: output ", output->name(), " of shape ",
                       output->shape().ToString(false), " is not an array of the shape of ",
                       outputs[0]->name(), " (", outputs[0]->shape().ToString(false), ")"));
    }
  }
  return outputs;
}

absl::Status CheckPtxSupported(const HloComputation& fusion) {
  for (const HloInstruction* parameter : fusion.parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::UnimplementedError(
          absl::StrCat("CUDA codegen: parameter ", parameter->name(), " is not an array"));
    }
  }
  return ptx_internal::CheckComputation(fusion);
}

absl::StatusOr<EmittedKernel> EmitLoopFusionKernel(const HloComputation& fusion,
                                                   absl::string_view name, int block_size,
                                                   llvm::Module* module) {
  AXLE_RETURN_IF_ERROR(CheckPtxSupported(fusion));
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopFusionOutputs(fusion));
  ptx_internal::KernelEmitter emitter(fusion, module);
  return emitter.Emit(name, block_size, outputs);
}

}  // namespace axle::gpu
