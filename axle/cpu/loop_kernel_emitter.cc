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
// A `reduce` root (one input, a scalar reduction computation) becomes a
// reduction kernel: the loop nest walks the output, and for each output
// element a nest over the reduced dimensions folds the input's elements.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_emitter.h"

#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/elemental_ir_emitter.h"
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

// Emits `for (i = begin; i < end; ++i) body(i)` at the builder's position and
// leaves the builder after the loop.
absl::Status EmitForLoop(llvm::IRBuilderBase& b, llvm::Value* begin, llvm::Value* end,
                         absl::string_view name,
                         const std::function<absl::Status(llvm::Value*)>& body,
                         bool vectorize = true) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  std::string prefix(name.data(), name.size());
  auto* header = llvm::BasicBlock::Create(context, prefix + ".header", function);
  auto* body_block = llvm::BasicBlock::Create(context, prefix + ".body", function);
  auto* exit = llvm::BasicBlock::Create(context, prefix + ".exit", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, prefix + ".i");
  i->addIncoming(begin, preheader);
  b.CreateCondBr(b.CreateICmpSLT(i, end), body_block, exit);
  b.SetInsertPoint(body_block);
  AXLE_RETURN_IF_ERROR(body(i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), prefix + ".next", /*HasNUW=*/true,
                                  /*HasNSW=*/true);
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateBr(header);
  if (!vectorize) {
    llvm::Metadata* no_vectorize[] = {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                                      llvm::ConstantAsMetadata::get(b.getFalse())};
    llvm::Metadata* no_unroll[] = {llvm::MDString::get(context, "llvm.loop.unroll.disable")};
    llvm::MDNode* self = llvm::MDNode::getDistinct(
        context,
        {nullptr, llvm::MDNode::get(context, no_vectorize), llvm::MDNode::get(context, no_unroll)});
    self->replaceOperandWith(0, self);
    latch->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b.SetInsertPoint(exit);
  return absl::OkStatus();
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
    const Shape& shape = outputs[0]->shape();
    std::vector<int64_t> dims = shape.dimensions();
    IrIndex index(dims.size());
    std::function<absl::Status(size_t)> emit_dimension = [&](size_t d) -> absl::Status {
      if (d == dims.size()) {
        cache_.clear();
        llvm::Value* linear = elemental_.Linearize(index, dims);
        if (outputs[0]->opcode() == HloOpcode::kReduce) {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * value, EmitReduce(*outputs[0], index, body));
          elemental_.StoreElement(value, buffers[num_parameters], linear,
                                  outputs[0]->shape().element_type());
          return absl::OkStatus();
        }
        for (size_t o = 0; o < outputs.size(); ++o) {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
          elemental_.StoreElement(value, buffers[num_parameters + o], linear,
                                  outputs[o]->shape().element_type());
        }
        return absl::OkStatus();
      }
      llvm::Value* low = d == 0 ? begin : b_.getInt64(0);
      llvm::Value* high = d == 0 ? end : b_.getInt64(dims[d]);
      return EmitForLoop(b_, low, high, absl::StrCat("d", d), [&](llvm::Value* i) {
        index[d] = i;
        return emit_dimension(d + 1);
      });
    };
    if (dims.empty()) {
      // A scalar: one element when the range is non-empty.
      AXLE_RETURN_IF_ERROR(EmitForLoop(
          b_, begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, b_.getInt64(1)), "scalar",
          [&](llvm::Value*) { return emit_dimension(0); }));
    } else {
      AXLE_RETURN_IF_ERROR(emit_dimension(0));
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

 private:
  // The reduction of one output element: loops over the reduced dimensions
  // (row-major, as the interpreter folds) around the input's elemental IR.
  absl::StatusOr<llvm::Value*> EmitReduce(const HloInstruction& reduce, const IrIndex& out_index,
                                          llvm::Function* function) {
    if (reduce.operand_count() != 2) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: variadic reduce is not implemented (", reduce.name(), ")"));
    }
    const HloInstruction* input = reduce.operand(0);
    const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(&reduce)->dimensions();
    const PrimitiveType type = reduce.shape().element_type();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    // The accumulator lives in memory in its storage type (promoted to a
    // register by SROA); an i1 accumulator sends LLVM 19's optimizer into a
    // seconds-long compile for pred reductions.
    llvm::AllocaInst* accumulator = entry.CreateAlloca(elemental_.StorageType(type));
    auto load_accumulator = [&] {
      return elemental_.LoadElement(accumulator, b_.getInt64(0), type);
    };
    auto store_accumulator = [&](llvm::Value* value) {
      elemental_.StoreElement(value, accumulator, b_.getInt64(0), type);
    };
    AXLE_ASSIGN_OR_RETURN(llvm::Value * init, generators_.at(reduce.operand(1))(IrIndex{}));
    store_accumulator(init);

    std::vector<bool> is_reduced(input->shape().rank(), false);
    for (int64_t d : reduced) is_reduced[d] = true;
    IrIndex input_index(input->shape().rank());
    for (int64_t d = 0, kept = 0; d < input->shape().rank(); ++d) {
      if (!is_reduced[d]) input_index[d] = out_index[kept++];
    }
    std::vector<int64_t> reduced_in_order;
    for (int64_t d = 0; d < input->shape().rank(); ++d) {
      if (is_reduced[d]) reduced_in_order.push_back(d);
    }
    std::function<absl::Status(size_t)> emit_loop = [&](size_t r) -> absl::Status {
      if (r == reduced_in_order.size()) {
        cache_.clear();
        AXLE_ASSIGN_OR_RETURN(llvm::Value * x, generators_.at(input)(input_index));
        llvm::Value* acc = load_accumulator();
        AXLE_ASSIGN_OR_RETURN(llvm::Value * combined, EmitCombiner(*reduce.to_apply(), acc, x));
        store_accumulator(combined);
        return absl::OkStatus();
      }
      const int64_t d = reduced_in_order[r];
      // Pred reductions stay scalar and rolled: LLVM 19 spends seconds
      // (SLP vectorizer, then instruction selection) on unrolled i1 chains.
      return EmitForLoop(
          b_, b_.getInt64(0), b_.getInt64(input->shape().dimensions(d)), absl::StrCat("r", d),
          [&](llvm::Value* i) {
            input_index[d] = i;
            return emit_loop(r + 1);
          },
          /*vectorize=*/type != PRED);
    };
    AXLE_RETURN_IF_ERROR(emit_loop(0));
    cache_.clear();
    return load_accumulator();
  }

  // The scalar reduction computation applied to (acc, x). Float add and
  // multiply of f32/f64 are marked reassociable, so the vectorizer splits
  // the sum into vector lanes as XLA:CPU does; everything else (integers
  // aside, which reassociate exactly) folds in order.
  absl::StatusOr<llvm::Value*> EmitCombiner(const HloComputation& combiner, llvm::Value* acc,
                                            llvm::Value* x) {
    if (combiner.num_parameters() != 2) {
      return absl::UnimplementedError(absl::StrCat("CPU codegen: reduce computation ",
                                                   combiner.name(), " must take 2 scalars"));
    }
    std::map<const HloInstruction*, llvm::Value*> values;
    values[combiner.parameter_instruction(0)] = acc;
    values[combiner.parameter_instruction(1)] = x;
    for (const HloInstruction* instruction : combiner.MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kParameter) continue;
      if (!instruction->shape().IsArray() || instruction->shape().rank() != 0) {
        return absl::UnimplementedError(absl::StrCat("CPU codegen: reduce computation ",
                                                     combiner.name(), " has a non-scalar ",
                                                     HloOpcodeString(instruction->opcode())));
      }
      std::vector<ElementGenerator> operands;
      for (const HloInstruction* operand : instruction->operands()) {
        llvm::Value* value = values.at(operand);
        operands.push_back(
            [value](const IrIndex&) -> absl::StatusOr<llvm::Value*> { return value; });
      }
      AXLE_ASSIGN_OR_RETURN(values[instruction],
                            elemental_.EmitElement(*instruction, operands, IrIndex{}));
    }
    const HloInstruction* root = combiner.root_instruction();
    llvm::Value* result = values.at(root);
    const PrimitiveType type = root->shape().element_type();
    if ((type == F32 || type == F64) &&
        (root->opcode() == HloOpcode::kAdd || root->opcode() == HloOpcode::kMultiply)) {
      if (auto* instruction = llvm::dyn_cast<llvm::Instruction>(result)) {
        instruction->setHasAllowReassoc(true);
      }
    }
    return result;
  }

  void BuildGenerators(const std::vector<llvm::Value*>& buffers) {
    for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kTuple) continue;
      if (instruction->opcode() == HloOpcode::kReduce && instruction->IsRoot()) continue;
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
        auto& entries = cache_[instruction];
        for (const auto& [cached_index, value] : entries) {
          if (cached_index == index) return value;
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
        cache_[instruction].push_back({index, value});
        return value;
      };
    }
  }

  const HloComputation& computation_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  ElementalIrEmitter elemental_;
  std::map<const HloInstruction*, ElementGenerator> generators_;
  std::map<const HloInstruction*, std::vector<std::pair<IrIndex, llvm::Value*>>> cache_;
};

