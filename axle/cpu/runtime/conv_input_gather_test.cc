// The channels-last copies of a convolution's input (conv_input_gather.h):
// each output element is the input element it stands for, or zero in a
// hole of the lhs dilation.
#include "axle/cpu/runtime/conv_input_gather.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

TEST(ConvInputGather, RowsChannelsLast) {
  // A [1, C=3, H=4, W=5] array read NCHW (strides 20, 5, 1) and, for 1-d,
  // [1, C=2, W=6] with a strided last dim: each element of the row range
  // lands at [row - begin][w][c].
  std::vector<float> in(60);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  std::vector<float> out(size_t{2} * 5 * 3, -1);
  GatherRowsChannelsLast(reinterpret_cast<const char*>(in.data()), 4, {1, 3, 4, 5}, {60, 20, 5, 1},
                         1, 3, reinterpret_cast<char*>(out.data()));
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t w = 0; w < 5; ++w) {
      for (int64_t c = 0; c < 3; ++c) {
        EXPECT_EQ(out[(h * 5 + w) * 3 + c], in[c * 20 + (h + 1) * 5 + w])
            << h << " " << w << " " << c;
      }
    }
  }
  // 1-d, bf16-sized elements, channel stride 1 and pixel stride 4 (a
  // channels-last array with 2 of 4 channels).
  std::vector<uint16_t> in16(24), out16(size_t{4} * 2, 0);
  for (size_t i = 0; i < in16.size(); ++i) in16[i] = static_cast<uint16_t>(i);
  GatherRowsChannelsLast(reinterpret_cast<const char*>(in16.data()), 2, {1, 2, 6}, {24, 1, 4}, 2, 6,
                         reinterpret_cast<char*>(out16.data()));
  for (int64_t x = 0; x < 4; ++x) {
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(out16[x * 2 + c], in16[(x + 2) * 4 + c]);
  }
  // 3-d: [1, C=2, D=3, H=2, W=2], rows 1..3 of D, NCDHW.
  std::vector<float> in3(24), out3(size_t{2} * 2 * 2 * 2, -1);
  for (size_t i = 0; i < in3.size(); ++i) in3[i] = static_cast<float>(i);
  GatherRowsChannelsLast(reinterpret_cast<const char*>(in3.data()), 4, {1, 2, 3, 2, 2},
                         {24, 12, 4, 2, 1}, 1, 3, reinterpret_cast<char*>(out3.data()));
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t w = 0; w < 2; ++w) {
        for (int64_t c = 0; c < 2; ++c) {
          EXPECT_EQ(out3[((d * 2 + h) * 2 + w) * 2 + c], in3[c * 12 + (d + 1) * 4 + h * 2 + w]);
        }
      }
    }
  }
}

TEST(ConvInputGather, DilatedInputWithBatchGroups) {
  // lhs [N=2, C=2, W=3] row-major, 2 batch groups (so one output batch),
  // lhs dilation 2 (5 dilated positions) cropped by 1 at the start: dense
  // positions x = 0..3 stand for dilated x + 1, input w = (x + 1) / 2 where
  // that divides, and batch group g's features land at [g * 2, g * 2 + 2).
  conv::ConvPlan plan;
  plan.spatial = 1;
  plan.batch_groups = 2;
  plan.lhs.strides = {6, 3, 1};
  plan.lhs_order = {0, 1, 2};
  plan.lhs_dims = {2, 2, 3};
  plan.out_dims = {1, 2, 4};
  plan.window.resize(1);
  plan.window[0].set_base_dilation(2);
  std::vector<float> in(12);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i + 1);
  std::vector<float> out(size_t{4} * 4, -1);
  GatherDilatedInput(plan, {1}, {4}, reinterpret_cast<const char*>(in.data()), 4,
                     reinterpret_cast<char*>(out.data()));
  for (int64_t x = 0; x < 4; ++x) {
    for (int64_t g = 0; g < 2; ++g) {
      for (int64_t c = 0; c < 2; ++c) {
        const bool hole = (x + 1) % 2 != 0;
        const float expected = hole ? 0.0f : in[g * 6 + c * 3 + (x + 1) / 2];
        EXPECT_EQ(out[x * 4 + g * 2 + c], expected) << x << " " << g << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace axle::cpu
