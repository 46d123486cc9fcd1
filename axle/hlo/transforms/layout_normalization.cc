//===- layout_normalization.cc - Make every computing op row-major ---------===//
//
// Notation: for an array shape S, `order(S)` lists its logical dimensions
// from the most major to the most minor (the reversed minor_to_major), and
// the normalized shape N(S) has dimension i of size S.dims[order(S)[i]] and
// a descending layout; bitcast(S -> N(S)) moves no data.
//
// A value that is needed in the physical order of another shape T is the
// transpose of its normalized form by q, q[j] = position in order(S) of the
// logical dimension order(T)[j] (after mapping logical dimensions through the
// op, for transposes, broadcasts and reduces).
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/layout_normalization.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "axle/base/logging.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

bool NeedsNormalization(const Shape& shape) {
  return shape.IsArray() && shape.has_layout() && !ShapeUtil::HasDescendingLayout(shape);
}

// Logical dimensions, major first.
std::vector<int64_t> MajorToMinor(const Shape& shape) {
  if (!shape.has_layout() || shape.layout().minor_to_major().empty()) {
    std::vector<int64_t> order(shape.rank());
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

Shape NormalizedShape(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d : MajorToMinor(shape)) dims.push_back(shape.dimensions(d));
  return ShapeUtil::MakeShapeWithDescendingLayout(shape.element_type(), dims);
}

// A layout this pass can reason about: a plain dimension order.
bool IsUnderstoodArray(const Shape& shape) {
  if (!shape.IsArray()) return true;
  if (!shape.is_static()) return !NeedsNormalization(shape);
  return !shape.has_layout() ||
         (shape.layout().tiles().empty() &&
          static_cast<int64_t>(shape.layout().minor_to_major().size()) == shape.rank());
}

bool Involved(const HloInstruction* instruction) {
  if (NeedsNormalization(instruction->shape())) return true;
  for (const HloInstruction* operand : instruction->operands()) {
    if (NeedsNormalization(operand->shape())) return true;
  }
  return false;
}

// A layout-constrained custom call (operand_layout_constraints) gets each
// array operand in its constraint's layout, and its result keeps the layout
// the instruction has, as XLA's layout assignment does (jaxlib's LAPACK calls
// take column-major matrices this way).
bool IsLayoutConstrained(const HloInstruction* instruction) {
  return instruction->opcode() == HloOpcode::kCustomCall &&
         cast<HloCustomCallInstruction>(instruction)
             ->attrs()
             .operand_layout_constraints.has_value();
}

// Ops that take their operands' buffers as they are: a constrained custom
// call wants operand i in the layout of its constraint, a call in the layout
// of its computation's parameter i (JAX's calls may disagree with their
// callers once custom calls have fixed layouts). Null: any layout will do.
const Shape* WantedOperandShape(const HloInstruction* instruction, int64_t i) {
  if (IsLayoutConstrained(instruction)) {
    const std::vector<Shape>& constraints =
        *cast<HloCustomCallInstruction>(instruction)->attrs().operand_layout_constraints;
    return i < static_cast<int64_t>(constraints.size()) ? &constraints[i] : nullptr;
  }
  if (instruction->opcode() == HloOpcode::kCall && instruction->called_computations().size() == 1) {
    const HloComputation* callee = instruction->called_computations()[0];
    if (i < callee->num_parameters()) return &callee->parameter_instruction(i)->shape();
  }
  return nullptr;
}

// Whether two arrays the pass understands differ in dimension order.
bool LayoutsDiffer(const Shape& shape, const Shape& wanted) {
  return shape.IsArray() && wanted.IsArray() && wanted.has_layout() && IsUnderstoodArray(shape) &&
         IsUnderstoodArray(wanted) && ShapeUtil::Compatible(shape, wanted) &&
         MajorToMinor(shape) != MajorToMinor(wanted);
}

// Whether operand i must be copied into the layout its op wants.
bool NeedsRelayout(const HloInstruction* instruction, int64_t i) {
  const Shape* wanted = WantedOperandShape(instruction, i);
  return wanted != nullptr && LayoutsDiffer(instruction->operand(i)->shape(), *wanted);
}

// Whether a call's result is in another layout than its computation's root.
bool CallResultNeedsRelayout(const HloInstruction* instruction) {
  return instruction->opcode() == HloOpcode::kCall &&
         instruction->called_computations().size() == 1 &&
         LayoutsDiffer(instruction->called_computations()[0]->root_instruction()->shape(),
                       instruction->shape());
}

bool NeedsInterfaceRelayout(const HloInstruction* instruction) {
  if (CallResultNeedsRelayout(instruction)) return true;
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    if (NeedsRelayout(instruction, i)) return true;
  }
  return false;
}

