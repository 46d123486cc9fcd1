//===- loop_kernel_emitter.cc - Compile a loop fusion to a JIT function ----===//
//
// Emits `kernel(buffers, begin, end)` as a thin wrapper that loads the
// buffer pointers and calls an always-inlined body whose pointer arguments
// are noalias (so, once inlined, the vectorizer needs no runtime alias
// checks). The body is a loop nest over the output shape, outermost
// dimension [begin, end); its innermost block computes each output element
// through the elemental emitter, one generator per instruction, with a
// per-index cache so shared subexpressions are emitted once.
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
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_emitter.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/elemental_ir_emitter.h"
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_printer.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

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

  absl::Status Emit(absl::string_view kernel_name,
                    const std::vector<const HloInstruction*>& outputs) {
    llvm::LLVMContext& context = module_->getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    const int64_t num_parameters = computation_.num_parameters();
    const int64_t num_buffers = num_parameters + static_cast<int64_t>(outputs.size());

    // The body: (ptr noalias x num_buffers, i64 begin, i64 end).
    std::vector<llvm::Type*> body_params(num_buffers, ptr);
    body_params.push_back(i64);
    body_params.push_back(i64);
    auto* body = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), body_params, false),
        llvm::GlobalValue::InternalLinkage,
        absl::StrCat(std::string(kernel_name.data(), kernel_name.size()), ".body"), module_);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    for (int64_t i = 0; i < num_buffers; ++i) {
      body->addParamAttr(i, llvm::Attribute::NoAlias);
      body->addParamAttr(i, llvm::Attribute::NoCapture);
      if (i < num_parameters) body->addParamAttr(i, llvm::Attribute::ReadOnly);
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", body));
    std::vector<llvm::Value*> buffers;
    for (int64_t i = 0; i < num_buffers; ++i) buffers.push_back(body->getArg(i));
    llvm::Value* begin = body->getArg(num_buffers);
    llvm::Value* end = body->getArg(num_buffers + 1);

    BuildGenerators(buffers);
    if (outputs.size() == 1 && IsColumnReduction(*outputs[0])) {
      AXLE_RETURN_IF_ERROR(
          EmitColumnReduction(*outputs[0], buffers[num_parameters], begin, end));
    } else {
      AXLE_RETURN_IF_ERROR(EmitLoopNest(body, outputs, buffers, begin, end));
    }
    b_.CreateRetVoid();

    // The wrapper with the public signature.
    auto* kernel =
        llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false),
                               llvm::GlobalValue::ExternalLinkage,
                               std::string(kernel_name.data(), kernel_name.size()), module_);
    kernel->addFnAttr(llvm::Attribute::NoUnwind);
    b_.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", kernel));
    std::vector<llvm::Value*> args;
    for (int64_t i = 0; i < num_buffers; ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, kernel->getArg(0), i);
      args.push_back(b_.CreateLoad(ptr, slot, absl::StrCat("buffer", i)));
    }
    args.push_back(kernel->getArg(1));
    args.push_back(kernel->getArg(2));
    b_.CreateCall(body, args);
    b_.CreateRetVoid();
    return absl::OkStatus();
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
    std::function<absl::Status(size_t)> emit_dimension = [&](size_t d) -> absl::Status {
      // Computed here, each row value is in the cache for every read below;
      // meanwhile row buffers are filled.
      filling_row_buffers_ = true;
      for (const HloInstruction* value : row_values[d]) {
        IrIndex row_index(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(d));
        AXLE_RETURN_IF_ERROR(generators_.at(value)(row_index).status());
      }
      filling_row_buffers_ = false;
      if (d == dims.size()) {
        llvm::Value* linear = elemental_.Linearize(index, dims);
        for (size_t o = 0; o < outputs.size(); ++o) {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
          elemental_.StoreElement(value, buffers[num_parameters + o], linear,
                                  outputs[o]->shape().element_type());
        }
        return absl::OkStatus();
      }
      llvm::Value* low = d == 0 ? begin : b_.getInt64(0);
      llvm::Value* high = d == 0 ? end : b_.getInt64(dims[d]);
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
    return absl::OkStatus();
  }

  // A reduce root that keeps its input's minor dimension and reduces others
  // (a column reduction, such as a bias gradient). Folding the reduced
  // dimensions inside each output element would read the input a row apart
  // per step (and 4 KiB strides all land in one L1 set). Instead the output
  // row is the accumulator: it is set to the init value, then every input
  // row is folded into it with the minor dimension innermost (contiguous,
  // vectorized across output elements). Each element still folds its inputs
  // in order, as the interpreter does.
  static bool IsColumnReduction(const HloInstruction& root) {
    if (root.opcode() != HloOpcode::kReduce || root.operand_count() != 2 ||
        !root.shape().IsArray() || root.shape().rank() < 1) {
      return false;
    }
    const int64_t rank = root.operand(0)->shape().rank();
    const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(&root)->dimensions();
    if (reduced.empty()) return false;
    return std::find(reduced.begin(), reduced.end(), rank - 1) == reduced.end();
  }

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
        return elemental_.EmitForLoop(b_.getInt64(0), b_.getInt64(in_dims[d]),
                                      absl::StrCat("r", d), [&](llvm::Value* i) {
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
                                      d == 0 ? end : b_.getInt64(out_dims[d]),
                                      absl::StrCat("d", d), [&](llvm::Value* i) {
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
            elemental_.StoreElement(init, output, elemental_.Linearize(out_index, out_dims),
                                    type);
            return absl::OkStatus();
          }));
      return emit_folded(0);
    };
    return emit_outer(0);
  }

 private:
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
        auto row_buffer = row_buffers_.find(instruction);
        if (row_buffer != row_buffers_.end() && !filling_row_buffers_) {
          return elemental_.LoadElement(row_buffer->second.buffer,
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
          elemental_.StoreElement(value, row_buffer->second.buffer,
                                  RowBufferOffset(row_buffer->second, index),
                                  instruction->shape().element_type());
        }
        return value;
      };
    }
  }

  // A row buffer holds one row (the trailing dimensions from `depth` on) of
  // a materializable value (RowIndexAnalysis::IsRowMaterializable): the row
  // reductions that read it store it, the rest of the kernel loads it.
  struct RowBuffer {
    llvm::Value* buffer;
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
      row_buffers_[instruction] = {buffer, static_cast<size_t>(depth), std::move(row_dims)};
    }
  }

  llvm::Value* RowBufferOffset(const RowBuffer& row_buffer, const IrIndex& index) {
    IrIndex row_index(index.begin() + static_cast<std::ptrdiff_t>(row_buffer.depth), index.end());
    return elemental_.Linearize(row_index, row_buffer.row_dims);
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
  // Whether row values are being emitted (row buffers are stored, not read).
  bool filling_row_buffers_ = false;
};

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

