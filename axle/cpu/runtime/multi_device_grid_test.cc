//===- multi_device_grid_test.cc - Every group mode on replicas x partitions ===//
//
// Each collective on a grid of 2 replicas x 3 partitions (6 cpu devices,
// device d = replica * 3 + partition) in every CollectiveOpGroupMode XLA
// defines: no channel_id (cross-replica), a channel_id on an op without
// use_global_device_ids (cross-partition: all-to-all, collective-broadcast,
// collective-permute), a channel_id with use_global_device_ids=false
// (cross-replica-and-partition) and =true (flattened ids); replica_groups
// empty, listed and in the iota form; the -start/-done forms and the
// generic async-start/-done wrapping reduce-scatter, all-to-all and
// collective-broadcast. Every result must be the interpreter's
// multi-participant mode bit for bit (multi_device_test_util.h) and the
// values worked out here from the groups XLA's rule gives
// (xla/service/collective_ops_utils: GetParticipatingDevices).
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/multi_device_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr int kPartitions = 3;
constexpr int kDevices = 2 * kPartitions;
constexpr int kLength = 6;

using Values = std::vector<float>;
using Group = std::vector<int>;

// Device d's operand: 10 d + i.
Values Input(int d) {
  Values values(kLength);
  for (int i = 0; i < kLength; ++i) values[i] = static_cast<float>(10 * d + i);
  return values;
}

// Piece k of n of `values`.
Values Piece(const Values& values, int k, int n) {
  const auto size = static_cast<std::ptrdiff_t>(values.size()) / n;
  return Values(values.begin() + k * size, values.begin() + (k + 1) * size);
}

Values Concat(const std::vector<Values>& pieces) {
  Values result;
  for (const Values& piece : pieces) result.insert(result.end(), piece.begin(), piece.end());
  return result;
}

// The group of `groups` holding device d, and d's rank in it.
const Group& GroupOf(const std::vector<Group>& groups, int d, int* rank) {
  for (const Group& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i] == d) {
        *rank = static_cast<int>(i);
        return group;
      }
    }
  }
  ADD_FAILURE() << "device " << d << " in no group";
  return groups.front();
}

Values AllGather(const std::vector<Group>& groups, int d) {
  int rank = 0;
  std::vector<Values> pieces;
  for (int member : GroupOf(groups, d, &rank)) pieces.push_back(Input(member));
  return Concat(pieces);
}

Values AllReduce(const std::vector<Group>& groups, int d) {
  int rank = 0;
  Values sum(kLength, 0.0f);
  for (int member : GroupOf(groups, d, &rank)) {
    for (int i = 0; i < kLength; ++i) sum[i] += Input(member)[i];
  }
  return sum;
}

Values ReduceScatter(const std::vector<Group>& groups, int d) {
  int rank = 0;
  const auto n = static_cast<int>(GroupOf(groups, d, &rank).size());
  return Piece(AllReduce(groups, d), rank, n);
}

Values AllToAll(const std::vector<Group>& groups, int d) {
  int rank = 0;
  const Group& group = GroupOf(groups, d, &rank);
  std::vector<Values> pieces;
  for (int member : group) {
    pieces.push_back(Piece(Input(member), rank, static_cast<int>(group.size())));
  }
  return Concat(pieces);
}

Values Broadcast(const std::vector<Group>& groups, int d) {
  int rank = 0;
  return Input(GroupOf(groups, d, &rank).front());
}

// The source of d among `pairs` (flattened ids), or zeros.
Values Permute(const std::vector<std::pair<int, int>>& pairs, int d) {
  for (const auto& [source, target] : pairs) {
    if (target == d) return Input(source);
  }
  return Values(kLength, 0.0f);
}

// The groups of each mode, as flattened ids.
std::vector<Group> EachPartitionsReplicas() { return {{0, 3}, {1, 4}, {2, 5}}; }
std::vector<Group> EachReplicasPartitions(const Group& partitions) {
  std::vector<Group> groups;
  for (int replica = 0; replica < 2; ++replica) {
    Group& group = groups.emplace_back();
    for (int partition : partitions) group.push_back(replica * kPartitions + partition);
  }
  return groups;
}
// Replica pairs of each partition, as (source, target) flattened ids.
std::vector<std::pair<int, int>> InEveryPartition(int source_replica, int target_replica) {
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(kPartitions);
  for (int p = 0; p < kPartitions; ++p) {
    pairs.emplace_back(source_replica * kPartitions + p, target_replica * kPartitions + p);
  }
  return pairs;
}
std::vector<std::pair<int, int>> InEveryReplica(const std::vector<std::pair<int, int>>& ps) {
  std::vector<std::pair<int, int>> pairs;
  for (int replica = 0; replica < 2; ++replica) {
    for (const auto& [source, target] : ps) {
      pairs.emplace_back(replica * kPartitions + source, replica * kPartitions + target);
    }
  }
  return pairs;
}