// Constrained custom calls the pass understands: a constraint per operand,
// array operands of their constraint's shape, plain dimension orders; tuple
// operands (passed as they are) already row-major.
bool IsSupportedConstrainedCustomCall(const HloInstruction* instruction) {
  const std::vector<Shape>& constraints =
      *cast<HloCustomCallInstruction>(instruction)->attrs().operand_layout_constraints;
  if (static_cast<int64_t>(constraints.size()) != instruction->operand_count()) return false;
  bool understood = true;
  ShapeUtil::ForEachSubshape(instruction->shape(), [&](const Shape& shape, const ShapeIndex&) {
    understood &= IsUnderstoodArray(shape);
  });
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    const Shape& shape = instruction->operand(i)->shape();
    if (!shape.IsArray()) {
      ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
        understood &= !NeedsNormalization(subshape) && IsUnderstoodArray(subshape);
      });
      continue;
    }
    const Shape& wanted = constraints[i];
    understood &= IsUnderstoodArray(shape) && wanted.IsArray() && wanted.has_layout() &&
                  IsUnderstoodArray(wanted) && ShapeUtil::Compatible(shape, wanted);
  }
  if (NeedsInterfaceRelayout(instruction)) {
    understood &=
        instruction->control_predecessors().empty() && instruction->control_successors().empty();
  }
  return understood;
}

