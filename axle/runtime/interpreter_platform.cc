// The "Interpreter" platform: executables that run the reference
// interpreter (axle/eval) on host buffers, with Host custom calls.
//
// Compiling runs two passes. JAX's sharding annotations become the
// identities they are on one device (sharding_remover.h), and bf16
// reductions accumulate in f32 (bf16_reductions_in_f32.h), as XLA:CPU and XLA:GPU compile them, so
// that the platform the cpu tests compare against has the numerics of XLA's compiled backends. The
// evaluator itself folds a reduction in the type its HLO says, as XLA's HloEvaluator does (XLA's
// own interpreter platform runs no float normalization, and sums bf16 in bf16); constant folding
// and the pass tests use it so.
#include <mutex>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"
#include "axle/hlo/transforms/sharding_remover.h"
#include "axle/runtime/executable.h"
#include "axle/runtime/host_custom_call.h"
#include "axle/runtime/platform.h"
#include "axle/runtime/transfer.h"

namespace axle {
namespace {

class InterpreterExecutable : public Executable {
 public:
  using Executable::Executable;

 protected:
  absl::Status ExecuteOnBuffers(const ExecutableRunOptions& options,
                                absl::Span<const ShapedBuffer* const> arguments,
                                const ShapedBuffer& result) const override {
    std::vector<Literal> literals;
    literals.reserve(arguments.size());
    for (size_t i = 0; i < arguments.size(); ++i) {
      AXLE_ASSIGN_OR_RETURN(Literal literal,
                            TransferLiteralFromDevice(*arguments[i], absl::StrCat("argument ", i)));
      literals.push_back(std::move(literal));
    }
    std::vector<const Literal*> pointers;
    pointers.reserve(literals.size());
    for (const Literal& literal : literals) pointers.push_back(&literal);
    // One evaluator per run: evaluators cache per-computation plans and are
    // not thread-safe; the module itself is only read.
    HloEvaluator evaluator;
    evaluator.set_seed(static_cast<uint64_t>(options.rng_seed()));
    InstallHostCustomCalls(&evaluator);
    AXLE_ASSIGN_OR_RETURN(Literal value, evaluator.Evaluate(module(), pointers));
    return TransferLiteralIntoBuffer(value, result);
  }
};

class InterpreterCompiler : public Compiler {
 public:
  explicit InterpreterCompiler(const se::Platform* platform) : platform_(platform) {}
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) override {
    AXLE_RETURN_IF_ERROR(ShardingRemover().Run(module.get()).status());
    AXLE_RETURN_IF_ERROR(Bf16ReductionsInF32().Run(module.get()).status());
    return std::unique_ptr<Executable>(
        new InterpreterExecutable(std::shared_ptr<const HloModule>(std::move(module)), platform_));
  }

 private:
  const se::Platform* platform_;
};

}  // namespace

void RegisterInterpreterPlatform() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The platform outlives its compiler (both live for the process).
    static se::Platform* platform = nullptr;
    auto owned = std::make_unique<se::Platform>(
        "Interpreter", std::vector<std::string>{"interpreter"}, kHostPlatformName,
        [] { return std::make_unique<InterpreterCompiler>(platform); });
    platform = owned.get();
    se::PlatformManager::RegisterPlatform(std::move(owned)).IgnoreError();
  });
}

}  // namespace axle
