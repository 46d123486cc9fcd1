//===- fft_thunk_emitter.cc - fft from HLO ---------------------------------===//
#include <cstdint>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/fft_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// Whether `fft` has the shapes XLA's verifier accepts (the ones the thunk
// runs): operand extents equal to fft_length (IRFFT's innermost n/2 + 1),
// positive lengths that fit KISS FFT's int, the element types of its type.
bool ThunkRuns(const HloFftInstruction& fft) {
  const Shape& in = fft.operand(0)->shape();
  const Shape& out = fft.shape();
  const std::vector<int64_t>& lengths = fft.fft_length();
  const int64_t rank = static_cast<int64_t>(lengths.size());
  if (!in.IsArray() || !out.IsArray() || rank < 1 || rank > 3 || in.rank() < rank ||
      out.rank() != in.rank()) {
    return false;
  }
  for (int64_t l : lengths) {
    if (l < 1 || l > (int64_t{1} << 28)) return false;
  }
  const int64_t batch_rank = in.rank() - rank;
  std::vector<int64_t> in_dims(lengths), out_dims(lengths);
  if (fft.fft_type() == RFFT) out_dims.back() = lengths.back() / 2 + 1;
  if (fft.fft_type() == IRFFT) in_dims.back() = lengths.back() / 2 + 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d < batch_rank ? out.dimensions(d) != in.dimensions(d)
                       : in.dimensions(d) != in_dims[d - batch_rank] ||
                             out.dimensions(d) != out_dims[d - batch_rank]) {
      return false;
    }
  }
  const PrimitiveType in_type = in.element_type(), out_type = out.element_type();
  switch (fft.fft_type()) {
    case FFT:
    case IFFT:
      return (in_type == C64 || in_type == C128) && out_type == in_type;
    case RFFT:
      return (in_type == F32 && out_type == C64) || (in_type == F64 && out_type == C128);
    case IRFFT:
      return (in_type == C64 && out_type == F32) || (in_type == C128 && out_type == F64);
  }
  return false;
}

// The elements of `fft`'s batch: the product of its operand's leading
// dimensions.
int64_t BatchOf(const HloFftInstruction& fft) {
  const Shape& in = fft.operand(0)->shape();
  int64_t batch = 1;
  for (int64_t d = 0; d < in.rank() - static_cast<int64_t>(fft.fft_length().size()); ++d) {
    batch *= in.dimensions(d);
  }
  return batch;
}

}  // namespace

absl::Status EmitFftThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const auto& fft = *cast<HloFftInstruction>(&instruction);
  if (instruction.operand_count() != 1 || !ThunkRuns(fft)) {
    return EmitInterpreterKernelThunk(instruction, builder);
  }
  AXLE_ASSIGN_OR_RETURN(int64_t operand, builder.ValueOf(instruction.operand(0)));
  const int64_t result = builder.DefineTemporary(&instruction, {}, instruction.shape());
  const PrimitiveType type = instruction.shape().element_type();
  builder.AddThunk(MakeFftThunk(instruction.name(), /*f64=*/type != C64 && type != F32,
                                fft.fft_type(), fft.fft_length(), BatchOf(fft), operand, result));
  return absl::OkStatus();
}

}  // namespace axle::cpu
