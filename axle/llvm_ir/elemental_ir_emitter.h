//===- elemental_ir_emitter.h - One element of an HLO op as LLVM IR --------===//
//
// Given an HLO instruction and, for each operand, a generator that emits the
// operand's element at a multi-index, emits the instruction's element at a
// multi-index. Covers the elementwise ops (unary, binary, ternary, compare,
// convert, bitcast-convert, reduce-precision, stochastic-convert), the ops
// that only remap indices (broadcast, reshape, bitcast, transpose, slice,
// concatenate, pad, iota, reverse, dynamic-slice, dynamic-update-slice,
// gather, constant, copy) and the ops that apply a scalar computation inline
// (map, reduce, reduce-window: elemental_reduction.cc). Anything else is an
// Unimplemented error naming the op.
//
// A tuple-shaped op (variadic reduce, reduce-window) yields an LLVM literal
// struct of its elements' values; get-tuple-element extracts one.
//
// reduce and reduce-window emit loops inside the element. A value emitted in
// a loop body is only usable inside it: callers that cache values check
// InScope(scope at emission) before reusing one.
//
// Values while computing ("value types"):
//   pred -> i1; sN/uN -> iN (so s4 arithmetic wraps in 4 bits);
//   f32 -> float, f64 -> double;
//   f16, bf16, f8*, f4 -> float holding a value of the narrow type: every
//     op's result is rounded to the type (nearest even), as XLA does;
//   c64 -> {float, float}, c128 -> {double, double}.
// In memory elements have their storage type (pred and sub-byte ints take a
// byte, narrow floats their bits); Load/StoreElement convert.
//
// Target-neutral: what only a target knows (the functions that compute
// transcendentals, the f8/f4 rounding and complex math helpers, prefetches,
// the preferred vector width) comes from the TargetHooks it is given
// (target_hooks.h). This header includes LLVM: backends include it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_ELEMENTAL_IR_EMITTER_H_
#define AXLE_LLVM_IR_ELEMENTAL_IR_EMITTER_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/llvm_ir/target_hooks.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::llvm_ir {

// One i64 value per dimension of the shape being indexed.
using IrIndex = std::vector<llvm::Value*>;
using ElementGenerator = std::function<absl::StatusOr<llvm::Value*>(const IrIndex&)>;

class ElementalIrEmitter {
 public:
  // `hooks` must outlive the emitter.
  ElementalIrEmitter(llvm::Module* module, llvm::IRBuilderBase* builder, const TargetHooks& hooks)
      : module_(module), b_(*builder), hooks_(&hooks) {}

  // The element of `hlo` at `index`; operands[i] generates operand i.
  absl::StatusOr<llvm::Value*> EmitElement(const HloInstruction& hlo,
                                           absl::Span<const ElementGenerator> operands,
                                           const IrIndex& index);

  llvm::Type* ValueType(PrimitiveType type);
  llvm::Type* StorageType(PrimitiveType type);
  // Element `linear_index` of a dense array of `type` at `base`.
  llvm::Value* LoadElement(llvm::Value* base, llvm::Value* linear_index, PrimitiveType type);
  void StoreElement(llvm::Value* value, llvm::Value* base, llvm::Value* linear_index,
                    PrimitiveType type);
  // Row-major linear index of `index` in `dimensions`.
  llvm::Value* Linearize(const IrIndex& index, absl::Span<const int64_t> dimensions);

  // `x` (a value of type `from`) converted to `to`, as HLO's convert.
  absl::StatusOr<llvm::Value*> EmitConvert(llvm::Value* x, PrimitiveType from, PrimitiveType to);

  // Unimplemented unless every element type this emitter meets is handled.
  static absl::Status CheckSupportedType(PrimitiveType type, const HloInstruction& hlo);

