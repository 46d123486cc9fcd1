//===- evaluator_data_movement.cc - Ops that only move elements ------------===//
//
// iota, broadcast, reshape/bitcast, transpose, reverse, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, get-dimension-size, and
// bitcast-convert (equal widths go through the elementwise kernel). Apart from
// iota, none of them looks at element values, so they copy elements as bytes
// (ByteWidth each) and work for every element type alike. Most are one
// "strided copy": each result element is read from the operand at
// base + sum(index[d] * stride[d]).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/ragged_rows.h"

namespace axle::eval_internal {
namespace {

inline void CopyElement(uint8_t* dst, const uint8_t* src, int width) {
  switch (width) {
    case 1:
      *dst = *src;
      return;
    case 2:
      std::memcpy(dst, src, 2);
      return;
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    default:
      std::memcpy(dst, src, width);
      return;
  }
}

// out[i] (row-major over out_dims) = in[base + sum(index[d] * strides[d])],
// strides and base in elements.
void StridedCopy(const uint8_t* in, int64_t base, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> out_dims, uint8_t* out, int width) {
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  if (count == 0) return;
  int64_t rank = static_cast<int64_t>(out_dims.size());
  std::vector<int64_t> index(rank, 0);
  int64_t offset = base;
  for (int64_t i = 0; i < count; ++i) {
    CopyElement(out + i * width, in + offset * width, width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < out_dims[d]) break;
      offset -= strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

int Width(const Literal& literal) {
  return primitive_util::ByteWidth(literal.shape().element_type());
}
const uint8_t* Bytes(const Literal& literal) {
  return static_cast<const uint8_t*>(literal.untyped_data());
}
uint8_t* Bytes(Literal& literal) { return static_cast<uint8_t*>(literal.untyped_data()); }

absl::Status ExpectSameElementType(const HloInstruction& instruction, const Literal& operand) {
  if (!instruction.shape().IsArray() ||
      operand.shape().element_type() != instruction.shape().element_type()) {
    return InvalidInstruction(
        instruction,
        absl::StrCat("operand ", operand.shape().ToString(false), " and result ",
                     instruction.shape().ToString(false), " must be arrays of one element type"));
  }
  return absl::OkStatus();
}

const std::vector<int64_t>& DimensionsAttr(const HloInstruction& instruction) {
  return cast<HloDimensionsInstruction>(&instruction)->dimensions();
}

// A start index read from an integer scalar; unsigned values beyond int64
// saturate (they are clamped afterwards anyway).
absl::StatusOr<int64_t> ReadIndex(const HloInstruction& instruction, const Literal& literal,
                                  int64_t i) {
  PrimitiveType type = literal.shape().element_type();
  if (!literal.shape().IsArray() || !primitive_util::IsIntegralType(type)) {
    return InvalidInstruction(instruction, "start indices must be integers");
  }
  if (primitive_util::IsUnsignedIntegralType(type)) {
    uint64_t v = *literal.GetIntegralAsU64(i);
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  return *literal.GetIntegralAsS64(i);
}

// The start indices of dynamic-(update-)slice: one scalar operand per
// dimension (or, in the old form, one vector), clamped so that a slice of
// `sizes` fits in `dims`.
absl::StatusOr<std::vector<int64_t>> ClampedStarts(const HloInstruction& instruction,
                                                   absl::Span<const Literal* const> index_operands,
                                                   absl::Span<const int64_t> dims,
                                                   absl::Span<const int64_t> sizes) {
  int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> starts(rank, 0);
  bool all_scalars = static_cast<int64_t>(index_operands.size()) == rank;
  for (const Literal* index : index_operands)
    all_scalars = all_scalars && index->shape().rank() == 0;
  if (all_scalars) {
    for (int64_t d = 0; d < rank; ++d) {
      AXLE_ASSIGN_OR_RETURN(starts[d], ReadIndex(instruction, *index_operands[d], 0));
    }
  } else if (index_operands.size() == 1 && index_operands[0]->shape().rank() == 1 &&
             index_operands[0]->element_count() == rank) {
    for (int64_t d = 0; d < rank; ++d) {
      AXLE_ASSIGN_OR_RETURN(starts[d], ReadIndex(instruction, *index_operands[0], d));
    }
  } else {
    return InvalidInstruction(instruction, absl::StrCat("needs ", rank, " start indices"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] > dims[d] || sizes[d] < 0) {
      return InvalidInstruction(instruction, absl::StrCat("slice size ", sizes[d], " in dimension ",
                                                          d, " exceeds the operand's ", dims[d]));
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, dims[d] - sizes[d]);
  }
  return starts;
}

// The operand's elements in physical (layout) order, as a flat byte buffer.
std::vector<uint8_t> PhysicalBytes(const Literal& literal) {
  const Shape& shape = literal.shape();
  int width = Width(literal);
  std::vector<uint8_t> out(literal.element_count() * width);
  if (!shape.has_layout() || ShapeUtil::HasDescendingLayout(shape) ||
      static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    std::memcpy(out.data(), literal.untyped_data(), out.size());
    return out;
  }
  // Physical dims are the logical ones from major to minor.
  std::vector<int64_t> strides = Strides(shape);
  const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major();
  std::vector<int64_t> physical_dims, physical_strides;
  for (auto it = minor_to_major.rbegin(); it != minor_to_major.rend(); ++it) {
    physical_dims.push_back(shape.dimensions(*it));
    physical_strides.push_back(strides[*it]);
  }
  StridedCopy(Bytes(literal), 0, physical_strides, physical_dims, out.data(), width);
  return out;
}

// Fills an array literal from bytes in its physical (layout) order.
void FromPhysicalBytes(const std::vector<uint8_t>& bytes, Literal& literal) {
  const Shape& shape = literal.shape();
  int width = Width(literal);
  if (!shape.has_layout() || ShapeUtil::HasDescendingLayout(shape) ||
      static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    std::memcpy(literal.untyped_data(), bytes.data(),
                std::min<size_t>(bytes.size(), literal.size_bytes()));
    return;
  }
  // Logical element at index i sits at physical offset sum(i[d] * pstride[d]).
  const std::vector<int64_t> physical_strides = ShapeUtil::LayoutStrides(shape);
  StridedCopy(bytes.data(), 0, physical_strides, shape.dimensions(), Bytes(literal), width);
}

}  // namespace

std::vector<int64_t> Strides(const Shape& shape) {
  return ShapeUtil::RowMajorStrides(shape.dimensions());
}

absl::StatusOr<Literal> EvaluateIota(const HloInstruction& instruction) {
  const Shape& shape = instruction.shape();
  int64_t dimension = cast<HloIotaInstruction>(&instruction)->iota_dimension();
  if (!shape.IsArray() || dimension < 0 || dimension >= std::max<int64_t>(shape.rank(), 1) ||
      (shape.rank() == 0)) {
    return InvalidInstruction(instruction,
                              "iota_dimension must name a dimension of an array result");
  }
  Literal result(shape);
  int64_t inner = 1;
  for (int64_t d = dimension + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  int64_t size = shape.dimensions(dimension);
  PrimitiveTypeSwitch(
      [&]<typename T>() {
        T* out = result.data<T>().data();
        for (int64_t i = 0; i < result.element_count(); ++i) {
          out[i] = ConvertValue<T>(static_cast<int64_t>((i / inner) % size));
        }
      },
      shape.element_type());
  return result;
}

absl::StatusOr<Literal> EvaluateBroadcast(const HloInstruction& instruction,
                                          const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  const Shape& shape = instruction.shape();
  const std::vector<int64_t>& dims = DimensionsAttr(instruction);
  if (static_cast<int64_t>(dims.size()) != operand.shape().rank()) {
    return InvalidInstruction(instruction,
                              "needs one entry in dimensions={} per operand dimension");
  }
  std::vector<int64_t> operand_strides = Strides(operand.shape());
  std::vector<int64_t> strides(shape.rank(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= shape.rank() ||
        shape.dimensions(dims[i]) != operand.shape().dimensions(i)) {
      return InvalidInstruction(
          instruction,
          absl::StrCat("operand dimension ", i, " does not match result dimension ", dims[i]));
    }
    strides[dims[i]] = operand_strides[i];
  }
  Literal result(shape);
  StridedCopy(Bytes(operand), 0, strides, shape.dimensions(), Bytes(result), Width(operand));
  return result;
}

absl::StatusOr<Literal> EvaluateReshape(const HloInstruction& instruction, const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectArray(instruction, operand, "the operand"));
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return InvalidInstruction(instruction, "must produce an array");
  if (instruction.opcode() == HloOpcode::kBitcast) {
    // A bitcast reinterprets the physical buffer: honour both layouts.
    if (ShapeUtil::ByteSizeOfElements(shape) != operand.size_bytes()) {
      return InvalidInstruction(instruction, "a bitcast must keep the size in bytes");
    }
    Literal result(shape);
    if (shape.element_type() != operand.shape().element_type()) {
      std::memcpy(result.untyped_data(), operand.untyped_data(), operand.size_bytes());
      return result;
    }
    FromPhysicalBytes(PhysicalBytes(operand), result);
    return result;
  }
  if (shape.num_elements() != operand.element_count() ||
      shape.element_type() != operand.shape().element_type()) {
    return InvalidInstruction(
        instruction, absl::StrCat("cannot reshape ", operand.shape().ToString(false), " to ",
                                  shape.ToString(false)));
  }
  Literal result(shape);
  std::memcpy(result.untyped_data(), operand.untyped_data(), operand.size_bytes());
  return result;
}

absl::StatusOr<Literal> EvaluateTranspose(const HloInstruction& instruction,
                                          const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  const Shape& shape = instruction.shape();
  const std::vector<int64_t>& permutation = DimensionsAttr(instruction);
  int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(permutation.size()) != rank || shape.rank() != rank) {
    return InvalidInstruction(instruction, "dimensions={} must permute the operand's dimensions");
  }
  std::vector<int64_t> operand_strides = Strides(operand.shape());
  std::vector<int64_t> strides(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = permutation[i];
    if (p < 0 || p >= rank || seen[p] || operand.shape().dimensions(p) != shape.dimensions(i)) {
      return InvalidInstruction(instruction, "dimensions={} must permute the operand's dimensions");
    }
    seen[p] = true;
    strides[i] = operand_strides[p];
  }
  Literal result(shape);
  StridedCopy(Bytes(operand), 0, strides, shape.dimensions(), Bytes(result), Width(operand));
  return result;
}

absl::StatusOr<Literal> EvaluateReverse(const HloInstruction& instruction, const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  if (!ShapeUtil::SameDimensions(instruction.shape(), operand.shape())) {
    return InvalidInstruction(instruction, "result and operand dimensions differ");
  }
  std::vector<int64_t> strides = Strides(operand.shape());
  int64_t base = 0;
  for (int64_t d : DimensionsAttr(instruction)) {
    if (d < 0 || d >= operand.shape().rank()) {
      return InvalidInstruction(instruction, absl::StrCat("no dimension ", d, " to reverse"));
    }
    if (strides[d] < 0) continue;  // listed twice
    base += (operand.shape().dimensions(d) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  Literal result(instruction.shape());
  if (result.element_count() == 0) return result;
  StridedCopy(Bytes(operand), base, strides, operand.shape().dimensions(), Bytes(result),
              Width(operand));
  return result;
}

absl::StatusOr<Literal> EvaluateSlice(const HloInstruction& instruction, const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  const auto& slice = *cast<HloSliceInstruction>(&instruction);
  const Shape& shape = instruction.shape();
  int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(slice.slice_starts().size()) != rank ||
      static_cast<int64_t>(slice.slice_limits().size()) != rank ||
      static_cast<int64_t>(slice.slice_strides().size()) != rank || shape.rank() != rank) {
    return InvalidInstruction(instruction, "slice={} needs one [start:limit:stride] per dimension");
  }
  std::vector<int64_t> operand_strides = Strides(operand.shape());
  std::vector<int64_t> strides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = slice.slice_starts()[d], limit = slice.slice_limits()[d],
            stride = slice.slice_strides()[d];
    if (start < 0 || limit < start || limit > operand.shape().dimensions(d) || stride <= 0 ||
        shape.dimensions(d) != (limit - start + stride - 1) / stride) {
      return InvalidInstruction(instruction, absl::StrCat("bad slice [", start, ":", limit, ":",
                                                          stride, "] of dimension ", d));
    }
    base += start * operand_strides[d];
    strides[d] = stride * operand_strides[d];
  }
  Literal result(shape);
  StridedCopy(Bytes(operand), base, strides, shape.dimensions(), Bytes(result), Width(operand));
  return result;
}

absl::StatusOr<Literal> EvaluateDynamicSlice(const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands) {
  const Literal& operand = *operands[0];
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  const Shape& shape = instruction.shape();
  if (shape.rank() != operand.shape().rank()) {
    return InvalidInstruction(instruction, "result and operand ranks differ");
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(instruction, operands.subspan(1),
                                      operand.shape().dimensions(), shape.dimensions()));
  std::vector<int64_t> strides = Strides(operand.shape());
  int64_t base = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) base += starts[d] * strides[d];
  Literal result(shape);
  StridedCopy(Bytes(operand), base, strides, shape.dimensions(), Bytes(result), Width(operand));
  return result;
}

absl::StatusOr<Literal> EvaluateDynamicUpdateSlice(const HloInstruction& instruction,
                                                   absl::Span<const Literal* const> operands) {
  if (operands.size() < 2) return InvalidInstruction(instruction, "needs an operand and an update");
  const Literal& operand = *operands[0];
  const Literal& update = *operands[1];
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, update));
  if (update.shape().rank() != operand.shape().rank() ||
      !ShapeUtil::SameDimensions(operand.shape(), instruction.shape())) {
    return InvalidInstruction(instruction, "operand, update and result ranks must agree");
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(instruction, operands.subspan(2),
                                      operand.shape().dimensions(), update.shape().dimensions()));
  Literal result = operand.Clone();
  int width = Width(operand);
  std::vector<int64_t> strides = Strides(operand.shape());
  int64_t rank = update.shape().rank();
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) base += starts[d] * strides[d];
  // Walk the update in row-major order, writing through the operand strides.
  std::vector<int64_t> index(rank, 0);
  int64_t offset = base;
  const uint8_t* src = Bytes(update);
  uint8_t* dst = Bytes(result);
  for (int64_t i = 0; i < update.element_count(); ++i) {
    CopyElement(dst + offset * width, src + i * width, width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < update.shape().dimensions(d)) break;
      offset -= strides[d] * update.shape().dimensions(d);
      index[d] = 0;
    }
  }
  return result;
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes) with one participant: every update u sends rows
// [input_offsets[u], +send_sizes[u]) of the input to rows
// [output_offsets[u], +send_sizes[u]) of the output, in order (a later
// update overwrites an earlier one). Rows outside either array are skipped.
absl::StatusOr<Literal> EvaluateRaggedAllToAll(const HloInstruction& instruction,
                                               absl::Span<const Literal* const> operands) {
  if (operands.size() != 6) return InvalidInstruction(instruction, "needs 6 operands");
  const Literal& input = *operands[0];
  const Shape& in = input.shape();
  const Shape& out = operands[1]->shape();
  if (!in.IsArray() || !out.IsArray() || in.rank() < 1 || in.rank() != out.rank() ||
      in.element_type() != out.element_type() ||
      !ShapeUtil::SameDimensions(ShapeUtil::DeleteDimensions({0}, in),
                                 ShapeUtil::DeleteDimensions({0}, out))) {
    return InvalidInstruction(instruction,
                              "input and output must be arrays that differ only in dimension 0");
  }
  const int64_t updates = operands[2]->shape().IsArray() ? operands[2]->element_count() : -1;
  for (int i = 2; i < 6; ++i) {
    const Shape& shape = operands[i]->shape();
    if (!shape.IsArray() || shape.rank() != 1 || shape.dimensions(0) != updates ||
        !primitive_util::IsIntegralType(shape.element_type())) {
      return InvalidInstruction(instruction,
                                "offsets and sizes must be integer vectors of one length");
    }
  }
  Literal result = operands[1]->Clone();
  int64_t row_bytes = Width(input);
  for (int64_t d = 1; d < in.rank(); ++d) row_bytes *= in.dimensions(d);
  const int64_t in_rows = in.dimensions(0), out_rows = out.dimensions(0);
  const uint8_t* src = Bytes(input);
  uint8_t* dst = Bytes(result);
  for (int64_t u = 0; u < updates; ++u) {
    CopyRaggedRows(src, in_rows, dst, out_rows, row_bytes, *operands[2]->GetIntegralAsS64(u),
                   *operands[3]->GetIntegralAsS64(u), *operands[4]->GetIntegralAsS64(u));
  }
  return result;
}

