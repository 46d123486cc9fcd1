//===- in_place_permute.h - collective-permute's in-place form -------------===//
//
// XLA's collective-permute has a second form that updates slices of an
// output buffer in place:
//
//   collective-permute(input, output, input_offsets, output_offsets),
//       source_target_pairs={...}, slice_sizes={{...},...}
//
// as XLA's parser, verifier (CheckInplaceCollectivePermute,
// CheckDuplicatedSourceOrTarget) and shape inference define it:
//
//  - input and output are arrays (one buffer) or tuples of B arrays of one
//    rank each (B buffers); the result has the output's shape.
//  - The offsets of a buffer are an index, a tuple of `rank` integer
//    scalars, or a tuple of N such indices (N "chunks"); for B buffers the
//    offsets operand is a tuple of B of those.
//  - source_target_pairs holds N runs of equal length, run c moving chunk
//    c: a source may appear N times in all, once per run (XLA's
//    allowed_seen_count), and so may a target.
//  - slice_sizes has B * N entries, buffer-major: entry b * N + c is the
//    size of chunk c of buffer b.
//
// For every run c and buffer b, each source sends the slice of its input b
// at its input_offsets[b][c] of size slice_sizes[b * N + c] to its target,
// which writes it into its output b at its output_offsets[b][c]. Starts are
// clamped into the buffers as dynamic-slice and dynamic-update-slice clamp
// them. A device that is no target of a run keeps its output there. All
// slices are read before any is written, so input and output may alias.
//
// The slice sizes live in the instruction's raw attribute `slice_sizes`
// (the parser keeps it verbatim; RawAttribute in hlo_instruction.h).
// The interpreter's multi-participant mode and the cpu backend's
// collective thunk both run RunInPlacePermute, so their bits agree.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_IN_PLACE_PERMUTE_H_
#define AXLE_COLLECTIVES_IN_PLACE_PERMUTE_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/replica_groups.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

// True for the four-operand form (operand 2 a tuple).
bool IsInPlacePermute(const HloInstruction& permute);

struct InPlacePermute {
  int64_t buffers = 1;                            // B
  bool tuple_buffers = false;                     // input/output are tuples of B arrays
  int64_t chunks = 1;                             // N
  bool chunked_offsets = false;                   // offsets are tuples of N indices
  std::vector<Shape> inputs, outputs;             // per buffer
  std::vector<std::vector<int64_t>> slice_sizes;  // [b * N + c]
  // Per run: (source, target) as flattened ids.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs;

  // Where index element `dimension` of chunk c of buffer b is in the
  // offsets operand.
  ShapeIndex OffsetIndex(int64_t buffer, int64_t chunk, int64_t dimension) const;
  // Where buffer b is in the input or output operand (and the result).
  ShapeIndex BufferIndex(int64_t buffer) const;
};

// Reads and checks the form of `permute` (collective-permute or its -start
// with four operands) on `grid`. Errors are InvalidArgument naming the
// instruction; a sub-byte element type is Unimplemented.
absl::StatusOr<InPlacePermute> InPlacePermuteOf(const HloCollectiveInstruction& permute,
                                                const DeviceGrid& grid);

// This participant's offsets: (buffer, chunk, input?) -> the start index.
using PermuteOffsets = std::function<std::vector<int64_t>(int64_t, int64_t, bool)>;

// Runs the permute for participant `me` (communicator rank = flattened
// id). `inputs[b]`, `outputs[b]` are buffer b, dense in row-major order;
// `outputs` hold the output operand on entry and the result on return.
// Every participant makes the call (communicator.h's SPMD rule).
absl::Status RunInPlacePermute(Communicator& communicator, const InPlacePermute& permute,
                               int64_t me, const PermuteOffsets& offsets,
                               absl::Span<const char* const> inputs,
                               absl::Span<char* const> outputs);

// Slices of a dense row-major array of `dims` with `element_bytes`
// elements: the slice of `sizes` at `starts` (ClampSliceStarts clamps them
// into the array, as dynamic-slice does) copied out to a dense slice, or in
// from one. Exposed for tests.
std::vector<int64_t> ClampSliceStarts(absl::Span<const int64_t> dims,
                                      absl::Span<const int64_t> sizes,
                                      absl::Span<const int64_t> starts);
void CopySliceOut(const char* whole, absl::Span<const int64_t> dims,
                  absl::Span<const int64_t> starts, absl::Span<const int64_t> sizes,
                  int64_t element_bytes, char* slice);
void CopySliceIn(const char* slice, absl::Span<const int64_t> dims,
                 absl::Span<const int64_t> starts, absl::Span<const int64_t> sizes,
                 int64_t element_bytes, char* whole);

}  // namespace axle

#endif  // AXLE_COLLECTIVES_IN_PLACE_PERMUTE_H_
