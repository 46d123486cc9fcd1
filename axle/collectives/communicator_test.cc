//===- communicator_test.cc - Collectives on the in-process transport ------===//
//
// The algorithms of communicator.cc run by threads sharing memory: values
// worked out by hand, the fixed reduction order (bit-identical to a
// sequential fold in group order), subgroups, errors, and a participant
// that never arrives (a short timeout, then DeadlineExceeded everywhere).
//
//===----------------------------------------------------------------------===//
#include "axle/collectives/communicator.h"

#include <functional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Runs body(communicator) on `size` threads; returns each one's status.
std::vector<absl::Status> RunThreads(int size,
                                     const std::function<absl::Status(Communicator&)>& body,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  std::vector<std::unique_ptr<Communicator>> communicators =
      MakeInProcessCommunicators(size, timeout);
  std::vector<absl::Status> statuses(size);
  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] { statuses[rank] = body(*communicators[rank]); });
  }
  for (std::thread& thread : threads) thread.join();
  return statuses;
}

void ExpectAllOk(const std::vector<absl::Status>& statuses) {
  for (size_t i = 0; i < statuses.size(); ++i)
    EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
}

TEST(Communicator, AllGatherConcatenatesInGroupOrder) {
  std::vector<std::vector<int32_t>> out(3, std::vector<int32_t>(6));
  ExpectAllOk(RunThreads(3, [&](Communicator& c) {
    int32_t mine[2] = {c.rank() * 10, c.rank() * 10 + 1};
    std::vector<int> group = {2, 0, 1};
    return c.AllGather(group, mine, out[c.rank()].data(), sizeof(mine));
  }));
  for (const auto& o : out) EXPECT_THAT(o, ElementsAre(20, 21, 0, 1, 10, 11));
}

TEST(Communicator, AllReduceFoldsInGroupOrder) {
  // Values whose float sum depends on the order: the result must be the
  // sequential fold ((v0 + v1) + v2) + v3 in every participant.
  constexpr int kSize = 4;
  constexpr int kCount = 7;
  auto value = [](int rank, int i) {
    return rank == 1 ? 1e8f : (rank == 2 ? -1e8f : 0.1f * (i + 1));
  };
  std::vector<std::vector<float>> out(kSize, std::vector<float>(kCount));
  auto reducer = MakeReducer(ReductionKind::kSum, F32);
  ASSERT_TRUE(reducer.ok());
  ExpectAllOk(RunThreads(kSize, [&](Communicator& c) {
    std::vector<float> mine(kCount);
    for (int i = 0; i < kCount; ++i) mine[i] = value(c.rank(), i);
    std::vector<int> group = {0, 1, 2, 3};
    return c.AllReduce(group, mine.data(), out[c.rank()].data(), kCount, sizeof(float), *reducer);
  }));
  std::vector<float> expected(kCount);
  for (int i = 0; i < kCount; ++i) {
    float acc = value(0, i);
    for (int r = 1; r < kSize; ++r) acc += value(r, i);
    expected[i] = acc;
  }
  for (const auto& o : out) EXPECT_THAT(o, ElementsAreArray(expected));
}

TEST(Communicator, SubgroupsReduceApart) {
  std::vector<int32_t> out(4);
  auto reducer = MakeReducer(ReductionKind::kMax, S32);
  ASSERT_TRUE(reducer.ok());
  ExpectAllOk(RunThreads(4, [&](Communicator& c) {
    int32_t mine = c.rank() * 3 % 4;  // 0 3 2 1
    std::vector<int> group = c.rank() % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{3, 1};
    return c.AllReduce(group, &mine, &out[c.rank()], 1, sizeof(int32_t), *reducer);
  }));
  EXPECT_THAT(out, ElementsAre(2, 3, 2, 3));
}

