//===- gemm_thunk.h - A dot on cuBLAS ---------------------------------------===//
//
// MakeGemmThunk turns a kDot into a thunk that runs its GemmPlan
// (gemm_plan.h, derived at compile time) as one cublasGemmStridedBatchedEx
// call on the run's stream. The thunk shares its device's cuBLAS handle
// (cublas_library.h), set to the run's stream and the thunk's scratch
// memory as cuBLAS's workspace while it enqueues (without scratch, cuBLAS's
// own workspace pool of the handle is used: then runs on different streams
// must not overlap). Dots whose operands have no elements to contract get a
// zeroed result; empty results run nothing.
//
// BenchmarkGemm times a gemm thunk against cublasSgemm called directly on
// the same buffers (issue 16: dots at >= 90% of cuBLAS).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GEMM_THUNK_H_
#define AXLE_GPU_GEMM_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// cuBLAS's workspace, as the thunk's scratch memory: 32 MiB for large
// GEMMs (cuBLAS's recommendation on Hopper), 4 MiB for the rest.
int64_t GemmWorkspaceBytes(const GemmPlan& plan);

// The thunk of `dot` (values: lhs, rhs; result). Unimplemented naming the
// dot where MakeGemmPlan is.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeGemmThunk(const HloInstruction& dot,
                                                        GpuThunkValues values);
// The same with a given plan (tests).
std::unique_ptr<GpuThunk> MakeGemmThunk(std::string name, const GemmPlan& plan,
                                        GpuThunkValues values);

struct GemmBenchmark {
  double thunk_seconds = 0;   // per call, the f32 dot's gemm thunk
  double direct_seconds = 0;  // per call, cublasSgemm on the same buffers
  double thunk_tflops = 0, direct_tflops = 0;
  std::string ToString() const;
};
// An f32 [m, k] x [k, n] dot (row major), `iterations` calls of each after
// a warm-up, timed on the host around the stream's work.
absl::StatusOr<GemmBenchmark> BenchmarkGemm(const CudaDevice& device, CudaStream* stream, int64_t m,
                                            int64_t n, int64_t k, int iterations);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GEMM_THUNK_H_
