//===- gpu_compiler_test.cc - The CUDA compile pipeline, without a GPU -----===//
//
// The compile-only path (CompileGpuProgram: passes, thunks, PTX per kernel,
// nothing loaded): hand-written modules with loops, conditionals, tuples and
// custom calls become the expected thunks; library ops are Unimplemented
// naming the op and CUDA; the PTX assembles (ptxas, where the toolkit has
// it); identical fusions compile once; and every JAX program of
// ../shared/jax either compiles or is Unimplemented naming CUDA.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_compiler.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_executable.h"
#include "axle/gpu/gpu_modules_test_util.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/gpu/ptxas.h"
#include "axle/gpu/row_fusion.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/compilation_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

#ifndef AXLE_GPU_JAX_DIR
#define AXLE_GPU_JAX_DIR ""
#endif

// Registered for "CUDA"; never called here (no device).
void axle_compile_test_target(CUstream, void**, const char*, size_t) {}
XLA_REGISTER_CUSTOM_CALL_TARGET(axle_compile_test_target, "CUDA");

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Loops and conditionals kept as written (not unrolled, not made
// selects: gpu_graph_test.cc tests those passes): the program builder's
// control flow is what these tests look at.
absl::StatusOr<GpuProgram> Compile(const std::string& text, std::unique_ptr<HloModule>* kept) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  *kept = std::move(module).value();
  GpuPrepareOptions prepare;
  prepare.unroll_loops = false;
  prepare.select_conditionals = false;
  return CompileGpuProgram(kept->get(), PtxOptions(), prepare);
}

template <typename T>
int Count(const GpuThunkSequence& sequence) {
  int count = 0;
  for (const auto& thunk : sequence) count += dynamic_cast<const T*>(thunk.get()) != nullptr;
  return count;
}

// Calls `f` on every while thunk of `sequence` and the sequences nested in
// it, outer loops first.
template <typename F>
void ForEachLoop(const GpuThunkSequence& sequence, const F& f) {
  for (const auto& thunk : sequence) {
    if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      f(*loop);
      ForEachLoop(loop->condition(), f);
      ForEachLoop(loop->body(), f);
    } else if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(thunk.get())) {
      ForEachLoop(call->sequence(), f);
    } else if (const auto* conditional = dynamic_cast<const GpuConditionalThunk*>(thunk.get())) {
      for (const GpuThunkSequence& branch : conditional->branches()) ForEachLoop(branch, f);
    }
  }
}

template <typename T>
const T* Find(const GpuThunkSequence& sequence) {
  for (const auto& thunk : sequence) {
    if (const auto* found = dynamic_cast<const T*>(thunk.get())) return found;
  }
  return nullptr;
}

TEST(GpuCompilerTest, ElementwiseIsOneKernelWhosePtxAssembles) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  a = f32[1000] add(x, y)
  ROOT m = f32[1000] multiply(a, x)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->thunks.size(), 1u) << GpuProgramToString(*program);
  const auto* kernel = dynamic_cast<const GpuKernelThunk*>(program->thunks[0].get());
  ASSERT_NE(kernel, nullptr) << GpuProgramToString(*program);
  EXPECT_THAT(kernel->kernel().ptx, HasSubstr(".entry " + kernel->kernel().name));
  EXPECT_EQ(kernel->buffer_uses().operands.size(), 2u);
  EXPECT_EQ(kernel->buffer_uses().outputs.size(), 1u);
  ASSERT_EQ(program->result_leaves.size(), 1u);
  EXPECT_EQ(program->result_leaves[0].second, kernel->buffer_uses().outputs[0]);
  absl::StatusOr<std::string> cubin = AssemblePtx(kernel->kernel().ptx, "sm_90");
  if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "no ptxas: " << cubin.status().message();
  }
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

// XLA:GPU's TopK custom call (its own comparator: floats ordered through
// their s32 image) is a stable sort of (values, iota) and two slices
// (topk_decomposer.h): a sort thunk, kernels ptxas accepts.
constexpr char kGpuTopKCall[] = R"(
HloModule m
bits {
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  a = f32[] parameter(0)
  ab = s32[] bitcast-convert(a)
  zero = s32[] constant(0)
  an = pred[] compare(ab, zero), direction=LT
  max = s32[] constant(2147483647)
  ax = s32[] xor(max, ab)
  ak = s32[] select(an, ax, ab)
  b = f32[] parameter(1)
  bb = s32[] bitcast-convert(b)
  bn = pred[] compare(bb, zero), direction=LT
  bx = s32[] xor(max, bb)
  bk = s32[] select(bn, bx, bb)
  ROOT c = pred[] compare(ak, bk), direction=GT
}
ENTRY e {
  x = f32[6,300] parameter(0)
  ROOT t = (f32[6,8], s32[6,8]) custom-call(x), custom_call_target="__gpu$TopK", called_computations={bits}, api_version=API_VERSION_TYPED_FFI
})";

