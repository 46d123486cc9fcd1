//===- device_memory_test.cc - HostMemoryAllocator: alignment and reuse ----===//
//
// Small blocks are 64-byte aligned; blocks of 4 MiB and more start on a
// 2 MiB boundary (so that the huge-page advice applies); freed blocks are
// handed out again.
//
//===----------------------------------------------------------------------===//
#include "axle/runtime/device_memory.h"

#include <cstdint>
#include <cstring>

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

}  // namespace
}  // namespace axle