// A text equal for two computations exactly when they compute the same
// function of their parameters: each instruction in post order, numbered,
// with its operands by number and its attributes as printed (names left
// out; a called computation by name, which is only ever conservative).
std::string StructuralKey(const HloComputation& computation) {
  HloPrintOptions options = HloPrintOptions::ShortParsable().set_print_operand_names(false);
  std::map<const HloInstruction*, int64_t> numbers;
  std::string key;
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    const int64_t number = static_cast<int64_t>(numbers.size());
    numbers[instruction] = number;
    std::string text = ToString(*instruction, options);
    // Drop "name = ".
    const size_t equals = text.find(" = ");
    if (equals != std::string::npos) text.erase(0, equals + 3);
    absl::StrAppend(&key, number, instruction == computation.root_instruction() ? " root" : "",
                    " = ", text, " <-");
    for (const HloInstruction* operand : instruction->operands()) {
      absl::StrAppend(&key, " ", numbers.at(operand));
    }
    key += "\n";
  }
  return key;
}

// Code for about this many IR instructions (before optimization) goes into
// one module before another module is started: below it, LLVM's fixed cost
// per module outweighs what a second thread saves.
constexpr int64_t kMinInstructionsPerModule = 300;

int64_t InstructionCount(const llvm::Module& module) {
  int64_t count = 0;
  for (const llvm::Function& function : module) count += function.getInstructionCount();
  return count;
}

}  // namespace

CompiledKernel::CompiledKernel(std::shared_ptr<const Jit> jit, Function function,
                               int64_t outer_size, int64_t num_parameters, int64_t num_outputs)
    : jit_(std::move(jit)),
      function_(function),
      outer_size_(outer_size),
      num_parameters_(num_parameters),
      num_outputs_(num_outputs) {}

