//===- ptx_compiler_test.cc - Loop fusions as PTX, checked by ptxas --------===//
//
// Runs everywhere (no GPU needed): each fusion's PTX has the kernel entry
// and the instructions its ops need, calls into libdevice are resolved in
// it, and the toolkit's ptxas accepts it for sm_90 (skipped, with a
// message, where ptxas is missing). Unsupported types are Unimplemented
// errors naming the instruction.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/ptx_compiler.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// The PTX of the entry computation of `text` as a loop fusion.
absl::StatusOr<PtxKernel> Compile(const std::string& text, const std::string& name,
                                  const PtxOptions& options = PtxOptions()) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  return CompileLoopFusionToPtx(*(*module)->entry_computation(), name, options);
}

// ptxas -arch=sm_90 accepts `ptx` (skips when the toolkit's ptxas is absent).
void ExpectPtxasAccepts(const PtxKernel& kernel) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(kernel.ptx, "sm_90");
  ASSERT_TRUE(cubin.ok()) << cubin.status() << "\n" << kernel.ptx;
  ASSERT_GE(cubin->size(), 4u);
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(PtxCompilerTest, ElementwiseAdd) {
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  ROOT r = f32[1000] add(x, y)
})",
                        "add_kernel");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->name, "add_kernel");
  EXPECT_EQ(kernel->output_elements, 1000);
  EXPECT_EQ(kernel->block, 256);
  // Four consecutive elements a thread (16-byte loads and stores).
  EXPECT_EQ(kernel->grid, 1);
  EXPECT_EQ(kernel->num_parameters, 2);
  EXPECT_EQ(kernel->num_outputs, 1);
  const std::string& ptx = kernel->ptx;
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry add_kernel("));
  EXPECT_THAT(ptx, HasSubstr(".maxntid 256"));
  EXPECT_THAT(ptx, HasSubstr("%tid.x"));
  EXPECT_THAT(ptx, HasSubstr("%ctaid.x"));
  EXPECT_THAT(ptx, ContainsRegex("add(\\.rn)?\\.f32"));
  EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.f32"));
  EXPECT_THAT(ptx, HasSubstr("st.global.v4.f32"));
  // Bounds-checked: threads past element 996 (thread 249) skip them.
  EXPECT_THAT(ptx, HasSubstr("249"));
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, TranscendentalsComeFromLibdevice) {
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = f64[256] parameter(0)
  y = f32[256] parameter(1)
  e = f64[256] exponential(x)
  s = f32[256] sine(y)
  t = f32[256] tanh(y)
  c = f32[256] convert(e)
  a = f32[256] add(s, t)
  ROOT r = f32[256] add(a, c)
})",
                        "math_kernel");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // The emitter asks for libdevice's functions (f32 tanh is inline IR)...
  EXPECT_THAT(kernel->unoptimized_ir, HasSubstr("@__nv_exp("));
  EXPECT_THAT(kernel->unoptimized_ir, HasSubstr("@__nv_sinf("));
  EXPECT_THAT(kernel->unoptimized_ir, Not(HasSubstr("__nv_tanhf")));
  // ...and the PTX has them linked in and inlined: no calls left.
  EXPECT_THAT(kernel->ptx, Not(HasSubstr("__nv_")));
  EXPECT_THAT(kernel->ptx, Not(HasSubstr("call")));
  EXPECT_THAT(kernel->ptx, HasSubstr("fma.rn.f64"));
  EXPECT_THAT(kernel->ptx, HasSubstr("fma.rn.f32"));
  EXPECT_THAT(kernel->ptx, HasSubstr("cvt.rn.f32.f64"));
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, BroadcastAndMultipleOutputs) {
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = f32[64,48] parameter(0)
  b = f32[48] parameter(1)
  bb = f32[64,48] broadcast(b), dimensions={1}
  sum = f32[64,48] add(x, bb)
  zero = f32[] constant(0)
  z = f32[64,48] broadcast(zero), dimensions={}
  relu = f32[64,48] maximum(sum, z)
  ROOT t = (f32[64,48], f32[64,48]) tuple(sum, relu)
})",
                        "bias_relu");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->num_outputs, 2);
  EXPECT_EQ(kernel->output_elements, 64 * 48);
  EXPECT_EQ(kernel->grid, 3);
  EXPECT_THAT(kernel->ptx, HasSubstr(".entry bias_relu("));
  // maximum propagates NaN (XLA's semantics): a compare, a select and a
  // NaN test rather than max.f32.
  EXPECT_THAT(kernel->ptx, HasSubstr("setp.nan.f32"));
  // Two (vector) stores per thread, one per output.
  EXPECT_THAT(kernel->ptx,
              ContainsRegex("st\\.global\\.v4\\.f32[^\n]*\n(.*\n)*.*st\\.global\\.v4\\.f32"));
  ExpectPtxasAccepts(*kernel);
}

