//===- emitted_kernel_internal.h - Helpers of the dot and convolution loops ===//
//
// What the emitted kernels (loop_kernel_emitter.cc, dot_loop_emitter.cc,
// convolution_loop_emitter.cc) share: the pair
// of functions every emitted kernel is (an always-inline body with noalias
// buffers, and the wrapper with the loop kernel's signature), an epilogue
// constant as a value, and an instruction's fingerprint for a kernel's key.
// Internal to axle/cpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_EMITTED_KERNEL_INTERNAL_H_
#define AXLE_CPU_EMITTED_KERNEL_INTERNAL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {

// Emits `void name(void** buffers, int64_t begin, int64_t end)`, which loads
// the `num_buffers` buffer pointers and calls the internal always-inline
// `name.body(ptr noalias..., begin, end)` (the first `num_read_only`
// buffers, the inputs, read-only). `emit_body` fills the body at `b`'s
// position with its arguments (the body function is
// b.GetInsertBlock()->getParent()), without its return; when it fails,
// nothing is left in `module`.
using KernelBodyEmitter = std::function<absl::Status(const std::vector<llvm::Value*>& buffers,
                                                     llvm::Value* begin, llvm::Value* end)>;
absl::Status EmitKernelFunctions(llvm::Module* module, llvm::IRBuilderBase& b,
                                 absl::string_view name, int num_buffers, int num_read_only,
                                 const KernelBodyEmitter& emit_body);

// The value of the scalar `literal` (loaded from a private constant global,
// which LLVM folds).
llvm::Value* EmitScalarLiteral(llvm_ir::ElementalIrEmitter& elemental, llvm::Module* module,
                               const Literal& literal);

// `instruction`'s structural fingerprint ignoring its operands and names
// (hlo_structural_hash.h): what identifies an epilogue op in a kernel's key.
std::string InstructionKey(const HloInstruction& instruction);

}  // namespace axle::cpu

#endif  // AXLE_CPU_EMITTED_KERNEL_INTERNAL_H_
