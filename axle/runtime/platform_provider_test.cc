//===- platform_provider_test.cc - Platforms made on first lookup ----------===//
//
// A provider is called once, on the first lookup of one of its names; its
// platform is what every later lookup returns, or its error is.
//
//===----------------------------------------------------------------------===//
#include "axle/runtime/platform_provider.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/executable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::se {
namespace {

using ::testing::HasSubstr;

TEST(PlatformProviderTest, AnUnavailablePlatformIsItsErrorOnEveryLookup) {
  static std::atomic<int> calls{0};
  ASSERT_TRUE(RegisterPlatformProvider({"FakeDevice", "fake-device"}, []() {
                ++calls;
                return absl::StatusOr<std::unique_ptr<Platform>>(absl::UnavailableError(
                    "FakeDevice platform unavailable: no FakeDevice driver"));
              }).ok());
  for (const char* name : {"fakedevice", "FAKE-DEVICE", "FakeDevice"}) {
    absl::StatusOr<Platform*> platform = PlatformManager::PlatformWithName(name);
    ASSERT_FALSE(platform.ok()) << name;
    EXPECT_EQ(platform.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(platform.status().message(), HasSubstr("no FakeDevice driver"));
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST(PlatformProviderTest, AMadePlatformIsRegisteredOnce) {
  static std::atomic<int> calls{0};
  ASSERT_TRUE(RegisterPlatformProvider({"LazyHost", "lazy"}, []() {
                ++calls;
                return absl::StatusOr<std::unique_ptr<Platform>>(std::make_unique<Platform>(
                    "LazyHost", std::vector<std::string>{"lazy"}, kHostPlatformName,
                    []() -> std::unique_ptr<Compiler> { return nullptr; }));
              }).ok());
  // Not made before it is asked for.
  EXPECT_EQ(calls.load(), 0);
  absl::StatusOr<Platform*> first = PlatformManager::PlatformWithName("lazy");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->Name(), "LazyHost");
  absl::StatusOr<Platform*> second = PlatformUtil::GetPlatform("LAZYHOST");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(calls.load(), 1);
}

TEST(PlatformProviderTest, NamesAreNotTakenTwice) {
  RegisterInterpreterPlatform();
  absl::Status taken_by_platform = RegisterPlatformProvider({"Interpreter"}, nullptr);
  EXPECT_EQ(taken_by_platform.code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(RegisterPlatformProvider({"OnceOnly"}, nullptr).ok());
  absl::Status taken_by_provider = RegisterPlatformProvider({"onceonly"}, nullptr);
  EXPECT_EQ(taken_by_provider.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(taken_by_provider.message(), HasSubstr("onceonly"));
}

}  // namespace
}  // namespace axle::se
