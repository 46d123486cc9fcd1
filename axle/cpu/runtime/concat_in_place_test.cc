//===- concat_in_place_test.cc - Convolutions writing their concat slices -===//
//
// concat_in_place.h: a concatenation of convolutions read by it alone gets
// no kernel, each convolution writing its slice. Against the interpreter:
// fire and inception modules (1x1, 3x3, 5x5 branches, odd feature counts,
// strides), each way the convolution thunk runs (row pieces, pixel pieces,
// feature pieces, Winograd row and feature pieces, oneDNN's team for batch
// 2 and weights read per run, 1x1 convolutions on the small-dot kernel at
// 1 to 3 threads), a concatenation along the rows; and the
// cases it must leave alone (an operand that is no convolution, a branch
// read elsewhere too, a residual branch, a concatenation that is the
// result), which keep their kernel.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/cpu/runtime/convolution_thunk.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/cpu/runtime/thunk.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// One branch: a convolution of the module's input with `features` output
// features, a `size` x `size` window padded by size / 2 (the size kept at
// stride 1), a bias and a relu.
struct Branch {
  int64_t features = 8;
  int64_t size = 1;
  int64_t stride = 1;
  bool constant_weights = true;
};

struct Module {
  int64_t batch = 1, height = 12, width = 9, in = 8;
  std::vector<Branch> branches;
  int64_t dimension = 3;  // of the concatenation (3: features, 1: rows)
  // The cases to leave alone: a parameter concatenated after the branches,
  // branch 0 also in the result, a residual added to branch 0, the
  // concatenation the result.
  bool parameter_operand = false, reused = false, residual = false, concat_is_root = false;
  // Each branch's convolution multiplied by a constant per-feature scale
  // before its bias (an inference batch norm).
  bool scale = false;
};

// Values that differ from element to element, exact in f32.
std::string ConstantText(int64_t count, int seed) {
  std::string text = "{";
  for (int64_t i = 0; i < count; ++i) {
    absl::StrAppend(&text, i > 0 ? ", " : "", ((i * 7 + int64_t{seed} * 13) % 11 - 5) * 0.125);
  }
  return text + "}";
}

// [o, i, s, s] constant values, nested.
std::string WeightsText(int64_t o, int64_t i, int64_t s, int seed) {
  std::string text = "{";
  int64_t next = seed;
  for (int64_t a = 0; a < o; ++a) {
    absl::StrAppend(&text, a > 0 ? ", " : "", "{");
    for (int64_t b = 0; b < i; ++b) {
      absl::StrAppend(&text, b > 0 ? ", " : "", "{");
      for (int64_t c = 0; c < s; ++c) {
        absl::StrAppend(&text, c > 0 ? ", " : "", "{");
        for (int64_t d = 0; d < s; ++d) {
          absl::StrAppend(&text, d > 0 ? ", " : "", ((next++ * 7) % 11 - 5) * 0.125);
        }
        absl::StrAppend(&text, "}");
      }
      absl::StrAppend(&text, "}");
    }
    absl::StrAppend(&text, "}");
  }
  return text + "}";
}

std::string Shape4(int64_t a, int64_t b, int64_t c, int64_t d) {
  return absl::StrCat("f32[", a, ",", b, ",", c, ",", d, "]");
}

