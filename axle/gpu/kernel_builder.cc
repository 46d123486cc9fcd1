//===- kernel_builder.cc - Hand-written NVPTX kernels with IRBuilder -------===//
#include "axle/gpu/kernel_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/nvptx_target_hooks.h"
#include "axle/gpu/ptx_kernel_emitter.h"
#include "axle/gpu/ptx_module.h"
#include "axle/llvm_ir/delinearize.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

constexpr unsigned kSharedAddressSpace = 3;

bool HasNativeIntegerAtomics(PrimitiveType type) {
  return type == S32 || type == U32 || type == S64 || type == U64;
}

// The bytes an element takes in memory (the emitter's storage type).
int64_t StorageBytes(PrimitiveType type) {
  if (type == PRED || pu::IsSubByteType(type)) return 1;
  return pu::ByteWidth(type);
}

}  // namespace

AtomicOp AtomicOpOf(const HloComputation& computation, PrimitiveType type) {
  if (computation.num_parameters() != 2) return AtomicOp::kNone;
  const HloInstruction* root = computation.root_instruction();
  const HloInstruction* current = computation.parameter_instruction(0);
  const HloInstruction* update = computation.parameter_instruction(1);
  if (root == update) return AtomicOp::kAssign;
  if (root->operand_count() != 2) return AtomicOp::kNone;
  const bool on_both = (root->operand(0) == current && root->operand(1) == update) ||
                       (root->operand(0) == update && root->operand(1) == current);
  if (!on_both || root->shape().element_type() != type) return AtomicOp::kNone;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      if (type == F32 || type == F64 || type == C64 || type == C128 ||
          HasNativeIntegerAtomics(type)) {
        return AtomicOp::kAdd;
      }
      return AtomicOp::kNone;
    case HloOpcode::kMaximum:
      return HasNativeIntegerAtomics(type) ? AtomicOp::kMax : AtomicOp::kNone;
    case HloOpcode::kMinimum:
      return HasNativeIntegerAtomics(type) ? AtomicOp::kMin : AtomicOp::kNone;
    case HloOpcode::kAnd:
      return HasNativeIntegerAtomics(type) ? AtomicOp::kAnd : AtomicOp::kNone;
    case HloOpcode::kOr:
      return HasNativeIntegerAtomics(type) ? AtomicOp::kOr : AtomicOp::kNone;
    case HloOpcode::kXor:
      return HasNativeIntegerAtomics(type) ? AtomicOp::kXor : AtomicOp::kNone;
    default:
      return AtomicOp::kNone;
  }
}

int64_t ElementCount(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

absl::Status InvalidKernelOp(const HloInstruction& instruction, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("CUDA: ", HloOpcodeString(instruction.opcode()),
                                                 " ", instruction.name(), ": ", what));
}

absl::Status CheckKernelTypes(const HloInstruction& instruction,
                              absl::Span<const HloComputation* const> computations) {
  std::vector<const Shape*> shapes;
  for (const HloInstruction* operand : instruction.operands()) shapes.push_back(&operand->shape());
  shapes.push_back(&instruction.shape());
  for (const Shape* shape : shapes) {
    absl::Status status;
    ShapeUtil::ForEachSubshape(*shape, [&](const Shape& subshape, const ShapeIndex&) {
      if (!status.ok() || !subshape.IsArray()) return;
      if (pu::IsF8Type(subshape.element_type())) {
        status = absl::UnimplementedError(
            absl::StrCat("CUDA: ", instruction.name(), ": ",
                         pu::LowercasePrimitiveTypeName(subshape.element_type()),
                         " elements are not supported"));
        return;
      }
      if (subshape.has_layout() &&
          subshape.layout().minor_to_major() !=
              ShapeUtil::MakeDescendingLayout(subshape.rank()).minor_to_major()) {
        status = absl::UnimplementedError(
            absl::StrCat("CUDA: ", instruction.name(), ": ", subshape.ToString(true),
                         " is not row-major (only the default layout is supported)"));
      }
    });
    AXLE_RETURN_IF_ERROR(status);
  }
  for (const HloComputation* computation : computations) {
    if (absl::Status status = CheckPtxSupported(*computation); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("CUDA: ", instruction.name(), ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

KernelBuilder::KernelBuilder(llvm::Module* module)
    : module_(module), b_(module->getContext()), elemental_(module, &b_, NvptxTargetHooks()) {}

llvm::Function* KernelBuilder::BeginKernel(absl::string_view name, int num_pointers,
                                           int num_integers, int max_threads) {
  std::vector<llvm::Type*> parameters(num_pointers, b_.getPtrTy());
  parameters.insert(parameters.end(), num_integers, b_.getInt64Ty());
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), parameters, false);
  kernel_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                   llvm::Twine(std::string(name)), module_);
  kernel_->addFnAttr(llvm::Attribute::NoUnwind);
  MarkKernel(kernel_, max_threads);
  pointers_.clear();
  integers_.clear();
  for (int i = 0; i < num_pointers + num_integers; ++i) {
    llvm::Argument* argument = kernel_->getArg(static_cast<unsigned>(i));
    if (i < num_pointers) {
      argument->setName(absl::StrCat("p", i));
      // Device buffers are 64-byte aligned.
      argument->addAttr(llvm::Attribute::getWithAlignment(module_->getContext(), llvm::Align(16)));
      pointers_.push_back(argument);
    } else {
      argument->setName(absl::StrCat("n", i - num_pointers));
      integers_.push_back(argument);
    }
  }
  b_.SetInsertPoint(llvm::BasicBlock::Create(module_->getContext(), "entry", kernel_));
  return kernel_;
}

void KernelBuilder::EndKernel() { b_.CreateRetVoid(); }

llvm::Value* KernelBuilder::ThreadIndex() {
  return b_.CreateZExt(
      b_.CreateIntrinsic(b_.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}),
      b_.getInt64Ty(), "thread");
}

