//===- gpu_thunk_factories.cc - Thunks of the library ops ------------------===//
//
// One case per library op. Engineers adding an op's thunk replace its
// `return NotYet(...)` with a call to their factory (declared in their
// thunk's header), e.g. `return MakeGemmThunk(instruction, std::move(values));`.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_thunk_factories.h"

#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

absl::Status NotYet(const HloInstruction& instruction, absl::string_view library) {
  return absl::UnimplementedError(absl::StrCat(
      "CUDA backend: ", HloOpcodeString(instruction.opcode()), " is not implemented yet on CUDA (",
      library, "; instruction %", instruction.name(), ")"));
}

}  // namespace

bool IsGpuLibraryOp(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kFft:
    case HloOpcode::kSort:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kTopK:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
      return true;
    default:
      return false;
  }
}

// `values` is taken by value: the thunks move it in.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLibraryThunk(
    const HloInstruction& instruction,
    GpuThunkValues values) {  // NOLINT(performance-unnecessary-value-param)
  (void)values;
  switch (instruction.opcode()) {
    case HloOpcode::kDot:
      return NotYet(instruction, "a cuBLAS gemm");
    case HloOpcode::kConvolution:
      return NotYet(instruction, "a cuDNN convolution");
    case HloOpcode::kFft:
      return NotYet(instruction, "cuFFT");
    case HloOpcode::kSort:
      return NotYet(instruction, "a sort kernel");
    case HloOpcode::kScatter:
      return NotYet(instruction, "a scatter kernel");
    case HloOpcode::kSelectAndScatter:
      return NotYet(instruction, "a select-and-scatter kernel");
    case HloOpcode::kRng:
      return NotYet(instruction, "an rng kernel");
    case HloOpcode::kRngBitGenerator:
      return NotYet(instruction, "an rng-bit-generator kernel");
    case HloOpcode::kRngGetAndUpdateState:
      return NotYet(instruction, "the rng state");
    case HloOpcode::kCholesky:
      return NotYet(instruction, "a cholesky kernel or cuSOLVER");
    case HloOpcode::kTriangularSolve:
      return NotYet(instruction, "a triangular-solve kernel or cuBLAS trsm");
    case HloOpcode::kTopK:
      return NotYet(instruction, "a topk kernel");
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
      return NotYet(instruction, "a gemm");
    default:
      return absl::InvalidArgumentError(absl::StrCat("CUDA backend: %", instruction.name(), " (",
                                                     HloOpcodeString(instruction.opcode()),
                                                     ") is not a library op"));
  }
}

}  // namespace axle::gpu