TEST(GpuCompilerTest, TopKCustomCallIsASortAndSlices) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(kGpuTopKCall, &module);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string listing = GpuProgramToString(*program);
  EXPECT_THAT(listing, HasSubstr("sort")) << listing;
  EXPECT_THAT(listing, Not(HasSubstr("custom-call"))) << listing;
  ASSERT_FALSE(program->kernels.empty()) << listing;
  for (const auto& kernel : program->kernels) {
    absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
    if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
      GTEST_SKIP() << "no ptxas: " << cubin.status().message();
    }
    EXPECT_TRUE(cubin.ok()) << kernel->name << ": " << cubin.status();
  }
}

TEST(GpuCompilerTest, TuplesAndBitcastsArePlumbing) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4,2] parameter(0)
  p = (f32[4,2], s32[3]) parameter(1)
  g = s32[3] get-tuple-element(p), index=1
  b = f32[8] bitcast(x)
  n = f32[8] negate(b)
  ROOT t = (f32[8], s32[3], f32[4,2], f32[8]) tuple(n, g, x, n)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->thunks.size(), 1u) << GpuProgramToString(*program);
  ASSERT_EQ(program->result_leaves.size(), 4u);
  // The parameter leaves are passed through, the negation's value twice.
  EXPECT_EQ(program->values[program->result_leaves[1].second].kind, GpuValue::Kind::kParameter);
  EXPECT_EQ(program->values[program->result_leaves[2].second].kind, GpuValue::Kind::kParameter);
  EXPECT_EQ(program->result_leaves[0].second, program->result_leaves[3].second);
}

const std::string kWhileModule = test::WhileSwapModule(test::LoopResult::kNext);

TEST(GpuCompilerTest, CountedWhileLoopHasBodyAndStateCopiesAndNoCondition) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(kWhileModule, &module);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  const auto* loop = Find<GpuWhileThunk>(program->thunks);
  ASSERT_NE(loop, nullptr) << text;
  // Counted from 0 by 1 below 10: the body alone, ten times.
  EXPECT_EQ(loop->trip_count(), 10) << text;
  EXPECT_TRUE(loop->condition().empty()) << text;
  EXPECT_THAT(text, HasSubstr("while trip_count=10 %w"));
  EXPECT_GE(Count<GpuKernelThunk>(loop->body()), 1) << text;
  // The body swaps state leaves: its root is stored by copies at its end.
  ASSERT_FALSE(loop->body().empty());
  EXPECT_NE(dynamic_cast<const GpuCopyThunk*>(loop->body().back().get()), nullptr) << text;
}

TEST(GpuCompilerTest, ArenaLayoutReusesDeadTemporariesAndKeepsLoopValuesApart) {
  // A chain of kernels (column reductions do not fuse into their
  // consumers): each temporary dies after its last reader, so the arena is
  // smaller than their sum.
  std::unique_ptr<HloModule> chain;
  auto program = Compile(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,64] parameter(0)
  z = f32[] constant(0)
  e1 = f32[1024,64] log(x)
  r1 = f32[64] reduce(e1, z), dimensions={0}, to_apply=add
  b1 = f32[1024,64] broadcast(r1), dimensions={1}
  d1 = f32[1024,64] divide(e1, b1)
  e2 = f32[1024,64] log(d1)
  r2 = f32[64] reduce(e2, z), dimensions={0}, to_apply=add
  b2 = f32[1024,64] broadcast(r2), dimensions={1}
  d2 = f32[1024,64] divide(e2, b2)
  e3 = f32[1024,64] log(d2)
  r3 = f32[64] reduce(e3, z), dimensions={0}, to_apply=add
  b3 = f32[1024,64] broadcast(r3), dimensions={1}
  ROOT d3 = f32[1024,64] divide(e3, b3)
})",
                         &chain);
  ASSERT_TRUE(program.ok()) << program.status();
  GpuBufferLayout layout = LayOutGpuBuffers(*program);
  EXPECT_TRUE(VerifyBufferAssignment(*layout.assignment).ok()) << layout.assignment->ToString();
  int64_t sum = 0;
  for (int64_t size : program->temporary_sizes) sum += size;
  EXPECT_LT(layout.arena_size, sum)
      << layout.assignment->ToString() << GpuProgramToString(*program);
  for (int64_t offset : layout.temporary_offsets) EXPECT_EQ(offset % 256, 0);

  std::unique_ptr<HloModule> loop;
  auto looped = Compile(kWhileModule, &loop);
  ASSERT_TRUE(looped.ok()) << looped.status();
  GpuBufferLayout loop_layout = LayOutGpuBuffers(*looped);
  EXPECT_TRUE(VerifyBufferAssignment(*loop_layout.assignment).ok())
      << loop_layout.assignment->ToString();
  // Every temporary the loop touches lives throughout it: none overlap.
  for (size_t a = 0; a < looped->temporary_sizes.size(); ++a) {
    for (size_t b = a + 1; b < looped->temporary_sizes.size(); ++b) {
      if (looped->temporary_sizes[a] == 0 || looped->temporary_sizes[b] == 0) continue;
      const int64_t a0 = loop_layout.temporary_offsets[a], b0 = loop_layout.temporary_offsets[b];
      EXPECT_TRUE(a0 + looped->temporary_sizes[a] <= b0 || b0 + looped->temporary_sizes[b] <= a0)
          << "temporaries " << a << " and " << b << " overlap\n"
          << loop_layout.assignment->ToString();
    }
  }
}

