//===- host_custom_call.cc - Running custom calls on host literals ---------===//
#include "axle/runtime/host_custom_call.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/runtime/custom_call_status.h"
#include "axle/runtime/custom_call_target.h"
#include "axle/runtime/relayout.h"

namespace axle {
namespace {

bool IsPrefix(const ShapeIndex& prefix, const ShapeIndex& index) {
  return prefix.size() <= index.size() && std::equal(prefix.begin(), prefix.end(), index.begin());
}

// The output_to_operand_aliasing entry whose output index covers `index`.
const OutputOperandAlias* AliasCovering(const HloCustomCallInstruction& custom_call,
                                        const ShapeIndex& index) {
  for (const OutputOperandAlias& alias : custom_call.output_to_operand_aliasing()) {
    if (IsPrefix(alias.output_index, index)) return &alias;
  }
  return nullptr;
}

absl::Status CheckCall(const HloCustomCallInstruction& custom_call,
                       absl::Span<const Literal* const> operands) {
  if (static_cast<int64_t>(operands.size()) != custom_call.operand_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(CustomCallName(custom_call), " has ", custom_call.operand_count(),
                     " operands but got ", operands.size(), " values"));
  }
  for (const OutputOperandAlias& alias : custom_call.output_to_operand_aliasing()) {
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(CustomCallName(custom_call), ": output_to_operand_aliasing ",
                       ShapeIndexToString(alias.output_index), " -> (", alias.operand_number, ", ",
                       ShapeIndexToString(alias.operand_index), "): ", why));
    };
    if (alias.operand_number < 0 || alias.operand_number >= custom_call.operand_count()) {
      return bad("no such operand");
    }
    const Shape& operand_shape = operands[alias.operand_number]->shape();
    if (!ShapeUtil::IndexIsValid(custom_call.shape(), alias.output_index) ||
        !ShapeUtil::IndexIsValid(operand_shape, alias.operand_index)) {
      return bad("index out of range");
    }
    if (!ShapeUtil::Compatible(ShapeUtil::GetSubshape(custom_call.shape(), alias.output_index),
                               ShapeUtil::GetSubshape(operand_shape, alias.operand_index))) {
      return bad("the output and the operand have different shapes");
    }
  }
  return absl::OkStatus();
}

// Copies every output that aliases an operand from that operand's buffer.
absl::Status CopyAliasedOutputs(const HloCustomCallInstruction& custom_call,
                                const std::vector<Literal>& args, Literal* result) {
  for (const OutputOperandAlias& alias : custom_call.output_to_operand_aliasing()) {
    AXLE_RETURN_IF_ERROR(result->CopyFrom(
        args[alias.operand_number].GetSubliteral(alias.operand_index), alias.output_index));
  }
  return absl::OkStatus();
}

std::vector<Literal> CopyOperands(absl::Span<const Literal* const> operands) {
  std::vector<Literal> args;
  args.reserve(operands.size());
  for (const Literal* operand : operands) args.push_back(operand->Clone());
  return args;
}

// --- The untyped conventions ------------------------------------------------

// The buffers of one call as the target sees them: pointer tables for
// tuples, and staging copies for arrays the call wants in a layout other
// than row-major (copied back after the call).
class CallBuffers {
 public:
  // The buffer of `literal` at `index` (a pointer table for a tuple), in the
  // layouts of `layouts` (null: row-major). `redirect` may supply the buffer
  // of a subvalue instead (aliasing); it returns nullopt to decline.
  using Redirect = std::function<std::optional<void*>(const ShapeIndex&)>;
  void* Bind(Literal* literal, const ShapeIndex& index, const Shape* layouts,
             const Redirect& redirect = nullptr) {
    if (redirect) {
      if (std::optional<void*> target = redirect(index)) return *target;
    }
    const Shape& shape = ShapeUtil::GetSubshape(literal->shape(), index);
    if (shape.IsTuple()) {
      const int64_t n = shape.tuple_shapes_size();
      tables_.push_back(std::make_unique<void*[]>(std::max<int64_t>(n, 1)));
      void** table = tables_.back().get();
      ShapeIndex child = index;
      child.push_back(0);
      for (int64_t i = 0; i < n; ++i) {
        child.back() = i;
        const Shape* child_layouts =
            layouts != nullptr && layouts->IsTuple() ? &layouts->tuple_shapes(i) : nullptr;
        table[i] = Bind(literal, child, child_layouts, redirect);
      }
      return table;
    }
    if (!shape.IsArray()) return nullptr;  // token
    auto key = std::make_pair(static_cast<const Literal*>(literal), index);
    if (auto it = leaves_.find(key); it != leaves_.end()) return it->second;
    void* data = literal->untyped_data(index);
    if (layouts != nullptr && layouts->IsArray() && layouts->has_layout() &&
        !ShapeUtil::HasDescendingLayout(*layouts)) {
      Staged staged{literal, index, layouts->layout(),
                    std::make_unique<uint8_t[]>(std::max<int64_t>(literal->size_bytes(index), 1))};
      Relayout(shape, staged.layout, static_cast<const uint8_t*>(data), staged.storage.get(),
               /*to_layout=*/true);
      data = staged.storage.get();
      staged_.push_back(std::move(staged));
    }
    leaves_[key] = data;
    return data;
  }

