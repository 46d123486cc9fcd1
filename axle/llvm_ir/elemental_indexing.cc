//===- elemental_indexing.cc - Index-remapping ops as LLVM IR --------------===//
//
// broadcast, reshape (and dynamic-reshape, set-dimension-size on static
// data), bitcast, transpose, slice, concatenate, pad, iota, reverse,
// dynamic-slice, dynamic-update-slice, gather and constant: each
// maps the output index to an operand index (or a value) with straight-line
// IR. concatenate, pad and dynamic-update-slice read their operands at
// clamped indices and select, so no branches appear in the loop body and the
// loop still vectorizes. Dynamic starts (dynamic-slice, dynamic-update-slice,
// gather) are clamped so the slice lies inside the operand, as XLA does.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/delinearize.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"

namespace axle::llvm_ir {
namespace pu = primitive_util;

IrIndex Delinearize(llvm::IRBuilderBase& b, llvm::Value* linear,
                    absl::Span<const int64_t> dimensions) {
  IrIndex index(dimensions.size());
  for (int64_t i = static_cast<int64_t>(dimensions.size()) - 1; i >= 0; --i) {
    llvm::Value* size = b.getInt64(dimensions[i]);
    if (i == 0) {
      index[i] = linear;
    } else {
      index[i] = b.CreateURem(linear, size);
      linear = b.CreateUDiv(linear, size);
    }
  }
  return index;
}

// The operand index of a reshape (output dimensions `out`, operand
// dimensions `in`, both with elements) at output `index`. The dimensions are
// split into groups where the leading products of both shapes agree (XLA's
// common factors), and each group is linearized and delinearized on its
// own: dimensions of size 1 added or dropped cost nothing, and a group
// whose operand side is one dimension needs no division (a dynamic slice
// [1, 2, 384] reshaped to [2, 384] in an RNN step reads its operand at
// plain indices, and its loop vectorizes).
IrIndex ReshapeOperandIndex(llvm::IRBuilderBase& b, const IrIndex& index,
                            absl::Span<const int64_t> out, absl::Span<const int64_t> in) {
  IrIndex operand_index;
  operand_index.reserve(in.size());
  size_t i = 0, j = 0;
  while (i < out.size() || j < in.size()) {
    const size_t i0 = i, j0 = j;
    int64_t out_product = 1, in_product = 1;
    while (true) {
      const bool started = i > i0 || j > j0;
      if ((started && out_product == in_product) || (i == out.size() && j == in.size())) break;
      if (i < out.size() && (out_product <= in_product || j == in.size())) {
        out_product *= out[i++];
      } else {
        in_product *= in[j++];
      }
    }
    // The group's linear index over out[i0, i), then its operand dimensions.
    llvm::Value* linear = nullptr;
    for (size_t d = i0; d < i; ++d) {
      if (out[d] == 1) continue;
      linear = linear == nullptr ? index[d]
                                 : b.CreateAdd(b.CreateMul(linear, b.getInt64(out[d])), index[d]);
    }
    if (linear == nullptr) linear = b.getInt64(0);
    // The outermost operand dimension above size 1 takes what is left.
    size_t first = j;
    for (size_t d = j; d-- > j0;) {
      if (in[d] != 1) first = d;
    }
    IrIndex group(j - j0, nullptr);
    for (size_t d = j; d-- > j0;) {
      if (in[d] == 1) {
        group[d - j0] = b.getInt64(0);
      } else if (d == first) {
        group[d - j0] = linear;
      } else {
        group[d - j0] = b.CreateURem(linear, b.getInt64(in[d]));
        linear = b.CreateUDiv(linear, b.getInt64(in[d]));
      }
    }
    operand_index.insert(operand_index.end(), group.begin(), group.end());
  }
  return operand_index;
}

namespace {

llvm::Value* Clamp(llvm::IRBuilderBase& b, llvm::Value* v, int64_t low, int64_t high) {
  v = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, b.getInt64(low));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, b.getInt64(high));
}

}  // namespace

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitIndexing(const HloInstruction& hlo,
                                                              Generators operands,
                                                              const IrIndex& index) {
  const Shape& shape = hlo.shape();
  switch (hlo.opcode()) {
    case HloOpcode::kConstant:
      return EmitConstant(hlo, index);
    case HloOpcode::kBroadcast: {
      const auto& dims = cast<HloDimensionsInstruction>(&hlo)->dimensions();
      IrIndex operand_index;
      for (int64_t d : dims) operand_index.push_back(index[d]);
      return operands[0](operand_index);
    }
    case HloOpcode::kSetDimensionSize:
      // Shapes are static here: the data is the operand's (as the
      // interpreter has it).
      return operands[0](index);
    case HloOpcode::kGetDimensionSize: {
      const int64_t d = cast<HloDimensionsInstruction>(&hlo)->dimension();
      if (d < 0 || d >= hlo.operand(0)->shape().rank()) {
        return absl::InvalidArgumentError(
            absl::StrCat("codegen: get-dimension-size ", hlo.name(), ": no dimension ", d));
      }
      return EmitConvert(I64(hlo.operand(0)->shape().dimensions(d)), S64, shape.element_type());
    }
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kBitcast: {
      const Shape& operand_shape = hlo.operand(0)->shape();
      if (operand_shape.num_elements() != shape.num_elements()) {
        return absl::UnimplementedError(absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()),
                                                     " changing the element count (", hlo.name(),
                                                     ")"));
      }
      // A bitcast between element types of one width (a scalar f32 -> s32
      // in JAX's total-order sort comparators) reinterprets each element's
      // bits, as bitcast-convert does.
      const bool retyped = hlo.opcode() == HloOpcode::kBitcast &&
                           operand_shape.element_type() != shape.element_type();
      if (retyped &&
          pu::BitWidth(operand_shape.element_type()) != pu::BitWidth(shape.element_type())) {
        return absl::UnimplementedError(absl::StrCat(
            "codegen: bitcast changing the element width is not implemented (", hlo.name(), ")"));
      }
      llvm::Value* element = nullptr;
      if (operand_shape.dimensions() == shape.dimensions()) {
        AXLE_ASSIGN_OR_RETURN(element, operands[0](index));
      } else if (shape.num_elements() > 0) {
        AXLE_ASSIGN_OR_RETURN(element,
                              operands[0](ReshapeOperandIndex(b_, index, shape.dimensions(),
                                                              operand_shape.dimensions())));
      } else {
        llvm::Value* linear = Linearize(index, shape.dimensions());
        AXLE_ASSIGN_OR_RETURN(element,
                              operands[0](Delinearize(b_, linear, operand_shape.dimensions())));
      }
      if (!retyped) return element;
      return EmitBitcastConvert(hlo, element);
    }
    case HloOpcode::kTranspose: {
      const auto& dims = cast<HloDimensionsInstruction>(&hlo)->dimensions();
      IrIndex operand_index(dims.size());
      for (size_t i = 0; i < dims.size(); ++i) operand_index[dims[i]] = index[i];
      return operands[0](operand_index);
    }
    case HloOpcode::kReverse: {
      IrIndex operand_index = index;
      for (int64_t d : cast<HloDimensionsInstruction>(&hlo)->dimensions()) {
        operand_index[d] = b_.CreateSub(I64(shape.dimensions(d) - 1), index[d]);
      }
      return operands[0](operand_index);
    }
    case HloOpcode::kSlice: {
      const auto& slice = *cast<HloSliceInstruction>(&hlo);
      IrIndex operand_index(index.size());
      for (size_t i = 0; i < index.size(); ++i) {
        operand_index[i] = b_.CreateAdd(I64(slice.slice_starts()[i]),
                                        b_.CreateMul(index[i], I64(slice.slice_strides()[i])));
      }
      return operands[0](operand_index);
    }
    case HloOpcode::kConcatenate: {
      const int64_t dim = cast<HloDimensionsInstruction>(&hlo)->dimension();
      llvm::Value* result = nullptr;
      int64_t offset = 0;
      for (int64_t i = 0; i < hlo.operand_count(); ++i) {
        const int64_t size = hlo.operand(i)->shape().dimensions(dim);
        if (size == 0) continue;
        IrIndex operand_index = index;
        operand_index[dim] = Clamp(b_, b_.CreateSub(index[dim], I64(offset)), 0, size - 1);
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[i](operand_index));
        if (result == nullptr) {
          result = value;
        } else {
          result = b_.CreateSelect(b_.CreateICmpSGE(index[dim], I64(offset)), value, result);
        }
        offset += size;
      }
      return result;
    }
    case HloOpcode::kPad: {
      const PaddingConfig& config = cast<HloPadInstruction>(&hlo)->padding_config();
      const Shape& operand_shape = hlo.operand(0)->shape();
      IrIndex operand_index(index.size());
      llvm::Value* in_operand = b_.getTrue();
      for (size_t i = 0; i < index.size(); ++i) {
        const auto& d = config.dimensions(i);
        const int64_t step = d.interior_padding() + 1;
        llvm::Value* t = b_.CreateSub(index[i], I64(d.edge_padding_low()));
        llvm::Value* position = b_.CreateSDiv(t, I64(step));
        llvm::Value* ok = b_.CreateICmpSGE(t, I64(0));
        if (step > 1) ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(t, I64(step)), I64(0)));
        ok = b_.CreateAnd(ok, b_.CreateICmpSLT(position, I64(operand_shape.dimensions(i))));
        in_operand = b_.CreateAnd(in_operand, ok);
        operand_index[i] = Clamp(b_, position, 0, operand_shape.dimensions(i) - 1);
      }
      AXLE_ASSIGN_OR_RETURN(llvm::Value * padding, operands[1](IrIndex{}));
      if (operand_shape.num_elements() == 0) return padding;
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[0](operand_index));
      return b_.CreateSelect(in_operand, value, padding);
    }
    case HloOpcode::kIota: {
      const int64_t dim = cast<HloIotaInstruction>(&hlo)->iota_dimension();
      return EmitConvert(index[dim], S64, shape.element_type());
    }
    case HloOpcode::kDynamicSlice: {
      const auto& sizes = cast<HloDynamicSliceInstruction>(&hlo)->dynamic_slice_sizes();
      AXLE_ASSIGN_OR_RETURN(IrIndex starts, EmitStarts(hlo, operands, 1, sizes));
      IrIndex operand_index(index.size());
      for (size_t i = 0; i < index.size(); ++i) {
        operand_index[i] = b_.CreateAdd(starts[i], index[i]);
      }
      return operands[0](operand_index);
    }
    case HloOpcode::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(hlo, operands, index);
    case HloOpcode::kGather:
      return EmitGather(hlo, operands, index);
    default:
      return absl::UnimplementedError(absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()),
                                                   " is not implemented in loop kernels (",
                                                   hlo.name(), ")"));
  }
}

