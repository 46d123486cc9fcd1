//===- nvptx_target_hooks.cc - NVPTX's answers to the elemental emitter ----===//
#include "axle/gpu/nvptx_target_hooks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/llvm_ir/complex_math.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {
namespace {

using llvm_ir::MathFunction;

llvm::Module* ModuleOf(llvm::IRBuilderBase& b) { return b.GetInsertBlock()->getModule(); }

class NvptxHooks final : public llvm_ir::TargetHooks {
 public:
  llvm::Value* EmitMathCall(llvm::IRBuilderBase& b, MathFunction function,
                            absl::Span<llvm::Value* const> args) const override {
    // libdevice: __nv_<name> for double, __nv_<name>f for float.
    llvm::Type* type = args[0]->getType();
    std::string name = absl::StrCat("__nv_", llvm_ir::MathFunctionName(function));
    if (type->isFloatTy()) name += 'f';
    std::vector<llvm::Type*> parameters(args.size(), type);
    llvm::FunctionCallee callee =
        ModuleOf(b)->getOrInsertFunction(name, llvm::FunctionType::get(type, parameters, false));
    if (auto* declaration = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      declaration->setDoesNotAccessMemory();
      declaration->setDoesNotThrow();
    }
    return b.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  }

  // libdevice has no complex functions: inline, from its real ones.
  llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                               absl::Span<llvm::Value* const> args) const override {
    return llvm_ir::EmitComplexMath(*this, b, opcode, args);
  }

  void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* base, llvm::Value* byte_offset,
                    int64_t bytes) const override {}

  int PreferredVectorBits() const override { return 32; }
};

}  // namespace

const llvm_ir::TargetHooks& NvptxTargetHooks() {
  static const NvptxHooks* hooks = new NvptxHooks();
  return *hooks;
}

}  // namespace axle::gpu