TEST(Communicator, ReduceScatterGivesEachMemberItsPiece) {
  std::vector<std::vector<int64_t>> out(2, std::vector<int64_t>(2));
  auto reducer = MakeReducer(ReductionKind::kSum, S64);
  ASSERT_TRUE(reducer.ok());
  ExpectAllOk(RunThreads(2, [&](Communicator& c) {
    std::vector<int64_t> mine = {1, 2, 3, 4};
    for (int64_t& v : mine) v *= c.rank() + 1;
    std::vector<int> group = {0, 1};
    return c.ReduceScatter(group, mine.data(), out[c.rank()].data(), 2, sizeof(int64_t), *reducer);
  }));
  EXPECT_THAT(out[0], ElementsAre(3, 6));
  EXPECT_THAT(out[1], ElementsAre(9, 12));
}

TEST(Communicator, AllToAllBroadcastPermute) {
  std::vector<std::vector<uint8_t>> a2a(3, std::vector<uint8_t>(3));
  std::vector<uint8_t> broadcast(3), permuted(3, 99);
  ExpectAllOk(RunThreads(3, [&](Communicator& c) -> absl::Status {
    std::vector<uint8_t> mine = {static_cast<uint8_t>(c.rank() * 10),
                                 static_cast<uint8_t>(c.rank() * 10 + 1),
                                 static_cast<uint8_t>(c.rank() * 10 + 2)};
    std::vector<int> group = {0, 1, 2};
    absl::Status status = c.AllToAll(group, mine.data(), a2a[c.rank()].data(), 1);
    if (!status.ok()) return status;
    uint8_t value = static_cast<uint8_t>(c.rank() + 5);
    status = c.Broadcast(group, 1, &value, 1);
    broadcast[c.rank()] = value;
    if (!status.ok()) return status;
    // 0 -> 1 -> 2; nobody sends to 0.
    int target = c.rank() < 2 ? c.rank() + 1 : -1;
    int source = c.rank() > 0 ? c.rank() - 1 : -1;
    uint8_t in = static_cast<uint8_t>(c.rank() + 40);
    return c.Permute(target, &in, source, &permuted[c.rank()], 1);
  }));
  EXPECT_THAT(a2a[0], ElementsAre(0, 10, 20));
  EXPECT_THAT(a2a[2], ElementsAre(2, 12, 22));
  EXPECT_THAT(broadcast, ElementsAre(6, 6, 6));
  EXPECT_THAT(permuted, ElementsAre(99, 40, 41));
}

TEST(Communicator, GatherAndScatterGoThroughTheRoot) {
  // Group order {2, 0, 1}; the root is member 1 (rank 0).
  std::vector<std::vector<int16_t>> gathered(3, std::vector<int16_t>(6, -1));
  std::vector<std::vector<int16_t>> scattered(3, std::vector<int16_t>(2, -1));
  ExpectAllOk(RunThreads(3, [&](Communicator& c) -> absl::Status {
    std::vector<int> group = {2, 0, 1};
    int16_t mine[2] = {static_cast<int16_t>(c.rank() * 10), static_cast<int16_t>(c.rank() + 1)};
    absl::Status status = c.Gather(group, 1, mine, gathered[c.rank()].data(), sizeof(mine));
    if (!status.ok()) return status;
    std::vector<int16_t> pieces = {7, 8, 9, 10, 11, 12};
    return c.Scatter(group, 1, c.rank() == 0 ? pieces.data() : nullptr, scattered[c.rank()].data(),
                     2 * sizeof(int16_t));
  }));
  EXPECT_THAT(gathered[0], ElementsAre(20, 3, 0, 1, 10, 2));
  EXPECT_THAT(gathered[1], ElementsAre(-1, -1, -1, -1, -1, -1));  // not the root
  EXPECT_THAT(gathered[2], ElementsAre(-1, -1, -1, -1, -1, -1));
  EXPECT_THAT(scattered[2], ElementsAre(7, 8));
  EXPECT_THAT(scattered[0], ElementsAre(9, 10));
  EXPECT_THAT(scattered[1], ElementsAre(11, 12));
}

