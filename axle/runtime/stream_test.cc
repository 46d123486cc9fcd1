// Streams and events (stream.h), the platform's stream-ordered allocator
// (device_memory.h) and the transfer manager (transfer_manager.h): work runs
// in order on the stream's thread (or on a thread waiting for it), errors
// surface at the next synchronization, frees wait for the work before them,
// transfers are ordered with the stream's work. Gated callbacks make "not yet run" a
// state the test sets, not a race it times.
#include "axle/runtime/stream.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "axle/runtime/platform.h"
#include "axle/runtime/transfer_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

se::Platform* Interpreter() {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("interpreter");
  CHECK(platform.ok()) << platform.status();
  return *platform;
}

// A latch the test opens; work enqueued behind a closed gate waits.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(StreamTest, RunsWorkInOrderOnItsOwnThread) {
  se::Stream stream(Interpreter(), 0);
  std::vector<int> order;
  std::thread::id worker;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(stream
                    .DoHostCallback([&, i] {
                      order.push_back(i);
                      worker = std::this_thread::get_id();
                    })
                    .ok());
  }
  // An event, not BlockHostUntilDone (whose thread runs what the worker
  // has not taken yet).
  se::Event done;
  ASSERT_TRUE(stream.RecordEvent(&done).ok());
  done.Synchronize();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(worker, std::this_thread::get_id());
  // The event completes inside the last item, before the item counts as
  // done: idle only after the wait.
  EXPECT_TRUE(stream.BlockHostUntilDone().ok());
  EXPECT_TRUE(stream.IsIdle());
}

TEST(StreamTest, WaitingThreadsRunWorkOneAtATimeInOrder) {
  // Four threads enqueue and wait at once: whoever runs an item (the
  // worker or a waiting thread), items run one at a time, each once, and
  // each thread's in its order; a wait returns after its own items.
  se::Stream stream(Interpreter(), 0);
  std::mutex mu;
  std::vector<std::vector<int>> ran(4);
  int running = 0;
  int overlaps = 0;
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        ASSERT_TRUE(stream
                        .DoHostCallback([&, t, i] {
                          {
                            std::lock_guard<std::mutex> lock(mu);
                            if (++running != 1) ++overlaps;
                            ran[t].push_back(i);
                          }
                          EXPECT_TRUE(stream.OnWorkerThread());
                          std::lock_guard<std::mutex> lock(mu);
                          --running;
                        })
                        .ok());
        if (i % 3 == 0) {
          ASSERT_TRUE(stream.BlockHostUntilDone().ok());
          std::lock_guard<std::mutex> lock(mu);
          EXPECT_EQ(ran[t].size(), static_cast<size_t>(i + 1));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(stream.BlockHostUntilDone().ok());
  EXPECT_EQ(overlaps, 0);
  for (const std::vector<int>& order : ran) {
    ASSERT_EQ(order.size(), 200u);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
  }
  EXPECT_FALSE(stream.OnWorkerThread());
}

TEST(StreamTest, EnqueueingReturnsBeforeTheWorkRuns) {
  se::Stream stream(Interpreter(), 0);
  Gate gate;
  bool ran = false;
  ASSERT_TRUE(stream.DoHostCallback([&] { gate.Wait(); }).ok());
  ASSERT_TRUE(stream.DoHostCallback([&] { ran = true; }).ok());
  EXPECT_FALSE(stream.IsIdle());
  gate.Open();
  ASSERT_TRUE(stream.BlockHostUntilDone().ok());
  EXPECT_TRUE(ran);
}

TEST(StreamTest, AnErrorSurfacesAtTheNextSynchronizationOnce) {
  se::Stream stream(Interpreter(), 0);
  bool later_work_ran = false;
  ASSERT_TRUE(stream.DoHostCallbackWithStatus([] { return absl::InternalError("first"); }).ok());
  ASSERT_TRUE(stream.DoHostCallbackWithStatus([] { return absl::InternalError("second"); }).ok());
  ASSERT_TRUE(stream.DoHostCallback([&] { later_work_ran = true; }).ok());
  absl::Status status = stream.BlockHostUntilDone();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("first"));
  EXPECT_TRUE(later_work_ran);
  // Reported once: the stream is usable again.
  EXPECT_TRUE(stream.BlockHostUntilDone().ok());
}

