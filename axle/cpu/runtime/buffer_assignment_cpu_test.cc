//===- buffer_assignment_cpu_test.cc - The cpu arena, shared analysis ------===//
//
// The cpu executable lays out its arena with the shared buffer assignment
// (axle/hlo/analysis/buffer_assignment.h): its temporaries and scratch
// memory are logical buffers live over thunk indices. For dot chains,
// while loops with tuple state, conditionals, tuple results and an aliased
// parameter: results agree with the interpreter, the arena is the
// assignment's temp allocation, no two temporaries live together share a
// byte, and the dump is the assignment's text.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::unique_ptr<LocalExecutable> CompileAndCheck(const std::string& text) {
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

const cpu::CpuExecutable& Cpu(const LocalExecutable& executable) {
  auto* cpu = dynamic_cast<const cpu::CpuExecutable*>(executable.executable());
  CHECK(cpu != nullptr);
  return *cpu;
}

const HloInstruction* Named(const HloModule& module, absl::string_view name) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  return nullptr;
}

// The arena is the temp allocation; temporaries live together are apart.
void ExpectArenaValid(const cpu::CpuExecutable& cpu) {
  const BufferAssignment& assignment = cpu.buffer_assignment();
  absl::Status verified = VerifyBufferAssignment(assignment);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << cpu.BufferAssignmentText();
  EXPECT_EQ(cpu.arena_size_bytes(), assignment.temp_allocation_total_size());
  const int64_t temp = assignment.temp_allocation_index();
  std::vector<int64_t> temps;
  for (int64_t b = 0; b < assignment.num_buffers(); ++b) {
    const BufferSlice& slice = assignment.buffer_slice(b);
    if (slice.allocation != temp || temp < 0) continue;
    EXPECT_EQ(slice.offset % kBufferAlignment, 0);
    EXPECT_LE(slice.offset + slice.size, cpu.arena_size_bytes());
    temps.push_back(b);
  }
  for (size_t i = 0; i < temps.size(); ++i) {
    for (size_t j = i + 1; j < temps.size(); ++j) {
      auto [a_first, a_last] = assignment.buffer_live_range(temps[i]);
      auto [b_first, b_last] = assignment.buffer_live_range(temps[j]);
      if (a_first > b_last || b_first > a_last) continue;
      EXPECT_FALSE(assignment.buffer_slice(temps[i]).Overlaps(assignment.buffer_slice(temps[j])))
          << "buffers " << temps[i] << " and " << temps[j] << "\n"
          << cpu.BufferAssignmentText();
    }
  }
}