TEST(Communicator, ReduceGivesTheRootAllReducesBits) {
  // Order-sensitive float sums, reduced in place at the root: the root's
  // result is the all-reduce's, the others keep their input.
  constexpr int kSize = 3;
  constexpr int kCount = 5;
  auto value = [](int rank, int i) { return rank == 1 ? 1e8f : (rank == 2 ? -1e8f : 0.3f * i); };
  auto reducer = MakeReducer(ReductionKind::kSum, F32);
  ASSERT_TRUE(reducer.ok());
  std::vector<std::vector<float>> reduced(kSize), all_reduced(kSize, std::vector<float>(kCount));
  ExpectAllOk(RunThreads(kSize, [&](Communicator& c) -> absl::Status {
    std::vector<int> group = {1, 2, 0};
    std::vector<float> mine(kCount);
    for (int i = 0; i < kCount; ++i) mine[i] = value(c.rank(), i);
    absl::Status status = c.AllReduce(group, mine.data(), all_reduced[c.rank()].data(), kCount,
                                      sizeof(float), *reducer);
    if (!status.ok()) return status;
    reduced[c.rank()] = mine;
    return c.Reduce(group, 2, reduced[c.rank()].data(), reduced[c.rank()].data(), kCount,
                    sizeof(float), *reducer);
  }));
  // Member 2 of {1, 2, 0} is rank 0.
  EXPECT_THAT(reduced[0], ElementsAreArray(all_reduced[0]));
  for (int rank : {1, 2}) {
    for (int i = 0; i < kCount; ++i) EXPECT_EQ(reduced[rank][i], value(rank, i)) << rank;
  }
  std::vector<float> expected(kCount);
  for (int i = 0; i < kCount; ++i) expected[i] = (value(1, i) + value(2, i)) + value(0, i);
  EXPECT_THAT(reduced[0], ElementsAreArray(expected));
}

TEST(Communicator, RootsOutsideTheGroupAreErrors) {
  std::vector<absl::Status> statuses = RunThreads(2, [&](Communicator& c) {
    int32_t mine = 1, out[2];
    std::vector<int> group = {0, 1};
    return c.Gather(group, 2, &mine, out, sizeof(mine));
  });
  for (const absl::Status& status : statuses) {
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("gather: root 2"));
  }
}

TEST(Communicator, AParticipantThatNeverArrivesFailsTheOthers) {
  std::vector<absl::Status> statuses = RunThreads(
      3,
      [&](Communicator& c) -> absl::Status {
        if (c.rank() == 2) return absl::OkStatus();  // never calls
        int32_t mine = 1, out[3];
        std::vector<int> group = {0, 1, 2};
        return c.AllGather(group, &mine, out, sizeof(mine));
      },
      std::chrono::milliseconds(200));
  for (int rank : {0, 1}) {
    EXPECT_FALSE(statuses[rank].ok()) << rank;
    EXPECT_THAT(std::string(statuses[rank].message()), ::testing::HasSubstr("rank 2"));
  }
}

TEST(Communicator, BothSendBeforeTheyReceive) {
  std::vector<int32_t> received(2, -1);
  std::vector<absl::Status> statuses = RunThreads(2, [&](Communicator& c) -> absl::Status {
    const int other = 1 - c.rank();
    const int32_t mine = 7 + c.rank();
    auto send = c.StartSend(other, &mine, sizeof(mine), /*tag=*/3);
    if (!send.ok()) return send.status();
    auto recv = c.StartRecv(other, &received[c.rank()], sizeof(int32_t), /*tag=*/3);
    if (!recv.ok()) return recv.status();
    absl::StatusOr<int> source = c.Finish(**recv);
    if (!source.ok()) return source.status();
    if (*source != other) return absl::InternalError("recv: wrong source");
    return c.Finish(**send).status();
  });
  ExpectAllOk(statuses);
  EXPECT_THAT(received, ElementsAre(8, 7));
}