// The value ids the thunk of `program` that computes an `opcode` reads and
// writes.
GpuThunkValues UsesOf(const GpuProgram& program, HloOpcode opcode) {
  for (const auto& thunk : program.thunks) {
    GpuThunkValues uses = thunk->buffer_uses();
    for (int64_t id : uses.outputs) {
      const HloInstruction* instruction = program.values[id].instruction;
      if (instruction != nullptr && instruction->opcode() == opcode) return uses;
    }
  }
  ADD_FAILURE() << "no thunk computes a " << HloOpcodeString(opcode) << "\n"
                << GpuProgramToString(program);
  return {};
}

TEST(GpuCompilerTest, ScatterWritesIntoItsOperandWhenTheSharedRuleAllows) {
  // The shared in-place rule (in_place_sharing.h) with the scatter thunk's
  // hook: x is a temporary of the program that dies at the scatter, so the
  // scatter's result takes over its memory (no copy at run time); where x
  // is read afterwards, the two keep their own temporaries.
  constexpr char kScatter[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[64,16] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,16] parameter(2)
  x = f32[64,16] exponential(p)
  s = f32[64,16] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[64,16] RESULT
})";
  for (const bool read_later : {false, true}) {
    std::string text = kScatter;
    text.replace(text.find("RESULT"), 6, read_later ? "add(s, x)" : "negate(s)");
    std::unique_ptr<HloModule> kept;
    absl::StatusOr<GpuProgram> program = Compile(text, &kept);
    ASSERT_TRUE(program.ok()) << program.status();
    const GpuThunkValues scatter = UsesOf(*program, HloOpcode::kScatter);
    ASSERT_FALSE(scatter.operands.empty());
    ASSERT_EQ(scatter.outputs.size(), 1u);
    const GpuValue& operand = program->values[scatter.operands[0]];
    const GpuValue& output = program->values[scatter.outputs[0]];
    ASSERT_EQ(operand.kind, GpuValue::Kind::kTemporary);
    EXPECT_EQ(operand.temporary == output.temporary, !read_later) << GpuProgramToString(*program);
    GpuBufferLayout layout = LayOutGpuBuffers(*program);
    EXPECT_TRUE(VerifyBufferAssignment(*layout.assignment).ok()) << layout.assignment->ToString();
  }
}

TEST(GpuCompilerTest, ConditionalHasOneSequencePerBranch) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule branches
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
b2 {
  ROOT p = f32[8] parameter(0)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[8] parameter(1)
  c = f32[8] conditional(i, x, x, x), branch_computations={b0, b1, b2}
  ROOT m = f32[8] multiply(c, x)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  const auto* conditional = Find<GpuConditionalThunk>(program->thunks);
  ASSERT_NE(conditional, nullptr) << text;
  ASSERT_EQ(conditional->branches().size(), 3u) << text;
  EXPECT_EQ(Count<GpuKernelThunk>(conditional->branches()[0]), 1) << text;
  EXPECT_EQ(Count<GpuKernelThunk>(conditional->branches()[1]), 1) << text;
  // The kernels write the result in place (their value shares its memory);
  // the third branch returns its parameter: a copy into the result.
  EXPECT_EQ(Count<GpuCopyThunk>(conditional->branches()[0]), 0) << text;
  EXPECT_EQ(Count<GpuCopyThunk>(conditional->branches()[1]), 0) << text;
  EXPECT_EQ(Count<GpuCopyThunk>(conditional->branches()[2]), 1) << text;
  const auto& kernel = dynamic_cast<const GpuKernelThunk&>(*conditional->branches()[0][0]);
  const int64_t result = program->values[kernel.buffer_uses().outputs[0]].temporary;
  const int64_t multiply =
      dynamic_cast<const GpuKernelThunk&>(*program->thunks.back()).buffer_uses().operands[0];
  EXPECT_EQ(program->values[multiply].temporary, result) << text;
  // The temporary the kernel's value had takes no memory; the layout holds.
  const GpuBufferLayout layout = LayOutGpuBuffers(*program);
  EXPECT_GE(layout.arena_size, 32);
  EXPECT_EQ(Count<GpuKernelThunk>(program->thunks), 1) << text;
}