// The module's text and the shapes of its parameters, in order.
std::string Text(const Module& m, std::vector<Shape>& parameters) {
  parameters = {ShapeUtil::MakeShape(F32, {m.batch, m.height, m.width, m.in})};
  std::string text =
      absl::StrCat("HloModule cat\nENTRY e {\n  x = ", Shape4(m.batch, m.height, m.width, m.in),
                   " parameter(0)\n  zero = f32[] constant(0)\n");
  std::vector<std::string> parts;
  std::vector<int64_t> dims;
  for (size_t b = 0; b < m.branches.size(); ++b) {
    const Branch& branch = m.branches[b];
    const int64_t pad = branch.size / 2;
    const int64_t oh = (m.height + 2 * pad - branch.size) / branch.stride + 1;
    const int64_t ow = (m.width + 2 * pad - branch.size) / branch.stride + 1;
    dims = {m.batch, oh, ow, branch.features};
    const std::string y = Shape4(m.batch, oh, ow, branch.features);
    const std::string k = absl::StrCat("k", b),
                      kshape = Shape4(branch.features, m.in, branch.size, branch.size);
    if (branch.constant_weights) {
      absl::StrAppend(&text, "  ", k, " = ", kshape, " constant(",
                      WeightsText(branch.features, m.in, branch.size, static_cast<int>(b)), ")\n");
    } else {
      absl::StrAppend(&text, "  ", k, " = ", kshape, " parameter(", parameters.size(), ")\n");
      parameters.push_back(
          ShapeUtil::MakeShape(F32, {branch.features, m.in, branch.size, branch.size}));
    }
    absl::StrAppend(&text, "  c", b, " = ", y, " convolution(x, ", k,
                    "), window={size=", branch.size, "x", branch.size, " stride=", branch.stride,
                    "x", branch.stride, " pad=", pad, "_", pad, "x", pad, "_", pad,
                    "}, dim_labels=b01f_oi01->b01f\n");
    std::string conv = absl::StrCat("c", b);
    if (m.scale) {
      absl::StrAppend(&text, "  scale", b, " = f32[", branch.features, "] constant(",
                      ConstantText(branch.features, static_cast<int>(b) + 5), ")\n  bs", b, " = ",
                      y, " broadcast(scale", b, "), dimensions={3}\n  m", b, " = ", y,
                      " multiply(c", b, ", bs", b, ")\n");
      conv = absl::StrCat("m", b);
    }
    absl::StrAppend(&text, "  bias", b, " = f32[", branch.features, "] constant(",
                    ConstantText(branch.features, static_cast<int>(b) + 3), ")\n  bb", b, " = ", y,
                    " broadcast(bias", b, "), dimensions={3}\n  a", b, " = ", y, " add(", conv,
                    ", bb", b, ")\n");
    std::string sum = absl::StrCat("a", b);
    if (m.residual && b == 0) {
      absl::StrAppend(&text, "  res = ", y, " parameter(", parameters.size(), ")\n  s0 = ", y,
                      " add(a0, res)\n");
      parameters.push_back(ShapeUtil::MakeShape(F32, dims));
      sum = "s0";
    }
    absl::StrAppend(&text, "  z", b, " = ", y, " broadcast(zero), dimensions={}\n  r", b, " = ", y,
                    " maximum(", sum, ", z", b, ")\n");
    parts.push_back(absl::StrCat("r", b));
  }
  int64_t total = 0;
  for (const Branch& branch : m.branches) total += m.dimension == 3 ? branch.features : 0;
  if (m.dimension != 3) total = dims[m.dimension] * static_cast<int64_t>(m.branches.size());
  if (m.parameter_operand) {
    std::vector<int64_t> extra = dims;
    extra[m.dimension] = 5;
    absl::StrAppend(&text, "  p = ", Shape4(extra[0], extra[1], extra[2], extra[3]), " parameter(",
                    parameters.size(), ")\n");
    parameters.push_back(ShapeUtil::MakeShape(F32, extra));
    parts.push_back("p");
    total += 5;
  }
  std::vector<int64_t> cat = dims;
  cat[m.dimension] = total;
  const std::string cat_shape = Shape4(cat[0], cat[1], cat[2], cat[3]);
  absl::StrAppend(&text, "  ", m.concat_is_root ? "ROOT " : "", "cat = ", cat_shape,
                  " concatenate(", absl::StrJoin(parts, ", "), "), dimensions={", m.dimension,
                  "}\n");
  if (m.concat_is_root) return text + "}\n";
  // A 1x1 convolution reads the concatenation (as the next module's
  // squeeze would), so that no loop fusion takes it in.
  absl::StrAppend(&text, "  kc = ", Shape4(3, cat[3], 1, 1), " constant(",
                  WeightsText(3, cat[3], 1, 7), ")\n  y = ", Shape4(cat[0], cat[1], cat[2], 3),
                  " convolution(cat, kc), window={size=1x1}, dim_labels=b01f_oi01->b01f\n");
  if (m.reused) {
    absl::StrAppend(&text, "  ROOT t = (", Shape4(cat[0], cat[1], cat[2], 3), ", ",
                    Shape4(dims[0], dims[1], dims[2], m.branches[0].features),
                    ") tuple(y, r0)\n}\n");
  } else {
    absl::StrAppend(&text, "  ROOT out = ", Shape4(cat[0], cat[1], cat[2], 3), " copy(y)\n}\n");
  }
  return text;
}

