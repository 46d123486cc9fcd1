//===- replica_groups_test.cc - Resolution of replica groups ---------------===//
//
// The four CollectiveOpGroupMode cases on a 2 replicas x 2 partitions grid
// (flattened id = replica * 2 + partition), the list and iota forms read
// from HLO text, collective-permute pairs, and the errors.
//
//===----------------------------------------------------------------------===//
#include "axle/collectives/replica_groups.h"

#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using Groups = std::vector<std::vector<int64_t>>;

const DeviceGrid kGrid{/*replica_count=*/2, /*partition_count=*/2};

TEST(CollectiveOpGroupMode, FollowsXlasRule) {
  EXPECT_EQ(*GetCollectiveOpGroupMode(false, std::nullopt), CollectiveOpGroupMode::kCrossReplica);
  EXPECT_EQ(*GetCollectiveOpGroupMode(false, false), CollectiveOpGroupMode::kCrossReplica);
  EXPECT_EQ(*GetCollectiveOpGroupMode(true, std::nullopt), CollectiveOpGroupMode::kCrossPartition);
  EXPECT_EQ(*GetCollectiveOpGroupMode(true, false),
            CollectiveOpGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(*GetCollectiveOpGroupMode(true, true), CollectiveOpGroupMode::kFlattenedID);
  EXPECT_FALSE(GetCollectiveOpGroupMode(false, true).ok());
}

TEST(ParticipantGroups, CrossReplicaKeepsThePartition) {
  auto groups = GetParticipantGroups(Groups{{1, 0}}, CollectiveOpGroupMode::kCrossReplica, kGrid);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(*groups, ElementsAre(ElementsAre(2, 0), ElementsAre(3, 1)));
}

TEST(ParticipantGroups, CrossPartitionKeepsTheReplica) {
  auto groups = GetParticipantGroups(Groups{}, CollectiveOpGroupMode::kCrossPartition, kGrid);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(*groups, ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
}

TEST(ParticipantGroups, CrossReplicaAndPartitionTakesEveryPartition) {
  DeviceGrid grid{4, 2};
  auto groups = GetParticipantGroups(Groups{{0, 2}, {3, 1}},
                                     CollectiveOpGroupMode::kCrossReplicaAndPartition, grid);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(*groups, ElementsAre(ElementsAre(0, 1, 4, 5), ElementsAre(6, 7, 2, 3)));
}

TEST(ParticipantGroups, FlattenedIdsAreTakenAsTheyAre) {
  auto groups =
      GetParticipantGroups(Groups{{0, 3}, {2, 1}}, CollectiveOpGroupMode::kFlattenedID, kGrid);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(*groups, ElementsAre(ElementsAre(0, 3), ElementsAre(2, 1)));
  auto found = FindParticipantGroup(*groups, 1);
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(found->members, ElementsAre(2, 1));
  EXPECT_EQ(found->rank, 1);
}

TEST(ParticipantGroups, ErrorsNameTheProblem) {
  auto out_of_range =
      GetParticipantGroups(Groups{{0, 2}}, CollectiveOpGroupMode::kCrossReplica, kGrid);
  EXPECT_THAT(out_of_range.status().message(),
              ::testing::HasSubstr("replica id 2 is out of range"));
  auto twice =
      GetParticipantGroups(Groups{{0, 1}, {1, 2, 3}}, CollectiveOpGroupMode::kFlattenedID, kGrid);
  EXPECT_THAT(twice.status().message(), ::testing::HasSubstr("more than one replica group"));
  auto missing = GetParticipantGroups(Groups{{0, 1}}, CollectiveOpGroupMode::kFlattenedID, kGrid);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("in no replica group"));
}

// The instruction named `name` in the entry of `text`.
const HloCollectiveInstruction* Find(const HloModule& module, absl::string_view name) {
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (instruction->name() == name) return cast<HloCollectiveInstruction>(instruction);
  }
  return nullptr;
}

TEST(ParticipantGroupsOf, ReadsListAndIotaForms) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=2, num_partitions=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  list = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, channel_id=1, use_global_device_ids=true, to_apply=add
  iota = f32[4] all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), channel_id=2, use_global_device_ids=true, to_apply=add
  replicas = f32[4] all-reduce(p), replica_groups={}, to_apply=add
  ROOT t = (f32[4], f32[4], f32[4]) tuple(list, iota, replicas)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto list = ParticipantGroupsOf(*Find(**module, "list"), kGrid);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(*list, ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
  auto iota = ParticipantGroupsOf(*Find(**module, "iota"), kGrid);
  ASSERT_TRUE(iota.ok()) << iota.status();
  EXPECT_THAT(*iota, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
  auto replicas = ParticipantGroupsOf(*Find(**module, "replicas"), kGrid);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_THAT(*replicas, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
}

TEST(PermutePairsOf, ReplicasWithoutAChannelPartitionsWithOne) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  replicas = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  partitions = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{1,0}}
  bad = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,1}}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(replicas, partitions, bad)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto replicas = PermutePairsOf(*Find(**module, "replicas"), kGrid);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_EQ(*replicas, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 3}, {2, 0}, {3, 1}}));
  auto partitions = PermutePairsOf(*Find(**module, "partitions"), kGrid);
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(*partitions, (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {3, 2}}));
  auto bad = PermutePairsOf(*Find(**module, "bad"), kGrid);
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("replica 1 twice as a target"));
}

