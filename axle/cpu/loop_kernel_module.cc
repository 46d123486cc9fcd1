//===- loop_kernel_module.cc - Many loop kernels, one LLVM compile ---------===//
//
// LoopKernelModule: the kernels (and scalar functions) of an executable go
// into a few LLVM modules, one per compile thread once there is enough
// code, and are compiled together; structurally identical computations
// share one function. The kernels themselves are emitted by
// loop_kernel_emitter.cc (EmitLoopKernel).
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/cpu/scalar_function_emitter.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

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
  // The function emitted for each key: the kind of function and its
  // computation's structural fingerprint, or an emitted kernel's key.
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

  // The function for `key`: the one emitted for it earlier, or `name`,
  // emitted now by `emit` into the next partition (nothing is emitted while
  // the code comes precompiled). `is_new` says which. A failed emission
  // leaves no trace of `key`.
  absl::StatusOr<const std::string*> FunctionFor(const std::string& key, absl::string_view name,
                                                 const KernelIrEmitter& emit, bool* is_new) {
    auto [it, inserted] = function_of_key.emplace(key, std::string(name.data(), name.size()));
    *is_new = inserted;
    if (!inserted) return &it->second;
    if (jit == nullptr) {
      absl::Status emitted = [&]() -> absl::Status {
        AXLE_ASSIGN_OR_RETURN(Partition * partition, NextPartition());
        const int64_t before = InstructionCount(*partition->module);
        AXLE_RETURN_IF_ERROR(emit(partition->module.get()));
        partition->instructions += InstructionCount(*partition->module) - before;
        return absl::OkStatus();
      }();
      if (!emitted.ok()) {
        function_of_key.erase(it);
        return emitted;
      }
    }
    ++num_functions;
    return &it->second;
  }

  // Adds a function's line to the signature: `label` and `identity` for a
  // new function, `label = <function>` for one an earlier key emitted (no
  // code of its own).
  void Sign(absl::string_view label, absl::string_view identity, bool is_new,
            const std::string& function) {
    if (is_new) {
      absl::StrAppend(&signature, label, identity, "\n");
    } else {
      absl::StrAppend(&signature, label, " = ", function, "\n");
    }
  }

  // A kernel that gets `function`'s address at Compile.
  std::unique_ptr<CompiledKernel> PendingKernel(const std::string& function, int64_t outer_size,
                                                int64_t num_parameters, int64_t num_outputs) {
    auto kernel =
        std::make_unique<CompiledKernel>(nullptr, nullptr, outer_size, num_parameters, num_outputs);
    pending.emplace_back(kernel.get(), function);
    ++num_kernels;
    return kernel;
  }

  void AddEmitTime(std::chrono::steady_clock::time_point start) {
    emit_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
  // Structurally identical computations (hlo_structural_hash.h) share one
  // function.
  const std::string fingerprint = FingerprintComputation(computation).ToHex();
  bool is_new = false;
  AXLE_ASSIGN_OR_RETURN(const std::string* function_name,
                        impl_->FunctionFor(
                            absl::StrCat("loop kernel ", fingerprint), kernel_name,
                            [&](llvm::Module* module) {
                              return EmitLoopKernel(computation, kernel_name, outputs,
                                                    UseNonTemporalStores(outputs, *impl_->new_jit),
                                                    module);
                            },
                            &is_new));
  impl_->Sign(kernel_name, absl::StrCat(" ", fingerprint), is_new, *function_name);
  const int64_t range_dimension = RangeDimension(outputs);
  const int64_t chunks = FoldChunks(outputs);
  const int64_t column_chunks = ColumnChunks(outputs);
  int64_t outer_size = range_dimension < 0 ? 1 : outputs[0]->shape().dimensions(range_dimension);
  // The chunks, then their combine.
  if (chunks > 0) outer_size = chunks + 1;
  if (column_chunks > 0) outer_size = column_chunks + 1;
  std::unique_ptr<CompiledKernel> kernel =
      impl_->PendingKernel(*function_name, outer_size, computation.num_parameters(),
                           static_cast<int64_t>(outputs.size()));
  if (chunks > 0) {
    static_assert(kMaxFoldChunkBytes <= CompiledKernel::kMaxPartialsBytes);
    kernel->set_partials_bytes(FoldChunkBytes(*SplitFoldReduction(outputs), chunks));
  }
  if (column_chunks > 0) {
    static_assert(kMaxColumnChunkPartialsBytes <= CompiledKernel::kMaxPartialsBytes);
    kernel->set_partials_bytes(ColumnChunkPartialsOffset(outputs, outputs.size(), column_chunks));
  }
  impl_->AddEmitTime(start);
  return kernel;
}

absl::StatusOr<std::unique_ptr<CompiledScalarFunction>> LoopKernelModule::AddScalarFunction(
    const HloComputation& computation, absl::string_view name) {
  auto start = std::chrono::steady_clock::now();
  AXLE_RETURN_IF_ERROR(CheckScalarFunction(computation));
  // Another calling convention than a loop kernel's: never the same function.
  const std::string fingerprint = FingerprintComputation(computation).ToHex();
  bool is_new = false;
  AXLE_ASSIGN_OR_RETURN(
      const std::string* function_name,
      impl_->FunctionFor(
          absl::StrCat("scalar function ", fingerprint), name,
          [&](llvm::Module* module) { return EmitScalarFunction(computation, name, module); },
          &is_new));
  impl_->Sign(absl::StrCat("scalar function ", name), absl::StrCat(" ", fingerprint), is_new,
              *function_name);
  auto function = std::make_unique<CompiledScalarFunction>(nullptr, nullptr);
  impl_->pending_scalar.emplace_back(function.get(), *function_name);
  ++impl_->num_scalar_functions;
  impl_->AddEmitTime(start);
  return function;
}

absl::StatusOr<std::unique_ptr<CompiledKernel>> LoopKernelModule::AddEmittedKernel(
    absl::string_view key, absl::string_view name, int64_t outer_size, int64_t num_parameters,
    int64_t num_outputs, const KernelIrEmitter& emit) {
  auto start = std::chrono::steady_clock::now();
  bool is_new = false;
  AXLE_ASSIGN_OR_RETURN(
      const std::string* function_name,
      impl_->FunctionFor(absl::StrCat("emitted kernel\n", key), name, emit, &is_new));
  impl_->Sign(name, absl::StrCat("\n", key), is_new, *function_name);
  std::unique_ptr<CompiledKernel> kernel =
      impl_->PendingKernel(*function_name, outer_size, num_parameters, num_outputs);
  impl_->AddEmitTime(start);
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
    kernel->symbol_ = name;
  }
  impl_->pending.clear();
  for (auto& [function, name] : impl_->pending_scalar) {
    AXLE_ASSIGN_OR_RETURN(void* address, impl_->jit->Lookup(name));
    function->jit_ = impl_->jit;
    function->function_ = reinterpret_cast<CompiledScalarFunction::Function>(address);
    function->symbol_ = name;
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
