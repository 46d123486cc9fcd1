//===- row_fusion_test.cc - Row reductions with their epilogue -------------===//
//
// Without a device: which computations are row fusions (row_fusion.h), what
// the merge pass fuses (softmax, layer norm and the JAX programs' one
// kernel each), the kernels' PTX (a warp per short row, vector loads and
// stores, each row read once, blocks per long row, a loop for very long
// rows; ptxas accepts each) and that the device tests' modules compile for
// CUDA and run on the interpreter. On a GPU (`RowFusionDeviceTest.*`,
// skipped with a message without one): each module against the
// interpreter, with row counts and lengths that leave partial blocks and
// chunks, every schedule, bf16, several outputs of both shapes.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/row_fusion.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kReducers[] = R"(
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
)";

// Softmax over rows of f32[$R,$C].
std::string Softmax(int64_t rows, int64_t columns) {
  return absl::StrReplaceAll(absl::StrCat("HloModule softmax\n", kReducers, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[$R] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[$R,$C] broadcast(m), dimensions={0}
  d = f32[$R,$C] subtract(x, mb)
  e = f32[$R,$C] exponential(d)
  s = f32[$R] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[$R,$C] broadcast(s), dimensions={0}
  ROOT y = f32[$R,$C] divide(e, sb)
})"),
                             {{"$R", absl::StrCat(rows)}, {"$C", absl::StrCat(columns)}});
}

// Layer norm over rows of f32[$R,$C] as JAX writes it (the row results
// reshaped to [R,1] and back), with a scale and an offset per column.
std::string LayerNorm(int64_t rows, int64_t columns) {
  return absl::StrReplaceAll(absl::StrCat("HloModule layer_norm\n", kReducers, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  g = f32[$C] parameter(1)
  b = f32[$C] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant($C)
  nb = f32[$R,1] broadcast(n), dimensions={}
  sum = f32[$R] reduce(x, zero), dimensions={1}, to_apply=add
  sum1 = f32[$R,1] reshape(sum)
  mean1 = f32[$R,1] divide(sum1, nb)
  mean = f32[$R] reshape(mean1)
  meanb = f32[$R,$C] broadcast(mean), dimensions={0}
  centered = f32[$R,$C] subtract(x, meanb)
  sq = f32[$R,$C] multiply(centered, centered)
  var = f32[$R] reduce(sq, zero), dimensions={1}, to_apply=add
  var1 = f32[$R,1] reshape(var)
  varn = f32[$R,1] divide(var1, nb)
  eps = f32[] constant(1e-5)
  epsb = f32[$R,1] broadcast(eps), dimensions={}
  ve = f32[$R,1] add(varn, epsb)
  r1 = f32[$R,1] rsqrt(ve)
  r = f32[$R] reshape(r1)
  rb = f32[$R,$C] broadcast(r), dimensions={0}
  norm = f32[$R,$C] multiply(centered, rb)
  gb = f32[$R,$C] broadcast(g), dimensions={1}
  scaled = f32[$R,$C] multiply(norm, gb)
  bb = f32[$R,$C] broadcast(b), dimensions={1}
  ROOT out = f32[$R,$C] add(scaled, bb)
})"),
                             {{"$R", absl::StrCat(rows)}, {"$C", absl::StrCat(columns)}});
}

// Row sums f32[$R,$C] -> f32[$R] and the rows divided by them: outputs of
// both shapes.
std::string SumAndNormalized(int64_t rows, int64_t columns) {
  return absl::StrReplaceAll(absl::StrCat("HloModule sum_and_normalized\n", kReducers, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  zero = f32[] constant(0)
  a = f32[$R,$C] abs(x)
  s = f32[$R] reduce(a, zero), dimensions={1}, to_apply=add
  sb = f32[$R,$C] broadcast(s), dimensions={0}
  y = f32[$R,$C] divide(x, sb)
  ROOT t = (f32[$R], f32[$R,$C]) tuple(s, y)
})"),
                             {{"$R", absl::StrCat(rows)}, {"$C", absl::StrCat(columns)}});
}

constexpr char kSoftmaxBf16[] = R"(
HloModule softmax_bf16
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
  p = bf16[24,768] parameter(0)
  x = f32[24,768] convert(p)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[24] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[24,768] broadcast(m), dimensions={0}
  d = f32[24,768] subtract(x, mb)
  e = f32[24,768] exponential(d)
  s = f32[24] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[24,768] broadcast(s), dimensions={0}
  y = f32[24,768] divide(e, sb)
  ROOT o = bf16[24,768] convert(y)
})";

