//===- sort_key_order.cc - sort comparators that order by a native key ----===//
//
// The keys (what the sort thunk runs); MatchSortKeyOrder, which reads the
// comparator's HLO, is in sort_key_order_from_hlo.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/sort_key_order.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "axle/cpu/runtime/integer_element.h"

namespace axle::cpu {
namespace {

using Replacement = SortKeyOrder::Replacement;

// Flips a key of `bits` significant bits for a descending order.
uint64_t Flip(uint64_t key, int bits) {
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return ~key & mask;
}

}  // namespace

template <typename Float, typename Bits>
bool SortKeyOrder::FloatKeys(const char* data, int64_t count, int64_t stride,
                             uint64_t* keys) const {
  constexpr int kBits = sizeof(Bits) * 8;
  constexpr Bits kSign = Bits{1} << (kBits - 1);
  bool numbers = true;
  for (int64_t k = 0; k < count; ++k) {
    Float x;
    std::memcpy(&x, data + k * stride * static_cast<int64_t>(sizeof(Float)), sizeof(Float));
    for (const Replacement& step : replacements_) {
      if (step.nan ? std::isnan(x) : x == static_cast<Float>(step.value)) {
        x = static_cast<Float>(step.replacement);
        break;
      }
    }
    numbers = numbers && !std::isnan(x);
    // The total order: negative values (sign set) reversed below the
    // positive ones, -NaN lowest and +NaN highest.
    const Bits bits = std::bit_cast<Bits>(x);
    const uint64_t key =
        (bits & kSign) ? static_cast<Bits>(~bits) : static_cast<Bits>(bits | kSign);
    keys[k] = descending_ ? Flip(key, kBits) : key;
  }
  return numbers;
}

template <typename Int>
void SortKeyOrder::IntegerKeys(const char* data, int64_t count, int64_t stride,
                               uint64_t* keys) const {
  constexpr int kBits = sizeof(Int) * 8;
  using Unsigned = std::make_unsigned_t<Int>;
  constexpr Unsigned kBias = std::is_signed_v<Int> ? Unsigned{1} << (kBits - 1) : 0;
  for (int64_t k = 0; k < count; ++k) {
    Int x;
    std::memcpy(&x, data + k * stride * static_cast<int64_t>(sizeof(Int)), sizeof(Int));
    for (const Replacement& step : replacements_) {
      if (!step.nan && static_cast<double>(x) == step.value) {
        x = static_cast<Int>(step.replacement);
        break;
      }
    }
    const uint64_t key = static_cast<Unsigned>(static_cast<Unsigned>(x) ^ kBias);
    keys[k] = descending_ ? Flip(key, kBits) : key;
  }
}

bool SortKeyOrder::Supports(PrimitiveType type) {
  return type == F32 || type == F64 || IsByteIntegerType(type);
}

bool SortKeyOrder::Keys(const char* data, int64_t count, int64_t stride, uint64_t* keys) const {
  if (type_ == F32) return FloatKeys<float, uint32_t>(data, count, stride, keys);
  if (type_ == F64) return FloatKeys<double, uint64_t>(data, count, stride, keys);
  ByteIntegerTypeSwitch(
      type_, [&]<typename T>() { IntegerKeys<T>(data, count, stride, keys); }, [] {});
  return true;
}

}  // namespace axle::cpu