llvm::Value* ElementalIrEmitter::ClampStart(llvm::Value* value, PrimitiveType type, int64_t high) {
  if (pu::IsSignedIntegralType(type)) {
    return Clamp(b_, b_.CreateSExt(value, b_.getInt64Ty()), 0, high);
  }
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateZExt(value, b_.getInt64Ty()),
                                  I64(high));
}

absl::StatusOr<IrIndex> ElementalIrEmitter::EmitStarts(const HloInstruction& hlo,
                                                       Generators operands, int64_t first,
                                                       absl::Span<const int64_t> sizes) {
  const Shape& operand_shape = hlo.operand(0)->shape();
  const int64_t rank = operand_shape.rank();
  // XLA's older form passes every start in one rank-1 operand.
  const bool start_vector =
      hlo.operand_count() == first + 1 && hlo.operand(first)->shape().rank() == 1;
  if ((!start_vector && hlo.operand_count() != first + rank) ||
      static_cast<int64_t>(sizes.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()), " ",
                                                   hlo.name(), " has ", hlo.operand_count() - first,
                                                   " start operands for rank ", rank));
  }
  IrIndex starts(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const HloInstruction* start_operand = hlo.operand(start_vector ? first : first + i);
    const PrimitiveType type = start_operand->shape().element_type();
    const int64_t high = operand_shape.dimensions(i) - sizes[i];
    if (!pu::IsIntegralType(type) || high < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()), " ", hlo.name(),
                       ": start indices must be integers and the slice must fit the operand"));
    }
    llvm::Value* start;
    if (start_vector) {
      AXLE_ASSIGN_OR_RETURN(start, operands[first](IrIndex{I64(i)}));
    } else {
      AXLE_ASSIGN_OR_RETURN(start, operands[first + i](IrIndex{}));
    }
    starts[i] = ClampStart(start, type, high);
  }
  return starts;
}