// The outputs of a loop fusion: the root, or the elements of a root tuple.
absl::StatusOr<std::vector<const HloInstruction*>> LoopOutputs(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) return absl::InvalidArgumentError("loop kernel: computation has no root");
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kReduce && root->operand_count() != 2) {
    return absl::UnimplementedError(
        absl::StrCat("CPU codegen: variadic reduce is not implemented (", root->name(), ")"));
  }
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) {
      if (operand->opcode() == HloOpcode::kReduce) {
        return absl::UnimplementedError(
            absl::StrCat("CPU codegen: reduce in a multi-output loop kernel is not implemented (",
                         operand->name(), ")"));
      }
    }
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
    if (!HasDescendingLayout(output->shape())) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: output ", output->name(), " has a non-default layout"));
    }
  }
  for (const HloInstruction* parameter : computation.parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " is not an array"));
    }
    if (!HasDescendingLayout(parameter->shape())) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " has a non-default layout"));
    }
  }
  return outputs;
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
  std::unique_ptr<Jit> new_jit;    // made with the module, until Compile
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  // The kernels waiting for their function, with its name.
  std::vector<std::pair<CompiledKernel*, std::string>> pending;
  int64_t num_kernels = 0;
  double emit_ms = 0;
  std::string signature;
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
std::shared_ptr<const Jit> LoopKernelModule::jit() const { return impl_->jit; }
double LoopKernelModule::emit_ms() const { return impl_->emit_ms; }
const std::string& LoopKernelModule::signature() const { return impl_->signature; }