bool IsPassThrough(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kWhile:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

// An array, or a tuple of arrays, in layouts the pass understands.
bool IsUnderstoodArrayOrFlatTuple(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() && IsUnderstoodArray(shape);
  for (const Shape& element : shape.tuple_shapes()) {
    if (!element.IsArray() || !IsUnderstoodArray(element)) return false;
  }
  return true;
}

// An elementwise op whose operands all have the result's dimensions.
// Whether Normalize has a rule of its own for `instruction` (an array op).
bool HasOwnRule(const HloInstruction* instruction) {
  switch (instruction->opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kIota:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
      return true;
    case HloOpcode::kDynamicSlice:
      return instruction->operand_count() == instruction->shape().rank() + 1;
    case HloOpcode::kDynamicUpdateSlice:
      return instruction->operand_count() == instruction->shape().rank() + 2;
    case HloOpcode::kReduce:
      return instruction->operand_count() == 2;
    default:
      return false;
  }
}

bool IsSameShapeElementwise(const HloInstruction* instruction) {
  if (!instruction->IsElementwise() || instruction->HasSideEffect()) return false;
  for (const HloInstruction* operand : instruction->operands()) {
    if (operand->shape().dimensions() != instruction->shape().dimensions()) return false;
  }
  return true;
}

// Ops without a rule of their own (dot, convolution, gather, sort,
// reduce-window, variadic reduce, constants, ...) compute on row-major
// operands into a row-major result, which is then transposed to the
// normalized shape. Not ops whose buffers are an interface (custom calls)
// or that have side effects.
bool ComputesInRowMajor(const HloInstruction* instruction) {
  if (instruction->HasSideEffect() || instruction->opcode() == HloOpcode::kCustomCall ||
      instruction->opcode() == HloOpcode::kFusion) {
    return false;
  }
  return instruction->opcode() != HloOpcode::kConstant || instruction->shape().IsArray();
}

// Whether the pass can rewrite (or leave as is) `instruction`.
bool IsSupported(const HloInstruction* instruction) {
  if (IsLayoutConstrained(instruction)) return IsSupportedConstrainedCustomCall(instruction);
  if (NeedsInterfaceRelayout(instruction) && (!instruction->control_predecessors().empty() ||
                                              !instruction->control_successors().empty())) {
    return false;
  }
  if (!Involved(instruction)) return true;
  if (IsPassThrough(instruction->opcode())) return true;
  if (!IsUnderstoodArrayOrFlatTuple(instruction->shape()) ||
      !instruction->control_predecessors().empty() || !instruction->control_successors().empty()) {
    return false;
  }
  for (const HloInstruction* operand : instruction->operands()) {
    if (!IsUnderstoodArray(operand->shape()) || !operand->shape().IsArray()) return false;
  }
  if (!instruction->shape().IsArray()) return ComputesInRowMajor(instruction);
  return HasOwnRule(instruction) || IsSameShapeElementwise(instruction) ||
         ComputesInRowMajor(instruction);
}

// q with q[j] = position of logical dimension `wanted[j]` in `order`. `order`
// need not be a permutation of 0..n-1: a reduce's kept dimensions are a
// subset of its operand's.
std::vector<int64_t> PositionsIn(absl::Span<const int64_t> order,
                                 absl::Span<const int64_t> wanted) {
  std::vector<int64_t> q;
  for (int64_t w : wanted) {
    auto it = std::find(order.begin(), order.end(), w);
    CHECK(it != order.end());
    q.push_back(it - order.begin());
  }
  return q;
}

HloInstruction* TransposeUnlessIdentity(HloInstruction* value, absl::Span<const int64_t> q) {
  return IsIdentityPermutation(q) ? value : MakeTranspose(value, q);
}

class Normalizer {
 public:
  explicit Normalizer(HloComputation* computation) : computation_(computation) {}

  absl::StatusOr<bool> Run() {
    std::vector<HloInstruction*> replaced;
    for (HloInstruction* instruction : computation_->MakeInstructionPostOrder()) {
      const bool interface =
          IsLayoutConstrained(instruction) || IsPassThrough(instruction->opcode());
      if (interface ? !NeedsInterfaceRelayout(instruction) : !Involved(instruction)) continue;
      HloInstruction* normalized = Normalize(instruction);
      HloInstruction* back = normalized;
      if (!SameShapeAndLayout(normalized->shape(), instruction->shape())) {
        back = MakeBitcast(normalized, instruction->shape());
        created_.insert(back);
        normalized_of_.emplace(back, normalized);
      }
      AXLE_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(back));
      replaced.push_back(instruction);
    }
    if (replaced.empty()) return false;
    // Users first: the replaced originals and the bitcasts nobody needed.
    absl::flat_hash_set<HloInstruction*> removable(replaced.begin(), replaced.end());
    removable.insert(created_.begin(), created_.end());
    std::vector<HloInstruction*> order = computation_->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* instruction = *it;
      if (removable.contains(instruction) && instruction->user_count() == 0 &&
          !instruction->IsRoot()) {
        AXLE_RETURN_IF_ERROR(computation_->RemoveInstruction(instruction));
      }
    }
    return true;
  }

 private:
  // `value` viewed in its normalized shape.
  HloInstruction* NormalizedOf(HloInstruction* value) {
    if (auto it = normalized_of_.find(value); it != normalized_of_.end()) return it->second;
    if (!NeedsNormalization(value->shape())) return value;
    HloInstruction* view = MakeBitcast(value, NormalizedShape(value->shape()));
    created_.insert(view);
    normalized_of_.emplace(value, view);
    return view;
  }

  // `value` in the physical order of the logical dimensions `wanted` (given
  // as `value`'s own logical dimensions, major first).
  HloInstruction* InOrder(HloInstruction* value, absl::Span<const int64_t> wanted) {
    return TransposeUnlessIdentity(NormalizedOf(value),
                                   PositionsIn(MajorToMinor(value->shape()), wanted));
  }

  HloInstruction* Normalize(HloInstruction* instruction);
  HloInstruction* ComputeInRowMajor(HloInstruction* instruction);
  HloInstruction* PassInWantedLayouts(HloInstruction* instruction);
  HloInstruction* NormalizePositional(HloInstruction* instruction,
                                      const std::vector<int64_t>& out_order);

  HloComputation* computation_;
  absl::flat_hash_map<HloInstruction*, HloInstruction*> normalized_of_;
  absl::flat_hash_set<HloInstruction*> created_;
};