constexpr char kModule[] = R"(HloModule m, replica_count=2, num_partitions=3
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
scatter {
  s = f32[6] parameter(0)
  ROOT r = f32[1] reduce-scatter(s), channel_id=20, replica_groups={}, dimensions={0}, to_apply=add
}
exchange {
  s = f32[6] parameter(0)
  ROOT r = f32[6] all-to-all(s), channel_id=21, replica_groups={{0,1,2}}, dimensions={0}
}
spread {
  s = f32[6] parameter(0)
  ROOT r = f32[6] collective-broadcast(s), channel_id=22, replica_groups={{1,2,0}}
}
ENTRY e {
  p = f32[6] parameter(0)
  c100 = f32[] constant(100)
  h = f32[6] broadcast(c100), dimensions={}
  o1 = f32[6] add(p, h)
  o2 = f32[6] add(o1, h)
  ag_r = f32[12] all-gather(p), dimensions={0}, replica_groups={}
  ag_rp = f32[18] all-gather(p), channel_id=1, replica_groups={{1},{0}}, dimensions={0}, use_global_device_ids=false
  ag_f = f32[12] all-gather(p), channel_id=2, replica_groups={{0,4},{5,1},{2,3}}, dimensions={0}, use_global_device_ids=true
  rs_r = f32[3] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add
  rs_rp = f32[1] reduce-scatter(p), channel_id=3, replica_groups={{1,0}}, dimensions={0}, to_apply=add, use_global_device_ids=false
  rs_f = f32[3] reduce-scatter(p), channel_id=4, replica_groups=[3,2]<=[2,3]T(1,0), dimensions={0}, to_apply=add, use_global_device_ids=true
  ar_rp = f32[6] all-reduce(p), channel_id=5, replica_groups={{0},{1}}, to_apply=add
  ar_i = f32[6] all-reduce(p), replica_groups=[1,2]<=[2], to_apply=add
  a2a_r = f32[6] all-to-all(p), replica_groups={}, dimensions={0}
  a2a_p = f32[6] all-to-all(p), channel_id=6, replica_groups={{2,0,1}}, dimensions={0}
  a2a_t = (f32[6], f32[6], f32[6]) all-to-all(p, o1, o2), channel_id=7, replica_groups={}
  cb_p = f32[6] collective-broadcast(p), channel_id=8, replica_groups={{2,1,0}}
  cb_r = f32[6] collective-broadcast(p), replica_groups={{1,0}}
  cp_r = f32[6] collective-permute(p), source_target_pairs={{1,0}}
  cp_p = f32[6] collective-permute(p), channel_id=9, source_target_pairs={{0,2},{2,1}}
  ars = f32[6] all-reduce-start(p), channel_id=10, replica_groups={{0,1}}, to_apply=add
  ard = f32[6] all-reduce-done(ars)
  ags = (f32[6], f32[12]) all-gather-start(p), channel_id=11, replica_groups={{0,5},{1,4},{2,3}}, dimensions={0}, use_global_device_ids=true
  agd = f32[12] all-gather-done(ags)
  cps = (f32[6], f32[6], u32[], u32[]) collective-permute-start(p), channel_id=12, source_target_pairs={{1,2}}
  cpd = f32[6] collective-permute-done(cps)
  rss = ((f32[6]), f32[1], s32[]) async-start(p), calls=scatter
  rsd = f32[1] async-done(rss), calls=scatter
  a2s = ((f32[6]), f32[6], s32[]) async-start(p), calls=exchange
  a2d = f32[6] async-done(a2s), calls=exchange
  cbs = ((f32[6]), f32[6], s32[]) async-start(p), calls=spread
  cbd = f32[6] async-done(cbs), calls=spread
  ROOT t = (f32[12], f32[18], f32[12], f32[3], f32[1], f32[3], f32[6], f32[6], f32[6], f32[6], (f32[6], f32[6], f32[6]), f32[6], f32[6], f32[6], f32[6], f32[6], f32[12], f32[6], f32[1], f32[6], f32[6]) tuple(ag_r, ag_rp, ag_f, rs_r, rs_rp, rs_f, ar_rp, ar_i, a2a_r, a2a_p, a2a_t, cb_p, cb_r, cp_r, cp_p, ard, agd, cpd, rsd, a2d, cbd)
})";

