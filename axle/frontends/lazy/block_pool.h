//===- block_pool.h - Fixed-size blocks recycled through per-thread lists --===//
//
// The lazy IR allocates a few hundred nodes per training step and frees a
// whole graph at once (a sync frees the last step's). glibc's per-thread
// cache holds 7 blocks per size class, so most of such a burst went through
// its bins (sorting, coalescing, unlinking: about 15% of a small model's
// step with malloc and free together). BlockPool<kSize, kAlign> hands out
// blocks of one size from a free list per thread:
//
//   - Allocate pops the thread's list; an empty list takes a batch from the
//     shared list (a lock), or carves a new slab of kBatch blocks.
//   - Deallocate pushes onto the freeing thread's list; a list of
//     2 * kBatch blocks gives kBatch of them to the shared list. (PyTorch's
//     autograd thread records the backward pass and the Python thread frees
//     it: blocks travel between threads through the shared list.)
//   - A thread that exits gives its list to the shared list.
//
// Slabs are never returned to the system: the pool holds the peak number of
// blocks alive at once plus the per-thread lists. PoolAllocator<T> is the
// std allocator over it (std::allocate_shared: the node and its control
// block in one pooled block); arrays (n > 1) go to std::allocator.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_BLOCK_POOL_H_
#define AXLE_FRONTENDS_LAZY_BLOCK_POOL_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace axle::lazy {

template <size_t kSize, size_t kAlign>
class BlockPool {
 public:
  static constexpr size_t kBatch = 256;

  static void* Allocate() {
    Cache& cache = cache_;
    if (cache.head == nullptr) {
      if (cache.exited) return ::operator new(kBlock, std::align_val_t(kAlign));
      Refill(cache);
    }
    FreeBlock* block = cache.head;
    cache.head = block->next;
    --cache.count;
    return block;
  }

  static void Deallocate(void* pointer) {
    auto* block = static_cast<FreeBlock*>(pointer);
    Cache& cache = cache_;
    if (cache.exited) {  // a block freed during the thread's exit
      block->next = nullptr;
      Shared& shared = SharedLists();
      std::lock_guard<std::mutex> lock(shared.mutex);
      shared.batches.push_back({block, 1});
      return;
    }
    if (cache.head == nullptr) FlushAtExit();  // a thread that only frees keeps a list too
    block->next = cache.head;
    cache.head = block;
    if (++cache.count >= 2 * kBatch) Spill(cache);
  }

  // Blocks in the calling thread's list, and slabs carved by all threads
  // (tests).
  static size_t ThreadFreeBlocks() { return cache_.count; }
  static size_t Slabs() {
    Shared& shared = SharedLists();
    std::lock_guard<std::mutex> lock(shared.mutex);
    return shared.slabs;
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr size_t kBlock =
      (std::max(kSize, sizeof(FreeBlock)) + kAlign - 1) / kAlign * kAlign;
  struct Batch {
    FreeBlock* head;
    size_t count;
  };
  struct Shared {
    std::mutex mutex;
    std::vector<Batch> batches;
    size_t slabs = 0;
  };
  // Trivially destructible: usable until the thread is gone (a block freed
  // by another thread-local object's destructor).
  struct Cache {
    FreeBlock* head;
    size_t count;
    bool exited;
  };
  // Gives the thread's list to the shared one when the thread exits.
  struct Flusher {
    Flusher() = default;
    Flusher(const Flusher&) = delete;
    Flusher& operator=(const Flusher&) = delete;
    ~Flusher() {
      Cache& cache = cache_;
      if (cache.head != nullptr) {
        Shared& shared = SharedLists();
        std::lock_guard<std::mutex> lock(shared.mutex);
        shared.batches.push_back({cache.head, cache.count});
      }
      cache = Cache{nullptr, 0, true};
    }
    void Register() {}
  };

  static Shared& SharedLists() {
    static auto* shared = new Shared();  // never destroyed: threads outlive statics
    return *shared;
  }

  // Makes sure the thread's list goes to the shared one when it exits.
  static void FlushAtExit() {
    static thread_local Flusher flusher;
    flusher.Register();
  }

  static void Refill(Cache& cache) {
    FlushAtExit();
    Shared& shared = SharedLists();
    {
      std::lock_guard<std::mutex> lock(shared.mutex);
      if (!shared.batches.empty()) {
        Batch batch = shared.batches.back();
        shared.batches.pop_back();
        cache.head = batch.head;
        cache.count = batch.count;
        return;
      }
      ++shared.slabs;
    }
    char* slab = static_cast<char*>(::operator new(kBatch* kBlock, std::align_val_t(kAlign)));
    for (size_t i = kBatch; i-- > 0;) {
      auto* block = reinterpret_cast<FreeBlock*>(slab + i * kBlock);
      block->next = cache.head;
      cache.head = block;
    }
    cache.count = kBatch;
  }

  // Gives the first kBatch blocks of the thread's list to the shared list.
  static void Spill(Cache& cache) {
    FreeBlock* last = cache.head;
    for (size_t i = 1; i < kBatch; ++i) last = last->next;
    Batch batch{cache.head, kBatch};
    cache.head = last->next;
    last->next = nullptr;
    cache.count -= kBatch;
    Shared& shared = SharedLists();
    std::lock_guard<std::mutex> lock(shared.mutex);
    shared.batches.push_back(batch);
  }

  static thread_local Cache cache_;
};

template <size_t kSize, size_t kAlign>
thread_local
    typename BlockPool<kSize, kAlign>::Cache BlockPool<kSize, kAlign>::cache_ = {nullptr, 0, false};

// The std allocator over BlockPool: one object per block.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& /*other*/) {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) {
    if (n != 1) return std::allocator<T>().allocate(n);
    return static_cast<T*>(BlockPool<sizeof(T), alignof(T)>::Allocate());
  }
  void deallocate(T* pointer, size_t n) {
    if (n != 1) return std::allocator<T>().deallocate(pointer, n);
    BlockPool<sizeof(T), alignof(T)>::Deallocate(pointer);
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>& /*other*/) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>& /*other*/) const {
    return false;
  }
};

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_BLOCK_POOL_H_
