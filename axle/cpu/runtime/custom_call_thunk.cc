//===- custom_call_thunk.cc - Custom calls on the executable's buffers -----===//
#include "axle/cpu/runtime/custom_call_thunk.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {

absl::Status CustomCallThunk::Execute(const ThunkContext& context) const {
  for (const Copy& copy : plan_.copies) {
    if (copy.size_bytes > 0) {
      std::memcpy(context.address(copy.to), context.address(copy.from), copy.size_bytes);
    }
  }
  if (target_.is_typed_ffi()) {
    auto bind = [&](const std::vector<FfiLeaf>& leaves) {
      std::vector<FfiBuffer> buffers;
      buffers.reserve(leaves.size());
      for (const FfiLeaf& leaf : leaves) {
        buffers.push_back(leaf.buffer);
        if (leaf.value >= 0) buffers.back().data = context.address(leaf.value);
      }
      return buffers;
    };
    return target_.CallFfi(bind(plan_.ffi_args), bind(plan_.ffi_rets));
  }
  absl::InlinedVector<void*, 16> pointers(plan_.slots.size(), nullptr);
  for (size_t i = 0; i < plan_.slots.size(); ++i) {
    const Slot& slot = plan_.slots[i];
    switch (slot.kind) {
      case Slot::Kind::kNull:
        break;
      case Slot::Kind::kValue:
        pointers[i] = context.address(slot.index);
        break;
      case Slot::Kind::kTable:
        pointers[i] = pointers.data() + slot.index;
        break;
    }
  }
  return target_.CallUntyped(pointers[plan_.num_operands],
                             const_cast<const void**>(pointers.data()));
}

absl::Status CustomCallThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kCustomCall, *this);
  const CustomCallSpec& spec = target_.spec();
  writer.String(spec.target);
  writer.Int(static_cast<int64_t>(spec.api_version));
  writer.String(spec.opaque);
  writer.String(spec.call_name);
  writer.Int(plan_.num_operands);
  writer.Int(static_cast<int64_t>(plan_.slots.size()));
  for (const Slot& slot : plan_.slots) {
    writer.Int(static_cast<int64_t>(slot.kind));
    writer.Int(slot.index);
    writer.Int(slot.size);
  }
  for (const std::vector<FfiLeaf>* leaves : {&plan_.ffi_args, &plan_.ffi_rets}) {
    writer.Int(static_cast<int64_t>(leaves->size()));
    for (const FfiLeaf& leaf : *leaves) {
      writer.Int(static_cast<int64_t>(leaf.buffer.element_type));
      writer.Ints(leaf.buffer.dimensions);
      writer.Int(leaf.value);
    }
  }
  writer.Int(static_cast<int64_t>(plan_.copies.size()));
  for (const Copy& copy : plan_.copies) {
    writer.Int(copy.from);
    writer.Int(copy.to);
    writer.Int(copy.size_bytes);
  }
  writer.Ints(plan_.uses.reads);
  writer.Ints(plan_.uses.writes);
  return absl::OkStatus();
}

namespace {

// The typed-FFI leaves of a serialized custom call; `why` says what is
// wrong with the first bad one.
std::vector<CustomCallThunk::FfiLeaf> ReadFfiLeaves(ThunkReader& reader, std::string& why) {
  const int64_t count = reader.Count(24);
  std::vector<CustomCallThunk::FfiLeaf> leaves;
  for (int64_t i = 0; i < count && reader.ok(); ++i) {
    const int64_t type = reader.Int();
    std::vector<int64_t> dimensions = reader.Ints();
    const int64_t value = reader.Int();
    if (!reader.ok() || !why.empty()) continue;
    CustomCallThunk::FfiLeaf leaf;
    if (type == static_cast<int64_t>(TOKEN) && dimensions.empty() && value == -1) {
      leaf.buffer.element_type = TOKEN;
      leaves.push_back(std::move(leaf));
      continue;
    }
    constexpr int64_t kMaxElements = int64_t{1} << 48;
    int64_t elements = 1;
    for (int64_t d : dimensions) {
      if (d < 0 || (d > 0 && elements > kMaxElements / d)) elements = -1;
      if (elements < 0) break;
      elements *= d;
    }
    if (!IsArrayTypeNumber(type) || elements < 0 ||
        !reader.ValueHas(value,
                         elements * primitive_util::ByteWidth(static_cast<PrimitiveType>(type)))) {
      why = absl::StrCat("typed-FFI buffer ", i, " does not match its value");
      continue;
    }
    leaf.buffer.element_type = static_cast<PrimitiveType>(type);
    leaf.buffer.dimensions = std::move(dimensions);
    leaf.value = value;
    leaves.push_back(std::move(leaf));
  }
  return leaves;
}

}  // namespace

