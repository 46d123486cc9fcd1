//===- rhs_packing_test.cc - BA16a64b / BA16a64b2a packing vs the layout ----===//
//
// Each packed element is checked against the layout's index formula (the
// one oneDNN documents for these format tags), on shapes with partial
// column blocks, odd row counts, padded rows and a row stride wider than
// the array, packed in one call and in row ranges; an f32 rhs also from
// its transpose.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/rhs_packing.h"

#include <vector>

#include "axle/cpu/host_cache_sizes.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

struct Shape {
  int64_t k, n, ld;
};

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

using PackF32 = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, float*);
using PackBf16 = void (*)(const uint16_t*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, uint16_t*);

TEST(RhsPackingTest, F32MatchesBA16a64b) {
  for (PackF32 pack : {&PackBA16a64b, &PackBA16a64bPortable}) {
    for (Shape shape : {Shape{64, 64, 64}, Shape{37, 200, 203}, Shape{128, 1024, 1024},
                        Shape{5, 3, 3}, Shape{48, 130, 150},
                        // 4 MiB and more packed: non-temporal stores with a
                        // 1 MiB L2; and just under and over 4x this host's L2
                        // (the threshold, host_cache_sizes.h).
                        Shape{1024, 1024, 1024}, Shape{1030, 1000, 1001},
                        Shape{HostCacheSizes().l2_bytes / 1024 - 16, 1024, 1024},
                        Shape{HostCacheSizes().l2_bytes / 1024 + 16, 1024, 1024}}) {
      const int64_t padded_k = RoundUp(shape.k, 16), padded_n = RoundUp(shape.n, 64);
      std::vector<float> src(shape.k * shape.ld);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i + 1);
      for (int64_t step : {padded_k, int64_t{7}}) {
        // 64-byte aligned, as the thunk's buffer is (non-temporal stores).
        std::vector<float> storage(padded_k * padded_n + 17, -1.0f);
        float* dst = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) / 4;
        for (int64_t begin = 0; begin < padded_k; begin += step) {
          pack(src.data(), shape.k, shape.n, shape.ld, padded_k, padded_n, begin,
               std::min(begin + step, padded_k), dst);
        }
        for (int64_t r = 0; r < padded_k; ++r) {
          for (int64_t c = 0; c < padded_n; ++c) {
            const float expected = r < shape.k && c < shape.n ? src[r * shape.ld + c] : 0.0f;
            ASSERT_EQ(dst[((c / 64) * padded_k + r) * 64 + c % 64], expected)
                << "k=" << shape.k << " n=" << shape.n << " r=" << r << " c=" << c;
          }
        }
        EXPECT_EQ(dst[padded_k * padded_n], -1.0f);  // nothing written past the layout
      }
    }
  }
}

TEST(RhsPackingTest, TransposedF32MatchesBA16a64b) {
  // Element (r, c) of the [k, n] array at src[c * ld + r]. Shapes with full
  // 16 x 16 tiles only, partial tiles in k and n, a column stride wider than
  // k, and fewer than 16 rows or columns; packed in one call, in 16-row
  // ranges (as the thunk splits it) and in ranges of 7 rows (partial tiles
  // inside the array).
  for (PackF32 pack : {&PackBA16a64bTransposed, &PackBA16a64bTransposedPortable}) {
    for (Shape shape :
         {Shape{64, 64, 64}, Shape{512, 512, 512}, Shape{37, 200, 40}, Shape{5, 3, 5},
          Shape{48, 130, 50}, Shape{99, 70, 99}, Shape{16, 784, 16}, Shape{10, 256, 10}}) {
      const int64_t padded_k = RoundUp(shape.k, 16), padded_n = RoundUp(shape.n, 64);
      std::vector<float> src(shape.n * shape.ld);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i + 1);
      for (int64_t step : {padded_k, int64_t{16}, int64_t{7}}) {
        std::vector<float> dst(padded_k * padded_n + 1, -1.0f);
        for (int64_t begin = 0; begin < padded_k; begin += step) {
          pack(src.data(), shape.k, shape.n, shape.ld, padded_k, padded_n, begin,
               std::min(begin + step, padded_k), dst.data());
        }
        for (int64_t r = 0; r < padded_k; ++r) {
          for (int64_t c = 0; c < padded_n; ++c) {
            const float expected = r < shape.k && c < shape.n ? src[c * shape.ld + r] : 0.0f;
            ASSERT_EQ(dst[((c / 64) * padded_k + r) * 64 + c % 64], expected)
                << "k=" << shape.k << " n=" << shape.n << " step=" << step << " r=" << r
                << " c=" << c;
          }
        }
        EXPECT_EQ(dst.back(), -1.0f);  // nothing written past the layout
      }
    }
  }
}

TEST(RhsPackingTest, Bf16MatchesBA16a64b2a) {
  for (PackBf16 pack : {&PackBA16a64b2a, &PackBA16a64b2aPortable}) {
    for (Shape shape : {Shape{64, 64, 64}, Shape{37, 200, 203}, Shape{128, 1024, 1024},
                        Shape{5, 3, 3}, Shape{33, 130, 150}}) {
      const int64_t padded_k = RoundUp(shape.k, 16), padded_n = RoundUp(shape.n, 64);
      std::vector<uint16_t> src(shape.k * shape.ld);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 7 + 1);
      for (int64_t step : {padded_k / 2, int64_t{3}}) {
        std::vector<uint16_t> dst(padded_k * padded_n + 1, 0xffff);
        for (int64_t begin = 0; begin < padded_k / 2; begin += step) {
          pack(src.data(), shape.k, shape.n, shape.ld, padded_k, padded_n, begin,
               std::min(begin + step, padded_k / 2), dst.data());
        }
        for (int64_t r = 0; r < padded_k; ++r) {
          for (int64_t c = 0; c < padded_n; ++c) {
            const uint16_t expected = r < shape.k && c < shape.n ? src[r * shape.ld + c] : 0;
            // Block (r / 16, c / 64), column blocks outermost; in it, row
            // pair (r % 16) / 2, column c % 64, row r % 2.
            const int64_t index = ((c / 64) * padded_k + r / 16 * 16) * 64 + (r % 16 / 2) * 128 +
                                  (c % 64) * 2 + r % 2;
            ASSERT_EQ(dst[index], expected)
                << "k=" << shape.k << " n=" << shape.n << " r=" << r << " c=" << c;
          }
        }
        EXPECT_EQ(dst.back(), 0xffff);
      }
    }
  }
}

}  // namespace
}  // namespace axle::cpu