HloInstruction* Normalizer::Normalize(HloInstruction* instruction) {
  const Shape& shape = instruction->shape();
  Shape normalized_shape = NormalizedShape(shape);
  std::vector<int64_t> out_order = MajorToMinor(shape);
  if (IsLayoutConstrained(instruction) || IsPassThrough(instruction->opcode())) {
    return PassInWantedLayouts(instruction);
  }
  if (!HasOwnRule(instruction) && !IsSameShapeElementwise(instruction)) {
    return ComputeInRowMajor(instruction);
  }
  switch (instruction->opcode()) {
    case HloOpcode::kCopy:
      return InOrder(instruction->mutable_operand(0), out_order);
    case HloOpcode::kTranspose: {
      // Result dimension d is operand dimension permutation[d].
      const std::vector<int64_t>& permutation =
          cast<HloDimensionsInstruction>(instruction)->dimensions();
      std::vector<int64_t> wanted;
      for (int64_t d : out_order) wanted.push_back(permutation[d]);
      return InOrder(instruction->mutable_operand(0), wanted);
    }
    case HloOpcode::kReshape: {
      // Through the logical (row-major) order on both sides.
      HloInstruction* operand = instruction->mutable_operand(0);
      std::vector<int64_t> logical(operand->shape().rank());
      std::iota(logical.begin(), logical.end(), 0);
      HloInstruction* row_major = InOrder(operand, logical);
      HloInstruction* reshaped = MakeReshape(
          row_major,
          ShapeUtil::MakeShapeWithDescendingLayout(shape.element_type(), shape.dimensions()));
      return TransposeUnlessIdentity(reshaped, out_order);
    }
    case HloOpcode::kBroadcast: {
      // Operand dimension k lands on result dimension dims[k]; in the
      // normalized result that is position inverse(out_order)[dims[k]].
      HloInstruction* operand = instruction->mutable_operand(0);
      const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(instruction)->dimensions();
      std::vector<int64_t> out_position = InversePermutation(out_order);
      std::vector<int64_t> operand_dims(operand->shape().rank());
      std::iota(operand_dims.begin(), operand_dims.end(), 0);
      std::sort(operand_dims.begin(), operand_dims.end(), [&](int64_t a, int64_t b) {
        return out_position[dims[a]] < out_position[dims[b]];
      });
      std::vector<int64_t> new_dims;
      for (int64_t k : operand_dims) new_dims.push_back(out_position[dims[k]]);
      return MakeBroadcast(InOrder(operand, operand_dims), normalized_shape, new_dims);
    }
    case HloOpcode::kIota: {
      int64_t dimension = cast<HloIotaInstruction>(instruction)->iota_dimension();
      HloInstruction* iota =
          computation_->AddInstruction(instruction->CloneWithNewOperands(normalized_shape, {}));
      cast<HloIotaInstruction>(iota)->mutable_attrs()->iota_dimension =
          InversePermutation(out_order)[dimension];
      return iota;
    }
    case HloOpcode::kReduce: {
      // Reduce the normalized input; its kept dimensions come out in the
      // input's physical order, then go to the result's.
      HloInstruction* input = instruction->mutable_operand(0);
      const std::vector<int64_t>& reduced =
          cast<HloDimensionsInstruction>(instruction)->dimensions();
      std::vector<int64_t> in_order = MajorToMinor(input->shape());
      std::vector<int64_t> in_position = InversePermutation(in_order);
      std::vector<int64_t> new_reduced, kept_in_physical_order, kept_sorted;
      for (int64_t d : reduced) new_reduced.push_back(in_position[d]);
      std::sort(new_reduced.begin(), new_reduced.end());
      for (int64_t d : in_order) {
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
          kept_in_physical_order.push_back(d);
        }
      }
      kept_sorted = kept_in_physical_order;
      std::sort(kept_sorted.begin(), kept_sorted.end());
      std::vector<int64_t> reduce_dims;
      for (int64_t d : kept_in_physical_order) reduce_dims.push_back(input->shape().dimensions(d));
      Shape reduce_shape =
          ShapeUtil::MakeShapeWithDescendingLayout(shape.element_type(), reduce_dims);
      HloInstruction* reduce = computation_->AddInstruction(instruction->CloneWithNewOperands(
          reduce_shape, {NormalizedOf(input), instruction->mutable_operand(1)}));
      cast<HloDimensionsInstruction>(reduce)->mutable_attrs()->dimensions = new_reduced;
      // Result dimension o is input dimension kept_sorted[o].
      std::vector<int64_t> wanted;
      for (int64_t o : out_order) wanted.push_back(kept_sorted[o]);
      return TransposeUnlessIdentity(reduce, PositionsIn(kept_in_physical_order, wanted));
    }
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
      return NormalizePositional(instruction, out_order);
    default: {
      // Elementwise: every operand in the result's physical order.
      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : instruction->operands()) {
        operands.push_back(InOrder(operand, out_order));
      }
      return computation_->AddInstruction(
          instruction->CloneWithNewOperands(normalized_shape, operands));
    }
  }
}

