//===- in_place_sharing_test.cc ---------------------------------------------===//
//
// The in-place rule on hand-made programs (value slots and steps, no
// backend): a pair shares when its operand's temporary is the sequence's
// own and dead after the step (rules 1-3a), or is the while state the
// step's output replaces (3b); parameters, a temporary read later or by
// another operand of the step, a root that another root shares, a nested
// root and unknown steps keep their own memory. ShareTemporary moves every
// value of the temporary given up along and frees it. StoreCopies orders
// the copies of a root into its destinations so a swap reads no
// overwritten leaf. WriteRootsInPlace computes a nested root leaf in its
// destination when its one writer may and nothing from that writer on
// touches the destination, unless another leaf still needs the
// destination's old value.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/in_place_sharing.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr int64_t kBytes = 256;

// A program of values; each temporary value gets a temporary of its own.
struct Program {
  std::vector<ValueSlot> values;
  std::vector<int64_t> temporary_sizes;

  int64_t Temporary(int64_t bytes = kBytes) {
    ValueSlot slot;
    slot.kind = ValueSlot::Kind::kTemporary;
    slot.temporary = static_cast<int64_t>(temporary_sizes.size());
    slot.size_bytes = bytes;
    temporary_sizes.push_back(bytes);
    values.push_back(slot);
    return static_cast<int64_t>(values.size()) - 1;
  }
  int64_t Parameter() {
    ValueSlot slot;
    slot.kind = ValueSlot::Kind::kParameter;
    slot.size_bytes = kBytes;
    values.push_back(slot);
    return static_cast<int64_t>(values.size()) - 1;
  }
  bool Shared(int64_t a, int64_t b) const { return values[a].temporary == values[b].temporary; }
};

std::optional<InPlaceStep> Step(std::vector<int64_t> reads, std::vector<int64_t> writes,
                                std::vector<std::pair<int64_t, int64_t>> pairs = {}) {
  return InPlaceStep{StepUses{std::move(reads), std::move(writes)}, std::move(pairs)};
}

void Share(Program& program, const std::vector<std::optional<InPlaceStep>>& steps,
           std::vector<int64_t>& roots, const std::vector<int64_t>* destinations = nullptr,
           bool nested = false) {
  ShareInPlaceOperands(steps, program.values, program.temporary_sizes, roots, destinations, nested);
}

TEST(InPlaceSharingTest, ADeadOwnTemporaryIsTakenOver) {
  Program p;
  const int64_t in = p.Parameter(), x = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> roots = {y};
  Share(p, {Step({in}, {x}), Step({x}, {y}, {{x, y}})}, roots);
  EXPECT_TRUE(p.Shared(x, y));
  EXPECT_EQ(p.temporary_sizes[1], 0);  // y's own is given up
  EXPECT_EQ(p.temporary_sizes[0], kBytes);
  EXPECT_EQ(roots, std::vector<int64_t>({y}));
}

TEST(InPlaceSharingTest, WithoutAPairNothingShares) {
  Program p;
  const int64_t in = p.Parameter(), x = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> roots = {y};
  Share(p, {Step({in}, {x}), Step({x}, {y})}, roots);
  EXPECT_FALSE(p.Shared(x, y));
}

TEST(InPlaceSharingTest, ParametersAndOtherSizesKeepTheirMemory) {
  Program p;
  const int64_t in = p.Parameter(), y = p.Temporary();
  const int64_t x = p.Temporary(), z = p.Temporary(kBytes * 2);
  std::vector<int64_t> roots = {y, z};
  Share(p, {Step({in}, {x}), Step({in}, {y}, {{in, y}}), Step({x}, {z}, {{x, z}})}, roots);
  EXPECT_EQ(p.values[y].temporary, 0);  // its own, the first made
  EXPECT_FALSE(p.Shared(x, z));
  EXPECT_EQ(p.temporary_sizes, std::vector<int64_t>({kBytes, kBytes, kBytes * 2}));
}

TEST(InPlaceSharingTest, ATemporaryReadLaterOrByAnotherOperandIsKept) {
  Program p;
  const int64_t in = p.Parameter(), x = p.Temporary(), y = p.Temporary(), z = p.Temporary();
  std::vector<int64_t> roots = {z};
  // Rule 2: x is read again after y is written.
  Share(p, {Step({in}, {x}), Step({x}, {y}, {{x, y}}), Step({x, y}, {z})}, roots);
  EXPECT_FALSE(p.Shared(x, y));

  // Rule 1: another operand of the step (z) lives in x's temporary.
  Program q;
  const int64_t qin = q.Parameter(), qx = q.Temporary(), qz = q.Temporary(), qy = q.Temporary();
  ShareTemporary(q.values, q.temporary_sizes, qz, qx);
  std::vector<int64_t> qroots = {qy};
  Share(q, {Step({qin}, {qx}), Step({qx, qz}, {qy}, {{qx, qy}})}, qroots);
  EXPECT_FALSE(q.Shared(qx, qy));
}