// Rows of 1000 f32: a warp per row (8 rows a block), 16-byte loads (the
// last of a thread's 8 chunks partly past the row), shuffles and no shared
// memory; rows of 8192: a block of 256 per row, warps combined through
// shared memory.
TEST(PtxCompilerTest, RowReductionUsesAWarpOrABlockPerRow) {
  const std::string text = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,COLUMNS] parameter(0)
  e = f32[16,COLUMNS] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
})";
  auto kernel = Compile(absl::StrReplaceAll(text, {{"COLUMNS", "1000"}}), "row_sum");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->output_elements, 16);
  EXPECT_EQ(kernel->grid, 2);
  EXPECT_EQ(kernel->block, 256);
  const std::string& ptx = kernel->ptx;
  EXPECT_THAT(ptx, HasSubstr(".entry row_sum("));
  EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.f32"));
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.down.b32"));
  EXPECT_THAT(ptx, Not(HasSubstr("bar.sync")));
  ExpectPtxasAccepts(*kernel);
  kernel = Compile(absl::StrReplaceAll(text, {{"COLUMNS", "8192"}}), "long_row_sum");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 16);
  EXPECT_EQ(kernel->block, 256);
  EXPECT_THAT(kernel->ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(kernel->ptx, HasSubstr(".shared"));
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, RowReductionsOfOtherTypesAndShapes) {
  // f64 (shuffled in two halves, 16-byte loads of 2), s32 maximum over the
  // two trailing dimensions of a 3-d input.
  auto kernel = Compile(R"(
HloModule m
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  x = f64[8,100] parameter(0)
  zero = f64[] constant(0)
  ROOT r = f64[8] reduce(x, zero), dimensions={1}, to_apply=add
})",
                        "row_sum_f64");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->block, 256);
  EXPECT_EQ(kernel->grid, 1);
  EXPECT_THAT(kernel->ptx, HasSubstr("ld.global.nc.v2.f64"));
  ExpectPtxasAccepts(*kernel);
  kernel = Compile(R"(
HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[3,20,30] parameter(0)
  low = s32[] constant(-2147483648)
  ROOT r = s32[3] reduce(x, low), dimensions={2,1}, to_apply=max
})",
                   "row_max_s32");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 1);
  EXPECT_EQ(kernel->block, 256);
  EXPECT_THAT(kernel->ptx, HasSubstr("max.s32"));
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, ARowsOwnReductionIsComputedOnceForItsRow) {
  // softmax's denominator: the row's max is folded once, not once per
  // column, and the row is loaded once for both (its values kept).
  auto kernel = Compile(R"(
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
  x = f32[16,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[16,1000] broadcast(m), dimensions={0}
  s = f32[16,1000] subtract(x, mb)
  e = f32[16,1000] exponential(s)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
})",
                        "softmax_denominator");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 2);
  const std::string& ptx = kernel->ptx;
  int loads = 0;
  for (size_t at = ptx.find("ld.global"); at != std::string::npos;
       at = ptx.find("ld.global", at + 1)) {
    ++loads;
  }
  EXPECT_EQ(loads, 8) << ptx;
  // Two folds across the warp (max, then sum), each value shared by lane 0.
  int shuffles = 0;
  for (size_t at = ptx.find("shfl.sync.idx"); at != std::string::npos;
       at = ptx.find("shfl.sync.idx", at + 1)) {
    ++shuffles;
  }
  EXPECT_EQ(shuffles, 2) << ptx;
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, ShortRowsAndFewRowColumnsFoldPerThread) {
  for (const char* reduce : {"f32[64] reduce(x, zero), dimensions={1}, to_apply=add",
                             "f32[64] reduce(t, zero), dimensions={0}, to_apply=add"}) {
    auto kernel = Compile(absl::StrCat(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,16] parameter(0)
  t = f32[4,64] parameter(1)
  zero = f32[] constant(0)
  ROOT r = )",
                                       reduce, "\n}"),
                          "per_thread");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ(kernel->grid, 1) << reduce;
    EXPECT_THAT(kernel->ptx, Not(HasSubstr("shfl"))) << reduce;
    EXPECT_THAT(kernel->ptx, Not(HasSubstr("bar.sync"))) << reduce;
    ExpectPtxasAccepts(*kernel);
  }
}