TEST(GpuCompilerTest, CustomCallsAndDeviceIdsGetTheirThunks) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  p = (f32[4], f32[2]) parameter(1)
  c = (f32[4], f32[4]) custom-call(x, p), custom_call_target="axle_compile_test_target"
  r = u32[] replica-id()
  g = f32[4] get-tuple-element(c), index=1
  ROOT t = (f32[4], u32[]) tuple(g, r)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  const auto* call = Find<GpuCustomCallThunk>(program->thunks);
  ASSERT_NE(call, nullptr) << text;
  // Operands' leaves (x, then p's two), then the result's two.
  EXPECT_EQ(call->buffer_uses().operands.size(), 3u) << text;
  EXPECT_EQ(call->buffer_uses().outputs.size(), 2u) << text;
  // replica-id: 0 on one device (lowered to a constant, or a memset).
  ASSERT_EQ(program->result_leaves.size(), 2u);
  EXPECT_TRUE(program->values[program->result_leaves[1].second].kind == GpuValue::Kind::kConstant ||
              Count<GpuMemsetThunk>(program->thunks) == 1)
      << text;
}

TEST(GpuCompilerTest, CallsKeptByRunBackendOnlyAreSequences) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
callee {
  a = f32[32] parameter(0)
  b = f32[32] parameter(1)
  s = f32[32] subtract(a, b)
  ROOT t = (f32[32], f32[32]) tuple(s, a)
}
ENTRY e {
  x = f32[32] parameter(0)
  y = f32[32] parameter(1)
  c = (f32[32], f32[32]) call(x, y), to_apply=callee
  g = f32[32] get-tuple-element(c), index=0
  ROOT m = f32[32] multiply(g, y)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto program = CompileGpuProgram(module->get(), PtxOptions(), /*run_backend_only=*/true);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  const auto* call = Find<GpuSequenceThunk>(program->thunks);
  ASSERT_NE(call, nullptr) << text;
  EXPECT_EQ(Count<GpuKernelThunk>(call->sequence()), 1) << text;
  EXPECT_EQ(Count<GpuKernelThunk>(program->thunks), 1) << text;
}

TEST(GpuCompilerTest, UnregisteredCustomCallIsNamed) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="no_such_cuda_target"
})",
                         &module);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("no_such_cuda_target"));
  EXPECT_THAT(program.status().message(), HasSubstr("%c"));
}

TEST(GpuCompilerTest, LibraryOpsGetLibraryThunks) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,2] parameter(1)
  ROOT d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  // Never wrapped into a loop fusion: the gemm thunk computes it.
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kFusion) << instruction->name();
  }
}

TEST(GpuCompilerTest, SortGetsItsKernel) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT s = f32[16] sort(x), dimensions={0}, to_apply=less
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
}

TEST(GpuCompilerTest, RngOpsGetHostSampledThunksOutsideGraphs) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  hi = f32[] parameter(1)
  r = f32[8] rng(lo, hi), distribution=rng_uniform
  s = u64[2] rng-get-and-update-state(), delta=4
  ROOT t = (f32[8], u64[2]) tuple(r, s)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  int rng_thunks = 0;
  for (const auto& thunk : program->thunks) {
    if (thunk->name() != "r" && thunk->name() != "s") continue;
    ++rng_thunks;
    // Host work: never recorded into a CUDA graph.
    EXPECT_FALSE(thunk->CapturableInGraph()) << thunk->name();
  }
  EXPECT_EQ(rng_thunks, 2) << text;
}

TEST(GpuCompilerTest, RngOfAnUnsupportedDistributionIsUnimplementedNamingIt) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  lo = s32[] constant(0)
  hi = s32[] constant(1)
  ROOT r = s32[8] rng(lo, hi), distribution=rng_normal
})",
                         &module);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(program.status().message(), HasSubstr("rng"));
  EXPECT_THAT(program.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(program.status().message(), HasSubstr("%r"));
}

TEST(GpuCompilerTest, UnsupportedOpsAreUnimplementedNotCrashes) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT i = (f32[8], token[]) infeed(t)
})",
                         &module);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(program.status().message(), HasSubstr("infeed"));
  EXPECT_THAT(program.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(program.status().message(), HasSubstr("transfers with the host"));
}