TEST(StreamTest, WaitingFromTheStreamsOwnWorkIsAnError) {
  se::Stream stream(Interpreter(), 0);
  absl::Status inner;
  ASSERT_TRUE(stream.DoHostCallback([&] { inner = stream.BlockHostUntilDone(); }).ok());
  ASSERT_TRUE(stream.BlockHostUntilDone().ok());
  EXPECT_EQ(inner.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(StreamTest, MemcpyCopiesInStreamOrderAndChecksSizes) {
  se::Platform* platform = Interpreter();
  se::Stream stream(platform, 0);
  std::vector<float> host = {1, 2, 3, 4};
  std::vector<float> back(4, 0);
  std::vector<float> a(4, 0), b(4, 0);
  se::DeviceMemoryBase device_a(a.data(), 16), device_b(b.data(), 16);
  Gate gate;
  ASSERT_TRUE(stream.DoHostCallback([&] { gate.Wait(); }).ok());
  ASSERT_TRUE(stream.Memcpy(&device_a, host.data(), 16).ok());
  ASSERT_TRUE(stream.Memcpy(&device_b, device_a, 16).ok());
  ASSERT_TRUE(stream.Memcpy(back.data(), device_b, 16).ok());
  EXPECT_EQ(back, std::vector<float>(4, 0));  // nothing ran yet
  gate.Open();
  ASSERT_TRUE(stream.BlockHostUntilDone().ok());
  EXPECT_EQ(back, host);

  absl::Status too_big = stream.Memcpy(&device_a, device_b, 32);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("32 bytes"));
}

TEST(StreamTest, EventsCompleteWhenTheStreamGetsThere) {
  se::Stream stream(Interpreter(), 0);
  se::Event event;
  EXPECT_EQ(event.PollForStatus(), se::Event::Status::kUnknown);
  Gate gate;
  ASSERT_TRUE(stream.DoHostCallback([&] { gate.Wait(); }).ok());
  ASSERT_TRUE(stream.RecordEvent(&event).ok());
  EXPECT_EQ(event.PollForStatus(), se::Event::Status::kPending);
  gate.Open();
  event.Synchronize();
  EXPECT_EQ(event.PollForStatus(), se::Event::Status::kComplete);
  EXPECT_TRUE(stream.BlockHostUntilDone().ok());
}

TEST(StreamTest, AStreamWaitsForAnother) {
  se::Stream first(Interpreter(), 0);
  se::Stream second(Interpreter(), 0);
  Gate gate;
  int value = 0;
  int seen = -1;
  ASSERT_TRUE(first.DoHostCallback([&] { gate.Wait(); }).ok());
  ASSERT_TRUE(first.DoHostCallback([&] { value = 7; }).ok());
  ASSERT_TRUE(second.WaitFor(&first).ok());
  ASSERT_TRUE(second.DoHostCallback([&] { seen = value; }).ok());
  gate.Open();
  ASSERT_TRUE(second.BlockHostUntilDone().ok());
  EXPECT_EQ(seen, 7);
  ASSERT_TRUE(first.BlockHostUntilDone().ok());
}

TEST(StreamTest, DestroyingAStreamFinishesItsWork) {
  int count = 0;
  {
    se::Stream stream(Interpreter(), 0);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(stream.DoHostCallback([&] { ++count; }).ok());
  }
  EXPECT_EQ(count, 10);
}

// --- The platform's allocator and transfer manager --------------------------

TEST(PlatformRuntimeTest, EachPlatformOwnsItsAllocatorAndStream) {
  se::Platform* platform = Interpreter();
  ASSERT_NE(platform->memory_allocator(), nullptr);
  EXPECT_EQ(platform->memory_allocator()->platform(), platform);
  absl::StatusOr<se::Stream*> stream = platform->DefaultStream(0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ((*stream)->platform(), platform);
  absl::Status missing = platform->DefaultStream(3).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("device ordinal 3"));
  EXPECT_EQ(*TransferManager::GetForPlatform(platform), platform->transfer_manager());
}

TEST(PlatformRuntimeTest, AFreedBlockIsReusedOnlyAfterTheWorkBeforeTheFree) {
  se::Platform* platform = Interpreter();
  se::DeviceMemoryAllocator* allocator = platform->memory_allocator();
  se::Stream* stream = *platform->DefaultStream(0);
  ASSERT_TRUE(stream->BlockHostUntilDone().ok());
  constexpr uint64_t kSize = uint64_t{12345} * 64;
  se::OwningDeviceMemory block = *allocator->Allocate(0, kSize);
  void* address = block.ptr()->opaque();
  Gate gate;
  // Work enqueued before the free writes the block.
  ASSERT_TRUE(stream
                  ->DoHostCallback([&gate, address] {
                    gate.Wait();
                    std::memset(address, 1, kSize);
                  })
                  .ok());
  ASSERT_TRUE(block.Free().ok());
  se::OwningDeviceMemory while_pending = *allocator->Allocate(0, kSize);
  EXPECT_NE(while_pending->opaque(), address);
  gate.Open();
  ASSERT_TRUE(stream->BlockHostUntilDone().ok());
  se::OwningDeviceMemory after = *allocator->Allocate(0, kSize);
  EXPECT_EQ(after->opaque(), address);
}

TEST(PlatformRuntimeTest, TransfersAreOrderedWithTheStreamsWork) {
  se::Platform* platform = Interpreter();
  TransferManager* transfers = platform->transfer_manager();
  se::Stream* stream = *platform->DefaultStream(0);
  Shape shape = ShapeUtil::MakeShape(F32, {3});
  ScopedShapedBuffer buffer =
      *transfers->AllocateScopedShapedBuffer(shape, platform->memory_allocator(), 0);
  Literal ones(shape), twos(shape);
  for (int i = 0; i < 3; ++i) {
    ones.data<float>()[i] = 1;
    twos.data<float>()[i] = 2;
  }
  ASSERT_TRUE(transfers->TransferLiteralToDevice(stream, ones, buffer).ok());
  // Work enqueued first reads the buffer before the next transfer writes it.
  Gate gate;
  float seen = 0;
  const float* data = static_cast<const float*>(buffer.root_buffer().opaque());
  ASSERT_TRUE(stream
                  ->DoHostCallback([&] {
                    gate.Wait();
                    seen = data[0];
                  })
                  .ok());
  std::thread opener([&] { gate.Open(); });
  ASSERT_TRUE(transfers->TransferLiteralToDevice(stream, twos, buffer).ok());
  opener.join();
  EXPECT_EQ(seen, 1);
  absl::StatusOr<Literal> back = transfers->TransferLiteralFromDevice(stream, buffer);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, twos);

  Literal wrong(ShapeUtil::MakeShape(F32, {4}));
  absl::Status mismatch = transfers->TransferLiteralToDevice(stream, wrong, buffer);
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.message(), HasSubstr("f32[4]"));
  EXPECT_THAT(mismatch.message(), HasSubstr("f32[3]"));
}

TEST(PlatformRuntimeTest, AnErrorOfEarlierWorkSurfacesAtTheTransferFromDevice) {
  se::Platform* platform = Interpreter();
  TransferManager* transfers = platform->transfer_manager();
  se::Stream* stream = *platform->DefaultStream(0);
  Shape shape = ShapeUtil::MakeShape(F32, {});
  ScopedShapedBuffer buffer =
      *transfers->AllocateScopedShapedBuffer(shape, platform->memory_allocator(), 0);
  ASSERT_TRUE(
      stream->DoHostCallbackWithStatus([] { return absl::DataLossError("device fell over"); })
          .ok());
  absl::Status status = transfers->TransferLiteralFromDevice(stream, buffer).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(transfers->TransferLiteralFromDevice(stream, buffer).ok());
}

}  // namespace
}  // namespace axle
