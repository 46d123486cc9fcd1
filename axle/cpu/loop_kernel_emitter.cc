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
// A kernel whose one output is large (kNonTemporalMinBytes) stores it with
// non-temporal stores, on x86-64 targets that allow them (EmitNonTemporalRow,
// StoreOutput: a separate part of the emitter, outside the loop nest).
//
// A `reduce` root is a reduction kernel: the loop nest walks the output, and
// the elemental emitter's reduce folds, for each output element, the input's
// elements in a nest over the reduced dimensions. Values emitted inside such
// an inner loop are cached only for as long as the loop's scope is open.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_emitter.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/elemental_ir_emitter.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_printer.h"
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
        for (size_t o = 0; o < outputs.size(); ++o) {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
          StoreOutput(value, buffers[num_parameters + o], linear,
                      outputs[o]->shape().element_type());
        }
        return absl::OkStatus();
      }
      llvm::Value* low = d == 0 ? begin : b_.getInt64(0);
      llvm::Value* high = d == 0 ? end : b_.getInt64(dims[d]);
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
    // Non-temporal stores are weakly ordered: drain them before the caller
    // (another thread, after the thread pool's join) reads the output.
    if (nontemporal_) {
      b_.CreateCall(llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::x86_sse_sfence));
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
    // Tag the loop (its latch: the header's other predecessor).
    llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
    for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
      if (latch == preheader) continue;
      llvm::LLVMContext& context = module_->getContext();
      std::vector<llvm::Metadata*> properties = {nullptr};
      if (llvm::MDNode* old = latch->getTerminator()->getMetadata(llvm::LLVMContext::MD_loop)) {
        for (unsigned i = 1; i < old->getNumOperands(); ++i)
          properties.push_back(old->getOperand(i));
      }
      properties.push_back(llvm::MDNode::get(
          context, {llvm::MDString::get(context, kNonTemporalStoresLoopProperty)}));
      llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
      self->replaceOperandWith(0, self);
      latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
    }
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
        return value;
      };
    }
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
  bool nontemporal_ = false;
  // Inside EmitNonTemporalRow's main loop: its aligned output pointer and
  // the element's offset from it (the loop's induction variable).
  llvm::Value* nontemporal_base_ = nullptr;
  llvm::Value* nontemporal_offset_ = nullptr;
};

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
  // The kernels waiting for their function, with its name.
  std::vector<std::pair<CompiledKernel*, std::string>> pending;
  int64_t num_kernels = 0;
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
      if (UseNonTemporalStores(outputs, *impl_->new_jit)) emitter.EnableNonTemporalStores();
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
