// CheckRng and RngStateDelta (rng_sampling.h): what an rng or
// rng-get-and-update-state instruction must be, as the interpreter, the cpu
// and the CUDA platforms check it.
#include "axle/eval/rng_sampling.h"

#include <string>
#include <vector>

#include "axle/core/shape_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

TEST(CheckRng, TakesTwoScalarBoundsOfTheResultsType) {
  const Shape f32 = ShapeUtil::MakeScalarShape(F32), s32 = ShapeUtil::MakeScalarShape(S32);
  const Shape f32_array = ShapeUtil::MakeShape(F32, {2, 3});
  const Shape s32_array = ShapeUtil::MakeShape(S32, {4});
  EXPECT_TRUE(CheckRng(RNG_UNIFORM, {&f32, &f32}, f32_array).ok());
  EXPECT_TRUE(CheckRng(RNG_NORMAL, {&f32, &f32}, f32_array).ok());
  EXPECT_TRUE(CheckRng(RNG_UNIFORM, {&s32, &s32}, s32_array).ok());
  EXPECT_TRUE(CheckRng(RNG_UNIFORM, {&f32, &f32}, f32).ok());  // a scalar result is an array

  // One bound, a bound of another type, a bound that is not a scalar, a
  // tuple result: InvalidArgument, saying what rng takes and what it got.
  const Shape f32_vector = ShapeUtil::MakeShape(F32, {1});
  const Shape tuple = ShapeUtil::MakeTupleShape({f32_array});
  for (const auto& [bounds, result] :
       std::vector<std::pair<std::vector<const Shape*>, Shape>>{{{&f32}, f32_array},
                                                                {{&f32, &s32}, f32_array},
                                                                {{&f32, &f32_vector}, f32_array},
                                                                {{&f32, &f32}, tuple}}) {
    absl::Status status = CheckRng(RNG_UNIFORM, bounds, result);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << result.ToString();
    EXPECT_THAT(status.message(), HasSubstr("rng: takes two scalar bounds of the result's element "
                                            "type and returns an array"));
    EXPECT_THAT(status.message(), HasSubstr(result.ToString()));
  }
  absl::Status mixed = CheckRng(RNG_UNIFORM, {&f32, &s32}, f32_array);
  EXPECT_THAT(mixed.message(), HasSubstr("not (f32[], s32[]) -> f32[2,3]"));
}

TEST(CheckRng, NamesTheTypeADistributionIsNotSupportedFor) {
  const Shape s32 = ShapeUtil::MakeScalarShape(S32), pred = ShapeUtil::MakeScalarShape(PRED);
  const Shape f32 = ShapeUtil::MakeScalarShape(F32);
  absl::Status normal_int = CheckRng(RNG_NORMAL, {&s32, &s32}, ShapeUtil::MakeShape(S32, {3}));
  EXPECT_EQ(normal_int.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(normal_int.message(), HasSubstr("rng: this distribution is not supported for s32"));
  EXPECT_EQ(CheckRng(RNG_UNIFORM, {&pred, &pred}, ShapeUtil::MakeShape(PRED, {3})).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CheckRng(RNG_INVALID, {&f32, &f32}, ShapeUtil::MakeShape(F32, {3})).code(),
            absl::StatusCode::kUnimplemented);
}

TEST(SampleRng, RefusesWhatCheckRngRefuses) {
  Literal low(ShapeUtil::MakeScalarShape(S32)), high(ShapeUtil::MakeScalarShape(S32));
  Literal result(ShapeUtil::MakeShape(S32, {3}));
  std::mt19937_64 engine(1);
  absl::Status status = SampleRng(RNG_NORMAL, low, high, engine, &result);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("not supported for s32"));
}

TEST(RngStateDelta, TakesAU64ArrayAndAnIntegerDelta) {
  const Shape u64x2 = ShapeUtil::MakeShape(U64, {2});
  EXPECT_EQ(RngStateDelta(u64x2, nullptr).value(), 1);
  const std::string delta = "16", bad = "1.5";
  EXPECT_EQ(RngStateDelta(u64x2, &delta).value(), 16);
  absl::StatusOr<int64_t> not_integer = RngStateDelta(u64x2, &bad);
  EXPECT_EQ(not_integer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_integer.status().message(), HasSubstr("rng-get-and-update-state: bad delta=1.5"));
  absl::StatusOr<int64_t> s32 = RngStateDelta(ShapeUtil::MakeShape(S32, {2}), nullptr);
  EXPECT_EQ(s32.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s32.status().message(), HasSubstr("must produce u64[2], not s32[2]"));
  EXPECT_FALSE(RngStateDelta(ShapeUtil::MakeShape(U64, {0}), nullptr).ok());
}

}  // namespace
}  // namespace axle