TEST(InPlaceSharingTest, AnUnknownStepStopsAllSharing) {
  Program p;
  const int64_t in = p.Parameter(), x = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> roots = {y};
  Share(p, {Step({in}, {x}), Step({x}, {y}, {{x, y}}), std::nullopt}, roots);
  EXPECT_FALSE(p.Shared(x, y));
}

TEST(InPlaceSharingTest, AnotherRootInTheTemporaryKeepsIt) {
  Program p;
  const int64_t in = p.Parameter(), x = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> roots = {x, y};  // x is returned as well
  Share(p, {Step({in}, {x}), Step({x}, {y}, {{x, y}})}, roots);
  EXPECT_FALSE(p.Shared(x, y));
}

TEST(InPlaceSharingTest, NestedRootsShareOnlyAsWhileState) {
  // A body whose state leaf s is replaced by y = f(s): y is computed in s
  // (rule 3b) and the root becomes s.
  Program p;
  const int64_t s = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> roots = {y};
  const std::vector<int64_t> state = {s};
  Share(p, {Step({s}, {y}, {{s, y}})}, roots, &state, /*nested=*/true);
  EXPECT_TRUE(p.Shared(s, y));
  EXPECT_EQ(roots, std::vector<int64_t>({s}));

  // Nested, with its own x written first: still no sharing for a root
  // (a backend may give it a destination's memory later).
  Program q;
  const int64_t qin = q.Parameter(), x = q.Temporary(), qy = q.Temporary();
  std::vector<int64_t> qroots = {qy};
  const std::vector<int64_t> other = {q.Temporary()};
  Share(q, {Step({qin}, {x}), Step({x}, {qy}, {{x, qy}})}, qroots, &other, /*nested=*/true);
  EXPECT_FALSE(q.Shared(x, qy));
  // The same at the entry shares.
  Share(q, {Step({qin}, {x}), Step({x}, {qy}, {{x, qy}})}, qroots);
  EXPECT_TRUE(q.Shared(x, qy));
}

TEST(InPlaceSharingTest, ShareTemporaryMovesEveryValueAlong) {
  Program p;
  const int64_t a = p.Temporary(), b = p.Temporary(), c = p.Temporary();
  ShareTemporary(p.values, p.temporary_sizes, b, a);
  ShareTemporary(p.values, p.temporary_sizes, c, b);  // c joins a and b
  EXPECT_TRUE(p.Shared(a, b));
  EXPECT_TRUE(p.Shared(a, c));
  EXPECT_EQ(p.temporary_sizes, std::vector<int64_t>({kBytes, 0, 0}));
  ShareTemporary(p.values, p.temporary_sizes, a, c);  // already shared: nothing
  EXPECT_EQ(p.temporary_sizes, std::vector<int64_t>({kBytes, 0, 0}));
}

void WriteRoots(Program& program, const std::vector<std::optional<InPlaceStep>>& steps,
                std::vector<int64_t>& sources, const std::vector<int64_t>& destinations,
                const std::function<bool(size_t)>& may_write = nullptr) {
  WriteRootsInPlace(steps, program.values, program.temporary_sizes, sources, destinations,
                    may_write);
}

TEST(InPlaceSharingTest, ARootLeafIsWrittenIntoItsDestination) {
  // A body over state (s0, s1) returning (y, s1) with y = f(s1): y's
  // writer reads no s0 (rules 4-6), so y is computed in s0.
  Program p;
  const int64_t s0 = p.Temporary(), s1 = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> sources = {y, s1};
  WriteRoots(p, {Step({s1}, {y})}, sources, {s0, s1});
  EXPECT_TRUE(p.Shared(y, s0));
  EXPECT_EQ(sources, std::vector<int64_t>({s0, s1}));
  EXPECT_EQ(p.temporary_sizes[2], 0);
}

TEST(InPlaceSharingTest, ARootLeafWhoseDestinationIsStillReadIsCopied) {
  // Rule 6: the writer itself reads s0 (y = f(s0)), or a later step does.
  Program p;
  const int64_t s0 = p.Temporary(), y = p.Temporary(), z = p.Temporary();
  std::vector<int64_t> sources = {y};
  WriteRoots(p, {Step({s0}, {y})}, sources, {s0});
  EXPECT_FALSE(p.Shared(y, s0));
  WriteRoots(p, {Step({}, {y}), Step({s0}, {z})}, sources, {s0});
  EXPECT_FALSE(p.Shared(y, s0));
  // Read before the writer: fine.
  WriteRoots(p, {Step({s0}, {z}), Step({z}, {y})}, sources, {s0});
  EXPECT_TRUE(p.Shared(y, s0));
}

