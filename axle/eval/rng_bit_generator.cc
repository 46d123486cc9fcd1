//===- rng_bit_generator.cc - XLA's rng-bit-generator, bit for bit ---------===//
#include "axle/eval/rng_bit_generator.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"

namespace axle {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

int ElementBits(const Shape& shape) { return primitive_util::BitWidth(shape.element_type()); }

// Stores the low `bits` bits of `value` as element `i` of `out`.
void Store(void* out, int bits, int64_t i, uint64_t value) {
  switch (bits) {
    case 8:
      static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(value);
      break;
    case 16:
      static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(value);
      break;
    case 32:
      static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(value);
      break;
    default:
      static_cast<uint64_t*>(out)[i] = value;
      break;
  }
}

// 128-bit counter {low, high} plus `n`.
std::array<uint64_t, 2> Add128(std::array<uint64_t, 2> counter, uint64_t n) {
  uint64_t low = counter[0] + n;
  return {low, counter[1] + (low < counter[0] ? 1 : 0)};
}

void ThreefryBits(absl::Span<const uint64_t> state, const Shape& shape, void* out,
                  absl::Span<uint64_t> new_state) {
  const std::array<uint32_t, 2> key = {Low(state[0]), High(state[0])};
  const uint64_t counter = state[1];
  const int bits = ElementBits(shape);
  const int64_t n = ShapeUtil::ElementsIn(shape);
  auto block = [&](uint64_t i) { return Threefry2x32(key, {Low(counter + i), High(counter + i)}); };
  new_state[0] = state[0];
  if (bits == 64) {
    for (int64_t i = 0; i < n; ++i) {
      std::array<uint32_t, 2> x = block(static_cast<uint64_t>(i));
      Store(out, bits, i, uint64_t{x[0]} | (uint64_t{x[1]} << 32));
    }
    new_state[1] = counter + static_cast<uint64_t>(n);
    return;
  }
  const ThreefrySplit split = SplitForThreefry(shape);
  const int64_t outer = split.outer, inner = split.inner;
  const int64_t length = split.length, half = (length + 1) / 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < half; ++j) {
      for (int64_t q = 0; q < inner; ++q) {
        const uint64_t i = static_cast<uint64_t>((o * half + j) * inner + q);
        std::array<uint32_t, 2> x = block(i);
        for (int64_t w = 0; w < 2 && 2 * j + w < length; ++w) {
          Store(out, bits, (o * length + 2 * j + w) * inner + q, x[w]);
        }
      }
    }
  }
  new_state[1] = counter + static_cast<uint64_t>(outer * half * inner);
}

void PhiloxBits(absl::Span<const uint64_t> state, const Shape& shape, void* out,
                absl::Span<uint64_t> new_state) {
  const std::array<uint32_t, 2> key = {Low(state[0]), High(state[0])};
  const std::array<uint64_t, 2> counter = state.size() >= 3
                                              ? std::array<uint64_t, 2>{state[1], state[2]}
                                              : std::array<uint64_t, 2>{state[1], state[0]};
  const int bits = ElementBits(shape);
  const int64_t n = ShapeUtil::ElementsIn(shape);
  const int64_t per_block = bits == 64 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t i = 0; i < blocks; ++i) {
    const std::array<uint64_t, 2> c = Add128(counter, static_cast<uint64_t>(i));
    std::array<uint32_t, 4> x = Philox4x32(key, {Low(c[0]), High(c[0]), Low(c[1]), High(c[1])});
    if (bits == 64) {
      for (int64_t k = 0; k < 2 && 2 * i + k < n; ++k) {
        Store(out, bits, 2 * i + k, uint64_t{x[2 * k]} | (uint64_t{x[2 * k + 1]} << 32));
      }
    } else {
      for (int64_t k = 0; k < 4 && 4 * i + k < n; ++k) Store(out, bits, 4 * i + k, x[k]);
    }
  }
  const std::array<uint64_t, 2> next = Add128(counter, static_cast<uint64_t>(blocks));
  new_state[0] = state[0];
  new_state[1] = next[0];
  if (state.size() >= 3) new_state[2] = next[1];
}

}  // namespace

std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0], x1 = counter[1] + ks[1];
  // Five groups of four rounds, each followed by a key injection.
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, kRotations[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 2> key, std::array<uint32_t, 4> counter) {
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  uint32_t k[2] = {key[0], key[1]};
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53} * c[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57} * c[2];
    const uint32_t next[4] = {High(p1) ^ c[1] ^ k[0], Low(p1), High(p0) ^ c[3] ^ k[1], Low(p0)};
    std::memcpy(c, next, sizeof(c));
    k[0] += 0x9E3779B9;
    k[1] += 0xBB67AE85;
  }
  return {c[0], c[1], c[2], c[3]};
}

ThreefrySplit SplitForThreefry(const Shape& bits_shape) {
  std::vector<int64_t> dims = bits_shape.dimensions();
  if (dims.empty()) dims.push_back(1);
  int64_t split = -1;
  for (size_t d = 0; d < dims.size() && split < 0; ++d) {
    if (dims[d] % 2 == 0) split = static_cast<int64_t>(d);
  }
  if (split < 0) {
    split = 0;
    for (size_t d = 1; d < dims.size(); ++d) {
      if (dims[d] > dims[split]) split = static_cast<int64_t>(d);
    }
  }
  ThreefrySplit result;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < split) result.outer *= dims[d];
    if (d > split) result.inner *= dims[d];
  }
  result.length = dims[split];
  return result;
}

absl::Status CheckRandomBitsShape(RandomAlgorithm algorithm, int64_t state_size,
                                  const Shape& bits_shape) {
  if (!bits_shape.IsArray()) {
    return absl::InvalidArgumentError("rng-bit-generator: the bits must be an array");
  }
  const PrimitiveType type = bits_shape.element_type();
  const int bits = primitive_util::BitWidth(type);
  if (type == PRED || primitive_util::IsComplexType(type) ||
      (bits != 8 && bits != 16 && bits != 32 && bits != 64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rng-bit-generator: cannot generate ", primitive_util::LowercasePrimitiveTypeName(type),
        " elements (8, 16, 32 or 64-bit integers and floats only)"));
  }
  if (algorithm == RNG_THREE_FRY && state_size != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rng-bit-generator: rng_three_fry takes a u64[2] state, not u64[", state_size, "]"));
  }
  if (algorithm != RNG_THREE_FRY && state_size != 2 && state_size != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rng-bit-generator: rng_philox takes a u64[2] or u64[3] state, not u64[", state_size, "]"));
  }
  return absl::OkStatus();
}

void GenerateRandomBits(RandomAlgorithm algorithm, absl::Span<const uint64_t> state,
                        const Shape& bits_shape, void* bits, absl::Span<uint64_t> new_state) {
  if (algorithm == RNG_THREE_FRY) {
    ThreefryBits(state, bits_shape, bits, new_state);
  } else {
    PhiloxBits(state, bits_shape, bits, new_state);
  }
}

}  // namespace axle