// A send/recv pair on one channel among several devices is a
// collective-permute (NCCL); on one device, or without its partner, the
// op is named.
TEST(GpuCompilerTest, SendRecvPairsAmongDevicesArePermutesAndTheRestAreNamed) {
  constexpr char kPair[] = R"(
HloModule pair, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  t = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  send = (f32[4], u32[], token[]) send(x, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=1
  send-done = token[] send-done(send), channel_id=1
  ROOT r = f32[4] get-tuple-element(recv-done), index=0
})";
  std::unique_ptr<HloModule> module;
  auto pair = Compile(kPair, &module);
  ASSERT_TRUE(pair.ok()) << pair.status();
  const std::string listing = GpuProgramToString(*pair);
  EXPECT_THAT(listing, HasSubstr("collective-permute")) << listing;
  EXPECT_THAT(listing, ::testing::Not(HasSubstr("recv"))) << listing;

  auto one_device = Compile(absl::StrReplaceAll(kPair, {{", replica_count=2", ""}}), &module);
  ASSERT_FALSE(one_device.ok());
  EXPECT_EQ(one_device.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(one_device.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(one_device.status().message(), HasSubstr("(instruction %recv, recv)"));

  auto unpaired = Compile(R"(
HloModule unpaired, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  t = token[] after-all()
  send = (f32[4], u32[], token[]) send(x, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  send-done = token[] send-done(send), channel_id=1
  ROOT n = f32[4] negate(x)
})",
                          &module);
  ASSERT_FALSE(unpaired.ok());
  EXPECT_EQ(unpaired.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(unpaired.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(unpaired.status().message(), HasSubstr("%send"));
}

TEST(GpuCompilerTest, IdenticalFusionsCompileOnce) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[333] parameter(0)
  y = f32[333] parameter(1)
  t = f32[333] tanh(x)
  u = f32[333] tanh(y)
  ROOT r = (f32[333], f32[333]) tuple(t, u)
})";
  std::unique_ptr<HloModule> first;
  const PtxCacheStats before = GetPtxCacheStats();
  auto program = Compile(text, &first);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(Count<GpuKernelThunk>(program->thunks), 2) << GpuProgramToString(*program);
  EXPECT_EQ(program->kernels.size(), 1u) << GpuProgramToString(*program);
  std::unique_ptr<HloModule> second;
  auto again = Compile(text, &second);
  ASSERT_TRUE(again.ok()) << again.status();
  const PtxCacheStats after = GetPtxCacheStats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 3);
  EXPECT_EQ(again->kernels[0].get(), program->kernels[0].get());
}

// The compilation cache on the compile-only path: a module compiled again
// (here under other names: structural identity) runs no pass and compiles no
// PTX; it gets new thunks over the module prepared the first time. Other
// options are another compilation.
TEST(GpuCompilerTest, ModuleCompiledAgainComesFromTheCompilationCache) {
  const char* text = R"(
HloModule first
ENTRY e {
  x = f32[4711] parameter(0)
  y = f32[4711] parameter(1)
  t = f32[4711] tanh(x)
  m = f32[4711] multiply(t, y)
  ROOT r = f32[4711] add(m, x)
})";
  auto compile = [](const std::string& source, const PtxOptions& ptx) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(source);
    EXPECT_TRUE(module.ok()) << module.status();
    return CompileGpuProgramCached(*std::move(module), ExecutableBuildOptions(), ptx,
                                   GpuPrepareOptions());
  };
  CompilationCache& cache = CompilationCache::Global();
  const CompilationCacheStats before = cache.stats();
  const PtxCacheStats ptx_before = GetPtxCacheStats();
  absl::StatusOr<GpuCompiledProgram> first = compile(text, PtxOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->program.kernels.size(), 1u) << GpuProgramToString(first->program);
  const CompilationCacheStats after_first = cache.stats();
  EXPECT_EQ(after_first.memory_misses - before.memory_misses, 1);
  EXPECT_EQ(after_first.memory_hits - before.memory_hits, 0);
  EXPECT_EQ(GetPtxCacheStats().misses - ptx_before.misses, 1);

  const std::string renamed = absl::StrReplaceAll(
      text, {{"HloModule first", "HloModule second"}, {"t = ", "th = "}, {"(t, y)", "(th, y)"}});
  const PtxCacheStats ptx_second = GetPtxCacheStats();
  absl::StatusOr<GpuCompiledProgram> second = compile(renamed, PtxOptions());
  ASSERT_TRUE(second.ok()) << second.status();
  const CompilationCacheStats after_second = cache.stats();
  EXPECT_EQ(after_second.memory_hits - after_first.memory_hits, 1);
  EXPECT_EQ(after_second.memory_misses - after_first.memory_misses, 0);
  EXPECT_EQ(GetPtxCacheStats().misses - ptx_second.misses, 0);
  // The prepared module is the one kept (the first's, unprepared again);
  // the thunks are new (each executable initializes its own on the device),
  // the kernel the same.
  EXPECT_EQ(second->module.get(), first->module.get());
  EXPECT_EQ(second->module->name(), "first");
  EXPECT_EQ(GpuProgramToString(second->program), GpuProgramToString(first->program));
  ASSERT_EQ(second->program.thunks.size(), first->program.thunks.size());
  EXPECT_NE(second->program.thunks[0].get(), first->program.thunks[0].get());
  EXPECT_EQ(second->program.kernels[0].get(), first->program.kernels[0].get());

  // Other PTX options: compiled again, into another kernel.
  PtxOptions smaller_blocks;
  smaller_blocks.block_size = 128;
  absl::StatusOr<GpuCompiledProgram> third = compile(text, smaller_blocks);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(cache.stats().memory_misses - after_second.memory_misses, 1);
  EXPECT_NE(third->module.get(), first->module.get());
  ASSERT_EQ(third->program.kernels.size(), 1u);
  EXPECT_EQ(third->program.kernels[0]->block, 128);
}

