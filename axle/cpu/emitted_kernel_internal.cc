//===- emitted_kernel_internal.cc - Helpers of the dot and convolution loops ===//
#include "axle/cpu/emitted_kernel_internal.h"

#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"

namespace axle::cpu {

absl::Status EmitKernelFunctions(llvm::Module* module, llvm::IRBuilderBase& b,
                                 absl::string_view name, int num_buffers, int num_read_only,
                                 const KernelBodyEmitter& emit_body) {
  llvm::LLVMContext& context = module->getContext();
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  const std::string function_name(name.data(), name.size());
  std::vector<llvm::Type*> body_params(num_buffers, ptr);
  body_params.push_back(i64);
  body_params.push_back(i64);
  auto* body =
      llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), body_params, false),
                             llvm::GlobalValue::InternalLinkage, function_name + ".body", module);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  std::vector<llvm::Value*> buffers;
  for (int i = 0; i < num_buffers; ++i) {
    body->addParamAttr(i, llvm::Attribute::NoAlias);
    body->addParamAttr(i, llvm::Attribute::NoCapture);
    if (i < num_read_only) body->addParamAttr(i, llvm::Attribute::ReadOnly);
    buffers.push_back(body->getArg(i));
  }
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", body));
  absl::Status emitted =
      emit_body(buffers, body->getArg(num_buffers), body->getArg(num_buffers + 1));
  if (!emitted.ok()) {
    // Leave no half-emitted function behind (the module still compiles).
    body->eraseFromParent();
    return emitted;
  }
  b.CreateRetVoid();

  auto* kernel =
      llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i64}, false),
                             llvm::GlobalValue::ExternalLinkage, function_name, module);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", kernel));
  std::vector<llvm::Value*> args;
  for (int i = 0; i < num_buffers; ++i) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, kernel->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot, absl::StrCat("buffer", i)));
  }
  args.push_back(kernel->getArg(1));
  args.push_back(kernel->getArg(2));
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return absl::OkStatus();
}

llvm::Value* EmitScalarLiteral(llvm_ir::ElementalIrEmitter& elemental, llvm::Module* module,
                               const Literal& literal) {
  const auto* bytes = static_cast<const uint8_t*>(literal.untyped_data());
  llvm::Constant* init = llvm::ConstantDataArray::get(
      module->getContext(), llvm::ArrayRef<uint8_t>(bytes, literal.size_bytes()));
  auto* global = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, "epilogue");
  global->setAlignment(llvm::Align(16));
  llvm::Value* zero = llvm::ConstantInt::get(llvm::Type::getInt64Ty(module->getContext()), 0);
  return elemental.LoadElement(global, zero, literal.shape().element_type());
}

std::string InstructionKey(const HloInstruction& instruction) {
  return FingerprintInstructionIgnoringOperands(instruction).ToHex();
}

}  // namespace axle::cpu
