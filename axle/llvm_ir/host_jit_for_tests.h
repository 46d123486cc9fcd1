//===- host_jit_for_tests.h - A test's IR compiled for the host ------------===//
//
// For axle/llvm_ir's tests, which JIT-compile what an emitter builds and run
// it against a reference: LLVM's O2 pipeline for the host (vectorizers
// included, as a backend runs it), then ORC's LLJIT. Includes LLVM and
// gtest: tests only.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_HOST_JIT_FOR_TESTS_H_
#define AXLE_LLVM_IR_HOST_JIT_FOR_TESTS_H_

#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

namespace axle::llvm_ir {

// Verifies and optimizes `module`, which defines the function `f`, and
// JIT-compiles it for the host: `f`'s address, or nullptr after a test
// failure naming the error. `jit` keeps the code alive.
inline void* JitForHost(std::unique_ptr<llvm::LLVMContext> context,
                        std::unique_ptr<llvm::Module> module,
                        std::unique_ptr<llvm::orc::LLJIT>& jit) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  auto target = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!target) {
    ADD_FAILURE() << llvm::toString(target.takeError());
    return nullptr;
  }
  auto machine = target->createTargetMachine();
  if (!machine) {
    ADD_FAILURE() << llvm::toString(machine.takeError());
    return nullptr;
  }
  module->setDataLayout((*machine)->createDataLayout());
  module->setTargetTriple((*machine)->getTargetTriple().str());
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine->get());
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*module, modules);
  auto created = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*target)).create();
  if (!created) {
    ADD_FAILURE() << llvm::toString(created.takeError());
    return nullptr;
  }
  jit = std::move(*created);
  llvm::Error added =
      jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
  if (added) {
    ADD_FAILURE() << llvm::toString(std::move(added));
    return nullptr;
  }
  auto address = jit->lookup("f");
  if (!address) {
    ADD_FAILURE() << llvm::toString(address.takeError());
    return nullptr;
  }
  return address->toPtr<void*>();
}

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_HOST_JIT_FOR_TESTS_H_
