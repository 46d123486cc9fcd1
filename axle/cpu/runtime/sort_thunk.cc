//===- sort_thunk.cc - sort with a compiled comparator ---------------------===//
#include "axle/cpu/runtime/sort_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

// An element of `N` bytes, moved by value.
template <int N>
struct Element {
  char bytes[N];
};

// Sorts slices [begin, end) of one operand of N-byte elements by value:
// each slice is gathered into a contiguous buffer, sorted there (no index
// indirection, so the comparator reads neighbouring memory) and stored back.
template <int N>
void SortElements(const CompiledScalarFunction& comparator, char* data,
                  const SortThunk::Geometry& geometry, int64_t begin, int64_t end) {
  const int64_t length = geometry.length, inner = geometry.inner;
  std::vector<Element<N>> slice(length);
  const void* parameters[2];
  int8_t result = 0;
  void* results[] = {&result};
  for (int64_t s = begin; s < end; ++s) {
    char* base = data + ((s / inner) * length * inner + s % inner) * N;
    for (int64_t k = 0; k < length; ++k) std::memcpy(&slice[k], base + k * inner * N, N);
    std::stable_sort(slice.begin(), slice.end(), [&](const Element<N>& a, const Element<N>& b) {
      parameters[0] = &a;
      parameters[1] = &b;
      comparator.Run(parameters, results);
      return result != 0;
    });
    for (int64_t k = 0; k < length; ++k) std::memcpy(base + k * inner * N, &slice[k], N);
  }
}

// Sorts slices [begin, end) of several operands whose elements together
// fit an R-byte record: each slice's elements are packed into records
// (operand i at its offset), sorted by value and unpacked, so the
// comparator reads neighbouring memory and the sort moves records, not an
// index order followed by gathers.
template <int R>
void SortRecords(const CompiledScalarFunction& comparator, const std::vector<char*>& outputs,
                 const std::vector<int64_t>& element_bytes, const SortThunk::Geometry& geometry,
                 int64_t begin, int64_t end) {
  const int64_t n = static_cast<int64_t>(outputs.size());
  const int64_t length = geometry.length, inner = geometry.inner;
  std::vector<int64_t> offsets(n);
  for (int64_t i = 1; i < n; ++i) offsets[i] = offsets[i - 1] + element_bytes[i - 1];
  std::vector<Element<R>> slice(length);
  std::vector<const void*> parameters(2 * n);
  int8_t result = 0;
  void* results[] = {&result};
  for (int64_t s = begin; s < end; ++s) {
    const int64_t first = (s / inner) * length * inner + s % inner;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bytes = element_bytes[i];
      const char* base = outputs[i] + first * bytes;
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(slice[k].bytes + offsets[i], base + k * inner * bytes, bytes);
      }
    }
    std::stable_sort(slice.begin(), slice.end(), [&](const Element<R>& a, const Element<R>& b) {
      for (int64_t i = 0; i < n; ++i) {
        parameters[2 * i] = a.bytes + offsets[i];
        parameters[2 * i + 1] = b.bytes + offsets[i];
      }
      comparator.Run(parameters.data(), results);
      return result != 0;
    });
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bytes = element_bytes[i];
      char* base = outputs[i] + first * bytes;
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(base + k * inner * bytes, slice[k].bytes + offsets[i], bytes);
      }
    }
  }
}

