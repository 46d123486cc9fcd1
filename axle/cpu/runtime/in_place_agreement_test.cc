//===- in_place_agreement_test.cc - The dump's in-place choices are the cpu's ===//
//
// The HLO front of buffer assignment (AssignBuffers,
// hlo/analysis/buffer_assignment.h) applies the one in-place rule
// (in_place_sharing.h) that the cpu program builder applies to its thunks.
// With the choices the program builder reports (CpuProgram::in_place:
// the pairs each thunk offers, the values computed in their user's
// memory; CpuExecutable::HloBufferAssignment, dumped as
// `<module>.hlo-buffer-assignment.txt`), every two values the cpu program
// keeps in temporaries share memory there exactly when they share a
// buffer in AssignBuffers on the optimized module. With the target-neutral
// pairs alone (InPlaceOperandPairs: axle-opt's `<module>.buffer-assignment.txt`)
// that holds too where no thunk makes a choice of its own: a
// dynamic-update-slice of a loop's state, a scatter, elementwise chains
// between sorts, conditional branches and a loop body whose root is
// computed into the state. The thunks' own choices, which only the report
// shows: a dot's residual accumulated in place (the sum post-op), a
// concatenation its convolutions write in place, a scatter's fill. Each
// module has such a sharing (the test is not vacuous), and the results
// agree with the interpreter.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/in_place_agreement_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// The pairs of the cpu program's temporaries that share memory in both;
// fails where the program and `assignment` disagree.
int64_t CountAgreedSharing(const cpu::CpuExecutable& cpu, const BufferAssignment& assignment) {
  return testing::CountAgreedSharing(cpu.program().values, assignment, cpu.BufferAssignmentText());
}

// Compiles `text` for the cpu (results checked against the interpreter on
// f32 inputs in [-1, 1): no NaN, which a sort orders as it likes) and
// checks the report's assignment against the program, and, when
// `target_neutral`, the target-neutral one too. Returns the report's
// assignment (null on failure) and sets `shared` to the pairs of
// temporaries sharing memory in it.
std::unique_ptr<BufferAssignment> ExpectSameSharing(const std::string& text, bool target_neutral,
                                                    int64_t& shared) {
  shared = 0;
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].shape().element_type() == F32) {
      arguments[i] = testing::SeededF32Values(arguments[i].shape(), static_cast<int>(i) + 1);
    }
  }
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return nullptr;
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>((*executable)->executable());
  EXPECT_NE(cpu, nullptr);
  if (cpu == nullptr) return nullptr;
  auto reported = cpu->HloBufferAssignment();
  EXPECT_TRUE(reported.ok()) << reported.status();
  if (!reported.ok()) return nullptr;
  shared = CountAgreedSharing(*cpu, **reported);
  EXPECT_GT(shared + static_cast<int64_t>((*reported)->values_in_users().size()), 0)
      << "nothing shares memory:\n"
      << cpu->module().ToString() << "\n"
      << cpu->BufferAssignmentText();
  if (target_neutral) {
    auto neutral = AssignBuffers(cpu->module());
    EXPECT_TRUE(neutral.ok()) << neutral.status();
    if (neutral.ok()) EXPECT_EQ(CountAgreedSharing(*cpu, **neutral), shared);
  }
  return std::move(reported).value();
}

// The same where the target-neutral pairs must agree too; returns the
// pairs sharing memory.
int64_t ExpectSameSharing(const std::string& text) {
  int64_t shared = 0;
  ExpectSameSharing(text, /*target_neutral=*/true, shared);
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
  EXPECT_GT(ExpectSameSharing(testing::kScatterIntoATemporary), 0);
}

TEST(InPlaceAgreementTest, ElementwiseChainsBetweenSorts) {
  // Each chain is one loop kernel; the sorts keep them apart. A chain reads
  // the sort before it at its own index and may write over it.
  EXPECT_GT(ExpectSameSharing(testing::kElementwiseChainsBetweenSorts), 0);
}

TEST(InPlaceAgreementTest, LoopBodyAndBranchRootsComputedInPlace) {
  // The body's new state leaf is computed from the other leaf (written
  // straight into the state: WriteRootsInPlace); each branch computes the
  // conditional's result.
  EXPECT_GT(ExpectSameSharing(testing::kLoopBodyAndBranchRoots), 0);
}

