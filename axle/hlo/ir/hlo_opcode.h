//===- hlo_opcode.h - The HLO opcode table ---------------------------------===//
//
// One table drives the opcode enum, the text names, arity and properties. The
// semantics of each opcode are XLA's ("Operation semantics"); the notes that
// pin down the corner cases Axle's evaluator and backends follow are in
// hlo_semantics.md beside this file.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_OPCODE_H_
#define AXLE_HLO_IR_HLO_OPCODE_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace axle {

// Arity: a fixed operand count, or kVariadic.
inline constexpr int kVariadic = -1;

// Property flags.
inline constexpr int kNone = 0;
inline constexpr int kElementwise = 1 << 0;  // out[i] = f(in0[i], in1[i], ...)
inline constexpr int kComparison = 1 << 1;
inline constexpr int kCollective = 1 << 2;  // needs several devices in general
inline constexpr int kAsyncStart = 1 << 3;
inline constexpr int kAsyncDone = 1 << 4;
inline constexpr int kSideEffect = 1 << 5;  // never removed or reordered
// A transcendental function (XLA's cost analysis counts these apart):
// costly per element, worth fusing only once.
inline constexpr int kTranscendental = 1 << 6;

// V(enum, "text-name", arity, properties)
#define AXLE_HLO_OPCODE_LIST(V)                                                                \
  V(kAbs, "abs", 1, kElementwise)                                                              \
  V(kAdd, "add", 2, kElementwise)                                                              \
  V(kAddDependency, "add-dependency", 2, kNone)                                                \
  V(kAfterAll, "after-all", kVariadic, kNone)                                                  \
  V(kAllGather, "all-gather", kVariadic, kCollective)                                          \
  V(kAllGatherDone, "all-gather-done", 1, kCollective | kAsyncDone)                            \
  V(kAllGatherStart, "all-gather-start", kVariadic, kCollective | kAsyncStart)                 \
  V(kAllReduce, "all-reduce", kVariadic, kCollective)                                          \
  V(kAllReduceDone, "all-reduce-done", 1, kCollective | kAsyncDone)                            \
  V(kAllReduceStart, "all-reduce-start", kVariadic, kCollective | kAsyncStart)                 \
  V(kAllToAll, "all-to-all", kVariadic, kCollective)                                           \
  V(kAcos, "acos", 1, kElementwise | kTranscendental)                                          \
  V(kAcosh, "acosh", 1, kElementwise | kTranscendental)                                        \
  V(kAnd, "and", 2, kElementwise)                                                              \
  V(kAsin, "asin", 1, kElementwise | kTranscendental)                                          \
  V(kAsinh, "asinh", 1, kElementwise | kTranscendental)                                        \
  V(kAsyncDone, "async-done", 1, kAsyncDone)                                                   \
  V(kAsyncStart, "async-start", kVariadic, kAsyncStart)                                        \
  V(kAsyncUpdate, "async-update", 1, kNone)                                                    \
  V(kAtan, "atan", 1, kElementwise | kTranscendental)                                          \
  V(kAtanh, "atanh", 1, kElementwise | kTranscendental)                                        \
  V(kAtan2, "atan2", 2, kElementwise | kTranscendental)                                        \
  V(kBatchNormGrad, "batch-norm-grad", 5, kNone)                                               \
  V(kBatchNormInference, "batch-norm-inference", 5, kNone)                                     \
  V(kBatchNormTraining, "batch-norm-training", 3, kNone)                                       \
  V(kBitcast, "bitcast", 1, kNone)                                                             \
  V(kBitcastConvert, "bitcast-convert", 1, kNone)                                              \
  V(kBroadcast, "broadcast", 1, kNone)                                                         \
  V(kCall, "call", kVariadic, kNone)                                                           \
  V(kCbrt, "cbrt", 1, kElementwise | kTranscendental)                                          \
  V(kCeil, "ceil", 1, kElementwise)                                                            \
  V(kCholesky, "cholesky", 1, kNone)                                                           \
  V(kClamp, "clamp", 3, kElementwise)                                                          \
  V(kClz, "count-leading-zeros", 1, kElementwise)                                              \
  V(kCollectiveBroadcast, "collective-broadcast", kVariadic, kCollective)                      \
  V(kCollectivePermute, "collective-permute", kVariadic, kCollective)                          \
  V(kCollectivePermuteDone, "collective-permute-done", 1, kCollective | kAsyncDone)            \
  V(kCollectivePermuteStart, "collective-permute-start", kVariadic, kCollective | kAsyncStart) \
  V(kCompare, "compare", 2, kElementwise | kComparison)                                        \
  V(kComplex, "complex", 2, kElementwise)                                                      \
  V(kConcatenate, "concatenate", kVariadic, kNone)                                             \
  V(kConditional, "conditional", kVariadic, kNone)                                             \
  V(kConstant, "constant", 0, kNone)                                                           \
  V(kConvert, "convert", 1, kElementwise)                                                      \
  V(kConvolution, "convolution", 2, kNone)                                                     \
  V(kCopy, "copy", 1, kElementwise)                                                            \
  V(kCopyDone, "copy-done", 1, kAsyncDone)                                                     \
  V(kCopyStart, "copy-start", 1, kAsyncStart)                                                  \
  V(kCos, "cosine", 1, kElementwise | kTranscendental)                                         \
  V(kCosh, "cosh", 1, kElementwise | kTranscendental)                                          \
  V(kCustomCall, "custom-call", kVariadic, kNone)                                              \
  V(kDivide, "divide", 2, kElementwise)                                                        \
  V(kDomain, "domain", 1, kNone)                                                               \
  V(kDot, "dot", kVariadic, kNone)                                                             \
  V(kDynamicReshape, "dynamic-reshape", kVariadic, kNone)                                      \
  V(kDynamicSlice, "dynamic-slice", kVariadic, kNone)                                          \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kVariadic, kNone)                             \
  V(kErf, "erf", 1, kElementwise | kTranscendental)                                            \
  V(kExp, "exponential", 1, kElementwise | kTranscendental)                                    \
  V(kExpm1, "exponential-minus-one", 1, kElementwise | kTranscendental)                        \
  V(kFft, "fft", 1, kNone)                                                                     \
  V(kFloor, "floor", 1, kElementwise)                                                          \
  V(kFusion, "fusion", kVariadic, kNone)                                                       \
  V(kGather, "gather", 2, kNone)                                                               \
  V(kGetDimensionSize, "get-dimension-size", 1, kNone)                                         \
  V(kGetTupleElement, "get-tuple-element", 1, kNone)                                           \
  V(kImag, "imag", 1, kElementwise)                                                            \
  V(kInfeed, "infeed", 1, kSideEffect)                                                         \
  V(kIota, "iota", 0, kNone)                                                                   \
  V(kIsFinite, "is-finite", 1, kElementwise)                                                   \
  V(kLog, "log", 1, kElementwise | kTranscendental)                                            \
  V(kLog1p, "log-plus-one", 1, kElementwise | kTranscendental)                                 \
  V(kLogistic, "logistic", 1, kElementwise | kTranscendental)                                  \
  V(kMap, "map", kVariadic, kNone)                                                             \
  V(kMaximum, "maximum", 2, kElementwise)                                                      \
  V(kMinimum, "minimum", 2, kElementwise)                                                      \
  V(kMultiply, "multiply", 2, kElementwise)                                                    \
  V(kNegate, "negate", 1, kElementwise)                                                        \
  V(kNot, "not", 1, kElementwise)                                                              \
  V(kOptimizationBarrier, "opt-barrier", 1, kNone)                                             \
  V(kOr, "or", 2, kElementwise)                                                                \
  V(kOutfeed, "outfeed", 2, kSideEffect)                                                       \
  V(kPad, "pad", 2, kNone)                                                                     \
  V(kParameter, "parameter", 0, kNone)                                                         \
  V(kPartitionId, "partition-id", 0, kNone)                                                    \
  V(kPopulationCount, "popcnt", 1, kElementwise)                                               \
  V(kPower, "power", 2, kElementwise | kTranscendental)                                        \
  V(kRaggedAllToAll, "ragged-all-to-all", 6, kCollective)                                      \
  V(kRaggedDot, "ragged-dot", 3, kNone)                                                        \
  V(kReal, "real", 1, kElementwise)                                                            \
  V(kRecv, "recv", 1, kSideEffect)                                                             \
  V(kRecvDone, "recv-done", 1, kSideEffect)                                                    \
  V(kReduce, "reduce", kVariadic, kNone)                                                       \
  V(kReducePrecision, "reduce-precision", 1, kElementwise)                                     \
  V(kReduceScatter, "reduce-scatter", kVariadic, kCollective)                                  \
  V(kReduceWindow, "reduce-window", kVariadic, kNone)                                          \
  V(kRemainder, "remainder", 2, kElementwise)                                                  \
  V(kReplicaId, "replica-id", 0, kNone)                                                        \
  V(kReshape, "reshape", 1, kNone)                                                             \
  V(kReverse, "reverse", 1, kNone)                                                             \
  V(kRng, "rng", kVariadic, kSideEffect)                                                       \
  V(kRngBitGenerator, "rng-bit-generator", 1, kNone)                                           \
  V(kRngGetAndUpdateState, "rng-get-and-update-state", 0, kSideEffect)                         \
  V(kRoundNearestAfz, "round-nearest-afz", 1, kElementwise)                                    \
  V(kRoundNearestEven, "round-nearest-even", 1, kElementwise)                                  \
  V(kRsqrt, "rsqrt", 1, kElementwise | kTranscendental)                                        \
  V(kScaledDot, "scaled-dot", 4, kNone)                                                        \
  V(kScan, "scan", kVariadic, kNone)                                                           \
  V(kScatter, "scatter", kVariadic, kNone)                                                     \
  V(kSelect, "select", 3, kElementwise)                                                        \
  V(kSelectAndScatter, "select-and-scatter", 3, kNone)                                         \
  V(kSend, "send", 2, kSideEffect)                                                             \
  V(kSendDone, "send-done", 1, kSideEffect)                                                    \
  V(kSetDimensionSize, "set-dimension-size", 2, kNone)                                         \
  V(kShiftLeft, "shift-left", 2, kElementwise)                                                 \
  V(kShiftRightArithmetic, "shift-right-arithmetic", 2, kElementwise)                          \
  V(kShiftRightLogical, "shift-right-logical", 2, kElementwise)                                \
  V(kSign, "sign", 1, kElementwise)                                                            \
  V(kSin, "sine", 1, kElementwise | kTranscendental)                                           \
  V(kSinh, "sinh", 1, kElementwise | kTranscendental)                                          \
  V(kSlice, "slice", 1, kNone)                                                                 \
  V(kSort, "sort", kVariadic, kNone)                                                           \
  V(kSqrt, "sqrt", 1, kElementwise | kTranscendental)                                          \
  V(kStochasticConvert, "stochastic-convert", 2, kElementwise)                                 \
  V(kSubtract, "subtract", 2, kElementwise)                                                    \
  V(kTan, "tan", 1, kElementwise | kTranscendental)                                            \
  V(kTanh, "tanh", 1, kElementwise | kTranscendental)                                          \
  V(kTopK, "topk", 1, kNone)                                                                   \
  V(kTranspose, "transpose", 1, kNone)                                                         \
  V(kTriangularSolve, "triangular-solve", 2, kNone)                                            \
  V(kTuple, "tuple", kVariadic, kNone)                                                         \
  V(kWhile, "while", 1, kNone)                                                                 \
  V(kXor, "xor", 2, kElementwise)

