//===- fft_thunk.h - kFft on the GPU through cuFFT --------------------------===//
//
// The GPU executable's thunk for a kFft: cuFFT (libcufft.so.12, opened with
// dlopen on first use; $AXLE_CUFFT names another library), for fft_type
// FFT/IFFT (c64, c128), RFFT (f32 -> c64, f64 -> c128) and IRFFT (c64 ->
// f32, c128 -> f64) over the trailing fft_length.size() (1 to 3) dimensions,
// the leading ones a batch. IFFT and IRFFT are scaled by 1/N (N the product
// of fft_length) by a small Axle kernel after the transform, as XLA defines
// them (cuFFT does not normalize). IRFFT's input is copied to the thunk's
// scratch memory first: cuFFT's complex-to-real transforms overwrite their
// input.
//
// Plans are made lazily, one per stream (each with its own cuFFT work
// area, so runs on different streams never share one), under a mutex.
// Operands and results must be row-major (Unimplemented naming the
// instruction otherwise), the complex input of IRFFT must have n/2+1
// elements in its last dimension and RFFT's real input n.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_FFT_THUNK_H_
#define AXLE_GPU_FFT_THUNK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// values: the operand's id, then the result's. Errors name the instruction.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeFftThunk(const HloInstruction& fft,
                                                       GpuThunkValues values,
                                                       const PtxOptions& options = PtxOptions());

// The PTX of `kernel_name(ptr data)`, which multiplies the first `count`
// elements of an f32 or f64 array by `factor` (one thread each).
absl::StatusOr<PtxKernel> CompileScaleKernelToPtx(PrimitiveType type, int64_t count, double factor,
                                                  absl::string_view kernel_name,
                                                  const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_FFT_THUNK_H_
