//===- ptx_compiler.cc - Loop fusions to PTX kernels -----------------------===//
//
// One LLVM context and module per kernel: emit (ptx_kernel_emitter.h), link
// the libdevice functions the kernel calls (only those, internalized, as
// XLA:GPU does; __nvvm_reflect's "__CUDA_FTZ" is 0: denormals are kept),
// verify, optimize at O3 through the NVPTX target machine's pipeline (which
// resolves __nvvm_reflect), and print PTX.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/ptx_compiler.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/ptx_kernel_emitter.h"
#include "axle/gpu/ptx_module.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

#ifndef AXLE_CUDA_LIBDEVICE_PATH
#define AXLE_CUDA_LIBDEVICE_PATH ""
#endif

namespace axle::gpu {
namespace {

constexpr char kTriple[] = "nvptx64-nvidia-cuda";
// The PTX ISA sm_90 needs (CUDA 11.8); ptxas of later toolkits reads it.
constexpr char kPtxFeatures[] = "+ptx78";

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> MakeTargetMachine(const std::string& arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) {
    return absl::InternalError(absl::StrCat("LLVM has no NVPTX target: ", error));
  }
  if (!absl::StartsWith(arch, "sm_")) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA codegen: architecture '", arch, "' is not of the form sm_NN"));
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kTriple, arch, kPtxFeatures, llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr) {
    return absl::InternalError(absl::StrCat("LLVM could not target NVPTX ", arch));
  }
  return machine;
}

bool CallsLibdevice(const llvm::Module& module) {
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with("__nv_")) return true;
  }
  return false;
}

absl::Status LinkLibdevice(llvm::Module* module, const std::string& path) {
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> libdevice =
      llvm::parseIRFile(path, diagnostic, module->getContext());
  if (libdevice == nullptr) {
    std::string message;
    llvm::raw_string_ostream stream(message);
    diagnostic.print("libdevice", stream);
    return absl::InternalError(
        absl::StrCat("CUDA codegen: cannot read libdevice ", path, ": ", stream.str()));
  }
  libdevice->setTargetTriple(module->getTargetTriple());
  libdevice->setDataLayout(module->getDataLayout());
  const bool failed = llvm::Linker::linkModules(
      *module, std::move(libdevice), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module& linked, const llvm::StringSet<>& from_libdevice) {
        llvm::internalizeModule(linked, [&](const llvm::GlobalValue& value) {
          return !value.hasName() || !from_libdevice.contains(value.getName());
        });
      });
  if (failed) return absl::InternalError(absl::StrCat("CUDA codegen: linking ", path, " failed"));
  return absl::OkStatus();
}

void Optimize(llvm::Module* module, llvm::TargetMachine* machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine);
  machine->registerPassBuilderCallbacks(builder);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(*module, modules);
}

// With $AXLE_DUMP_TO set: <dir>/<kernel>.ll (as emitted), <kernel>.opt.ll
// (linked and optimized) and <kernel>.ptx, for debugging a miscompile
// without new code. Dumps that cannot be written are skipped.
void Dump(absl::string_view kernel, absl::string_view extension, absl::string_view text) {
  const std::string dir = EnvironmentOptions::Read().dump_to;
  if (dir.empty()) return;
  if (llvm::sys::fs::create_directories(dir)) return;
  std::error_code error;
  llvm::raw_fd_ostream file(absl::StrCat(dir, "/", kernel, extension), error);
  if (!error) file << llvm::StringRef(text.data(), text.size());
}

absl::StatusOr<std::string> EmitPtx(llvm::Module* module, llvm::TargetMachine* machine) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("LLVM's NVPTX backend cannot emit PTX");
  }
  passes.run(*module);
  return std::string(ptx.str());
}

// The hand-written kernels' PTX by (IR as emitted, architecture,
// libdevice): GetHandWrittenPtxCacheStats.
struct HandWrittenPtxCache {
  std::mutex mu;
  std::map<std::tuple<std::string, std::string, std::string>, std::string> ptx;
  PtxCacheStats stats;
};

HandWrittenPtxCache& GlobalHandWrittenPtxCache() {
  static auto* cache = new HandWrittenPtxCache();
  return *cache;
}

}  // namespace