absl::StatusOr<Literal> EvaluateConcatenate(const HloInstruction& instruction,
                                            absl::Span<const Literal* const> operands) {
  const Shape& shape = instruction.shape();
  int64_t dimension = cast<HloDimensionsInstruction>(&instruction)->dimensions().empty()
                          ? -1
                          : DimensionsAttr(instruction)[0];
  if (!shape.IsArray() || dimension < 0 || dimension >= shape.rank()) {
    return InvalidInstruction(instruction, "dimensions={d} must name a dimension of the result");
  }
  int64_t total = 0;
  for (const Literal* operand : operands) {
    AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, *operand));
    if (operand->shape().rank() != shape.rank()) {
      return InvalidInstruction(instruction, "operands must have the result's rank");
    }
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (d != dimension && operand->shape().dimensions(d) != shape.dimensions(d)) {
        return InvalidInstruction(instruction,
                                  "operands differ outside the concatenated dimension");
      }
    }
    total += operand->shape().dimensions(dimension);
  }
  if (total != shape.dimensions(dimension)) {
    return InvalidInstruction(instruction, "operand sizes do not add up to the result's");
  }
  Literal result(shape);
  int width = primitive_util::ByteWidth(shape.element_type());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= shape.dimensions(d);
  for (int64_t d = dimension + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  int64_t out_row = shape.dimensions(dimension) * inner * width;
  int64_t offset = 0;
  for (const Literal* operand : operands) {
    int64_t row = operand->shape().dimensions(dimension) * inner * width;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(Bytes(result) + o * out_row + offset, Bytes(*operand) + o * row, row);
    }
    offset += row;
  }
  return result;
}