// The update where the (clamped) window covers the index, else the operand.
absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitDynamicUpdateSlice(const HloInstruction& hlo,
                                                                        Generators operands,
                                                                        const IrIndex& index) {
  if (hlo.operand_count() < 2 || hlo.operand(1)->shape().rank() != hlo.shape().rank()) {
    return absl::InvalidArgumentError(absl::StrCat("codegen: dynamic-update-slice ", hlo.name(),
                                                   " needs an update of the result's rank"));
  }
  const Shape& update_shape = hlo.operand(1)->shape();
  AXLE_ASSIGN_OR_RETURN(IrIndex starts, EmitStarts(hlo, operands, 2, update_shape.dimensions()));
  AXLE_ASSIGN_OR_RETURN(llvm::Value * original, operands[0](index));
  if (update_shape.num_elements() == 0) return original;
  llvm::Value* in_window = b_.getTrue();
  IrIndex update_index(index.size());
  for (size_t i = 0; i < index.size(); ++i) {
    llvm::Value* t = b_.CreateSub(index[i], starts[i]);
    const int64_t size = update_shape.dimensions(i);
    in_window = b_.CreateAnd(in_window, b_.CreateICmpULT(t, I64(size)));
    update_index[i] = Clamp(b_, t, 0, size - 1);
  }
  AXLE_ASSIGN_OR_RETURN(llvm::Value * update, operands[1](update_index));
  return b_.CreateSelect(in_window, update, original);
}

