//===- conv_chain.h - A depthwise convolution and its 1x1 neighbours -------===//
//
// A MobileNet-style block: a 1x1 "expand" convolution whose only reader is
// a depthwise convolution, and/or a 1x1 "project" convolution that is the
// depthwise one's only reader (with its residual addend, if any). Run one
// after the other, each writes a whole tensor (six times the block's
// width after the expand: mobilenet_v2's 112x112x96 is 4.8 MB) that the
// next one reads back from L3 or memory. Run as one thunk, they work
// through bands of the depthwise convolution's output rows, one range of
// bands per thread of the intra-op pool: the expand computes the input
// rows a band needs (keeping those the next band needs again) into a
// buffer the size of a fraction of L2, the depthwise convolution reads
// them there into a second such buffer, and the project convolution
// reads that and writes the block's output rows. Each band of each stage
// is a oneDNN primitive for a team of one (DnnlConvolutionThunk's row
// bands), made at compile time.
//
// The emitter (convolution_thunk_emitter.cc) emits nothing for the chain's
// leading stages (ConvChainDefers) and the chain's thunk at its last stage
// (ConvChainEndingAt, EmitConvChain); a chain that oneDNN does not take
// band by band falls back to one thunk per stage there.
// AXLE_CPU_CONV_CHAIN=0 turns chains off.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONV_CHAIN_H_
#define AXLE_CPU_RUNTIME_CONV_CHAIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu {

class ProgramBuilder;
class ThunkReader;
namespace conv {
class DnnlConvolutionThunk;
}  // namespace conv

// Whether `instruction` (an instruction EmitConvolutionThunk emits) is a
// stage of a chain that a later stage of it emits.
bool ConvChainDefers(const HloInstruction& instruction);

// The stages of the chain `instruction` is the last stage of, in order
// (2 or 3); empty when it ends none.
std::vector<const HloInstruction*> ConvChainEndingAt(const HloInstruction& instruction);

// Appends the thunk of the chain `stages` (ConvChainEndingAt's), or, when
// it cannot run as one, each stage's own thunk.
absl::Status EmitConvChain(const std::vector<const HloInstruction*>& stages,
                           ProgramBuilder& builder);

// The chain's thunk (conv_chain_thunk.cc) from its stages' thunks, in
// order, built for the chain's operands' values (the first stage's
// input, the weights, biases and the project's addend) and its output's;
// `has_expand`: the first stage is an expand. Unimplemented when a stage
// does not run in bands of rows.
absl::StatusOr<std::unique_ptr<Thunk>> MakeConvChainThunk(
    std::string name, std::vector<int64_t> operand_values, int64_t output_value,
    std::vector<std::unique_ptr<conv::DnnlConvolutionThunk>> stages, bool has_expand);

// Whether `thunk` is a chain's (for tests).
bool IsConvChainThunk(const Thunk& thunk);

// Whether `thunk` is a chain's that runs its depthwise stage on
// depthwise_rows.h's kernel (for tests).
bool ConvChainRunsDepthwiseRows(const Thunk& thunk);

// A chain's thunk from its serialized form (thunk_serialization.h).
std::unique_ptr<Thunk> LoadConvChainThunk(std::string name, ThunkReader& reader);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONV_CHAIN_H_