// See ComputesInRowMajor. A tuple result is rebuilt from its elements,
// each bitcast back to its original layout (so the tuple keeps its shape).
HloInstruction* Normalizer::ComputeInRowMajor(HloInstruction* instruction) {
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : instruction->operands()) {
    std::vector<int64_t> logical(operand->shape().rank());
    std::iota(logical.begin(), logical.end(), 0);
    operands.push_back(InOrder(operand, logical));
  }
  Shape row_major = instruction->shape();
  ShapeUtil::SetToDefaultLayout(&row_major);
  HloInstruction* computed =
      computation_->AddInstruction(instruction->CloneWithNewOperands(row_major, operands));
  if (auto* constant = dyn_cast<HloConstantInstruction>(computed)) {
    // A literal stores its elements in logical order whatever its layout.
    constant->mutable_attrs()->literal.set_layout(row_major.layout());
  }
  if (row_major.IsArray()) {
    return TransposeUnlessIdentity(computed, MajorToMinor(instruction->shape()));
  }
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < static_cast<int64_t>(row_major.tuple_shapes().size()); ++i) {
    const Shape& original = instruction->shape().tuple_shapes(i);
    HloInstruction* element = MakeGetTupleElement(computed, i);
    if (NeedsNormalization(original)) {
      element = MakeBitcast(TransposeUnlessIdentity(element, MajorToMinor(original)), original);
    }
    elements.push_back(element);
  }
  return MakeTuple(computation_, elements);
}

