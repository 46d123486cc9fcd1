//===- bf16_reductions_test.cc - bf16 reductions on cpu and interpreter ----===//
//
// Both platforms accumulate bf16 reductions in f32 and round once, as
// XLA:CPU does (bf16_reductions_in_f32.h in the cpu pipeline and in the
// interpreter platform's compile): a row sum of 1000 ones is 1000 (256 when
// folded in bf16), a cumulative sum as a reduce-window counts past 256, an
// argmax over bf16 values keeps its first-index ties, and a bf16 mean and
// variance are exact.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "axle/core/literal.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// A bf16 literal whose element i is values[i % values.size()].
Literal Bf16Values(absl::Span<const int64_t> dimensions, const std::vector<float>& values) {
  Literal wide(Shape(F32, dimensions));
  auto data = wide.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = values[i % values.size()];
  absl::StatusOr<Literal> narrow = wide.Convert(BF16);
  EXPECT_TRUE(narrow.ok()) << narrow.status();
  return narrow.ok() ? *std::move(narrow) : Literal();
}

// The result on `platform`, each leaf converted to f32 and concatenated.
std::vector<float> RunAsF32(absl::string_view platform, absl::string_view text,
                            const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> result = testing::RunOn(platform, text, arguments);
  EXPECT_TRUE(result.ok()) << platform << ": " << result.status();
  if (!result.ok()) return {};
  std::vector<Literal> leaves;
  if (result->shape().IsTuple()) {
    leaves = result->DecomposeTuple();
  } else {
    leaves.push_back(*std::move(result));
  }
  std::vector<float> values;
  for (const Literal& leaf : leaves) {
    absl::StatusOr<Literal> wide = leaf.Convert(F32);
    EXPECT_TRUE(wide.ok()) << wide.status();
    if (!wide.ok()) return {};
    for (float value : wide->data<float>()) values.push_back(value);
  }
  return values;
}

void ExpectOnBoth(absl::string_view text, const std::vector<Literal>& arguments,
                  const std::vector<float>& expected) {
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    EXPECT_EQ(RunAsF32(platform, text, arguments), expected);
  }
}

TEST(Bf16Reductions, ASumOf1000OnesIs1000) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({3, 1000}, {1}));
  ExpectOnBoth(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[3,1000] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[3] reduce(x, z), dimensions={1}, to_apply=add
})",
               arguments, {1000, 1000, 1000});
}

TEST(Bf16Reductions, ACumulativeSumCountsPast256) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({300}, {1}));
  // Prefix k rounded once to bf16: exact up to 256, then even steps of 2.
  std::vector<float> expected;
  for (int k = 1; k <= 300; ++k) {
    absl::StatusOr<Literal> rounded =
        LiteralUtil::CreateR0<float>(static_cast<float>(k)).Convert(BF16);
    ASSERT_TRUE(rounded.ok());
    absl::StatusOr<Literal> back = rounded->Convert(F32);
    ASSERT_TRUE(back.ok());
    expected.push_back(back->data<float>()[0]);
  }
  EXPECT_EQ(expected.back(), 300.0f);
  ExpectOnBoth(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[300] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[300] reduce-window(x, z), window={size=300 pad=299_0}, to_apply=add
})",
               arguments, expected);
}

TEST(Bf16Reductions, AnArgmaxKeepsItsFirstIndexTies) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({2, 9}, {0.5f, 3, -2, 1, 3, -7, 2.5f, 3, 0.25f}));
  ExpectOnBoth(R"(
HloModule m
argmax {
  a = bf16[] parameter(0)
  i = s32[] parameter(1)
  b = bf16[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = bf16[] select(pick, a, b)
  k = s32[] select(pick, i, j)
  ROOT t = (bf16[], s32[]) tuple(v, k)
}
ENTRY e {
  x = bf16[2,9] parameter(0)
  n = s32[2,9] iota(), iota_dimension=1
  lowest = bf16[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (bf16[2], s32[2]) reduce(x, n, lowest, zero), dimensions={1}, to_apply=argmax
})",
               arguments, {3, 3, 1, 1});
}

TEST(Bf16Reductions, MeanAndVarianceAreExact) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({2, 1024}, {1, 3}));
  ExpectOnBoth(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[2,1024] parameter(0)
  z = bf16[] constant(0)
  n = bf16[] constant(1024)
  nb = bf16[2] broadcast(n), dimensions={}
  s = bf16[2] reduce(x, z), dimensions={1}, to_apply=add
  mean = bf16[2] divide(s, nb)
  xx = bf16[2,1024] multiply(x, x)
  ss = bf16[2] reduce(xx, z), dimensions={1}, to_apply=add
  m2 = bf16[2] divide(ss, nb)
  mb = bf16[2,1024] broadcast(mean), dimensions={0}
  d = bf16[2,1024] subtract(x, mb)
  dd = bf16[2,1024] multiply(d, d)
  sd = bf16[2] reduce(dd, z), dimensions={1}, to_apply=add
  var = bf16[2] divide(sd, nb)
  ROOT r = (bf16[2], bf16[2], bf16[2]) tuple(mean, m2, var)
})",
               arguments, {2, 2, 5, 5, 1, 1});
}

}  // namespace
}  // namespace axle