// A reduce of the leading dimensions: a block per 8 f32 output columns (a
// 32-byte sector of a row), 128 threads a column striding down the rows,
// partial results combined by shuffles within warps and shared memory
// across them.
TEST(PtxCompilerTest, ColumnReductionUsesABlockPerTileOfColumns) {
  auto kernel = Compile(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4096,1000] parameter(0)
  e = f32[4096,1000] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[1000] reduce(e, zero), dimensions={0}, to_apply=add
})",
                        "column_sum");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->output_elements, 1000);
  EXPECT_EQ(kernel->grid, 125);
  EXPECT_EQ(kernel->block, 1024);
  const std::string& ptx = kernel->ptx;
  EXPECT_THAT(ptx, HasSubstr(".entry column_sum("));
  EXPECT_THAT(ptx, HasSubstr(".maxntid 1024"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(ptx, HasSubstr(".shared"));
  // Lanes 8 and 16 apart hold the same column.
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.down.b32"));
  // 8 rows' loads a step (32 bytes of the column), and 7 more (clamped
  // into the input) for the rest: the loop leaves fewer than 8 rows.
  int64_t loads = 0;
  for (size_t at = ptx.find("ld.global"); at != std::string::npos;
       at = ptx.find("ld.global", at + 1)) {
    ++loads;
  }
  EXPECT_EQ(loads, 15) << ptx;
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, ColumnReductionsOfOtherTypesShapesAndLayouts) {
  struct Case {
    const char* text;
    int64_t grid;
    int64_t block;
  };
  const Case cases[] = {
      // f64 (tiles of 4 columns), two reduced dimensions, columns not a
      // multiple of the tile.
      {R"(
HloModule m
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  x = f64[100,3,50] parameter(0)
  zero = f64[] constant(0)
  ROOT r = f64[50] reduce(x, zero), dimensions={1,0}, to_apply=add
})",
       13, 1024},
      // s32 max over 10 rows of a 2-d output (tiles of 8 columns, 12 rows
      // of threads: whole warps).
      {R"(
HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[10,7,40] parameter(0)
  low = s32[] constant(-2147483648)
  ROOT r = s32[7,40] reduce(x, low), dimensions={0}, to_apply=max
})",
       35, 96},
      // bf16 (tiles of 16 columns), an input and output in other layouts.
      {R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[50,4,8]{0,2,1} parameter(0)
  zero = bf16[] constant(0)
  ROOT r = bf16[4,8]{0,1} reduce(x, zero), dimensions={0}, to_apply=add
})",
       2, 800},
  };
  for (const Case& c : cases) {
    auto kernel = Compile(c.text, "column");
    ASSERT_TRUE(kernel.ok()) << kernel.status() << c.text;
    EXPECT_EQ(kernel->grid, c.grid) << c.text;
    EXPECT_EQ(kernel->block, c.block) << c.text;
    EXPECT_THAT(kernel->ptx, HasSubstr("bar.sync")) << c.text;
    ExpectPtxasAccepts(*kernel);
  }
}