// Stable LSD radix sort of `keys` (of `bits` significant bits) carrying
// `order` along, 8 bits a pass; a pass whose digit is the same in every
// key moves nothing and is skipped. `keys_scratch` and `order_scratch`
// have the same length.
void RadixSort(std::vector<uint64_t>& keys, std::vector<int64_t>& order,
               std::vector<uint64_t>& keys_scratch, std::vector<int64_t>& order_scratch, int bits) {
  const int64_t length = static_cast<int64_t>(keys.size());
  const int64_t passes = (bits + 7) / 8;
  std::vector<int64_t> counts(static_cast<size_t>(passes) * 256, 0);
  for (uint64_t key : keys) {
    for (int64_t p = 0; p < passes; ++p) ++counts[p * 256 + ((key >> (8 * p)) & 255)];
  }
  for (int64_t p = 0; p < passes; ++p) {
    int64_t* count = counts.data() + p * 256;
    if (count[keys[0] >> (8 * p) & 255] == length) continue;
    int64_t start = 0;
    for (int digit = 0; digit < 256; ++digit) {
      const int64_t n = count[digit];
      count[digit] = start;
      start += n;
    }
    for (int64_t k = 0; k < length; ++k) {
      const int64_t to = count[(keys[k] >> (8 * p)) & 255]++;
      keys_scratch[to] = keys[k];
      order_scratch[to] = order[k];
    }
    keys.swap(keys_scratch);
    order.swap(order_scratch);
  }
}

}  // namespace

void SortThunk::SortSlicesByKeys(const std::vector<char*>& outputs, int64_t begin,
                                 int64_t end) const {
  const int64_t n = static_cast<int64_t>(outputs.size());
  const int64_t length = geometry_.length, inner = geometry_.inner;
  const int bits = primitive_util::BitWidth(key_order_->type());
  std::vector<uint64_t> keys(length), keys_scratch(length);
  std::vector<int64_t> order(length), order_scratch(length);
  const int64_t max_bytes = *std::max_element(element_bytes_.begin(), element_bytes_.end());
  std::vector<char> scratch(length * max_bytes);
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / inner) * length * inner + slice % inner;
    if (!key_order_->Keys(outputs[0] + first * element_bytes_[0], length, inner, keys.data()) &&
        key_order_->nan_free_only()) {
      // A NaN key: the keys do not give this comparator's order.
      SortSlicesByComparator(outputs, slice, slice + 1);
      continue;
    }
    std::iota(order.begin(), order.end(), int64_t{0});
    RadixSort(keys, order, keys_scratch, order_scratch, bits);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bytes = element_bytes_[i];
      char* base = outputs[i] + first * bytes;
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(scratch.data() + k * bytes, base + k * inner * bytes, bytes);
      }
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(base + k * inner * bytes, scratch.data() + order[k] * bytes, bytes);
      }
    }
  }
}

void SortThunk::SortSlices(const std::vector<char*>& outputs, int64_t begin, int64_t end) const {
  if (key_order_) return SortSlicesByKeys(outputs, begin, end);
  SortSlicesByComparator(outputs, begin, end);
}

void SortThunk::SortSlicesByComparator(const std::vector<char*>& outputs, int64_t begin,
                                       int64_t end) const {
  const int64_t n = static_cast<int64_t>(outputs.size());
  if (n == 1) {
    switch (element_bytes_[0]) {
      case 1:
        return SortElements<1>(*comparator_, outputs[0], geometry_, begin, end);
      case 2:
        return SortElements<2>(*comparator_, outputs[0], geometry_, begin, end);
      case 4:
        return SortElements<4>(*comparator_, outputs[0], geometry_, begin, end);
      case 8:
        return SortElements<8>(*comparator_, outputs[0], geometry_, begin, end);
      case 16:
        return SortElements<16>(*comparator_, outputs[0], geometry_, begin, end);
      default:
        break;
    }
  }
  const int64_t record_bytes =
      std::accumulate(element_bytes_.begin(), element_bytes_.end(), int64_t{0});
  if (n > 1 && record_bytes <= 8) {
    return SortRecords<8>(*comparator_, outputs, element_bytes_, geometry_, begin, end);
  }
  if (n > 1 && record_bytes <= 16) {
    return SortRecords<16>(*comparator_, outputs, element_bytes_, geometry_, begin, end);
  }
  const int64_t length = geometry_.length, inner = geometry_.inner;
  std::vector<int64_t> order(length);
  std::vector<const void*> parameters(2 * n);
  int8_t result = 0;
  void* results[] = {&result};
  int64_t max_bytes = *std::max_element(element_bytes_.begin(), element_bytes_.end());
  std::vector<char> scratch(length * max_bytes);
  for (int64_t slice = begin; slice < end; ++slice) {
    // Element k of the slice is at linear index first + k * inner.
    const int64_t first = (slice / inner) * length * inner + slice % inner;
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t i = 0; i < n; ++i) {
        parameters[2 * i] = outputs[i] + (first + a * inner) * element_bytes_[i];
        parameters[2 * i + 1] = outputs[i] + (first + b * inner) * element_bytes_[i];
      }
      comparator_->Run(parameters.data(), results);
      return result != 0;
    });
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bytes = element_bytes_[i];
      char* base = outputs[i] + first * bytes;
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(scratch.data() + k * bytes, base + order[k] * inner * bytes, bytes);
      }
      for (int64_t k = 0; k < length; ++k) {
        std::memcpy(base + k * inner * bytes, scratch.data() + k * bytes, bytes);
      }
    }
  }
}

