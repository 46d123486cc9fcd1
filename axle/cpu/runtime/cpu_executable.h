//===- cpu_executable.h - Programs compiled for the CPU --------------------===//
//
// A CpuExecutable runs the entry computation of a module the CPU compiler
// has prepared: after fusion every array-producing instruction of the entry
// is a thunk (thunk.h; today a fusion compiled into a loop or reduction
// kernel), and the rest is plumbing (parameter, constant, tuple,
// get-tuple-element, bitcast). Thunks run in the entry's post order; each
// reads its operands' buffers and writes its own. Temporaries come from the run's allocator (a pool that
// keeps its blocks, so steady-state runs do not fault pages in); the root's
// leaves are copied into the result buffers at the end.
//
// This is the first CPU executable: no buffer assignment or arena yet, no
// thread pool, no oneDNN; anything but the ops above is rejected by the
// compiler with Unimplemented naming the op.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_
#define AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_

#include <memory>
#include <vector>

#include "axle/core/literal.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

// Where an array value lives during a run.
struct ValueSlot {
  enum class Kind { kParameter, kConstant, kTemporary };
  Kind kind = Kind::kTemporary;
  int64_t parameter = 0;        // kParameter: which argument
  ShapeIndex parameter_index;   // ... and where in it
  int64_t constant = 0;         // kConstant: index into constants
  int64_t temporary = 0;        // kTemporary: index into the run's temporaries
  int64_t size_bytes = 0;
};

struct CpuProgram {
  std::vector<ValueSlot> values;
  std::vector<Literal> constants;
  std::vector<int64_t> temporary_sizes;
  // Run in order.
  std::vector<std::unique_ptr<Thunk>> thunks;
  // For each leaf of the result (pre-order over array leaves): its value.
  std::vector<std::pair<ShapeIndex, int64_t>> result_leaves;
};

class CpuExecutable : public Executable {
 public:
  CpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                CpuProgram program);

 protected:
  absl::Status ExecuteOnBuffers(const ExecutableRunOptions& options,
                                absl::Span<const ShapedBuffer* const> arguments,
                                const ShapedBuffer& result) const override;

 private:
  CpuProgram program_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CPU_EXECUTABLE_H_
