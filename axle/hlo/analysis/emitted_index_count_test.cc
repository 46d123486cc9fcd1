#include "axle/hlo/analysis/emitted_index_count.h"

#include <memory>
#include <utility>

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  return std::move(*module);
}

const HloInstruction* Named(const HloComputation& computation, absl::string_view name) {
  for (const HloInstruction* instruction : computation.instructions()) {
    if (instruction->name() == name) return instruction;
  }
  return nullptr;
}

TEST(EmittedIndexCount, ElementwiseReadersShareTheirIndex) {
  // p is read by two elementwise ops at the root's index: emitted once.
  // q is read through a reverse and directly: two indices. r reaches the
  // root through a three-operand concatenate: three.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  r = f32[8] parameter(2)
  n = f32[8] negate(p)
  x = f32[8] exponential(p)
  a = f32[8] add(n, x)
  v = f32[8] reverse(q), dimensions={0}
  b = f32[8] multiply(a, v)
  c = f32[8] add(b, q)
  k = f32[24] concatenate(c, r, r), dimensions={0}
  ROOT s = f32[24] sine(k)
})");
  const HloComputation& entry = *module->entry_computation();
  const auto counts = EmittedIndexCounts(entry);
  EXPECT_EQ(counts.at(Named(entry, "s")), 1);
  EXPECT_EQ(counts.at(Named(entry, "k")), 1);
  EXPECT_EQ(counts.at(Named(entry, "c")), 3);  // an operand of the concatenate
  EXPECT_EQ(counts.at(Named(entry, "p")), 3);
  EXPECT_EQ(counts.at(Named(entry, "q")), 6);  // at c's index and through the reverse
  EXPECT_EQ(counts.at(Named(entry, "r")), 3);
  EXPECT_EQ(MaxEmittedIndexCount(entry), 6);
}

TEST(EmittedIndexCount, SlicesOfSlicesMultiply) {
  // Each level reads the one below through two slices: 2, 4, 8.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  a0 = f32[8] slice(p), slice={[0:16:2]}
  a1 = f32[8] slice(p), slice={[1:16:2]}
  a = f32[8] add(a0, a1)
  b0 = f32[4] slice(a), slice={[0:8:2]}
  b1 = f32[4] slice(a), slice={[1:8:2]}
  b = f32[4] add(b0, b1)
  c0 = f32[2] slice(b), slice={[0:4:2]}
  c1 = f32[2] slice(b), slice={[1:4:2]}
  ROOT c = f32[2] add(c0, c1)
})");
  const HloComputation& entry = *module->entry_computation();
  const auto counts = EmittedIndexCounts(entry);
  EXPECT_EQ(counts.at(Named(entry, "b")), 2);
  EXPECT_EQ(counts.at(Named(entry, "a")), 4);
  EXPECT_EQ(counts.at(Named(entry, "p")), 8);
}

}  // namespace
}  // namespace axle
