//===- gemm_thunk_test.cc - Dots as cuBLAS GEMMs ----------------------------===//
//
// GemmPlanTest (any machine): for many dimension numbers, shapes and
// layouts, the plan's parameters (transposes, m/n/k, leading dimensions,
// batch strides, operand swap) are executed by a host reference GEMM on
// the operands laid out as on the device, and the result is compared with
// the interpreter's. This checks the derivation without a GPU.
//
// GemmThunkTest (a GPU): the same dots through MakeGemmThunk on device
// buffers, compared with the interpreter; skipped, with a message, where
// there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gemm_thunk.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/shape_util.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/cuda_device_test_util.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/dot_canonicalizer.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#ifndef AXLE_GPU_JAX_DIR
#define AXLE_GPU_JAX_DIR ""
#endif

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;
using Complex = std::complex<double>;

// A dot of `lhs` x `rhs` -> `out` (shapes with layouts) with `attributes`.
std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT d = ", out, " dot(a, b), ", attributes, "\n}\n");
}

struct DotCase {
  std::string name;
  std::string text;
};

// Dots a GEMM expresses directly: every dimension-number shape, and
// layouts that put operands and results in either orientation, batch
// dimensions inside the matrices, degenerate sizes.
std::vector<DotCase> GemmCases(const std::string& t, const std::string& out_t) {
  auto s = [&](const std::string& type, const std::string& rest) { return type + rest; };
  return {
      {"RowMajor", DotModule(s(t, "[5,7]{1,0}"), s(t, "[7,3]{1,0}"), s(out_t, "[5,3]{1,0}"),
                             "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      {"ColumnMajorOperands",
       DotModule(s(t, "[5,7]{0,1}"), s(t, "[7,3]{0,1}"), s(out_t, "[5,3]{1,0}"),
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      {"ColumnMajorResult",
       DotModule(s(t, "[5,7]{1,0}"), s(t, "[7,3]{1,0}"), s(out_t, "[5,3]{0,1}"),
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      {"TransposedRhs", DotModule(s(t, "[6,9]{1,0}"), s(t, "[4,9]{1,0}"), s(out_t, "[6,4]{1,0}"),
                                  "lhs_contracting_dims={1}, rhs_contracting_dims={1}")},
      {"TransposedLhs", DotModule(s(t, "[9,6]{1,0}"), s(t, "[9,4]{1,0}"), s(out_t, "[6,4]{0,1}"),
                                  "lhs_contracting_dims={0}, rhs_contracting_dims={0}")},
      {"Batched",
       DotModule(s(t, "[3,5,7]{2,1,0}"), s(t, "[3,7,4]{2,1,0}"), s(out_t, "[3,5,4]{2,1,0}"),
                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                 "rhs_batch_dims={0}, rhs_contracting_dims={1}")},
      {"BatchedTransposedLayouts",
       DotModule(s(t, "[3,5,7]{1,2,0}"), s(t, "[3,7,4]{1,2,0}"), s(out_t, "[3,5,4]{1,2,0}"),
                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                 "rhs_contracting_dims={1}")},
      {"BatchInsideTheMatrix",
       DotModule(s(t, "[5,3,7]{2,1,0}"), s(t, "[3,7,4]{2,1,0}"), s(out_t, "[3,5,4]{2,1,0}"),
                 "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                 "rhs_contracting_dims={1}")},
      {"BatchBetweenRowsAndColumns",
       DotModule(s(t, "[3,5,7]{2,0,1}"), s(t, "[3,7,4]{2,1,0}"), s(out_t, "[3,5,4]{2,1,0}"),
                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                 "rhs_contracting_dims={1}")},
      {"TwoBatchDims", DotModule(s(t, "[2,3,4,5]{3,2,1,0}"), s(t, "[2,3,5,6]{3,2,1,0}"),
                                 s(out_t, "[2,3,4,6]{3,2,1,0}"),
                                 "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
                                 "rhs_batch_dims={0,1}, rhs_contracting_dims={2}")},
      {"TwoContractingDims",
       DotModule(s(t, "[4,3,5]{2,1,0}"), s(t, "[3,5,6]{2,1,0}"), s(out_t, "[4,6]{1,0}"),
                 "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}")},
      {"TwoFreeDimsEach",
       DotModule(s(t, "[2,3,5]{2,1,0}"), s(t, "[5,4,2]{2,1,0}"), s(out_t, "[2,3,4,2]{3,2,1,0}"),
                 "lhs_contracting_dims={2}, rhs_contracting_dims={0}")},
      {"MatrixVector", DotModule(s(t, "[6,8]{1,0}"), s(t, "[8]{0}"), s(out_t, "[6]{0}"),
                                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      {"VectorMatrix", DotModule(s(t, "[8]{0}"), s(t, "[8,6]{1,0}"), s(out_t, "[6]{0}"),
                                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}")},
      {"VectorTransposedMatrix", DotModule(s(t, "[8]{0}"), s(t, "[6,8]{1,0}"), s(out_t, "[6]{0}"),
                                           "lhs_contracting_dims={0}, rhs_contracting_dims={1}")},
      {"InnerProduct", DotModule(s(t, "[8]{0}"), s(t, "[8]{0}"), s(out_t, "[]"),
                                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}")},
      {"OuterProduct", DotModule(s(t, "[5]{0}"), s(t, "[4]{0}"), s(out_t, "[5,4]{1,0}"),
                                 "lhs_contracting_dims={}, rhs_contracting_dims={}")},
      {"SizeOneDims",
       DotModule(s(t, "[1,5,1,7]{3,2,1,0}"), s(t, "[1,7,1]{2,1,0}"), s(out_t, "[1,5,1,1]{3,2,1,0}"),
                 "lhs_batch_dims={0}, lhs_contracting_dims={3}, "
                 "rhs_batch_dims={0}, rhs_contracting_dims={1}")},
      {"BatchedMatrixVector",
       DotModule(s(t, "[4,6,8]{2,1,0}"), s(t, "[4,8]{1,0}"), s(out_t, "[4,6]{1,0}"),
                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                 "rhs_contracting_dims={1}")},
  };
}

// Deterministic inputs, varied by `seed`: floats in [-2, 2) (exact in
// bf16 and f16), integers in [-50, 50).
Literal MakeInput(const Shape& shape, int seed) {
  Literal literal(shape);
  const int64_t count = shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = (i * 7919 + int64_t{seed} * 104729) % 64;
    const double value = static_cast<double>(k) / 16.0 - 2.0;
    const double imaginary = static_cast<double>((k * 5 + 3) % 64) / 16.0 - 2.0;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(value);
        break;
      case F64:
        literal.data<double>()[i] = value;
        break;
      case F16:
        literal.data<half>()[i] = half(value);
        break;
      case BF16:
        literal.data<bfloat16>()[i] = bfloat16(value);
        break;
      case C64:
        literal.data<std::complex<float>>()[i] = {static_cast<float>(value),
                                                  static_cast<float>(imaginary)};
        break;
      case C128:
        literal.data<Complex>()[i] = {value, imaginary};
        break;
      case S8:
        literal.data<int8_t>()[i] = static_cast<int8_t>(k % 100 - 50);
        break;
      default:
        break;
    }
  }
  return literal;
}

// Element `i` (row-major) of `literal` as a complex double.
Complex ElementAt(const Literal& literal, int64_t i) {
  switch (literal.shape().element_type()) {
    case F32:
      return literal.data<float>()[i];
    case F64:
      return literal.data<double>()[i];
    case F16:
      return static_cast<float>(literal.data<half>()[i]);
    case BF16:
      return static_cast<float>(literal.data<bfloat16>()[i]);
    case C64:
      return Complex(literal.data<std::complex<float>>()[i]);
    case C128:
      return literal.data<Complex>()[i];
    case S8:
      return literal.data<int8_t>()[i];
    case S32:
      return literal.data<int32_t>()[i];
    default:
      return 0;
  }
}

// `literal`'s elements at their offsets in its shape's layout.
std::vector<Complex> Physical(const Literal& literal, const Shape& shape) {
  const std::vector<int64_t> strides = ShapeUtil::LayoutStrides(shape);
  const int64_t count = shape.num_elements();
  std::vector<Complex> out(count);
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) offset += index[d] * strides[d];
    out[offset] = ElementAt(literal, i);
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      if (++index[d] < shape.dimensions(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

// What cublasGemmStridedBatchedEx computes with the plan's parameters, on
// host buffers; an error for any index outside a buffer or an output
// element written twice or never.
absl::StatusOr<std::vector<Complex>> RunPlanOnHost(const GemmPlan& plan,
                                                   const std::vector<Complex>& lhs,
                                                   const std::vector<Complex>& rhs,
                                                   int64_t out_size) {
  const std::vector<Complex>& a = plan.swap_operands ? rhs : lhs;
  const std::vector<Complex>& b = plan.swap_operands ? lhs : rhs;
  std::vector<Complex> c(out_size);
  std::vector<int> writes(out_size, 0);
  auto at = [](const std::vector<Complex>& buffer, int64_t offset,
               const char* what) -> absl::StatusOr<Complex> {
    if (offset < 0 || offset >= static_cast<int64_t>(buffer.size())) {
      return absl::OutOfRangeError(
          absl::StrCat(what, " offset ", offset, " outside its ", buffer.size(), " elements"));
    }
    return buffer[offset];
  };
  for (int64_t batch = 0; batch < plan.batch; ++batch) {
    for (int64_t j = 0; j < plan.n; ++j) {
      for (int64_t i = 0; i < plan.m; ++i) {
        Complex sum = 0;
        for (int64_t l = 0; l < plan.k; ++l) {
          const int64_t a_offset =
              batch * plan.stride_a + (plan.transpose_a ? l + i * plan.lda : i + l * plan.lda);
          const int64_t b_offset =
              batch * plan.stride_b + (plan.transpose_b ? j + l * plan.ldb : l + j * plan.ldb);
          auto x = at(a, a_offset, "A");
          if (!x.ok()) return x.status();
          auto y = at(b, b_offset, "B");
          if (!y.ok()) return y.status();
          sum += *x * *y;
        }
        const int64_t c_offset = batch * plan.stride_c + i + j * plan.ldc;
        if (c_offset < 0 || c_offset >= out_size) {
          return absl::OutOfRangeError(
              absl::StrCat("C offset ", c_offset, " outside its ", out_size, " elements"));
        }
        c[c_offset] = sum;
        ++writes[c_offset];
      }
    }
  }
  for (int64_t i = 0; i < out_size; ++i) {
    if (writes[i] != 1) {
      return absl::InternalError(
          absl::StrCat("C element ", i, " written ", writes[i], " times (expected once)"));
    }
  }
  return c;
}

// Plans the root dot of `text`, runs the plan on the host and compares
// with the interpreter.
void ExpectPlanMatchesInterpreter(const DotCase& test) {
  SCOPED_TRACE(test.name + ":\n" + test.text);
  auto module = ParseAndReturnUnverifiedModule(test.text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& dot = *(*module)->entry_computation()->root_instruction();
  EXPECT_TRUE(GemmSupports(dot));
  auto plan = MakeGemmPlan(dot, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  SCOPED_TRACE(plan->ToString());
  const Literal lhs = MakeInput(dot.operand(0)->shape(), 0);
  const Literal rhs = MakeInput(dot.operand(1)->shape(), 1);
  HloEvaluator evaluator;
  auto expected = evaluator.Evaluate(**module, {&lhs, &rhs});
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto actual = RunPlanOnHost(*plan, Physical(lhs, dot.operand(0)->shape()),
                              Physical(rhs, dot.operand(1)->shape()), dot.shape().num_elements());
  ASSERT_TRUE(actual.ok()) << actual.status();
  const std::vector<Complex> want = Physical(*expected, dot.shape());
  // The interpreter rounds f16 and bf16 results; the host GEMM does not.
  const PrimitiveType out = dot.shape().element_type();
  const double tolerance = out == F16 ? 1e-3 : out == BF16 ? 1e-2 : 1e-4;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::abs(want[i] - (*actual)[i]), tolerance * (1 + std::abs(want[i])))
        << "physical element " << i << ": interpreter " << want[i] << ", plan " << (*actual)[i];
  }
}

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

// Every dot of the JAX programs in ../shared/jax (XLA's optimized modules
// and the originals) plans as a GEMM, directly or after
// GpuDotCanonicalizer; those of up to 2^22 multiply-adds also run on the
// host and match the interpreter.
TEST(GemmPlanTest, EveryDotOfTheJaxProgramsPlans) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(AXLE_GPU_JAX_DIR, error)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
  }
  if (files.empty()) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::sort(files.begin(), files.end());
  int dots = 0, canonicalized = 0;
  for (const std::string& path : files) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    auto module = ParseAndReturnUnverifiedModule(text.str());
    if (!module.ok()) continue;  // (ptx_jax_fusions_test.cc parses them)
    for (const HloComputation* computation : (*module)->computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        if (instruction->opcode() != HloOpcode::kDot) continue;
        ++dots;
        const auto& numbers = cast<HloDotInstruction>(instruction)->dot_dimension_numbers();
        const std::string attributes = absl::StrCat(
            "lhs_batch_dims={", Dims(numbers.lhs_batch_dimensions()), "}, lhs_contracting_dims={",
            Dims(numbers.lhs_contracting_dimensions()), "}, rhs_batch_dims={",
            Dims(numbers.rhs_batch_dimensions()), "}, rhs_contracting_dims={",
            Dims(numbers.rhs_contracting_dimensions()), "}");
        auto with_layout = [](const Shape& shape) {
          return shape.has_layout() ? shape.ToString(true) : WithDescendingLayout(shape).ToString();
        };
        const DotCase test{absl::StrCat(path, " %", instruction->name()),
                           DotModule(with_layout(instruction->operand(0)->shape()),
                                     with_layout(instruction->operand(1)->shape()),
                                     with_layout(instruction->shape()), attributes)};
        SCOPED_TRACE(test.name);
        if (!GemmSupportsTypes(*instruction)) {
          ADD_FAILURE() << "no GEMM for the types of " << test.text;
          continue;
        }
        if (!GemmSupports(*instruction)) {
          ++canonicalized;
          auto single = ParseAndReturnUnverifiedModule(test.text);
          ASSERT_TRUE(single.ok()) << single.status();
          GpuDotCanonicalizer pass;
          auto changed = pass.Run(single->get());
          ASSERT_TRUE(changed.ok()) << changed.status();
          for (const HloInstruction* dot : (*single)->entry_computation()->instructions()) {
            if (dot->opcode() == HloOpcode::kDot) {
              EXPECT_TRUE(GemmSupports(*dot)) << (*single)->ToString();
            }
          }
          continue;
        }
        auto plan = MakeGemmPlan(*instruction, false);
        ASSERT_TRUE(plan.ok()) << plan.status();
        if (plan->batch * plan->m * plan->n * plan->k <= (int64_t{1} << 22)) {
          ExpectPlanMatchesInterpreter(test);
        }
      }
    }
  }
  std::cout << "[ jax dots ] " << dots << " dots, " << canonicalized << " canonicalized\n";
  EXPECT_GT(dots, 10);
}

TEST(GemmPlanTest, F32DotsMatchTheInterpreter) {
  for (const DotCase& test : GemmCases("f32", "f32")) ExpectPlanMatchesInterpreter(test);
}

TEST(GemmPlanTest, OtherTypesMatchTheInterpreter) {
  for (const auto& [t, out] : std::vector<std::pair<std::string, std::string>>{
           {"f64", "f64"}, {"c64", "c64"}, {"c128", "c128"}, {"bf16", "f32"}, {"f16", "f16"}}) {
    for (const DotCase& test : GemmCases(t, out)) {
      if (test.name == "RowMajor" || test.name == "BatchedTransposedLayouts" ||
          test.name == "TransposedRhs") {
        ExpectPlanMatchesInterpreter(test);
      }
    }
  }
}

TEST(GemmPlanTest, RowMajorResultIsTheSwappedColumnMajorProduct) {
  auto module = ParseAndReturnUnverifiedModule(
      DotModule("f32[5,7]{1,0}", "f32[7,3]{1,0}", "f32[5,3]{1,0}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(module.ok()) << module.status();
  auto plan = MakeGemmPlan(*(*module)->entry_computation()->root_instruction(), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->swap_operands);
  EXPECT_FALSE(plan->transpose_a);
  EXPECT_FALSE(plan->transpose_b);
  EXPECT_EQ(plan->m, 3);
  EXPECT_EQ(plan->n, 5);
  EXPECT_EQ(plan->k, 7);
  EXPECT_EQ(plan->lda, 3);
  EXPECT_EQ(plan->ldb, 7);
  EXPECT_EQ(plan->ldc, 3);
  EXPECT_EQ(plan->compute, GemmCompute::kF32);
}

TEST(GemmPlanTest, Tf32OnlyWhenAllowedAndBelowHighest) {
  const std::string attributes = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  for (const auto& [precision, want] : std::vector<std::pair<std::string, GemmCompute>>{
           {"", GemmCompute::kTf32},
           {", operand_precision={high,high}", GemmCompute::kTf32},
           {", operand_precision={highest,highest}", GemmCompute::kF32},
           {", operand_precision={default,highest}", GemmCompute::kF32}}) {
    auto module = ParseAndReturnUnverifiedModule(
        DotModule("f32[4,4]{1,0}", "f32[4,4]{1,0}", "f32[4,4]{1,0}", attributes + precision));
    ASSERT_TRUE(module.ok()) << module.status();
    const HloInstruction& dot = *(*module)->entry_computation()->root_instruction();
    auto with_tf32 = MakeGemmPlan(dot, true);
    ASSERT_TRUE(with_tf32.ok()) << with_tf32.status();
    EXPECT_EQ(with_tf32->compute, want) << precision;
    auto without = MakeGemmPlan(dot, false);
    ASSERT_TRUE(without.ok()) << without.status();
    EXPECT_EQ(without->compute, GemmCompute::kF32) << precision;
  }
}

TEST(GemmPlanTest, Int8DotsNeedLeadingDimensionsOfFour) {
  const std::string attributes = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  DotCase aligned{"S8", DotModule("s8[8,12]{1,0}", "s8[12,4]{1,0}", "s32[8,4]{1,0}", attributes)};
  ExpectPlanMatchesInterpreter(aligned);
  auto module = ParseAndReturnUnverifiedModule(
      DotModule("s8[8,6]{1,0}", "s8[6,3]{1,0}", "s32[8,3]{1,0}", attributes));
  ASSERT_TRUE(module.ok()) << module.status();
  auto plan = MakeGemmPlan(*(*module)->entry_computation()->root_instruction(), false);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented) << plan.status();
  EXPECT_THAT(plan.status().message(), HasSubstr("multiple of 4"));
  EXPECT_THAT(plan.status().message(), HasSubstr("%d"));
}

TEST(GemmPlanTest, RefusesWhatNoGemmExpressesNamingTheDot) {
  struct Refused {
    std::string text;
    std::string why;
  };
  for (const Refused& refused : std::vector<Refused>{
           // Contracting dims around a free one.
           {DotModule("f32[3,4,5]{2,1,0}", "f32[3,5,6]{2,1,0}", "f32[4,6]{1,0}",
                      "lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}"),
            "contracting"},
           // Contracting dims nested in opposite orders in lhs and rhs.
           {DotModule("f32[4,3,5]{2,1,0}", "f32[5,3,6]{2,1,0}", "f32[4,6]{1,0}",
                      "lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}"),
            "contracting"},
           // The result's dense dimension is its batch dimension.
           {DotModule("f32[3,5,7]{2,1,0}", "f32[3,7,4]{2,1,0}", "f32[3,5,4]{0,2,1}",
                      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                      "rhs_contracting_dims={1}"),
            "dense"},
           {DotModule("f32[4,4]{1,0}", "f32[4,4]{1,0}", "s32[4,4]{1,0}",
                      "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
            "no GEMM for f32 x f32 -> s32"},
       }) {
    auto module = ParseAndReturnUnverifiedModule(refused.text);
    ASSERT_TRUE(module.ok()) << module.status();
    const HloInstruction& dot = *(*module)->entry_computation()->root_instruction();
    EXPECT_FALSE(GemmSupports(dot)) << refused.text;
    auto plan = MakeGemmPlan(dot, false);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented) << refused.text;
    EXPECT_THAT(plan.status().message(), HasSubstr(refused.why)) << refused.text;
    EXPECT_THAT(plan.status().message(), HasSubstr("dot %d")) << refused.text;
  }
}

// --- On a GPU ---------------------------------------------------------------

class GemmThunkTest : public CudaDeviceTest<> {
 protected:
  // Runs the root dot of `test` through MakeGemmThunk on the device and
  // compares with the interpreter (bf16/f16 results at their precision;
  // f32 and c64 within TF32's bounds where the plan computes in TF32).
  void ExpectThunkMatchesInterpreter(const DotCase& test, ErrorSpec error) {
    SCOPED_TRACE(test.name + ":\n" + test.text);
    auto module = ParseAndReturnUnverifiedModule(test.text);
    ASSERT_TRUE(module.ok()) << module.status();
    const HloInstruction& dot = *(*module)->entry_computation()->root_instruction();
    auto plan = MakeGemmPlan(dot);
    ASSERT_TRUE(plan.ok()) << plan.status();
    SCOPED_TRACE(plan->ToString());
    auto thunk = MakeGemmThunk(dot, GpuThunkValues{{0, 1}, {2}});
    ASSERT_TRUE(thunk.ok()) << thunk.status();
    absl::Status initialized = (*thunk)->Initialize(*device_);
    if (absl::IsUnavailable(initialized)) GTEST_SKIP() << initialized.message();
    ASSERT_TRUE(initialized.ok()) << initialized;

    const Literal lhs = MakeInput(dot.operand(0)->shape(), 0);
    const Literal rhs = MakeInput(dot.operand(1)->shape(), 1);
    HloEvaluator evaluator;
    auto expected = evaluator.Evaluate(**module, {&lhs, &rhs});
    ASSERT_TRUE(expected.ok()) << expected.status();
    if (plan->compute == GemmCompute::kTf32) error = Tf32ErrorSpec(error, *expected);

    std::vector<ScopedShapedBuffer> buffers;
    std::vector<se::DeviceMemoryBase> values;
    for (const Literal* input : {&lhs, &rhs}) {
      auto buffer = AllocateCudaShapedBuffer(input->shape(), allocator_.get(), stream_.get());
      ASSERT_TRUE(buffer.ok()) << buffer.status();
      if (input->size_bytes() > 0) {  // (an empty operand has no memory)
        absl::Status copied = TransferLiteralToCuda(stream_.get(), *input, *buffer);
        ASSERT_TRUE(copied.ok()) << copied;
      }
      values.push_back(buffer->root_buffer());
      buffers.push_back(*std::move(buffer));
    }
    auto result = AllocateCudaShapedBuffer(dot.shape(), allocator_.get(), stream_.get());
    ASSERT_TRUE(result.ok()) << result.status();
    values.push_back(result->root_buffer());
    auto scratch = allocator_->Allocate(0, (*thunk)->scratch_bytes());
    ASSERT_TRUE(scratch.ok()) << scratch.status();

    GpuThunkContext context;
    context.device = device_.get();
    context.stream = stream_.get();
    context.buffers = values;
    context.scratch = scratch->cref();
    absl::Status executed = (*thunk)->Execute(context);
    ASSERT_TRUE(executed.ok()) << executed;
    absl::Status synchronized = stream_->Synchronize();
    ASSERT_TRUE(synchronized.ok()) << synchronized;
    auto actual = TransferLiteralFromCuda(stream_.get(), *result);
    ASSERT_TRUE(actual.ok()) << actual.status();
    absl::Status near = LiteralsNear(*expected, *actual, error);
    EXPECT_TRUE(near.ok()) << near << "\nexpected " << expected->ToString() << "\nactual "
                           << actual->ToString();
  }
};

TEST_F(GemmThunkTest, F32DotsMatchTheInterpreter) {
  // TF32 unless AXLE_GPU_TF32=0 (ExpectThunkMatchesInterpreter widens).
  for (const DotCase& test : GemmCases("f32", "f32")) {
    ExpectThunkMatchesInterpreter(test, ErrorSpec(1e-4, 1e-4));
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

TEST_F(GemmThunkTest, OtherTypesMatchTheInterpreter) {
  struct Types {
    std::string t, out;
    ErrorSpec error;
  };
  for (const Types& types : std::vector<Types>{{"f64", "f64", ErrorSpec(1e-10, 1e-10)},
                                               {"c64", "c64", ErrorSpec(1e-4, 1e-4)},
                                               {"c128", "c128", ErrorSpec(1e-10, 1e-10)},
                                               {"bf16", "bf16", ErrorSpec(0.1, 1e-2)},
                                               {"bf16", "f32", ErrorSpec(1e-4, 1e-4)},
                                               {"f16", "f16", ErrorSpec(0.05, 1e-3)},
                                               {"f16", "f32", ErrorSpec(1e-4, 1e-4)}}) {
    for (const DotCase& test : GemmCases(types.t, types.out)) {
      ExpectThunkMatchesInterpreter(test, types.error);
      if (HasFatalFailure() || IsSkipped()) return;
    }
  }
}

TEST_F(GemmThunkTest, Int8DotsMatchTheInterpreter) {
  ExpectThunkMatchesInterpreter(
      {"S8", DotModule("s8[8,12]{1,0}", "s8[12,16]{1,0}", "s32[8,16]{1,0}",
                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      ErrorSpec(0));
}

TEST_F(GemmThunkTest, EmptyContractionGivesZeros) {
  ExpectThunkMatchesInterpreter(
      {"K0", DotModule("f32[4,0]{1,0}", "f32[0,3]{1,0}", "f32[4,3]{1,0}",
                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}")},
      ErrorSpec(0));
}

TEST_F(GemmThunkTest, LargeF32DotMatchesTheInterpreter) {
  ExpectThunkMatchesInterpreter(
      {"Large", DotModule("f32[8,256,384]{2,1,0}", "f32[8,384,200]{1,2,0}", "f32[8,256,200]{2,1,0}",
                          "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                          "rhs_contracting_dims={1}")},
      ErrorSpec(1e-3, 1e-4));
}

TEST_F(GemmThunkTest, BenchmarkAgainstCublasSgemm) {
  for (int64_t size : {1024, 4096}) {
    auto result = BenchmarkGemm(*device_, stream_.get(), size, size, size, 20);
    if (absl::IsUnavailable(result.status())) GTEST_SKIP() << result.status().message();
    ASSERT_TRUE(result.ok()) << result.status();
    // Informational: the lead reads these from the device check.
    std::cout << "[ gemm " << size << "^3 ] " << result->ToString() << "\n";
  }
}

}  // namespace
}  // namespace axle::gpu