// XLA's gather: the output's batch coordinates pick an index vector from
// start_indices; its entries, clamped so the slice fits, are the starts of
// the operand dimensions in start_index_map; offset coordinates walk the
// slice; operand batching dimensions take the matching batch coordinate.
absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitGather(const HloInstruction& hlo,
                                                            Generators operands,
                                                            const IrIndex& index) {
  const auto& gather = *cast<HloGatherInstruction>(&hlo);
  const GatherDimensionNumbers& dn = gather.gather_dimension_numbers();
  const std::vector<int64_t>& slice_sizes = gather.gather_slice_sizes();
  const Shape& operand_shape = hlo.operand(0)->shape();
  const Shape& indices_shape = hlo.operand(1)->shape();
  const int64_t operand_rank = operand_shape.rank();
  const int64_t indices_rank = indices_shape.rank();
  const int64_t vector_dim = dn.index_vector_dim();
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("codegen: gather ", hlo.name(), ": ", why));
  };
  auto contains = [](absl::Span<const int64_t> dims, int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
  };
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank) {
    return invalid("slice_sizes needs one entry per operand dimension");
  }
  if (vector_dim < 0 || vector_dim > indices_rank ||
      !pu::IsIntegralType(indices_shape.element_type())) {
    return invalid("bad index_vector_dim or non-integer start_indices");
  }
  const int64_t vector_size = vector_dim == indices_rank ? 1 : indices_shape.dimensions(vector_dim);
  if (dn.start_index_map_size() != vector_size ||
      dn.operand_batching_dims_size() != dn.start_indices_batching_dims_size()) {
    return invalid("start_index_map or batching dims do not match start_indices");
  }
  // Output batch coordinates, in order, are the start_indices dimensions
  // other than index_vector_dim.
  IrIndex batch;
  for (int64_t d = 0; d < static_cast<int64_t>(index.size()); ++d) {
    if (!contains(dn.offset_dims(), d)) batch.push_back(index[d]);
  }
  if (static_cast<int64_t>(batch.size()) != indices_rank - (vector_dim < indices_rank ? 1 : 0)) {
    return invalid("the result's batch dimensions do not match start_indices");
  }
  auto batch_position = [&](int64_t d) { return d < vector_dim ? d : d - 1; };
  IrIndex operand_index(operand_rank, nullptr);
  for (int64_t i = 0, k = 0; i < operand_rank; ++i) {
    if (contains(dn.collapsed_slice_dims(), i)) {
      operand_index[i] = I64(0);
    } else if (contains(dn.operand_batching_dims(), i)) {
      continue;
    } else {
      if (k >= dn.offset_dims_size() || dn.offset_dims(k) >= static_cast<int64_t>(index.size())) {
        return invalid("offset_dims do not match the operand's window dimensions");
      }
      operand_index[i] = index[dn.offset_dims(k++)];
    }
  }
  for (int64_t j = 0; j < dn.operand_batching_dims_size(); ++j) {
    const int64_t d = dn.operand_batching_dims(j);
    const int64_t source = dn.start_indices_batching_dims(j);
    if (d < 0 || d >= operand_rank || source < 0 || source >= indices_rank ||
        source == vector_dim) {
      return invalid("bad batching dimensions");
    }
    operand_index[d] = batch[batch_position(source)];
  }
  for (int64_t k = 0; k < vector_size; ++k) {
    const int64_t d = dn.start_index_map(k);
    if (d < 0 || d >= operand_rank || slice_sizes[d] > operand_shape.dimensions(d)) {
      return invalid("bad start_index_map or slice_sizes");
    }
    IrIndex indices_index;
    for (int64_t e = 0; e < indices_rank; ++e) {
      indices_index.push_back(e == vector_dim ? I64(k) : batch[batch_position(e)]);
    }
    AXLE_ASSIGN_OR_RETURN(llvm::Value * start, operands[1](indices_index));
    start = ClampStart(start, indices_shape.element_type(),
                       operand_shape.dimensions(d) - slice_sizes[d]);
    operand_index[d] = operand_index[d] == nullptr ? start : b_.CreateAdd(operand_index[d], start);
  }
  for (llvm::Value* v : operand_index) {
    if (v == nullptr) return invalid("an operand dimension is neither sliced nor batched");
  }
  return operands[0](operand_index);
}

