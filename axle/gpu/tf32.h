//===- tf32.h - Which f32 products the cuda backend computes in TF32 -------===//
//
// XLA:GPU lets cuBLAS and cuDNN round f32 operands to TF32 (8 exponent
// bits, 10 mantissa bits) on tensor cores, accumulating in f32, unless the
// HLO asks for more:
//
//   dots (stream_executor/gpu/gpu_blas_lt.cc, GetBlasComputationType): an
//     f32 or c64 dot whose lhs and result have one type and whose
//     compute_precision, the largest operand precision
//     (gpu/matmul_utils.cc), is at most 1 (DEFAULT or HIGH) gets
//     kTF32AsF32 (CUBLAS_COMPUTE_32F_FAST_TF32); HIGHEST gets kF32. An
//     explicit algorithm decides alone (algorithm_util.cc:
//     dot_tf32_tf32_f32 is TF32, dot_f32_f32_f32 full f32).
//   convolutions (the cuDNN autotuner, gpu/autotuning/conv_algorithm_picker.cc,
//     and its neighbours that pick cuDNN engines): allow_tf32 when every
//     operand precision is at most HIGH, so cuDNN may take tensor-op math.
//
// Axle applies the same rule (ComputesInTf32) to its cuBLAS gemms
// (gemm_plan.h), cuDNN convolutions and XLA's `__cudnn$conv*` custom calls
// (convolution_thunk.h), unless AXLE_GPU_TF32=0 (or false/off/no) forces
// exact f32 everywhere (Tf32Enabled). Axle's own kernels (a convolution the
// kernel runs, a dot lowered to a reduction) stay exact f32.
//
// TF32 results differ from exact f32 by about 2^-11 relative per operand:
// a sum of k products picks up an error of about 4e-4 * sqrt(k) times the
// products' size, which for products of random signs is 4e-4 times the
// size of the sum itself. So comparisons of cuda against cpu or the
// interpreter widen their bounds for the results that depend on such a
// product (Tf32ErrorSpec; LiteralsNearAllowingTf32 for a module's result):
// a relative bound of at least 1e-2 (XLA's GPU convolution tests take
// 1e-2 / 1e-3 where its CPU ones take 1e-4 / 1e-3) and an absolute bound
// of at least 1e-2 times the root mean square of the expected values, so
// that sums near zero are judged by the size of their neighbours. Results
// that read no TF32 product keep their bounds.
//
// No CUDA here; axle-run and the tests include it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_TF32_H_
#define AXLE_GPU_TF32_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle::gpu {

// Whether AXLE_GPU_TF32 leaves TF32 allowed (anything but 0/false/off/no;
// read once per process).
bool Tf32Enabled();

// XLA:GPU's precision rule: no operand precision above HIGH, and no
// algorithm other than dot_tf32_tf32_f32.
bool PrecisionAllowsTf32(const PrecisionConfig& config);

// Whether XLA:GPU's rule lets `instruction` compute in TF32 (whatever the
// environment): an f32 x f32 -> f32 or c64 x c64 -> c64 dot, an f32
// convolution, or an f32 `__cudnn$conv*` custom call, of a precision
// PrecisionAllowsTf32 takes.
bool ComputesInTf32(const HloInstruction& instruction);

// For each element of the entry's result (each top-level tuple element, or
// the one array), whether it may depend on an instruction that
// ComputesInTf32 (through operands and called computations).
std::vector<bool> ResultElementsReadingTf32(const HloModule& module);

// `base` widened for a result computed through TF32 products whose exact
// value is `expected`: rel at least 1e-2, abs at least 1e-2 times the root
// mean square of its finite elements (all leaves of a tuple).
ErrorSpec Tf32ErrorSpec(const ErrorSpec& base, const Literal& expected);

// LiteralsNear of `module`'s result as computed exactly (`expected`: cpu,
// the interpreter) and on cuda (`actual`): with `tf32` (Tf32Enabled() for a
// cuda run) each top-level element that ResultElementsReadingTf32 names is
// compared within Tf32ErrorSpec(base, that element), the others within
// `base`; without, everything within `base`.
absl::Status LiteralsNearAllowingTf32(const HloModule& module, const Literal& expected,
                                      const Literal& actual, const ErrorSpec& base, bool tf32);

}  // namespace axle::gpu

#endif  // AXLE_GPU_TF32_H_