CompiledKernel::~CompiledKernel() = default;

struct LoopKernelModule::Impl {
  std::string module_name;
  CpuCompileOptions options;
  std::shared_ptr<const Jit> jit;  // precompiled, or set by Compile
  std::unique_ptr<Jit> new_jit;    // made with the first module, until Compile
  // The LLVM modules the kernels are emitted into, each in its own context
  // (so that they compile concurrently), with their instruction counts.
  struct Partition {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    int64_t instructions = 0;
  };
  std::vector<Partition> partitions;
  // The function emitted for each structural key (StructuralKey).
  std::map<std::string, std::string> function_of_key;
  // The kernels and scalar functions waiting for their function, with its
  // name.
  std::vector<std::pair<CompiledKernel*, std::string>> pending;
  std::vector<std::pair<CompiledScalarFunction*, std::string>> pending_scalar;
  int64_t num_kernels = 0;
  int64_t num_scalar_functions = 0;
  int64_t num_functions = 0;
  double emit_ms = 0;
  std::string signature;

  // The partition the next kernel goes to: the smallest one, or a new one
  // while there are fewer than compile threads and all are big enough.
  absl::StatusOr<Partition*> NextPartition() {
    if (new_jit == nullptr) {
      AXLE_ASSIGN_OR_RETURN(new_jit, Jit::Create(options.jit));
    }
    Partition* smallest = nullptr;
    for (Partition& partition : partitions) {
      if (smallest == nullptr || partition.instructions < smallest->instructions) {
        smallest = &partition;
      }
    }
    const int max_partitions = CompileThreads(options.jit);
    if (smallest != nullptr && (static_cast<int>(partitions.size()) >= max_partitions ||
                                smallest->instructions < kMinInstructionsPerModule)) {
      return smallest;
    }
    Partition partition;
    partition.context = std::make_unique<llvm::LLVMContext>();
    const std::string name =
        partitions.empty() ? module_name : absl::StrCat(module_name, ".", partitions.size());
    partition.module = std::make_unique<llvm::Module>(name, *partition.context);
    partition.module->setTargetTriple(new_jit->target_triple());
    partition.module->setDataLayout(new_jit->data_layout());
    partitions.push_back(std::move(partition));
    return &partitions.back();
  }
};

LoopKernelModule::LoopKernelModule(std::string module_name, CpuCompileOptions options,
                                   std::shared_ptr<const Jit> precompiled)
    : impl_(std::make_unique<Impl>()) {
  impl_->module_name = std::move(module_name);
  impl_->options = std::move(options);
  impl_->jit = std::move(precompiled);
}

LoopKernelModule::~LoopKernelModule() = default;

int64_t LoopKernelModule::num_kernels() const { return impl_->num_kernels; }
int64_t LoopKernelModule::num_scalar_functions() const { return impl_->num_scalar_functions; }
int64_t LoopKernelModule::num_functions() const { return impl_->num_functions; }
int64_t LoopKernelModule::num_llvm_modules() const {
  return static_cast<int64_t>(impl_->partitions.size());
}
std::shared_ptr<const Jit> LoopKernelModule::jit() const { return impl_->jit; }
double LoopKernelModule::emit_ms() const { return impl_->emit_ms; }
const std::string& LoopKernelModule::signature() const { return impl_->signature; }

