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

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

// Row-major (or no layout): the elemental emitter's own linearization.
bool HasDescendingLayout(const Shape& shape) {
  return !shape.IsArray() || !shape.has_layout() ||
         shape.layout().minor_to_major() ==
             ShapeUtil::MakeDescendingLayout(shape.rank()).minor_to_major();
}

absl::Status CheckShape(const HloInstruction& hlo, const Shape& shape) {
  absl::Status status;
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
    if (!status.ok() || !subshape.IsArray()) return;
    const PrimitiveType type = subshape.element_type();
    if (pu::IsF8Type(type)) {
      status = absl::UnimplementedError(
          absl::StrCat("CUDA codegen: ", pu::LowercasePrimitiveTypeName(type), " elements (",
                       hlo.name(), ") are not supported yet"));
      return;
    }
  });
  // Layouts are where parameters are read and outputs written; the ops in
  // between are logical, except bitcast, a reinterpretation of the bytes:
  // the kernel emitter maps its indices through both layouts (Generate)
  // when the element type and count stay.
  const bool layout_bitcast =
      hlo.opcode() == HloOpcode::kBitcast &&
      (!HasDescendingLayout(shape) || !HasDescendingLayout(hlo.operand(0)->shape()));
  if (status.ok() && layout_bitcast &&
      (shape.element_type() != hlo.operand(0)->shape().element_type() ||
       shape.num_elements() != hlo.operand(0)->shape().num_elements())) {
    return absl::UnimplementedError(absl::StrCat(
        "CUDA codegen: bitcast ", hlo.name(), " between layouts (", shape.ToString(true), " of ",
        hlo.operand(0)->shape().ToString(true), ") is not supported yet"));
  }
  return status;
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

constexpr int kWarpSize = 32;
constexpr unsigned kSharedAddressSpace = 3;

// Row fusions (row_fusion.h): vector loads and stores of at most 16 bytes,
// at most 32 elements a thread kept in registers (beyond that the row is
// walked in steps, re-read from the caches for each reduction).
constexpr int64_t kMaxVectorBytes = 16;
constexpr int64_t kMaxVector = 8;
constexpr int64_t kMaxElementsPerThread = 32;

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
    if (!HasDescendingLayout(output->shape())) return 1;
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
// Rows each column-reduction thread loads before folding them (in order).
constexpr int64_t kColumnUnroll = 4;