absl::Status SortThunk::Execute(const ThunkContext& context) const {
  std::vector<char*> outputs;
  for (size_t i = 0; i < output_values_.size(); ++i) {
    const int64_t bytes = geometry_.outer * geometry_.length * geometry_.inner * element_bytes_[i];
    auto* output = static_cast<char*>(context.address(output_values_[i]));
    const void* operand = context.address(operand_values_[i]);
    if (bytes > 0 && operand != output) std::memmove(output, operand, bytes);
    outputs.push_back(output);
  }
  const int64_t slices = geometry_.outer * geometry_.inner;
  if (slices == 0 || geometry_.length < 2) return absl::OkStatus();
  const int64_t per_slice =
      geometry_.length * std::bit_width(static_cast<uint64_t>(geometry_.length));
  if (context.thread_pool == nullptr || slices < 2 ||
      slices * per_slice < kMinParallelComparisons) {
    SortSlices(outputs, 0, slices);
    return absl::OkStatus();
  }
  const int64_t min_slices = std::max<int64_t>(1, kMinParallelComparisons / 2 / per_slice);
  context.thread_pool->ParallelFor(
      slices, min_slices, [&](int64_t begin, int64_t end) { SortSlices(outputs, begin, end); },
      context.max_threads);
  return absl::OkStatus();
}

absl::Status SortThunk::Serialize(ThunkWriter& writer) const {
  // A key order for NaN-free slices only is saved as its comparator (the
  // loaded sort calls it for every slice).
  const bool by_keys = key_order_ && !key_order_->nan_free_only();
  writer.Begin(by_keys ? ThunkTag::kSort : ThunkTag::kComparatorSort, *this);
  writer.Int(geometry_.outer);
  writer.Int(geometry_.length);
  writer.Int(geometry_.inner);
  writer.Ints(element_bytes_);
  writer.Ints(operand_values_);
  writer.Ints(output_values_);
  if (!by_keys) {
    return writer.ScalarFunction(*comparator_, absl::StrCat("sort %", name(), "'s comparator"));
  }
  writer.Int(static_cast<int64_t>(key_order_->type()));
  writer.Bool(key_order_->descending());
  writer.Int(static_cast<int64_t>(key_order_->replacements().size()));
  for (const SortKeyOrder::Replacement& step : key_order_->replacements()) {
    writer.Bool(step.nan);
    writer.Double(step.value);
    writer.Double(step.replacement);
  }
  return absl::OkStatus();
}

