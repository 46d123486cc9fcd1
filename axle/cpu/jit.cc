//===- jit.cc - An LLVM ORC JIT for the host CPU ---------------------------===//
//
// LLJIT built for the host (JITTargetMachineBuilder::detectHost, once per
// process, which also sets Axle's LLVM options), the kernel pipeline (or the
// new pass manager's O2 pipeline) with both vectorizers, and a
// definition generator for the process's own symbols plus Axle's runtime
// helpers. AddModules turns every module into an object file itself
// (optimization pipeline, then a SimpleCompiler), on worker threads that
// each own a TargetMachine (LLVM's are not thread-safe), and hands the
// objects to the LLJIT, which links them at the first lookup. Objects of
// modules missing from the disk cache are stored there.
//
// After the pipeline, loops tagged kNonTemporalStoresLoopProperty get their
// aligned vector stores marked !nontemporal (MarkNonTemporalStores), and,
// on a CPU without AVX512-FP16, vector compares and selects of half widened
// (WidenHalfVectorCompares).
//
// Cache file: object_cache.h's checked file ("AXLEOBJ1") holding an ELF
// object.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/jit.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/logging.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/host_cache_sizes.h"
#include "axle/cpu/object_cache.h"
#include "axle/cpu/runtime_symbols.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace axle::cpu {
namespace {

// Bump when the cache file layout or anything else that changes the code
// for the same key changes (the elemental emitter's output is covered by
// the IR hash).
constexpr char kCacheFormat[] = "axle-object-cache-2";
constexpr const char* kCacheMagic = kObjectCacheMagic;

// Set once per process before any code is generated (see jit.h).
constexpr const char* kLlvmOptions[] = {"-enable-epilogue-vectorization=false", "-disable-lsr"};

// The pipeline for loop kernels (JitOptions::kernel_pipeline), in opt's
// -passes syntax: LLVM 19's O2 function simplification and vectorization
// passes in O2's order and with O2's parameters, less the inliner (a
// kernel's body is alwaysinline), the interprocedural passes, GVN (early-cse
// with MemorySSA instead), jump threading, loop idiom recognition, loop
// load elimination and the other passes the bench/ kernels did not need.
// The SLP vectorizer and the loop unroller follow JitOptions.
constexpr char kSimplifyCfg[] =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
    "no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;"
    "simplify-cond-branch;no-speculate-unpredictables>";
constexpr char kLateSimplifyCfg[] =
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;"
    "no-keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>";
constexpr char kInstCombine[] = "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>";

std::string KernelPipeline(bool slp, bool unroll) {
  return absl::StrCat(
      "inferattrs,always-inline,function(",
      // Simplification.
      "sroa<modify-cfg>,early-cse<>,", kSimplifyCfg, ",", kInstCombine, ",",
      "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
      "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),",
      kSimplifyCfg, ",", kInstCombine, ",loop(indvars,loop-deletion),early-cse<memssa>,",
      kInstCombine, ",loop-mssa(licm<allowspeculation>),", kSimplifyCfg, ",",
      // Vectorization and its clean-up.
      "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,infer-alignment,",
      kInstCombine, ",", kLateSimplifyCfg, ",", slp ? "slp-vectorizer," : "", "vector-combine,",
      kInstCombine, ",", unroll ? "loop-unroll<O2>,sroa<preserve-cfg>,infer-alignment," : "",
      "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,instsimplify,", kSimplifyCfg,
      "),globaldce");
}

// AXLE_LLVM_OPTIONS split at spaces (read once).
const std::vector<std::string>& LlvmOptionsFromEnvironment() {
  static const std::vector<std::string>* options = [] {
    return new std::vector<std::string>(EnvironmentOptions::Read().llvm_options);
  }();
  return *options;
}

// Every LLVM option Axle sets, for the object cache key.
std::string LlvmOptionsKey() {
  std::string key = "llvm options:";
  for (const char* option : kLlvmOptions) absl::StrAppend(&key, " ", option);
  for (const std::string& option : LlvmOptionsFromEnvironment()) {
    absl::StrAppend(&key, " ", option);
  }
  return key;
}

// Parses `options` as LLVM's command line; false (and a message on stderr)
// when one is unknown or malformed.
bool ParseLlvmOptions(const std::vector<std::string>& options) {
  std::vector<const char*> argv = {"axle"};
  for (const std::string& option : options) argv.push_back(option.c_str());
  return llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "",
                                           &llvm::errs());
}