absl::StatusOr<Literal> EvaluatePad(const HloInstruction& instruction, const Literal& operand,
                                    const Literal& padding_value) {
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, operand));
  AXLE_RETURN_IF_ERROR(ExpectSameElementType(instruction, padding_value));
  if (padding_value.shape().rank() != 0) {
    return InvalidInstruction(instruction, "the padding value must be a scalar");
  }
  const Shape& shape = instruction.shape();
  const PaddingConfig& config = cast<HloPadInstruction>(&instruction)->padding_config();
  int64_t rank = operand.shape().rank();
  if (config.dimensions_size() != rank || shape.rank() != rank) {
    return InvalidInstruction(instruction, "padding needs one entry per dimension");
  }
  for (int64_t d = 0; d < rank; ++d) {
    const auto& p = config.dimensions(d);
    int64_t size = operand.shape().dimensions(d);
    if (p.interior_padding() < 0)
      return InvalidInstruction(instruction, "interior padding must be >= 0");
    int64_t expected = p.edge_padding_low() + p.edge_padding_high() + size +
                       std::max<int64_t>(size - 1, 0) * p.interior_padding();
    if (expected != shape.dimensions(d) || expected < 0) {
      return InvalidInstruction(
          instruction, absl::StrCat("dimension ", d, " pads to ", expected, " but the result has ",
                                    shape.dimensions(d)));
    }
  }
  Literal result(shape);
  int width = Width(operand);
  uint8_t* dst = Bytes(result);
  for (int64_t i = 0; i < result.element_count(); ++i) {
    CopyElement(dst + i * width, Bytes(padding_value), width);
  }
  if (operand.element_count() == 0) return result;
  std::vector<int64_t> out_strides = Strides(shape);
  std::vector<int64_t> index(rank, 0);
  const uint8_t* src = Bytes(operand);
  for (int64_t i = 0; i < operand.element_count(); ++i) {
    // Interior padding comes first, then edge padding (which may be negative
    // and cut elements off).
    bool inside = true;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const auto& p = config.dimensions(d);
      int64_t target = p.edge_padding_low() + index[d] * (p.interior_padding() + 1);
      if (target < 0 || target >= shape.dimensions(d)) {
        inside = false;
        break;
      }
      offset += target * out_strides[d];
    }
    if (inside) CopyElement(dst + offset * width, src + i * width, width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < operand.shape().dimensions(d)) break;
      index[d] = 0;
    }
  }
  return result;
}

