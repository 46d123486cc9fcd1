//===- dot_variants_to_dot_test.cc - ragged-dot and scaled-dot as dots -----===//
//
// Any machine: the pass leaves no ragged-dot or scaled-dot in modules of
// each form (ragged along a non-contracting dimension, with one group_sizes
// row and with one per batch, along a contracting one, along a batch one;
// block scales and scalar scales), and the interpreter computes the same
// before and after on inputs with empty, negative and short groups (rows
// past the last group); forms it cannot rewrite are left alone and the
// CUDA compiler refuses them naming the instruction; the modules compile
// for CUDA. On a GPU (skipped, with a message, without one): each module
// runs there and agrees with the interpreter.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/dot_variants_to_dot.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/types.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* name;
  const char* text;
};

const Case kCases[] = {
    {"non-contracting", R"(HloModule m
ENTRY e {
  a = f32[9,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  g = s32[3] parameter(2)
  ROOT r = f32[9,5] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})"},
    {"non-contracting, batched, groups per batch", R"(HloModule m
ENTRY e {
  a = f32[2,7,4] parameter(0)
  b = f32[2,3,4,5] parameter(1)
  g = s64[2,3] parameter(2)
  ROOT r = f32[2,7,5] ragged-dot(a, b, g), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
})"},
    {"contracting", R"(HloModule m
ENTRY e {
  a = f32[6,10] parameter(0)
  b = f32[10,5] parameter(1)
  g = s32[3] parameter(2)
  ROOT r = f32[3,6,5] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})"},
    {"contracting, batched", R"(HloModule m
ENTRY e {
  a = f32[2,6,10] parameter(0)
  b = f32[2,10,5] parameter(1)
  g = s32[3] parameter(2)
  ROOT r = f32[3,2,6,5] ragged-dot(a, b, g), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}
})"},
    {"batch", R"(HloModule m
ENTRY e {
  a = f32[3,6,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  g = s32[3] parameter(2)
  ROOT r = f32[3,6,5] ragged-dot(a, b, g), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
})"},
    {"block scales", R"(HloModule m
ENTRY e {
  a = f8e4m3fn[8,64] parameter(0)
  b = f8e5m2[6,64] parameter(1)
  sa = f8e8m0fnu[8,2] parameter(2)
  sb = f8e8m0fnu[6,2] parameter(3)
  ROOT r = f32[8,6] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})"},
    {"scalar scales, bf16", R"(HloModule m
ENTRY e {
  a = f8e4m3fn[4,32] parameter(0)
  b = f8e4m3fn[32,3] parameter(1)
  sa = f32[] parameter(2)
  sb = f8e8m0fnu[] parameter(3)
  ROOT r = bf16[4,3] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"},
};

// Deterministic values; group sizes with an empty, a negative and a
// too-short total (some rows in no group); scales powers of two.
Literal Input(const Shape& shape, int seed) {
  Literal literal(shape);
  const int64_t count = shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = (i * 7919 + int64_t{seed} * 104729) % 1000;
    const double value = static_cast<double>(k) / 250.0 - 2.0;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(value);
        break;
      case S32:
      case S64: {
        constexpr int64_t kSizes[] = {4, 0, 3, -1, 2, 3};
        const int64_t size = kSizes[(i + seed) % 6];
        if (shape.element_type() == S32) {
          literal.data<int32_t>()[i] = static_cast<int32_t>(size);
        } else {
          literal.data<int64_t>()[i] = size;
        }
        break;
      }
      case F8E4M3FN:
        literal.data<float8_e4m3fn>()[i] = float8_e4m3fn(value * 3);
        break;
      case F8E5M2:
        literal.data<float8_e5m2>()[i] = float8_e5m2(value * 3);
        break;
      case F8E8M0FNU:
        literal.data<float8_e8m0fnu>()[i] =
            float8_e8m0fnu(std::ldexp(1.0, static_cast<int>(k % 7) - 3));
        break;
      default:
        break;
    }
  }
  if (shape.element_type() == F32 && shape.rank() == 0) literal.data<float>()[0] = 0.75f;
  return literal;
}

std::vector<Literal> Inputs(const HloModule& module) {
  std::vector<Literal> inputs;
  const HloComputation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    inputs.push_back(Input(entry.parameter_instruction(i)->shape(), static_cast<int>(i) + 1));
  }
  return inputs;
}