// Runs `m` on cpu and the interpreter, and returns how many loop kernels
// the cpu program runs (the concatenation's, when it keeps one).
int64_t CheckAndCountKernels(const Module& m) {
  std::vector<Shape> parameters;
  const std::string text = Text(m, parameters);
  std::vector<Literal> arguments;
  arguments.reserve(parameters.size());
  for (const Shape& shape : parameters) {
    arguments.push_back(testing::SeededF32Values(shape, static_cast<int>(arguments.size()) + 1));
  }
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-4, 1e-4));
  auto executable = testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return -1;
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>((*executable)->executable());
  EXPECT_NE(cpu, nullptr);
  if (cpu == nullptr) return -1;
  int64_t kernels = 0;
  for (const auto& thunk : cpu->program().thunks) {
    kernels += dynamic_cast<const cpu::KernelThunk*>(thunk.get()) != nullptr ? 1 : 0;
  }
  return kernels;
}

// Runs `m` on cpu at 1, 2 and 3 intra-op threads (as many as the pool
// has) against the interpreter, and returns how many of its thunks are
// convolutions of `kind` (ConvolutionThunkKind).
int64_t CheckThreadsAndCountKind(const Module& m, absl::string_view kind) {
  std::vector<Shape> parameters;
  const std::string text = Text(m, parameters);
  std::vector<Literal> arguments;
  arguments.reserve(parameters.size());
  for (const Shape& shape : parameters) {
    arguments.push_back(testing::SeededF32Values(shape, static_cast<int>(arguments.size()) + 1));
  }
  absl::StatusOr<Literal> reference = testing::RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  auto executable = testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!reference.ok() || !executable.ok()) return -1;
  LocalClient* client = testing::ClientFor("cpu");
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  for (const Literal& argument : arguments) {
    auto buffer = client->LiteralToShapedBuffer(argument, 0);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (!buffer.ok()) return -1;
    buffers.push_back(*std::move(buffer));
  }
  pointers.reserve(buffers.size());
  for (const auto& buffer : buffers) pointers.push_back(&buffer);
  for (int threads : {1, 2, 3}) {
    auto result =
        (*executable)->Run(pointers, ExecutableRunOptions().set_intra_op_threads(threads));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return -1;
    auto literal = client->ShapedBufferToLiteral(*result);
    EXPECT_TRUE(literal.ok()) << literal.status();
    if (!literal.ok()) return -1;
    absl::Status near = LiteralsNear(*reference, *literal, ErrorSpec(1e-4, 1e-4));
    EXPECT_TRUE(near.ok()) << threads << " threads: " << near;
  }
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>((*executable)->executable());
  EXPECT_NE(cpu, nullptr);
  if (cpu == nullptr) return -1;
  int64_t count = 0;
  for (const auto& thunk : cpu->program().thunks) {
    absl::StatusOr<std::string> thunk_kind = cpu::ConvolutionThunkKind(*thunk);
    count += thunk_kind.ok() && *thunk_kind == kind ? 1 : 0;
  }
  return count;
}

TEST(ConcatInPlace, FireModule) {
  // squeezenet's expand: a 1x1 (split into pixels) and a 3x3 (into rows).
  Module m;
  m.branches = {{16, 1}, {24, 3}};
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, InceptionModuleWithOddFeatures) {
  // Four branches of 3, 5, 7 and 16 features, 1x1, 3x3, 5x5, over 11x13.
  Module m;
  m.height = 11;
  m.width = 13;
  m.in = 6;
  m.branches = {{3, 1}, {5, 3}, {7, 5}, {16, 3}};
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, StridedBranches) {
  Module m;
  m.height = 15;
  m.branches = {{8, 3, 2}, {12, 1, 2}};
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, FeaturePieces) {
  // 7 rows, 64 features: split over the features on two threads.
  Module m;
  m.height = 7;
  m.width = 7;
  m.in = 16;
  m.branches = {{64, 3}, {32, 1}};
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, WinogradPieces) {
  // 3x3 branches on oneDNN's Winograd kernels (where it has them): over
  // 8x8x64 into 128 features (weights 18x the input) split over the
  // features, each piece reordering its features into the slice; over
  // 16x16x32 into 64 split into rows.
  Module features;
  features.height = 8;
  features.width = 8;
  features.in = 64;
  features.branches = {{128, 1}, {128, 3}};
  EXPECT_EQ(CheckAndCountKernels(features), 0);
  Module rows;
  rows.height = 16;
  rows.width = 16;
  rows.in = 32;
  rows.branches = {{32, 1}, {64, 3}};
  EXPECT_EQ(CheckAndCountKernels(rows), 0);
}