// Sets kLlvmOptions, then AXLE_LLVM_OPTIONS (a bad one is reported and
// ignored: it is a developer's setting, never a reason to stop).
void SetLlvmOptions() {
  CHECK(
      ParseLlvmOptions(std::vector<std::string>(std::begin(kLlvmOptions), std::end(kLlvmOptions))));
  if (!LlvmOptionsFromEnvironment().empty() && !ParseLlvmOptions(LlvmOptionsFromEnvironment())) {
    llvm::errs() << "axle: AXLE_LLVM_OPTIONS: LLVM rejected some of them (above)\n";
  }
}

std::atomic<int64_t> modules_optimized{0};
std::atomic<int64_t> object_cache_hits{0};
std::atomic<int64_t> object_cache_writes{0};

using Clock = std::chrono::steady_clock;
double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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

// The host target, detected once per process (cpuid, the host's name and
// features).
struct HostTarget {
  llvm::orc::JITTargetMachineBuilder builder;
  std::string triple, data_layout, cpu_name, cpu_features;
};

absl::StatusOr<const HostTarget*> GetHostTarget() {
  static absl::StatusOr<const HostTarget*>* host = [] {
    llvm::InitializeNativeTarget();
    SetLlvmOptions();
    llvm::InitializeNativeTargetAsmPrinter();
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) {
      return new absl::StatusOr<const HostTarget*>(
          absl::InternalError(absl::StrCat("JIT: ", ToString(builder.takeError()))));
    }
    auto machine = builder->createTargetMachine();
    if (!machine) {
      return new absl::StatusOr<const HostTarget*>(
          absl::InternalError(absl::StrCat("JIT: ", ToString(machine.takeError()))));
    }
    auto* target = new HostTarget{*builder, builder->getTargetTriple().str(),
                                  (*machine)->createDataLayout().getStringRepresentation(),
                                  builder->getCPU(), builder->getFeatures().getString()};
    return new absl::StatusOr<const HostTarget*>(target);
  }();
  return *host;
}

