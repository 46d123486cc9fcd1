// The emitted convolution loops (convolution_loop_emitter.h: what oneDNN
// does not run) on the `cpu` platform against the interpreter, compared
// exactly: sums in the interpreter's order and precision, integer results
// saturated, mixed operand types, complex, no spatial dims and four of
// them, empty windows and outputs, epilogues, a convolution large enough to
// be split across threads. Output features innermost (b01f) run the
// vectorized feature rows, bf01 the element-at-a-time loop.
// (convolution_test.cc covers the window attributes and groups.)
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::ExpectCpuAgrees;

const ErrorSpec kExact(0, 0);

// Element i of `shape`: small values (x 0.25 for floats), or with `wide`
// integers over most of the type's range.
Literal Values(const Shape& shape, int seed, bool wide = false) {
  Literal f64(ShapeUtil::MakeShape(F64, shape.dimensions()));
  auto data = f64.data<double>();
  const PrimitiveType type = shape.element_type();
  for (size_t i = 0; i < data.size(); ++i) {
    const int64_t step = static_cast<int64_t>(i) * 7 + seed * 13;
    data[i] = static_cast<double>(step % 11 - 5);
    if (wide) data[i] *= 11;
    if (type == PRED) data[i] = step % 3 == 0 ? 1 : 0;
    if (primitive_util::IsUnsignedIntegralType(type)) data[i] = std::abs(data[i]);
    if (primitive_util::IsFloatingPointType(type) || primitive_util::IsComplexType(type)) {
      data[i] *= 0.25;
    }
  }
  auto converted = f64.Convert(type);
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

void ExpectAgrees(absl::string_view text, bool wide = false, ErrorSpec error = kExact) {
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : (*module)->entry_computation()->parameter_instructions()) {
    arguments.push_back(Values(parameter->shape(), static_cast<int>(arguments.size()), wide));
  }
  ExpectCpuAgrees(text, arguments, error);
}

std::string ConvModule(absl::string_view lhs, absl::string_view rhs, absl::string_view out,
                       absl::string_view attributes) {
  return absl::StrCat("HloModule conv\nENTRY e {\n  x = ", lhs, " parameter(0)\n  k = ", rhs,
                      " parameter(1)\n  ROOT c = ", out, " convolution(x, k), ", attributes,
                      "\n}\n");
}

const char kNhwc[] = "window={size=3x3 pad=1_1x0_1}, dim_labels=b01f_01io->b01f";

TEST(ConvolutionLoopTest, TypeFamiliesExactly) {
  for (const char* type :
       {"f64", "f16", "bf16", "f8e4m3fn", "s8", "s32", "s64", "u8", "c64", "c128", "pred"}) {
    SCOPED_TRACE(type);
    ExpectAgrees(ConvModule(absl::StrCat(type, "[2,5,6,3]"), absl::StrCat(type, "[3,3,3,4]"),
                            absl::StrCat(type, "[2,5,5,4]"), kNhwc));
  }
}

TEST(ConvolutionLoopTest, ChannelsFirstAndGroupsElementAtATime) {
  for (const char* type : {"f64", "f16", "s8", "c64"}) {
    SCOPED_TRACE(type);
    ExpectAgrees(ConvModule(absl::StrCat(type, "[2,3,6,5]"), absl::StrCat(type, "[4,3,3,3]"),
                            absl::StrCat(type, "[2,4,6,4]"),
                            "window={size=3x3 pad=1_1x0_1}, dim_labels=bf01_oi01->bf01"));
    ExpectAgrees(
        ConvModule(absl::StrCat(type, "[2,5,5,4]"), absl::StrCat(type, "[3,3,2,6]"),
                   absl::StrCat(type, "[2,3,3,6]"),
                   "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2"));
  }
}

TEST(ConvolutionLoopTest, IntegerResultsSaturate) {
  // Sums of products of values up to 55 leave s8/u8/s16's range.
  for (const char* type : {"s8", "u8", "s16"}) {
    SCOPED_TRACE(type);
    ExpectAgrees(ConvModule(absl::StrCat(type, "[1,6,6,8]"), absl::StrCat(type, "[3,3,8,2]"),
                            absl::StrCat(type, "[1,4,4,2]"),
                            "window={size=3x3}, dim_labels=b01f_01io->b01f"),
                 /*wide=*/true);
  }
}

TEST(ConvolutionLoopTest, MixedTypes) {
  // s8 operands into s32, f16 into f32 (oneDNN declines both), f32 into
  // f64.
  ExpectAgrees(ConvModule("s8[1,6,6,4]", "s8[3,3,4,2]", "s32[1,4,4,2]",
                          "window={size=3x3}, dim_labels=b01f_01io->b01f"),
               /*wide=*/true);
  ExpectAgrees(ConvModule("f16[2,6,6,3]", "f16[3,3,3,4]", "f32[2,6,6,4]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ExpectAgrees(ConvModule("f32[1,3,7]", "f32[2,3,3]", "f64[1,2,5]",
                          "window={size=3}, dim_labels=bf0_oi0->bf0"));
}

TEST(ConvolutionLoopTest, NoSpatialDimsAndFour) {
  ExpectAgrees(ConvModule("f64[3,5]", "f64[5,4]", "f64[3,4]", "dim_labels=bf_io->bf"));
  ExpectAgrees(ConvModule("f64[1,4,3,4,3,2]", "f64[2,2,2,2,2,3]", "f64[1,3,2,3,2,3]",
                          "window={size=2x2x2x2}, dim_labels=b0123f_0123io->b0123f"));
}

TEST(ConvolutionLoopTest, EmptySumsAndOutput) {
  // No input features: every sum is empty; an empty batch has no output.
  ExpectAgrees(ConvModule("f64[1,4,0]", "f64[2,0,3]", "f64[1,3,3]",
                          "window={size=2}, dim_labels=b0f_0io->b0f"));
  ExpectAgrees(ConvModule("s32[0,5,5,2]", "s32[3,3,2,3]", "s32[0,3,3,3]",
                          "window={size=3x3}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionLoopTest, EpiloguesOnTheLoop) {
  ExpectAgrees(R"(HloModule conv
ENTRY e {
  x = f64[2,6,6,3] parameter(0)
  k = f64[3,3,3,4] parameter(1)
  scale = f64[4] parameter(2)
  bias = f64[2,6,6,4] parameter(3)
  c = f64[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  s = f64[2,6,6,4] broadcast(scale), dimensions={3}
  n = f64[2,6,6,4] multiply(s, c)
  y = f64[2,6,6,4] add(n, bias)
  lo = f64[] constant(-0.5)
  hi = f64[] constant(0.75)
  ROOT r = f64[2,6,6,4] clamp(lo, y, hi)
})");
  ExpectAgrees(R"(HloModule conv
ENTRY e {
  x = f16[2,3,6,6] parameter(0)
  k = f16[4,3,3,3] parameter(1)
  bias = f16[4] parameter(2)
  c = f16[2,4,4,4] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
  bb = f16[2,4,4,4] broadcast(bias), dimensions={1}
  y = f16[2,4,4,4] add(bb, c)
  ROOT r = f16[2,4,4,4] tanh(y)
})",
               /*wide=*/false, ErrorSpec(1e-3, 1e-3));
}

TEST(ConvolutionLoopTest, LargeConvolutionSplitAcrossThreads) {
  ExpectAgrees(ConvModule("f64[8,12,12,16]", "f64[3,3,16,16]", "f64[8,12,12,16]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
}

}  // namespace
}  // namespace axle
