//===- ptx_compiler.h - Loop fusions to PTX kernels ------------------------===//
//
// The GPU's code generator, first part: a loop fusion (a computation whose
// root is an array, or a tuple of arrays of one shape, computed elementwise
// from its parameters by the ops the elemental emitter knows, including a
// `reduce` root folded per output element) becomes one PTX kernel
//
//   .entry NAME(.param .u64 p0, ..., .param .u64 pN-1, .param .u64 out0, ...)
//
// with one thread per output element (or per 16-byte vector of them;
// bounds-checked: threads past the last element do nothing), or, for row
// reductions and their consumers (row_fusion.h: softmax, layer norm, a
// reduction of the input's trailing dimensions), a warp or block per row
// whose threads share the row; their outputs may then have the rows' or
// the input's dimensions (ptx_kernel_emitter.h). Parameters then outputs are device
// buffers, dense and row-major, 16-byte aligned, not overlapping. Launch it
// with `grid` blocks of `block` threads.
//
// Codegen goes through axle/llvm_ir's elemental emitter with the NVPTX
// target hooks (nvptx_target_hooks.h), links the libdevice functions it
// calls, optimizes at O3 and emits PTX with LLVM 19's NVPTX backend for the
// requested architecture (sm_90: H100/H200). What the GPU hooks do not
// handle yet (f8/f4 types, complex ops that need helpers) and non-default
// layouts are Unimplemented errors naming the instruction. With
// $AXLE_DUMP_TO set, each kernel's IR as emitted (<name>.ll), linked and
// optimized (<name>.opt.ll) and its PTX (<name>.ptx) are written there.
//
// This header is LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_COMPILER_H_
#define AXLE_GPU_PTX_COMPILER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::gpu {

struct PtxOptions {
  // The GPU architecture ("sm_90"); PTX ISA 7.8, what sm_90 needs.
  std::string arch = "sm_90";
  // libdevice.10.bc; empty: LibdevicePath().
  std::string libdevice_path;
  // Threads per block.
  int block_size = 256;
};

struct PtxKernel {
  std::string name;
  std::string ptx;
  // The kernel's LLVM IR as emitted, before libdevice and optimization
  // (what a miscompile is debugged from).
  std::string unoptimized_ir;
  // Elements of each output.
  int64_t output_elements = 0;
  // Launch dimensions (x only).
  int64_t grid = 0;
  int block = 0;
  int64_t num_parameters = 0;
  int64_t num_outputs = 0;
};

// Hits and misses of a process-wide PTX cache.
struct PtxCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
};

// The cache of the hand-written kernels' PTX (ptx_module.h:
// CompileNvptxModule, CompileElementKernel: the convolution kernel, FFT
// scaling, sort, scatter, ...), keyed by their LLVM IR as emitted, the
// architecture and libdevice: a thunk built again (a program rebuilt from
// the compilation cache, gpu_compiler.h) runs no LLVM. Bypassed with
// $AXLE_DUMP_TO (the dumps are written as a kernel compiles).
PtxCacheStats GetHandWrittenPtxCacheStats();

absl::StatusOr<PtxKernel> CompileLoopFusionToPtx(const HloComputation& fusion,
                                                 absl::string_view kernel_name,
                                                 const PtxOptions& options = PtxOptions());

// Where libdevice is: $AXLE_CUDA_LIBDEVICE when set, else the toolkit's
// (found at build time). NotFound naming both when neither exists.
absl::StatusOr<std::string> LibdevicePath();

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_COMPILER_H_