absl::StatusOr<Literal> EvaluateGetDimensionSize(const HloInstruction& instruction,
                                                 const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectArray(instruction, operand, "the operand"));
  const std::vector<int64_t>& dims = DimensionsAttr(instruction);
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= operand.shape().rank()) {
    return InvalidInstruction(instruction, "dimensions={d} must name a dimension of the operand");
  }
  if (!instruction.shape().IsArray() || instruction.shape().rank() != 0) {
    return InvalidInstruction(instruction, "must produce a scalar");
  }
  Literal result(instruction.shape());
  result.SetIntegral(0, operand.shape().dimensions(dims[0]));
  return result;
}

// bitcast-convert between widths moves bits, not values: it lives here.
absl::StatusOr<Literal> EvaluateBitcastConvert(const HloInstruction& instruction,
                                               const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectArray(instruction, operand, "the operand"));
  const Shape& out_shape = instruction.shape();
  if (!out_shape.IsArray()) return InvalidInstruction(instruction, "must produce an array");
  PrimitiveType in_type = operand.shape().element_type(), out_type = out_shape.element_type();
  int in_bits = primitive_util::BitWidth(in_type), out_bits = primitive_util::BitWidth(out_type);
  if (in_bits * operand.element_count() != out_bits * out_shape.num_elements()) {
    return InvalidInstruction(
        instruction, absl::StrCat("cannot reinterpret ", operand.shape().ToString(false), " as ",
                                  out_shape.ToString(false), ": sizes in bits differ"));
  }
  Literal result(out_shape);
  if (in_bits == out_bits) {
    Lanes lanes = LanesOf(operand);
    AXLE_RETURN_IF_ERROR(EvaluateElementwiseLanes(instruction, {lanes}, out_type,
                                                  result.untyped_data(), result.element_count()));
    return result;
  }
  // Different widths: the elements' bits form one little-endian bit stream.
  bool packed_in = in_bits % 8 == 0, packed_out = out_bits % 8 == 0;
  auto* dst = static_cast<uint8_t*>(result.untyped_data());
  // A pred holds 0 or 1: any nonzero byte is true.
  auto normalize_pred = [&] {
    if (out_type != PRED) return;
    for (int64_t e = 0; e < result.element_count(); ++e) dst[e] = dst[e] != 0;
  };
  if (packed_in && packed_out) {
    std::memcpy(result.untyped_data(), operand.untyped_data(), operand.size_bytes());
    normalize_pred();
    return result;
  }
  const auto* src = static_cast<const uint8_t*>(operand.untyped_data());
  int in_bytes = primitive_util::ByteWidth(in_type),
      out_bytes = primitive_util::ByteWidth(out_type);
  bool sign_extend = primitive_util::IsSignedIntegralType(out_type);
  auto read_bit = [&](int64_t bit) {
    int64_t element = bit / in_bits, offset = bit % in_bits;
    return (src[element * in_bytes + offset / 8] >> (offset % 8)) & 1;
  };
  for (int64_t e = 0; e < result.element_count(); ++e) {
    uint64_t value = 0;
    for (int b = 0; b < out_bits; ++b)
      value |= static_cast<uint64_t>(read_bit(e * out_bits + b)) << b;
    if (out_bits < 8 && sign_extend && (value >> (out_bits - 1)) & 1)
      value |= ~uint64_t{0} << out_bits;
    std::memcpy(dst + e * out_bytes, &value, out_bytes);  // little-endian host
  }
  normalize_pred();
  return result;
}

absl::StatusOr<Literal> ConvertScalar(const Literal& scalar, PrimitiveType type) {
  return scalar.Convert(type);
}

}  // namespace axle::eval_internal