// bitcast-convert between widths: a wide element is `ratio` narrow ones
// along an extra minor dimension, the first one in the lowest bits.
absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitBitcastConvertWidths(const HloInstruction& hlo,
                                                                          Generators operands,
                                                                          const IrIndex& index) {
  AXLE_RETURN_IF_ERROR(CheckBitcastTypes(hlo));
  const PrimitiveType from = hlo.operand(0)->shape().element_type();
  const PrimitiveType to = hlo.shape().element_type();
  const int64_t from_bits = pu::BitWidth(from), to_bits = pu::BitWidth(to);
  const Shape& operand_shape = hlo.operand(0)->shape();
  if (from_bits > to_bits) {
    // One operand element gives the output's last dimension.
    if (operand_shape.rank() + 1 != hlo.shape().rank() ||
        hlo.shape().dimensions().back() * to_bits != from_bits) {
      return absl::InvalidArgumentError(absl::StrCat("codegen: bitcast-convert ", hlo.name(),
                                                     ": shapes do not match the widths"));
    }
    IrIndex operand_index(index.begin(), index.end() - 1);
    AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operands[0](operand_index));
    llvm::Value* bits = ToBits(x, from);
    llvm::Value* shift = b_.CreateMul(index.back(), I64(to_bits));
    bits = b_.CreateLShr(bits, b_.CreateZExtOrTrunc(shift, bits->getType()));
    return FromBits(bits, to);
  }
  // The operand's last dimension gives one output element.
  const int64_t ratio = to_bits / from_bits;
  if (operand_shape.rank() != hlo.shape().rank() + 1 ||
      operand_shape.dimensions().back() != ratio || ratio * from_bits != to_bits) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen: bitcast-convert ", hlo.name(), ": shapes do not match the widths"));
  }
  llvm::Type* wide = b_.getIntNTy(to_bits);
  llvm::Value* bits = llvm::ConstantInt::get(wide, 0);
  for (int64_t k = 0; k < ratio; ++k) {
    IrIndex operand_index = index;
    operand_index.push_back(I64(k));
    AXLE_ASSIGN_OR_RETURN(llvm::Value * x, operands[0](operand_index));
    llvm::Value* part = b_.CreateZExt(ToBits(x, from), wide);
    bits = b_.CreateOr(bits, b_.CreateShl(part, llvm::ConstantInt::get(wide, k * from_bits)));
  }
  return FromBits(bits, to);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitConstant(const HloInstruction& hlo,
                                                              const IrIndex& index) {
  const Literal& literal = cast<HloConstantInstruction>(&hlo)->literal();
  const Shape& shape = literal.shape();
  const PrimitiveType type = shape.element_type();
  if (!ShapeUtil::HasDescendingLayout(shape)) {
    return absl::UnimplementedError(
        absl::StrCat("codegen: constant with a non-default layout (", hlo.name(), ")"));
  }
  // The bytes as an i8 array; elements are loaded through their storage type.
  const char* data = static_cast<const char*>(literal.untyped_data());
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(data, literal.size_bytes()), literal.size_bytes(), b_.getInt8Ty());
  auto* global = new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init,
                                          absl::StrCat("constant.", hlo.name()));
  global->setAlignment(llvm::Align(kBufferAlignment));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  llvm::Value* linear = index.empty() ? I64(0) : Linearize(index, shape.dimensions());
  return LoadElement(global, linear, type);
}

}  // namespace axle::llvm_ir
