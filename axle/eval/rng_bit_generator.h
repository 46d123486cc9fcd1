//===- rng_bit_generator.h - XLA's rng-bit-generator, bit for bit ----------===//
//
// The counter-based generators of Random123 (Salmon et al., SC 2011) and the
// way XLA's RngBitGeneratorExpander (xla/client/lib/prng.cc) lays their
// blocks out, so that `rng-bit-generator` gives XLA's bits. Shared by the
// interpreter (evaluator_rng.cc) and the cpu platform's thunk.
//
// State (u64[k]): state[0] is the key (low 32 bits first).
//   rng_three_fry (k = 2): state[1] is a 64-bit counter. Threefry-2x32-20
//     encrypts (counter + i) for i = 0, 1, ...: 32-bit and narrower
//     elements split one dimension (the first even one, else the largest)
//     in halves: elements 2j and 2j+1 along it take the two words of one
//     block; 64-bit elements take a whole block (word 0 low). The new
//     state is (key, counter + blocks used).
//   rng_philox (k = 2 or 3; rng_default is Philox, as on XLA:CPU and GPU):
//     Philox-4x32-10 over a 128-bit counter, (state[1], state[2]) for k = 3
//     and (state[1], state[0]) for k = 2 (low word first). Block i yields
//     elements 4i..4i+3 (32-bit and narrower) or 2i, 2i+1 (64-bit, words
//     0|1 and 2|3), in row-major order. The new state is (key, counter +
//     blocks used), only the counter's low word for k = 2.
// Elements narrower than 32 bits take the low bits of a 32-bit draw; float
// element types get the same bits as the unsigned type of their width.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_RNG_BIT_GENERATOR_H_
#define AXLE_EVAL_RNG_BIT_GENERATOR_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"

namespace axle {

// Random123's threefry2x32 with 20 rounds and philox4x32 with 10 rounds.
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter);
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 2> key, std::array<uint32_t, 4> counter);

// Whether rng-bit-generator can make `bits_shape` from a u64[state_size]
// state with `algorithm`; InvalidArgument saying why not.
absl::Status CheckRandomBitsShape(RandomAlgorithm algorithm, int64_t state_size,
                                  const Shape& bits_shape);

// How threefry lays out elements of 32 bits and narrower (prng.cc's
// SplitShapeIntoHalves): one dimension of `bits_shape` (the first even one,
// else the first of the largest; a scalar is [1]) of `length` elements,
// `outer` elements before it and `inner` after it (row-major). Elements 2j
// and 2j+1 along it take the two words of block (o * half + j) * inner + q,
// half = (length + 1) / 2.
struct ThreefrySplit {
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
};
ThreefrySplit SplitForThreefry(const Shape& bits_shape);

// Fills `bits` (dense, row-major, of `bits_shape`) and `new_state` (the
// same size as `state`). Call CheckRandomBitsShape first.
void GenerateRandomBits(RandomAlgorithm algorithm, absl::Span<const uint64_t> state,
                        const Shape& bits_shape, void* bits, absl::Span<uint64_t> new_state);

}  // namespace axle

#endif  // AXLE_EVAL_RNG_BIT_GENERATOR_H_
