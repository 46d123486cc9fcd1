//===- convolution_loop_emitter.cc - A convolution as an emitted loop kernel ===//
//
// See convolution_loop_emitter.h. The loop nest walks the output in its
// row-major (HLO) order; for each element the kernel spatial positions are
// a nest of loops whose body checks that the input position is inside
// (and not a base-dilation hole) and then sums over the group's input
// features. The body is an internal always-inline function with noalias
// buffers, called by the wrapper with the public signature
// (emitted_kernel_internal.h).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/convolution_loop_emitter.h"

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/cpu_target_hooks.h"
#include "axle/cpu/emitted_kernel_internal.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

namespace pu = primitive_util;

// Bytes of sums per chunk of output features (EmitFeatureRow).
constexpr int64_t kChunkBytes = 512;

bool IsNarrowFloat(PrimitiveType type) {
  return pu::IsFloatingPointType(type) && type != F32 && type != F64;
}

// Everything the emitted code depends on.
std::string SpecKey(const ConvLoopSpec& spec) {
  auto dims = [](const std::vector<int64_t>& values) { return absl::StrJoin(values, ","); };
  std::string key = absl::StrCat(
      "convolution ", pu::LowercasePrimitiveTypeName(spec.lhs_type), " ",
      pu::LowercasePrimitiveTypeName(spec.rhs_type), " -> ",
      pu::LowercasePrimitiveTypeName(spec.output_type), "\nlhs ", dims(spec.lhs_dims), " / ",
      dims(spec.lhs_strides), "\nrhs ", dims(spec.rhs_dims), " / ", dims(spec.rhs_strides),
      "\nout ", dims(spec.out_dims), " / ", dims(spec.output_shape_dims), " / ",
      dims(spec.out_order), "\ngroups ", spec.feature_groups, " ", spec.batch_groups, "\nwindow");
  for (const ConvLoopSpec::Window& w : spec.window) {
    absl::StrAppend(&key, " (", w.stride, " ", w.padding_low, " ", w.window_dilation, " ",
                    w.base_dilation, w.reversal ? " rev" : "", ")");
  }
  for (const ConvLoopSpec::Side& side : spec.sides) {
    absl::StrAppend(&key, "\nside ", pu::LowercasePrimitiveTypeName(side.type), " ",
                    dims(side.strides));
  }
  for (const ConvLoopSpec::EpilogueOp& op : spec.epilogue) {
    absl::StrAppend(&key, "\n", InstructionKey(*op.instruction), " chain ", op.chain_operand,
                    " sides ", dims(op.side));
    for (const auto& constant : op.constants) {
      absl::StrAppend(&key, " ", constant ? constant->ToString() : "-");
    }
  }
  return key;
}