TEST(ParseInt64ListList, ReadsXlasSyntaxAndRejectsTheRest) {
  auto lists = ParseInt64ListList(" {{1, 2},{3},{}} ");
  ASSERT_TRUE(lists.ok()) << lists.status();
  EXPECT_EQ(*lists, (Groups{{1, 2}, {3}, {}}));
  EXPECT_TRUE(ParseInt64ListList("{}")->empty());
  for (const char* bad : {"", "{", "{{1,2}", "{{1,,2}}", "{{1 2}}", "{{1}}x", "{1}"}) {
    EXPECT_FALSE(ParseInt64ListList(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseSendRecvSourceTargetPairs("{{0,1,2}}").status().message(),
              ::testing::HasSubstr("two ids"));
}

TEST(SendRecvPairsOf, PartitionsWithAChannelReplicasWithChannelZero) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[4] parameter(0)
  t = token[] after-all()
  partitions = (f32[4], u32[], token[]) send(p, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  replicas = (f32[4], u32[], token[]) send(p, t), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  missing = (f32[4], u32[], token[]) send(p, t), channel_id=2
  out_of_range = (f32[4], u32[], token[]) send(p, t), channel_id=3, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,2}}"}
  ROOT r = f32[4] copy(p)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto find = [&](absl::string_view name) -> const HloInstruction* {
    for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
      if (instruction->name() == name) return instruction;
    }
    return nullptr;
  };
  auto partitions = SendRecvPairsOf(*find("partitions"), kGrid);
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(*partitions, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {2, 3}}));
  auto replicas = SendRecvPairsOf(*find("replicas"), kGrid);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_EQ(*replicas, (std::vector<std::pair<int64_t, int64_t>>{{2, 0}, {3, 1}}));
  EXPECT_THAT(SendRecvPairsOf(*find("missing"), kGrid).status().message(),
              ::testing::HasSubstr("missing (send): send/recv among several devices needs"));
  EXPECT_THAT(SendRecvPairsOf(*find("out_of_range"), kGrid).status().message(),
              ::testing::HasSubstr("partition id 2 is out of range"));
}

TEST(SendRecvValidation, ReadsRangesPerPairAndInvalid) {
  auto ranges = ParseSendRecvValidation("{{2,3},{5,7}}", 2);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  EXPECT_FALSE(ranges->always());
  EXPECT_FALSE(ranges->Moves(0, 1));
  EXPECT_TRUE(ranges->Moves(0, 2));
  EXPECT_TRUE(ranges->Moves(0, 3));
  EXPECT_FALSE(ranges->Moves(0, 4));
  EXPECT_TRUE(ranges->Moves(1, 5));
  EXPECT_FALSE(ranges->Moves(1, 8));
  auto never = ParseSendRecvValidation("invalid", 3);
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_FALSE(never->Moves(0, 0));
  EXPECT_THAT(ParseSendRecvValidation("{{0,1}}", 2).status().message(),
              ::testing::HasSubstr("1 ranges for 2 source-target pairs"));
  EXPECT_THAT(ParseSendRecvValidation("{{-1,1}}", 1).status().message(),
              ::testing::HasSubstr("first >= 0"));
  EXPECT_THAT(ParseSendRecvValidation("{{0,1,2}}", 1).status().message(),
              ::testing::HasSubstr("two execution numbers"));
  EXPECT_FALSE(ParseSendRecvValidation("{{0,1}", 1).ok());
}

TEST(SendRecvValidation, SendRecvPairsOfAnExecution) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=3
ENTRY e {
  p = f32[4] parameter(0)
  t = token[] after-all()
  s = (f32[4], u32[], token[]) send(p, t), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}",_xla_send_recv_validation="{{0,0},{1,2}}"}
  ROOT r = f32[4] copy(p)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* send = nullptr;
  for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
    if (instruction->name() == "s") send = instruction;
  }
  ASSERT_NE(send, nullptr);
  const DeviceGrid grid{3, 1};
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(*SendRecvPairsOf(*send, grid), (Pairs{{0, 1}, {1, 2}}));
  EXPECT_EQ(*SendRecvPairsOf(*send, grid, 0), (Pairs{{0, 1}}));
  EXPECT_EQ(*SendRecvPairsOf(*send, grid, 2), (Pairs{{1, 2}}));
  EXPECT_EQ(*SendRecvPairsOf(*send, grid, 3), Pairs{});
  auto validation = SendRecvValidationOf(*send, 2);
  ASSERT_TRUE(validation.ok()) << validation.status();
  EXPECT_EQ(validation->ranges, (Pairs{{0, 0}, {1, 2}}));
  EXPECT_THAT(SendRecvValidationOf(*send, 3).status().message(),
              ::testing::HasSubstr("s (send): bad _xla_send_recv_validation"));
}

}  // namespace
}  // namespace axle