// The number of rows of a root that reduces its input's leading dimensions
// (the output is the trailing ones, rows of the input laid out row-major)
// with one input: a column reduction, which gets a block per
// ColumnTileWidth output columns (a 32-byte sector of a row: 8 f32
// columns), so that even 1024 columns make a block per SM. Its threads
// are the tile's columns by kColumnBlockThreads / width rows; each folds
// every such row of its column (kColumnUnroll loads in flight); the warp's
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
             (!HasDescendingLayout(hlo->shape()) ||
              !HasDescendingLayout(hlo->operand(0)->shape()))) {
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
  if (HasDescendingLayout(shape)) return Delinearize(linear, shape.dimensions());
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
  if (HasDescendingLayout(shape)) return elemental_.Linearize(index, shape.dimensions());
  llvm::Value* linear = b_.getInt64(0);
  int64_t stride = 1;
  for (int64_t d : shape.layout().minor_to_major()) {
    linear = b_.CreateAdd(linear, b_.CreateMul(index[d], b_.getInt64(stride)));
    stride *= shape.dimensions()[d];
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
    const bool same_layout = HasDescendingLayout(output) == HasDescendingLayout(shape) &&
                             (HasDescendingLayout(output) ||
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
        !HasDescendingLayout(shape)) {
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
  if (vector < 2 || !HasDescendingLayout(shape) || !llvm::VectorType::isValidElementType(storage)) {
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
  std::vector<llvm::Value*> partials(static_cast<size_t>(schedule.vector), init);
  if (!schedule.loop) {
    for (const Chunk& chunk : chunks_) AXLE_RETURN_IF_ERROR(fold(chunk, partials));
  } else {
    const int64_t chunk_columns = schedule.threads * schedule.vector;
    AXLE_ASSIGN_OR_RETURN(
        partials,
        EmitColumnLoop(
            kernel, b_.CreateMul(at.thread, b_.getInt64(schedule.vector), "", true, true),
            geometry.columns, chunk_columns * schedule.chunks, partials,
            [&](llvm::Value* column, const std::vector<llvm::Value*>& carried)
                -> absl::StatusOr<std::vector<llvm::Value*>> {
              std::vector<llvm::Value*> step = carried;
              for (int64_t k = 0; k < schedule.chunks; ++k) {
                // The first chunk is in the row (the loop's condition).
                Chunk chunk = MakeChunk(
                    geometry, at, schedule.vector,
                    k == 0 ? column
                           : b_.CreateAdd(column, b_.getInt64(k * chunk_columns), "", true, true),
                    k == 0);
                PreloadChunk(geometry, at, chunk);
                AXLE_RETURN_IF_ERROR(fold(chunk, step));
              }
              return step;
            }));
  }
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
  if (!schedule.loop) {
    for (const Chunk& chunk : chunks_) AXLE_RETURN_IF_ERROR(store_chunk(chunk));
    return absl::OkStatus();
  }
  const int64_t chunk_columns = schedule.threads * schedule.vector;
  return EmitColumnLoop(
             kernel, b_.CreateMul(at.thread, b_.getInt64(schedule.vector), "", true, true),
             geometry.columns, chunk_columns * schedule.chunks, {},
             [&](llvm::Value* column,
                 const std::vector<llvm::Value*>&) -> absl::StatusOr<std::vector<llvm::Value*>> {
               for (int64_t k = 0; k < schedule.chunks; ++k) {
                 Chunk chunk = MakeChunk(
                     geometry, at, schedule.vector,
                     k == 0 ? column
                            : b_.CreateAdd(column, b_.getInt64(k * chunk_columns), "", true, true),
                     k == 0);
                 PreloadChunk(geometry, at, chunk);
                 AXLE_RETURN_IF_ERROR(store_chunk(chunk));
               }
               return std::vector<llvm::Value*>();
             })
      .status();
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
  auto* header = llvm::BasicBlock::Create(context, "row.header", kernel);
  auto* body = llvm::BasicBlock::Create(context, "row", kernel);
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

  // kColumnUnroll rows at a time (their loads independent), while they
  // are all in the input, folded in order.
  const int64_t last_of_step = (kColumnUnroll - 1) * block_rows;
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
  for (int64_t k = 0; k < kColumnUnroll; ++k) {
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
  unrolled_row->addIncoming(b_.CreateAdd(unrolled_row, b_.getInt64(kColumnUnroll * block_rows)),
                            b_.GetInsertBlock());
  unrolled_partial->addIncoming(unrolled_value, b_.GetInsertBlock());
  b_.CreateBr(unrolled_header);

  // The remaining rows one at a time.
  b_.SetInsertPoint(header);
  llvm::PHINode* row = b_.CreatePHI(b_.getInt64Ty(), 2, "row");
  llvm::PHINode* partial = b_.CreatePHI(init->getType(), 2, "partial");
  row->addIncoming(unrolled_row, unrolled_header);
  partial->addIncoming(unrolled_partial, unrolled_header);
  b_.CreateCondBr(b_.CreateAnd(in_range, b_.CreateICmpULT(row, b_.getInt64(rows))), body, folded);
  b_.SetInsertPoint(body);
  // Nothing emitted in the unrolled loop's body dominates this one (a
  // column's value cached there would be reused here).
  cache_.clear();
  llvm_ir::IrIndex index = Delinearize(row, row_dims);
  for (llvm::Value* position : column_index) index.push_back(position);
  AXLE_ASSIGN_OR_RETURN(llvm::Value * element, Generate(input, index));
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> combined,
                        elemental_.EmitScalarComputation(*reduce.to_apply(), {partial, element}));
  row->addIncoming(b_.CreateAdd(row, b_.getInt64(block_rows)), b_.GetInsertBlock());
  partial->addIncoming(combined[0], b_.GetInsertBlock());
  b_.CreateBr(header);

  // Every thread takes part (out-of-range columns with the init value):
  // the lanes of a column across each warp, then the warps' results
  // through shared memory, folded by the block's first row of threads.
  b_.SetInsertPoint(folded);
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

}  // namespace

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
  return CheckComputation(fusion);
}

absl::StatusOr<EmittedKernel> EmitLoopFusionKernel(const HloComputation& fusion,
                                                   absl::string_view name, int block_size,
                                                   llvm::Module* module) {
  AXLE_RETURN_IF_ERROR(CheckPtxSupported(fusion));
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopFusionOutputs(fusion));
  KernelEmitter emitter(fusion, module);
  return emitter.Emit(name, block_size, outputs);
}

}  // namespace axle::gpu