llvm::Value* KernelBuilder::BlockIndex() {
  return b_.CreateZExt(
      b_.CreateIntrinsic(b_.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}),
      b_.getInt64Ty(), "block");
}

llvm::Value* KernelBuilder::BlockSize() {
  return b_.CreateZExt(
      b_.CreateIntrinsic(b_.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {}),
      b_.getInt64Ty(), "threads");
}

llvm::Value* KernelBuilder::GlobalThreadIndex() {
  return b_.CreateAdd(b_.CreateMul(BlockIndex(), BlockSize(), "", true, true), ThreadIndex(),
                      "global_thread", true, true);
}

void KernelBuilder::Barrier() {
  b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_barrier0, {});
}

llvm::GlobalVariable* KernelBuilder::SharedArray(llvm::Type* type, int64_t count,
                                                 absl::string_view name) {
  auto* array_type = llvm::ArrayType::get(type, static_cast<uint64_t>(count));
  auto* array = new llvm::GlobalVariable(
      *module_, array_type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::PoisonValue::get(array_type), llvm::Twine(std::string(name)), nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  array->setAlignment(llvm::Align(16));
  return array;
}

absl::Status KernelBuilder::For(llvm::Value* begin, llvm::Value* end, llvm::Value* step,
                                absl::string_view name,
                                const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::LLVMContext& context = module_->getContext();
  const std::string prefix(name);
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context, prefix + ".header", kernel_);
  auto* loop = llvm::BasicBlock::Create(context, prefix + ".body", kernel_);
  auto* exit = llvm::BasicBlock::Create(context, prefix + ".exit", kernel_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, prefix);
  i->addIncoming(begin, preheader);
  b_.CreateCondBr(b_.CreateICmpULT(i, end), loop, exit);
  b_.SetInsertPoint(loop);
  AXLE_RETURN_IF_ERROR(body(i));
  i->addIncoming(b_.CreateAdd(i, step), b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status KernelBuilder::If(llvm::Value* condition, absl::string_view name,
                               const std::function<absl::Status()>& then) {
  llvm::LLVMContext& context = module_->getContext();
  const std::string prefix(name);
  auto* then_block = llvm::BasicBlock::Create(context, prefix + ".then", kernel_);
  auto* merge = llvm::BasicBlock::Create(context, prefix + ".end", kernel_);
  b_.CreateCondBr(condition, then_block, merge);
  b_.SetInsertPoint(then_block);
  AXLE_RETURN_IF_ERROR(then());
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  return absl::OkStatus();
}

llvm::AllocaInst* KernelBuilder::Variable(llvm::Type* type, llvm::Value* initial,
                                          absl::string_view name) {
  llvm::BasicBlock& entry = kernel_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::AllocaInst* variable = at_entry.CreateAlloca(type, nullptr, llvm::Twine(std::string(name)));
  if (initial != nullptr) b_.CreateStore(initial, variable);
  return variable;
}

llvm_ir::IrIndex KernelBuilder::Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims) {
  return llvm_ir::Delinearize(b_, linear, dims);
}

llvm::Value* KernelBuilder::LoadIndex(llvm::Value* base, llvm::Value* index, PrimitiveType type) {
  llvm::Value* value = elemental_.LoadElement(base, index, type);
  return pu::IsSignedIntegralType(type) ? b_.CreateSExt(value, b_.getInt64Ty())
                                        : b_.CreateZExt(value, b_.getInt64Ty());
}

llvm::Value* KernelBuilder::BitsToValue(llvm::Value* bits, PrimitiveType type) {
  llvm::AllocaInst* slot = Variable(bits->getType(), nullptr, "bits");
  b_.CreateStore(bits, slot);
  return elemental_.LoadElement(slot, I64(0), type);
}

llvm::Value* KernelBuilder::ValueToBits(llvm::Value* value, PrimitiveType type,
                                        llvm::Type* bits_type) {
  llvm::AllocaInst* slot = Variable(bits_type, nullptr, "bits");
  elemental_.StoreElement(value, slot, I64(0), type);
  return b_.CreateLoad(bits_type, slot);
}

absl::Status KernelBuilder::EmitCombine(const HloComputation& computation, PrimitiveType type,
                                        llvm::Value* base, llvm::Value* index, llvm::Value* update,
                                        CombineMode mode) {
  llvm::Type* storage = elemental_.StorageType(type);
  llvm::Value* address = b_.CreateInBoundsGEP(storage, base, index);
  const AtomicOp op =
      mode == CombineMode::kAtomic ? AtomicOpOf(computation, type) : AtomicOp::kNone;
  if (mode == CombineMode::kPlain || op == AtomicOp::kAssign) {
    llvm::Value* result = update;
    if (op != AtomicOp::kAssign) {
      llvm::Value* current = elemental_.LoadElement(base, index, type);
      AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                            elemental_.EmitScalarComputation(computation, {current, update}));
      result = results[0];
    }
    elemental_.StoreElement(result, base, index, type);
    return absl::OkStatus();
  }
  const bool is_float = pu::IsFloatingPointType(type) || pu::IsComplexType(type);
  const bool is_signed = pu::IsSignedIntegralType(type);
  auto rmw = [&](llvm::AtomicRMWInst::BinOp binop, llvm::Value* at, llvm::Value* value) {
    b_.CreateAtomicRMW(binop, at, value, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
  };
  switch (op) {
    case AtomicOp::kAdd:
      if (pu::IsComplexType(type)) {
        // The parts add independently.
        llvm::Type* part = type == C64 ? b_.getFloatTy() : b_.getDoubleTy();
        rmw(llvm::AtomicRMWInst::FAdd, address, b_.CreateExtractValue(update, 0));
        rmw(llvm::AtomicRMWInst::FAdd, b_.CreateInBoundsGEP(part, address, b_.getInt64(1)),
            b_.CreateExtractValue(update, 1));
      } else {
        rmw(is_float ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, address, update);
      }
      return absl::OkStatus();
    case AtomicOp::kMax:
      rmw(is_signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax, address, update);
      return absl::OkStatus();
    case AtomicOp::kMin:
      rmw(is_signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin, address, update);
      return absl::OkStatus();
    case AtomicOp::kAnd:
      rmw(llvm::AtomicRMWInst::And, address, update);
      return absl::OkStatus();
    case AtomicOp::kOr:
      rmw(llvm::AtomicRMWInst::Or, address, update);
      return absl::OkStatus();
    case AtomicOp::kXor:
      rmw(llvm::AtomicRMWInst::Xor, address, update);
      return absl::OkStatus();
    default:
      break;
  }
  if (StorageBytes(type) > 8) {
    return absl::UnimplementedError(
        absl::StrCat("CUDA: an atomic combination of ", pu::LowercasePrimitiveTypeName(type),
                     " elements by ", computation.name(), " (wider than a 64-bit word)"));
  }
  return EmitCasCombine(computation, type, address, update);
}

absl::Status KernelBuilder::EmitCasCombine(const HloComputation& computation, PrimitiveType type,
                                           llvm::Value* address, llvm::Value* update) {
  llvm::LLVMContext& context = module_->getContext();
  const int64_t bytes = StorageBytes(type);
  llvm::Type* element_bits = b_.getIntNTy(static_cast<unsigned>(bytes * 8));
  // Sub-word elements: the aligned 32-bit word that holds them.
  llvm::Type* word = bytes < 4 ? b_.getInt32Ty() : element_bits;
  llvm::Value* word_address = address;
  llvm::Value* shift = nullptr;
  llvm::Value* keep_mask = nullptr;
  if (bytes < 4) {
    // Stepped back from the element's address (so it stays a global
    // pointer to LLVM), not rebuilt from an integer.
    llvm::Value* at = b_.CreatePtrToInt(address, b_.getInt64Ty());
    word_address = b_.CreateGEP(b_.getInt8Ty(), address, b_.CreateNeg(b_.CreateAnd(at, I64(3))));
    shift = b_.CreateTrunc(b_.CreateMul(b_.CreateAnd(at, I64(3)), I64(8)), b_.getInt32Ty());
    const uint32_t element_mask = bytes == 1 ? 0xffu : 0xffffu;
    keep_mask = b_.CreateNot(b_.CreateShl(b_.getInt32(element_mask), shift));
  }
  llvm::Value* initial = b_.CreateLoad(word, word_address, /*isVolatile=*/true, "initial");
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(context, "cas.loop", kernel_);
  auto* done = llvm::BasicBlock::Create(context, "cas.done", kernel_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* old = b_.CreatePHI(word, 2, "old");
  old->addIncoming(initial, preheader);
  llvm::Value* old_bits = bytes < 4 ? b_.CreateTrunc(b_.CreateLShr(old, shift), element_bits) : old;
  llvm::Value* current = BitsToValue(old_bits, type);
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                        elemental_.EmitScalarComputation(computation, {current, update}));
  llvm::Value* new_bits = ValueToBits(results[0], type, element_bits);
  llvm::Value* new_word = new_bits;
  if (bytes < 4) {
    new_word = b_.CreateOr(b_.CreateAnd(old, keep_mask),
                           b_.CreateShl(b_.CreateZExt(new_bits, word), shift));
  }
  llvm::Value* exchanged =
      b_.CreateAtomicCmpXchg(word_address, old, new_word, llvm::MaybeAlign(),
                             llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  old->addIncoming(b_.CreateExtractValue(exchanged, 0), b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateExtractValue(exchanged, 1), done, loop);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status KernelBuilder::EmitLockedCombine(const HloComputation& computation,
                                              absl::Span<const PrimitiveType> types,
                                              absl::Span<llvm::Value* const> bases,
                                              llvm::Value* index,
                                              absl::Span<llvm::Value* const> updates,
                                              llvm::Value* lock) {
  llvm::LLVMContext& context = module_->getContext();
  // Spin until this thread takes the lock, with the critical section
  // inside the loop: a thread that holds the lock finishes and frees it
  // before it waits for the rest of its warp (a loop that only spins, with
  // the critical section after it, may reconverge the warp first and
  // deadlock). The flag is volatile so that no pass threads the branch
  // out of the loop again.
  llvm::AllocaInst* done = Variable(b_.getInt32Ty(), nullptr, "lock.done");
  b_.CreateStore(b_.getInt32(0), done, /*isVolatile=*/true);
  auto* spin = llvm::BasicBlock::Create(context, "lock.spin", kernel_);
  auto* held = llvm::BasicBlock::Create(context, "lock.held", kernel_);
  auto* latch = llvm::BasicBlock::Create(context, "lock.latch", kernel_);
  auto* exit = llvm::BasicBlock::Create(context, "lock.exit", kernel_);
  b_.CreateBr(spin);
  b_.SetInsertPoint(spin);
  llvm::Value* taken =
      b_.CreateAtomicCmpXchg(lock, b_.getInt32(0), b_.getInt32(1), llvm::MaybeAlign(),
                             llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  b_.CreateCondBr(b_.CreateExtractValue(taken, 1), held, latch);
  b_.SetInsertPoint(held);
  // Every other holder's writes are visible: a device-wide fence (membar.gl,
  // fence.sc.gpu from sm_70 on; LLVM 19's NVPTX selects no `fence`), and
  // the elements read and written volatile (never from a stale L1 line).
  b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_membar_gl, {});
  std::vector<llvm::Value*> arguments;
  std::vector<llvm::Value*> addresses;
  for (size_t i = 0; i < bases.size(); ++i) {
    llvm::Type* storage = elemental_.StorageType(types[i]);
    addresses.push_back(b_.CreateInBoundsGEP(storage, bases[i], index));
    arguments.push_back(
        BitsToValue(b_.CreateLoad(storage, addresses.back(), /*isVolatile=*/true), types[i]));
  }
  arguments.insert(arguments.end(), updates.begin(), updates.end());
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                        elemental_.EmitScalarComputation(computation, arguments));
  if (results.size() != bases.size()) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA: ", computation.name(), " returns ",
                                                   results.size(), " values, not ", bases.size()));
  }
  for (size_t i = 0; i < bases.size(); ++i) {
    llvm::Type* storage = elemental_.StorageType(types[i]);
    b_.CreateStore(ValueToBits(results[i], types[i], storage), addresses[i], /*isVolatile=*/true);
  }
  // The writes are visible before the lock is free.
  b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_membar_gl, {});
  b_.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, lock, b_.getInt32(0), llvm::MaybeAlign(),
                     llvm::AtomicOrdering::Monotonic);
  b_.CreateStore(b_.getInt32(1), done, /*isVolatile=*/true);
  b_.CreateBr(latch);
  b_.SetInsertPoint(latch);
  b_.CreateCondBr(
      b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), done, /*isVolatile=*/true), b_.getInt32(0)),
      exit, spin);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

}  // namespace axle::gpu
