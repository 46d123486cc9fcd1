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
#include "axle/hlo/transforms/bf16_reductions_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using bf16_reductions_test::Bf16Values;
using bf16_reductions_test::WithBf16Add;

void ExpectOnBoth(absl::string_view text, const std::vector<Literal>& arguments,
                  const std::vector<float>& expected) {
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    absl::StatusOr<Literal> result = testing::RunOn(platform, text, arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(bf16_reductions_test::AsF32(*std::move(result)), expected);
  }
}

TEST(Bf16Reductions, ASumOf1000OnesIs1000) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({3, 1000}, {1}));
  ExpectOnBoth(WithBf16Add(R"(
  x = bf16[3,1000] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[3] reduce(x, z), dimensions={1}, to_apply=add
)"),
               arguments, {1000, 1000, 1000});
}

TEST(Bf16Reductions, ACumulativeSumCountsPast256) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({300}, {1}));
  const std::vector<float> expected = bf16_reductions_test::RoundedPrefixSums(300);
  EXPECT_EQ(expected.back(), 300.0f);
  ExpectOnBoth(WithBf16Add(R"(
  x = bf16[300] parameter(0)
  z = bf16[] constant(0)
  ROOT s = bf16[300] reduce-window(x, z), window={size=300 pad=299_0}, to_apply=add
)"),
               arguments, expected);
}

TEST(Bf16Reductions, AnArgmaxKeepsItsFirstIndexTies) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({2, 9}, {0.5f, 3, -2, 1, 3, -7, 2.5f, 3, 0.25f}));
  ExpectOnBoth(bf16_reductions_test::Bf16ArgmaxModule(2, 9), arguments, {3, 3, 1, 1});
}

TEST(Bf16Reductions, MeanAndVarianceAreExact) {
  std::vector<Literal> arguments;
  arguments.push_back(Bf16Values({2, 1024}, {1, 3}));
  ExpectOnBoth(WithBf16Add(R"(
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
)"),
               arguments, {2, 2, 5, 5, 1, 1});
}

}  // namespace
}  // namespace axle
