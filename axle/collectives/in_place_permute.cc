//===- in_place_permute.cc - collective-permute's in-place form ------------===//
#include "axle/collectives/in_place_permute.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/attribute_text.h"

namespace axle {
namespace {

absl::Status Bad(const HloInstruction& permute, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      permute.name(), " (", HloOpcodeString(permute.opcode()), ", in-place form): ", why));
}

bool IsIntegerScalar(const Shape& shape) {
  return shape.IsArray() && shape.rank() == 0 &&
         primitive_util::IsIntegralType(shape.element_type());
}

// An index: a tuple of `rank` integer scalars.
bool IsIndex(const Shape& shape, int64_t rank) {
  if (!shape.IsTuple() || shape.tuple_shapes_size() != rank) return false;
  for (const Shape& element : shape.tuple_shapes()) {
    if (!IsIntegerScalar(element)) return false;
  }
  return true;
}

// The chunk count of one buffer's offsets (1 for a bare index), or 0 when
// the shape is neither an index nor a tuple of indices.
int64_t ChunksOf(const Shape& offsets, int64_t rank) {
  if (IsIndex(offsets, rank)) return 1;
  if (!offsets.IsTuple() || offsets.tuple_shapes_size() == 0) return 0;
  for (const Shape& index : offsets.tuple_shapes()) {
    if (!IsIndex(index, rank)) return 0;
  }
  return offsets.tuple_shapes_size();
}

}  // namespace

bool IsInPlacePermute(const HloInstruction& permute) {
  return (permute.opcode() == HloOpcode::kCollectivePermute ||
          permute.opcode() == HloOpcode::kCollectivePermuteStart) &&
         permute.operand_count() == 4 && permute.operand(2)->shape().IsTuple();
}

ShapeIndex InPlacePermute::OffsetIndex(int64_t buffer, int64_t chunk, int64_t dimension) const {
  ShapeIndex index;
  if (tuple_buffers) index.push_back(buffer);
  if (chunked_offsets) index.push_back(chunk);
  index.push_back(dimension);
  return index;
}

ShapeIndex InPlacePermute::BufferIndex(int64_t buffer) const {
  return tuple_buffers ? ShapeIndex{buffer} : ShapeIndex{};
}

