//===- lanewise_computation.h - A scalar computation run on many lanes -----===//
//
// The computations that reduce, map, sort, reduce-window and scatter apply
// per element are almost always a few scalar elementwise ops (`add(p0, p1)`,
// a max, a comparator). A LanewiseComputation evaluates such a computation
// for n independent sets of arguments ("lanes") at once: each instruction
// becomes one loop over the lanes, so there is no per-element dispatch and no
// Literal per element. Results are bit-identical to evaluating the
// computation once per element, because the same elementwise kernels run.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_LANEWISE_COMPUTATION_H_
#define AXLE_EVAL_LANEWISE_COMPUTATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::eval_internal {

class LanewiseComputation {
 public:
  // Null when `computation` has anything but scalar parameters, scalar
  // constants, scalar elementwise ops (plus copy/reshape/bitcast/broadcast
  // of scalars, get-tuple-element of a tuple instruction) and a root that is
  // a scalar or a tuple of scalars.
  static std::unique_ptr<LanewiseComputation> Compile(const HloComputation& computation);

  // args[i]: lanes of parameter i; results[j]: n elements of leaf j's type.
  absl::Status Run(absl::Span<const Lanes> args, absl::Span<void* const> results, int64_t n);

  // The element types of the results, in order.
  const std::vector<PrimitiveType>& result_types() const { return result_types_; }

 private:
  struct Slot {
    PrimitiveType type = PRIMITIVE_TYPE_INVALID;
    Lanes view;
    std::vector<uint8_t> storage;  // elementwise results
  };
  enum class Kind { kParameter, kConstant, kElementwise, kAlias };
  struct Step {
    const HloInstruction* instruction;
    Kind kind;
    int64_t parameter_number = 0;
    std::vector<int> operands;  // slot numbers
  };

  explicit LanewiseComputation(const HloComputation& computation) : computation_(computation) {}

  const HloComputation& computation_;
  std::vector<Step> steps_;  // step i writes slot i
  std::vector<Slot> slots_;
  std::vector<int> result_slots_;
  std::vector<PrimitiveType> result_types_;
};

// Copies n lanes (or fills from a broadcast one) into `out`.
void CopyLanes(const Lanes& lanes, void* out, int64_t n);

}  // namespace axle::eval_internal

#endif  // AXLE_EVAL_LANEWISE_COMPUTATION_H_