// Three leading dimensions kept, two reduced (rows of 6 * 40), s32 max
// and the row's elements minus it.
constexpr char kIntegerRows[] = R"(
HloModule integer_rows
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[2,3,5,6,40] parameter(0)
  low = s32[] constant(-2147483648)
  m = s32[2,3,5] reduce(x, low), dimensions={3,4}, to_apply=max
  mb = s32[2,3,5,6,40] broadcast(m), dimensions={0,1,2}
  ROOT d = s32[2,3,5,6,40] subtract(x, mb)
})";

// f64 rows summed, the rows not a multiple of the vector width.
constexpr char kF64Rows[] = R"(
HloModule f64_rows
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  x = f64[9,333] parameter(0)
  zero = f64[] constant(0)
  s = f64[9] reduce(x, zero), dimensions={1}, to_apply=add
  sb = f64[9,333] broadcast(s), dimensions={0}
  ROOT y = f64[9,333] subtract(x, sb)
})";

// Elementwise kernels with vectors (f32[4,1000]) and without (f32[999]).
constexpr char kScaleAdd[] = R"(
HloModule scale_add
ENTRY e {
  x = f32[4,1000] parameter(0)
  y = f32[999] parameter(1)
  two = f32[] constant(2)
  one = f32[] constant(1)
  b2 = f32[4,1000] broadcast(two), dimensions={}
  b1 = f32[4,1000] broadcast(one), dimensions={}
  m = f32[4,1000] multiply(x, b2)
  a = f32[4,1000] add(m, b1)
  n = f32[999] negate(y)
  ROOT t = (f32[4,1000], f32[999]) tuple(a, n)
})";

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

// The fusions of the prepared entry computation.
std::vector<const HloFusionInstruction*> EntryFusions(const HloModule& module) {
  std::vector<const HloFusionInstruction*> fusions;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (const auto* fusion = dyn_cast<HloFusionInstruction>(instruction)) {
      fusions.push_back(fusion);
    }
  }
  return fusions;
}

absl::StatusOr<PtxKernel> CompileEntry(const std::string& text, const std::string& name) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  return CompileLoopFusionToPtx(*(*module)->entry_computation(), name);
}

void ExpectPtxasAccepts(const PtxKernel& kernel) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(kernel.ptx, "sm_90");
  EXPECT_TRUE(cubin.ok()) << cubin.status() << "\n" << kernel.ptx;
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(RowFusionAnalysisTest, SoftmaxAndLayerNormAreRowFusions) {
  for (const std::string& text : {Softmax(8, 100), LayerNorm(8, 100)}) {
    auto module = Parse(text);
    ASSERT_NE(module, nullptr);
    std::optional<RowFusionAnalysis> analysis = AnalyzeRowFusion(*module->entry_computation());
    ASSERT_TRUE(analysis.has_value()) << text;
    EXPECT_EQ(analysis->reductions.size(), 2u);
    EXPECT_EQ(analysis->geometry.rows, 8);
    EXPECT_EQ(analysis->geometry.columns, 100);
    EXPECT_TRUE(analysis->outputs_ok);
    EXPECT_TRUE(analysis->root_dependent);
  }
  auto module = Parse(kIntegerRows);
  ASSERT_NE(module, nullptr);
  std::optional<RowFusionAnalysis> analysis = AnalyzeRowFusion(*module->entry_computation());
  ASSERT_TRUE(analysis.has_value());
  EXPECT_EQ(analysis->geometry.rows, 30);
  EXPECT_EQ(analysis->geometry.columns, 240);
}