// Thunks that compile kernels of their own (here a sort) compile them once:
// the program rebuilt from the compilation cache finds their PTX in the
// hand-written kernels' cache.
TEST(GpuCompilerTest, ProgramFromTheCompilationCacheCompilesNoSortKernel) {
  const char* text = R"(
HloModule sorted
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[3,4713] parameter(0)
  ROOT sorted_descending = f32[3,4713] sort(x), dimensions={1}, to_apply=less
})";
  auto compile = [&] {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    return CompileGpuProgramCached(*std::move(module), ExecutableBuildOptions(), PtxOptions(),
                                   GpuPrepareOptions());
  };
  const PtxCacheStats before = GetHandWrittenPtxCacheStats();
  absl::StatusOr<GpuCompiledProgram> first = compile();
  ASSERT_TRUE(first.ok()) << first.status();
  const PtxCacheStats after_first = GetHandWrittenPtxCacheStats();
  EXPECT_EQ(after_first.misses - before.misses, 1);
  absl::StatusOr<GpuCompiledProgram> second = compile();
  ASSERT_TRUE(second.ok()) << second.status();
  const PtxCacheStats after_second = GetHandWrittenPtxCacheStats();
  EXPECT_EQ(after_second.misses - after_first.misses, 0);
  EXPECT_EQ(after_second.hits - after_first.hits, 1);
  EXPECT_EQ(GpuProgramToString(second->program), GpuProgramToString(first->program));
}

// Whether `reduce` is an output of `fused`: its root, or (a variadic
// reduce) read only by get-tuple-elements that are the root tuple's.
bool IsFusionOutput(const HloInstruction& reduce, const HloComputation& fused) {
  const HloInstruction* root = fused.root_instruction();
  if (&reduce == root) return true;
  for (const HloInstruction* user : reduce.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    for (const HloInstruction* reader : user->users()) {
      if (reader != root || root->opcode() != HloOpcode::kTuple) return false;
    }
  }
  return true;
}

// The fusions of `module` (any computation) in which a reduce feeds other
// fused instructions and which are no row fusions (row_fusion.h, whose
// kernel computes each reduction once per row): a GPU loop kernel would
// compute it per element.
std::vector<std::string> FusionsRecomputingReduces(const HloModule& module) {
  std::vector<std::string> found;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const auto* fusion = dyn_cast<HloFusionInstruction>(instruction);
      if (fusion == nullptr) continue;
      const HloComputation* fused = fusion->fused_instructions_computation();
      if (std::optional<RowFusionAnalysis> row = AnalyzeRowFusion(*fused);
          row.has_value() && row->outputs_ok) {
        continue;
      }
      for (const HloInstruction* inner : fused->instructions()) {
        if (inner->opcode() == HloOpcode::kReduce && !IsFusionOutput(*inner, *fused)) {
          found.push_back(absl::StrCat(fusion->name(), " (", inner->name(), ")"));
        }
      }
    }
  }
  return found;
}

// The fusions of `module`'s computations and how many compute reductions.
std::pair<int, int> CountFusions(const HloModule& module) {
  int fusions = 0;
  int reductions = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const auto* fusion = dyn_cast<HloFusionInstruction>(instruction);
      if (fusion == nullptr) continue;
      ++fusions;
      const HloComputation* fused = fusion->fused_instructions_computation();
      for (const HloInstruction* inner : fused->instructions()) {
        if (inner->opcode() == HloOpcode::kReduce) {
          ++reductions;
          break;
        }
      }
    }
  }
  return {fusions, reductions};
}