Values Of(const Literal& literal) {
  auto data = literal.data<float>();
  return {data.begin(), data.end()};
}

TEST(CpuMultiDeviceGrid, EveryGroupModeOnTwoReplicasByThreePartitions) {
  std::vector<std::vector<Literal>> args(kDevices);
  for (int d = 0; d < kDevices; ++d) args[d].push_back(LiteralUtil::CreateR1<float>(Input(d)));
  std::vector<Literal> results = testing::RunBoth(kModule, args);
  ASSERT_EQ(results.size(), static_cast<size_t>(kDevices));

  const std::vector<Group> replicas = EachPartitionsReplicas();
  const std::vector<Group> all_partitions = EachReplicasPartitions({0, 1, 2});
  for (int d = 0; d < kDevices; ++d) {
    SCOPED_TRACE(absl::StrCat("device ", d));
    const Literal& r = results[d];
    const int replica = d / kPartitions;
    // Cross-replica: each partition's replicas.
    EXPECT_EQ(Of(r.tuple_element(0)), AllGather(replicas, d));
    EXPECT_EQ(Of(r.tuple_element(3)), ReduceScatter(replicas, d));
    EXPECT_EQ(Of(r.tuple_element(7)), AllReduce(replicas, d));
    EXPECT_EQ(Of(r.tuple_element(8)), AllToAll(replicas, d));
    EXPECT_EQ(Of(r.tuple_element(12)), Broadcast({{3, 0}, {4, 1}, {5, 2}}, d));
    EXPECT_EQ(Of(r.tuple_element(13)), Permute(InEveryPartition(1, 0), d));
    // Cross-replica-and-partition: every partition of the group's replicas,
    // replica-major.
    EXPECT_EQ(Of(r.tuple_element(1)), AllGather({{3, 4, 5}, {0, 1, 2}}, d));
    EXPECT_EQ(Of(r.tuple_element(4)), ReduceScatter({{3, 4, 5, 0, 1, 2}}, d));
    EXPECT_EQ(Of(r.tuple_element(6)), AllReduce(all_partitions, d));
    EXPECT_EQ(Of(r.tuple_element(15)), AllReduce({{0, 1, 2, 3, 4, 5}}, d));
    // Flattened ids, listed and iota.
    EXPECT_EQ(Of(r.tuple_element(2)), AllGather({{0, 4}, {5, 1}, {2, 3}}, d));
    EXPECT_EQ(Of(r.tuple_element(5)), ReduceScatter({{0, 3}, {1, 4}, {2, 5}}, d));
    EXPECT_EQ(Of(r.tuple_element(16)), AllGather({{0, 5}, {1, 4}, {2, 3}}, d));
    // Cross-partition: each replica's partitions.
    EXPECT_EQ(Of(r.tuple_element(9)), AllToAll(EachReplicasPartitions({2, 0, 1}), d));
    EXPECT_EQ(Of(r.tuple_element(11)), Broadcast(EachReplicasPartitions({2, 1, 0}), d));
    EXPECT_EQ(Of(r.tuple_element(14)), Permute(InEveryReplica({{0, 2}, {2, 1}}), d));
    EXPECT_EQ(Of(r.tuple_element(17)), Permute(InEveryReplica({{1, 2}}), d));
    // all-to-all's tuple form: element m is member m's operand `rank`
    // (operand k is the input + 100 k).
    int rank = d % kPartitions;
    for (int m = 0; m < kPartitions; ++m) {
      Values expected = Input(replica * kPartitions + m);
      for (float& value : expected) value += 100.0f * static_cast<float>(rank);
      EXPECT_EQ(Of(r.tuple_element(10).tuple_element(m)), expected) << "element " << m;
    }
    // The generic async wrappers: reduce-scatter across replicas and
    // partitions, all-to-all and collective-broadcast across partitions.
    EXPECT_EQ(Of(r.tuple_element(18)), ReduceScatter({{0, 1, 2, 3, 4, 5}}, d));
    EXPECT_EQ(Of(r.tuple_element(19)), AllToAll(all_partitions, d));
    EXPECT_EQ(Of(r.tuple_element(20)), Broadcast(EachReplicasPartitions({1, 2, 0}), d));
  }
}

}  // namespace
}  // namespace axle