  // Copies staged buffers back into their literals.
  void CopyBack() {
    for (Staged& staged : staged_) {
      const Shape& shape = ShapeUtil::GetSubshape(staged.literal->shape(), staged.index);
      Relayout(shape, staged.layout, staged.storage.get(),
               static_cast<uint8_t*>(staged.literal->untyped_data(staged.index)),
               /*to_layout=*/false);
    }
  }

 private:
  struct Staged {
    Literal* literal;
    ShapeIndex index;
    Layout layout;
    std::unique_ptr<uint8_t[]> storage;
  };
  std::vector<std::unique_ptr<void*[]>> tables_;
  std::vector<Staged> staged_;
  std::map<std::pair<const Literal*, ShapeIndex>, void*> leaves_;
};

// A layout-constrained call gets its operands in the constraints' layouts
// and its result in the instruction's; otherwise everything is row-major.
// `operand_layouts(i)` is operand i's constraint (null: row-major) and
// `result_layouts` the result's (null: row-major).
struct CallLayouts {
  const std::vector<Shape>* operands = nullptr;
  const Shape* result = nullptr;

  const Shape* operand(int64_t i) const { return operands != nullptr ? &(*operands)[i] : nullptr; }
  const Shape* operand(int64_t i, const ShapeIndex& index) const {
    const Shape* layouts = operand(i);
    return layouts != nullptr ? &ShapeUtil::GetSubshape(*layouts, index) : nullptr;
  }
};

absl::StatusOr<CallLayouts> LayoutsOf(const HloCustomCallInstruction& custom_call,
                                      size_t num_operands) {
  const std::optional<std::vector<Shape>>& constraints =
      custom_call.attrs().operand_layout_constraints;
  if (!constraints.has_value()) return CallLayouts{};
  if (constraints->size() != num_operands) {
    return absl::InvalidArgumentError(
        absl::StrCat(CustomCallName(custom_call), " has ", num_operands, " operands but ",
                     constraints->size(), " operand_layout_constraints"));
  }
  return CallLayouts{&*constraints, &custom_call.shape()};
}

// One call's operands (copies: the target may write them) and result,
// bound to the target through `buffers` in the layouts of `layouts`.
struct Call {
  const HloCustomCallInstruction& custom_call;
  const CallLayouts& layouts;
  std::vector<Literal>& args;
  Literal& result;
  CallBuffers& buffers;
};

absl::Status BindAndCallUntyped(const Call& call, const HostCustomCallTarget& target) {
  std::vector<const void*> in(std::max<size_t>(call.args.size(), 1), nullptr);
  for (size_t i = 0; i < call.args.size(); ++i) {
    in[i] = call.buffers.Bind(&call.args[i], {}, call.layouts.operand(i));
  }
  auto to_operand = [&](const ShapeIndex& index) -> std::optional<void*> {
    for (const OutputOperandAlias& alias : call.custom_call.output_to_operand_aliasing()) {
      if (alias.output_index != index) continue;
      return call.buffers.Bind(&call.args[alias.operand_number], alias.operand_index,
                               call.layouts.operand(alias.operand_number, alias.operand_index));
    }
    return std::nullopt;
  };
  void* out = call.buffers.Bind(&call.result, {}, call.layouts.result, to_operand);
  return target.CallUntyped(out, in.data());
}

// --- Typed FFI -----------------------------------------------------------------