absl::StatusOr<InPlacePermute> InPlacePermuteOf(const HloCollectiveInstruction& permute,
                                                const DeviceGrid& grid) {
  if (!IsInPlacePermute(permute)) {
    return Bad(permute, "needs (input, output, input_offsets, output_offsets)");
  }
  InPlacePermute result;
  const Shape& input = permute.operand(0)->shape();
  const Shape& output = permute.operand(1)->shape();
  if (input.IsTuple() != output.IsTuple()) {
    return Bad(permute, "input and output must both be arrays or both tuples");
  }
  result.tuple_buffers = input.IsTuple();
  if (result.tuple_buffers) {
    if (input.tuple_shapes_size() != output.tuple_shapes_size() || input.tuple_shapes_size() == 0) {
      return Bad(permute,
                 absl::StrCat("input ", input.ToString(false), " and output ",
                              output.ToString(false), " must be tuples of as many arrays"));
    }
    result.buffers = input.tuple_shapes_size();
    result.inputs.assign(input.tuple_shapes().begin(), input.tuple_shapes().end());
    result.outputs.assign(output.tuple_shapes().begin(), output.tuple_shapes().end());
  } else {
    result.inputs = {input};
    result.outputs = {output};
  }
  for (int64_t b = 0; b < result.buffers; ++b) {
    const Shape& in = result.inputs[b];
    const Shape& out = result.outputs[b];
    if (!in.IsArray() || !out.IsArray() || in.rank() != out.rank() ||
        in.element_type() != out.element_type()) {
      return Bad(permute,
                 absl::StrCat("buffer ", b, ": input ", in.ToString(false), " and output ",
                              out.ToString(false), " must be arrays of one rank and element type"));
    }
    if (primitive_util::IsSubByteType(in.element_type()) ||
        primitive_util::ByteWidth(in.element_type()) <= 0) {
      return absl::UnimplementedError(absl::StrCat(
          permute.name(), " (collective-permute, in-place form): element type ",
          primitive_util::LowercasePrimitiveTypeName(in.element_type()), " is not byte-sized"));
    }
  }
  // The offsets: the chunk count N, alike for every buffer and both
  // operands.
  for (int operand = 2; operand < 4; ++operand) {
    const Shape& offsets = permute.operand(operand)->shape();
    const char* name = operand == 2 ? "input_offsets" : "output_offsets";
    if (result.tuple_buffers &&
        (!offsets.IsTuple() || offsets.tuple_shapes_size() != result.buffers)) {
      return Bad(permute, absl::StrCat(name, " ", offsets.ToString(false), " must be a tuple of ",
                                       result.buffers, " offsets, one per buffer"));
    }
    for (int64_t b = 0; b < result.buffers; ++b) {
      const Shape& mine = result.tuple_buffers ? offsets.tuple_shapes(b) : offsets;
      const int64_t rank = result.inputs[b].rank();
      const int64_t chunks = ChunksOf(mine, rank);
      const bool chunked = chunks > 0 && !IsIndex(mine, rank);
      const bool first = operand == 2 && b == 0;
      if (chunks == 0 ||
          (!first && (chunks != result.chunks || chunked != result.chunked_offsets))) {
        return Bad(permute,
                   absl::StrCat(name, " ", offsets.ToString(false),
                                ": each buffer's offsets must be an index (a tuple of ", rank,
                                " integer scalars) or a tuple of such indices, as many for "
                                "every buffer and both operands"));
      }
      result.chunks = chunks;
      result.chunked_offsets = chunked;
    }
  }
  // slice_sizes: B * N sizes, buffer-major.
  const RawAttribute* raw = permute.FindRawAttribute("slice_sizes");
  if (raw == nullptr) return Bad(permute, "has no slice_sizes");
  absl::StatusOr<std::vector<std::vector<int64_t>>> sizes = ParseInt64ListList(raw->value);
  if (!sizes.ok()) return Bad(permute, sizes.status().message());
  if (static_cast<int64_t>(sizes->size()) != result.buffers * result.chunks) {
    return Bad(permute, absl::StrCat("slice_sizes has ", sizes->size(), " entries, expected ",
                                     result.buffers * result.chunks, " (", result.buffers,
                                     " buffers x ", result.chunks, " offsets each)"));
  }
  for (int64_t b = 0; b < result.buffers; ++b) {
    for (int64_t c = 0; c < result.chunks; ++c) {
      const std::vector<int64_t>& size = (*sizes)[b * result.chunks + c];
      const Shape& in = result.inputs[b];
      const Shape& out = result.outputs[b];
      bool fits = static_cast<int64_t>(size.size()) == in.rank();
      for (int64_t d = 0; fits && d < in.rank(); ++d) {
        fits = size[d] >= 0 && size[d] <= in.dimensions(d) && size[d] <= out.dimensions(d);
      }
      if (!fits) {
        return Bad(permute, absl::StrCat("slice size {", absl::StrJoin(size, ","), "} of buffer ",
                                         b, " does not fit input ", in.ToString(false),
                                         " and output ", out.ToString(false)));
      }
    }
  }
  result.slice_sizes = *std::move(sizes);
  // The pairs: N runs of equal length.
  const auto& pairs = permute.attrs().source_target_pairs;
  if (pairs.size() % result.chunks != 0) {
    return Bad(permute, absl::StrCat(pairs.size(), " source_target_pairs do not split into ",
                                     result.chunks, " runs of equal length, one per offset"));
  }
  const int64_t run = static_cast<int64_t>(pairs.size()) / result.chunks;
  for (int64_t c = 0; c < result.chunks; ++c) {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> expanded = ExpandPermutePairs(
        absl::MakeConstSpan(pairs).subspan(c * run, run), permute.channel_id().has_value(), grid);
    if (!expanded.ok()) {
      return Bad(permute, absl::StrCat("run ", c, " of the pairs: ", expanded.status().message()));
    }
    result.pairs.push_back(*std::move(expanded));
  }
  return result;
}

std::vector<int64_t> ClampSliceStarts(absl::Span<const int64_t> dims,
                                      absl::Span<const int64_t> sizes,
                                      absl::Span<const int64_t> starts) {
  std::vector<int64_t> clamped(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    clamped[d] = std::clamp<int64_t>(starts[d], 0, dims[d] - sizes[d]);
  }
  return clamped;
}

