//===- in_place_agreement_test_util.h - A program's sharing vs. the dump's -===//
//
// For the in-place agreement tests of the cpu and CUDA backends
// (cpu/runtime/in_place_agreement_test.cc, gpu/in_place_agreement_test.cc):
// every two values a backend program keeps in temporaries share memory
// there exactly when they share a buffer in the HLO front of buffer
// assignment (buffer_assignment.h) on the module the program was built from.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_
#define AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/value_slot.h"
#include "gtest/gtest.h"

namespace axle::testing {

// The number of pairs of the program's temporaries (`values`, its value
// slots) that share memory both in the program and in `assignment`; fails
// (naming the pair, with `program_text` and the assignment) where they
// disagree, and where `assignment` does not verify.
inline int64_t CountAgreedSharing(absl::Span<const ValueSlot> values,
                                  const BufferAssignment& assignment,
                                  const std::string& program_text) {
  absl::Status verified = VerifyBufferAssignment(assignment);
  EXPECT_TRUE(verified.ok()) << verified;
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> buffer_of;
  for (const auto& [value, buffer] : assignment.ValuesWithBufferIds()) {
    buffer_of[{value.instruction, value.index}] = buffer;
  }
  struct Named {
    std::string name;
    int64_t temporary;
    int64_t buffer;
  };
  std::vector<Named> named;
  for (const ValueSlot& slot : values) {
    if (slot.kind != ValueSlot::Kind::kTemporary || slot.instruction == nullptr) continue;
    auto it = buffer_of.find({slot.instruction, slot.index});
    const std::string name =
        absl::StrCat("%", slot.instruction->name(), ShapeIndexToString(slot.index));
    EXPECT_NE(it, buffer_of.end()) << name << " has no buffer";
    if (it != buffer_of.end()) named.push_back({name, slot.temporary, it->second});
  }
  int64_t shared = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    for (size_t j = i + 1; j < named.size(); ++j) {
      const bool in_program = named[i].temporary == named[j].temporary;
      const bool in_dump = named[i].buffer == named[j].buffer;
      EXPECT_EQ(in_program, in_dump) << named[i].name << " and " << named[j].name << "\n"
                                     << assignment.ToString() << "\n"
                                     << program_text;
      shared += in_program && in_dump;
    }
  }
  return shared;
}

// Modules both agreement tests compile.

// An exponential scattered into (the scatter may update it in place), then reduced.
inline constexpr char kScatterIntoATemporary[] = R"(
HloModule scatter
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[32,4] parameter(0)
  indices = s32[3,1] parameter(1)
  updates = f32[3,4] parameter(2)
  a = f32[32,4] exponential(p)
  s = f32[32,4] scatter(a, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(s, z), dimensions={0}, to_apply=add
}
)";

// Elementwise chains (a loop kernel each) between two sorts.
inline constexpr char kElementwiseChainsBetweenSorts[] = R"(
HloModule chains
less {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT lt = pred[] compare(x, y), direction=LT
}
ENTRY e {
  p = f32[64,32] parameter(0)
  q = f32[64,32] parameter(1)
  a = f32[64,32] sine(p)
  s = f32[64,32] sort(a), dimensions={1}, to_apply=less
  b = f32[64,32] tanh(s)
  c = f32[64,32] multiply(b, q)
  t = f32[64,32] sort(c), dimensions={1}, to_apply=less
  ROOT d = f32[64,32] add(t, q)
}
)";

// A while body whose new state leaf is computed from the other leaf, and a
// conditional whose branches compute its result.
inline constexpr char kLoopBodyAndBranchRoots[] = R"(
HloModule roots
cond {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  y = f32[64] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[64] broadcast(half), dimensions={}
  x2 = f32[64] multiply(y, halves)
  y2 = f32[64] add(y, halves)
  ROOT t = (s32[], f32[64], f32[64]) tuple(next, x2, y2)
}
then {
  a = f32[64] parameter(0)
  ROOT n = f32[64] negate(a)
}
else {
  b = f32[64] parameter(0)
  ROOT x = f32[64] exponential(b)
}
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  flag = pred[] parameter(2)
  z = s32[] constant(0)
  init = (s32[], f32[64], f32[64]) tuple(z, p, q)
  w = (s32[], f32[64], f32[64]) while(init), condition=cond, body=body
  x = f32[64] get-tuple-element(w), index=1
  y = f32[64] get-tuple-element(w), index=2
  sum = f32[64] add(x, y)
  c = f32[64] conditional(flag, sum, sum), true_computation=then, false_computation=else
  ROOT r = f32[64] sine(c)
}
)";

}  // namespace axle::testing

#endif  // AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_