  // Emits `for (i = begin; i < end; ++i) body(i)` at the builder's position
  // and leaves the builder after the loop. The body runs in a new scope.
  // `vector_width`: kVectorizeAuto leaves the choice to LLVM's cost model,
  // kVectorizeNever marks the loop as not to be vectorized or unrolled, a
  // width > 1 asks the vectorizer for exactly that width.
  static constexpr int kVectorizeAuto = -1;
  static constexpr int kVectorizeNever = 0;
  absl::Status EmitForLoop(llvm::Value* begin, llvm::Value* end, absl::string_view name,
                           const std::function<absl::Status(llvm::Value*)>& body,
                           int vector_width = kVectorizeAuto);
  // The innermost loop body being emitted (0 outside every loop), and
  // whether a value emitted in `scope` may be used at the builder's position.
  int64_t scope() const { return scopes_.back(); }
  bool InScope(int64_t scope) const;

  // A hook into the next reduce emitted whose only reduced dimension is its
  // input's last one, `columns` long (-1: any), for loop kernels over rows:
  // - prefetch_streams: its loop runs in chunks of kPrefetchChunkBytes of
  //   input, each first prefetching the same bytes of every stream
  //   (TargetHooks::EmitPrefetch; a byte pointer to the start of a row
  //   ahead of the one being reduced, in an array whose rows are the
  //   input's). A row reduction with much work per element (softmax's exp)
  //   thus loads coming rows from memory while it computes; the loop inside
  //   a chunk is vectorized as before.
  // - per_column: also emitted in the loop's body, after the fold, with the
  //   column index (the loop kernel stores the previous row's output there).
  // - loop_property: a property the loop is tagged with (AddLoopProperty).
  // Taken by that reduce; ClearRowReductionHook drops one not taken.
  struct RowReductionHook {
    std::vector<llvm::Value*> prefetch_streams;
    std::function<absl::Status(llvm::Value*)> per_column;
    const char* loop_property = nullptr;
    int64_t columns = -1;
    bool taken = false;
  };
  static constexpr int64_t kPrefetchChunkBytes = 1024;
  void SetRowReductionHook(RowReductionHook* hook) { row_reduction_hook_ = hook; }
  void ClearRowReductionHook() { row_reduction_hook_ = nullptr; }
  // Adds `property` (a loop metadata string without value) to the loop
  // whose preheader is `preheader` (the block that branched into its
  // header, as EmitForLoop leaves it).
  static void AddLoopProperty(llvm::BasicBlock* preheader, const char* property);

  // Emits the scalar computation `computation` (parameters, elementwise ops,
  // constants, a tuple root) on `arguments`; one value per result.
  absl::StatusOr<std::vector<llvm::Value*>> EmitScalarComputation(
      const HloComputation& computation, absl::Span<llvm::Value* const> arguments);

 private:
  using Generators = absl::Span<const ElementGenerator>;

