//===- transpose_test.cc - Tiled transposes on cpu --------------------------===//
//
// Loop kernels with a transpose that moves its operand's minor dimension
// walk the output in tiles through a tile buffer (loop_kernel_emitter.cc).
// They agree exactly with the interpreter: sizes that are not multiples of
// the tile (the last tile overlaps), ranges of rows shorter than a tile
// (the plain loop nest), rank 3 with the minor dimension moved to each
// place, fused producers and consumers, several outputs, narrow and
// integer types.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

void ExpectExact(const std::string& text) {
  SCOPED_TRACE(text);
  testing::ExpectCpuAgrees(text, cpu::testing::MakeTestArguments(text), ErrorSpec(0, 0));
}

std::string Transpose2d(const std::string& type, int64_t rows, int64_t columns) {
  const std::string in = absl::StrCat(type, "[", rows, ",", columns, "]");
  const std::string out = absl::StrCat(type, "[", columns, ",", rows, "]");
  return absl::StrCat("HloModule m\nENTRY e {\n  x = ", in, " parameter(0)\n  t = ", out,
                      " transpose(x), dimensions={1,0}\n  ROOT n = ", out, " negate(t)\n}\n");
}

TEST(TiledTranspose, TwoDimensionsOfEverySize) {
  // Tiles of 32: exact multiples, remainders, a single tile, rows shorter
  // than a tile per thread (40 rows on 2 threads), rows long enough.
  for (auto [rows, columns] : std::vector<std::pair<int64_t, int64_t>>{
           {32, 32}, {33, 70}, {64, 40}, {100, 129}, {257, 31}, {31, 257}, {512, 512}}) {
    ExpectExact(Transpose2d("f32", rows, columns));
  }
  ExpectExact(Transpose2d("s8", 70, 45));
  ExpectExact(Transpose2d("bf16", 45, 70));
  ExpectExact(Transpose2d("f64", 48, 96));
}

TEST(TiledTranspose, RankThreeWithTheMinorDimensionAnywhere) {
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = f32[3,40,50] parameter(0)
  ROOT t = f32[3,50,40] transpose(x), dimensions={0,2,1}
}
)");
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = f32[40,3,50] parameter(0)
  ROOT t = f32[50,3,40] transpose(x), dimensions={2,1,0}
}
)");
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = f32[40,35,3] parameter(0)
  ROOT t = f32[3,40,35] transpose(x), dimensions={2,0,1}
}
)");
}

TEST(TiledTranspose, FusedProducersConsumersAndSeveralOutputs) {
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = f32[70,45] parameter(0)
  y = f32[70,45] parameter(1)
  z = f32[45,70] parameter(2)
  s = f32[70,45] multiply(x, y)
  t = f32[45,70] transpose(s), dimensions={1,0}
  a = f32[45,70] add(t, z)
  b = f32[45,70] maximum(t, z)
  ROOT r = (f32[45,70], f32[45,70]) tuple(a, b)
}
)");
}

TEST(TiledTranspose, F32TilesAreTransposedInRegisters) {
  auto module = ParseAndReturnUnverifiedModule(Transpose2d("f32", 64, 96));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  cpu::CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = cpu::CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // (The plain nest for short ranges of rows reads with gathers.)
  EXPECT_TRUE(absl::StrContains(after, "shufflevector <16 x float>")) << after;
}

}  // namespace
}  // namespace axle
