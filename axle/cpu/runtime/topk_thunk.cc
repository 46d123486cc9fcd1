//===- topk_thunk.cc - topk of integers and IEEE floats as a partial sort --===//
//
// topk(x), k=K of pred, integer, f16, bf16, f32 and f64 rows: every element
// of a row becomes an int64 key in the interpreter's order
// (axle/eval/evaluator_sort.cc): integers by value, floats by total order
// (-0 below +0) with every NaN, whatever its sign, above +inf. A partial
// sort of (key, index) pairs, ties broken by the lower index, gives the
// first K in O(n log K) per row. Other element types (the 8- and 4-bit
// floats) go through TopKDecomposer's sort instead (topk_decomposer.h).
// EmitTopKThunk is in topk_thunk_emitter.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/topk_thunk.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

// Key of an IEEE float of `Bits` (unsigned) with NaNs above everything:
// magnitudes above `inf` are NaN.
template <typename Bits>
int64_t FloatKey(Bits bits, Bits inf) {
  const Bits sign = Bits{1} << (sizeof(Bits) * 8 - 1);
  const Bits magnitude = bits & ~sign;
  if (magnitude > inf) return INT64_MAX;
  // -0 is -1, below +0.
  return (bits & sign) ? -static_cast<int64_t>(magnitude) - 1 : static_cast<int64_t>(magnitude);
}

template <typename T>
T Load(const char* data, int64_t i) {
  T value;
  std::memcpy(&value, data + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

// The order key of element `i` of `data`; `type` is one TopKThunk runs.
int64_t KeyOf(PrimitiveType type, const char* data, int64_t i) {
  switch (type) {
    case PRED:
    case U8:
      return Load<uint8_t>(data, i);
    case S8:
      return Load<int8_t>(data, i);
    case U16:
      return Load<uint16_t>(data, i);
    case S16:
      return Load<int16_t>(data, i);
    case U32:
      return Load<uint32_t>(data, i);
    case S32:
      return Load<int32_t>(data, i);
    case U64:
      return static_cast<int64_t>(Load<uint64_t>(data, i) ^ (uint64_t{1} << 63));
    case S64:
      return Load<int64_t>(data, i);
    case F16:
      return FloatKey<uint16_t>(Load<uint16_t>(data, i), 0x7C00);
    case BF16:
      return FloatKey<uint16_t>(Load<uint16_t>(data, i), 0x7F80);
    case F32:
      return FloatKey<uint32_t>(Load<uint32_t>(data, i), 0x7F800000u);
    case F64:
      return FloatKey<uint64_t>(Load<uint64_t>(data, i), uint64_t{0x7FF0000000000000});
    default:
      return 0;
  }
}

class TopKThunk : public Thunk {
 public:
  TopKThunk(std::string name, PrimitiveType type, int64_t rows, int64_t length, int64_t k,
            bool largest, int64_t input, int64_t values, int64_t indices)
      : Thunk(std::move(name)),
        type_(type),
        rows_(rows),
        length_(length),
        k_(k),
        largest_(largest),
        input_(input),
        values_(values),
        indices_(indices) {}

  absl::Status Execute(const ThunkContext& context) const override {
    const char* input = static_cast<const char*>(context.address(input_));
    char* values = static_cast<char*>(context.address(values_));
    char* indices = static_cast<char*>(context.address(indices_));
    const int64_t width = primitive_util::ByteWidth(type_);
    std::vector<std::pair<int64_t, int32_t>> row(length_);
    auto before = [this](const std::pair<int64_t, int32_t>& a,
                         const std::pair<int64_t, int32_t>& b) {
      if (a.first != b.first) return largest_ ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    for (int64_t r = 0; r < rows_; ++r) {
      const char* in = input + r * length_ * width;
      for (int64_t j = 0; j < length_; ++j) row[j] = {KeyOf(type_, in, j), static_cast<int32_t>(j)};
      std::partial_sort(row.begin(), row.begin() + k_, row.end(), before);
      for (int64_t j = 0; j < k_; ++j) {
        std::memcpy(values + (r * k_ + j) * width, in + row[j].second * width, width);
        std::memcpy(indices + (r * k_ + j) * sizeof(int32_t), &row[j].second, sizeof(int32_t));
      }
    }
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{{input_}, {values_, indices_}};
  }

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kTopK, *this);
    writer.Int(static_cast<int64_t>(type_));
    writer.Int(rows_);
    writer.Int(length_);
    writer.Int(k_);
    writer.Bool(largest_);
    writer.Int(input_);
    writer.Int(values_);
    writer.Int(indices_);
    return absl::OkStatus();
  }

 private:
  PrimitiveType type_;
  int64_t rows_, length_, k_;
  bool largest_;
  int64_t input_, values_, indices_;
};

}  // namespace

bool TopKThunkSupports(PrimitiveType type) {
  switch (type) {
    case PRED:
    case U8:
    case S8:
    case U16:
    case S16:
    case U32:
    case S32:
    case U64:
    case S64:
    case F16:
    case BF16:
    case F32:
    case F64:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<Thunk> MakeTopKThunk(std::string name, PrimitiveType type, int64_t rows,
                                     int64_t length, int64_t k, bool largest, int64_t input,
                                     int64_t values, int64_t indices) {
  return std::make_unique<TopKThunk>(std::move(name), type, rows, length, k, largest, input, values,
                                     indices);
}

std::unique_ptr<Thunk> LoadTopKThunk(std::string name, ThunkReader& reader) {
  const int64_t type = reader.Int();
  const int64_t rows = reader.Int();
  const int64_t length = reader.Int();
  const int64_t k = reader.Int();
  const bool largest = reader.Bool();
  const int64_t input = reader.Value();
  const int64_t values = reader.Value();
  const int64_t indices = reader.Value();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("topk %", name, ": ", why));
    return nullptr;
  };
  if (!IsArrayTypeNumber(type) || !TopKThunkSupports(static_cast<PrimitiveType>(type))) {
    return fail(absl::StrCat("elements of type number ", type));
  }
  if (rows < 0 || length < 0 || length > INT32_MAX || k < 0 || k > length ||
      (length > 0 && rows > (int64_t{1} << 40) / length)) {
    return fail(absl::StrCat(rows, " rows of ", length, " elements, k=", k));
  }
  const int64_t width = primitive_util::ByteWidth(static_cast<PrimitiveType>(type));
  if (!reader.ValueHas(input, rows * length * width) ||
      !reader.ValueHas(values, rows * k * width) ||
      !reader.ValueHas(indices, rows * k * static_cast<int64_t>(sizeof(int32_t)))) {
    return fail("values whose sizes do not match its rows");
  }
  return MakeTopKThunk(std::move(name), static_cast<PrimitiveType>(type), rows, length, k, largest,
                       input, values, indices);
}

}  // namespace axle::cpu