// The host target with JitOptions::target_cpu and target_features
// applied; InvalidArgument naming an unknown CPU or feature.
absl::StatusOr<std::unique_ptr<HostTarget>> TargetFor(const HostTarget& host,
                                                      const JitOptions& options) {
  // The host's machine knows the target's CPUs and features (asking one
  // made for an unknown CPU would print LLVM's warning).
  llvm::orc::JITTargetMachineBuilder host_builder = host.builder;
  auto machine = host_builder.createTargetMachine();
  if (!machine) return absl::InternalError(absl::StrCat("JIT: ", ToString(machine.takeError())));
  const llvm::MCSubtargetInfo& info = *(*machine)->getMCSubtargetInfo();
  if (!options.target_cpu.empty() && !info.isCPUStringValid(options.target_cpu)) {
    return absl::InvalidArgumentError(
        absl::StrCat("JIT: target cpu '", options.target_cpu, "' is not a CPU of ", host.triple));
  }
  const llvm::ArrayRef<llvm::SubtargetFeatureKV> known = info.getAllProcessorFeatures();
  const llvm::SubtargetFeatures changes(options.target_features);
  for (const std::string& feature : changes.getFeatures()) {
    const bool valid =
        feature.size() > 1 && (feature[0] == '+' || feature[0] == '-') &&
        std::any_of(known.begin(), known.end(), [&](const llvm::SubtargetFeatureKV& kv) {
          return feature.compare(1, std::string::npos, kv.Key) == 0;
        });
    if (!valid) {
      return absl::InvalidArgumentError(absl::StrCat("JIT: target feature '", feature,
                                                     "' is not +NAME or -NAME of a feature of ",
                                                     host.triple));
    }
  }
  auto target = std::make_unique<HostTarget>(host);
  if (!options.target_cpu.empty()) {
    // The CPU's own features, changed by target_features.
    target->cpu_name = options.target_cpu;
    target->cpu_features = options.target_features;
  } else if (!host.cpu_features.empty()) {
    target->cpu_features = absl::StrCat(host.cpu_features, ",", options.target_features);
  } else {
    target->cpu_features = options.target_features;
  }
  target->builder.setCPU(target->cpu_name);
  target->builder.getFeatures() = llvm::SubtargetFeatures(target->cpu_features);
  return target;
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

llvm::CodeGenOptLevel ToCodeGenLevel(int level) {
  switch (level) {
    case 0:
      return llvm::CodeGenOptLevel::None;
    case 1:
      return llvm::CodeGenOptLevel::Less;
    case 2:
      return llvm::CodeGenOptLevel::Default;
    default:
      return llvm::CodeGenOptLevel::Aggressive;
  }
}

bool UsesKernelPipeline(const JitOptions& options) {
  return options.kernel_pipeline &&
         (options.optimization_level == 1 || options.optimization_level == 2);
}

// Everything besides the IR that changes the code: the cache format, LLVM's
// version, the target, the options that change code and the LLVM options.
std::string CodeKey(const HostTarget& host, const JitOptions& options) {
  return absl::StrCat(kCacheFormat, "\nllvm ", LLVM_VERSION_STRING, "\n", host.triple, "\n",
                      host.cpu_name, "\n", host.cpu_features, "\nO", options.optimization_level,
                      " prefer512=", options.prefer_512_bit_vectors,
                      " slp=", options.slp_vectorization, " unroll=", options.loop_unrolling,
                      " kernel_pipeline=", UsesKernelPipeline(options),
                      options.position_independent ? " pic" : "", "\n", LlvmOptionsKey());
}

absl::string_view AsStringView(const llvm::MemoryBuffer& buffer) {
  return absl::string_view(buffer.getBufferStart(), buffer.getBufferSize());
}

// Marks !nontemporal the vector stores, aligned to their size, to memory
// other than the stack, in loops tagged kNonTemporalStoresLoopProperty (which
// the loop vectorizer keeps on the vector loop it makes). Done after the
// pipeline because a scalar store already !nontemporal at alignment 4 makes
// the vectorizer give up where the target has no unaligned non-temporal
// 2-element store (x86), and an under-aligned vector one is split into
// scalar stores by the x86 backend.
void MarkNonTemporalStores(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  llvm::MDNode* nontemporal = llvm::MDNode::get(
      context, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(context, llvm::APInt(32, 1))));
  const llvm::DataLayout& layout = module.getDataLayout();
  for (llvm::Function& function : module) {
    bool tagged = false;
    for (llvm::BasicBlock& block : function) {
      llvm::MDNode* loop_id = block.getTerminator() == nullptr
                                  ? nullptr
                                  : block.getTerminator()->getMetadata(llvm::LLVMContext::MD_loop);
      tagged |= loop_id != nullptr &&
                llvm::findOptionMDForLoopID(loop_id, kNonTemporalStoresLoopProperty) != nullptr;
    }
    if (!tagged) continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      if (llvm::findOptionMDForLoop(loop, kNonTemporalStoresLoopProperty) == nullptr) continue;
      for (llvm::BasicBlock* block : loop->blocks()) {
        for (llvm::Instruction& instruction : *block) {
          auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction);
          if (store == nullptr || !store->getValueOperand()->getType()->isVectorTy()) continue;
          const uint64_t size = layout.getTypeStoreSize(store->getValueOperand()->getType());
          if (store->getAlign().value() < size) continue;
          if (llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(store->getPointerOperand()))) {
            continue;
          }
          store->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
        }
      }
    }
  }
}