absl::StatusOr<Literal> Evaluate(const HloModule& module, const std::vector<Literal>& inputs) {
  std::vector<const Literal*> pointers;
  pointers.reserve(inputs.size());
  for (const Literal& input : inputs) pointers.push_back(&input);
  HloEvaluator evaluator;
  return evaluator.Evaluate(module, pointers);
}

bool HasOpcode(const HloModule& module, HloOpcode opcode) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == opcode) return true;
    }
  }
  return false;
}

TEST(GpuDotVariantsToDotTest, RewritesEachFormAndComputesTheSame) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    auto before = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(before.ok()) << before.status();
    auto after = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(after.ok()) << after.status();
    GpuDotVariantsToDot pass;
    auto changed = pass.Run(after->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    EXPECT_FALSE(HasOpcode(**after, HloOpcode::kRaggedDot)) << (*after)->ToString();
    EXPECT_FALSE(HasOpcode(**after, HloOpcode::kScaledDot)) << (*after)->ToString();
    const std::vector<Literal> inputs = Inputs(**before);
    auto expected = Evaluate(**before, inputs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto actual = Evaluate(**after, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << (*after)->ToString();
    absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-5, 1e-5));
    EXPECT_TRUE(near.ok()) << near << "\nexpected " << expected->ToString() << "\nactual   "
                           << actual->ToString() << "\n"
                           << (*after)->ToString();
  }
}

TEST(GpuDotVariantsToDotTest, FormsItCannotRewriteAreRefusedNamingTheInstruction) {
  // Scales whose dimensions do not divide their operand's.
  const char* text = R"(HloModule m
ENTRY e {
  a = f8e4m3fn[8,64] parameter(0)
  b = f8e4m3fn[6,64] parameter(1)
  sa = f8e8m0fnu[8,3] parameter(2)
  sb = f8e8m0fnu[6,2] parameter(3)
  ROOT odd = f32[8,6] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  GpuDotVariantsToDot pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  auto again = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(again.ok()) << again.status();
  auto program = CompileGpuProgram(again->get());
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(program.status().message(), HasSubstr("odd"));
}

TEST(GpuDotVariantsToDotTest, ModulesCompileForCuda) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto program = CompileGpuProgram(module->get());
    EXPECT_TRUE(program.ok()) << program.status();
  }
}

// XLA's __op$block_scaled_dot: 2-D with an f32 result and 3-D (batched)
// with an f16 one, as XLA's BlockScalingRewriter tests write them.
const Case kBlockScaledCases[] = {
    {"block_scaled_dot", R"(HloModule m
ENTRY e {
  a = f8e4m3fn[8,64] parameter(0)
  b = f8e5m2[6,64] parameter(1)
  sa = f8e8m0fnu[8,2] parameter(2)
  sb = f8e8m0fnu[6,2] parameter(3)
  ROOT r = f32[8,6] custom-call(a, b, sa, sb), custom_call_target="__op$block_scaled_dot"
})"},
    {"block_scaled_dot, batched, f16", R"(HloModule m
ENTRY e {
  a = f8e4m3fn[2,4,96] parameter(0)
  b = f8e4m3fn[2,5,96] parameter(1)
  sa = f8e8m0fnu[2,4,3] parameter(2)
  sb = f8e8m0fnu[2,5,3] parameter(3)
  ROOT r = f16[2,4,5] custom-call(a, b, sa, sb), custom_call_target="__op$block_scaled_dot"
})"},
};

