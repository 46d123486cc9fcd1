//===- device_memory_test.cc - HostMemoryAllocator: alignment and reuse ----===//
//
// Small blocks are 64-byte aligned; blocks of 4 MiB and more start on a
// 2 MiB boundary (so that the huge-page advice applies); freed blocks are
// handed out again.
//
//===----------------------------------------------------------------------===//
#include "axle/runtime/device_memory.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace axle {
namespace {

uintptr_t Address(const se::DeviceMemoryBase& memory) {
  return reinterpret_cast<uintptr_t>(memory.opaque());
}

TEST(HostMemoryAllocatorTest, SmallBlocksAre64ByteAligned) {
  HostMemoryAllocator allocator;
  for (uint64_t size : {1, 63, 100, 4096, 70000}) {
    auto block = allocator.Allocate(0, size);
    ASSERT_TRUE(block.ok()) << block.status();
    EXPECT_EQ(Address(**block) % 64, 0u) << size;
  }
}

TEST(HostMemoryAllocatorTest, LargeBlocksStartOnAHugePage) {
  HostMemoryAllocator allocator;
  for (uint64_t size : {uint64_t{4} << 20, (uint64_t{64} << 20) + 12}) {
    auto block = allocator.Allocate(0, size);
    ASSERT_TRUE(block.ok()) << block.status();
    EXPECT_EQ(Address(**block) % (uint64_t{2} << 20), 0u) << size;
    std::memset(const_cast<void*>((*block)->opaque()), 1, size);  // the whole block is usable
  }
}

TEST(HostMemoryAllocatorTest, FreedLargeBlockIsReused) {
  HostMemoryAllocator allocator;
  const uint64_t size = uint64_t{8} << 20;
  uintptr_t first;
  {
    auto block = allocator.Allocate(0, size);
    ASSERT_TRUE(block.ok()) << block.status();
    first = Address(**block);
  }
  EXPECT_EQ(allocator.bytes_in_use(), 0);
  auto again = allocator.Allocate(0, size);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Address(**again), first);
}

TEST(HostMemoryAllocatorTest, SmallBlocksAreReusedByExactSizeClass) {
  HostMemoryAllocator allocator;
  std::vector<se::OwningDeviceMemory> blocks;
  blocks.reserve(3);
  for (int i = 0; i < 3; ++i) blocks.push_back(*allocator.Allocate(0, 100));
  auto other = allocator.Allocate(0, 4000);
  ASSERT_TRUE(other.ok()) << other.status();
  const void* last = blocks.back()->opaque();
  EXPECT_EQ(allocator.bytes_in_use(), 3 * 128 + 4032);
  blocks.pop_back();  // freed: cached
  EXPECT_EQ(allocator.bytes_cached(), 128);
  // Another size class does not take it; the same class does.
  auto larger = allocator.Allocate(0, 200);
  ASSERT_TRUE(larger.ok()) << larger.status();
  EXPECT_NE((*larger)->opaque(), last);
  auto same = allocator.Allocate(0, 70);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ((*same)->opaque(), last);
  EXPECT_EQ(allocator.bytes_cached(), 0);
  blocks.clear();
  EXPECT_EQ(allocator.bytes_cached(), 2 * 128);
  allocator.ReleaseCache();
  EXPECT_EQ(allocator.bytes_cached(), 0);
  EXPECT_EQ(allocator.bytes_in_use(), 128 + 256 + 4032);
}

TEST(HostMemoryAllocatorTest, ForeignAndDoubleFreesAreErrors) {
  HostMemoryAllocator allocator;
  auto block = allocator.Allocate(0, 64);
  ASSERT_TRUE(block.ok()) << block.status();
  se::DeviceMemoryBase memory = block->Release();
  ASSERT_TRUE(allocator.Deallocate(0, memory).ok());
  absl::Status twice = allocator.Deallocate(0, memory);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("did not hand out"), absl::string_view::npos);
  int64_t local = 0;
  EXPECT_EQ(allocator.Deallocate(0, se::DeviceMemoryBase(&local, 8)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.bytes_in_use(), 0);
  EXPECT_EQ(allocator.bytes_cached(), 64);
}

TEST(HostMemoryAllocatorTest, LiveBlocksAreDistinctUnderChurn) {
  // Many sizes allocated and freed in a pattern that reuses cached blocks:
  // no block is handed out twice while live, and the counts add up.
  HostMemoryAllocator allocator;
  std::vector<se::OwningDeviceMemory> live;
  uint64_t state = 12345;
  for (int step = 0; step < 2000; ++step) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    if (live.size() < 64 && (state >> 40) % 3 != 0) {
      auto block = allocator.Allocate(0, 1 + (state >> 33) % 10000);
      ASSERT_TRUE(block.ok()) << block.status();
      for (const se::OwningDeviceMemory& other : live) {
        ASSERT_NE(other->opaque(), (*block)->opaque()) << step;
      }
      live.push_back(std::move(*block));
    } else if (!live.empty()) {
      live.erase(live.begin() + static_cast<std::ptrdiff_t>((state >> 20) % live.size()));
    }
  }
  live.clear();
  EXPECT_EQ(allocator.bytes_in_use(), 0);
  EXPECT_GT(allocator.bytes_cached(), 0);
}

}  // namespace
}  // namespace axle
