//===- linalg_thunk.h - fft, cholesky, triangular-solve, ragged/scaled dot -===//
//
// The ops that run the interpreter's own C++ kernels (axle/eval/kernels.h:
// fft.cc, linalg.cc, dot.cc: cholesky, triangular-solve, ragged-dot,
// scaled-dot, and the fft shapes fft_thunk.cc leaves: those XLA's verifier
// rejects) on the executable's buffers, so both platforms give the
// same values: the operands are copied into literals, the kernel runs, its
// result is copied out. Plain scalar code, no LLVM: a correct fallback until
// these ops get emitters (or oneMKL/LAPACK calls) of their own.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_LINALG_THUNK_H_
#define AXLE_CPU_RUNTIME_LINALG_THUNK_H_

#include <string>
#include <vector>

#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

class InterpreterKernelThunk : public Thunk {
 public:
  // `instruction` lives in the executable's module, which outlives the
  // thunk.
  InterpreterKernelThunk(const HloInstruction* instruction, std::vector<int64_t> operand_values,
                         int64_t result_value)
      : Thunk(instruction->name()),
        instruction_(instruction),
        operand_values_(std::move(operand_values)),
        result_value_(result_value) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {result_value_}};
  }
  // Unimplemented naming the op: it evaluates its instruction at run time.
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  const HloInstruction* instruction_;
  std::vector<int64_t> operand_values_;
  int64_t result_value_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_LINALG_THUNK_H_
