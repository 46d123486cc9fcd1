//===- mpi_communicator_test.cc - The MPI transport, under mpirun -n 2 ----===//
//
// Run by CTest as `mpirun -n 2 axle_collectives_mpi_test`: both processes
// run every test, in order (SPMD). A send that times out (its peer does not
// receive it in time) stays posted in Open MPI, which cannot cancel a send:
// the peer may still take it later, and then gets the values sent, though
// the sender has overwritten and freed its buffer; the stranded send is
// released once it completes, and the process goes on using MPI (and
// finalizes at exit: mpirun fails the run otherwise).
//
//===----------------------------------------------------------------------===//
#include "axle/collectives/mpi_communicator.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr std::chrono::milliseconds kLong = std::chrono::seconds(60);

std::unique_ptr<Communicator> Connect(std::chrono::milliseconds timeout) {
  absl::StatusOr<std::unique_ptr<Communicator>> communicator = ConnectMpi(timeout);
  EXPECT_TRUE(communicator.ok()) << communicator.status();
  return communicator.ok() ? *std::move(communicator) : nullptr;
}

// Kept for the whole run: MPI is finalized when the last communicator goes
// (and cannot start again).
Communicator* World() {
  static std::unique_ptr<Communicator> world = Connect(kLong);
  return world.get();
}

TEST(Mpi, TwoProcesses) {
  ASSERT_NE(World(), nullptr);
  EXPECT_EQ(World()->size(), 2) << "run under mpirun -n 2";
}

TEST(Mpi, TestDoesNotWaitForTheMessage) {
  std::unique_ptr<Communicator> c = Connect(kLong);
  ASSERT_NE(c, nullptr);
  const std::vector<int> both = {0, 1};
  // Above Open MPI's eager limits: the send completes only once received.
  std::vector<char> data(1 << 20, static_cast<char>(3));
  if (c->rank() == 0) {
    auto send = c->StartSend(1, data.data(), static_cast<int64_t>(data.size()), /*tag=*/2);
    ASSERT_TRUE(send.ok()) << send.status();
    absl::StatusOr<bool> done = c->Test(**send);
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_FALSE(*done);  // rank 1 receives after the barrier
    ASSERT_TRUE(c->Barrier(both).ok());
    EXPECT_EQ(*c->Finish(**send), 1);
  } else {
    ASSERT_TRUE(c->Barrier(both).ok());
    std::vector<char> got(data.size());
    auto recv = c->StartRecv(0, got.data(), static_cast<int64_t>(got.size()), /*tag=*/2);
    ASSERT_TRUE(recv.ok()) << recv.status();
    // Test until it says finished; then Finish has the source at once.
    const auto deadline = std::chrono::steady_clock::now() + kLong;
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < deadline) {
      absl::StatusOr<bool> tested = c->Test(**recv);
      ASSERT_TRUE(tested.ok()) << tested.status();
      done = *tested;
    }
    ASSERT_TRUE(done);
    EXPECT_EQ(*c->Finish(**recv), 0);
    EXPECT_EQ(got, data);
  }
}

TEST(Mpi, ATimedOutSendKeepsItsBytesUntilTakenAndIsThenReleased) {
  std::unique_ptr<Communicator> control = Connect(kLong);
  std::unique_ptr<Communicator> quick = Connect(std::chrono::milliseconds(300));
  ASSERT_NE(control, nullptr);
  ASSERT_NE(quick, nullptr);
  const std::vector<int> both = {0, 1};
  constexpr size_t kBytes = 1 << 20;
  if (control->rank() == 0) {
    auto data = std::make_unique<std::vector<char>>(kBytes, static_cast<char>(7));
    auto send = quick->StartSend(1, data->data(), kBytes, /*tag=*/4);
    ASSERT_TRUE(send.ok()) << send.status();
    absl::StatusOr<int> finished = quick->Finish(**send);
    EXPECT_EQ(finished.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_THAT(std::string(finished.status().message()),
                ::testing::HasSubstr("timed out sending to rank 1"));
    EXPECT_EQ(StrandedMpiSends(), 1);
    // The caller's buffer is gone before the peer takes the message.
    std::fill(data->begin(), data->end(), static_cast<char>(-1));
    data.reset();
    ASSERT_TRUE(control->Barrier(both).ok());  // rank 1 receives now
    ASSERT_TRUE(control->Barrier(both).ok());  // and has
    // Released once MPI completes it (this process's calls make progress).
    const auto deadline = std::chrono::steady_clock::now() + kLong;
    while (StrandedMpiSends() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(StrandedMpiSends(), 0);
  } else {
    ASSERT_TRUE(control->Barrier(both).ok());  // rank 0 has timed out
    std::vector<char> got(kBytes);
    auto recv = quick->StartRecv(0, got.data(), kBytes, /*tag=*/4);
    ASSERT_TRUE(recv.ok()) << recv.status();
    ASSERT_TRUE(quick->Finish(**recv).ok());
    EXPECT_EQ(got, std::vector<char>(kBytes, static_cast<char>(7)));
    ASSERT_TRUE(control->Barrier(both).ok());
  }
  // The process goes on: the timed-out communicator is unusable, the
  // others (and new ones) are not.
  std::unique_ptr<Communicator> fresh = Connect(kLong);
  ASSERT_NE(fresh, nullptr);
  int32_t ranks[2] = {-1, -1};
  const int32_t mine = 10 + fresh->rank();
  ASSERT_TRUE(fresh->AllGather(both, &mine, ranks, sizeof(mine)).ok());
  EXPECT_EQ(ranks[0], 10);
  EXPECT_EQ(ranks[1], 11);
}

}  // namespace
}  // namespace axle
