//===- dynamic_update_slice_thunk.cc - dynamic-update-slice, in place -------===//
#include "axle/cpu/runtime/dynamic_update_slice_thunk.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/integer_element.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

namespace pu = primitive_util;

// Start `i` (element i of a start vector, else the scalar) clamped to
// [0, high]: signed types clamp below at 0, unsigned ones compare unsigned.
int64_t ClampedStart(const void* base, PrimitiveType type, int64_t i, int64_t high) {
  return ByteIntegerTypeSwitch(
      type,
      [&]<typename T>() -> int64_t {
        const T v = static_cast<const T*>(base)[i];
        if constexpr (std::is_signed_v<T>) {
          return std::clamp<int64_t>(v, 0, high);
        } else {
          return static_cast<int64_t>(std::min<uint64_t>(v, static_cast<uint64_t>(high)));
        }
      },
      // DynamicUpdateSliceRunsAsThunk and the loader admit integers only.
      [] { return int64_t{0}; });
}

}  // namespace

std::optional<Thunk::BufferUses> DynamicUpdateSliceThunk::buffer_uses() const {
  BufferUses uses{{operand_value_, update_value_}, {output_value_}};
  uses.reads.insert(uses.reads.end(), start_values_.begin(), start_values_.end());
  return uses;
}

absl::Status DynamicUpdateSliceThunk::Execute(const ThunkContext& context) const {
  const Geometry& g = geometry_;
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  char* out = static_cast<char*>(context.address(output_value_));
  const void* operand = context.address(operand_value_);
  const int64_t operand_bytes = context.size_bytes(output_value_);
  if (operand_bytes > 0 && operand != out) std::memmove(out, operand, operand_bytes);
  int64_t update_elements = 1;
  for (int64_t d : g.update_dims) update_elements *= d;
  if (update_elements == 0) return absl::OkStatus();
  // Element offset of the window's first element.
  const std::vector<int64_t>& strides = strides_;
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t high = g.operand_dims[d] - g.update_dims[d];
    const int64_t start =
        g.start_vector ? ClampedStart(context.address(start_values_[0]), g.start_type, d, high)
                       : ClampedStart(context.address(start_values_[d]), g.start_type, 0, high);
    base += start * strides[d];
  }
  const char* update = static_cast<const char*>(context.address(update_value_));
  // Rows of the update's last dimension (a scalar: one element).
  const int64_t row = rank == 0 ? 1 : g.update_dims[rank - 1];
  const int64_t row_bytes = row * g.element_bytes;
  const int64_t rows = update_elements / row;
  absl::InlinedVector<int64_t, 8> index(std::max<int64_t>(rank - 1, 0), 0);  // the outer dims
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = base;
    for (int64_t d = 0; d + 1 < rank; ++d) offset += index[d] * strides[d];
    std::memmove(out + offset * g.element_bytes, update + r * row_bytes, row_bytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < g.update_dims[d]) break;
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status DynamicUpdateSliceThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kDynamicUpdateSlice, *this);
  writer.Ints(geometry_.operand_dims);
  writer.Ints(geometry_.update_dims);
  writer.Int(geometry_.element_bytes);
  writer.Int(static_cast<int64_t>(geometry_.start_type));
  writer.Bool(geometry_.start_vector);
  writer.Int(operand_value_);
  writer.Int(update_value_);
  writer.Ints(start_values_);
  writer.Int(output_value_);
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadDynamicUpdateSliceThunk(std::string name, ThunkReader& reader) {
  DynamicUpdateSliceThunk::Geometry g;
  g.operand_dims = reader.Ints();
  g.update_dims = reader.Ints();
  g.element_bytes = reader.Int();
  const int64_t start_type = reader.Int();
  g.start_vector = reader.Bool();
  const int64_t operand_value = reader.Value();
  const int64_t update_value = reader.Value();
  std::vector<int64_t> start_values = reader.Values();
  const int64_t output_value = reader.Value();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("dynamic-update-slice %", name, ": ", why));
    return nullptr;
  };
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  if (static_cast<int64_t>(g.update_dims.size()) != rank) {
    return fail("an update of another rank than its operand");
  }
  // Elements of the operand and of the update, each checked against
  // overflow by the bytes of the value that must hold them.
  int64_t operand_elements = 1, update_elements = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (g.update_dims[d] < 0 || g.update_dims[d] > g.operand_dims[d]) {
      return fail("an update dimension outside its operand's");
    }
    if (g.operand_dims[d] > 0 && operand_elements > (int64_t{1} << 48) / g.operand_dims[d]) {
      return fail("an operand too large");
    }
    operand_elements *= g.operand_dims[d];
    update_elements *= g.update_dims[d];
  }
  if (g.element_bytes != 1 && g.element_bytes != 2 && g.element_bytes != 4 &&
      g.element_bytes != 8 && g.element_bytes != 16) {
    return fail(absl::StrCat("elements of ", g.element_bytes, " bytes"));
  }
  if (!IsArrayTypeNumber(start_type) ||
      !primitive_util::IsIntegralType(static_cast<PrimitiveType>(start_type))) {
    return fail(absl::StrCat("start indices of type number ", start_type));
  }
  g.start_type = static_cast<PrimitiveType>(start_type);
  const int64_t start_bytes = primitive_util::ByteWidth(g.start_type);
  if (start_values.size() != static_cast<size_t>(g.start_vector ? 1 : rank)) {
    return fail("a start index count that is not its rank");
  }
  bool sizes_ok = reader.ValueHas(operand_value, operand_elements * g.element_bytes) &&
                  reader.ValueHas(output_value, operand_elements * g.element_bytes) &&
                  reader.ValueHas(update_value, update_elements * g.element_bytes);
  for (int64_t start : start_values) {
    sizes_ok = sizes_ok && reader.ValueHas(start, start_bytes * (g.start_vector ? rank : 1));
  }
  if (!sizes_ok) return fail("values whose sizes do not match its geometry");
  return std::make_unique<DynamicUpdateSliceThunk>(std::move(name), std::move(g), operand_value,
                                                   update_value, std::move(start_values),
                                                   output_value);
}

}  // namespace axle::cpu