absl::StatusOr<std::string> LibdevicePath() {
  const std::string from_environment = EnvironmentOptions::Read().cuda_libdevice;
  if (!from_environment.empty()) {
    if (!llvm::sys::fs::exists(from_environment)) {
      return absl::NotFoundError(
          absl::StrCat("AXLE_CUDA_LIBDEVICE=", from_environment, " does not exist"));
    }
    return from_environment;
  }
  const std::string built_with = AXLE_CUDA_LIBDEVICE_PATH;
  if (!built_with.empty() && llvm::sys::fs::exists(built_with)) return built_with;
  return absl::NotFoundError(absl::StrCat("CUDA codegen: libdevice.10.bc not found (the toolkit's ",
                                          built_with, "); set AXLE_CUDA_LIBDEVICE to its path"));
}

absl::StatusOr<PtxKernel> CompileLoopFusionToPtx(const HloComputation& fusion,
                                                 absl::string_view kernel_name,
                                                 const PtxOptions& options) {
  AXLE_RETURN_IF_ERROR(CheckBlockSize(options));
  llvm::LLVMContext context;
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(kernel_name, context, options));
  AXLE_ASSIGN_OR_RETURN(
      EmittedKernel kernel,
      EmitLoopFusionKernel(fusion, kernel_name, options.block_size, module.get()));
  PtxKernel result;
  AXLE_ASSIGN_OR_RETURN(result.ptx, CompileNvptxModuleToPtx(module.get(), kernel_name, options,
                                                            &result.unoptimized_ir));
  result.name = kernel.function->getName().str();
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopFusionOutputs(fusion));
  result.output_elements = outputs[0]->shape().num_elements();
  result.block = kernel.block;
  result.grid = kernel.grid;
  result.num_parameters = fusion.num_parameters();
  result.num_outputs = static_cast<int64_t>(outputs.size());
  return result;
}

absl::Status CheckBlockSize(const PtxOptions& options) {
  if (options.block_size <= 0 || options.block_size > 1024 || options.block_size % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA codegen: block size ", options.block_size,
                                                   " is not a multiple of 32 up to 1024"));
  }
  return absl::OkStatus();
}

absl::Status PrepareNvptxModule(llvm::Module* module, const PtxOptions& options) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                        MakeTargetMachine(options.arch));
  module->setTargetTriple(kTriple);
  module->setDataLayout(machine->createDataLayout());
  module->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<llvm::Module>> NewNvptxModule(absl::string_view name,
                                                             llvm::LLVMContext& context,
                                                             const PtxOptions& options) {
  auto module = std::make_unique<llvm::Module>(std::string(name), context);
  AXLE_RETURN_IF_ERROR(PrepareNvptxModule(module.get(), options));
  return module;
}

void MarkKernel(llvm::Function* function, int max_threads) {
  llvm::Module* module = function->getParent();
  llvm::LLVMContext& context = module->getContext();
  llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
  for (const auto& [key, value] : {std::pair<const char*, int>{"kernel", 1},
                                   std::pair<const char*, int>{"maxntidx", max_threads}}) {
    annotations->addOperand(llvm::MDNode::get(
        context, {llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, key),
                  llvm::ConstantAsMetadata::get(
                      llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))}));
  }
}

ElementKernelStart StartElementKernel(llvm::IRBuilder<>& b, llvm::Function* function, int64_t count,
                                      bool no_wrap) {
  llvm::LLVMContext& context = function->getContext();
  auto* entry = llvm::BasicBlock::Create(context, "entry", function);
  auto* element = llvm::BasicBlock::Create(context, "element", function);
  auto* exit = llvm::BasicBlock::Create(context, "exit", function);
  b.SetInsertPoint(entry);
  auto special = [&](llvm::Intrinsic::ID id) {
    return b.CreateZExt(b.CreateIntrinsic(b.getInt32Ty(), id, {}), b.getInt64Ty());
  };
  llvm::Value* index = b.CreateAdd(
      b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                  special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x), "", no_wrap, no_wrap),
      special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), "linear", no_wrap, no_wrap);
  b.CreateCondBr(b.CreateICmpULT(index, b.getInt64(static_cast<uint64_t>(count))), element, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  b.SetInsertPoint(element);
  return {index, exit};
}

