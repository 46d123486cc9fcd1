//===- block_pool_test.cc - Fixed-size blocks recycled through per-thread lists ===//
//
// Blocks freed on a thread are handed out again on it; blocks freed on
// another thread come back through the shared list (PyTorch's autograd
// thread records, the Python thread frees); a thread that exits gives its
// blocks back; allocate_shared through PoolAllocator makes working nodes.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/lazy/block_pool.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/ir.h"
#include "gtest/gtest.h"

namespace axle::lazy {
namespace {

// One pool per test (the pool is per block size).
template <int kTag>
struct Item {
  char bytes[48 + kTag * 8];
};

template <typename T>
using Pool = BlockPool<sizeof(T), alignof(T)>;

TEST(BlockPoolTest, FreedBlocksAreHandedOutAgainOnTheThread) {
  using T = Item<1>;
  PoolAllocator<T> allocator;
  std::vector<T*> first;
  first.reserve(100);
  for (int i = 0; i < 100; ++i) first.push_back(allocator.allocate(1));
  const size_t slabs = Pool<T>::Slabs();
  EXPECT_EQ(slabs, 1u);
  std::set<T*> freed(first.begin(), first.end());
  EXPECT_EQ(freed.size(), first.size());  // distinct blocks
  for (T* p : first) allocator.deallocate(p, 1);
  for (int i = 0; i < 100; ++i) {
    T* p = allocator.allocate(1);
    EXPECT_EQ(freed.count(p), 1u) << "block " << i << " is not one freed before";
    allocator.deallocate(p, 1);
  }
  EXPECT_EQ(Pool<T>::Slabs(), slabs);
}

TEST(BlockPoolTest, BlocksFreedOnAnotherThreadComeBack) {
  using T = Item<2>;
  constexpr int kSteps = 20;
  constexpr int kPerStep = 1000;
  PoolAllocator<T> allocator;
  // Each step: this thread allocates a graph's worth, another frees it.
  for (int step = 0; step < kSteps; ++step) {
    std::vector<T*> blocks;
    blocks.reserve(kPerStep);
    for (int i = 0; i < kPerStep; ++i) blocks.push_back(allocator.allocate(1));
    std::thread([&] {
      for (T* p : blocks) allocator.deallocate(p, 1);
    }).join();
  }
  // Without the shared list every step would carve new slabs (20,000
  // blocks); with it, about one step's worth plus the lists' slack.
  const size_t batch = Pool<T>::kBatch;
  EXPECT_LE(Pool<T>::Slabs() * batch, 3 * static_cast<size_t>(kPerStep) + 2 * batch);
}

TEST(BlockPoolTest, ArraysUseTheStdAllocator) {
  using T = Item<3>;
  PoolAllocator<T> allocator;
  T* array = allocator.allocate(4);
  allocator.deallocate(array, 4);
  EXPECT_EQ(Pool<T>::Slabs(), 0u);
}

TEST(BlockPoolTest, NodesLiveInPooledBlocks) {
  const Shape& shape = InternShape(ShapeUtil::MakeShape(F32, {3}));
  std::shared_ptr<Node> a = Node::MakeConstant(1.0, shape);
  std::shared_ptr<Node> b = Node::Make("add", {Value{a, 0}, Value{a, 0}}, shape);
  EXPECT_EQ(b->op(), "add");
  EXPECT_EQ(b->operand(0).node, a);
  EXPECT_EQ(a.use_count(), 3);
  b.reset();
  EXPECT_EQ(a.use_count(), 1);
}

}  // namespace
}  // namespace axle::lazy
