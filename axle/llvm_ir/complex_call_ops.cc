//===- complex_call_ops.cc - The complex ops a target computes -------------===//
#include "axle/llvm_ir/complex_call_ops.h"

namespace axle::llvm_ir {

bool IsComplexCallOpcode(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDivide:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kSinh:
    case HloOpcode::kCosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAcos:
    case HloOpcode::kAtan:
    case HloOpcode::kAsinh:
    case HloOpcode::kAcosh:
    case HloOpcode::kAtanh:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
      return true;
    default:
      return false;
  }
}

}  // namespace axle::llvm_ir