// sum_k a[.., m, k] sa[.., m, k / block] b[.., n, k] sb[.., n, k / block]
// in doubles, from the literals themselves.
std::vector<double> BlockScaledReference(const std::vector<Literal>& in) {
  const Shape& a = in[0].shape();
  const int64_t rank = a.rank();
  const int64_t batch = rank == 3 ? a.dimensions(0) : 1;
  const int64_t m = a.dimensions(rank - 2);
  const int64_t k = a.dimensions(rank - 1);
  const int64_t n = in[1].shape().dimensions(rank - 2);
  const int64_t blocks = in[2].shape().dimensions(rank - 1);
  auto at = [](const Literal& literal, int64_t i) {
    switch (literal.shape().element_type()) {
      case F8E4M3FN:
        return static_cast<double>(static_cast<float>(literal.data<float8_e4m3fn>()[i]));
      case F8E5M2:
        return static_cast<double>(static_cast<float>(literal.data<float8_e5m2>()[i]));
      default:
        return static_cast<double>(static_cast<float>(literal.data<float8_e8m0fnu>()[i]));
    }
  };
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t x = 0; x < k; ++x) {
          const int64_t block = x / (k / blocks);
          sum += at(in[0], (b * m + i) * k + x) * at(in[2], (b * m + i) * blocks + block) *
                 at(in[1], (b * n + j) * k + x) * at(in[3], (b * n + j) * blocks + block);
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

TEST(GpuDotVariantsToDotTest, BlockScaledDotCallsAreTheirExpansion) {
  for (const Case& c : kBlockScaledCases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    GpuDotVariantsToDot pass;
    auto changed = pass.Run(module->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    EXPECT_FALSE(HasOpcode(**module, HloOpcode::kCustomCall)) << (*module)->ToString();
    EXPECT_TRUE(HasOpcode(**module, HloOpcode::kDot)) << (*module)->ToString();
    const std::vector<Literal> inputs = Inputs(**module);
    auto got = Evaluate(**module, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    auto as_f64 = got->Convert(F64);
    ASSERT_TRUE(as_f64.ok()) << as_f64.status();
    const std::vector<double> want = BlockScaledReference(inputs);
    ASSERT_EQ(as_f64->data<double>().size(), want.size());
    // f8 values times power-of-two scales are exact in f16 and f32; the
    // sums round once per add in the result type.
    const double bound = got->shape().element_type() == F16 ? 2e-2 : 1e-5;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(as_f64->data<double>()[i], want[i], bound * (1 + std::abs(want[i]))) << i;
    }
  }
}

// On cuBLAS, with the dequantization in loop kernels ptxas accepts.
TEST(GpuDotVariantsToDotTest, BlockScaledDotCallsCompileForCuda) {
  for (const Case& c : kBlockScaledCases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto program = CompileGpuProgram(module->get());
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string listing = GpuProgramToString(*program);
    EXPECT_THAT(listing, HasSubstr("dot")) << listing;
    ASSERT_FALSE(program->kernels.empty()) << listing;
    for (const auto& kernel : program->kernels) {
      auto cubin = AssemblePtx(kernel->ptx, "sm_90");
      if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
        GTEST_SKIP() << "no ptxas: " << cubin.status().message();
      }
      EXPECT_TRUE(cubin.ok()) << kernel->name << ": " << cubin.status();
    }
  }
}

class DotVariantsDeviceTest : public test::GpuExecutableTest {};

// The call on cuda against its expansion on the interpreter.
TEST_F(DotVariantsDeviceTest, BlockScaledDotCallsAgreeWithTheirExpansion) {
  for (const Case& c : kBlockScaledCases) {
    SCOPED_TRACE(c.name);
    auto expanded = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    GpuDotVariantsToDot pass;
    ASSERT_TRUE(pass.Run(expanded->get()).ok());
    const std::vector<Literal> inputs = Inputs(**expanded);
    auto call = CompileFor(client_, c.text);
    ASSERT_TRUE(call.ok()) << call.status();
    auto reference = CompileFor(reference_, (*expanded)->ToString());
    ASSERT_TRUE(reference.ok()) << reference.status();
    auto got = RunWith(client_, **call, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = RunWith(reference_, **reference, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::Status near = LiteralsNear(*want, *got, ErrorSpec(2e-2, 2e-2));
    EXPECT_TRUE(near.ok()) << near;
  }
}

TEST_F(DotVariantsDeviceTest, AgreeWithTheInterpreter) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    // f32 products may run in TF32 (tf32.h): its bounds.
    ExpectMatchesInterpreter(c.text, ErrorSpec(2e-2, 2e-2), Inputs(**module));
  }
}

}  // namespace
}  // namespace axle::gpu