absl::StatusOr<std::unique_ptr<CompiledKernel>> LoopKernelModule::AddKernel(
    const HloComputation& computation, absl::string_view kernel_name) {
  auto start = std::chrono::steady_clock::now();
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopOutputs(computation));
  if (impl_->jit == nullptr) {
    if (impl_->module == nullptr) {
      AXLE_ASSIGN_OR_RETURN(impl_->new_jit, Jit::Create(impl_->options.jit));
      impl_->context = std::make_unique<llvm::LLVMContext>();
      impl_->module = std::make_unique<llvm::Module>(impl_->module_name, *impl_->context);
      impl_->module->setTargetTriple(impl_->new_jit->target_triple());
      impl_->module->setDataLayout(impl_->new_jit->data_layout());
    }
    LoopKernelEmitter emitter(computation, impl_->module.get());
    AXLE_RETURN_IF_ERROR(emitter.Emit(kernel_name, outputs));
  }
  const Shape& shape = outputs[0]->shape();
  const int64_t outer_size = shape.rank() == 0 ? 1 : shape.dimensions(0);
  auto kernel =
      std::make_unique<CompiledKernel>(nullptr, nullptr, outer_size, computation.num_parameters(),
                                       static_cast<int64_t>(outputs.size()));
  impl_->pending.emplace_back(kernel.get(), std::string(kernel_name.data(), kernel_name.size()));
  absl::StrAppend(&impl_->signature, kernel_name, "\n",
                  computation.ToString(HloPrintOptions::ShortParsable()), "\n");
  ++impl_->num_kernels;
  impl_->emit_ms +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

absl::Status LoopKernelModule::Compile() {
  if (impl_->jit == nullptr && impl_->module != nullptr) {
    AXLE_RETURN_IF_ERROR(
        impl_->new_jit->AddModule(std::move(impl_->module), std::move(impl_->context)));
    impl_->jit = std::move(impl_->new_jit);
  }
  for (auto& [kernel, name] : impl_->pending) {
    AXLE_ASSIGN_OR_RETURN(void* address, impl_->jit->Lookup(name));
    kernel->jit_ = impl_->jit;
    kernel->function_ = reinterpret_cast<CompiledKernel::Function>(address);
  }
  impl_->pending.clear();
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
