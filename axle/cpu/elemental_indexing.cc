//===- elemental_indexing.cc - Index-remapping ops as LLVM IR --------------===//
//
// broadcast, reshape, bitcast, transpose, slice, concatenate, pad, iota,
// reverse, dynamic-slice and constant: each maps the output index to an
// operand index (or a value) with straight-line IR. concatenate and pad read
// their operands at clamped indices and select, so no branches appear in
// the loop body and the loop still vectorizes.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/elemental_ir_emitter.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace pu = primitive_util;

namespace {

// Row-major index of `linear` in `dimensions`.
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
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast: {
      const Shape& operand_shape = hlo.operand(0)->shape();
      if (hlo.opcode() == HloOpcode::kBitcast &&
          operand_shape.element_type() != shape.element_type()) {
        return absl::UnimplementedError(
            absl::StrCat("CPU codegen: bitcast changing the element type is not implemented (",
                         hlo.name(), ")"));
      }
      if (operand_shape.dimensions() == shape.dimensions()) return operands[0](index);
      llvm::Value* linear = Linearize(index, shape.dimensions());
      return operands[0](Delinearize(b_, linear, operand_shape.dimensions()));
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
      const Shape& operand_shape = hlo.operand(0)->shape();
      IrIndex operand_index(index.size());
      // XLA's older form passes every start in one rank-1 operand.
      const bool start_vector = hlo.operand_count() == 2 && hlo.operand(1)->shape().rank() == 1;
      if (!start_vector && hlo.operand_count() != static_cast<int64_t>(index.size()) + 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CPU codegen: dynamic-slice ", hlo.name(), " has ", hlo.operand_count() - 1,
            " start operands for rank ", index.size()));
      }
      for (size_t i = 0; i < index.size(); ++i) {
        llvm::Value* start;
        if (start_vector) {
          AXLE_ASSIGN_OR_RETURN(start, operands[1](IrIndex{I64(static_cast<int64_t>(i))}));
        } else {
          AXLE_ASSIGN_OR_RETURN(start, operands[i + 1](IrIndex{}));
        }
        const PrimitiveType start_type = hlo.operand(start_vector ? 1 : i + 1)->shape().element_type();
        const bool is_signed = pu::IsSignedIntegralType(start_type);
        llvm::Value* start64 = b_.CreateIntCast(start, b_.getInt64Ty(), is_signed);
        const int64_t high = operand_shape.dimensions(i) - sizes[i];
        llvm::Value* clamped;
        if (is_signed) {
          clamped = Clamp(b_, start64, 0, high);
        } else {
          clamped = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, start64, I64(high));
        }
        operand_index[i] = b_.CreateAdd(clamped, index[i]);
      }
      return operands[0](operand_index);
    }
    default:
      return absl::UnimplementedError(absl::StrCat("CPU codegen: ", HloOpcodeString(hlo.opcode()),
                                                   " is not implemented in loop kernels (",
                                                   hlo.name(), ")"));
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitConstant(const HloInstruction& hlo,
                                                              const IrIndex& index) {
  const Literal& literal = cast<HloConstantInstruction>(&hlo)->literal();
  const Shape& shape = literal.shape();
  const PrimitiveType type = shape.element_type();
  if (shape.has_layout() && shape.rank() > 1) {
    const auto& minor_to_major = shape.layout().minor_to_major();
    for (size_t i = 0; i < minor_to_major.size(); ++i) {
      if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) {
        return absl::UnimplementedError(
            absl::StrCat("CPU codegen: constant with a non-default layout (", hlo.name(), ")"));
      }
    }
  }
  // The bytes as an i8 array; elements are loaded through their storage type.
  const char* data = static_cast<const char*>(literal.untyped_data());
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(data, literal.size_bytes()), literal.size_bytes(), b_.getInt8Ty());
  auto* global = new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init,
                                          absl::StrCat("constant.", hlo.name()));
  global->setAlignment(llvm::Align(64));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  llvm::Value* linear = index.empty() ? I64(0) : Linearize(index, shape.dimensions());
  return LoadElement(global, linear, type);
}

}  // namespace axle::cpu
