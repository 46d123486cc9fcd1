//===- target_hooks.h - What the elemental emitter asks of its target -----===//
//
// The elemental emitter (elemental_ir_emitter.h) writes target-neutral LLVM
// IR, except for the few things only a target knows: which functions compute
// the transcendentals it does not expand inline (libm on the host, libdevice
// on NVPTX), how an f32 is rounded to an 8- or 4-bit float and how complex
// math is computed (helpers the runtime provides), how memory is prefetched,
// and how wide a vector the target prefers. A backend implements this
// interface once (axle/cpu/cpu_target_hooks.h) and hands it to every
// emitter it creates.
//
// Every hook emits at the builder's insertion point, into the builder's
// module, and leaves the builder after what it emitted. Values are scalars.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_TARGET_HOOKS_H_
#define AXLE_LLVM_IR_TARGET_HOOKS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_opcode.h"
#include "llvm/IR/IRBuilder.h"

namespace axle::llvm_ir {

// The real functions the emitter leaves to the target. All take and return
// one floating type (float or double); kPow, kHypot and kAtan2 take two
// arguments (atan2(y, x), hypot(x, y), pow(x, y)), the others one.
// (target_hooks.cc names them in this order.)
enum class MathFunction {
  kExp,
  kLog,
  kSin,
  kCos,
  kPow,
  kCbrt,
  kExpm1,
  kLog1p,
  kTanh,
  kErf,
  kTan,
  kAcos,
  kAcosh,
  kAsin,
  kAsinh,
  kAtan,
  kAtanh,
  kCosh,
  kSinh,
  kHypot,
  kAtan2,
};

// The function's C name for doubles ("exp", "atan2").
absl::string_view MathFunctionName(MathFunction function);
// How many arguments `function` takes (1 or 2).
int MathFunctionArity(MathFunction function);

class TargetHooks {
 public:
  virtual ~TargetHooks() = default;

  // function(args...), the arguments all float or all double.
  virtual llvm::Value* EmitMathCall(llvm::IRBuilderBase& b, MathFunction function,
                                    absl::Span<llvm::Value* const> args) const = 0;

  // The complex `opcode` of c64 or c128 values `args` ({float, float} or
  // {double, double} structs), returned as such a struct: divide (C99
  // Annex G), power and atan2 (y, x) on two arguments; sqrt, rsqrt, sine, cosine, tan,
  // tanh, sinh, cosh, asin, acos, atan, asinh, acosh, atanh,
  // exponential-minus-one, log-plus-one and logistic on one. The emitter
  // computes the other complex ops itself.
  virtual llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                                       absl::Span<llvm::Value* const> args) const = 0;

  // A hint that the `bytes` bytes at `base` + `byte_offset` (an i64) will
  // soon be read. May emit nothing.
  virtual void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* base, llvm::Value* byte_offset,
                            int64_t bytes) const = 0;

  // The width in bits of the vectors the target prefers; where the emitter
  // forces a vector width on a loop, it takes this many bits of elements.
  virtual int PreferredVectorBits() const = 0;
};

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_TARGET_HOOKS_H_
