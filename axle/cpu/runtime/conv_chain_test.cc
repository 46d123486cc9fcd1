//===- conv_chain_test.cc - A depthwise convolution and its 1x1 neighbours -===//
//
// conv_chain.h: MobileNet-style blocks (a 1x1 expand, a depthwise
// convolution, a 1x1 project with or without a residual) against the
// interpreter, at odd sizes (feature counts no multiple of 16, odd rows
// and columns, strides 1 and 2, 3x3 and 5x5 windows), chained in one
// thunk when the pool has two threads or more; the partial chains (no
// expand, no project) and the cases to leave alone (batch 2, a depthwise
// convolution read twice) run and agree too.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/conv_chain.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_test_util.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/depthwise_rows.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using conv_test::ConstantText;

struct Block {
  int64_t batch = 1, height = 17, width = 13, in = 5;
  int64_t expand = 30;  // 0: no expand convolution
  int64_t size = 3, stride = 1;
  int64_t project = 5;  // 0: no project convolution
  bool residual = false;
  // The depthwise convolution's result is also the module's.
  bool depthwise_in_result = false;
};

// A convolution of `x` (NHWC) into `out` features with constant OIHW
// weights, a bias, an addend (when not empty) and a clamp to [0, 6]
// (`clamp`), as the ONNX front end emits one; `name` names its result and
// prefixes its other instructions.
std::string Conv(const std::string& name, const std::string& x, int64_t in, int64_t out,
                 int64_t size, int64_t stride, int64_t groups, const std::string& y_shape,
                 bool clamp, const std::string& addend, int seed) {
  const int64_t pad = size / 2;
  const std::string& n = name;
  std::string text = absl::StrCat(
      "  ", n, "k = f32[", out, ",", in / groups, ",", size, ",", size, "] constant(",
      ConstantText({out, in / groups, size, size}, seed), ")\n  ", n, "c = ", y_shape,
      " convolution(", x, ", ", n, "k), window={size=", size, "x", size, " stride=", stride, "x",
      stride, " pad=", pad, "_", pad, "x", pad, "_", pad, "}, dim_labels=b01f_oi01->b01f",
      groups > 1 ? absl::StrCat(", feature_group_count=", groups) : "", "\n  ", n, "bias = f32[",
      out, "] constant(", ConstantText({out}, seed + 1), ")\n  ", n, "bb = ", y_shape,
      " broadcast(", n, "bias), dimensions={3}\n");
  const bool add_addend = !addend.empty();
  absl::StrAppend(&text, "  ", n, add_addend || clamp ? "b" : "", " = ", y_shape, " add(", n, "c, ",
                  n, "bb)\n");
  std::string last = n + "b";
  if (add_addend) {
    absl::StrAppend(&text, "  ", n, clamp ? "s" : "", " = ", y_shape, " add(", last, ", ", addend,
                    ")\n");
    last = n + "s";
  }
  if (clamp) {
    absl::StrAppend(&text, "  ", n, "lo = ", y_shape, " broadcast(zero), dimensions={}\n  ", n,
                    "hi = ", y_shape, " broadcast(six), dimensions={}\n  ", n, "m = ", y_shape,
                    " maximum(", n, "lo, ", last, ")\n  ", n, " = ", y_shape, " minimum(", n, "m, ",
                    n, "hi)\n");
  }
  return text;
}

std::string Shape4(int64_t n, int64_t h, int64_t w, int64_t c) {
  return absl::StrCat("f32[", n, ",", h, ",", w, ",", c, "]");
}

std::string Text(const Block& b) {
  const int64_t mid = b.expand > 0 ? b.expand : b.in;
  const int64_t pad = b.size / 2;
  const int64_t out_h = (b.height + 2 * pad - b.size) / b.stride + 1;
  const int64_t out_w = (b.width + 2 * pad - b.size) / b.stride + 1;
  const std::string x_shape = Shape4(b.batch, b.height, b.width, b.in);
  std::string text = absl::StrCat("HloModule block\nENTRY e {\n  x = ", x_shape,
                                  " parameter(0)\n  zero = f32[] constant(0)\n  six = f32[] "
                                  "constant(6)\n");
  std::string input = "x";
  const std::string mid_shape = Shape4(b.batch, b.height, b.width, mid);
  if (b.expand > 0) {
    absl::StrAppend(&text, Conv("e", "x", b.in, mid, 1, 1, 1, mid_shape, true, "", 1));
    input = "e";
  }
  const std::string d_shape = Shape4(b.batch, out_h, out_w, mid);
  absl::StrAppend(&text, Conv("d", input, mid, mid, b.size, b.stride, mid, d_shape, true, "", 3));
  std::string result = "d", result_shape = d_shape;
  if (b.project > 0) {
    const std::string p_shape = Shape4(b.batch, out_h, out_w, b.project);
    absl::StrAppend(
        &text, Conv("p", "d", mid, b.project, 1, 1, 1, p_shape, false, b.residual ? "x" : "", 5));
    result = "p";
    result_shape = p_shape;
  }
  if (b.depthwise_in_result && result != "d") {
    absl::StrAppend(&text, "  ROOT t = (", result_shape, ", ", d_shape, ") tuple(", result,
                    ", d)\n}\n");
  } else {
    // A copy after the last convolution: the computation's root is no stage.
    absl::StrAppend(&text, "  ROOT r = ", result_shape, " negate(", result, ")\n}\n");
  }
  return text;
}

