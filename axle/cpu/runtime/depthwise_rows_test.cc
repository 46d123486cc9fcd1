// The 3x3 depthwise row kernel (depthwise_rows.h) against a scalar
// reference: strides 1 and 2, channel counts with and without a masked
// last block, rows from one pixel to wider than a register block with
// every tail, zero and one column of left padding, rows of padding above
// and below, no bias, and each activation (NaN kept by relu and clamp).
#include "axle/cpu/runtime/depthwise_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// Values in [-1, 1) that differ from element to element.
std::vector<float> Values(int64_t count, int seed) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>((i * 37 + int64_t{seed} * 101) % 199) / 99.5f - 1.0f;
  }
  return values;
}

float Activate(const DepthwiseRows& conv, float x) {
  if (std::isnan(x) || conv.activation == Activation::kNone) return x;
  if (conv.activation == Activation::kRelu) return std::max(x, 0.f);
  return std::min(std::max(x, conv.low), conv.high);
}

std::vector<float> Reference(const DepthwiseRows& conv, const std::vector<float>& in,
                             int64_t in_rows, int64_t pad_top, int64_t out_rows) {
  const int64_t c_count = conv.channels;
  std::vector<float> out(out_rows * conv.out_width * c_count);
  for (int64_t r = 0; r < out_rows; ++r) {
    for (int64_t ox = 0; ox < conv.out_width; ++ox) {
      for (int64_t c = 0; c < c_count; ++c) {
        float sum = conv.bias != nullptr ? conv.bias[c] : 0.f;
        for (int64_t ky = 0; ky < 3; ++ky) {
          const int64_t iy = r * conv.stride - pad_top + ky;
          if (iy < 0 || iy >= in_rows) continue;
          for (int64_t kx = 0; kx < 3; ++kx) {
            const int64_t ix = ox * conv.stride - conv.pad_left + kx;
            if (ix < 0 || ix >= conv.width) continue;
            sum += in[(iy * conv.width + ix) * c_count + c] *
                   conv.weights[(ky * 3 + kx) * c_count + c];
          }
        }
        out[(r * conv.out_width + ox) * c_count + c] = Activate(conv, sum);
      }
    }
  }
  return out;
}

void Check(DepthwiseRows conv, int64_t in_rows, int64_t pad_top, int64_t pad_bottom,
           bool nan_input = false) {
  const std::vector<float> weights = Values(9 * conv.channels, 2);
  const std::vector<float> bias = Values(conv.channels, 3);
  conv.weights = weights.data();
  if (conv.activation != Activation::kNone) conv.bias = bias.data();
  conv.out_width = (conv.width + 2 * conv.pad_left - 3) / conv.stride + 1;
  const int64_t out_rows = (in_rows + pad_top + pad_bottom - 3) / conv.stride + 1;
  std::vector<float> in = Values(in_rows * conv.width * conv.channels, 1);
  if (nan_input) in[in.size() / 2] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(DepthwiseRowsTakes(conv));
  const std::vector<float> expected = Reference(conv, in, in_rows, pad_top, out_rows);
  // Guard values past the output's end must stay.
  std::vector<float> out(expected.size() + 16, 7.f);
  DepthwiseRows3x3(conv, in.data(), in_rows, pad_top, out.data(), out_rows);
  int nans = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(out[i])) << i;
      ++nans;
      continue;
    }
    ASSERT_NEAR(out[i], expected[i], 1e-5f)
        << "element " << i << " width " << conv.width << " channels " << conv.channels << " stride "
        << conv.stride << " pad_left " << conv.pad_left;
  }
  if (nan_input) EXPECT_GT(nans, 0);
  for (size_t i = expected.size(); i < out.size(); ++i) EXPECT_EQ(out[i], 7.f) << i;
}

TEST(DepthwiseRowsTest, WidthsChannelsAndStrides) {
  if (!DepthwiseRowsAvailable()) GTEST_SKIP() << "no AVX-512F";
  for (int64_t stride : {1, 2}) {
    // Up to 128 channels a row runs by pixel block, past it by channel block.
    for (int64_t channels : {5, 16, 30, 48, 128, 133, 160}) {
      for (int64_t width : {1, 2, 3, 4, 7, 8, 13, 14, 21, 31}) {
        for (int64_t pad_left : {0, 1}) {
          if (width + 2 * pad_left < 3) continue;
          DepthwiseRows conv;
          conv.width = width;
          conv.channels = channels;
          conv.stride = stride;
          conv.pad_left = pad_left;
          conv.activation = Activation::kClamp;
          conv.low = 0.f;
          conv.high = 0.5f;
          Check(conv, /*in_rows=*/5, /*pad_top=*/1, /*pad_bottom=*/1);
        }
      }
    }
  }
}

TEST(DepthwiseRowsTest, BandsOfRows) {
  if (!DepthwiseRowsAvailable()) GTEST_SKIP() << "no AVX-512F";
  DepthwiseRows conv;
  conv.width = 19;
  conv.channels = 32;
  // A band inside the map (no padding rows), one at the top, one at the
  // bottom, and a single input row padded on both sides.
  for (int64_t stride : {1, 2}) {
    conv.stride = stride;
    Check(conv, 7, 0, 0);
    Check(conv, 6, 1, 0);
    Check(conv, 6, 0, 1);
    Check(conv, 1, 1, 1);
  }
}

TEST(DepthwiseRowsTest, Activations) {
  if (!DepthwiseRowsAvailable()) GTEST_SKIP() << "no AVX-512F";
  DepthwiseRows conv;
  conv.width = 11;
  conv.channels = 20;
  for (Activation activation : {Activation::kNone, Activation::kRelu, Activation::kClamp}) {
    conv.activation = activation;
    conv.low = -0.25f;
    conv.high = 0.25f;
    Check(conv, 4, 1, 1, /*nan_input=*/true);
  }
  conv.activation = Activation::kTanh;
  conv.weights = &conv.low;
  EXPECT_FALSE(DepthwiseRowsTakes(conv));
}

}  // namespace
}  // namespace axle::cpu