TEST(Communicator, TestSaysWhetherAMessageHasFinishedWithoutWaiting) {
  // One thread plays both ranks: a Test that waited would never return.
  std::vector<std::unique_ptr<Communicator>> c =
      MakeInProcessCommunicators(2, std::chrono::seconds(60));
  const int32_t sent = 42;
  int32_t received = -1;
  absl::StatusOr<std::unique_ptr<Communicator::Message>> send =
      c[0]->StartSend(1, &sent, sizeof(sent), /*tag=*/5);
  ASSERT_TRUE(send.ok()) << send.status();
  absl::StatusOr<bool> done = c[0]->Test(**send);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(*done);  // nobody receives yet
  absl::StatusOr<std::unique_ptr<Communicator::Message>> recv =
      c[1]->StartRecv(0, &received, sizeof(received), /*tag=*/5);
  ASSERT_TRUE(recv.ok()) << recv.status();
  EXPECT_EQ(*c[0]->Test(**send), true);
  EXPECT_EQ(*c[1]->Test(**recv), true);
  EXPECT_EQ(received, 42);
  EXPECT_EQ(*c[1]->Finish(**recv), 0);
  EXPECT_EQ(*c[0]->Finish(**send), 1);
  // A finished message has nothing left to test.
  EXPECT_EQ(c[0]->Test(**send).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Communicator, TestSeesAPeerThatLeft) {
  std::vector<std::unique_ptr<Communicator>> c =
      MakeInProcessCommunicators(2, std::chrono::seconds(60));
  int32_t received = -1;
  absl::StatusOr<std::unique_ptr<Communicator::Message>> recv =
      c[0]->StartRecv(1, &received, sizeof(received), /*tag=*/2);
  ASSERT_TRUE(recv.ok()) << recv.status();
  EXPECT_EQ(*c[0]->Test(**recv), false);
  c[1].reset();
  // Finished, with an error: Finish reports it at once.
  EXPECT_EQ(*c[0]->Test(**recv), true);
  absl::StatusOr<int> source = c[0]->Finish(**recv);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(source.status().message()), ::testing::HasSubstr("rank 1 left"));
}

TEST(Communicator, PointToPointErrors) {
  std::vector<absl::Status> statuses = RunThreads(2, [&](Communicator& c) -> absl::Status {
    int32_t value = 0;
    EXPECT_EQ(c.StartSend(c.rank(), &value, sizeof(value), 0).status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(c.StartRecv(5, &value, sizeof(value), 0).status().code(),
              absl::StatusCode::kInvalidArgument);
    // The in-process transport matches (source, destination, tag) exactly.
    absl::Status any = c.StartRecv(-1, &value, sizeof(value), 0).status();
    EXPECT_EQ(any.code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(any.message()), ::testing::HasSubstr("recv from any rank"));
    // Refusing it left the communicator usable.
    return c.Barrier(std::vector<int>{0, 1});
  });
  ExpectAllOk(statuses);
}

TEST(Communicator, BadGroupsAreErrors) {
  std::vector<absl::Status> statuses = RunThreads(1, [&](Communicator& c) {
    int32_t mine = 1, out[2];
    std::vector<int> group = {0, 0};
    return c.AllGather(group, &mine, out, sizeof(mine));
  });
  EXPECT_THAT(std::string(statuses[0].message()), ::testing::HasSubstr("twice in the group"));
}

TEST(Reducer, IntegersWrapFloatsPropagateNan) {
  auto sum = MakeReducer(ReductionKind::kSum, S8);
  ASSERT_TRUE(sum.ok());
  int8_t acc = 127, in = 1;
  ASSERT_TRUE((*sum)(&acc, &in, 1).ok());
  EXPECT_EQ(acc, -128);
  auto max = MakeReducer(ReductionKind::kMax, F32);
  ASSERT_TRUE(max.ok());
  float facc = 1, fin = std::nanf("");
  ASSERT_TRUE((*max)(&facc, &fin, 1).ok());
  EXPECT_TRUE(std::isnan(facc));
  EXPECT_FALSE(MakeReducer(ReductionKind::kXor, F32).ok());
  EXPECT_FALSE(MakeReducer(ReductionKind::kSum, C64).ok());
}

}  // namespace
}  // namespace axle
