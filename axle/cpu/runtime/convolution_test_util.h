//===- convolution_test_util.h - What the cpu convolution tests share -----===//
//
// convolution_test.cc and convolution_pieces_test.cc: generated arguments,
// constants as HLO text, the implementation the convolution thunk picks for
// a module (`KindOf`), `ExpectAgrees`: run on cpu against the interpreter,
// and `Check`: that and expect an implementation.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONVOLUTION_TEST_UTIL_H_
#define AXLE_CPU_RUNTIME_CONVOLUTION_TEST_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/convolution_thunk.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::conv_test {

using testing::ExpectCpuAgrees;

// Small values (exact in every type) that differ from element to element.
inline Literal Values(const Shape& shape, int seed) {
  Literal f64(ShapeUtil::MakeShape(F64, shape.dimensions()));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<double>(
        static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5);
    if (!primitive_util::IsIntegralType(shape.element_type())) data[i] *= 0.25;
  }
  auto converted = f64.Convert(shape.element_type());
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

// The implementation the convolution thunk picks for the entry's first
// convolution or epilogue fusion, after the epilogue pass.
inline std::string KindOf(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto pass = CreatePass("dot-epilogue-fusion");
  CHECK(pass.ok());
  CHECK((*pass)->Run(module->get()).ok());
  for (const HloInstruction* instruction :
       (*module)->entry_computation()->MakeInstructionPostOrder()) {
    if (instruction->opcode() != HloOpcode::kConvolution &&
        instruction->opcode() != HloOpcode::kFusion) {
      continue;
    }
    std::vector<int64_t> values;
    std::vector<const Literal*> constants;
    for (const HloInstruction* operand : instruction->operands()) {
      values.push_back(static_cast<int64_t>(values.size()));
      const auto* constant = dyn_cast<HloConstantInstruction>(operand);
      constants.push_back(constant != nullptr ? &constant->literal() : nullptr);
    }
    cpu::LoopKernelModule kernels("kind", {});
    auto thunk = cpu::CreateConvolutionThunk(*instruction, values, constants, values.size(),
                                             kernels, "convolution_loop");
    if (!thunk.ok()) return std::string(thunk.status().message());
    auto kind = cpu::ConvolutionThunkKind(**thunk);
    return kind.ok() ? *kind : std::string(kind.status().message());
  }
  return "no convolution";
}

// The kind bf16 convolutions run on: oneDNN 2.6 has bf16 convolutions on
// every CPU with AVX-512 BW/VL/DQ (natively with AVX512_BF16, emulated on
// Skylake and Cascade Lake servers) and none without (or under valgrind,
// which hides AVX-512), where the loop runs them.
inline const char* Bf16Kind() {
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512dq")
             ? "onednn"
             : "loop";
}

// Runs `text` on cpu and the interpreter with generated arguments.
inline void ExpectAgrees(absl::string_view text, const ErrorSpec& error = ErrorSpec(1e-5, 1e-5)) {
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : (*module)->entry_computation()->parameter_instructions()) {
    arguments.push_back(Values(parameter->shape(), static_cast<int>(arguments.size())));
  }
  ExpectCpuAgrees(text, arguments, error);
}

// ExpectAgrees, and checks the convolution ran on `kind`.
inline void Check(absl::string_view text, absl::string_view kind,
                  const ErrorSpec& error = ErrorSpec(1e-5, 1e-5)) {
  ExpectAgrees(text, error);
  EXPECT_EQ(KindOf(text), kind) << text;
}

// One convolution of parameters: `lhs`, `rhs` and `out` are shapes with
// their type, `attributes` the window, dim_labels and group counts.
inline std::string ConvModule(absl::string_view lhs, absl::string_view rhs, absl::string_view out,
                              absl::string_view attributes) {
  return absl::StrCat("HloModule conv\nENTRY e {\n  x = ", lhs, " parameter(0)\n  k = ", rhs,
                      " parameter(1)\n  ROOT c = ", out, " convolution(x, k), ", attributes,
                      "\n}\n");
}

// A constant of `dims` (f32) as HLO text's nested braces, small values that
// differ from element to element.
inline std::string ConstantText(const std::vector<int64_t>& dims, int seed = 0) {
  int64_t next = 0;
  std::function<std::string(size_t)> nest = [&](size_t d) {
    std::string text = "{";
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i > 0) absl::StrAppend(&text, ", ");
      if (d + 1 < dims.size()) {
        absl::StrAppend(&text, nest(d + 1));
      } else {
        absl::StrAppend(&text, ((next++ * 7 + int64_t{seed} * 13) % 11 - 5) * 0.25);
      }
    }
    return text + "}";
  };
  return nest(0);
}

}  // namespace axle::conv_test

#endif  // AXLE_CPU_RUNTIME_CONVOLUTION_TEST_UTIL_H_
