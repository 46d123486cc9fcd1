//===- convolution_test.cc - The GPU convolution kernel, plan to device ----===//
//
// For each convolution configuration (dimension numbers, spatial ranks 1-3,
// strides, padding incl. negative, lhs/rhs dilation, reversal, feature and
// batch groups, layouts, float and integer types):
//   - the plan evaluated on the host (RunConvPlanOnHost, the kernel's loops)
//     matches the interpreter (axle/eval), element for element;
//   - the kernel's PTX is accepted by `ptxas -arch=sm_90` (skipped without
//     ptxas);
//   - on a GPU, the thunk's result matches the interpreter's (skipped, with
//     a message, without one).
//
//===----------------------------------------------------------------------===//
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/shape_util.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/convolution_thunk.h"
#include "axle/gpu/cuda_device_test_util.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/ptxas.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

struct ConvCase {
  const char* name;
  const char* lhs;  // shapes, layouts included where not row-major
  const char* rhs;
  const char* out;
  const char* attributes;
};

// Output sizes: (input dilated, padded - window dilated) / stride + 1.
const ConvCase kCases[] = {
    {"nhwc_3x3_same", "f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
    {"nchw_strided", "f32[2,3,7,6]", "f32[4,3,3,2]", "f32[2,4,3,3]",
     "window={size=3x2 stride=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01"},
    {"conv1d_rhs_dilated", "f32[2,9,3]", "f32[3,3,5]", "f32[2,7,5]",
     "window={size=3 pad=1_1 rhs_dilate=2}, dim_labels=b0f_0io->b0f"},
    {"conv3d", "f32[1,4,5,3,2]", "f32[2,3,2,2,3]", "f32[1,4,2,4,3]",
     "window={size=2x3x2 stride=1x2x1 pad=1_0x0_1x1_1}, dim_labels=b012f_012io->b012f"},
    {"transposed_lhs_dilated", "f32[1,4,4,2]", "f32[3,3,2,3]", "f32[1,8,8,3]",
     "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"},
    {"negative_padding", "f32[1,6,6,2]", "f32[3,3,2,2]", "f32[1,3,3,2]",
     "window={size=3x3 pad=-1_0x0_-1}, dim_labels=b01f_01io->b01f"},
    {"window_reversal", "f32[1,5,4,2]", "f32[3,2,2,3]", "f32[1,5,3,3]",
     "window={size=3x2 pad=1_1x0_0 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f"},
    {"feature_groups", "f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,5,5,6]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2"},
    {"depthwise_strided", "f32[1,6,6,4]", "f32[3,3,1,8]", "f32[1,3,3,8]",
     "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
     "feature_group_count=4"},
    {"batch_groups", "f32[4,5,5,3]", "f32[3,3,3,6]", "f32[2,5,5,6]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=2"},
    {"batch_groups_lhs_dilated", "f32[4,3,3,2]", "f32[2,2,2,4]", "f32[1,6,6,4]",
     "window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f, "
     "batch_group_count=4"},
    {"layouts", "f32[2,3,5,5]{1,3,2,0}", "f32[4,3,3,3]{0,1,3,2}", "f32[2,4,5,5]{1,3,2,0}",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"},
    {"permuted_dim_labels", "f32[5,3,2,4]", "f32[3,2,4,3]", "f32[2,2,4,4]",
     "window={size=2x3}, dim_labels=0fb1_i0o1->1bf0"},
    {"everything", "f32[1,4,5,2]{0,2,1,3}", "f32[3,2,1,4]", "f32[1,4,4,4]{3,0,1,2}",
     "window={size=3x2 stride=2x1 pad=-1_2x1_0 lhs_dilate=3x1 rhs_dilate=2x2 "
     "rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2"},
    {"empty_output", "f32[1,2,2,1]", "f32[3,3,1,1]", "f32[1,0,0,1]",
     "window={size=3x3}, dim_labels=b01f_01io->b01f"},
    {"f16", "f16[2,5,5,3]", "f16[3,3,3,4]", "f16[2,5,5,4]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
    {"bf16_groups", "bf16[2,5,5,4]", "bf16[3,3,2,6]", "bf16[2,5,5,6]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2"},
    {"f16_to_f32", "f16[2,5,5,3]", "f16[3,3,3,4]", "f32[2,5,5,4]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
    {"f64_transposed", "f64[1,4,4,2]", "f64[3,3,2,3]", "f64[1,8,8,3]",
     "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"},
    {"s8_to_s32", "s8[1,5,5,3]", "s8[3,3,3,4]", "s32[1,5,5,4]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
    {"s32_nchw", "s32[2,3,7,6]", "s32[4,3,3,2]", "s32[2,4,3,3]",
     "window={size=3x2 stride=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01"},
    {"many_blocks", "f32[4,16,16,16]", "f32[3,3,16,32]", "f32[4,16,16,32]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
    {"nchw_kcrs_symmetric", "f32[2,3,7,6]", "f32[4,3,3,3]", "f32[2,4,4,4]",
     "window={size=3x3 stride=2x1 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01"},
    {"nhwc_krsc_filter", "f32[1,6,6,4]", "f32[8,3,3,4]", "f32[1,6,6,8]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f"},
    {"nchw_hwio_filter", "f32[2,3,6,6]", "f32[3,3,3,4]", "f32[2,4,6,6]",
     "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->bf01"},
    {"true_convolution", "f32[1,5,5,2]", "f32[3,3,2,2]", "f32[1,5,5,2]",
     "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f"},
    // Few outputs of long windows: a block per output (ConvWindowBlockSize).
    {"weight_gradient_block", "f32[8,12,12,3]", "f32[8,10,10,8]", "f32[5,5,3,8]",
     "window={size=10x10 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf"},
    {"lhs_dilated_block", "f32[1,9,9,64]", "f32[3,3,64,2]", "f32[1,18,18,2]",
     "window={size=3x3 pad=1_2x2_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
     "dim_labels=b01f_01io->b01f"},
    // pred: an or of ands (XLA's convolution_test's all-true case, and one
    // with false inputs).
    {"pred", "pred[3,3,3]", "pred[3,3,3]", "pred[3,3,3]",
     "window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0"},
    {"s8_block", "s8[1,6,6,64]", "s8[3,3,64,4]", "s32[1,4,4,4]",
     "window={size=3x3}, dim_labels=b01f_01io->b01f"},
    // Input gradients (cudnnConvolutionBackwardData): grouped_dilated_
    // transposed_conv's transposed convolution (a stride-2 forward with
    // padding 1, true convolution, HWIO filter copied to KRSC), and an NCHW
    // one whose reversed KCRS filter cuDNN reads in place.
    {"backward_data_nhwc", "f32[1,4,4,4]", "f32[4,4,4,2]", "f32[1,8,8,2]",
     "window={size=4x4 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"},
    {"backward_data_nchw_in_place", "f32[2,4,3,3]", "f32[4,3,3,3]", "f32[2,3,5,5]",
     "window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
     "dim_labels=bf01_io01->bf01"},
    {"backward_data_bf16", "bf16[2,3,3,4]", "bf16[3,3,4,2]", "bf16[2,5,5,2]",
     "window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"},
    // Weight gradients (cudnnConvolutionBackwardFilter): cnn_train_step's
    // of its stride-2 convolution (the window dilated by the stride; the
    // HWIO result copied out of KRSC), a grouped one (batch_group_count),
    // and an NCHW one written in place (KCRS).
    {"backward_filter_strided", "f32[2,9,9,3]", "f32[2,4,4,4]", "f32[3,3,3,4]",
     "window={size=4x4 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf"},
    {"backward_filter_groups", "f32[2,6,6,4]", "f32[2,6,6,6]", "f32[3,3,2,6]",
     "window={size=6x6 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=2"},
    {"backward_filter_nchw_in_place", "f32[2,3,6,6]", "f32[2,4,4,4]", "f32[4,3,3,3]",
     "window={size=4x4}, dim_labels=fb01_io01->fb01"},
};

// The cases cudnn_convolution.h takes (the others run Axle's kernel).
bool CudnnTakes(absl::string_view name) {
  for (absl::string_view taken :
       {"nhwc_3x3_same", "feature_groups", "depthwise_strided", "layouts", "f16", "bf16_groups",
        "many_blocks", "nchw_kcrs_symmetric", "nhwc_krsc_filter", "nchw_hwio_filter",
        "true_convolution", "weight_gradient_block", "backward_data_nhwc",
        "backward_data_nchw_in_place", "backward_data_bf16", "backward_filter_strided",
        "backward_filter_groups", "backward_filter_nchw_in_place"}) {
    if (name == taken) return true;
  }
  return false;
}

const ConvCase& CaseNamed(absl::string_view name) {
  for (const ConvCase& c : kCases) {
    if (name == c.name) return c;
  }
  CHECK(false) << "no case " << name;
  return kCases[0];
}

std::string ModuleText(const ConvCase& c) {
  return absl::StrCat("HloModule ", c.name, "\nENTRY e {\n  lhs = ", c.lhs,
                      " parameter(0)\n  rhs = ", c.rhs, " parameter(1)\n  ROOT conv = ", c.out,
                      " convolution(lhs, rhs), ", c.attributes, "\n}\n");
}

// Small integers in [-2, 2] (sums stay exact in every type), varied by seed.
Literal MakeInput(const Shape& shape, int seed) {
  Literal values(ShapeUtil::MakeShape(F64, shape.dimensions()));
  absl::Span<double> data = values.data<double>();
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    data[i] = static_cast<double>((i * 7919 + int64_t{seed} * 104729) % 5 - 2);
  }
  absl::StatusOr<Literal> converted = values.Convert(shape.element_type());
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

// Element offset of each row-major element in `shape`'s layout.
std::vector<int64_t> PhysicalOffsets(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  if (shape.has_layout() &&
      static_cast<int64_t>(shape.layout().minor_to_major().size()) == shape.rank()) {
    int64_t stride = 1;
    for (int64_t d : shape.layout().minor_to_major()) {
      strides[d] = stride;
      stride *= shape.dimensions(d);
    }
  } else {
    strides = ShapeUtil::RowMajorStrides(shape.dimensions());
  }
  std::vector<int64_t> offsets;
  offsets.reserve(shape.num_elements());
  ShapeUtil::ForEachIndex(shape.dimensions(), [&](absl::Span<const int64_t> index) {
    int64_t offset = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
    return true;
  });
  return offsets;
}

// A literal's elements as doubles, placed in `shape`'s layout.
std::vector<double> InLayout(const Literal& literal, const Shape& shape) {
  absl::StatusOr<Literal> f64 = literal.Convert(F64);
  CHECK(f64.ok()) << f64.status();
  const std::vector<int64_t> offsets = PhysicalOffsets(shape);
  std::vector<double> physical(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) physical[offsets[i]] = f64->data<double>()[i];
  return physical;
}

ErrorSpec ToleranceFor(PrimitiveType type) {
  if (type == BF16) return ErrorSpec(0.1, 0.02);
  if (type == F16) return ErrorSpec(1e-2, 2e-3);
  return ErrorSpec(1e-5, 1e-6);
}

struct Evaluated {
  std::unique_ptr<HloModule> module;
  std::vector<Literal> inputs;
  Literal expected;
};

absl::StatusOr<Evaluated> Evaluate(const ConvCase& c) {
  Evaluated e;
  AXLE_ASSIGN_OR_RETURN(e.module, ParseAndReturnUnverifiedModule(ModuleText(c)));
  const HloComputation& entry = *e.module->entry_computation();
  for (int64_t i = 0; i < 2; ++i) {
    e.inputs.push_back(MakeInput(entry.parameter_instruction(i)->shape(), static_cast<int>(i)));
  }
  HloEvaluator evaluator;
  AXLE_ASSIGN_OR_RETURN(e.expected, evaluator.Evaluate(*e.module, {&e.inputs[0], &e.inputs[1]}));
  return e;
}

class ConvolutionPlanTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionPlanTest, HostPlanMatchesInterpreter) {
  const ConvCase& c = GetParam();
  absl::StatusOr<Evaluated> e = Evaluate(c);
  ASSERT_TRUE(e.ok()) << e.status();
  const HloInstruction& conv = *e->module->entry_computation()->root_instruction();
  absl::StatusOr<ConvPlan> plan = MakeConvPlan(conv);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<double> out =
      RunConvPlanOnHost(*plan, InLayout(e->inputs[0], conv.operand(0)->shape()),
                        InLayout(e->inputs[1], conv.operand(1)->shape()));
  absl::StatusOr<Literal> expected = e->expected.Convert(F64);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::vector<int64_t> offsets = PhysicalOffsets(conv.shape());
  ASSERT_EQ(out.size(), offsets.size());
  const ErrorSpec tolerance = ToleranceFor(conv.shape().element_type());
  int mismatches = 0;
  for (size_t i = 0; i < offsets.size() && mismatches < 5; ++i) {
    const double want = expected->data<double>()[i];
    const double got = out[offsets[i]];
    if (std::abs(want - got) > tolerance.abs + tolerance.rel * std::abs(want)) {
      ++mismatches;
      ADD_FAILURE() << c.name << ": row-major element " << i << " is " << got << ", the "
                    << "interpreter says " << want << "\n"
                    << ModuleText(c);
    }
  }
}

TEST_P(ConvolutionPlanTest, PtxassAcceptsTheKernel) {
  const ConvCase& c = GetParam();
  if (!PtxasPath().ok()) GTEST_SKIP() << "no ptxas: " << PtxasPath().status().message();
  auto module = ParseAndReturnUnverifiedModule(ModuleText(c));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<ConvPlan> plan = MakeConvPlan(*(*module)->entry_computation()->root_instruction());
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<PtxKernel> kernel = CompileConvolutionToPtx(*plan, "conv");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_THAT(kernel->ptx, HasSubstr(".entry conv("));
  EXPECT_EQ(kernel->grid * kernel->block >= plan->out_elements, true);
  absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
  EXPECT_TRUE(cubin.ok()) << c.name << ": " << cubin.status() << "\n" << kernel->ptx;
}

TEST(ConvolutionKernelTest, FewOutputsOfLongWindowsGetABlockEach) {
  for (absl::string_view name : {"weight_gradient_block", "lhs_dilated_block", "s8_block"}) {
    SCOPED_TRACE(name);
    auto module = ParseAndReturnUnverifiedModule(ModuleText(CaseNamed(name)));
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<ConvPlan> plan =
        MakeConvPlan(*(*module)->entry_computation()->root_instruction());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_GE(ConvWindowLength(*plan), 512);
    EXPECT_EQ(ConvWindowBlockSize(*plan), 128);
    absl::StatusOr<PtxKernel> kernel = CompileConvolutionToPtx(*plan, "conv");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ(kernel->grid, plan->out_elements);
    EXPECT_EQ(kernel->block, 128);
    // The threads' sums meet in shared memory.
    EXPECT_THAT(kernel->ptx, HasSubstr(".shared"));
    EXPECT_THAT(kernel->ptx, HasSubstr("bar.sync"));
  }
  // Many outputs, or short windows: a thread each.
  for (absl::string_view name : {"many_blocks", "nhwc_3x3_same"}) {
    auto module = ParseAndReturnUnverifiedModule(ModuleText(CaseNamed(name)));
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<ConvPlan> plan =
        MakeConvPlan(*(*module)->entry_computation()->root_instruction());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(ConvWindowBlockSize(*plan), 0) << name;
  }
}

TEST_P(ConvolutionPlanTest, CudnnTakesWhatItShould) {
  const ConvCase& c = GetParam();
  auto module = ParseAndReturnUnverifiedModule(ModuleText(c));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<ConvPlan> plan = MakeConvPlan(*(*module)->entry_computation()->root_instruction());
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<CudnnConvConfig> config = CudnnConvConfigFor(*plan);
  EXPECT_EQ(config.ok(), CudnnTakes(c.name)) << c.name << ": " << config.status();
  if (!config.ok()) {
    EXPECT_EQ(config.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(config.status().message(), HasSubstr("convolution conv:"));
    return;
  }
  EXPECT_GE(config->scratch_bytes(), config->workspace_limit);
  if (config->relayout_filter && PtxasPath().ok()) {
    absl::StatusOr<PtxKernel> relayout = CompileCudnnFilterRelayoutPtx(*config, "relayout");
    ASSERT_TRUE(relayout.ok()) << relayout.status();
    EXPECT_EQ(relayout->grid * relayout->block >= plan->rhs_elements ||
                  relayout->grid * relayout->block >= plan->out_elements,
              true);
    absl::StatusOr<std::string> cubin = AssemblePtx(relayout->ptx, "sm_90");
    EXPECT_TRUE(cubin.ok()) << c.name << ": " << cubin.status();
  }
}

// cuDNN's three calls as their documentation defines them, on the host, from
// the config alone: x (n, c, h, w) and y (n, k, p, q) at the descriptors'
// strides, the filter (k, c / groups, r, s) at its strides in its HLO
// buffer (what the relayout copies), y[n, k, p, q] = sum over c of k's
// group, r, s of x[n, c, p * stride - pad + r * dilation, ...] * w[k, c, r',
// s'] (r' = r for cross-correlation, else flipped); backward data and
// filter the same products summed into dx and dw. The result in its
// buffer's layout.
std::vector<double> RunCudnnConfigOnHost(const CudnnConvConfig& config,
                                         absl::Span<const double> lhs, absl::Span<const double> rhs,
                                         int64_t out_elements) {
  std::vector<double> out(out_elements, 0.0);
  const auto& xd = config.x_dims;
  const auto& yd = config.y_dims;
  const auto& wd = config.w_dims;
  const auto& xs = config.x_strides;
  const auto& ys = config.y_strides;
  const auto& ws = config.filter_strides;
  const int64_t k_per_group = yd[1] / config.groups;
  // The buffers each operand lives in.
  absl::Span<const double> x, y, w;
  switch (config.kind) {
    case CudnnConvKind::kForward:
      x = lhs, w = rhs;
      break;
    case CudnnConvKind::kBackwardData:
      y = lhs, w = rhs;
      break;
    case CudnnConvKind::kBackwardFilter:
      x = lhs, y = rhs;
      break;
  }
  for (int64_t n = 0; n < yd[0]; ++n) {
    for (int64_t k = 0; k < yd[1]; ++k) {
      const int64_t group = k / k_per_group;
      for (int64_t p = 0; p < yd[2]; ++p) {
        for (int64_t q = 0; q < yd[3]; ++q) {
          const int64_t y_at = n * ys[0] + k * ys[1] + p * ys[2] + q * ys[3];
          for (int64_t c = 0; c < wd[1]; ++c) {
            for (int64_t r = 0; r < wd[2]; ++r) {
              for (int64_t s = 0; s < wd[3]; ++s) {
                const int64_t h =
                    p * config.strides[0] - config.padding[0] + r * config.dilations[0];
                const int64_t v =
                    q * config.strides[1] - config.padding[1] + s * config.dilations[1];
                if (h < 0 || h >= xd[2] || v < 0 || v >= xd[3]) continue;
                const int64_t rr = config.cross_correlation ? r : wd[2] - 1 - r;
                const int64_t ss = config.cross_correlation ? s : wd[3] - 1 - s;
                const int64_t x_at =
                    n * xs[0] + (group * wd[1] + c) * xs[1] + h * xs[2] + v * xs[3];
                const int64_t w_at = k * ws[0] + c * ws[1] + rr * ws[2] + ss * ws[3];
                switch (config.kind) {
                  case CudnnConvKind::kForward:
                    out[y_at] += x[x_at] * w[w_at];
                    break;
                  case CudnnConvKind::kBackwardData:
                    out[x_at] += y[y_at] * w[w_at];
                    break;
                  case CudnnConvKind::kBackwardFilter:
                    out[w_at] += y[y_at] * x[x_at];
                    break;
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// What cuDNN computes from the config is what the interpreter computes
// from the HLO convolution: the recognition of backward data and filter,
// and the descriptors' numbers, checked without a GPU.
TEST_P(ConvolutionPlanTest, CudnnConfigComputesTheConvolution) {
  const ConvCase& c = GetParam();
  if (!CudnnTakes(c.name)) GTEST_SKIP() << c.name << " runs on Axle's kernel";
  absl::StatusOr<Evaluated> e = Evaluate(c);
  ASSERT_TRUE(e.ok()) << e.status();
  const HloInstruction& conv = *e->module->entry_computation()->root_instruction();
  absl::StatusOr<ConvPlan> plan = MakeConvPlan(conv);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<CudnnConvConfig> config = CudnnConvConfigFor(*plan);
  ASSERT_TRUE(config.ok()) << config.status();
  const std::vector<double> out =
      RunCudnnConfigOnHost(*config, InLayout(e->inputs[0], conv.operand(0)->shape()),
                           InLayout(e->inputs[1], conv.operand(1)->shape()), plan->out_elements);
  absl::StatusOr<Literal> expected = e->expected.Convert(F64);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::vector<int64_t> offsets = PhysicalOffsets(conv.shape());
  ASSERT_EQ(out.size(), offsets.size());
  const ErrorSpec tolerance = ToleranceFor(conv.shape().element_type());
  int mismatches = 0;
  for (size_t i = 0; i < offsets.size() && mismatches < 5; ++i) {
    const double want = expected->data<double>()[i];
    const double got = out[offsets[i]];
    if (std::abs(want - got) > tolerance.abs + tolerance.rel * std::abs(want)) {
      ++mismatches;
      ADD_FAILURE() << c.name << " (" << CudnnConvKindName(config->kind) << "): row-major element "
                    << i << " is " << got << ", the interpreter says " << want << "\n"
                    << ModuleText(c);
    }
  }
}

absl::StatusOr<CudnnConvConfig> ConfigOf(absl::string_view name) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        ParseAndReturnUnverifiedModule(ModuleText(CaseNamed(name))));
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan,
                        MakeConvPlan(*module->entry_computation()->root_instruction()));
  return CudnnConvConfigFor(plan);
}

TEST(CudnnConvConfigTest, DescribesNchwAndNhwcConvolutions) {
  absl::StatusOr<CudnnConvConfig> nchw = ConfigOf("nchw_kcrs_symmetric");
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  EXPECT_EQ(nchw->x_dims, (std::array<int, 4>{2, 3, 7, 6}));
  EXPECT_EQ(nchw->x_strides, (std::array<int, 4>{126, 42, 6, 1}));
  EXPECT_EQ(nchw->y_dims, (std::array<int, 4>{2, 4, 4, 4}));
  EXPECT_EQ(nchw->w_dims, (std::array<int, 4>{4, 3, 3, 3}));
  EXPECT_FALSE(nchw->filter_nhwc);
  EXPECT_FALSE(nchw->relayout_filter);
  EXPECT_EQ(nchw->padding, (std::array<int, 2>{1, 1}));
  EXPECT_EQ(nchw->strides, (std::array<int, 2>{2, 1}));
  EXPECT_EQ(nchw->dilations, (std::array<int, 2>{1, 2}));
  EXPECT_TRUE(nchw->cross_correlation);
  EXPECT_EQ(nchw->groups, 1);
  EXPECT_EQ(nchw->workspace_limit, 4 << 20);

  absl::StatusOr<CudnnConvConfig> nhwc = ConfigOf("nhwc_krsc_filter");
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  EXPECT_EQ(nhwc->x_strides, (std::array<int, 4>{144, 1, 24, 4}));
  EXPECT_TRUE(nhwc->filter_nhwc);
  EXPECT_FALSE(nhwc->relayout_filter);

  absl::StatusOr<CudnnConvConfig> hwio = ConfigOf("nhwc_3x3_same");
  ASSERT_TRUE(hwio.ok()) << hwio.status();
  EXPECT_TRUE(hwio->relayout_filter);
  EXPECT_EQ(hwio->filter_bytes, 3 * 3 * 3 * 4 * 4);
  EXPECT_EQ(hwio->workspace_offset(), 512);

  absl::StatusOr<CudnnConvConfig> nchw_hwio = ConfigOf("nchw_hwio_filter");
  ASSERT_TRUE(nchw_hwio.ok()) << nchw_hwio.status();
  EXPECT_FALSE(nchw_hwio->filter_nhwc);
  EXPECT_TRUE(nchw_hwio->relayout_filter);

  absl::StatusOr<CudnnConvConfig> reversed = ConfigOf("true_convolution");
  ASSERT_TRUE(reversed.ok()) << reversed.status();
  EXPECT_FALSE(reversed->cross_correlation);

  absl::StatusOr<CudnnConvConfig> grouped = ConfigOf("depthwise_strided");
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  EXPECT_EQ(grouped->groups, 4);
  EXPECT_EQ(grouped->w_dims, (std::array<int, 4>{8, 1, 3, 3}));
  EXPECT_EQ(grouped->kind, CudnnConvKind::kForward);
}

TEST(CudnnConvConfigTest, DescribesInputGradientsAsTheirForwardConvolution) {
  // dy [1,4,4,4] (k = 4) into dx [1,8,8,2] (c = 2): the forward
  // convolution of stride 2 and padding 4 - 1 - 2 = 1 that made dy from dx,
  // its 4x4 filter true-convolved (no HLO reversal), HWIO copied to KRSC.
  absl::StatusOr<CudnnConvConfig> nhwc = ConfigOf("backward_data_nhwc");
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  EXPECT_EQ(nhwc->kind, CudnnConvKind::kBackwardData);
  EXPECT_EQ(nhwc->x_dims, (std::array<int, 4>{1, 2, 8, 8}));
  EXPECT_EQ(nhwc->y_dims, (std::array<int, 4>{1, 4, 4, 4}));
  EXPECT_EQ(nhwc->w_dims, (std::array<int, 4>{4, 2, 4, 4}));
  EXPECT_EQ(nhwc->x_strides, (std::array<int, 4>{128, 1, 16, 2}));
  EXPECT_EQ(nhwc->padding, (std::array<int, 2>{1, 1}));
  EXPECT_EQ(nhwc->strides, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(nhwc->dilations, (std::array<int, 2>{1, 1}));
  EXPECT_FALSE(nhwc->cross_correlation);
  EXPECT_TRUE(nhwc->filter_nhwc);
  EXPECT_TRUE(nhwc->relayout_filter);
  // The HLO kernel's input feature (i, stride 2) is cuDNN's k.
  EXPECT_EQ(nhwc->filter_strides, (std::array<int64_t, 4>{2, 1, 32, 8}));
  EXPECT_EQ(CudnnFilterStrides(*nhwc), (std::array<int64_t, 4>{32, 1, 8, 2}));

  absl::StatusOr<CudnnConvConfig> nchw = ConfigOf("backward_data_nchw_in_place");
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  EXPECT_EQ(nchw->kind, CudnnConvKind::kBackwardData);
  EXPECT_TRUE(nchw->cross_correlation);
  EXPECT_FALSE(nchw->filter_nhwc);
  EXPECT_FALSE(nchw->relayout_filter);
  EXPECT_EQ(nchw->padding, (std::array<int, 2>{1, 1}));

  // Asymmetric padding is not cuDNN's (conv_padding_legalization.h makes
  // it symmetric first); nor are groups, f64 or batch groups.
  for (absl::string_view name : {"transposed_lhs_dilated", "lhs_dilated_block",
                                 "batch_groups_lhs_dilated", "f64_transposed", "everything"}) {
    absl::StatusOr<CudnnConvConfig> refused = ConfigOf(name);
    EXPECT_FALSE(refused.ok()) << name;
  }
}

TEST(CudnnConvConfigTest, DescribesWeightGradientsAsTheirForwardConvolution) {
  // x [2,9,9,3] (n = 2, c = 3) and dy [2,4,4,4] (k = 4): the forward
  // convolution's stride is the HLO window dilation; dw [3,3,3,4] (HWIO)
  // is written to the scratch as KRSC and copied out.
  absl::StatusOr<CudnnConvConfig> strided = ConfigOf("backward_filter_strided");
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_EQ(strided->kind, CudnnConvKind::kBackwardFilter);
  EXPECT_EQ(strided->x_dims, (std::array<int, 4>{2, 3, 9, 9}));
  EXPECT_EQ(strided->y_dims, (std::array<int, 4>{2, 4, 4, 4}));
  EXPECT_EQ(strided->w_dims, (std::array<int, 4>{4, 3, 3, 3}));
  EXPECT_EQ(strided->strides, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(strided->dilations, (std::array<int, 2>{1, 1}));
  EXPECT_EQ(strided->padding, (std::array<int, 2>{0, 0}));
  EXPECT_TRUE(strided->cross_correlation);
  EXPECT_TRUE(strided->filter_nhwc);
  EXPECT_TRUE(strided->relayout_filter);
  EXPECT_EQ(strided->filter_strides, (std::array<int64_t, 4>{1, 4, 36, 12}));

  absl::StatusOr<CudnnConvConfig> grouped = ConfigOf("backward_filter_groups");
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  EXPECT_EQ(grouped->kind, CudnnConvKind::kBackwardFilter);
  EXPECT_EQ(grouped->groups, 2);
  EXPECT_EQ(grouped->x_dims, (std::array<int, 4>{2, 4, 6, 6}));
  EXPECT_EQ(grouped->w_dims, (std::array<int, 4>{6, 2, 3, 3}));
  EXPECT_EQ(grouped->padding, (std::array<int, 2>{1, 1}));

  absl::StatusOr<CudnnConvConfig> in_place = ConfigOf("backward_filter_nchw_in_place");
  ASSERT_TRUE(in_place.ok()) << in_place.status();
  EXPECT_EQ(in_place->kind, CudnnConvKind::kBackwardFilter);
  EXPECT_FALSE(in_place->filter_nhwc);
  EXPECT_FALSE(in_place->relayout_filter);
  // The thunk's scratch: the workspace alone.
  EXPECT_EQ(in_place->workspace_offset(), 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvolutionPlanTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return std::string(info.param.name);
                         });

// The autotuning cache's key: one per shape, whatever the instruction's
// name; another for another format, kind or padding.
TEST(CudnnConvConfigTest, KeyNamesWhatTheAlgorithmDependsOn) {
  absl::StatusOr<CudnnConvConfig> nchw = ConfigOf("nchw_kcrs_symmetric");
  absl::StatusOr<CudnnConvConfig> nhwc = ConfigOf("nhwc_krsc_filter");
  absl::StatusOr<CudnnConvConfig> data = ConfigOf("backward_data_nhwc");
  ASSERT_TRUE(nchw.ok() && nhwc.ok() && data.ok());
  const std::string key = CudnnConvKey(*nchw);
  EXPECT_THAT(key, HasSubstr("cudnnConvolutionForward f32"));
  EXPECT_THAT(key, HasSubstr("format=nchw"));
  EXPECT_EQ(CudnnConvKey(*ConfigOf("nchw_kcrs_symmetric")), key);
  EXPECT_NE(CudnnConvKey(*nhwc), key);
  EXPECT_THAT(CudnnConvKey(*data), HasSubstr("cudnnConvolutionBackwardData"));
  CudnnConvConfig padded = *nchw;
  padded.padding[0] += 1;
  EXPECT_NE(CudnnConvKey(padded), key);
  CudnnConvConfig tf32 = *nchw;
  tf32.allow_tf32 = true;
  EXPECT_THAT(CudnnConvKey(tf32), HasSubstr(" tf32"));
  EXPECT_NE(CudnnConvKey(tf32), key);
}

// Every convolution thunk is recorded in CUDA graphs: its run's work is
// fixed in Initialize.
TEST(ConvolutionThunkTest, IsCapturedInGraphs) {
  for (const char* name : {"nchw_kcrs_symmetric", "backward_data_nhwc", "true_convolution"}) {
    auto module = ParseAndReturnUnverifiedModule(ModuleText(CaseNamed(name)));
    ASSERT_TRUE(module.ok()) << module.status();
    const HloInstruction& conv = *(*module)->entry_computation()->root_instruction();
    absl::StatusOr<std::unique_ptr<GpuThunk>> thunk = MakeConvolutionThunk(conv, {{0, 1}, {2}});
    ASSERT_TRUE(thunk.ok()) << thunk.status();
    EXPECT_TRUE((*thunk)->CapturableInGraph()) << name;
  }
}

TEST(ConvolutionPlanErrorsTest, NamesTheInstruction) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  lhs = c64[1,3,3,1] parameter(0)
  rhs = c64[2,2,1,1] parameter(1)
  ROOT complex_conv = c64[1,2,2,1] convolution(lhs, rhs), window={size=2x2}, dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<ConvPlan> plan = MakeConvPlan(*(*module)->entry_computation()->root_instruction());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(plan.status().message(), HasSubstr("complex_conv"));

  auto wrong = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  lhs = f32[1,3,3,1] parameter(0)
  rhs = f32[2,2,1,1] parameter(1)
  ROOT bad_conv = f32[1,3,3,1] convolution(lhs, rhs), window={size=2x2}, dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  plan = MakeConvPlan(*(*wrong)->entry_computation()->root_instruction());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("bad_conv"));

  const HloInstruction& conv = *(*wrong)->entry_computation()->root_instruction();
  absl::StatusOr<std::unique_ptr<GpuThunk>> thunk = MakeConvolutionThunk(conv, {{0}, {1}});
  ASSERT_FALSE(thunk.ok());
  EXPECT_THAT(thunk.status().message(), HasSubstr("expected the value ids of 2 operand(s)"));
}

// On a GPU: the thunk on device buffers against the interpreter.
class ConvolutionDeviceTest
    : public CudaDeviceTest<::testing::TestWithParam<std::tuple<ConvCase, ConvolutionBackend>>> {};

TEST_P(ConvolutionDeviceTest, ThunkMatchesInterpreter) {
  const ConvCase& c = std::get<0>(GetParam());
  const ConvolutionBackend backend = std::get<1>(GetParam());
  absl::StatusOr<Evaluated> e = Evaluate(c);
  ASSERT_TRUE(e.ok()) << e.status();
  const HloInstruction& conv = *e->module->entry_computation()->root_instruction();
  PtxOptions options;
  if (device_->compute_capability_major() < 9) options.arch = device_->ArchName();
  absl::StatusOr<std::unique_ptr<ConvolutionThunk>> thunk =
      MakeConvolutionThunkWithBackend(conv, {{0, 1}, {2}}, backend, options);
  ASSERT_TRUE(thunk.ok()) << thunk.status();
  absl::Status initialized = (*thunk)->Initialize(*device_);
  ASSERT_TRUE(initialized.ok()) << initialized;
  if (backend == ConvolutionBackend::kAuto && CudnnTakes(c.name)) {
    if (absl::StrContains((*thunk)->cudnn_fallback_reason(), "unavailable")) {
      GTEST_SKIP() << (*thunk)->cudnn_fallback_reason();
    }
    EXPECT_TRUE((*thunk)->uses_cudnn()) << c.name << ": " << (*thunk)->cudnn_fallback_reason();
    EXPECT_THAT((*thunk)->tuning_note(), HasSubstr("cuDNN"));
  } else if (backend == ConvolutionBackend::kFastest && CudnnTakes(c.name)) {
    // cuDNN, or the kernel where it timed faster (and said so).
    if (absl::StrContains((*thunk)->cudnn_fallback_reason(), "unavailable")) {
      GTEST_SKIP() << (*thunk)->cudnn_fallback_reason();
    }
    if (!(*thunk)->uses_cudnn()) {
      EXPECT_THAT((*thunk)->cudnn_fallback_reason(), HasSubstr("timed faster"));
    }
  } else {
    EXPECT_FALSE((*thunk)->uses_cudnn());
  }

  std::vector<ScopedShapedBuffer> buffers;
  std::vector<se::DeviceMemoryBase> memory;
  for (int64_t i = 0; i < 3; ++i) {
    const Shape& shape = i < 2 ? conv.operand(i)->shape() : conv.shape();
    auto buffer = AllocateCudaShapedBuffer(shape, allocator_.get(), stream_.get());
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    if (i < 2) {
      ASSERT_TRUE(TransferLiteralToCuda(stream_.get(), e->inputs[i], *buffer).ok());
    }
    memory.push_back(buffer->root_buffer());
    buffers.push_back(*std::move(buffer));
  }
  GpuThunkContext context;
  std::optional<ScopedShapedBuffer> scratch;
  if ((*thunk)->scratch_bytes() > 0) {
    auto buffer = AllocateCudaShapedBuffer(ShapeUtil::MakeShape(U8, {(*thunk)->scratch_bytes()}),
                                           allocator_.get(), stream_.get());
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    scratch = *std::move(buffer);
    context.scratch = scratch->root_buffer();
  }
  context.device = device_.get();
  context.stream = stream_.get();
  context.buffers = memory;
  absl::Status status = (*thunk)->Execute(context);
  ASSERT_TRUE(status.ok()) << status;
  absl::StatusOr<Literal> actual = TransferLiteralFromCuda(stream_.get(), buffers[2]);
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::StatusOr<Literal> expected = e->expected.Convert(conv.shape().element_type());
  ASSERT_TRUE(expected.ok());
  // cuDNN computes f32 in TF32 where XLA:GPU would (tf32.h); the kernel never.
  ErrorSpec tolerance = ToleranceFor(conv.shape().element_type());
  if (backend != ConvolutionBackend::kKernel && Tf32Enabled() && ComputesInTf32(conv)) {
    tolerance = Tf32ErrorSpec(tolerance, *expected);
  }
  absl::Status near = LiteralsNear(*expected, *actual, tolerance);
  EXPECT_TRUE(near.ok()) << c.name << ": " << near << "\n" << ModuleText(c);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvolutionDeviceTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(ConvolutionBackend::kKernel, ConvolutionBackend::kAuto,
                                         ConvolutionBackend::kFastest)),
    [](const ::testing::TestParamInfo<std::tuple<ConvCase, ConvolutionBackend>>& info) {
      const ConvolutionBackend backend = std::get<1>(info.param);
      return absl::StrCat(std::get<0>(info.param).name,
                          backend == ConvolutionBackend::kKernel ? "_kernel"
                          : backend == ConvolutionBackend::kAuto ? "_auto"
                                                                 : "_fastest");
    });

// Two thunks of one shape take one autotuning result (the process's
// cache): the same backend and algorithm.
class ConvolutionTuningDeviceTest : public CudaDeviceTest<> {};

TEST_F(ConvolutionTuningDeviceTest, OneShapeIsTunedOnce) {
  auto module = ParseAndReturnUnverifiedModule(ModuleText(CaseNamed("nhwc_3x3_same")));
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& conv = *(*module)->entry_computation()->root_instruction();
  PtxOptions options;
  if (device_->compute_capability_major() < 9) options.arch = device_->ArchName();
  std::unique_ptr<ConvolutionThunk> thunks[2];
  for (auto& thunk : thunks) {
    absl::StatusOr<std::unique_ptr<ConvolutionThunk>> made =
        MakeConvolutionThunkWithBackend(conv, {{0, 1}, {2}}, ConvolutionBackend::kFastest, options);
    ASSERT_TRUE(made.ok()) << made.status();
    thunk = *std::move(made);
    absl::Status initialized = thunk->Initialize(*device_);
    ASSERT_TRUE(initialized.ok()) << initialized;
  }
  if (absl::StrContains(thunks[0]->cudnn_fallback_reason(), "unavailable")) {
    GTEST_SKIP() << thunks[0]->cudnn_fallback_reason();
  }
  EXPECT_EQ(thunks[0]->uses_cudnn(), thunks[1]->uses_cudnn());
  EXPECT_EQ(thunks[0]->tuning_note(), thunks[1]->tuning_note());
  EXPECT_THAT(thunks[0]->tuning_note(), HasSubstr("timed against Axle's kernel"));
}

}  // namespace
}  // namespace axle::gpu
