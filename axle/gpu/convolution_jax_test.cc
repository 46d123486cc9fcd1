//===- convolution_jax_test.cc - The JAX programs' convolutions -------------===//
//
// Every kConvolution in XLA's optimized HLO of the JAX programs
// (../shared/jax/*.opt.hlo: CNN training steps with weight- and
// input-gradient convolutions, grouped, dilated and transposed ones):
// the plan evaluated on the host matches the interpreter (where it is
// small enough to run here quickly), the kernel's PTX passes ptxas, and
// the backend cuDNN would get is printed.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/eval/kernels.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

#ifndef AXLE_GPU_JAX_DIR
#define AXLE_GPU_JAX_DIR ""
#endif

namespace axle::gpu {
namespace {

std::vector<std::string> Programs() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(AXLE_GPU_JAX_DIR, error)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".opt.hlo";
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("none");
  return names;
}

// Row-major values in [-2, 2] of `shape` (as F64 and in its own type).
Literal SmallIntegers(const Shape& shape, int seed) {
  Literal values(ShapeUtil::MakeShape(F64, shape.dimensions()));
  absl::Span<double> data = values.data<double>();
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    data[i] = static_cast<double>((i * 7919 + int64_t{seed} * 104729) % 5 - 2);
  }
  return values;
}

// The values of a row-major F64 literal placed in `shape`'s layout.
std::vector<double> InLayout(const Literal& values, const Shape& shape) {
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
  std::vector<double> physical(shape.num_elements());
  int64_t i = 0;
  ShapeUtil::ForEachIndex(shape.dimensions(), [&](absl::Span<const int64_t> index) {
    int64_t offset = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) offset += index[d] * strides[d];
    physical[offset] = values.data<double>()[i++];
    return true;
  });
  return physical;
}

class ConvolutionJaxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvolutionJaxTest, EveryConvolutionPlansCompilesAndMatches) {
  const std::string path = absl::StrCat(AXLE_GPU_JAX_DIR, "/", GetParam(), ".opt.hlo");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::stringstream text;
  text << file.rdbuf();
  auto module = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(module.ok()) << module.status();
  int convolutions = 0;
  int checked_on_host = 0;
  for (const HloComputation* computation : (*module)->computations()) {
    for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      const auto* conv = dyn_cast<HloConvolutionInstruction>(instruction);
      if (conv == nullptr) continue;
      SCOPED_TRACE(conv->ToString());
      ++convolutions;
      absl::StatusOr<ConvPlan> plan = MakeConvPlan(*conv);
      ASSERT_TRUE(plan.ok()) << plan.status();
      absl::StatusOr<CudnnConvConfig> cudnn = CudnnConvConfigFor(*plan);
      std::cout << "  " << conv->name() << ": "
                << (cudnn.ok()
                        ? std::string(cudnn->relayout_filter ? "cuDNN (filter relaid)" : "cuDNN")
                        : absl::StrCat("Axle kernel (", cudnn.status().message(), ")"))
                << "\n";
      if (PtxasPath().ok()) {
        absl::StatusOr<PtxKernel> kernel = CompileConvolutionToPtx(*plan, "conv");
        ASSERT_TRUE(kernel.ok()) << kernel.status();
        absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
        EXPECT_TRUE(cubin.ok()) << cubin.status();
      }
      // Multiply-adds: the host check is skipped for the large ones.
      int64_t window = 1;
      for (const ConvSpatialPlan& s : plan->spatial) window *= s.window_size;
      if (plan->out_elements * window * plan->input_features_per_group > 150'000'000) continue;
      ++checked_on_host;
      const Shape& lhs_shape = conv->operand(0)->shape();
      const Shape& rhs_shape = conv->operand(1)->shape();
      const Literal lhs = SmallIntegers(lhs_shape, 0);
      const Literal rhs = SmallIntegers(rhs_shape, 1);
      absl::StatusOr<Literal> lhs_typed = lhs.Convert(lhs_shape.element_type());
      absl::StatusOr<Literal> rhs_typed = rhs.Convert(rhs_shape.element_type());
      ASSERT_TRUE(lhs_typed.ok() && rhs_typed.ok());
      absl::StatusOr<Literal> expected = EvaluateConvolution(*conv, *lhs_typed, *rhs_typed);
      ASSERT_TRUE(expected.ok()) << expected.status();
      absl::StatusOr<Literal> expected_f64 = expected->Convert(F64);
      ASSERT_TRUE(expected_f64.ok()) << expected_f64.status();
      const std::vector<double> out =
          RunConvPlanOnHost(*plan, InLayout(lhs, lhs_shape), InLayout(rhs, rhs_shape));
      // The interpreter's row-major result in the output's layout.
      const std::vector<double> want = InLayout(*expected_f64, conv->shape());
      ASSERT_EQ(want.size(), out.size());
      int mismatches = 0;
      for (size_t i = 0; i < out.size() && mismatches < 5; ++i) {
        const double tolerance = 1e-3 * std::max(1.0, std::abs(want[i]));
        if (std::abs(want[i] - out[i]) > tolerance) {
          ++mismatches;
          ADD_FAILURE() << conv->name() << ": element " << i << " (in the output's layout) is "
                        << out[i] << ", the interpreter says " << want[i];
        }
      }
    }
  }
  if (convolutions > 0) {
    std::cout << GetParam() << ": " << convolutions << " convolutions, " << checked_on_host
              << " checked against the interpreter on the host\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, ConvolutionJaxTest, ::testing::ValuesIn(Programs()));

}  // namespace
}  // namespace axle::gpu
