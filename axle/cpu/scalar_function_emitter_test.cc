//===- scalar_function_emitter_test.cc - Scalar functions in a module ------===//
//
// LoopKernelModule::AddScalarFunction: a comparator computes its values
// through the result pointer; structurally identical computations share one
// function, different ones (or a loop kernel of the same computation, whose
// calling convention differs) do not; a precompiled Jit resolves them
// without LLVM; a computation that is not a function of scalars is
// Unimplemented, naming the instruction.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <memory>
#include <string>

#include "axle/cpu/jit.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr char kComputations[] = R"(
HloModule scalar_functions
lt_a {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT lt = pred[] compare(p0, p1), direction=LT
}
lt_b {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = pred[] compare(x, y), direction=LT
}
gt {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT gt = pred[] compare(p0, p1), direction=GT
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
not_scalar {
  v = f32[4] parameter(0)
  ROOT r = f32[4] negate(v)
}
ENTRY e {
  ROOT x = f32[] parameter(0)
}
)";

bool Compare(const CompiledScalarFunction& function, float lhs, float rhs) {
  const void* parameters[] = {&lhs, &rhs};
  int8_t result = -1;
  void* results[] = {&result};
  function.Run(parameters, results);
  return result != 0;
}

float Sum(const CompiledScalarFunction& function, float a, float b) {
  const void* parameters[] = {&a, &b};
  float result = 0;
  void* results[] = {&result};
  function.Run(parameters, results);
  return result;
}

TEST(ScalarFunctionEmitterTest, IdenticalComputationsShareOneFunction) {
  auto module = ParseAndReturnUnverifiedModule(kComputations);
  ASSERT_TRUE(module.ok()) << module.status();
  LoopKernelModule functions("scalars", CpuCompileOptions());
  std::vector<std::unique_ptr<CompiledScalarFunction>> compiled;
  for (const char* name : {"lt_a", "lt_b", "gt", "sum"}) {
    auto function = functions.AddScalarFunction(*(*module)->GetComputationWithName(name), name);
    ASSERT_TRUE(function.ok()) << function.status();
    EXPECT_EQ((*function)->function(), nullptr);  // until Compile
    compiled.push_back(*std::move(function));
  }
  // The loop kernel of `sum` (buffers, begin, end) is not its scalar function.
  auto kernel = functions.AddKernel(*(*module)->GetComputationWithName("sum"), "sum_kernel");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  ASSERT_TRUE(functions.Compile().ok());
  EXPECT_EQ(functions.num_scalar_functions(), 4);
  EXPECT_EQ(functions.num_kernels(), 1);
  EXPECT_EQ(functions.num_functions(), 4);
  EXPECT_EQ(functions.num_llvm_modules(), 1);
  EXPECT_EQ(compiled[0]->function(), compiled[1]->function());
  EXPECT_NE(compiled[0]->function(), compiled[2]->function());

  EXPECT_TRUE(Compare(*compiled[1], 1.0f, 2.5f));
  EXPECT_FALSE(Compare(*compiled[1], 2.5f, 1.0f));
  EXPECT_FALSE(Compare(*compiled[1], 2.0f, 2.0f));
  EXPECT_TRUE(Compare(*compiled[2], 2.5f, 1.0f));
  EXPECT_FALSE(Compare(*compiled[2], 1.0f, 2.5f));
  EXPECT_FLOAT_EQ(Sum(*compiled[3], 1.25f, -4.0f), -2.75f);
  float a = 3.0f, b = 0.5f, out = 0.0f;
  void* buffers[] = {&a, &b, &out};
  (*kernel)->Run(buffers);
  EXPECT_FLOAT_EQ(out, 3.5f);
}

TEST(ScalarFunctionEmitterTest, PrecompiledJitResolvesScalarFunctions) {
  auto module = ParseAndReturnUnverifiedModule(kComputations);
  ASSERT_TRUE(module.ok()) << module.status();
  LoopKernelModule first("scalars", CpuCompileOptions());
  auto a = first.AddScalarFunction(*(*module)->GetComputationWithName("lt_a"), "cmp_0");
  auto b = first.AddScalarFunction(*(*module)->GetComputationWithName("gt"), "cmp_1");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(first.Compile().ok());
  const JitStats before = GetJitStats();
  LoopKernelModule second("scalars", CpuCompileOptions(), first.jit());
  auto c = second.AddScalarFunction(*(*module)->GetComputationWithName("lt_a"), "cmp_0");
  auto d = second.AddScalarFunction(*(*module)->GetComputationWithName("gt"), "cmp_1");
  ASSERT_TRUE(c.ok() && d.ok());
  ASSERT_TRUE(second.Compile().ok());
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized);
  EXPECT_EQ(second.signature(), first.signature());
  EXPECT_EQ((*c)->function(), (*a)->function());
  EXPECT_EQ((*d)->function(), (*b)->function());
  EXPECT_TRUE(Compare(**d, 2.0f, 1.0f));
}

TEST(ScalarFunctionEmitterTest, NotAFunctionOfScalarsIsUnimplemented) {
  auto module = ParseAndReturnUnverifiedModule(kComputations);
  ASSERT_TRUE(module.ok()) << module.status();
  LoopKernelModule functions("scalars", CpuCompileOptions());
  auto function =
      functions.AddScalarFunction(*(*module)->GetComputationWithName("not_scalar"), "f");
  ASSERT_FALSE(function.ok());
  EXPECT_EQ(function.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(function.status().message().find("parameter v"), absl::string_view::npos)
      << function.status();
  EXPECT_EQ(functions.num_functions(), 0);
  EXPECT_TRUE(functions.Compile().ok());
}

}  // namespace
}  // namespace axle::cpu