TEST(CpuBufferAssignmentTest, DotChainReusesTheArena) {
  const std::string text = R"(
HloModule dots
ENTRY e {
  x = f32[32,64] parameter(0)
  w = f32[64,64] parameter(1)
  d1 = f32[32,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1 = f32[32,64] exponential(d1)
  d2 = f32[32,64] dot(e1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e2 = f32[32,64] tanh(d2)
  d3 = f32[32,64] dot(e2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[32,64] negate(d3)
})";
  auto executable = CompileAndCheck(text);
  const cpu::CpuExecutable& cpu = Cpu(*executable);
  ExpectArenaValid(cpu);
  EXPECT_LT(cpu.arena_size_bytes(), cpu.temporaries_bytes());
  const BufferAssignment& assignment = cpu.buffer_assignment();
  // Parameters get allocations of their own; a dot's result (the last
  // one is not fused with an epilogue) is in the arena, found by its HLO
  // value.
  const HloModule& module = cpu.module();
  auto x = assignment.GetUniqueSlice(Named(module, "x"));
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(assignment.Allocations()[x->allocation].kind(), BufferAllocation::Kind::kParameter);
  auto d3 = assignment.GetUniqueSlice(Named(module, "d3"));
  ASSERT_TRUE(d3.ok()) << assignment.ToString();
  EXPECT_EQ(d3->allocation, assignment.temp_allocation_index());
  const std::string dump = cpu.BufferAssignmentText();
  EXPECT_EQ(dump.rfind(assignment.ToString(), 0), 0u) << dump;
  EXPECT_NE(dump.find("allocation 0: parameter, size 8192, parameter 0 at {}"), std::string::npos)
      << dump;
  EXPECT_NE(dump.find(", maybe live out"), std::string::npos) << dump;
  EXPECT_NE(dump.find(": reads %"), std::string::npos) << dump;
}

TEST(CpuBufferAssignmentTest, WhileWithTupleStateAndTupleResult) {
  const std::string text = R"(
HloModule loop
cond {
  p = (s32[], f32[64,64], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64,64], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[64,64] get-tuple-element(p), index=1
  b = f32[64,64] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,64] tanh(d)
  ROOT r = (s32[], f32[64,64], f32[64,64]) tuple(next, t, a)
}
ENTRY e {
  x = f32[64,64] parameter(0)
  y = f32[64,64] parameter(1)
  zero = s32[] constant(0)
  s = f32[64,64] sine(x)
  init = (s32[], f32[64,64], f32[64,64]) tuple(zero, s, y)
  w = (s32[], f32[64,64], f32[64,64]) while(init), condition=cond, body=body
  g1 = f32[64,64] get-tuple-element(w), index=1
  g2 = f32[64,64] get-tuple-element(w), index=2
  sum = f32[64,64] add(g1, g2)
  ROOT out = (f32[64,64], f32[64,64]) tuple(sum, g1)
})";
  auto executable = CompileAndCheck(text);
  const cpu::CpuExecutable& cpu = Cpu(*executable);
  ExpectArenaValid(cpu);
  const BufferAssignment& assignment = cpu.buffer_assignment();
  // The loop state's leaves are temporaries of the arena, live out to the
  // end where they are results.
  const HloInstruction* loop = Named(cpu.module(), "w");
  ASSERT_NE(loop, nullptr);
  for (int64_t leaf = 0; leaf < 3; ++leaf) {
    auto slice = assignment.GetUniqueSlice(loop, {leaf});
    ASSERT_TRUE(slice.ok()) << slice.status() << "\n" << assignment.ToString();
    EXPECT_EQ(slice->allocation, assignment.temp_allocation_index());
  }
  EXPECT_TRUE(assignment.Allocations()[assignment.temp_allocation_index()].is_live_out());
}

TEST(CpuBufferAssignmentTest, ConditionalBranchesWriteTheResult) {
  const std::string text = R"(
HloModule cond
on_true {
  p = f32[128] parameter(0)
  ROOT e = f32[128] exponential(p)
}
on_false {
  p = f32[128] parameter(0)
  n = f32[128] negate(p)
  ROOT m = f32[128] multiply(n, p)
}
ENTRY e {
  k = pred[] parameter(0)
  x = f32[128] parameter(1)
  s = f32[128] sine(x)
  c = f32[128] conditional(k, s, s), true_computation=on_true, false_computation=on_false
  ROOT r = f32[128] add(c, s)
})";
  auto executable = CompileAndCheck(text);
  const cpu::CpuExecutable& cpu = Cpu(*executable);
  ExpectArenaValid(cpu);
  const BufferAssignment& assignment = cpu.buffer_assignment();
  const HloInstruction* conditional = Named(cpu.module(), "c");
  ASSERT_NE(conditional, nullptr);
  auto c = assignment.GetUniqueSlice(conditional);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << assignment.ToString();
  // The operand the branches read (the sine, fused) is live while they
  // write the result: apart.
  auto s = assignment.GetUniqueSlice(conditional->operand(1));
  ASSERT_TRUE(s.ok()) << s.status() << "\n" << assignment.ToString();
  EXPECT_EQ(s->allocation, assignment.temp_allocation_index());
  EXPECT_FALSE(c->Overlaps(*s));
}

TEST(CpuBufferAssignmentTest, AliasedParameterHasItsAllocation) {
  const std::string text = R"(
HloModule increment, input_output_alias={ {}: 0 }
ENTRY e {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  ROOT r = f32[256] add(p, q)
})";
  auto executable = CompileAndCheck(text);
  const cpu::CpuExecutable& cpu = Cpu(*executable);
  ExpectArenaValid(cpu);
  const BufferAssignment& assignment = cpu.buffer_assignment();
  int64_t parameters = 0;
  for (const BufferAllocation& allocation : assignment.Allocations()) {
    if (allocation.kind() != BufferAllocation::Kind::kParameter) continue;
    ++parameters;
    EXPECT_EQ(allocation.size(), 1024);
  }
  EXPECT_EQ(parameters, 2);
}

}  // namespace
}  // namespace axle
