//===- gpu_thunk_factories.cc - Thunks of the library ops ------------------===//
//
// One case per library op. Engineers adding an op's thunk replace its
// `return NotYet(...)` with a call to their factory (declared in their
// thunk's header), e.g. `return MakeGemmThunk(instruction, std::move(values));`.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_thunk_factories.h"

#include "absl/strings/str_cat.h"
#include "axle/gpu/cholesky_thunk.h"
#include "axle/gpu/convolution_thunk.h"
#include "axle/gpu/fft_thunk.h"
#include "axle/gpu/gemm_thunk.h"
#include "axle/gpu/gpu_graph.h"
#include "axle/gpu/rng_bit_generator_thunk.h"
#include "axle/gpu/scatter_thunk.h"
#include "axle/gpu/sort_thunk.h"
#include "axle/gpu/triangular_solve_thunk.h"
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
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLibraryThunk(const HloInstruction& instruction,
                                                           GpuThunkValues values,
                                                           const PtxOptions& options) {
  switch (instruction.opcode()) {
    case HloOpcode::kDot:
      // cuBLAS records into CUDA graphs (gpu_graph.h).
      return CapturableLibraryCall(MakeGemmThunk(instruction, std::move(values)));
    case HloOpcode::kConvolution:
      return MakeConvolutionThunk(instruction, std::move(values));
    case HloOpcode::kFft:
      return MakeFftThunkWithOptions(instruction, std::move(values), options);
    case HloOpcode::kSort:
      return MakeSortThunk(instruction, std::move(values), options);
    case HloOpcode::kScatter:
      return MakeScatterThunk(instruction, std::move(values), options);
    case HloOpcode::kSelectAndScatter:
      return MakeSelectAndScatterThunk(instruction, std::move(values), options);
    case HloOpcode::kRng:
      return NotYet(instruction, "an rng kernel");
    case HloOpcode::kRngBitGenerator:
      return MakeRngBitGeneratorThunk(instruction, std::move(values), options);
    case HloOpcode::kRngGetAndUpdateState:
      return NotYet(instruction, "the rng state");
    case HloOpcode::kCholesky:
      return MakeCholeskyThunk(instruction, std::move(values));
    case HloOpcode::kTriangularSolve:
      return MakeTriangularSolveThunk(instruction, std::move(values));
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