TEST(InPlaceSharingTest, ASwapOrAnotherLeafsOldValueIsCopied) {
  // Rule 4: the body returns (y, s0): s0's old value moves on to leaf 1,
  // so y may not overwrite it; leaf 1 (a destination) stays a copy too.
  Program p;
  const int64_t s0 = p.Temporary(), s1 = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> sources = {y, s0};
  WriteRoots(p, {Step({s1}, {y})}, sources, {s0, s1});
  EXPECT_FALSE(p.Shared(y, s0));
  EXPECT_FALSE(p.Shared(s0, s1));
  EXPECT_EQ(sources, std::vector<int64_t>({y, s0}));
}

TEST(InPlaceSharingTest, ARootLeafNeedsOneAllowedWriterOfItsSize) {
  Program p;
  const int64_t s0 = p.Temporary(), in = p.Parameter(), y = p.Temporary();
  const int64_t big = p.Temporary(kBytes * 2);
  // No writer in the sequence (a parameter, or a value from outside).
  std::vector<int64_t> sources = {in};
  WriteRoots(p, {Step({}, {y})}, sources, {s0});
  EXPECT_EQ(sources, std::vector<int64_t>({in}));
  sources = {y};
  WriteRoots(p, {}, sources, {s0});
  EXPECT_FALSE(p.Shared(y, s0));
  // Another size; the backend's hook says no; an unknown step.
  sources = {big};
  WriteRoots(p, {Step({}, {big})}, sources, {s0});
  EXPECT_FALSE(p.Shared(big, s0));
  sources = {y};
  WriteRoots(p, {Step({}, {y})}, sources, {s0}, [](size_t) { return false; });
  EXPECT_FALSE(p.Shared(y, s0));
  WriteRoots(p, {Step({}, {y}), std::nullopt}, sources, {s0});
  EXPECT_FALSE(p.Shared(y, s0));
  WriteRoots(p, {Step({}, {y})}, sources, {s0}, [](size_t i) { return i == 0; });
  EXPECT_TRUE(p.Shared(y, s0));
}

TEST(InPlaceSharingTest, ALeafReturnedTwiceIsWrittenOnceAndCopiedOnce) {
  // (y, y): y is computed in s0; leaf 1 then reads s0 (a destination) and
  // is copied.
  Program p;
  const int64_t s0 = p.Temporary(), s1 = p.Temporary(), y = p.Temporary();
  std::vector<int64_t> sources = {y, y};
  WriteRoots(p, {Step({}, {y})}, sources, {s0, s1});
  EXPECT_TRUE(p.Shared(y, s0));
  EXPECT_FALSE(p.Shared(y, s1));
  EXPECT_EQ(sources, std::vector<int64_t>({s0, s0}));
}

TEST(InPlaceSharingTest, StoreCopiesSnapshotASwappedLeafFirst) {
  // Destinations 10, 11, 12; the body returns (11, 10, 12): leaves 0 and 1
  // swap (each source is a destination being overwritten), leaf 2 is in
  // place.
  const std::vector<int64_t> sources = {11, 10, 12}, destinations = {10, 11, 12};
  std::vector<size_t> snapshotted;
  int64_t next = 100;
  std::vector<std::pair<int64_t, int64_t>> copies = StoreCopies(
      sources, destinations, [&](size_t i) { return sources[i] == destinations[i]; },
      [&](size_t i) {
        snapshotted.push_back(i);
        return next++;
      });
  EXPECT_EQ(snapshotted, std::vector<size_t>({0, 1}));
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {11, 100}, {10, 101}, {100, 10}, {101, 11}};
  EXPECT_EQ(copies, expected);

  // A plain store needs no snapshot; all in place, nothing at all.
  EXPECT_EQ(StoreCopies(
                std::vector<int64_t>{5}, std::vector<int64_t>{10}, [](size_t) { return false; },
                [](size_t) -> int64_t {
                  ADD_FAILURE() << "no snapshot needed";
                  return -1;
                }),
            (std::vector<std::pair<int64_t, int64_t>>{{5, 10}}));
  EXPECT_TRUE(StoreCopies(
                  destinations, destinations, [](size_t) { return true; },
                  [](size_t) -> int64_t { return -1; })
                  .empty());
}

}  // namespace
}  // namespace axle
