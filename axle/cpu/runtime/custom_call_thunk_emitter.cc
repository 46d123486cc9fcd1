//===- custom_call_thunk_emitter.cc - Custom calls from HLO ----------------===//
#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/custom_call_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/host_custom_call.h"

namespace axle::cpu {
namespace {

using Slot = CustomCallThunk::Slot;

// Operands are passed as the buffers they are, so each array operand must
// already be in its constraint's layout (descending without constraints):
// `layout-normalization` puts them there.
absl::Status CheckOperandLayouts(const HloCustomCallInstruction& custom_call) {
  const std::optional<std::vector<Shape>>& constraints =
      custom_call.attrs().operand_layout_constraints;
  if (constraints.has_value() &&
      static_cast<int64_t>(constraints->size()) != custom_call.operand_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(custom_call.name(), ": ", custom_call.operand_count(), " operands but ",
                     constraints->size(), " operand_layout_constraints"));
  }
  for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
    const Shape& operand = custom_call.operand(i)->shape();
    const Shape* constraint = constraints.has_value() ? &(*constraints)[i] : nullptr;
    bool ok = true;
    ShapeUtil::ForEachSubshape(operand, [&](const Shape& shape, const ShapeIndex& index) {
      if (!shape.IsArray()) return;
      const Shape* wanted = nullptr;
      if (constraint != nullptr && ShapeUtil::IndexIsValid(*constraint, index)) {
        wanted = &ShapeUtil::GetSubshape(*constraint, index);
      }
      ok &= wanted != nullptr && wanted->has_layout() ? ShapeUtil::Equal(shape, *wanted)
                                                      : ShapeUtil::HasDescendingLayout(shape);
    });
    if (!ok) {
      return Unsupported(
          custom_call,
          absl::StrCat("operand ", i, " is ", operand.ToString(true), " but the call wants ",
                       constraint != nullptr ? constraint->ToString(true) : "a row-major array",
                       "; layout-normalization should have copied it there"));
    }
  }
  return absl::OkStatus();
}

// The operand leaf that result leaf `index` aliases, if any.
std::optional<std::pair<int64_t, ShapeIndex>> AliasedOperandLeaf(
    const HloCustomCallInstruction& custom_call, const ShapeIndex& index) {
  for (const OutputOperandAlias& alias : custom_call.output_to_operand_aliasing()) {
    const ShapeIndex& prefix = alias.output_index;
    if (prefix.size() > index.size() || !std::equal(prefix.begin(), prefix.end(), index.begin())) {
      continue;
    }
    ShapeIndex operand_index = alias.operand_index;
    operand_index.insert(operand_index.end(), index.begin() + prefix.size(), index.end());
    return std::make_pair(alias.operand_number, operand_index);
  }
  return std::nullopt;
}

// Fills slot `at` with the pointer for the subshape of `shape` at `index`:
// a leaf's value (from `leaf`), a table of its elements' slots, or null.
void FillSlot(std::vector<Slot>& slots, int64_t at, const Shape& shape, ShapeIndex index,
              const std::function<int64_t(const ShapeIndex&)>& leaf) {
  const Shape& subshape = ShapeUtil::GetSubshape(shape, index);
  if (subshape.IsTuple()) {
    const int64_t first = static_cast<int64_t>(slots.size());
    const int64_t n = subshape.tuple_shapes_size();
    slots.resize(first + n);
    slots[at] = Slot{Slot::Kind::kTable, first, n};
    index.push_back(0);
    for (int64_t i = 0; i < n; ++i) {
      index.back() = i;
      FillSlot(slots, first + i, shape, index, leaf);
    }
    return;
  }
  slots[at] = subshape.IsArray() ? Slot{Slot::Kind::kValue, leaf(index)} : Slot{};
}

