//===- delinearize.h - A linear element number as a multi-index ------------===//
//
// The row-major multi-index of a linear i64, as the elemental emitter's
// reshapes and the CUDA backend's hand-written kernels need it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_DELINEARIZE_H_
#define AXLE_LLVM_IR_DELINEARIZE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/IRBuilder.h"

namespace axle::llvm_ir {

// The row-major multi-index of `linear` (an i64) in `dimensions`.
IrIndex Delinearize(llvm::IRBuilderBase& b, llvm::Value* linear,
                    absl::Span<const int64_t> dimensions);

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_DELINEARIZE_H_