TEST(ConcatInPlace, PointwiseOnTheSmallDotKernel) {
  // A 1x1 branch writes its slice on the small-dot kernel (bias and relu
  // in its tiles), first or second in the concatenation, beside a 3x3
  // one; two 1x1 branches of odd feature counts (masked tiles), over
  // enough pixels (20x17) for pieces of 12-row tiles at 2 threads.
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512: oneDNN runs them";
  Module first;
  first.height = 20;
  first.width = 17;
  first.in = 24;
  first.branches = {{40, 1}, {24, 3}};
  EXPECT_EQ(CheckThreadsAndCountKind(first, "small-dot-pointwise"), 1);
  Module second = first;
  second.branches = {{24, 3}, {40, 1}};
  EXPECT_EQ(CheckThreadsAndCountKind(second, "small-dot-pointwise"), 1);
  Module both = first;
  both.branches = {{13, 1}, {35, 1}};
  EXPECT_EQ(CheckThreadsAndCountKind(both, "small-dot-pointwise"), 2);
  // A per-feature scale folded into the packed weights.
  Module scaled = first;
  scaled.scale = true;
  EXPECT_EQ(CheckThreadsAndCountKind(scaled, "small-dot-pointwise"), 1);
  // Fewer than 4 pixels stay on oneDNN.
  Module tiny;
  tiny.height = 1;
  tiny.width = 3;
  tiny.branches = {{8, 1}, {8, 1}};
  EXPECT_EQ(CheckThreadsAndCountKind(tiny, "small-dot-pointwise"), 0);
  // A 1x1 convolution with its own dense output keeps oneDNN: the concat
  // is the result, so it keeps its kernel.
  Module root = first;
  root.concat_is_root = true;
  EXPECT_EQ(CheckThreadsAndCountKind(root, "small-dot-pointwise"), 0);
}

TEST(ConcatInPlace, OneDnnTeamWithBatchTwoAndWeightsPerRun) {
  // Batch 2 and weights read per run run whole on oneDNN's team, the
  // result copied into the slice by a reorder.
  Module batch;
  batch.batch = 2;
  batch.branches = {{8, 1}, {12, 3}};
  EXPECT_EQ(CheckAndCountKernels(batch), 0);
  Module weights;
  weights.branches = {{8, 1, 1, false}, {12, 3, 1, false}};
  EXPECT_EQ(CheckAndCountKernels(weights), 0);
}

TEST(ConcatInPlace, AlongTheRows) {
  Module m;
  m.dimension = 1;
  m.branches = {{8, 3}, {8, 1}};
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, OffWithTheEnvironmentSwitch) {
  Module m;
  m.branches = {{16, 1}, {24, 3}};
  setenv("AXLE_CPU_CONCAT_IN_PLACE", "0", 1);
  EXPECT_EQ(CheckAndCountKernels(m), 1);
  unsetenv("AXLE_CPU_CONCAT_IN_PLACE");
  EXPECT_EQ(CheckAndCountKernels(m), 0);
}

TEST(ConcatInPlace, LeftAloneWhereItMustNotApply) {
  Module parameter;
  parameter.branches = {{8, 1}, {12, 3}};
  parameter.parameter_operand = true;
  EXPECT_EQ(CheckAndCountKernels(parameter), 1);
  Module reused;
  reused.branches = {{8, 1}, {12, 3}};
  reused.reused = true;
  EXPECT_EQ(CheckAndCountKernels(reused), 1);
  Module residual;
  residual.branches = {{8, 1}, {12, 3}};
  residual.residual = true;
  EXPECT_EQ(CheckAndCountKernels(residual), 1);
  Module root;
  root.branches = {{8, 1}, {12, 3}};
  root.concat_is_root = true;
  EXPECT_EQ(CheckAndCountKernels(root), 1);
}

}  // namespace
}  // namespace axle