  absl::StatusOr<llvm::Value*> EmitUnary(const HloInstruction& hlo, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitFloatUnary(const HloInstruction& hlo, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitComplexUnary(const HloInstruction& hlo, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitBinary(const HloInstruction& hlo, llvm::Value* x,
                                          llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitIntegerBinary(const HloInstruction& hlo, PrimitiveType type,
                                                 llvm::Value* x, llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitFloatBinary(const HloInstruction& hlo, llvm::Value* x,
                                               llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitComplexBinary(const HloInstruction& hlo, llvm::Value* x,
                                                 llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitCompare(const HloInstruction& hlo, llvm::Value* x,
                                           llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitBitcastConvert(const HloInstruction& hlo, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitBitcastConvertWidths(const HloInstruction& hlo,
                                                        Generators operands, const IrIndex& index);
  absl::Status CheckBitcastTypes(const HloInstruction& hlo);
  // A value's bits in its storage width (iN), and back.
  llvm::Value* ToBits(llvm::Value* x, PrimitiveType type);
  llvm::Value* FromBits(llvm::Value* bits, PrimitiveType type);
  llvm::Value* EmitReducePrecision(llvm::Value* x, int exponent_bits, int mantissa_bits);
  absl::StatusOr<llvm::Value*> EmitStochasticConvert(const HloInstruction& hlo, llvm::Value* x,
                                                     llvm::Value* random);
  llvm::Value* EmitIntegerPower(llvm::Value* x, llvm::Value* y, bool is_signed);
  llvm::Value* EmitMax(PrimitiveType type, llvm::Value* x, llvm::Value* y);
  llvm::Value* EmitMin(PrimitiveType type, llvm::Value* x, llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitIndexing(const HloInstruction& hlo, Generators operands,
                                            const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitConstant(const HloInstruction& hlo, const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitGather(const HloInstruction& hlo, Generators operands,
                                          const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitDynamicUpdateSlice(const HloInstruction& hlo,
                                                      Generators operands, const IrIndex& index);
  // Start index `value` of integer type `type` as i64, clamped to [0, high].
  llvm::Value* ClampStart(llvm::Value* value, PrimitiveType type, int64_t high);
  // The clamped starts of dynamic-(update-)slice `hlo` (operands from
  // `first` on) for a slice of `sizes`.
  absl::StatusOr<IrIndex> EmitStarts(const HloInstruction& hlo, Generators operands, int64_t first,
                                     absl::Span<const int64_t> sizes);

  // elemental_reduction.cc
  absl::StatusOr<llvm::Value*> EmitMap(const HloInstruction& hlo, Generators operands,
                                       const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitReduce(const HloInstruction& hlo, Generators operands,
                                          const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitReduceWindow(const HloInstruction& hlo, Generators operands,
                                                const IrIndex& index);
  // Accumulators for `types` in the function's entry block, set to `init`.
  std::vector<llvm::AllocaInst*> MakeAccumulators(absl::Span<const PrimitiveType> types,
                                                  absl::Span<llvm::Value* const> init);
  // Folds `values` into the accumulators through hlo's to_apply computation
  // (only where `predicate` holds, when it is not null). `reassociate` marks
  // a single f32/f64 add or multiply `reassoc`.
  absl::Status Accumulate(const HloInstruction& hlo,
                          absl::Span<llvm::AllocaInst* const> accumulators,
                          absl::Span<const PrimitiveType> types,
                          absl::Span<llvm::Value* const> values, llvm::Value* predicate,
                          bool reassociate);
  // The accumulators' values: one value, or a struct for a tuple result.
  llvm::Value* ReadAccumulators(absl::Span<llvm::AllocaInst* const> accumulators,
                                absl::Span<const PrimitiveType> types);
  llvm::Value* MakeStruct(absl::Span<llvm::Value* const> values);

  // Rounds an f32 value to the narrow float `type` (no-op for f32/f64).
  llvm::Value* RoundToType(llvm::Value* value, PrimitiveType type);
  // The narrow float `type`'s bits <-> its f32 value.
  llvm::Value* NarrowFloatToF32(llvm::Value* bits, PrimitiveType type);
  llvm::Value* F32ToNarrowFloat(llvm::Value* value, PrimitiveType type);
  // function(x) and function(x, y) through the target's hooks.
  llvm::Value* CallMath(MathFunction function, llvm::Value* x);
  llvm::Value* CallMath(MathFunction function, llvm::Value* x, llvm::Value* y);
  llvm::Value* MakeComplex(llvm::Value* re, llvm::Value* im);
  llvm::Value* Real(llvm::Value* z) { return b_.CreateExtractValue(z, 0); }
  llvm::Value* Imag(llvm::Value* z) { return b_.CreateExtractValue(z, 1); }
  llvm::Value* I64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  llvm::Module* module_;
  llvm::IRBuilderBase& b_;
  const TargetHooks* hooks_;
  // The loop bodies being emitted, outermost first (0: outside every loop).
  std::vector<int64_t> scopes_ = {0};
  int64_t next_scope_ = 1;
  // SetRowReductionHook's hook, until a reduce takes it.
  RowReductionHook* row_reduction_hook_ = nullptr;
};

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_ELEMENTAL_IR_EMITTER_H_
