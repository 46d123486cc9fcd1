//===- in_place_permute_test.cc - collective-permute's in-place form -------===//
//
// The form read from XLA's own examples (one buffer, chunks, tuples of
// buffers), the slice copies with clamping, the permute run on threads,
// and the errors.
//
//===----------------------------------------------------------------------===//
#include "axle/collectives/in_place_permute.h"

#include <thread>

#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const HloCollectiveInstruction* Root(const HloModule& module) {
  return cast<HloCollectiveInstruction>(module.entry_computation()->root_instruction());
}

TEST(InPlacePermuteOf, OneBufferOneChunk) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=4
ENTRY e {
  input = f32[128,32] parameter(0)
  output = f32[128,128] parameter(1)
  c0 = s32[] constant(0)
  c64 = s32[] constant(64)
  in_offsets = (s32[], s32[]) tuple(c0, c0)
  out_offsets = (s32[], s32[]) tuple(c0, c64)
  ROOT cp = f32[128,128] collective-permute(input, output, in_offsets, out_offsets), source_target_pairs={{0,1},{1,2},{2,3}}, slice_sizes={{128,32}}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(IsInPlacePermute(*Root(**module)));
  auto permute = InPlacePermuteOf(*Root(**module), DeviceGrid{4, 1});
  ASSERT_TRUE(permute.ok()) << permute.status();
  EXPECT_EQ(permute->buffers, 1);
  EXPECT_EQ(permute->chunks, 1);
  EXPECT_FALSE(permute->tuple_buffers);
  EXPECT_FALSE(permute->chunked_offsets);
  EXPECT_THAT(permute->slice_sizes, ElementsAre(ElementsAre(128, 32)));
  EXPECT_EQ(permute->OffsetIndex(0, 0, 1), (ShapeIndex{1}));
  ASSERT_EQ(permute->pairs.size(), 1u);
  EXPECT_EQ(permute->pairs[0].size(), 3u);
}