// f16 values compute in f32 and round after each op (the elemental
// emitter); InstCombine narrows those round trips back into half
// arithmetic, `fcmp` and `select` on <16 x half> included. x86 without
// AVX512-FP16 promotes a half vector add to f32 in 5 instructions but
// scalarizes a compare or select (~300 for a relu on 16 lanes: an f16 relu
// feeding a sum ran 45x slower than in f32). Compares widen to f32 (fpext
// is exact) and selects move the 16-bit patterns, which is the same.
void WidenHalfVectorCompares(llvm::Module& module) {
  auto half_vector = [](llvm::Type* type) {
    return type->isVectorTy() && type->getScalarType()->isHalfTy();
  };
  for (llvm::Function& function : module) {
    std::vector<llvm::Instruction*> work;
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        if ((llvm::isa<llvm::FCmpInst>(instruction) &&
             half_vector(instruction.getOperand(0)->getType())) ||
            (llvm::isa<llvm::SelectInst>(instruction) && half_vector(instruction.getType()))) {
          work.push_back(&instruction);
        }
      }
    }
    for (llvm::Instruction* instruction : work) {
      llvm::IRBuilder<> b(instruction);
      llvm::Value* replacement = nullptr;
      if (auto* compare = llvm::dyn_cast<llvm::FCmpInst>(instruction)) {
        auto* type = llvm::cast<llvm::VectorType>(compare->getOperand(0)->getType());
        auto* wide = llvm::VectorType::get(b.getFloatTy(), type->getElementCount());
        b.setFastMathFlags(compare->getFastMathFlags());
        replacement =
            b.CreateFCmp(compare->getPredicate(), b.CreateFPExt(compare->getOperand(0), wide),
                         b.CreateFPExt(compare->getOperand(1), wide));
      } else {
        auto* select = llvm::cast<llvm::SelectInst>(instruction);
        auto* type = llvm::cast<llvm::VectorType>(select->getType());
        auto* bits = llvm::VectorType::get(b.getInt16Ty(), type->getElementCount());
        replacement = b.CreateBitCast(
            b.CreateSelect(select->getCondition(), b.CreateBitCast(select->getTrueValue(), bits),
                           b.CreateBitCast(select->getFalseValue(), bits)),
            type);
      }
      instruction->replaceAllUsesWith(replacement);
      instruction->eraseFromParent();
    }
  }
}

}  // namespace

int CompileThreads(const JitOptions& options) {
  if (options.compile_threads > 0) return options.compile_threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hardware, 1u, 4u));
}

JitStats GetJitStats() {
  JitStats stats;
  stats.modules_optimized = modules_optimized.load();
  stats.object_cache_hits = object_cache_hits.load();
  stats.object_cache_writes = object_cache_writes.load();
  return stats;
}

struct Jit::Impl {
  JitOptions options;
  const HostTarget* host = nullptr;    // the host's, or `target`
  std::unique_ptr<HostTarget> target;  // JitOptions::target_cpu / target_features
  llvm::orc::JITTargetMachineBuilder machine_builder{llvm::Triple()};
  std::atomic<double> optimize_ms{0};
  std::atomic<double> codegen_ms{0};
  std::atomic<double> cache_ms{0};
  std::atomic<double> wall_ms{0};
  std::string last_cache_path;
  std::mutex mutex;  // serializes AddModules
  std::unique_ptr<llvm::orc::LLJIT> lljit;

  // One module's way through AddModules.
  struct Work {
    llvm::Module* module = nullptr;
    std::string before;      // IR text before optimization (cache key, hook)
    std::string after;       // IR text after optimization (hook)
    std::string cache_path;  // "" without cache_dir
    std::unique_ptr<llvm::MemoryBuffer> object;
    bool from_cache = false;
    absl::Status status;
  };

  void SetTargetAttributes(llvm::Module& module) const {
    for (llvm::Function& function : module) {
      if (function.isDeclaration()) continue;
      function.addFnAttr("target-cpu", host->cpu_name);
      function.addFnAttr("target-features", host->cpu_features);
      if (options.prefer_512_bit_vectors) function.addFnAttr("prefer-vector-width", "512");
    }
  }

  void Optimize(llvm::Module& module, llvm::TargetMachine* target_machine) const {
    if (options.optimization_level == 0) return;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = options.slp_vectorization;
    tuning.LoopUnrolling = options.loop_unrolling;
    // Instrumentation (what -time-passes and -print-after-all report) only
    // when AXLE_LLVM_OPTIONS may have asked for it.
    llvm::PassInstrumentationCallbacks instrumentation;
    std::optional<llvm::StandardInstrumentations> standard;
    if (!LlvmOptionsFromEnvironment().empty()) {
      standard.emplace(module.getContext(), /*DebugLogging=*/false);
      standard->registerCallbacks(instrumentation, &mam);
    }
    llvm::PassBuilder builder(target_machine, tuning, std::nullopt, &instrumentation);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes;
    if (UsesKernelPipeline(options)) {
      llvm::Error error = builder.parsePassPipeline(
          passes, KernelPipeline(options.slp_vectorization, options.loop_unrolling));
      CHECK(!error) << ToString(std::move(error));
    } else {
      passes = builder.buildPerModuleDefaultPipeline(ToLlvmLevel(options.optimization_level));
    }
    passes.run(module, mam);
    MarkNonTemporalStores(module);
    if (!absl::StrContains(host->cpu_features, "+avx512fp16")) WidenHalfVectorCompares(module);
  }