enum class HloOpcode : int {
#define AXLE_OPCODE_ENUM_(e, name, arity, props) e,
  AXLE_HLO_OPCODE_LIST(AXLE_OPCODE_ENUM_)
#undef AXLE_OPCODE_ENUM_
};

inline constexpr int kHloOpcodeCount = 0
#define AXLE_OPCODE_COUNT_(e, name, arity, props) +1
    AXLE_HLO_OPCODE_LIST(AXLE_OPCODE_COUNT_)
#undef AXLE_OPCODE_COUNT_
    ;

// "add", "get-tuple-element", ...
absl::string_view HloOpcodeString(HloOpcode opcode);
std::optional<HloOpcode> StringToHloOpcode(absl::string_view name);
// The fixed operand count, or kVariadic.
int HloOpcodeArity(HloOpcode opcode);
int HloOpcodeProperties(HloOpcode opcode);

inline bool HloOpcodeIsElementwise(HloOpcode op) { return HloOpcodeProperties(op) & kElementwise; }
inline bool HloOpcodeIsCollective(HloOpcode op) { return HloOpcodeProperties(op) & kCollective; }
inline bool HloOpcodeIsAsyncStart(HloOpcode op) { return HloOpcodeProperties(op) & kAsyncStart; }
inline bool HloOpcodeIsAsyncDone(HloOpcode op) { return HloOpcodeProperties(op) & kAsyncDone; }
inline bool HloOpcodeHasSideEffect(HloOpcode op) { return HloOpcodeProperties(op) & kSideEffect; }
inline bool HloOpcodeIsTranscendental(HloOpcode op) {
  return HloOpcodeProperties(op) & kTranscendental;
}

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_OPCODE_H_
