//===- jit.cc - An LLVM ORC JIT for the host CPU ---------------------------===//
//
// LLJIT built for the host (JITTargetMachineBuilder::detectHost), the new
// pass manager's O3 pipeline with both vectorizers, and a definition
// generator for the process's own symbols plus Axle's runtime helpers.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/jit.h"

#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime_symbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

namespace axle::cpu {
namespace {

std::string ToString(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  return text;
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::OptimizationLevel ToLlvmLevel(int level) {
  switch (level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 2:
      return llvm::OptimizationLevel::O2;
    default:
      return llvm::OptimizationLevel::O3;
  }
}

}  // namespace

struct Jit::Impl {
  JitOptions options;
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> target_machine;  // for the optimizer
  std::string triple, data_layout, cpu_name, cpu_features;
  std::mutex mutex;  // serializes AddModule (optimization is not reentrant here)

  void Optimize(llvm::Module& module) {
    for (llvm::Function& function : module) {
      if (function.isDeclaration()) continue;
      function.addFnAttr("target-cpu", cpu_name);
      function.addFnAttr("target-features", cpu_features);
      if (options.prefer_512_bit_vectors) function.addFnAttr("prefer-vector-width", "512");
    }
    if (options.optimization_level == 0) return;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = options.slp_vectorization;
    tuning.LoopUnrolling = true;
    llvm::PassBuilder builder(target_machine.get(), tuning);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes =
        builder.buildPerModuleDefaultPipeline(ToLlvmLevel(options.optimization_level));
    passes.run(module, mam);
  }
};

Jit::Jit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Jit::~Jit() = default;

absl::StatusOr<std::unique_ptr<Jit>> Jit::Create(const JitOptions& options) {
  InitializeLlvmOnce();
  auto impl = std::make_unique<Impl>();
  impl->options = options;

  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return absl::InternalError(absl::StrCat("JIT: ", ToString(builder.takeError())));
  builder->setCodeGenOptLevel(options.optimization_level == 0 ? llvm::CodeGenOptLevel::None
                                                              : llvm::CodeGenOptLevel::Aggressive);
  impl->cpu_name = builder->getCPU();
  impl->cpu_features = builder->getFeatures().getString();
  impl->triple = builder->getTargetTriple().str();

  auto target_machine = builder->createTargetMachine();
  if (!target_machine) {
    return absl::InternalError(absl::StrCat("JIT: ", ToString(target_machine.takeError())));
  }
  impl->target_machine = std::move(*target_machine);
  impl->data_layout = impl->target_machine->createDataLayout().getStringRepresentation();

  auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!lljit) return absl::InternalError(absl::StrCat("JIT: ", ToString(lljit.takeError())));
  impl->lljit = std::move(*lljit);

  llvm::orc::JITDylib& dylib = impl->lljit->getMainJITDylib();
  // Axle's runtime helpers first, then anything the process defines (libm).
  llvm::orc::SymbolMap helpers;
  for (const RuntimeSymbol& symbol : RuntimeSymbols()) {
    helpers[impl->lljit->mangleAndIntern(symbol.name)] = {
        llvm::orc::ExecutorAddr::fromPtr(symbol.address), llvm::JITSymbolFlags::Exported};
  }
  if (llvm::Error error = dylib.define(llvm::orc::absoluteSymbols(std::move(helpers)))) {
    return absl::InternalError(absl::StrCat("JIT: ", ToString(std::move(error))));
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      impl->lljit->getDataLayout().getGlobalPrefix());
  if (!process) return absl::InternalError(absl::StrCat("JIT: ", ToString(process.takeError())));
  dylib.addGenerator(std::move(*process));
  return std::unique_ptr<Jit>(new Jit(std::move(impl)));
}

const std::string& Jit::target_triple() const { return impl_->triple; }
const std::string& Jit::data_layout() const { return impl_->data_layout; }
const std::string& Jit::cpu_name() const { return impl_->cpu_name; }
const std::string& Jit::cpu_features() const { return impl_->cpu_features; }

absl::Status Jit::AddModule(std::unique_ptr<llvm::Module> module,
                            std::unique_ptr<llvm::LLVMContext> context) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  module->setTargetTriple(impl_->triple);
  module->setDataLayout(impl_->data_layout);
  std::string verifier_errors;
  llvm::raw_string_ostream verifier_os(verifier_errors);
  if (llvm::verifyModule(*module, &verifier_os)) {
    return absl::InternalError(
        absl::StrCat("JIT: invalid LLVM module ", module->getName().str(), ": ", verifier_errors));
  }
  if (impl_->options.ir_before_optimization) {
    impl_->options.ir_before_optimization(module->getName().str(), ModuleText(*module));
  }
  impl_->Optimize(*module);
  if (impl_->options.ir_after_optimization) {
    impl_->options.ir_after_optimization(module->getName().str(), ModuleText(*module));
  }
  llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(context));
  if (llvm::Error error = impl_->lljit->addIRModule(std::move(tsm))) {
    return absl::InternalError(absl::StrCat("JIT: ", ToString(std::move(error))));
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> Jit::Lookup(absl::string_view name) const {
  auto address = impl_->lljit->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address) {
    return absl::NotFoundError(
        absl::StrCat("JIT: no symbol ", name, ": ", ToString(address.takeError())));
  }
  return address->toPtr<void*>();
}

}  // namespace axle::cpu