TEST(InPlacePermuteOf, TupleOfBuffersWithTwoChunks) {
  // XLA's parser test CollectivePermuteInPlaceUpdateTupleMultipleReadWrite.
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=4
ENTRY e {
  a = u32[2,8,128] parameter(0)
  b = u32[4,8,128] parameter(1)
  input = (u32[2,8,128], u32[2,8,128]) tuple(a, a)
  output = (u32[2,8,128], u32[4,8,128]) tuple(a, b)
  z = s32[] constant(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  i0 = (s32[], s32[], s32[]) tuple(z, z, z)
  i1 = (s32[], s32[], s32[]) tuple(one, z, z)
  i2 = (s32[], s32[], s32[]) tuple(two, z, z)
  t4 = ((s32[], s32[], s32[]), (s32[], s32[], s32[])) tuple(i0, i1)
  t7 = ((s32[], s32[], s32[]), (s32[], s32[], s32[])) tuple(i0, i0)
  t6 = ((s32[], s32[], s32[]), (s32[], s32[], s32[])) tuple(i0, i2)
  in_offsets = (((s32[], s32[], s32[]), (s32[], s32[], s32[])), ((s32[], s32[], s32[]), (s32[], s32[], s32[]))) tuple(t4, t7)
  out_offsets = (((s32[], s32[], s32[]), (s32[], s32[], s32[])), ((s32[], s32[], s32[]), (s32[], s32[], s32[]))) tuple(t4, t6)
  ROOT cp = (u32[2,8,128], u32[4,8,128]) collective-permute(input, output, in_offsets, out_offsets), source_target_pairs={{0,1},{1,2},{2,3},{3,0},{0,3},{3,2},{2,1},{1,0}}, slice_sizes={{1,8,128},{1,8,128},{2,8,128},{2,8,128}}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto permute = InPlacePermuteOf(*Root(**module), DeviceGrid{4, 1});
  ASSERT_TRUE(permute.ok()) << permute.status();
  EXPECT_EQ(permute->buffers, 2);
  EXPECT_EQ(permute->chunks, 2);
  EXPECT_TRUE(permute->tuple_buffers);
  EXPECT_TRUE(permute->chunked_offsets);
  EXPECT_EQ(permute->OffsetIndex(1, 0, 2), (ShapeIndex{1, 0, 2}));
  EXPECT_EQ(permute->BufferIndex(1), (ShapeIndex{1}));
  ASSERT_EQ(permute->pairs.size(), 2u);
  EXPECT_THAT(permute->pairs[0],
              ElementsAre(std::pair<int64_t, int64_t>{0, 1}, std::pair<int64_t, int64_t>{1, 2},
                          std::pair<int64_t, int64_t>{2, 3}, std::pair<int64_t, int64_t>{3, 0}));
  EXPECT_THAT(permute->pairs[1][0], (std::pair<int64_t, int64_t>{0, 3}));
}

TEST(InPlacePermuteOf, Errors) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=2
ENTRY e {
  input = f32[4] parameter(0)
  output = f32[8] parameter(1)
  z = s32[] constant(0)
  i = (s32[]) tuple(z)
  count = f32[8] collective-permute(input, output, i, i), source_target_pairs={{0,1}}, slice_sizes={{4},{4}}
  big = f32[8] collective-permute(input, output, i, i), source_target_pairs={{0,1}}, slice_sizes={{5}}
  twice = f32[8] collective-permute(input, output, i, i), source_target_pairs={{0,1},{1,1}}, slice_sizes={{4}}
  ROOT t = (f32[8], f32[8], f32[8]) tuple(count, big, twice)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto find = [&](absl::string_view name) {
    for (const HloInstruction* instruction : (*module)->entry_computation()->instructions()) {
      if (instruction->name() == name) return cast<HloCollectiveInstruction>(instruction);
    }
    return static_cast<const HloCollectiveInstruction*>(nullptr);
  };
  const DeviceGrid grid{2, 1};
  EXPECT_THAT(InPlacePermuteOf(*find("count"), grid).status().message(),
              HasSubstr("count (collective-permute, in-place form): slice_sizes has 2 entries, "
                        "expected 1"));
  EXPECT_THAT(InPlacePermuteOf(*find("big"), grid).status().message(),
              HasSubstr("slice size {5} of buffer 0 does not fit input f32[4]"));
  EXPECT_THAT(InPlacePermuteOf(*find("twice"), grid).status().message(),
              HasSubstr("replica 1 twice as a target"));
}

TEST(CopySlice, CopiesRowsAndClamps) {
  // A 3x4 array of bytes 0..11; the 2x2 slice at (1,1) is 5,6,9,10.
  std::vector<char> whole(12);
  for (int i = 0; i < 12; ++i) whole[i] = static_cast<char>(i);
  const std::vector<int64_t> dims = {3, 4}, sizes = {2, 2};
  std::vector<char> slice(4);
  CopySliceOut(whole.data(), dims, {1, 1}, sizes, 1, slice.data());
  EXPECT_THAT(slice, ElementsAre(5, 6, 9, 10));
  EXPECT_THAT(ClampSliceStarts(dims, sizes, {7, -3}), ElementsAre(1, 0));
  std::vector<char> zeros(12, 0);
  CopySliceIn(slice.data(), dims, {0, 2}, sizes, 1, zeros.data());
  EXPECT_THAT(zeros, ElementsAre(0, 0, 5, 6, 0, 0, 9, 10, 0, 0, 0, 0));
  // Rank 0 and empty slices.
  char scalar = 0;
  CopySliceOut(whole.data() + 7, {}, {}, {}, 1, &scalar);
  EXPECT_EQ(scalar, 7);
  CopySliceIn(slice.data(), dims, {0, 0}, {0, 2}, 1, zeros.data());
}

TEST(RunInPlacePermute, MovesEachRunsSlicesOnThreads) {
  // Two runs on 3 replicas: run 0 shifts row 0 of each input up by one
  // device into output row 1, run 1 shifts row 1 down by one into output
  // row 2 (starts past the end clamp to the last row).
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m, replica_count=3
ENTRY e {
  input = s32[2,2] parameter(0)
  output = s32[3,2] parameter(1)
  z = s32[] constant(0)
  one = s32[] constant(1)
  nine = s32[] constant(9)
  r0 = (s32[], s32[]) tuple(z, z)
  r1 = (s32[], s32[]) tuple(one, z)
  r9 = (s32[], s32[]) tuple(nine, z)
  in_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(r0, r1)
  out_offsets = ((s32[], s32[]), (s32[], s32[])) tuple(r1, r9)
  ROOT cp = s32[3,2] collective-permute(input, output, in_offsets, out_offsets), source_target_pairs={{0,1},{1,2},{1,0},{2,1}}, slice_sizes={{1,2},{1,2}}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto permute = InPlacePermuteOf(*Root(**module), DeviceGrid{3, 1});
  ASSERT_TRUE(permute.ok()) << permute.status();
  constexpr int kSize = 3;
  auto communicators = MakeInProcessCommunicators(kSize, std::chrono::seconds(60));
  std::vector<std::vector<int32_t>> inputs(kSize), outputs(kSize);
  std::vector<absl::Status> statuses(kSize);
  std::vector<std::thread> threads;
  threads.reserve(kSize);
  for (int d = 0; d < kSize; ++d) {
    inputs[d] = {10 * d, 10 * d + 1, 10 * d + 2, 10 * d + 3};
    outputs[d] = std::vector<int32_t>(6, -1);
  }
  for (int d = 0; d < kSize; ++d) {
    threads.emplace_back([&, d] {
      const char* in = reinterpret_cast<const char*>(inputs[d].data());
      char* out = reinterpret_cast<char*>(outputs[d].data());
      statuses[d] =
          RunInPlacePermute(*communicators[d], *permute, d,
                            [](int64_t, int64_t chunk, bool input) -> std::vector<int64_t> {
                              if (input) return {chunk, 0};
                              return {chunk == 0 ? 1 : 9, 0};
                            },
                            {&in, 1}, {&out, 1});
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int d = 0; d < kSize; ++d) ASSERT_TRUE(statuses[d].ok()) << d << ": " << statuses[d];
  EXPECT_THAT(outputs[0], ElementsAre(-1, -1, -1, -1, 12, 13));  // run 1 from device 1
  EXPECT_THAT(outputs[1], ElementsAre(-1, -1, 0, 1, 22, 23));    // from 0, and from 2
  EXPECT_THAT(outputs[2], ElementsAre(-1, -1, 10, 11, -1, -1));  // run 0 from device 1
}

}  // namespace
}  // namespace axle
