//===- ptxas.h - PTX to a cubin with the toolkit's ptxas -------------------===//
//
// Runs the CUDA toolkit's PTX assembler on PTX text: how a kernel becomes
// machine code (SASS) for one architecture ahead of time, and how the
// codegen tests check, on machines without a GPU, that the PTX Axle emits
// is what NVIDIA's tools accept. (On a GPU the driver can also load PTX
// directly, compiling it for the device.)
//
// This header is LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTXAS_H_
#define AXLE_GPU_PTXAS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle::gpu {

// $AXLE_CUDA_PTXAS when set, else the toolkit's (found at build time);
// NotFound when neither exists.
absl::StatusOr<std::string> PtxasPath();

// The cubin (an ELF image) of `ptx` for `arch` ("sm_90"). InvalidArgument
// with ptxas's messages when it rejects the PTX.
absl::StatusOr<std::string> AssemblePtx(absl::string_view ptx, absl::string_view arch);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTXAS_H_
