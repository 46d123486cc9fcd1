// Regressions of the cpu platform's dot epilogues, each checked against the
// interpreter: one broadcast zero shared by two relus and a select (it used
// to be an "activation bound that is not a constant" compile error), and a
// bf16 dot + row bias whose epilogue read the bias shape through a dangling
// pointer.
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(CpuEpilogueRegressionTest, SharedBroadcastZero) {
  const std::string text = R"(HloModule shared_zero

ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  v = f32[4,4] parameter(2)
  zero = f32[] constant(0)
  zeros = f32[8,4] broadcast(zero), dimensions={}
  d1 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h1 = f32[8,4] maximum(d1, zeros)
  d2 = f32[8,4] dot(h1, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h2 = f32[8,4] maximum(d2, zeros)
  mask = pred[8,4] compare(h1, zeros), direction=GT
  s = f32[8,4] select(mask, h2, zeros)
  ROOT t = (f32[8,4], f32[8,4]) tuple(h2, s)
}
)";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto arguments = std::vector<Literal>{};
  for (const HloInstruction* parameter : (*module)->entry_computation()->parameter_instructions()) {
    Literal literal(parameter->shape());
    for (int64_t i = 0; i < literal.element_count(); ++i)
      literal.SetFromDouble(i, 0.25 * ((i * 7) % 11) - 1.0);
    arguments.push_back(std::move(literal));
  }
  testing::ExpectCpuAgrees(text, arguments);
}

TEST(CpuEpilogueRegressionTest, Bf16DotWithRowBias) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = bf16[6,20] parameter(0)
  w = bf16[20,12] parameter(1)
  bias = bf16[12] parameter(2)
  d = bf16[6,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = bf16[6,12] broadcast(bias), dimensions={1}
  y = bf16[6,12] add(d, bb)
  ROOT r = bf16[6,12] tanh(y)
})";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : (*module)->entry_computation()->parameter_instructions()) {
    Literal literal(parameter->shape());
    for (int64_t i = 0; i < literal.element_count(); ++i)
      literal.SetFromDouble(i, 0.25 * ((i * 5) % 9) - 1.0);
    arguments.push_back(std::move(literal));
  }
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-2, 1e-2));
}

}  // namespace
}  // namespace axle