TEST(InPlaceAgreementTest, DotAccumulatesItsResidualInPlace) {
  // The residual, computed before the dot and dead after it, is the dot's
  // output memory (oneDNN's sum post-op adds to it in place): a choice of
  // the dot thunk's that the target-neutral pairs do not make.
  int64_t shared = 0;
  std::unique_ptr<BufferAssignment> assignment =
      ExpectSameSharing(R"(
HloModule residual
ENTRY e {
  x = f32[130,130] parameter(0)
  w = f32[130,130] parameter(1)
  p = f32[130,130] parameter(2)
  r = f32[130,130] exponential(p)
  d = f32[130,130] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT y = f32[130,130] add(d, r)
}
)",
                        /*target_neutral=*/false, shared);
  ASSERT_NE(assignment, nullptr);
  EXPECT_GE(shared, 1);
  const HloInstruction* root = assignment->sequence().back();
  const HloInstruction* residual = nullptr;
  for (const HloInstruction* operand : root->operands()) {
    if (operand->opcode() == HloOpcode::kFusion) residual = operand;
  }
  ASSERT_NE(residual, nullptr) << root->parent()->ToString();
  absl::StatusOr<BufferSlice> residual_slice = assignment->GetUniqueSlice(residual);
  absl::StatusOr<BufferSlice> root_slice = assignment->GetUniqueSlice(root);
  ASSERT_TRUE(residual_slice.ok() && root_slice.ok()) << assignment->ToString();
  EXPECT_EQ(*residual_slice, *root_slice) << assignment->ToString();
  // The target-neutral pairs keep them apart.
  auto neutral = AssignBuffers(*root->parent()->parent());
  ASSERT_TRUE(neutral.ok()) << neutral.status();
  residual_slice = (*neutral)->GetUniqueSlice(residual);
  root_slice = (*neutral)->GetUniqueSlice(root);
  ASSERT_TRUE(residual_slice.ok() && root_slice.ok()) << (*neutral)->ToString();
  EXPECT_FALSE(residual_slice->Overlaps(*root_slice));
}

TEST(InPlaceAgreementTest, ConvolutionsWriteTheirConcatenationInPlace) {
  // Each branch's convolution writes its slice of the concatenation
  // (concat_in_place.h): in the dump, both share the concatenation's
  // buffer, from bytes 0 and 8 * 4.
  int64_t shared = 0;
  std::unique_ptr<BufferAssignment> assignment =
      ExpectSameSharing(R"(
HloModule fire
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  k0 = f32[8,16,1,1] parameter(1)
  k1 = f32[8,16,3,3] parameter(2)
  c0 = f32[1,8,8,8] convolution(x, k0), window={size=1x1}, dim_labels=b01f_oi01->b01f
  c1 = f32[1,8,8,8] convolution(x, k1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f
  cat = f32[1,8,8,16] concatenate(c0, c1), dimensions={3}
  kc = f32[3,16,1,1] parameter(3)
  y = f32[1,8,8,3] convolution(cat, kc), window={size=1x1}, dim_labels=b01f_oi01->b01f
  ROOT out = f32[1,8,8,3] copy(y)
}
)",
                        /*target_neutral=*/false, shared);
  ASSERT_NE(assignment, nullptr);
  const auto& in_users = assignment->values_in_users();
  ASSERT_EQ(in_users.size(), 2u) << assignment->ToString();
  std::vector<int64_t> offsets;
  for (const auto& [instruction, in_user] : in_users) {
    EXPECT_TRUE(in_user.stored);
    EXPECT_EQ(in_user.user, in_users[0].second.user);
    offsets.push_back(in_user.offset);
    absl::StatusOr<BufferSlice> slice = assignment->GetUniqueSlice(instruction);
    absl::StatusOr<BufferSlice> user = assignment->GetUniqueSlice(in_user.user);
    ASSERT_TRUE(slice.ok() && user.ok()) << assignment->ToString();
    EXPECT_EQ(slice->allocation, user->allocation);
    EXPECT_EQ(slice->offset, user->offset);
    EXPECT_NE(assignment->ToString().find(absl::StrCat("%", instruction->name(),
                                                       " is written into %", in_user.user->name(),
                                                       " from byte ", in_user.offset, "\n")),
              std::string::npos)
        << assignment->ToString();
  }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, int64_t{8} * 4}));
}

TEST(InPlaceAgreementTest, ScatterStartsFromItsFillUnstored) {
  // The scatter thunk fills its output itself: the broadcast is never
  // stored, and the dump says so; the tanh is computed over the scatter.
  int64_t shared = 0;
  std::unique_ptr<BufferAssignment> assignment =
      ExpectSameSharing(R"(
HloModule scatter_fill
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  zero = f32[] constant(0)
  fill = f32[64,8] broadcast(zero), dimensions={}
  indices = s32[5,1] parameter(0)
  updates = f32[5,8] parameter(1)
  s = f32[64,8] scatter(fill, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[64,8] tanh(s)
}
)",
                        /*target_neutral=*/false, shared);
  ASSERT_NE(assignment, nullptr);
  ASSERT_EQ(assignment->values_in_users().size(), 1u) << assignment->ToString();
  const auto& [fill, in_user] = assignment->values_in_users()[0];
  EXPECT_FALSE(in_user.stored);
  EXPECT_EQ(in_user.user->opcode(), HloOpcode::kScatter);
  EXPECT_FALSE(assignment->HasSlice(fill));
  EXPECT_NE(assignment->ToString().find(absl::StrCat("%", fill->name(), " is not stored: %",
                                                     in_user.user->name(), " computes from it\n")),
            std::string::npos)
      << assignment->ToString();
}

}  // namespace
}  // namespace axle