std::unique_ptr<Thunk> LoadCustomCallThunk(std::string name, ThunkReader& reader) {
  CustomCallSpec spec;
  spec.target = reader.String();
  const int64_t api_version = reader.Int();
  spec.opaque = reader.String();
  spec.call_name = reader.String();
  CustomCallThunk::Plan plan;
  plan.num_operands = reader.Int();
  const int64_t num_slots = reader.Count(24);
  std::string why;
  for (int64_t i = 0; i < num_slots && reader.ok(); ++i) {
    const int64_t kind = reader.Int();
    const int64_t index = reader.Int();
    const int64_t size = reader.Int();
    if (!reader.ok() || !why.empty()) continue;
    using Kind = CustomCallThunk::Slot::Kind;
    if (kind == static_cast<int64_t>(Kind::kNull)) {
      plan.slots.push_back({});
    } else if (kind == static_cast<int64_t>(Kind::kValue) && reader.ValueHas(index, size)) {
      plan.slots.push_back({Kind::kValue, index, size});
    } else if (kind == static_cast<int64_t>(Kind::kTable) && index > i && size >= 0 &&
               size <= num_slots - index) {
      // A table's elements follow it: no cycles, none outside the slots.
      plan.slots.push_back({Kind::kTable, index, size});
    } else {
      why = absl::StrCat("slot ", i, " of kind ", kind, " at ", index, " (", size, ")");
    }
  }
  // Every slot is `in`, `out` or an element of exactly one table.
  if (why.empty() && !plan.slots.empty()) {
    std::vector<int> owners(plan.slots.size(), 0);
    for (int64_t i = 0; i <= plan.num_operands && i < num_slots; ++i) ++owners[i];
    for (const CustomCallThunk::Slot& slot : plan.slots) {
      if (slot.kind != CustomCallThunk::Slot::Kind::kTable) continue;
      for (int64_t k = slot.index; k < slot.index + slot.size; ++k) ++owners[k];
    }
    if (std::any_of(owners.begin(), owners.end(), [](int owner) { return owner != 1; })) {
      why = "tables that do not partition its slots";
    }
  }
  plan.ffi_args = ReadFfiLeaves(reader, why);
  plan.ffi_rets = ReadFfiLeaves(reader, why);
  const int64_t num_copies = reader.Count(24);
  for (int64_t i = 0; i < num_copies && reader.ok(); ++i) {
    const int64_t from = reader.Value();
    const int64_t to = reader.Value();
    const int64_t size_bytes = reader.Int();
    if (!reader.ok() || !why.empty()) continue;
    if (!reader.ValueHas(from, size_bytes) || !reader.ValueHas(to, size_bytes)) {
      why = absl::StrCat("copy ", i, " of ", size_bytes, " bytes does not match its values");
      continue;
    }
    plan.copies.push_back({from, to, size_bytes});
  }
  plan.uses.reads = reader.Values();
  plan.uses.writes = reader.Values();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view what) {
    reader.Fail(absl::StrCat("custom-call %", name, ": ", what));
    return nullptr;
  };
  if (!why.empty()) return fail(why);
  if (api_version < 0 || api_version > (int64_t{1} << 16)) {
    return fail(absl::StrCat("api_version ", api_version));
  }
  spec.api_version = static_cast<CustomCallApiVersion>(api_version);
  absl::StatusOr<HostCustomCallTarget> target =
      HostCustomCallTarget::Resolve(spec, absl::StrCat(" (serialized custom-call %", name, ")"));
  if (!target.ok()) {
    reader.SetError(target.status());
    return nullptr;
  }
  // Untyped: `in` and `out` first, then the tables' elements.
  const bool untyped_plan =
      plan.num_operands >= 0 && static_cast<int64_t>(plan.slots.size()) > plan.num_operands;
  if (target->is_typed_ffi() ? !plan.slots.empty() : !untyped_plan) {
    return fail("a plan for the other calling convention than its target's");
  }
  return std::make_unique<CustomCallThunk>(std::move(name), *std::move(target), std::move(plan));
}

}  // namespace axle::cpu
