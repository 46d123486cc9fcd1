//===- gloo_communicator_test.cc - Gloo over loopback TCP ------------------===//
//
// Ranks as threads of this process, each with its own Gloo context, meeting
// in a fresh FileStore folder and talking over 127.0.0.1: all-reduce in the
// fixed order, all-gather in a subgroup, sends started before receives,
// receives from any rank, a rank that never arrives, and one (a forked
// process) that dies after joining.
// (Separate processes are tested through axle-run, tools/.)
//
//===----------------------------------------------------------------------===//
#include "axle/collectives/gloo_communicator.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;

std::string FreshFolder(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("axle_gloo_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(Gloo, AllReduceAndAllGatherOverLoopback) {
  constexpr int kSize = 3;
  std::string dir = FreshFolder("ops");
  std::vector<std::vector<float>> sums(kSize, std::vector<float>(5));
  std::vector<std::vector<int32_t>> gathered(kSize, std::vector<int32_t>(2, -1));
  std::vector<absl::Status> statuses(kSize);
  std::vector<std::thread> threads;
  threads.reserve(kSize);
  for (int rank = 0; rank < kSize; ++rank) {
    threads.emplace_back([&, rank] {
      GlooOptions options;
      options.rank = rank;
      options.size = kSize;
      options.rendezvous_dir = dir;
      options.timeout = std::chrono::seconds(60);
      auto communicator = ConnectGloo(options);
      if (!communicator.ok()) {
        statuses[rank] = communicator.status();
        return;
      }
      Communicator& c = **communicator;
      std::vector<float> mine = {1e8f, 0.5f, -1, 2, 3};
      if (rank == 1) mine[0] = -1e8f;
      if (rank == 2) mine[0] = 0.25f;
      auto reducer = MakeReducer(ReductionKind::kSum, F32);
      std::vector<int> all = {0, 1, 2};
      statuses[rank] = c.AllReduce(all, mine.data(), sums[rank].data(), 5, sizeof(float), *reducer);
      if (!statuses[rank].ok()) return;
      // Every rank makes every call (SPMD): rank 1 in a group of its own.
      int32_t value = rank * 7;
      std::vector<int> group = rank == 1 ? std::vector<int>{1} : std::vector<int>{2, 0};
      statuses[rank] = c.AllGather(group, &value, gathered[rank].data(), sizeof(value));
      if (statuses[rank].ok()) statuses[rank] = c.Barrier(all);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < kSize; ++rank)
    EXPECT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
  for (int rank = 0; rank < kSize; ++rank) {
    // (1e8 + -1e8) + 0.25: the fixed order keeps the 0.25.
    EXPECT_THAT(sums[rank], ElementsAre(0.25f, 1.5f, -3, 6, 9));
  }
  EXPECT_THAT(gathered[0], ElementsAre(14, 0));
  EXPECT_THAT(gathered[2], ElementsAre(14, 0));
  std::filesystem::remove_all(dir);
}

// Runs body(communicator) on `size` threads, each a Gloo rank; returns each
// one's status.
std::vector<absl::Status> RunGlooRanks(int size, const std::string& name,
                                       const std::function<absl::Status(Communicator&)>& body) {
  std::string dir = FreshFolder(name);
  std::vector<absl::Status> statuses(size);
  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      GlooOptions options;
      options.rank = rank;
      options.size = size;
      options.rendezvous_dir = dir;
      options.timeout = std::chrono::seconds(60);
      auto communicator = ConnectGloo(options);
      statuses[rank] = communicator.ok() ? body(**communicator) : communicator.status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::filesystem::remove_all(dir);
  return statuses;
}

TEST(Gloo, EveryRankSendsBeforeItReceives) {
  constexpr int kSize = 3;
  std::vector<int32_t> received(kSize, -1);
  std::vector<int> sources(kSize, -1);
  std::vector<absl::Status> statuses = RunGlooRanks(kSize, "p2p", [&](Communicator& c) {
    const int r = c.rank();
    const int32_t mine = 10 * r;
    // A ring: every rank starts its send first; none has posted a receive.
    auto send = c.StartSend((r + 1) % kSize, &mine, sizeof(mine), /*tag=*/5);
    if (!send.ok()) return send.status();
    auto recv = c.StartRecv((r + 2) % kSize, &received[r], sizeof(int32_t), /*tag=*/5);
    if (!recv.ok()) return recv.status();
    absl::StatusOr<int> source = c.Finish(**recv);
    if (!source.ok()) return source.status();
    sources[r] = *source;
    absl::StatusOr<int> target = c.Finish(**send);
    if (!target.ok()) return target.status();
    if (*target != (r + 1) % kSize) return absl::InternalError("send: wrong peer");
    return c.Barrier(std::vector<int>{0, 1, 2});
  });
  for (int rank = 0; rank < kSize; ++rank) {
    ASSERT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
    EXPECT_EQ(sources[rank], (rank + 2) % kSize);
    EXPECT_EQ(received[rank], 10 * ((rank + 2) % kSize));
  }
}

// Polls Test until the message finishes (or the communicator's timeout
// passes: a bug, reported as such).
absl::Status PollUntilDone(Communicator& c, Communicator::Message& message) {
  const auto deadline = std::chrono::steady_clock::now() + c.timeout();
  while (std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<bool> done = c.Test(message);
    if (!done.ok() || *done) return done.status();
    std::this_thread::yield();
  }
  return absl::DeadlineExceededError("Test never saw the message finish");
}

TEST(Gloo, TestDoesNotWaitForTheMessage) {
  int32_t received = -1;
  // One bool per rank (each written by its own thread; not vector<bool>,
  // whose bits share words).
  std::array<bool, 2> done_before_the_peer_received = {true, true};
  std::vector<absl::Status> statuses = RunGlooRanks(2, "test", [&](Communicator& c) {
    const std::vector<int> both = {0, 1};
    if (c.rank() == 0) {
      const int32_t mine = 77;
      auto send = c.StartSend(1, &mine, sizeof(mine), /*tag=*/6);
      if (!send.ok()) return send.status();
      // Rank 1 posts its receive only after this barrier: Gloo sends once
      // the receiver is ready, so the send cannot have finished yet.
      absl::StatusOr<bool> done = c.Test(**send);
      if (!done.ok()) return done.status();
      done_before_the_peer_received[0] = *done;
      if (absl::Status barrier = c.Barrier(both); !barrier.ok()) return barrier;
      if (absl::Status polled = PollUntilDone(c, **send); !polled.ok()) return polled;
      absl::StatusOr<int> peer = c.Finish(**send);
      if (!peer.ok()) return peer.status();
      return *peer == 1 ? absl::OkStatus() : absl::InternalError("send: wrong peer");
    }
    // Nothing is ever sent with tag 7: the receive is dropped unfinished.
    int32_t never = -1;
    auto recv = c.StartRecv(0, &never, sizeof(never), /*tag=*/7);
    if (!recv.ok()) return recv.status();
    absl::StatusOr<bool> done = c.Test(**recv);
    if (!done.ok()) return done.status();
    done_before_the_peer_received[1] = *done;
    if (absl::Status barrier = c.Barrier(both); !barrier.ok()) return barrier;
    auto first = c.StartRecv(0, &received, sizeof(received), /*tag=*/6);
    if (!first.ok()) return first.status();
    if (absl::Status polled = PollUntilDone(c, **first); !polled.ok()) return polled;
    absl::StatusOr<int> source = c.Finish(**first);
    if (!source.ok()) return source.status();
    return *source == 0 ? absl::OkStatus() : absl::InternalError("recv: wrong source");
  });
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
    EXPECT_FALSE(done_before_the_peer_received[rank]) << rank;
  }
  EXPECT_EQ(received, 77);
}

TEST(Gloo, RecvFromAnyRankReportsTheSource) {
  constexpr int kSize = 3;
  // Rank 0 receives twice from any rank; ranks 1 and 2 send once each.
  std::vector<std::pair<int, int32_t>> got;
  std::vector<absl::Status> statuses = RunGlooRanks(kSize, "any", [&](Communicator& c) {
    if (c.rank() != 0) {
      const int32_t mine = 100 + c.rank();
      auto send = c.StartSend(0, &mine, sizeof(mine), /*tag=*/9);
      if (!send.ok()) return send.status();
      absl::Status done = c.Finish(**send).status();
      return done.ok() ? c.Barrier(std::vector<int>{0, 1, 2}) : done;
    }
    for (int i = 0; i < 2; ++i) {
      int32_t value = -1;
      auto recv = c.StartRecv(-1, &value, sizeof(value), /*tag=*/9);
      if (!recv.ok()) return recv.status();
      absl::StatusOr<int> source = c.Finish(**recv);
      if (!source.ok()) return source.status();
      got.emplace_back(*source, value);
    }
    return c.Barrier(std::vector<int>{0, 1, 2});
  });
  for (int rank = 0; rank < kSize; ++rank)
    ASSERT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
  // The order of arrival is the peers'; each value comes with its sender.
  std::sort(got.begin(), got.end());
  EXPECT_THAT(got, ElementsAre(std::pair<int, int32_t>(1, 101), std::pair<int, int32_t>(2, 102)));
}

// A receive from any rank tested once before anything was sent (its wait
// goes to the message's waiter) and then finished: Finish takes the
// waiter's outcome, with the value and its sender.
TEST(Gloo, FinishAfterTestTakesTheWaitersOutcome) {
  int32_t value = -1;
  bool done_before_the_send = true;
  std::vector<absl::Status> statuses = RunGlooRanks(2, "handover", [&](Communicator& c) {
    const std::vector<int> both = {0, 1};
    if (c.rank() == 1) {
      if (absl::Status barrier = c.Barrier(both); !barrier.ok()) return barrier;
      const int32_t mine = 55;
      auto send = c.StartSend(0, &mine, sizeof(mine), /*tag=*/4);
      if (!send.ok()) return send.status();
      return c.Finish(**send).status();
    }
    auto recv = c.StartRecv(-1, &value, sizeof(value), /*tag=*/4);
    if (!recv.ok()) return recv.status();
    // Rank 1 sends only after the barrier.
    absl::StatusOr<bool> done = c.Test(**recv);
    if (!done.ok()) return done.status();
    done_before_the_send = *done;
    if (absl::Status barrier = c.Barrier(both); !barrier.ok()) return barrier;
    absl::StatusOr<int> source = c.Finish(**recv);
    if (!source.ok()) return source.status();
    if (*source != 1) return absl::InternalError(absl::StrCat("recv: source ", *source));
    // Finished: a second Test or Finish is an error, not a wait.
    return c.Test(**recv).ok() ? absl::InternalError("Test after Finish succeeded")
                               : absl::OkStatus();
  });
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
  }
  EXPECT_FALSE(done_before_the_send);
  EXPECT_EQ(value, 55);
}

// A tested message (its wait on the message's waiter) that outlives its
// communicator: dropping it afterwards stops the waiter (the abort) and
// joins it, rather than waiting out the 60 s timeout.
TEST(Gloo, ATestedMessageMayOutliveItsCommunicator) {
  std::array<int32_t, 2> never = {-1, -1};
  std::array<std::unique_ptr<Communicator::Message>, 2> kept;
  std::array<bool, 2> done = {true, true};
  std::vector<absl::Status> statuses = RunGlooRanks(2, "outlive", [&](Communicator& c) {
    const int me = c.rank();
    // Nothing is ever sent with tag 8.
    auto recv = c.StartRecv(1 - me, &never[me], sizeof(int32_t), /*tag=*/8);
    if (!recv.ok()) return recv.status();
    absl::StatusOr<bool> tested = c.Test(**recv);
    if (!tested.ok()) return tested.status();
    done[me] = *tested;
    kept[me] = *std::move(recv);
    // Both ranks tested before either communicator goes.
    return c.Barrier(std::vector<int>{0, 1});
  });
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(statuses[rank].ok()) << rank << ": " << statuses[rank];
    EXPECT_FALSE(done[rank]) << rank;
    ASSERT_NE(kept[rank], nullptr) << rank;
    kept[rank].reset();
    EXPECT_EQ(never[rank], -1) << rank;
  }
}