namespace {

// CompileNvptxModuleToPtx through the hand-written kernels' cache.
absl::StatusOr<std::string> CompileHandWrittenToPtx(llvm::Module* module,
                                                    absl::string_view kernel_name,
                                                    const PtxOptions& options,
                                                    std::string* unoptimized_ir) {
  const EnvironmentOptions environment = EnvironmentOptions::Read();
  if (!environment.dump_to.empty()) {
    return CompileNvptxModuleToPtx(module, kernel_name, options, unoptimized_ir);
  }
  std::string emitted;
  llvm::raw_string_ostream ir_stream(emitted);
  module->print(ir_stream, nullptr);
  ir_stream.flush();
  auto key = std::make_tuple(
      emitted, options.arch,
      options.libdevice_path.empty() ? environment.cuda_libdevice : options.libdevice_path);
  HandWrittenPtxCache& cache = GlobalHandWrittenPtxCache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.ptx.find(key);
    if (it != cache.ptx.end()) {
      ++cache.stats.hits;
      if (unoptimized_ir != nullptr) *unoptimized_ir = emitted;
      return it->second;
    }
  }
  AXLE_ASSIGN_OR_RETURN(std::string ptx,
                        CompileNvptxModuleToPtx(module, kernel_name, options, unoptimized_ir));
  std::lock_guard<std::mutex> lock(cache.mu);
  ++cache.stats.misses;
  return cache.ptx.try_emplace(std::move(key), std::move(ptx)).first->second;
}

}  // namespace

PtxCacheStats GetHandWrittenPtxCacheStats() {
  HandWrittenPtxCache& cache = GlobalHandWrittenPtxCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.stats;
}

absl::StatusOr<std::string> CompileNvptxModule(llvm::Module* module, absl::string_view name,
                                               const PtxOptions& options) {
  return CompileHandWrittenToPtx(module, name, options, nullptr);
}

absl::StatusOr<PtxKernel> CompileElementKernel(llvm::Module* module, absl::string_view kernel_name,
                                               int64_t elements, int64_t num_parameters,
                                               int64_t num_outputs, const PtxOptions& options) {
  PtxKernel kernel;
  kernel.name = std::string(kernel_name);
  AXLE_ASSIGN_OR_RETURN(
      kernel.ptx, CompileHandWrittenToPtx(module, kernel_name, options, &kernel.unoptimized_ir));
  kernel.output_elements = elements;
  kernel.block = options.block_size;
  kernel.grid = (elements + options.block_size - 1) / options.block_size;
  kernel.num_parameters = num_parameters;
  kernel.num_outputs = num_outputs;
  return kernel;
}

absl::StatusOr<std::string> CompileNvptxModuleToPtx(llvm::Module* module,
                                                    absl::string_view kernel_name,
                                                    const PtxOptions& options,
                                                    std::string* unoptimized_ir) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                        MakeTargetMachine(options.arch));
  std::string emitted;
  llvm::raw_string_ostream ir_stream(emitted);
  module->print(ir_stream, nullptr);
  if (CallsLibdevice(*module)) {
    std::string path = options.libdevice_path;
    if (path.empty()) {
      AXLE_ASSIGN_OR_RETURN(path, LibdevicePath());
    }
    AXLE_RETURN_IF_ERROR(LinkLibdevice(module, path));
  }
  std::string errors;
  llvm::raw_string_ostream error_stream(errors);
  if (llvm::verifyModule(*module, &error_stream)) {
    return absl::InternalError(absl::StrCat("CUDA codegen: invalid LLVM IR for ", kernel_name, ": ",
                                            error_stream.str(), "\n", ir_stream.str()));
  }
  Optimize(module, machine.get());
  if (!EnvironmentOptions::Read().dump_to.empty()) {
    std::string optimized_ir;
    llvm::raw_string_ostream optimized_stream(optimized_ir);
    module->print(optimized_stream, nullptr);
    Dump(kernel_name, ".ll", ir_stream.str());
    Dump(kernel_name, ".opt.ll", optimized_stream.str());
  }
  AXLE_ASSIGN_OR_RETURN(std::string ptx, EmitPtx(module, machine.get()));
  Dump(kernel_name, ".ptx", ptx);
  if (unoptimized_ir != nullptr) *unoptimized_ir = std::move(ir_stream.str());
  return ptx;
}

}  // namespace axle::gpu
