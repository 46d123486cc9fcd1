//===- gpu_thunk_factories.cc - Thunks of the library ops ------------------===//
//
// One factory per library op (AXLE_GPU_LIBRARY_OPCODES), chosen by
// FactoryOf; a static_assert checks that every op of the list has one, so a
// library op without a thunk fails to compile. Engineers adding an op's
// thunk replace its `NotYetFactory<...>` with a lambda that calls their
// factory (declared in their thunk's header), as kDot's calls MakeGemmThunk.
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
#include "axle/gpu/rng_thunk.h"
#include "axle/gpu/scatter_thunk.h"
#include "axle/gpu/sort_thunk.h"
#include "axle/gpu/triangular_solve_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_opcode_families.h"

namespace axle::gpu {
namespace {

absl::Status NotYet(const HloInstruction& instruction, absl::string_view library) {
  return absl::UnimplementedError(absl::StrCat(
      "CUDA backend: ", HloOpcodeString(instruction.opcode()), " is not implemented yet on CUDA (",
      library, "; instruction %", instruction.name(), ")"));
}

using Result = absl::StatusOr<std::unique_ptr<GpuThunk>>;

// What an op whose thunk is not written yet lacks.
constexpr char kTopKKernel[] = "a topk kernel";
constexpr char kGemm[] = "a gemm";

// The factory of an op whose thunk is not written yet: Unimplemented. It
// takes `values` by value, as every Factory does, and has no use for them.
template <const char* kLacking>
Result NotYetFactory(const HloInstruction& instruction,
                     GpuThunkValues /*values*/,  // NOLINT(performance-unnecessary-value-param)
                     const PtxOptions& /*options*/) {
  return NotYet(instruction, kLacking);
}
// `values` is taken by value: the thunks move it in.
using Factory = Result (*)(const HloInstruction& instruction, GpuThunkValues values,
                           const PtxOptions& options);

constexpr Factory FactoryOf(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDot:
      // cuBLAS records into CUDA graphs (gpu_graph.h).
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions&) -> Result {
        return CapturableLibraryCall(MakeGemmThunk(instruction, std::move(values)));
      };
    case HloOpcode::kConvolution:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions&) -> Result {
        return MakeConvolutionThunk(instruction, std::move(values));
      };
    case HloOpcode::kFft:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions& options) -> Result {
        return MakeFftThunkWithOptions(instruction, std::move(values), options);
      };
    case HloOpcode::kSort:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions& options) -> Result {
        return MakeSortThunk(instruction, std::move(values), options);
      };
    case HloOpcode::kScatter:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions& options) -> Result {
        return MakeScatterThunk(instruction, std::move(values), options);
      };
    case HloOpcode::kSelectAndScatter:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions& options) -> Result {
        return MakeSelectAndScatterThunk(instruction, std::move(values), options);
      };
    case HloOpcode::kRng:
      // Drawn on the host from the run's engine, as on cpu (rng_thunk.h).
      return
          [](const HloInstruction& instruction, GpuThunkValues values,
             const PtxOptions&) -> Result { return MakeRngThunk(instruction, std::move(values)); };
    case HloOpcode::kRngBitGenerator:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions& options) -> Result {
        return MakeRngBitGeneratorThunk(instruction, std::move(values), options);
      };
    case HloOpcode::kRngGetAndUpdateState:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions&) -> Result {
        return MakeRngGetAndUpdateStateThunk(instruction, std::move(values));
      };
    case HloOpcode::kCholesky:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions&) -> Result {
        return MakeCholeskyThunk(instruction, std::move(values));
      };
    case HloOpcode::kTriangularSolve:
      return [](const HloInstruction& instruction, GpuThunkValues values,
                const PtxOptions&) -> Result {
        return MakeTriangularSolveThunk(instruction, std::move(values));
      };
    case HloOpcode::kTopK:
      return NotYetFactory<kTopKKernel>;
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
      return NotYetFactory<kGemm>;
    default:
      return nullptr;  // not a library op
  }
}

#define AXLE_GPU_CHECK_FACTORY_(e)                                                 \
  static_assert(FactoryOf(HloOpcode::e) != nullptr, "library op " #e               \
                                                    " (AXLE_GPU_LIBRARY_OPCODES) " \
                                                    "needs a case in FactoryOf");
AXLE_GPU_LIBRARY_OPCODES(AXLE_GPU_CHECK_FACTORY_)
#undef AXLE_GPU_CHECK_FACTORY_

}  // namespace

absl::Status CheckThunkValues(const HloInstruction& instruction, const GpuThunkValues& values,
                              size_t operands, size_t outputs) {
  if (values.operands.size() == operands && values.outputs.size() == outputs) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("CUDA: ", HloOpcodeString(instruction.opcode()), " ", instruction.name(),
                   ": expected the value ids of ", operands, " operand(s) and ", outputs,
                   " result(s), got ", values.operands.size(), " and ", values.outputs.size()));
}

bool IsGpuLibraryOp(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    AXLE_GPU_LIBRARY_OPCODES(AXLE_HLO_OPCODE_CASE)
    return true;
    default:
      return false;
  }
}

bool HasOwnGpuThunk(const HloInstruction& instruction) {
  if (IsGpuLibraryOp(instruction)) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kCustomCall:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return true;
    default:
      return HloOpcodeIsCollective(instruction.opcode());
  }
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLibraryThunk(const HloInstruction& instruction,
                                                           GpuThunkValues values,
                                                           const PtxOptions& options) {
  if (!IsGpuLibraryOp(instruction)) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA backend: %", instruction.name(), " (",
                                                   HloOpcodeString(instruction.opcode()),
                                                   ") is not a library op"));
  }
  return FactoryOf(instruction.opcode())(instruction, std::move(values), options);
}

}  // namespace axle::gpu