// The typed-FFI buffer of the leaf of `literal` at `index`, bound through
// `buffers` in the layout of `layouts` (null: row-major).
FfiBuffer LeafBuffer(CallBuffers& buffers, Literal* literal, const ShapeIndex& index,
                     const Shape* layouts) {
  const Shape& shape = ShapeUtil::GetSubshape(literal->shape(), index);
  FfiBuffer buffer;
  buffer.element_type = shape.element_type();
  if (shape.IsArray()) {
    buffer.dimensions.assign(shape.dimensions().begin(), shape.dimensions().end());
    buffer.data = buffers.Bind(literal, index, layouts);
  }
  return buffer;
}

absl::Status BindAndCallFfi(const Call& call, const HostCustomCallTarget& target) {
  std::vector<FfiBuffer> arg_buffers;
  for (size_t i = 0; i < call.args.size(); ++i) {
    ShapeUtil::ForEachLeafShape(call.args[i].shape(), [&](const Shape&, const ShapeIndex& index) {
      arg_buffers.push_back(
          LeafBuffer(call.buffers, &call.args[i], index, call.layouts.operand(i, index)));
    });
  }
  std::vector<FfiBuffer> ret_buffers;
  ShapeUtil::ForEachLeafShape(call.result.shape(), [&](const Shape&, const ShapeIndex& index) {
    const OutputOperandAlias* alias = AliasCovering(call.custom_call, index);
    if (alias == nullptr) {
      const Shape* result_layouts = call.layouts.result != nullptr
                                        ? &ShapeUtil::GetSubshape(*call.layouts.result, index)
                                        : nullptr;
      ret_buffers.push_back(LeafBuffer(call.buffers, &call.result, index, result_layouts));
      return;
    }
    ShapeIndex operand_index = alias->operand_index;
    operand_index.insert(operand_index.end(), index.begin() + alias->output_index.size(),
                         index.end());
    ret_buffers.push_back(LeafBuffer(call.buffers, &call.args[alias->operand_number], operand_index,
                                     call.layouts.operand(alias->operand_number, operand_index)));
  });
  return target.CallFfi(arg_buffers, ret_buffers);
}

// Binds copies of `operands` and a fresh result for `target` in either
// convention, calls it, and copies back what it wrote.
absl::StatusOr<Literal> Invoke(const HloCustomCallInstruction& custom_call,
                               absl::Span<const Literal* const> operands,
                               const HostCustomCallTarget& target) {
  AXLE_ASSIGN_OR_RETURN(CallLayouts layouts, LayoutsOf(custom_call, operands.size()));
  std::vector<Literal> args = CopyOperands(operands);
  Literal result(custom_call.shape());
  CallBuffers buffers;
  const Call call{custom_call, layouts, args, result, buffers};
  AXLE_RETURN_IF_ERROR(target.is_typed_ffi() ? BindAndCallFfi(call, target)
                                             : BindAndCallUntyped(call, target));
  buffers.CopyBack();
  AXLE_RETURN_IF_ERROR(CopyAliasedOutputs(custom_call, args, &result));
  return result;
}

}  // namespace

absl::StatusOr<HostCustomCallTarget> HostCustomCallTarget::Resolve(
    const HloCustomCallInstruction& custom_call, const CustomCallTargetRegistry& targets,
    const FfiHandlerRegistry& ffi_handlers) {
  absl::StatusOr<CustomCallTarget> target =
      ResolveCustomCallTarget(custom_call, kHostPlatformName, targets, ffi_handlers);
  if (!target.ok()) return target.status();
  return HostCustomCallTarget(*std::move(target));
}

absl::StatusOr<Literal> InvokeHostCustomCall(const HloCustomCallInstruction& custom_call,
                                             absl::Span<const Literal* const> operands,
                                             const CustomCallTargetRegistry& targets,
                                             const FfiHandlerRegistry& ffi_handlers) {
  AXLE_RETURN_IF_ERROR(CheckCall(custom_call, operands));
  AXLE_ASSIGN_OR_RETURN(HostCustomCallTarget target,
                        HostCustomCallTarget::Resolve(custom_call, targets, ffi_handlers));
  return Invoke(custom_call, operands, target);
}

HloEvaluator::CustomCallHandler MakeHostCustomCallHandler(const CustomCallTargetRegistry* targets,
                                                          const FfiHandlerRegistry* ffi_handlers) {
  return [targets, ffi_handlers](const HloCustomCallInstruction& custom_call,
                                 absl::Span<const Literal* const> operands) {
    return InvokeHostCustomCall(custom_call, operands, *targets, *ffi_handlers);
  };
}

void InstallHostCustomCalls(HloEvaluator* evaluator) {
  evaluator->set_custom_call_handler(MakeHostCustomCallHandler());
}

}  // namespace axle