TEST(Gloo, ARankThatNeverArrivesIsATimeout) {
  std::string dir = FreshFolder("absent");
  GlooOptions options;
  options.rank = 0;
  options.size = 2;
  options.rendezvous_dir = dir;
  options.timeout = std::chrono::milliseconds(500);
  auto communicator = ConnectGloo(options);
  ASSERT_FALSE(communicator.ok());
  EXPECT_THAT(std::string(communicator.status().message()),
              ::testing::HasSubstr("gloo rank 0 of 2"));
  std::filesystem::remove_all(dir);
}

// A rank that dies (SIGKILL, so nothing of it says goodbye) after joining:
// the kernel closes its sockets, and the survivor's collective fails at
// once with the peer's closed connection, not after the 60 s timeout.
TEST(Gloo, ARankThatDiesFailsTheOthersWithoutWaitingForTheTimeout) {
  std::string dir = FreshFolder("dies");
  GlooOptions options;
  options.size = 2;
  options.rendezvous_dir = dir;
  options.timeout = std::chrono::seconds(60);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    options.rank = 1;
    auto communicator = ConnectGloo(options);
    if (communicator.ok()) raise(SIGKILL);
    _exit(3);
  }
  options.rank = 0;
  auto communicator = ConnectGloo(options);
  absl::Status status = communicator.status();
  if (communicator.ok()) {
    std::vector<float> mine(1024, 1.0f), sum(1024);
    auto reducer = MakeReducer(ReductionKind::kSum, F32);
    std::vector<int> all = {0, 1};
    status =
        (*communicator)->AllReduce(all, mine.data(), sum.data(), 1024, sizeof(float), *reducer);
  }
  int child_status = 0;
  ASSERT_EQ(waitpid(child, &child_status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(child_status)) << "rank 1 did not connect: exit " << child_status;
  EXPECT_EQ(WTERMSIG(child_status), SIGKILL);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("gloo rank 0 of 2"));
  EXPECT_THAT(std::string(status.message()),
              ::testing::Not(::testing::HasSubstr("AXLE_COLLECTIVE_TIMEOUT")));
  std::filesystem::remove_all(dir);
}

TEST(Gloo, BadOptionsAreErrors) {
  GlooOptions options;
  options.rank = 2;
  options.size = 2;
  EXPECT_EQ(ConnectGloo(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.rank = 0;
  EXPECT_THAT(std::string(ConnectGloo(options).status().message()),
              ::testing::HasSubstr("AXLE_RENDEZVOUS_DIR"));
}

}  // namespace
}  // namespace axle