// Softmax and layer norm: no loop kernel recomputes a reduction per
// element; they are row fusions (a warp per row computes each reduction
// once, then the elements that read them).
TEST(GpuCompilerTest, ReductionsAreComputedOncePerRow) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,1024] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1024] broadcast(m), dimensions={0}
  d = f32[64,1024] subtract(x, mb)
  ex = f32[64,1024] exponential(d)
  s = f32[64] reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[64,1024] broadcast(s), dimensions={0}
  softmax = f32[64,1024] divide(ex, sb)
  mean = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  meanb = f32[64,1024] broadcast(mean), dimensions={0}
  centered = f32[64,1024] subtract(x, meanb)
  sq = f32[64,1024] multiply(centered, centered)
  var = f32[64] reduce(sq, zero), dimensions={1}, to_apply=add
  eps = f32[] constant(1e-5)
  epsb = f32[64] broadcast(eps), dimensions={}
  ve = f32[64] add(var, epsb)
  r = f32[64] rsqrt(ve)
  rb = f32[64,1024] broadcast(r), dimensions={0}
  norm = f32[64,1024] multiply(centered, rb)
  ROOT t = (f32[64,1024], f32[64,1024]) tuple(softmax, norm)
})",
                         &module);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_THAT(FusionsRecomputingReduces(*module), ::testing::IsEmpty()) << module->ToString();
  auto [fusions, reductions] = CountFusions(*module);
  // Both read x's rows: one kernel computing max, sum, mean and variance
  // of each row, then softmax and the normalization.
  EXPECT_EQ(reductions, 1) << module->ToString();
  EXPECT_EQ(fusions, 1) << module->ToString();
}

// The JAX programs whose reductions the cpu fuses into their consumers
// compile for CUDA without a loop kernel recomputing a reduction.
TEST(GpuCompilerTest, JaxReductionsAreKernelsOfTheirOwn) {
  const std::vector<std::string> names = {"perf_softmax_4096", "perf_layernorm_8192x1024",
                                          "softmax_layernorm_bf16", "scan_reductions",
                                          "threefry_random"};
  int examined = 0;
  for (const std::string& name : names) {
    std::ifstream file(absl::StrCat(AXLE_GPU_JAX_DIR, "/", name, ".hlo"));
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    auto module = ParseAndReturnUnverifiedModule(text.str());
    ASSERT_TRUE(module.ok()) << name << ": " << module.status();
    absl::Status prepared = PrepareGpuModule(module->get());
    ASSERT_TRUE(prepared.ok()) << name << ": " << prepared;
    EXPECT_THAT(FusionsRecomputingReduces(**module), ::testing::IsEmpty()) << name << "\n"
                                                                           << (*module)->ToString();
    auto [fusions, reductions] = CountFusions(**module);
    absl::StatusOr<GpuProgram> program = BuildGpuProgram(**module, PtxOptions());
    ASSERT_TRUE(program.ok()) << name << ": " << program.status();
    std::printf("%s: %d fusions, %d of them reductions; %zu top-level thunks, %zu kernels\n",
                name.c_str(), fusions, reductions, program->thunks.size(), program->kernels.size());
    ++examined;
  }
  if (examined == 0) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
}