TEST(RowFusionAnalysisTest, ReadingAnotherRowOrOtherReductionsIsNot) {
  const std::string reads = absl::StrCat("HloModule m\n", kReducers, R"(
ENTRY e {
  x = f32[8,64] parameter(0)
  t = f32[64,8] parameter(1)
  zero = f32[] constant(0)
  s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  READ
})");
  const std::vector<std::string> not_row_fusions = {
      // Another row's result (reversed rows).
      "r = f32[8] reverse(s), dimensions={0}\n"
      "  rb = f32[8,64] broadcast(r), dimensions={0}\n"
      "  ROOT y = f32[8,64] add(x, rb)",
      // The result spread along the wrong dimension.
      "sb = f32[8,8] broadcast(s), dimensions={1}\n"
      "  ROOT y = f32[8,8] add(sb, sb)",
      // A column reduction beside it.
      "c = f32[8] reduce(t, zero), dimensions={0}, to_apply=add\n"
      "  ROOT y = f32[8] add(s, c)",
      // A slice of the rows' results.
      "sl = f32[4] slice(s), slice={[0:4]}\n"
      "  ROOT y = f32[4] negate(sl)",
  };
  for (const std::string& read : not_row_fusions) {
    auto module = Parse(absl::StrReplaceAll(reads, {{"READ", read}}));
    ASSERT_NE(module, nullptr);
    EXPECT_FALSE(AnalyzeRowFusion(*module->entry_computation()).has_value()) << read;
  }
  // A degenerate dimension added by a broadcast keeps the rows.
  auto degenerate =
      Parse(absl::StrReplaceAll(reads, {{"READ",
                                         "s1 = f32[8,1] broadcast(s), dimensions={0}\n"
                                         "  s8 = f32[8] reshape(s1)\n"
                                         "  sb = f32[8,64] broadcast(s8), dimensions={0}\n"
                                         "  ROOT y = f32[8,64] add(x, sb)"}}));
  ASSERT_NE(degenerate, nullptr);
  EXPECT_TRUE(AnalyzeRowFusion(*degenerate->entry_computation()).has_value());
  // Outputs of other shapes: a row fusion the kernel does not write.
  auto module = Parse(absl::StrReplaceAll(reads, {{"READ",
                                                   "sb = f32[8,64] broadcast(s), dimensions={0}\n"
                                                   "  ROOT y = f32[512] reshape(sb)"}}));
  ASSERT_NE(module, nullptr);
  std::optional<RowFusionAnalysis> analysis = AnalyzeRowFusion(*module->entry_computation());
  ASSERT_TRUE(analysis.has_value());
  EXPECT_FALSE(analysis->outputs_ok);
  // Short rows (fewer than a warp) are left to a thread per row.
  module = Parse(absl::StrCat("HloModule m\n", kReducers, R"(
ENTRY e {
  x = f32[64,16] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
})"));
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(AnalyzeRowFusion(*module->entry_computation()).has_value());
}

// The pipeline makes softmax and layer norm one kernel each, and a module
// with both (reading one x) one kernel with two outputs.
TEST(GpuRowFusionMergerTest, SoftmaxAndLayerNormAreOneKernelEach) {
  for (const std::string& text : {Softmax(64, 1024), LayerNorm(64, 1024)}) {
    auto module = Parse(text);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module.get());
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(program->kernels.size(), 1u) << module->ToString();
    std::vector<const HloFusionInstruction*> fusions = EntryFusions(*module);
    ASSERT_EQ(fusions.size(), 1u) << module->ToString();
    std::optional<RowFusionAnalysis> analysis =
        AnalyzeRowFusion(*fusions[0]->fused_instructions_computation());
    ASSERT_TRUE(analysis.has_value());
    EXPECT_EQ(analysis->reductions.size(), 2u);
  }
}

TEST(GpuRowFusionMergerTest, AProducerWithOtherReadersStaysUnlessTheConsumerReadsItsInputs) {
  // The row sum is a result too: the kernel that divides by it reads x
  // anyway, so it computes the sum again and the sum's kernel stays for the
  // result. The maximum of y's rows reads only y: its kernel keeps reading
  // the sum (y's kernel does not read x).
  auto module = Parse(absl::StrCat("HloModule m\n", kReducers, R"(
ENTRY e {
  x = f32[64,256] parameter(0)
  y = f32[64,256] parameter(1)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  a = f32[64,256] abs(x)
  s = f32[64] reduce(a, zero), dimensions={1}, to_apply=add
  sb = f32[64,256] broadcast(s), dimensions={0}
  q = f32[64,256] divide(x, sb)
  ym = f32[64] reduce(y, ninf), dimensions={1}, to_apply=max
  ys = f32[64] add(ym, s)
  ROOT t = (f32[64], f32[64,256], f32[64]) tuple(s, q, ys)
})"));
  ASSERT_NE(module, nullptr);
  absl::Status prepared = PrepareGpuModule(module.get());
  ASSERT_TRUE(prepared.ok()) << prepared;
  int reading_x = 0;
  for (const HloFusionInstruction* fusion : EntryFusions(*module)) {
    const bool reads_x = std::find(fusion->operands().begin(), fusion->operands().end(),
                                   module->entry_computation()->parameter_instruction(0)) !=
                         fusion->operands().end();
    const bool reads_y = std::find(fusion->operands().begin(), fusion->operands().end(),
                                   module->entry_computation()->parameter_instruction(1)) !=
                         fusion->operands().end();
    EXPECT_FALSE(reads_x && reads_y) << module->ToString();
    reading_x += reads_x ? 1 : 0;
  }
  EXPECT_EQ(reading_x, 2) << module->ToString();
}

// The JAX programs' softmax and layer norm: one kernel each.
TEST(GpuRowFusionMergerTest, JaxSoftmaxAndLayerNormAreOneKernel) {
  int examined = 0;
  for (const char* name :
       {"perf_softmax_4096", "perf_layernorm_8192x1024", "softmax_layernorm_bf16"}) {
    std::ifstream file(absl::StrCat(AXLE_GPU_JAX_DIR, "/", name, ".hlo"));
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    auto module = Parse(text.str());
    ASSERT_NE(module, nullptr);
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module.get());
    ASSERT_TRUE(program.ok()) << name << ": " << program.status();
    EXPECT_EQ(program->kernels.size(), 1u) << name << "\n" << module->ToString();
    for (const std::shared_ptr<const PtxKernel>& kernel : program->kernels) {
      EXPECT_THAT(kernel->ptx, HasSubstr("ld.global.nc.v4")) << name;
      ExpectPtxasAccepts(*kernel);
    }
    ++examined;
  }
  if (examined == 0) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
}

