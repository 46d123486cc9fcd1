//===- in_place_agreement_test.cc - The dump's in-place choices are the cpu's ===//
//
// axle-opt's `<module>.buffer-assignment.txt` is AssignBuffers on the
// module (hlo/analysis/buffer_assignment.h), with the target-neutral
// in-place pairs (InPlaceOperandPairs) under the one in-place rule
// (in_place_sharing.h) that the cpu program builder applies to its thunks.
// For modules with in-place candidates (a dynamic-update-slice of a loop's
// state, a scatter, elementwise chains between sorts, conditional branches and a loop
// body whose root is computed into the state), compiled for the cpu: every
// two values the cpu program keeps in temporaries share memory there
// exactly when they share a buffer in AssignBuffers on the optimized
// module, and each module has such a sharing (the test is not vacuous).
// The results agree with the interpreter.
//
//===----------------------------------------------------------------------===//
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// The number of pairs of values that share memory in both; fails where
// the cpu program and AssignBuffers disagree.
int64_t ExpectSameSharing(const std::string& text) {
  // f32 inputs in [-1, 1): no NaN, which a sort orders as it likes.
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].shape().element_type() == F32) {
      arguments[i] = testing::SeededF32Values(arguments[i].shape(), static_cast<int>(i) + 1);
    }
  }
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return 0;
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>((*executable)->executable());
  EXPECT_NE(cpu, nullptr);
  if (cpu == nullptr) return 0;
  auto assignment = AssignBuffers(cpu->module());
  EXPECT_TRUE(assignment.ok()) << assignment.status();
  if (!assignment.ok()) return 0;
  absl::Status verified = VerifyBufferAssignment(**assignment);
  EXPECT_TRUE(verified.ok()) << verified;
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> buffer_of;
  for (const auto& [value, buffer] : (*assignment)->ValuesWithBufferIds()) {
    buffer_of[{value.instruction, value.index}] = buffer;
  }
  struct Named {
    std::string name;
    int64_t temporary;
    int64_t buffer;
  };
  std::vector<Named> named;
  for (const ValueSlot& slot : cpu->program().values) {
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
      const bool in_cpu = named[i].temporary == named[j].temporary;
      const bool in_dump = named[i].buffer == named[j].buffer;
      EXPECT_EQ(in_cpu, in_dump) << named[i].name << " and " << named[j].name << "\n"
                                 << (*assignment)->ToString() << "\n"
                                 << cpu->BufferAssignmentText();
      shared += in_cpu && in_dump;
    }
  }
  EXPECT_GT(shared, 0) << "nothing shares memory:\n"
                       << cpu->module().ToString() << "\n"
                       << cpu->BufferAssignmentText();
  return shared;
}

TEST(InPlaceAgreementTest, DynamicUpdateSliceOfALoopState) {
  // Row i of the state is replaced on step i: the update is made in the
  // state itself (rule 3b), no copy of the state per step.
  EXPECT_GT(ExpectSameSharing(R"(
HloModule dus_loop
cond {
  s = (s32[], f32[16,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(16)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buffer = f32[16,8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  value = f32[] convert(i)
  row = f32[1,8] broadcast(value), dimensions={}
  zero = s32[] constant(0)
  updated = f32[16,8] dynamic-update-slice(buffer, row, i, zero)
  ROOT t = (s32[], f32[16,8]) tuple(next, updated)
}
ENTRY e {
  p = f32[16,8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[16,8]) tuple(z, p)
  w = (s32[], f32[16,8]) while(init), condition=cond, body=body
  ROOT r = f32[16,8] get-tuple-element(w), index=1
}
)"),
            0);
}

TEST(InPlaceAgreementTest, ScatterIntoATemporary) {
  EXPECT_GT(ExpectSameSharing(R"(
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
)"),
            0);
}

TEST(InPlaceAgreementTest, ElementwiseChainsBetweenSorts) {
  // Each chain is one loop kernel; the sorts keep them apart. A chain reads
  // the sort before it at its own index and may write over it.
  EXPECT_GT(ExpectSameSharing(R"(
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
)"),
            0);
}

TEST(InPlaceAgreementTest, LoopBodyAndBranchRootsComputedInPlace) {
  // The body's new state leaf is computed from the other leaf (written
  // straight into the state: WriteRootsInPlace); each branch computes the
  // conditional's result.
  EXPECT_GT(ExpectSameSharing(R"(
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
)"),
            0);
}

}  // namespace
}  // namespace axle