// The typed-FFI leaves of `shape` in pre-order, as host_ffi.h lays them out.
void AppendFfiLeaves(const Shape& shape, const std::function<int64_t(const ShapeIndex&)>& leaf,
                     std::vector<CustomCallThunk::FfiLeaf>* leaves) {
  ShapeUtil::ForEachLeafShape(shape, [&](const Shape& subshape, const ShapeIndex& index) {
    CustomCallThunk::FfiLeaf ffi_leaf;
    ffi_leaf.buffer.element_type = subshape.element_type();
    if (subshape.IsArray()) {
      ffi_leaf.buffer.dimensions.assign(subshape.dimensions().begin(), subshape.dimensions().end());
      ffi_leaf.value = leaf(index);
    }
    leaves->push_back(std::move(ffi_leaf));
  });
}

}  // namespace

absl::Status EmitCustomCallThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const auto& custom_call = *cast<HloCustomCallInstruction>(&instruction);
  AXLE_RETURN_IF_ERROR(CheckOperandLayouts(custom_call));
  AXLE_ASSIGN_OR_RETURN(HostCustomCallTarget target, HostCustomCallTarget::Resolve(custom_call));

  CustomCallThunk::Plan plan;
  plan.num_operands = custom_call.operand_count();
  std::map<ShapeIndex, int64_t> results;
  {
    std::vector<int64_t> values = builder.DefineTemporaries(&instruction);
    for (const auto& [index, value] : builder.LeavesOf(&instruction)) results[index] = value;
    plan.uses.writes = std::move(values);
  }

  // What is passed for each operand leaf: an aliased result's temporary, a
  // scratch copy of a parameter or constant, or the value itself.
  std::map<std::pair<int64_t, ShapeIndex>, int64_t> passed;
  for (const auto& [index, result] : results) {
    std::optional<std::pair<int64_t, ShapeIndex>> operand_leaf =
        AliasedOperandLeaf(custom_call, index);
    if (!operand_leaf.has_value()) continue;
    AXLE_ASSIGN_OR_RETURN(int64_t from, builder.ValueOf(custom_call.operand(operand_leaf->first),
                                                        operand_leaf->second));
    plan.copies.push_back({from, result, builder.slot(result).size_bytes});
    plan.uses.reads.push_back(from);
    passed.emplace(*operand_leaf, result);
  }
  for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
    const HloInstruction* operand = custom_call.operand(i);
    absl::Status status = absl::OkStatus();
    ShapeUtil::ForEachLeafShape(operand->shape(), [&](const Shape& shape, const ShapeIndex& index) {
      if (!shape.IsArray() || !status.ok() || passed.count({i, index}) != 0) return;
      absl::StatusOr<int64_t> value = builder.ValueOf(operand, index);
      if (!value.ok()) {
        status = value.status();
        return;
      }
      plan.uses.reads.push_back(*value);
      // By value: DefineScratch adds a slot, which may move the others.
      const ValueSlot slot = builder.slot(*value);
      if (slot.kind == ValueSlot::Kind::kTemporary) {
        passed[{i, index}] = *value;
        return;
      }
      const int64_t copy = builder.DefineScratch(slot.size_bytes);
      plan.copies.push_back({*value, copy, slot.size_bytes});
      plan.uses.writes.push_back(copy);
      passed[{i, index}] = copy;
    });
    AXLE_RETURN_IF_ERROR(status);
  }

  auto result_leaf = [&](const ShapeIndex& index) { return results.at(index); };
  if (target.is_typed_ffi()) {
    for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
      AppendFfiLeaves(
          custom_call.operand(i)->shape(),
          [&](const ShapeIndex& index) {
            return passed.at({i, index});
          },
          &plan.ffi_args);
    }
    AppendFfiLeaves(custom_call.shape(), result_leaf, &plan.ffi_rets);
  } else {
    plan.slots.resize(plan.num_operands + 1);
    for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
      FillSlot(plan.slots, i, custom_call.operand(i)->shape(), {}, [&](const ShapeIndex& index) {
        return passed.at({i, index});
      });
    }
    FillSlot(plan.slots, plan.num_operands, custom_call.shape(), {}, result_leaf);
    for (Slot& slot : plan.slots) {
      if (slot.kind == Slot::Kind::kValue) slot.size = builder.slot(slot.index).size_bytes;
    }
  }
  builder.AddThunk(
      std::make_unique<CustomCallThunk>(instruction.name(), std::move(target), std::move(plan)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