class ConvLoopEmitter {
 public:
  ConvLoopEmitter(const ConvLoopSpec& spec, llvm::Module* module)
      : spec_(spec),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, CpuTargetHooks()) {
    const PrimitiveType out = spec.output_type;
    acc_type_ = IsNarrowFloat(out) ? F32 : out;
    integer_ = pu::IsIntegralType(out);
    if (integer_) acc_type_ = S64;
    // Vectorized over output features when they are the innermost output
    // dim (and the first is not the only one: rows split the work).
    const int64_t rank = static_cast<int64_t>(spec.output_shape_dims.size());
    feature_rows_ = rank >= 2 && spec.out_order[1] == rank - 1 && spec.feature_groups == 1 &&
                    spec.batch_groups == 1 && !pu::IsComplexType(out);
    chunk_ = std::max<int64_t>(16, kChunkBytes / std::max<int64_t>(1, pu::ByteWidth(acc_type_)));
  }

  absl::Status Emit(absl::string_view name) {
    const int num_buffers = 3 + static_cast<int>(spec_.sides.size());
    return EmitKernelFunctions(
        module_, b_, name, num_buffers, /*num_read_only=*/num_buffers - 1,
        [&](const std::vector<llvm::Value*>& buffers, llvm::Value* begin, llvm::Value* end) {
          buffers_ = buffers;
          llvm::Type* acc_type = elemental_.ValueType(acc_type_);
          acc_ = b_.CreateAlloca(acc_type, nullptr, "acc");
          if (feature_rows_) sums_ = b_.CreateAlloca(acc_type, I64(chunk_), "sums");
          return EmitOutputNest(begin, end);
        });
  }

 private:
  llvm::Value* I64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // Loops over the output's HLO dims (the first over [begin, end)).
  absl::Status EmitOutputNest(llvm::Value* begin, llvm::Value* end) {
    const std::vector<int64_t>& dims = spec_.output_shape_dims;
    std::vector<llvm::Value*> index;
    const size_t depth_end = feature_rows_ ? dims.size() - 1 : dims.size();
    std::function<absl::Status(size_t, llvm::Value*)> nest = [&](size_t depth,
                                                                 llvm::Value* linear) {
      if (depth == depth_end) {
        return feature_rows_ ? EmitFeatureRow(index, linear) : EmitElement(index, linear);
      }
      llvm::Value* low = depth == 0 ? begin : I64(0);
      llvm::Value* high = depth == 0 ? end : I64(dims[depth]);
      return elemental_.EmitForLoop(
          low, high, absl::StrCat("out", depth), [&](llvm::Value* i) -> absl::Status {
            index.push_back(i);
            AXLE_RETURN_IF_ERROR(
                nest(depth + 1, b_.CreateAdd(b_.CreateMul(linear, I64(dims[depth])), i)));
            index.pop_back();
            return absl::OkStatus();
          });
    };
    return nest(0, I64(0));
  }

  absl::StatusOr<llvm::Value*> LoadOperand(llvm::Value* base, llvm::Value* offset,
                                           PrimitiveType type) {
    llvm::Value* value = elemental_.LoadElement(base, offset, type);
    AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitConvert(value, type, spec_.output_type));
    if (integer_) {
      return pu::IsSignedIntegralType(spec_.output_type) ? b_.CreateSExt(value, b_.getInt64Ty())
                                                         : b_.CreateZExt(value, b_.getInt64Ty());
    }
    return value;
  }

  llvm::Value* MultiplyAdd(llvm::Value* acc, llvm::Value* a, llvm::Value* x) {
    if (acc_type_ == PRED) return b_.CreateOr(acc, b_.CreateAnd(a, x));
    if (integer_) return b_.CreateAdd(acc, b_.CreateMul(a, x));
    if (!pu::IsComplexType(acc_type_)) return b_.CreateFAdd(acc, b_.CreateFMul(a, x));
    // (ar + i ai)(xr + i xi) = (ar xr - ai xi) + i (ar xi + ai xr).
    llvm::Value *ar = b_.CreateExtractValue(a, 0), *ai = b_.CreateExtractValue(a, 1);
    llvm::Value *xr = b_.CreateExtractValue(x, 0), *xi = b_.CreateExtractValue(x, 1);
    llvm::Value* real = b_.CreateFSub(b_.CreateFMul(ar, xr), b_.CreateFMul(ai, xi));
    llvm::Value* imag = b_.CreateFAdd(b_.CreateFMul(ar, xi), b_.CreateFMul(ai, xr));
    llvm::Value* re = b_.CreateFAdd(b_.CreateExtractValue(acc, 0), real);
    llvm::Value* im = b_.CreateFAdd(b_.CreateExtractValue(acc, 1), imag);
    return b_.CreateInsertValue(b_.CreateInsertValue(acc, re, 0), im, 1);
  }

  // A 64-bit integer sum as the output type: narrower types saturate (the
  // interpreter's SaturateOrWrap), 64-bit ones wrap.
  llvm::Value* SaturateOrWrap(llvm::Value* sum) {
    const PrimitiveType out = spec_.output_type;
    const int bits = pu::BitWidth(out);
    llvm::Type* type = elemental_.ValueType(out);
    if (bits >= 64) return b_.CreateTrunc(sum, type);
    const bool intn = pu::IsSubByteType(out);
    if (pu::IsSignedIntegralType(out) || intn) {
      int64_t low = pu::IsSignedIntegralType(out) ? -(int64_t{1} << (bits - 1)) : 0;
      int64_t high =
          pu::IsSignedIntegralType(out) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
      llvm::Value* clamped = b_.CreateBinaryIntrinsic(
          llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, I64(low)),
          I64(high));
      return b_.CreateTrunc(clamped, type);
    }
    return b_.CreateTrunc(
        b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, sum, I64((int64_t{1} << bits) - 1)), type);
  }

  using Canonical = std::function<llvm::Value*(int64_t)>;

  // The loops over the kernel's spatial positions for the output position
  // `canonical` (2 + i: spatial dim i); where the input position is inside
  // (not padding, not a base-dilation hole) calls `body` with the lhs and
  // rhs offsets added to `in_base` and `k_base`.
  absl::Status EmitWindow(const Canonical& canonical, llvm::Value* in_base, llvm::Value* k_base,
                          const std::function<absl::Status(llvm::Value*, llvm::Value*)>& body) {
    const ConvLoopSpec& s = spec_;
    const int64_t spatial = static_cast<int64_t>(s.window.size());
    for (int64_t i = 0; i < spatial; ++i) {
      if (s.rhs_dims[2 + i] == 0) return absl::OkStatus();  // an empty window
    }
    std::vector<llvm::Value*> k;
    std::function<absl::Status(int64_t)> window = [&](int64_t depth) -> absl::Status {
      if (depth < spatial) {
        return elemental_.EmitForLoop(I64(0), I64(s.rhs_dims[2 + depth]),
                                      absl::StrCat("window", depth),
                                      [&](llvm::Value* i) -> absl::Status {
                                        k.push_back(i);
                                        AXLE_RETURN_IF_ERROR(window(depth + 1));
                                        k.pop_back();
                                        return absl::OkStatus();
                                      });
      }
      llvm::Value* inside = b_.getTrue();
      llvm::Value* in_offset = in_base;
      llvm::Value* k_offset = k_base;
      for (int64_t i = 0; i < spatial; ++i) {
        const ConvLoopSpec::Window& w = s.window[i];
        llvm::Value* dilated = b_.CreateAdd(
            b_.CreateSub(b_.CreateMul(canonical(2 + i), I64(w.stride)), I64(w.padding_low)),
            b_.CreateMul(k[i], I64(w.window_dilation)));
        llvm::Value* position = dilated;
        if (w.base_dilation != 1) {
          inside = b_.CreateAnd(
              inside, b_.CreateICmpEQ(b_.CreateSRem(dilated, I64(w.base_dilation)), I64(0)));
          position = b_.CreateSDiv(dilated, I64(w.base_dilation));
        }
        inside =
            b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(position, I64(0)),
                                              b_.CreateICmpSLT(position, I64(s.lhs_dims[2 + i]))));
        in_offset = b_.CreateAdd(in_offset, b_.CreateMul(position, I64(s.lhs_strides[2 + i])));
        llvm::Value* kk = w.reversal ? b_.CreateSub(I64(s.rhs_dims[2 + i] - 1), k[i]) : k[i];
        k_offset = b_.CreateAdd(k_offset, b_.CreateMul(kk, I64(s.rhs_strides[2 + i])));
      }
      llvm::Function* function = b_.GetInsertBlock()->getParent();
      auto* then = llvm::BasicBlock::Create(b_.getContext(), "inside", function);
      auto* merge = llvm::BasicBlock::Create(b_.getContext(), "inside.end", function);
      b_.CreateCondBr(inside, then, merge);
      b_.SetInsertPoint(then);
      AXLE_RETURN_IF_ERROR(body(in_offset, k_offset));
      b_.CreateBr(merge);
      b_.SetInsertPoint(merge);
      return absl::OkStatus();
    };
    return window(0);
  }

  // A sum rounded, saturated or wrapped to the output type, through the
  // epilogue, stored at `linear`; `index` is the output element (HLO order).
  absl::Status EmitResult(llvm::Value* sum, const std::vector<llvm::Value*>& index,
                          llvm::Value* linear) {
    const ConvLoopSpec& s = spec_;
    llvm::Value* value = nullptr;
    if (integer_) {
      value = SaturateOrWrap(sum);
    } else {
      AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitConvert(sum, acc_type_, s.output_type));
    }
    for (const ConvLoopSpec::EpilogueOp& op : s.epilogue) {
      std::vector<llvm_ir::ElementGenerator> operands;
      for (int64_t i = 0; i < op.instruction->operand_count(); ++i) {
        llvm::Value* operand = nullptr;
        if (i == op.chain_operand) {
          operand = value;
        } else if (op.side[i] >= 0) {
          const ConvLoopSpec::Side& side = s.sides[op.side[i]];
          llvm::Value* offset = I64(0);
          for (size_t d = 0; d < index.size(); ++d) {
            offset = b_.CreateAdd(offset, b_.CreateMul(index[d], I64(side.strides[d])));
          }
          operand = elemental_.LoadElement(buffers_[2 + op.side[i]], offset, side.type);
        } else {
          operand = EmitScalarLiteral(elemental_, module_, *op.constants.at(i));
        }
        operands.push_back(
            [operand](const llvm_ir::IrIndex&) -> absl::StatusOr<llvm::Value*> { return operand; });
      }
      AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitElement(*op.instruction, operands, {}));
    }
    elemental_.StoreElement(value, buffers_.back(), linear, s.output_type);
    return absl::OkStatus();
  }

  // EmitWindow, and in it a loop over the input features of a group:
  // `body` gets the lhs element there (loaded and converted) and the offset
  // of the kernel elements for that window position and input feature.
  absl::Status EmitWindowAndFeatures(
      const Canonical& canonical, llvm::Value* in_base, llvm::Value* k_base,
      const std::function<absl::Status(llvm::Value*, llvm::Value*)>& body) {
    const ConvLoopSpec& s = spec_;
    return EmitWindow(
        canonical, in_base, k_base,
        [&](llvm::Value* in_offset, llvm::Value* k_offset) -> absl::Status {
          return elemental_.EmitForLoop(
              I64(0), I64(s.rhs_dims[1]), "feature", [&](llvm::Value* iz) -> absl::Status {
                AXLE_ASSIGN_OR_RETURN(
                    llvm::Value * a,
                    LoadOperand(buffers_[0],
                                b_.CreateAdd(in_offset, b_.CreateMul(iz, I64(s.lhs_strides[1]))),
                                s.lhs_type));
                return body(a, b_.CreateAdd(k_offset, b_.CreateMul(iz, I64(s.rhs_strides[1]))));
              });
        });
  }

  // Output element `index` (HLO order) at `linear`: one sum.
  absl::Status EmitElement(const std::vector<llvm::Value*>& index, llvm::Value* linear) {
    const ConvLoopSpec& s = spec_;
    auto canonical = [&](int64_t c) { return index[s.out_order[c]]; };
    const int64_t in_features = s.rhs_dims[1];
    const int64_t per_feature_group = s.out_dims[1] / s.feature_groups;
    const int64_t per_batch_group = s.out_dims[1] / s.batch_groups;
    const int64_t batch_group_size = s.lhs_dims[0] / s.batch_groups;
    llvm::Value* batch = canonical(0);
    llvm::Value* feature = canonical(1);
    llvm::Value* in_batch = b_.CreateAdd(
        batch, b_.CreateMul(b_.CreateUDiv(feature, I64(per_batch_group)), I64(batch_group_size)));
    llvm::Value* in_base = b_.CreateAdd(b_.CreateMul(in_batch, I64(s.lhs_strides[0])),
                                        b_.CreateMul(b_.CreateUDiv(feature, I64(per_feature_group)),
                                                     I64(in_features * s.lhs_strides[1])));
    llvm::Value* k_base = b_.CreateMul(feature, I64(s.rhs_strides[0]));
    llvm::Type* acc_type = elemental_.ValueType(acc_type_);
    b_.CreateStore(llvm::Constant::getNullValue(acc_type), acc_);
    AXLE_RETURN_IF_ERROR(EmitWindowAndFeatures(
        canonical, in_base, k_base, [&](llvm::Value* a, llvm::Value* k_row) -> absl::Status {
          AXLE_ASSIGN_OR_RETURN(llvm::Value * x, LoadOperand(buffers_[1], k_row, s.rhs_type));
          b_.CreateStore(MultiplyAdd(b_.CreateLoad(acc_type, acc_), a, x), acc_);
          return absl::OkStatus();
        }));
    return EmitResult(b_.CreateLoad(acc_type, acc_), index, linear);
  }

  // The output elements along the innermost HLO dim, which is the output
  // feature dim (no groups): chunks of features whose sums live on the
  // stack; per window position and input feature the lhs element is
  // loaded once and the innermost loop over the chunk's features (at the
  // kernel's output-feature stride) is vectorized. Each sum still adds its
  // products in the interpreter's order. `prefix` is the index of the
  // other dims, `linear` their row-major linear index.
  absl::Status EmitFeatureRow(const std::vector<llvm::Value*>& prefix, llvm::Value* linear) {
    const ConvLoopSpec& s = spec_;
    auto canonical = [&](int64_t c) { return prefix[s.out_order[c]]; };
    const int64_t features = s.out_dims[1];
    llvm::Type* acc_type = elemental_.ValueType(acc_type_);
    const int64_t chunks = (features + chunk_ - 1) / chunk_;
    llvm::Value* in_base = b_.CreateMul(canonical(0), I64(s.lhs_strides[0]));
    return elemental_.EmitForLoop(
        I64(0), I64(chunks), "feature_chunk", [&](llvm::Value* chunk) -> absl::Status {
          llvm::Value* first = b_.CreateMul(chunk, I64(chunk_));
          llvm::Value* left = b_.CreateSub(I64(features), first);
          llvm::Value* width =
              b_.CreateSelect(b_.CreateICmpSLT(left, I64(chunk_)), left, I64(chunk_));
          AXLE_RETURN_IF_ERROR(
              elemental_.EmitForLoop(I64(0), width, "zero", [&](llvm::Value* j) -> absl::Status {
                b_.CreateStore(llvm::Constant::getNullValue(acc_type),
                               b_.CreateInBoundsGEP(acc_type, sums_, j));
                return absl::OkStatus();
              }));
          llvm::Value* k_base = b_.CreateMul(first, I64(s.rhs_strides[0]));
          AXLE_RETURN_IF_ERROR(EmitWindowAndFeatures(
              canonical, in_base, k_base, [&](llvm::Value* a, llvm::Value* k_row) -> absl::Status {
                return elemental_.EmitForLoop(
                    I64(0), width, "out_feature", [&](llvm::Value* j) -> absl::Status {
                      AXLE_ASSIGN_OR_RETURN(
                          llvm::Value * x,
                          LoadOperand(buffers_[1],
                                      b_.CreateAdd(k_row, b_.CreateMul(j, I64(s.rhs_strides[0]))),
                                      s.rhs_type));
                      llvm::Value* slot = b_.CreateInBoundsGEP(acc_type, sums_, j);
                      b_.CreateStore(MultiplyAdd(b_.CreateLoad(acc_type, slot), a, x), slot);
                      return absl::OkStatus();
                    });
              }));
          return elemental_.EmitForLoop(
              I64(0), width, "store", [&](llvm::Value* j) -> absl::Status {
                llvm::Value* feature = b_.CreateAdd(first, j);
                std::vector<llvm::Value*> index = prefix;
                index.push_back(feature);
                return EmitResult(b_.CreateLoad(acc_type, b_.CreateInBoundsGEP(acc_type, sums_, j)),
                                  index,
                                  b_.CreateAdd(b_.CreateMul(linear, I64(features)), feature));
              });
        });
  }

  const ConvLoopSpec& spec_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  PrimitiveType acc_type_ = F32;  // S64 for every integer type
  bool integer_ = false;          // an integer output (not pred)
  std::vector<llvm::Value*> buffers_;
  llvm::Value* acc_ = nullptr;
  // Sums of a chunk of output features (EmitFeatureRow), when feature_rows_.
  bool feature_rows_ = false;
  int64_t chunk_ = 16;
  llvm::Value* sums_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledKernel>> AddConvLoopKernel(LoopKernelModule& module,
                                                                  const ConvLoopSpec& spec,
                                                                  const HloInstruction& instruction,
                                                                  absl::string_view name) {
  for (PrimitiveType type : {spec.lhs_type, spec.rhs_type, spec.output_type}) {
    AXLE_RETURN_IF_ERROR(llvm_ir::ElementalIrEmitter::CheckSupportedType(type, instruction));
  }
  return module.AddEmittedKernel(SpecKey(spec), name, spec.rows(),
                                 2 + static_cast<int64_t>(spec.sides.size()), 1,
                                 [&](llvm::Module* llvm_module) {
                                   ConvLoopEmitter emitter(spec, llvm_module);
                                   return emitter.Emit(name);
                                 });
}

}  // namespace axle::cpu