// f32 rows of 1024: a warp per row (8 rows a block), 16-byte loads, each
// row loaded once for both reductions and the divide (kept in registers),
// 16-byte stores, no shared memory or barrier.
TEST(RowFusionPtxTest, SoftmaxIsOneKernelReadingEachRowOnce) {
  absl::StatusOr<PtxKernel> kernel = CompileEntry(Softmax(100, 1024), "softmax");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->block, 256);
  EXPECT_EQ(kernel->grid, 13);
  const std::string& ptx = kernel->ptx;
  EXPECT_EQ(Count(ptx, "ld.global.nc.v4.f32"), 8) << ptx;
  EXPECT_EQ(Count(ptx, "ld.global"), 8) << ptx;
  EXPECT_EQ(Count(ptx, "st.global.v4.f32"), 8) << ptx;
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.down.b32"));
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.idx.b32"));
  EXPECT_THAT(ptx, Not(HasSubstr("bar.sync")));
  EXPECT_THAT(ptx, Not(HasSubstr(".local")));
  ExpectPtxasAccepts(*kernel);
}

TEST(RowFusionPtxTest, LayerNormIsOneKernel) {
  absl::StatusOr<PtxKernel> kernel = CompileEntry(LayerNorm(100, 1024), "layer_norm");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 13);
  EXPECT_EQ(Count(kernel->ptx, "ld.global.nc.v4.f32"), 8 + 2 * 8) << kernel->ptx;
  EXPECT_EQ(Count(kernel->ptx, "st.global.v4.f32"), 8);
  EXPECT_THAT(kernel->ptx, Not(HasSubstr(".local")));
  ExpectPtxasAccepts(*kernel);
}

// Rows of 4096 f32: 4 warps a row (2 rows a block), warps combined through
// shared memory; rows of 100000: a block of 1024 a row, looping.
TEST(RowFusionPtxTest, LongRowsShareABlockOrLoop) {
  absl::StatusOr<PtxKernel> kernel = CompileEntry(Softmax(5, 4096), "softmax_4096");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->block, 256);
  EXPECT_EQ(kernel->grid, 3);
  EXPECT_THAT(kernel->ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(kernel->ptx, HasSubstr(".shared"));
  EXPECT_EQ(Count(kernel->ptx, "ld.global.nc.v4.f32"), 8);
  ExpectPtxasAccepts(*kernel);
  kernel = CompileEntry(Softmax(3, 100000), "softmax_long");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->block, 1024);
  EXPECT_EQ(kernel->grid, 3);
  EXPECT_THAT(kernel->ptx, HasSubstr(".maxntid 1024"));
  EXPECT_THAT(kernel->ptx, HasSubstr("ld.global.nc.v4.f32"));
  EXPECT_THAT(kernel->ptx, HasSubstr("st.global.v4.f32"));
  ExpectPtxasAccepts(*kernel);
}