  // The cache key of `ir` (the module's text before optimization).
  std::string CacheKey(const std::string& ir) const {
    return Sha256Hex(absl::StrCat(CodeKey(*host, options), absl::string_view("\0", 1), ir));
  }

  // Optimizes and compiles work.module to work.object with
  // `target_machine` (one per thread); stores the object in the cache.
  void Compile(Work& work, llvm::TargetMachine& target_machine) {
    ++modules_optimized;
    auto optimize_start = Clock::now();
    Optimize(*work.module, &target_machine);
    optimize_ms.fetch_add(MillisecondsSince(optimize_start));
    if (options.ir_after_optimization) work.after = ModuleText(*work.module);
    auto codegen_start = Clock::now();
    llvm::orc::SimpleCompiler compiler(target_machine);
    auto object = compiler(*work.module);
    codegen_ms.fetch_add(MillisecondsSince(codegen_start));
    if (!object) {
      work.status = absl::InternalError(absl::StrCat("JIT: ", ToString(object.takeError())));
      return;
    }
    work.object = std::move(*object);
    if (!work.cache_path.empty()) {
      auto cache_start = Clock::now();
      if (WriteCheckedFile(work.cache_path, kCacheMagic, AsStringView(*work.object))) {
        ++object_cache_writes;
      }
      cache_ms.fetch_add(MillisecondsSince(cache_start));
    }
  }

  // Compiles every work item without an object, on up to compile_threads
  // threads (this one included).
  void CompileAll(std::vector<Work>& works) {
    std::vector<Work*> pending;
    for (Work& work : works) {
      if (work.object == nullptr) pending.push_back(&work);
    }
    std::atomic<size_t> next{0};
    auto worker = [&] {
      std::unique_ptr<llvm::TargetMachine> target_machine;
      for (size_t i = next++; i < pending.size(); i = next++) {
        if (target_machine == nullptr) {
          auto created = machine_builder.createTargetMachine();
          if (!created) {
            pending[i]->status =
                absl::InternalError(absl::StrCat("JIT: ", ToString(created.takeError())));
            continue;
          }
          target_machine = std::move(*created);
        }
        Compile(*pending[i], *target_machine);
      }
    };
    const size_t threads = std::min<size_t>(CompileThreads(options), pending.size());
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(worker);
    worker();
    for (std::thread& helper : helpers) helper.join();
  }
};

Jit::Jit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Jit::~Jit() = default;

