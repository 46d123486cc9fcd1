//===- cpu_test_util.h - Running loop kernels against the interpreter ------===//
//
// Test support for axle/cpu: inputs with the corner cases (NaN, +-inf, -0,
// denormals, integer limits, zero divisors, shift amounts past the width),
// and a runner that compiles a module's entry computation as a loop kernel,
// runs it, and returns its outputs as literals next to the interpreter's.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_CPU_TEST_UTIL_H_
#define AXLE_CPU_CPU_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle::cpu::testing {

// Deterministic 64-bit generator (SplitMix64).
inline uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Values for an array of `shape`: the corner cases first (in an order that
// depends on `seed`, so two operands pair them differently), then random
// values (floats in [-8, 8), integers of every magnitude).
inline Literal MakeTestLiteral(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  const PrimitiveType type = shape.element_type();
  const int64_t n = literal.element_count();
  uint64_t state = seed * 7919 + 17;
  namespace pu = primitive_util;
  if (pu::IsFloatingPointType(type) || pu::IsComplexType(type)) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> specials = {
        std::nan(""), -std::nan(""), inf,  -inf, 0.0,  -0.0, 1e-40, -1e-40, 1.0,
        -1.0,         0.5,           -0.5, 2.5,  -2.5, 3.5,  1e30,  -1e30,  3.4028234663852886e38,
        1e-3,         100.0,         7.0,  -3.0};
    const size_t rotate = seed % specials.size();
    for (int64_t i = 0; i < n; ++i) {
      double v;
      if (i < static_cast<int64_t>(specials.size())) {
        v = specials[(i + rotate) % specials.size()];
      } else {
        v = (static_cast<double>(NextRandom(state) >> 11) / 9007199254740992.0) * 16.0 - 8.0;
      }
      if (pu::IsComplexType(type)) {
        double im = (static_cast<double>(NextRandom(state) >> 11) / 9007199254740992.0) * 4 - 2;
        literal.SetFromComplex128(i, {v, i < 8 ? 0.0 : im});
      } else {
        literal.SetFromDouble(i, v);
      }
    }
    return literal;
  }
  if (type == PRED) {
    for (int64_t i = 0; i < n; ++i) literal.SetIntegral(i, (NextRandom(state) >> 7) & 1);
    return literal;
  }
  const int bits = pu::BitWidth(type);
  const bool is_signed = pu::IsSignedIntegralType(type);
  const int64_t max = bits == 64
                          ? std::numeric_limits<int64_t>::max()
                          : (is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1);
  const int64_t min = is_signed ? (bits == 64 ? std::numeric_limits<int64_t>::min() : -max - 1) : 0;
  std::vector<int64_t> specials = {0,  1, -1,       min,  max,      min + 1, max - 1, 2,
                                   -2, 3, bits - 1, bits, bits + 1, 5,       -7};
  const size_t rotate = seed % specials.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    if (i < static_cast<int64_t>(specials.size())) {
      v = specials[(i + rotate) % specials.size()];
    } else if (i % 3 == 0) {
      v = static_cast<int64_t>(NextRandom(state) % 70) - 35;  // small, incl. shift amounts
    } else {
      v = static_cast<int64_t>(NextRandom(state));
    }
    if (bits < 64) {
      // Wrap into the type's range.
      uint64_t mask = (uint64_t{1} << bits) - 1;
      uint64_t u = static_cast<uint64_t>(v) & mask;
      v = is_signed && (u >> (bits - 1)) ? static_cast<int64_t>(u | ~mask)
                                         : static_cast<int64_t>(u);
    }
    literal.SetIntegral(i, v);
  }
  return literal;
}

// MakeTestLiteral arguments (seeds 1, 2, ...) for every parameter of the
// entry computation of `hlo_text`, which must parse.
inline std::vector<Literal> MakeTestArguments(const std::string& hlo_text) {
  auto module = ParseAndReturnUnverifiedModule(hlo_text);
  CHECK(module.ok()) << module.status();
  std::vector<Literal> arguments;
  const HloComputation& entry = *(*module)->entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    arguments.push_back(MakeTestLiteral(entry.parameter_instruction(i)->shape(), i + 1));
  }
  return arguments;
}

struct KernelRun {
  std::vector<Literal> expected;   // the interpreter's outputs
  std::vector<Literal> actual;     // the kernel's outputs
  std::vector<std::string> names;  // the output instructions' names
};

// Parses `hlo_text`, makes test inputs, runs the entry computation through
// the interpreter and through CompileLoopKernel.
inline absl::StatusOr<KernelRun> RunAgainstInterpreter(const std::string& hlo_text,
                                                       const CpuCompileOptions& options = {},
                                                       std::vector<Literal>* inputs = nullptr) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        ParseAndReturnUnverifiedModule(hlo_text));
  const HloComputation& entry = *module->entry_computation();
  std::vector<Literal> args;
  if (inputs != nullptr && !inputs->empty()) {
    args = std::move(*inputs);
  } else {
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      args.push_back(MakeTestLiteral(entry.parameter_instruction(i)->shape(), i + 1));
    }
  }
  std::vector<const Literal*> arg_pointers;
  for (const Literal& arg : args) arg_pointers.push_back(&arg);
  HloEvaluator evaluator;
  AXLE_ASSIGN_OR_RETURN(Literal expected, evaluator.Evaluate(*module, arg_pointers));
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CompiledKernel> kernel, CompileLoopKernel(entry, options));

  KernelRun run;
  const HloInstruction* root = entry.root_instruction();
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
    run.expected = expected.DecomposeTuple();
  } else {
    outputs.push_back(root);
    run.expected.push_back(std::move(expected));
  }
  std::vector<void*> buffers;
  for (Literal& arg : args) buffers.push_back(arg.untyped_data());
  for (const HloInstruction* output : outputs) {
    run.actual.emplace_back(output->shape());
    run.names.push_back(output->name());
  }
  for (Literal& out : run.actual) buffers.push_back(out.untyped_data());
  kernel->Run(buffers.data());
  if (inputs != nullptr) *inputs = std::move(args);
  return run;
}

// Softmax over the last dimension of f32[rows, columns] as XLA lowers it
// (row max, subtract, exp, row sum, divide), with its add and max
// computations: a whole module.
inline std::string SoftmaxModule(int64_t rows, int64_t columns) {
  std::string text = R"(
HloModule softmax
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[R,C] parameter(0)
  ninf = f32[] constant(-inf)
  rowmax = f32[R] reduce(x, ninf), dimensions={1}, to_apply=max
  rowmaxb = f32[R,C] broadcast(rowmax), dimensions={0}
  shifted = f32[R,C] subtract(x, rowmaxb)
  ex = f32[R,C] exponential(shifted)
  zero = f32[] constant(0)
  rowsum = f32[R] reduce(ex, zero), dimensions={1}, to_apply=add
  rowsumb = f32[R,C] broadcast(rowsum), dimensions={0}
  ROOT probs = f32[R,C] divide(ex, rowsumb)
}
)";
  return absl::StrReplaceAll(text, {{"[R,C]", absl::StrCat("[", rows, ",", columns, "]")},
                                    {"[R]", absl::StrCat("[", rows, "]")}});
}

}  // namespace axle::cpu::testing

#endif  // AXLE_CPU_CPU_TEST_UTIL_H_