TEST(RowFusionPtxTest, OtherTypesShapesAndOutputs) {
  struct Case {
    std::string name;
    std::string text;
    int64_t grid;
    const char* needs;
  };
  const std::vector<Case> cases = {
      {"bf16", kSoftmaxBf16, 3, "ld.global.nc.v4.u32"},
      {"s32", kIntegerRows, 4, "max.s32"},
      {"f64", kF64Rows, 2, "shfl.sync.idx.b32"},
      {"two_outputs", SumAndNormalized(37, 1000), 5, "st.global.v4.f32"},
      {"row_sum", absl::StrCat("HloModule m\n", kReducers, R"(
ENTRY e {
  x = f32[1000,1024] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[1000] reduce(x, zero), dimensions={1}, to_apply=add
})"),
       125, "ld.global.nc.v4.f32"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PtxKernel> kernel = CompileEntry(c.text, c.name);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    EXPECT_EQ(kernel->grid, c.grid) << c.name;
    EXPECT_THAT(kernel->ptx, HasSubstr(c.needs)) << c.name << "\n" << kernel->ptx;
    EXPECT_THAT(kernel->ptx, Not(HasSubstr(".local"))) << c.name << "\n" << kernel->ptx;
    ExpectPtxasAccepts(*kernel);
  }
}

// Elementwise: 4 f32 a thread in 16-byte loads and stores where the last
// dimension is a multiple of 4, one a thread otherwise.
TEST(RowFusionPtxTest, ElementwiseKernelsUseVectors) {
  absl::StatusOr<PtxKernel> kernel = CompileEntry(R"(
HloModule m
ENTRY e {
  x = f32[4,1000] parameter(0)
  y = f32[4,1000] parameter(1)
  m = f32[4,1000] multiply(x, y)
  ROOT a = f32[4,1000] add(m, x)
})",
                                                  "vector_add");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 4);
  EXPECT_EQ(Count(kernel->ptx, "ld.global.nc.v4.f32"), 2) << kernel->ptx;
  EXPECT_EQ(Count(kernel->ptx, "st.global.v4.f32"), 1) << kernel->ptx;
  ExpectPtxasAccepts(*kernel);
  kernel = CompileEntry(R"(
HloModule m
ENTRY e {
  x = f32[999] parameter(0)
  ROOT n = f32[999] negate(x)
})",
                        "scalar_negate");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->grid, 4);
  EXPECT_THAT(kernel->ptx, Not(HasSubstr(".v4")));
  ExpectPtxasAccepts(*kernel);
}

// What the device tests run.
const std::vector<std::pair<std::string, std::string>>& DeviceModules() {
  static const auto* modules = new std::vector<std::pair<std::string, std::string>>{
      {"softmax 100x1024 (warp a row)", Softmax(100, 1024)},
      {"softmax 37x1000 (partial chunks, partial block)", Softmax(37, 1000)},
      {"softmax 5x4096 (4 warps a row)", Softmax(5, 4096)},
      {"softmax 3x100000 (a looping block a row)", Softmax(3, 100000)},
      {"softmax 9x50 (short rows)", Softmax(9, 50)},
      {"layer norm 67x1024", LayerNorm(67, 1024)},
      {"layer norm 3x8192", LayerNorm(3, 8192)},
      {"sum and normalized 37x1000", SumAndNormalized(37, 1000)},
      {"sum and normalized 2x40000", SumAndNormalized(2, 40000)},
      {"integer rows", kIntegerRows},
      {"f64 rows", kF64Rows},
      {"scale add", kScaleAdd},
  };
  return *modules;
}

TEST(RowFusionModulesTest, ModulesCompileWithoutADevice) {
  std::vector<test::TestModule> modules;
  for (const auto& [name, text] : DeviceModules()) {
    modules.push_back({name.c_str(), text.c_str(), true});
  }
  modules.push_back({"softmax bf16", kSoftmaxBf16, false});  // MakeInput has no bf16
  test::ExpectModulesCompileWithoutADevice(modules);
}

class RowFusionDeviceTest : public test::GpuExecutableTest {};

TEST_F(RowFusionDeviceTest, MatchesTheInterpreter) {
  for (const auto& [name, text] : DeviceModules()) {
    SCOPED_TRACE(name);
    ExpectMatchesInterpreter(text, ErrorSpec(1e-4, 1e-4));
  }
}

TEST_F(RowFusionDeviceTest, Bf16SoftmaxMatchesTheInterpreter) {
  Literal input = test::MakeInput(ShapeUtil::MakeShape(F32, {24, 768}), 3);
  absl::StatusOr<Literal> bf16 = input.Convert(BF16);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  std::vector<Literal> arguments;
  arguments.push_back(std::move(bf16).value());
  ExpectMatchesInterpreter(kSoftmaxBf16, ErrorSpec(1e-2, 1e-2), std::move(arguments));
}

}  // namespace
}  // namespace axle::gpu
