//===- host_feed_test.cc - Infeed and outfeed queues -----------------------===//
#include "axle/core/host_feed.h"

#include <thread>

#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(HostFeed, FifoPerDeviceWithShapeCheckAndTimeout) {
  HostFeed& zero = HostFeed::Get(HostFeed::Direction::kInfeed, "test", 0);
  HostFeed& one = HostFeed::Get(HostFeed::Direction::kInfeed, "test", 1);
  EXPECT_EQ(&zero, &HostFeed::Get(HostFeed::Direction::kInfeed, "test", 0));
  EXPECT_NE(&zero, &one);
  EXPECT_NE(&zero, &HostFeed::Get(HostFeed::Direction::kOutfeed, "test", 0));
  EXPECT_EQ(zero.name(), "infeed of test device 0");
  Literal a(ShapeUtil::MakeShape(S32, {2}));
  a.data<int32_t>()[0] = 7;
  zero.Push(a.Clone());
  zero.Push(Literal(ShapeUtil::MakeShape(F32, {})));
  EXPECT_EQ(zero.size(), 2);
  const Shape expected = ShapeUtil::MakeShape(S32, {2});
  auto first = zero.Pop(std::chrono::seconds(60), &expected);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, a);
  auto wrong = zero.Pop(std::chrono::seconds(60), &expected);
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status())) << wrong.status();
  EXPECT_NE(wrong.status().message().find("holds f32[] where s32[2] is expected"),
            std::string::npos)
      << wrong.status();
  auto none = one.Pop(std::chrono::milliseconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(none.status())) << none.status();
  EXPECT_NE(none.status().message().find("infeed of test device 1"), std::string::npos);
}

TEST(HostFeed, PopWaitsForAPush) {
  HostFeed& feed = HostFeed::Get(HostFeed::Direction::kOutfeed, "test", 2);
  std::thread pusher([&] { feed.Push(Literal(ShapeUtil::MakeShape(U8, {3}))); });
  auto value = feed.Pop(std::chrono::seconds(60));
  pusher.join();
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(value->shape(), ShapeUtil::MakeShape(U8, {3}));
  EXPECT_EQ(feed.size(), 0);
}

}  // namespace
}  // namespace axle