absl::StatusOr<std::unique_ptr<Jit>> Jit::Create(const JitOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  absl::StatusOr<const HostTarget*> host = GetHostTarget();
  if (!host.ok()) return host.status();
  impl->host = *host;
  if (!options.target_cpu.empty() || !options.target_features.empty()) {
    AXLE_ASSIGN_OR_RETURN(impl->target, TargetFor(**host, options));
    impl->host = impl->target.get();
  }

  llvm::orc::JITTargetMachineBuilder builder = impl->host->builder;
  builder.setCodeGenOptLevel(ToCodeGenLevel(options.optimization_level));
  if (options.position_independent) {
    builder.setRelocationModel(llvm::Reloc::PIC_);
    builder.setCodeModel(llvm::CodeModel::Small);
  }
  impl->machine_builder = builder;
  auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(builder).create();
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

const std::string& Jit::target_triple() const { return impl_->host->triple; }
const std::string& Jit::data_layout() const { return impl_->host->data_layout; }
const std::string& Jit::cpu_name() const { return impl_->host->cpu_name; }
const std::string& Jit::cpu_features() const { return impl_->host->cpu_features; }
int64_t Jit::last_level_cache_bytes() const {
  return impl_->options.last_level_cache_bytes > 0 ? impl_->options.last_level_cache_bytes
                                                   : HostCacheSizes().last_level_bytes;
}

absl::Status Jit::AddModule(std::unique_ptr<llvm::Module> module,
                            std::unique_ptr<llvm::LLVMContext> context) {
  std::vector<std::unique_ptr<llvm::Module>> modules;
  std::vector<std::unique_ptr<llvm::LLVMContext>> contexts;
  modules.push_back(std::move(module));
  contexts.push_back(std::move(context));
  return AddModules(std::move(modules), std::move(contexts));
}

// Takes both by value: the call owns the modules and their contexts until
// their code is compiled, and they go with it.
absl::Status Jit::AddModules(
    std::vector<std::unique_ptr<llvm::Module>> modules,
    std::vector<std::unique_ptr<llvm::LLVMContext>>
        contexts) {  // NOLINT(performance-unnecessary-value-param): owned, see above

  CHECK_EQ(modules.size(), contexts.size());
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const auto wall_start = Clock::now();
  const bool use_cache = !impl_->options.cache_dir.empty();
  std::vector<Impl::Work> works(modules.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    llvm::Module& module = *modules[i];
    Impl::Work& work = works[i];
    work.module = &module;
    auto start = Clock::now();
    module.setTargetTriple(impl_->host->triple);
    module.setDataLayout(impl_->host->data_layout);
    std::string verifier_errors;
    llvm::raw_string_ostream verifier_os(verifier_errors);
    if (llvm::verifyModule(module, &verifier_os)) {
      return absl::InternalError(
          absl::StrCat("JIT: invalid LLVM module ", module.getName().str(), ": ", verifier_errors));
    }
    impl_->optimize_ms.fetch_add(MillisecondsSince(start));
    if (use_cache || impl_->options.ir_before_optimization) work.before = ModuleText(module);
    if (use_cache) {
      auto cache_start = Clock::now();
      std::error_code ignored;
      std::filesystem::create_directories(impl_->options.cache_dir, ignored);
      work.cache_path =
          absl::StrCat(impl_->options.cache_dir, "/", impl_->CacheKey(work.before), ".o");
      impl_->last_cache_path = work.cache_path;
      CheckedFileRead read = ReadCheckedFile(work.cache_path, kCacheMagic);
      if (read.payload.has_value()) {
        work.object = llvm::MemoryBuffer::getMemBufferCopy(*read.payload, work.cache_path);
      }
      work.from_cache = work.object != nullptr;
      if (work.from_cache) ++object_cache_hits;
      impl_->cache_ms.fetch_add(MillisecondsSince(cache_start));
    }
    if (work.object == nullptr) {
      impl_->SetTargetAttributes(module);
      if (impl_->options.ir_before_optimization) {
        impl_->options.ir_before_optimization(module.getName().str(), work.before);
      }
    }
  }
  impl_->CompileAll(works);
  for (size_t i = 0; i < works.size(); ++i) {
    Impl::Work& work = works[i];
    AXLE_RETURN_IF_ERROR(work.status);
    if (!work.after.empty()) {
      impl_->options.ir_after_optimization(modules[i]->getName().str(), work.after);
    }
    llvm::Error error = impl_->lljit->addObjectFile(std::move(work.object));
    if (error && work.from_cache) {
      // Valid by its checksum but unusable: compile the module instead.
      llvm::consumeError(std::move(error));
      impl_->SetTargetAttributes(*work.module);
      auto target_machine = impl_->machine_builder.createTargetMachine();
      if (!target_machine) {
        return absl::InternalError(absl::StrCat("JIT: ", ToString(target_machine.takeError())));
      }
      impl_->Compile(work, **target_machine);
      AXLE_RETURN_IF_ERROR(work.status);
      error = impl_->lljit->addObjectFile(std::move(work.object));
    }
    if (error) return absl::InternalError(absl::StrCat("JIT: ", ToString(std::move(error))));
  }
  // The objects own their code; the IR is no longer needed.
  impl_->wall_ms.fetch_add(MillisecondsSince(wall_start));
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

Jit::Timings Jit::timings() const {
  Timings timings;
  timings.optimize_ms = impl_->optimize_ms.load();
  timings.codegen_ms = impl_->codegen_ms.load();
  timings.cache_ms = impl_->cache_ms.load();
  timings.wall_ms = impl_->wall_ms.load();
  return timings;
}

std::string Jit::last_cache_path() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_cache_path;
}

}  // namespace axle::cpu
