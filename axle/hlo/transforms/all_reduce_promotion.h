//===- all_reduce_promotion.h - Collective reductions in a wider type -----===//
//
// XLA's AllReducePromotion (xla/service/all_reduce_promotion.cc, a
// ChangeOpDataType with a reducer cloner): an all-reduce or reduce-scatter
// whose operands all have a type `from` of the list computes in its `to`
// instead, and rounds once at the end:
//
//   all-reduce(x: bf16[...]), to_apply=add
//     -> convert<bf16>(all-reduce(convert<f32>(x)), to_apply=add_promoted)
//
// XLA:CPU runs it with {bf16 -> f32} just before its FloatNormalization
// (cpu_compiler.cc), so a bf16 sum over several participants rounds once,
// not after every participant's term; XLA:GPU runs it with {u16 -> u32,
// s16 -> s32}. As in XLA it matches only kAllReduce and kReduceScatter with
// an array result (one operand): not their async starts, not variadic
// (tuple-shaped) ones, not inside fusions. The promoted reducer is the
// original root's binary op on two scalars of the wider type. XLA builds
// that reducer from the root's opcode alone; here a reducer whose root is
// not one binary elementwise op of its two parameters is left alone
// (XLA's clone would compute something else), and so are those whose root
// does not return the operand type.
//
// The converts are plain ones (the operand rounded to bf16 before it is
// widened), as XLA:CPU leaves them: its SimplifyFPConversions, which would
// drop an f32 -> bf16 -> f32 pair, runs only with oneDNN custom calls.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_ALL_REDUCE_PROMOTION_H_
#define AXLE_HLO_TRANSFORMS_ALL_REDUCE_PROMOTION_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class AllReducePromotion : public HloPassInterface {
 public:
  // (from, to) pairs; a `from` listed twice keeps its first `to`.
  explicit AllReducePromotion(std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to)
      : from_to_(std::move(from_to)) {}
  // XLA:CPU's list: {bf16 -> f32}.
  static std::vector<std::pair<PrimitiveType, PrimitiveType>> CpuTypes() { return {{BF16, F32}}; }
  // XLA:GPU's list: {u16 -> u32, s16 -> s32} (NCCL has no 16-bit integers;
  // the wider sum, product, min or max converted back is the same value).
  static std::vector<std::pair<PrimitiveType, PrimitiveType>> GpuTypes() {
    return {{U16, U32}, {S16, S32}};
  }

  absl::string_view name() const override { return "all-reduce-promotion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_ALL_REDUCE_PROMOTION_H_