namespace {

// Visits the rows (runs along the minor dimension) of the slice: `fn(whole
// byte offset, slice byte offset, row bytes)`.
template <typename Fn>
void ForEachRow(absl::Span<const int64_t> dims, absl::Span<const int64_t> starts,
                absl::Span<const int64_t> sizes, int64_t element_bytes, Fn fn) {
  const auto rank = static_cast<int64_t>(dims.size());
  for (int64_t size : sizes) {
    if (size == 0) return;
  }
  if (rank == 0) {
    fn(0, 0, element_bytes);
    return;
  }
  std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(dims);  // in bytes below
  for (int64_t& stride : strides) stride *= element_bytes;
  const int64_t row = sizes[rank - 1] * element_bytes;
  std::vector<int64_t> at(rank, 0);  // the position among the rows
  int64_t slice_offset = 0;
  while (true) {
    int64_t whole_offset = 0;
    for (int64_t d = 0; d < rank; ++d) whole_offset += (starts[d] + at[d]) * strides[d];
    fn(whole_offset, slice_offset, row);
    slice_offset += row;
    int64_t d = rank - 2;
    while (d >= 0 && ++at[d] == sizes[d]) at[d--] = 0;
    if (d < 0) return;
  }
}

}  // namespace

void CopySliceOut(const char* whole, absl::Span<const int64_t> dims,
                  absl::Span<const int64_t> starts, absl::Span<const int64_t> sizes,
                  int64_t element_bytes, char* slice) {
  ForEachRow(dims, starts, sizes, element_bytes, [&](int64_t w, int64_t s, int64_t bytes) {
    std::memcpy(slice + s, whole + w, bytes);
  });
}

void CopySliceIn(const char* slice, absl::Span<const int64_t> dims,
                 absl::Span<const int64_t> starts, absl::Span<const int64_t> sizes,
                 int64_t element_bytes, char* whole) {
  ForEachRow(dims, starts, sizes, element_bytes, [&](int64_t w, int64_t s, int64_t bytes) {
    std::memcpy(whole + w, slice + s, bytes);
  });
}

absl::Status RunInPlacePermute(Communicator& communicator, const InPlacePermute& permute,
                               int64_t me, const PermuteOffsets& offsets,
                               absl::Span<const char* const> inputs,
                               absl::Span<char* const> outputs) {
  if (static_cast<int64_t>(inputs.size()) != permute.buffers ||
      static_cast<int64_t>(outputs.size()) != permute.buffers) {
    return absl::InternalError("in-place collective-permute: one pointer per buffer expected");
  }
  struct Move {
    int64_t source = -1, target = -1;
    std::vector<char> send, receive;
  };
  // Every slice is read before any is written.
  std::vector<Move> moves(permute.buffers * permute.chunks);
  for (int64_t c = 0; c < permute.chunks; ++c) {
    int64_t source = -1, target = -1;
    for (const auto& [from, to] : permute.pairs[c]) {
      if (to == me) source = from;
      if (from == me) target = to;
    }
    for (int64_t b = 0; b < permute.buffers; ++b) {
      Move& move = moves[b * permute.chunks + c];
      move.source = source;
      move.target = target;
      const std::vector<int64_t>& sizes = permute.slice_sizes[b * permute.chunks + c];
      const Shape& in = permute.inputs[b];
      const int64_t width = primitive_util::ByteWidth(in.element_type());
      int64_t bytes = width;
      for (int64_t size : sizes) bytes *= size;
      move.receive.resize(source >= 0 ? bytes : 0);
      if (target < 0) continue;
      move.send.resize(bytes);
      std::vector<int64_t> starts = ClampSliceStarts(in.dimensions(), sizes, offsets(b, c, true));
      CopySliceOut(inputs[b], in.dimensions(), starts, sizes, width, move.send.data());
    }
  }
  for (Move& move : moves) {
    const auto bytes = static_cast<int64_t>(std::max(move.send.size(), move.receive.size()));
    AXLE_RETURN_IF_ERROR(communicator.Permute(static_cast<int>(move.target), move.send.data(),
                                              static_cast<int>(move.source), move.receive.data(),
                                              bytes));
  }
  for (int64_t c = 0; c < permute.chunks; ++c) {
    for (int64_t b = 0; b < permute.buffers; ++b) {
      const Move& move = moves[b * permute.chunks + c];
      if (move.source < 0) continue;
      const std::vector<int64_t>& sizes = permute.slice_sizes[b * permute.chunks + c];
      const Shape& out = permute.outputs[b];
      std::vector<int64_t> starts = ClampSliceStarts(out.dimensions(), sizes, offsets(b, c, false));
      CopySliceIn(move.receive.data(), out.dimensions(), starts, sizes,
                  primitive_util::ByteWidth(out.element_type()), outputs[b]);
    }
  }
  return absl::OkStatus();
}

}  // namespace axle
