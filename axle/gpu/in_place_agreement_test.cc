//===- in_place_agreement_test.cc - The dump's in-place choices are CUDA's -===//
//
// The CUDA program builder reports what its thunks do in place
// (GpuProgram::in_place, value_slot.h: InPlaceChoices): the pairs each
// thunk offers (a scatter's updated operand) and which steps may not
// compute a while body's root straight into the loop's state (all but
// kernels). The HLO front of buffer assignment with that report
// (AssignBuffers with InPlaceChoicesOptions, which CompileGpuProgram dumps
// as `<module>.hlo-buffer-assignment.txt` under AXLE_DUMP_TO) shares a
// buffer between two values exactly when the CUDA program keeps them in
// one temporary. The target-neutral pairs (axle-opt's dump) would not: the
// CUDA loop kernels write over no operand, and a library op in a while
// body does not write into the state. Compile-only: no device is needed.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "axle/base/file_io.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/in_place_agreement_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

struct Compiled {
  std::unique_ptr<HloModule> module;  // as prepared for CUDA
  GpuProgram program;
};

// `text` through the compile-only path, loops and conditionals kept as
// written (not unrolled, not made selects).
Compiled Compile(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  GpuPrepareOptions prepare;
  prepare.unroll_loops = false;
  prepare.select_conditionals = false;
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions(), prepare);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  return {std::move(module).value(), std::move(program).value()};
}

// The pairs of temporaries the CUDA program and the reported assignment
// both share (failing where they disagree); `neutral` gets the pairs the
// CUDA program and the target-neutral assignment both share, -1 where
// they disagree.
int64_t ExpectSameSharing(const std::string& text, int64_t& neutral) {
  neutral = -1;
  Compiled compiled = Compile(text);
  if (compiled.module == nullptr) return -1;
  const std::string program_text = GpuProgramToString(compiled.program);
  auto reported = AssignBuffers(*compiled.module, InPlaceChoicesOptions(compiled.program.in_place));
  EXPECT_TRUE(reported.ok()) << reported.status();
  if (!reported.ok()) return -1;
  const int64_t shared =
      testing::CountAgreedSharing(compiled.program.values, **reported, program_text);
  // The target-neutral assignment, compared without failing.
  auto target_neutral = AssignBuffers(*compiled.module);
  EXPECT_TRUE(target_neutral.ok()) << target_neutral.status();
  if (target_neutral.ok()) {
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      const int64_t count =
          testing::CountAgreedSharing(compiled.program.values, **target_neutral, program_text);
      neutral = failures.size() == 0 ? count : -1;
    }
  }
  return shared;
}

TEST(GpuInPlaceAgreementTest, ScatterIntoATemporary) {
  // The scatter thunk updates its operand in place: the exponential's
  // temporary is the scatter's.
  int64_t neutral = 0;
  EXPECT_EQ(ExpectSameSharing(testing::kScatterIntoATemporary, neutral), 1);
  EXPECT_EQ(neutral, 1);
}

TEST(GpuInPlaceAgreementTest, LoopKernelsWriteOverNoOperand) {
  // Each chain is one loop kernel, which marks its pointers noalias: no
  // output takes over the sort before it, as the target-neutral pairs
  // would have it.
  int64_t neutral = 0;
  EXPECT_EQ(ExpectSameSharing(testing::kElementwiseChainsBetweenSorts, neutral), 0);
  EXPECT_EQ(neutral, -1);
}

TEST(GpuInPlaceAgreementTest, LoopBodyAndBranchRootsComputedInPlace) {
  // A kernel of the body computes the new state leaf from the other leaf,
  // straight into the state; each branch computes the conditional's result.
  int64_t neutral = 0;
  EXPECT_GT(ExpectSameSharing(testing::kLoopBodyAndBranchRoots, neutral), 0);
}

TEST(GpuInPlaceAgreementTest, LibraryOpInALoopBodyDoesNotWriteTheState) {
  // The body's new state leaf 1 is a sort's result: on CUDA only kernels
  // compute a root into the state, so the sort writes a temporary of its
  // own and a copy stores it, where the target-neutral rule would have
  // sorted straight into the state.
  const std::string text = R"(
HloModule sorted_state
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  y = f32[64] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  y2 = f32[64] sine(y)
  x2 = f32[64] sort(y2), dimensions={0}, to_apply=less
  ROOT t = (s32[], f32[64], f32[64]) tuple(next, x2, y2)
}
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[64], f32[64]) tuple(z, p, q)
  w = (s32[], f32[64], f32[64]) while(init), condition=cond, body=body
  x = f32[64] get-tuple-element(w), index=1
  y = f32[64] get-tuple-element(w), index=2
  ROOT sum = f32[64] add(x, y)
}
)";
  int64_t neutral = 0;
  ExpectSameSharing(text, neutral);
  EXPECT_EQ(neutral, -1);
  // The report keeps the sort out of the state; without that, the HLO
  // front would sort into it.
  Compiled compiled = Compile(text);
  ASSERT_NE(compiled.module, nullptr);
  const HloComputation* body = compiled.module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  const HloInstruction* sort = body->root_instruction()->operand(1);
  ASSERT_EQ(sort->opcode(), HloOpcode::kSort) << body->ToString();
  InPlaceChoices& choices = compiled.program.in_place;
  EXPECT_TRUE(choices.not_into_loop_state.contains(sort));
  auto reported = AssignBuffers(*compiled.module, InPlaceChoicesOptions(choices));
  ASSERT_TRUE(reported.ok()) << reported.status();
  const BufferSlice state = *(*reported)->GetUniqueSlice(body->parameter_instruction(0), {1});
  EXPECT_FALSE((*reported)->GetUniqueSlice(sort)->Overlaps(state));
  choices.not_into_loop_state.clear();
  auto unkept = AssignBuffers(*compiled.module, InPlaceChoicesOptions(choices));
  ASSERT_TRUE(unkept.ok()) << unkept.status();
  EXPECT_EQ(*(*unkept)->GetUniqueSlice(sort),
            *(*unkept)->GetUniqueSlice(body->parameter_instruction(0), {1}));
}

TEST(GpuInPlaceAgreementTest, CompileGpuProgramDumpsTheReportedAssignment) {
  const std::string dir = ::testing::TempDir() + "/axle_gpu_in_place_dump";
  setenv("AXLE_DUMP_TO", dir.c_str(), 1);
  Compiled compiled = Compile(testing::kScatterIntoATemporary);
  unsetenv("AXLE_DUMP_TO");
  ASSERT_NE(compiled.module, nullptr);
  auto reported = AssignBuffers(*compiled.module, InPlaceChoicesOptions(compiled.program.in_place));
  ASSERT_TRUE(reported.ok()) << reported.status();
  const std::string dumped = ReadFileOrEmpty(dir + "/scatter.hlo-buffer-assignment.txt");
  EXPECT_EQ(dumped, (*reported)->ToString());
  // The scatter's pair is in the report, in the module's terms.
  const HloInstruction* scatter = nullptr;
  for (const HloInstruction* instruction : compiled.module->entry_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kScatter) scatter = instruction;
  }
  ASSERT_NE(scatter, nullptr) << compiled.module->ToString();
  auto pairs = compiled.program.in_place.pairs.find(scatter);
  ASSERT_NE(pairs, compiled.program.in_place.pairs.end());
  ASSERT_EQ(pairs->second.size(), 1u);
  EXPECT_EQ(pairs->second[0].first, 0);
  EXPECT_TRUE(pairs->second[0].second.empty());
}

}  // namespace
}  // namespace axle::gpu