namespace {

// What both kinds of sort write first: the slices, the element sizes and
// the values.
struct SortRecord {
  SortThunk::Geometry geometry;
  std::vector<int64_t> element_bytes;
  std::vector<int64_t> operand_values;
  std::vector<int64_t> output_values;
};

SortRecord ReadSortRecord(ThunkReader& reader) {
  SortRecord record;
  record.geometry.outer = reader.Int();
  record.geometry.length = reader.Int();
  record.geometry.inner = reader.Int();
  record.element_bytes = reader.Ints();
  record.operand_values = reader.Values();
  record.output_values = reader.Values();
  return record;
}

// Why `record`'s operands and slices are malformed; empty when they are not.
std::string CheckSortSlices(const SortRecord& record) {
  const SortThunk::Geometry& geometry = record.geometry;
  const size_t n = record.element_bytes.size();
  if (n == 0 || record.operand_values.size() != n || record.output_values.size() != n) {
    return "operands, outputs and element sizes that do not match";
  }
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  if (geometry.outer < 0 || geometry.length < 0 || geometry.inner < 0 ||
      (geometry.outer > 0 && geometry.length > kMaxElements / geometry.outer) ||
      (geometry.outer * geometry.length > 0 &&
       geometry.inner > kMaxElements / (geometry.outer * geometry.length))) {
    return absl::StrCat("slices of ", geometry.outer, " x ", geometry.length, " x ", geometry.inner,
                        " elements");
  }
  return "";
}

// Why `record`'s elements do not fit the reader's values; empty when they do.
std::string CheckSortValues(const SortRecord& record, const ThunkReader& reader) {
  const SortThunk::Geometry& geometry = record.geometry;
  const int64_t elements = geometry.outer * geometry.length * geometry.inner;
  for (size_t i = 0; i < record.element_bytes.size(); ++i) {
    const int64_t bytes = record.element_bytes[i];
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) {
      return absl::StrCat("elements of ", bytes, " bytes");
    }
    if (!reader.ValueHas(record.operand_values[i], elements * bytes) ||
        !reader.ValueHas(record.output_values[i], elements * bytes)) {
      return "values whose sizes do not match its slices";
    }
  }
  return "";
}

}  // namespace

std::unique_ptr<Thunk> LoadSortThunk(std::string name, ThunkReader& reader) {
  SortRecord record = ReadSortRecord(reader);
  const int64_t type = reader.Int();
  const bool descending = reader.Bool();
  const int64_t count = reader.Count(24);
  std::vector<SortKeyOrder::Replacement> replacements;
  for (int64_t i = 0; i < count && reader.ok(); ++i) {
    SortKeyOrder::Replacement step;
    step.nan = reader.Bool();
    step.value = reader.Double();
    step.replacement = reader.Double();
    replacements.push_back(step);
  }
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("sort %", name, ": ", why));
    return nullptr;
  };
  if (std::string why = CheckSortSlices(record); !why.empty()) return fail(why);
  if (!IsArrayTypeNumber(type) || !SortKeyOrder::Supports(static_cast<PrimitiveType>(type))) {
    return fail(absl::StrCat("a key order of type number ", type));
  }
  if (record.element_bytes[0] != primitive_util::ByteWidth(static_cast<PrimitiveType>(type))) {
    return fail("keys of another size than their key order's type");
  }
  if (std::string why = CheckSortValues(record, reader); !why.empty()) return fail(why);
  return std::make_unique<SortThunk>(
      std::move(name), nullptr,
      SortKeyOrder(static_cast<PrimitiveType>(type), descending, std::move(replacements)),
      record.geometry, std::move(record.element_bytes), std::move(record.operand_values),
      std::move(record.output_values));
}

std::unique_ptr<Thunk> LoadComparatorSortThunk(std::string name, ThunkReader& reader) {
  SortRecord record = ReadSortRecord(reader);
  std::unique_ptr<CompiledScalarFunction> comparator = reader.ScalarFunction();
  if (!reader.ok()) return nullptr;
  std::string why = CheckSortSlices(record);
  if (why.empty()) why = CheckSortValues(record, reader);
  if (!why.empty()) {
    reader.Fail(absl::StrCat("sort %", name, ": ", why));
    return nullptr;
  }
  return std::make_unique<SortThunk>(std::move(name), std::move(comparator), std::nullopt,
                                     record.geometry, std::move(record.element_bytes),
                                     std::move(record.operand_values),
                                     std::move(record.output_values));
}

}  // namespace axle::cpu
