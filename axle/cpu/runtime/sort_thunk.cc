//===- sort_thunk.cc - sort with a compiled comparator ---------------------===//
#include "axle/cpu/runtime/sort_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"

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
    key_order_->Keys(outputs[0] + first * element_bytes_[0], length, inner, keys.data());
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

absl::Status EmitSortThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const auto* sort = cast<HloSortInstruction>(&instruction);
  const int64_t n = instruction.operand_count();
  if (n == 0) return Unsupported(instruction, "sort needs at least one operand");
  const Shape& keys = instruction.operand(0)->shape();
  const int64_t dimension = sort->sort_dimension();
  if (!keys.IsArray() || dimension < 0 || dimension >= std::max<int64_t>(keys.rank(), 1)) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": dimension ", dimension, " is out of range"));
  }
  const HloComputation* comparator = instruction.to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * n) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": the comparator must take ", 2 * n,
                                                   " scalars (lhs and rhs of each operand)"));
  }
  const Shape& root = comparator->root_instruction()->shape();
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != PRED) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": the comparator must return a pred scalar"));
  }
  std::vector<int64_t> operand_values, element_bytes;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& shape = instruction.operand(i)->shape();
    if (!shape.IsArray() || shape.dimensions() != keys.dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu platform: sort ", instruction.name(), ": operand ", i, " has shape ",
                       shape.ToString(), ", the keys ", keys.ToString()));
    }
    for (int64_t side = 0; side < 2; ++side) {
      const Shape& parameter = comparator->parameter_instruction(2 * i + side)->shape();
      if (!parameter.IsArray() || parameter.element_type() != shape.element_type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cpu platform: sort ", instruction.name(), ": comparator parameter ", 2 * i + side,
            " is ", parameter.ToString(), " but operand ", i, " is ", shape.ToString()));
      }
    }
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(instruction.operand(i)));
    operand_values.push_back(value);
    const int64_t count = ShapeUtil::ElementsIn(shape);
    element_bytes.push_back(count == 0 ? 1 : ShapeUtil::ByteSizeOfElements(shape) / count);
  }
  SortThunk::Geometry geometry;
  geometry.outer = 1;
  geometry.inner = 1;
  geometry.length = keys.rank() == 0 ? 1 : keys.dimensions(dimension);
  for (int64_t d = 0; d < keys.rank(); ++d) {
    if (d < dimension) geometry.outer *= keys.dimensions(d);
    if (d > dimension) geometry.inner *= keys.dimensions(d);
  }
  // A comparator with a native key order is never called: not compiled.
  std::optional<SortKeyOrder> key_order = MatchSortKeyOrder(*comparator);
  std::unique_ptr<CompiledScalarFunction> function;
  if (!key_order) {
    AXLE_ASSIGN_OR_RETURN(function, builder.kernels().AddScalarFunction(
                                        *comparator, builder.UniqueName("sort_comparator")));
  }
  std::vector<int64_t> output_values = builder.DefineTemporaries(&instruction);
  if (static_cast<int64_t>(output_values.size()) != n) {
    return Unsupported(instruction, "a sort whose result leaves do not match its operands");
  }
  builder.AddThunk(std::make_unique<SortThunk>(
      instruction.name(), std::move(function), std::move(key_order), geometry,
      std::move(element_bytes), std::move(operand_values), std::move(output_values)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