TEST(PtxCompilerTest, ParametersAndOutputsInTheirLayouts) {
  // XLA:CPU's transpose_copy fusions: the threads walk the output in its
  // layout; parameters are read at their layout's offsets.
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = f32[64,32]{0,1} parameter(0)
  y = f32[64,32]{1,0} parameter(1)
  t = f32[32,64]{1,0} transpose(x), dimensions={1,0}
  u = f32[32,64]{1,0} transpose(y), dimensions={1,0}
  s = f32[32,64]{0,1} add(t, u)
  ROOT r = (f32[32,64]{0,1}, f32[32,64]{1,0}) tuple(s, t)
})",
                        "layouts");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 8);
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, IntegersAndPredicates) {
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = s32[7,9] parameter(0)
  y = s32[7,9] parameter(1)
  lt = pred[7,9] compare(x, y), direction=LT
  d = s32[7,9] divide(x, y)
  ROOT s = s32[7,9] select(lt, d, y)
})",
                        "int_kernel");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_THAT(kernel->ptx, HasSubstr("setp.lt.s32"));
  ExpectPtxasAccepts(*kernel);
}

TEST(PtxCompilerTest, EightAndFourBitFloatsRoundInline) {
  // Converts to and from each 8- and 4-bit float and arithmetic in them:
  // decoded by a table, rounded by integer code (llvm_ir/narrow_float_ir.h),
  // no call and no trap.
  for (const char* type : {"f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3fnuz", "f8e4m3b11fnuz",
                           "f8e5m2fnuz", "f8e8m0fnu", "f4e2m1fn"}) {
    SCOPED_TRACE(type);
    auto kernel = Compile(absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  a = T[64] convert(x)
  b = T[64] convert(y)
  s = T[64] add(a, b)
  c = f32[64] convert(s)
  ROOT r = (f32[64], T[64]) tuple(c, s)
})",
                                              {{"T[", absl::StrCat(type, "[")}}),
                          "narrow");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_THAT(kernel->ptx, ::testing::Not(HasSubstr("trap")));
    EXPECT_THAT(kernel->ptx, ::testing::Not(HasSubstr("call.uni")));
    ExpectPtxasAccepts(*kernel);
  }
}

TEST(PtxCompilerTest, UnsupportedTypesNameTheInstruction) {
  // Complex divide compiles (llvm_ir/complex_math.h); layout bitcasts do
  // not.
  auto complex = Compile(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  y = c64[4] parameter(1)
  ROOT d = c64[4] divide(x, y)
})",
                         "k");
  EXPECT_TRUE(complex.ok()) << complex.status();
  auto layout = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4,5]{0,1} parameter(0)
  ROOT b = s32[5,4]{1,0} bitcast(x)
})",
                        "k");
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(layout.status().message(), HasSubstr("bitcast b between layouts"));
}

TEST(PtxCompilerTest, BadOptionsAreErrors) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})";
  PtxOptions arch;
  arch.arch = "compute_90";
  EXPECT_EQ(Compile(text, "k", arch).status().code(), absl::StatusCode::kInvalidArgument);
  PtxOptions block;
  block.block_size = 100;
  EXPECT_EQ(Compile(text, "k", block).status().code(), absl::StatusCode::kInvalidArgument);
  PtxOptions libdevice;
  libdevice.libdevice_path = "/nonexistent/libdevice.10.bc";
  auto missing = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] sine(x)
})",
                         "k", libdevice);
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("libdevice"));
}

TEST(PtxCompilerTest, DumpsGoToAxleDumpTo) {
  const std::string dir = ::testing::TempDir() + "/axle_ptx_dump";
  setenv("AXLE_DUMP_TO", dir.c_str(), 1);
  auto kernel = Compile(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] sine(x)
})",
                        "dumped_kernel");
  unsetenv("AXLE_DUMP_TO");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto read = [&](const std::string& extension) {
    std::ifstream file(dir + "/dumped_kernel" + extension);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  EXPECT_THAT(read(".ll"), HasSubstr("@__nv_sinf("));
  EXPECT_THAT(read(".opt.ll"), HasSubstr("define void @dumped_kernel("));
  EXPECT_EQ(read(".ptx"), kernel->ptx);
}

TEST(PtxasTest, RejectedPtxIsAnErrorWithPtxasMessages) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx("this is not PTX", "sm_90");
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("ptxas"));
}

}  // namespace
}  // namespace axle::gpu
