//===- thunk.h - One step of a CPU executable ------------------------------===//
//
// A CpuExecutable is a sequence of thunks run in order. Each thunk reads
// and writes array buffers named by value ids (see CpuProgram); at run time
// ThunkContext::address(value) gives a value's buffer for this run.
// Thunks are created at compile time and must be safe to run from several
// threads at once (each run has its own ThunkContext).
//
//   KernelThunk   a loop or reduction kernel compiled by the LLVM emitters.
//   (oneDNN dot/convolution, custom calls, control flow: later thunks.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_THUNK_H_
#define AXLE_CPU_RUNTIME_THUNK_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

struct ThunkContext {
  // The buffer of value `id` in this run.
  std::function<void*(int64_t id)> address;
  const ExecutableRunOptions* run_options = nullptr;
};

class Thunk {
 public:
  explicit Thunk(std::string name) : name_(std::move(name)) {}
  virtual ~Thunk() = default;
  // The HLO instruction it implements (for errors and dumps).
  const std::string& name() const { return name_; }
  virtual absl::Status Execute(const ThunkContext& context) const = 0;

 private:
  std::string name_;
};

// Runs a compiled kernel on operands then outputs (kernel signature in
// loop_kernel_emitter.h).
class KernelThunk : public Thunk {
 public:
  KernelThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
              std::vector<int64_t> operand_values, std::vector<int64_t> output_values)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        operand_values_(std::move(operand_values)),
        output_values_(std::move(output_values)) {}

  absl::Status Execute(const ThunkContext& context) const override;

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<int64_t> operand_values_;
  std::vector<int64_t> output_values_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_THUNK_H_