absl::StatusOr<std::unique_ptr<CompiledKernel>> LoopKernelModule::AddKernel(
    const HloComputation& computation, absl::string_view kernel_name) {
  auto start = std::chrono::steady_clock::now();
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopOutputs(computation));
  const std::string key = StructuralKey(computation);
  auto [it, is_new] =
      impl_->function_of_key.emplace(key, std::string(kernel_name.data(), kernel_name.size()));
  const std::string& function_name = it->second;
  if (is_new) {
    ++impl_->num_functions;
    if (impl_->jit == nullptr) {
      AXLE_ASSIGN_OR_RETURN(Impl::Partition * partition, impl_->NextPartition());
      LoopKernelEmitter emitter(computation, partition->module.get());
      const int64_t before = InstructionCount(*partition->module);
      absl::Status emitted = emitter.Emit(kernel_name, outputs);
      if (!emitted.ok()) {
        impl_->function_of_key.erase(key);
        return emitted;
      }
      partition->instructions += InstructionCount(*partition->module) - before;
    }
    absl::StrAppend(&impl_->signature, kernel_name, "\n",
                    computation.ToString(HloPrintOptions::ShortParsable()), "\n");
  } else {
    // The same function as an earlier kernel: no code of its own.
    absl::StrAppend(&impl_->signature, kernel_name, " = ", function_name, "\n");
  }
  const Shape& shape = outputs[0]->shape();
  const int64_t outer_size = shape.rank() == 0 ? 1 : shape.dimensions(0);
  auto kernel =
      std::make_unique<CompiledKernel>(nullptr, nullptr, outer_size, computation.num_parameters(),
                                       static_cast<int64_t>(outputs.size()));
  impl_->pending.emplace_back(kernel.get(), function_name);
  ++impl_->num_kernels;
  impl_->emit_ms +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

absl::StatusOr<std::unique_ptr<CompiledScalarFunction>> LoopKernelModule::AddScalarFunction(
    const HloComputation& computation, absl::string_view name) {
  auto start = std::chrono::steady_clock::now();
  AXLE_RETURN_IF_ERROR(CheckScalarFunction(computation));
  // Another calling convention than a loop kernel's: never the same function.
  const std::string key = absl::StrCat("scalar function\n", StructuralKey(computation));
  auto [it, is_new] = impl_->function_of_key.emplace(key, std::string(name.data(), name.size()));
  const std::string& function_name = it->second;
  if (is_new) {
    ++impl_->num_functions;
    if (impl_->jit == nullptr) {
      AXLE_ASSIGN_OR_RETURN(Impl::Partition * partition, impl_->NextPartition());
      const int64_t before = InstructionCount(*partition->module);
      absl::Status emitted = EmitScalarFunction(computation, name, partition->module.get());
      if (!emitted.ok()) {
        impl_->function_of_key.erase(key);
        --impl_->num_functions;
        return emitted;
      }
      partition->instructions += InstructionCount(*partition->module) - before;
    }
    absl::StrAppend(&impl_->signature, "scalar function ", name, "\n",
                    computation.ToString(HloPrintOptions::ShortParsable()), "\n");
  } else {
    absl::StrAppend(&impl_->signature, "scalar function ", name, " = ", function_name, "\n");
  }
  auto function = std::make_unique<CompiledScalarFunction>(nullptr, nullptr);
  impl_->pending_scalar.emplace_back(function.get(), function_name);
  ++impl_->num_scalar_functions;
  impl_->emit_ms +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return function;
}

absl::Status LoopKernelModule::Compile() {
  if (impl_->jit == nullptr && !impl_->partitions.empty()) {
    std::vector<std::unique_ptr<llvm::Module>> modules;
    std::vector<std::unique_ptr<llvm::LLVMContext>> contexts;
    for (Impl::Partition& partition : impl_->partitions) {
      modules.push_back(std::move(partition.module));
      contexts.push_back(std::move(partition.context));
    }
    AXLE_RETURN_IF_ERROR(impl_->new_jit->AddModules(std::move(modules), std::move(contexts)));
    impl_->jit = std::move(impl_->new_jit);
  }
  for (auto& [kernel, name] : impl_->pending) {
    AXLE_ASSIGN_OR_RETURN(void* address, impl_->jit->Lookup(name));
    kernel->jit_ = impl_->jit;
    kernel->function_ = reinterpret_cast<CompiledKernel::Function>(address);
  }
  impl_->pending.clear();
  for (auto& [function, name] : impl_->pending_scalar) {
    AXLE_ASSIGN_OR_RETURN(void* address, impl_->jit->Lookup(name));
    function->jit_ = impl_->jit;
    function->function_ = reinterpret_cast<CompiledScalarFunction::Function>(address);
  }
  impl_->pending_scalar.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CompiledKernel>> CompileLoopKernel(
    const HloComputation& computation, const CpuCompileOptions& options) {
  LoopKernelModule module(computation.name(), options);
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CompiledKernel> kernel,
                        module.AddKernel(computation, options.kernel_name));
  AXLE_RETURN_IF_ERROR(module.Compile());
  return kernel;
}

}  // namespace axle::cpu