// Every JAX program either compiles for CUDA (each kernel's PTX made) or is
// Unimplemented naming CUDA (library ops today); nothing else.
TEST(GpuCompilerTest, JaxProgramsCompileOrNameWhatCudaLacks) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(AXLE_GPU_JAX_DIR, error)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".hlo";
    if (file.size() > suffix.size() && file.ends_with(suffix) && !file.ends_with(".opt.hlo")) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  if (names.empty()) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::sort(names.begin(), names.end());
  std::vector<std::string> compiled;
  std::vector<std::string> unimplemented;
  std::vector<std::string> loops;
  for (const std::string& name : names) {
    std::ifstream file(absl::StrCat(AXLE_GPU_JAX_DIR, "/", name, ".hlo"));
    std::stringstream text;
    text << file.rdbuf();
    std::unique_ptr<HloModule> module;
    absl::StatusOr<GpuProgram> program = Compile(text.str(), &module);
    if (program.ok()) {
      EXPECT_FALSE(program->thunks.empty()) << name;
      for (const auto& kernel : program->kernels) EXPECT_FALSE(kernel->ptx.empty()) << name;
      compiled.push_back(name);
      std::vector<std::string> trips;
      ForEachLoop(program->thunks, [&](const GpuWhileThunk& loop) {
        trips.push_back(loop.trip_count().has_value() ? absl::StrCat(*loop.trip_count())
                                                      : "predicate");
      });
      if (!trips.empty()) {
        loops.push_back(absl::StrCat(name, ": ", absl::StrJoin(trips, ", ")));
        // JAX's fori_loop and scan count a constant range: no host reads.
        if (name == "fori_cond_dynamic" || name == "lstm_scan" || name == "threefry_random") {
          EXPECT_THAT(trips, ::testing::Not(::testing::Contains("predicate"))) << name;
        }
      }
      continue;
    }
    // Unimplemented naming CUDA, or a custom-call target with no CUDA
    // version (cholesky_solve's LAPACK targets are the CPU's).
    EXPECT_TRUE(program.status().code() == absl::StatusCode::kUnimplemented ||
                program.status().code() == absl::StatusCode::kNotFound)
        << name << ": " << program.status();
    EXPECT_THAT(program.status().message(), HasSubstr("CUDA")) << name;
    unimplemented.push_back(absl::StrCat(name, ": ", program.status().message()));
  }
  std::printf(
      "compiled for CUDA (%zu): %s\nunimplemented (%zu):\n  %s\nloops' trip counts:\n  %s\n",
      compiled.size(), absl::StrJoin(compiled, " ").c_str(), unimplemented.size(),
      absl::StrJoin(unimplemented, "\n  ").c_str(), absl::StrJoin(loops, "\n  ").c_str());
  EXPECT_FALSE(compiled.empty());
}

// Modules from XLA's pass tests that once stopped the pipeline: a tuple
// copy (a loop fusion computes arrays: copied leaf by leaf), a call-start
// to a computation of another thread from an entry that is not "main"
// (lowered to a call on the caller's thread; its fusions too), and a
// replica-id all-reduced twice in an order its control edge fixes (on one
// device both become the id: no self-edge, no cycle).
TEST(GpuCompilerTest, TupleCopiesAsyncCallsOfOtherThreadsAndOrderedCollectivesCompile) {
  const std::vector<std::string> modules = {R"(
HloModule tuple_copy
ENTRY main {
  x = f32[8,4]{1,0} parameter(0)
  y = s32[3] parameter(1)
  t = (f32[8,4]{1,0}, s32[3]) tuple(x, y)
  ROOT c = (f32[8,4]{0,1}, s32[3]) copy(t)
})",
                                            R"(
HloModule async_call
called_computation {
  p0 = s32[8] parameter(0)
  p1 = s32[8] parameter(1)
  add = s32[8] add(p0, p1)
  mul = s32[8] multiply(p0, p1)
  ROOT result = (s32[8], s32[8]) tuple(add, mul)
}, execution_thread="thread_1"
ENTRY entry_computation {
  p0 = s32[8] parameter(0)
  p1 = s32[8] parameter(1)
  start = ((s32[8], s32[8]), (s32[8], s32[8]), u32[]) call-start(p0, p1), async_execution_thread="thread_1", to_apply=called_computation
  ROOT done = (s32[8], s32[8]) call-done(start)
}, execution_thread="thread_0")",
                                            R"(
HloModule ordered_all_reduces
sum {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}
ENTRY e {
  id = u32[] replica-id()
  start1 = u32[] all-reduce-start(id), to_apply=sum, channel_id=3
  done1 = u32[] all-reduce-done(start1)
  start2 = u32[] all-reduce-start(id), to_apply=sum, channel_id=4, control-predecessors={done1}
  done2 = u32[] all-reduce-done(start2)
  ROOT x = u32[] add(done1, done2)
})"};
  for (const std::string& text : modules) {
    std::unique_ptr<HloModule> module;
    auto program = Compile(text, &module);
    ASSERT_TRUE(program.ok()) << text << "\n" << program.status();
    // Each has a result (the last one a constant: the id is 0 on one device).
    EXPECT_FALSE(program->result_leaves.empty()) << text;
    for (const auto& kernel : program->kernels) {
      absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
      if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
        GTEST_SKIP() << "no ptxas: " << cubin.status().message();
      }
      EXPECT_TRUE(cubin.ok()) << cubin.status();
    }
  }
}

// A shared pass's refusal names CUDA too: an all-gather that needs two
// participants in a module of one device.
TEST(GpuCompilerTest, SharedPassesRefusalsNameCuda) {
  std::unique_ptr<HloModule> module;
  auto program = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT g = f32[8] all-gather(x), dimensions={0}
})",
                         &module);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented) << program.status();
  EXPECT_THAT(program.status().message(), HasSubstr("CUDA")) << program.status();
  EXPECT_THAT(program.status().message(), HasSubstr("all-gather")) << program.status();
}

}  // namespace
}  // namespace axle::gpu