// Runs `b` on cpu against the interpreter; returns how many chain thunks
// its program has (and in `own_depthwise`, how many of them run their
// depthwise stage on depthwise_rows.h's kernel).
int64_t CheckAndCountChains(const Block& b, int64_t* own_depthwise = nullptr) {
  const std::string text = Text(b);
  const std::vector<Literal> arguments = {
      testing::SeededF32Values(ShapeUtil::MakeShape(F32, {b.batch, b.height, b.width, b.in}), 1)};
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return -1;
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>((*executable)->executable());
  EXPECT_NE(cpu, nullptr);
  if (cpu == nullptr) return -1;
  int64_t chains = 0;
  for (const auto& thunk : cpu->program().thunks) {
    chains += cpu::IsConvChainThunk(*thunk) ? 1 : 0;
    if (own_depthwise != nullptr) *own_depthwise += cpu::ConvChainRunsDepthwiseRows(*thunk) ? 1 : 0;
  }
  return chains;
}

// One chain where the pool has two threads or more, else none.
int64_t Chains(int64_t count) { return ThreadPool::DefaultNumThreads() >= 2 ? count : 0; }

TEST(ConvChainTest, InvertedResidualWithResidual) {
  Block b;
  b.residual = true;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, StrideTwoOddSizes) {
  Block b;
  b.height = 19;
  b.width = 11;
  b.in = 8;
  b.expand = 48;
  b.stride = 2;
  b.project = 12;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, FiveByFiveStrideTwo) {
  Block b;
  b.height = 21;
  b.width = 21;
  b.in = 16;
  b.expand = 40;
  b.size = 5;
  b.stride = 2;
  b.project = 24;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, TallMapsRunInSeveralBands) {
  // 96 x 48 x 64 rows of 12 KiB: several bands per thread, the expand's
  // rows kept from band to band.
  Block b;
  b.height = 96;
  b.width = 48;
  b.in = 8;
  b.expand = 64;
  b.project = 8;
  b.residual = true;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
  b.stride = 2;
  b.residual = false;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, ThreeByThreeDepthwiseOnItsOwnKernel) {
  // 3x3 windows at strides 1 and 2, features a multiple of 16 and not,
  // with and without an expand (and a residual): the depthwise stage runs on
  // depthwise_rows.h's kernel where the CPU has AVX-512F.
  const int64_t own = cpu::DepthwiseRowsAvailable() ? 1 : 0;
  for (int64_t stride : {1, 2}) {
    for (int64_t expand : {0, 30, 48}) {
      Block b;
      b.height = 23;
      b.width = 15;
      b.in = expand > 0 ? 16 : 32;
      b.expand = expand;
      b.stride = stride;
      b.project = 16;
      b.residual = stride == 1 && expand > 0;
      int64_t own_depthwise = 0;
      EXPECT_EQ(CheckAndCountChains(b, &own_depthwise), Chains(1)) << Text(b);
      EXPECT_EQ(own_depthwise, Chains(own)) << Text(b);
    }
  }
  // A 5x5 window stays on oneDNN.
  Block b;
  b.size = 5;
  int64_t own_depthwise = 0;
  EXPECT_EQ(CheckAndCountChains(b, &own_depthwise), Chains(1)) << Text(b);
  EXPECT_EQ(own_depthwise, 0) << Text(b);
}

TEST(ConvChainTest, DepthwiseAndProjectWithoutExpand) {
  Block b;
  b.in = 32;
  b.expand = 0;
  b.project = 16;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, ExpandAndDepthwiseWhoseResultIsReadTwice) {
  // The depthwise convolution is also the module's result: the chain ends
  // there, the project runs on its own.
  Block b;
  b.depthwise_in_result = true;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
  b.project = 0;
  b.depthwise_in_result = false;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

TEST(ConvChainTest, BatchTwoRunsStageByStage) {
  Block b;
  b.batch = 2;
  b.residual = true;
  EXPECT_EQ(CheckAndCountChains(b), 0) << Text(b);
}

TEST(ConvChainTest, TwoOutputRows) {
  // Two output rows: one band per thread.
  Block b;
  b.height = 4;
  b.width = 3;
  b.stride = 2;
  EXPECT_EQ(CheckAndCountChains(b), Chains(1)) << Text(b);
}

}  // namespace
}  // namespace axle
