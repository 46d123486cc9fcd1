//===- gpu_while_unroller_test.cc - Unrolled loops through the GPU pipeline ===//
//
// Loops of elementwise rounds (threefry's) unrolled and then fused by the
// whole GPU preparation (PrepareGpuModule, no device): the fusion passes
// stay linear in the unrolled module's size, and the prepared module
// computes on the interpreter what the loop did. Before the fusion pass
// bounded its copies of shared producers (instruction_fusion.h), a 64-trip
// loop of four rounds took minutes here, as threefry_random did.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_while_unroller.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

// A loop of `trips` trips whose body runs four threefry rounds on (x, y):
// x += y; y = rotl(y, r) ^ x, the rotation amounts read from the state as
// threefry's are.
std::string ThreefryLoop(int trips) {
  std::string body;
  for (int round = 0; round < 4; ++round) {
    const std::string x = absl::StrCat("x", round);
    const std::string y = absl::StrCat("y", round);
    absl::StrAppend(&body, "  r", round, "s = u32[1] slice(rot), slice={[", round, ":", round + 1,
                    "]}\n  r", round, " = u32[] reshape(r", round, "s)\n  bl", round,
                    " = u32[1024] broadcast(r", round, "), dimensions={}\n  l", round,
                    " = u32[] subtract(c32, r", round, ")\n  br", round, " = u32[1024] broadcast(l",
                    round, "), dimensions={}\n  x", round + 1, " = u32[1024] add(", x, ", ", y,
                    ")\n  sl", round, " = u32[1024] shift-left(", y, ", bl", round, ")\n  sr",
                    round, " = u32[1024] shift-right-logical(", y, ", br", round, ")\n  o", round,
                    " = u32[1024] or(sl", round, ", sr", round, ")\n  y", round + 1,
                    " = u32[1024] xor(o", round, ", x", round + 1, ")\n");
  }
  return absl::StrCat(R"(
HloModule threefry_loop
cond {
  s = (s32[], u32[1024], u32[1024], u32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant()",
                      trips, R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], u32[1024], u32[1024], u32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x0 = u32[1024] get-tuple-element(s), index=1
  y0 = u32[1024] get-tuple-element(s), index=2
  rot = u32[4] get-tuple-element(s), index=3
  c32 = u32[] constant(32)
)",
                      body,
                      R"(  ROOT t = (s32[], u32[1024], u32[1024], u32[4]) tuple(i1, x4, y4, rot)
}
ENTRY e {
  zero = s32[] constant(0)
  x = u32[1024] parameter(0)
  y = u32[1024] parameter(1)
  rot = u32[4] constant({13, 15, 26, 6})
  t = (s32[], u32[1024], u32[1024], u32[4]) tuple(zero, x, y, rot)
  w = (s32[], u32[1024], u32[1024], u32[4]) while(t), condition=cond, body=body
  a = u32[1024] get-tuple-element(w), index=1
  b = u32[1024] get-tuple-element(w), index=2
  ROOT r = (u32[1024], u32[1024]) tuple(a, b)
}
)");
}

Literal Counting(int64_t n, uint32_t scale) {
  Literal literal(ShapeUtil::MakeShape(U32, {n}));
  for (int64_t i = 0; i < n; ++i) {
    literal.data<uint32_t>()[i] = static_cast<uint32_t>(i) * scale + 0x9e3779b9u;
  }
  return literal;
}

int64_t CountOpcode(const HloModule& module, HloOpcode opcode) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      count += instruction->opcode() == opcode ? 1 : 0;
    }
  }
  return count;
}

// Instructions inside fusions, all fused computations together.
int64_t FusedInstructions(const HloModule& module) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) count += computation->instruction_count();
  }
  return count;
}

TEST(GpuWhileUnrollerPipelineTest, UnrolledThreefryRoundsFuseInLinearSize) {
  constexpr int kTrips = 64;  // XLA's limit: 64 x 4 rounds unrolled
  auto original = ParseAndReturnUnverifiedModule(ThreefryLoop(kTrips));
  ASSERT_TRUE(original.ok()) << original.status();
  const HloInstruction* loop = nullptr;
  for (const HloInstruction* instruction : (*original)->entry_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kWhile) loop = instruction;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(UnrollableTripCount(*loop, WhileUnrollLimits()), kTrips);
  const int64_t unrolled_size = kTrips * loop->while_body()->instruction_count();

  std::unique_ptr<HloModule> prepared = (*original)->Clone("prepared");
  GpuPrepareOptions options;
  options.unroll_loops = true;
  absl::Status status = PrepareGpuModule(prepared.get(), options);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(CountOpcode(*prepared, HloOpcode::kWhile), 0) << prepared->ToString();
  // The kernels hold at most a few copies of each unrolled instruction.
  const int64_t fused = FusedInstructions(*prepared);
  EXPECT_GT(fused, 0);
  EXPECT_LE(fused, 8 * unrolled_size) << "fused " << fused << " of " << unrolled_size;
  std::printf("  %d trips of 4 rounds: %lld unrolled instructions, %lld fusions holding %lld\n",
              kTrips, static_cast<long long>(unrolled_size),
              static_cast<long long>(CountOpcode(*prepared, HloOpcode::kFusion)),
              static_cast<long long>(fused));

  const Literal x = Counting(1024, 2654435761u);
  const Literal y = Counting(1024, 40503u);
  HloEvaluator before;
  auto expected = before.Evaluate(**original, {&x, &y});
  ASSERT_TRUE(expected.ok()) << expected.status();
  HloEvaluator after;
  auto actual = after.Evaluate(*prepared, {&x, &y});
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::Status equal = LiteralsEqual(*expected, *actual);
  EXPECT_TRUE(equal.ok()) << "the unrolled, fused rounds differ: " << equal;
}

// threefry_random unrolled: it compiles (before, minutes in fusion), no
// loop is left, and the kernels are printed.
TEST(GpuWhileUnrollerPipelineTest, ThreefryRandomUnrolls) {
  const std::string path = absl::StrCat(AXLE_GPU_JAX_DIR, "/threefry_random.hlo");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::stringstream text;
  text << file.rdbuf();
  auto module = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(module.ok()) << module.status();
  GpuPrepareOptions options;
  options.unroll_loops = true;
  absl::Status status = PrepareGpuModule(module->get(), options);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(CountOpcode(**module, HloOpcode::kWhile), 0);
  std::printf("  threefry_random unrolled: %lld fusions holding %lld instructions\n",
              static_cast<long long>(CountOpcode(**module, HloOpcode::kFusion)),
              static_cast<long long>(FusedInstructions(**module)));
}

}  // namespace
}  // namespace axle::gpu