// A constrained custom call or a call on its operands in the layouts it
// wants (a transpose of the normalized value, viewed in the wanted layout by
// a bitcast). A custom call keeps its result's layout, which users see
// through bitcasts as for a parameter; a call's result, in its computation's
// root layout, is copied into the call's.
HloInstruction* Normalizer::PassInWantedLayouts(HloInstruction* instruction) {
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    HloInstruction* operand = instruction->mutable_operand(i);
    if (!NeedsRelayout(instruction, i)) {
      operands.push_back(operand);
      continue;
    }
    const Shape& wanted = *WantedOperandShape(instruction, i);
    HloInstruction* value = InOrder(operand, MajorToMinor(wanted));
    if (NeedsNormalization(wanted)) value = MakeBitcast(value, wanted);
    operands.push_back(value);
  }
  if (!CallResultNeedsRelayout(instruction)) {
    return computation_->AddInstruction(
        instruction->CloneWithNewOperands(instruction->shape(), operands));
  }
  const Shape& root = instruction->called_computations()[0]->root_instruction()->shape();
  HloInstruction* call =
      computation_->AddInstruction(instruction->CloneWithNewOperands(root, operands));
  HloInstruction* value = InOrder(call, MajorToMinor(instruction->shape()));
  return NeedsNormalization(instruction->shape()) ? MakeBitcast(value, instruction->shape())
                                                  : value;
}

// Ops whose result dimension d comes from dimension d of the same-rank
// operands (slice, reverse, pad, concatenate, dynamic-slice and -update-
// slice): those operands go to the result's physical order, per-dimension
// attributes and scalar start indices are permuted alike.
HloInstruction* Normalizer::NormalizePositional(HloInstruction* instruction,
                                                const std::vector<int64_t>& out_order) {
  int64_t rank = instruction->shape().rank();
  std::vector<int64_t> position = InversePermutation(out_order);
  auto permuted = [&](const std::vector<int64_t>& values) {
    std::vector<int64_t> out;
    for (int64_t d : out_order) out.push_back(values[d]);
    return out;
  };
  std::vector<HloInstruction*> operands;
  std::vector<HloInstruction*> indices;
  for (HloInstruction* operand : instruction->operands()) {
    if (operand->shape().rank() == rank && rank > 0) {
      operands.push_back(InOrder(operand, out_order));
    } else {
      indices.push_back(operand);
    }
  }
  HloOpcode opcode = instruction->opcode();
  if (opcode == HloOpcode::kDynamicSlice || opcode == HloOpcode::kDynamicUpdateSlice) {
    for (int64_t d : out_order) operands.push_back(indices[d]);
  } else {
    operands.insert(operands.end(), indices.begin(), indices.end());  // pad's value
  }
  HloInstruction* result = computation_->AddInstruction(
      instruction->CloneWithNewOperands(NormalizedShape(instruction->shape()), operands));
  if (auto* slice = dyn_cast<HloSliceInstruction>(result)) {
    SliceAttrs* attrs = slice->mutable_attrs();
    attrs->starts = permuted(attrs->starts);
    attrs->limits = permuted(attrs->limits);
    attrs->strides = permuted(attrs->strides);
  } else if (auto* dims = dyn_cast<HloDimensionsInstruction>(result)) {
    for (int64_t& d : dims->mutable_attrs()->dimensions) d = position[d];  // reverse, concatenate
  } else if (auto* pad = dyn_cast<HloPadInstruction>(result)) {
    PaddingConfig config;
    for (int64_t d : out_order) {
      *config.add_dimensions() = pad->padding_config().dimensions(d);
    }
    pad->mutable_attrs()->padding_config = config;
  } else if (auto* dynamic_slice = dyn_cast<HloDynamicSliceInstruction>(result)) {
    std::vector<int64_t>& sizes = dynamic_slice->mutable_attrs()->dynamic_slice_sizes;
    sizes = permuted(sizes);
  }
  return result;
}

}  // namespace

absl::StatusOr<bool> LayoutNormalization::Run(HloModule* module) {
  for (const HloComputation* computation : module->computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (!IsSupported(instruction)) return false;
    }
  }
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    AXLE_ASSIGN_OR_RETURN(bool c, Normalizer(computation).Run());
    changed |= c;
  }
  return changed;
}

}  // namespace axle
