//===- dot_loop_emitter.cc - A dot (and its epilogue) as an emitted loop kernel ===//
//
// See dot_loop_emitter.h for the kernel's loops and semantics. The body is
// an internal always-inline function whose buffer parameters are noalias
// (as a loop kernel's), called by the wrapper with the public signature
// (emitted_kernel_internal.h).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/dot_loop_emitter.h"

#include <algorithm>
#include <functional>

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
using Dim = DotLoopSpec::Dim;

// Rows per block (their lhs elements stay in registers, their accumulators
// in L1; each rhs element is loaded once for all of them): 8, or 4 when a
// batch has fewer rows; and the bytes of one row's accumulators for a chunk
// of columns. (512^3 at 1 thread: 8 and 4 rows are within the noise of this
// shared machine.)
constexpr int64_t kMaxBlockRows = 8;
constexpr int64_t kChunkBytes = 512;

bool IsNarrowFloat(PrimitiveType type) {
  return pu::IsFloatingPointType(type) && type != F32 && type != F64;
}

// The type sums are formed in: f32 for the narrow floats, else the output
// type (integers wrap in its width, which equals wrapping a 64-bit sum).
PrimitiveType AccumulatorType(PrimitiveType output) { return IsNarrowFloat(output) ? F32 : output; }

// Drops dims of size 1 and merges neighbours that move every operand as one
// (outer stride = inner stride x inner size), keeping row-major order.
std::vector<Dim> Collapse(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& dim : dims) {
    if (dim.size == 1) continue;
    if (!out.empty()) {
      Dim& outer = out.back();
      if (outer.lhs_stride == dim.lhs_stride * dim.size &&
          outer.rhs_stride == dim.rhs_stride * dim.size &&
          outer.bias_stride == dim.bias_stride * dim.size) {
        outer = Dim{outer.size * dim.size, dim.lhs_stride, dim.rhs_stride, dim.bias_stride};
        continue;
      }
    }
    out.push_back(dim);
  }
  return out;
}

int64_t Product(const std::vector<Dim>& dims) {
  int64_t product = 1;
  for (const Dim& dim : dims) product *= dim.size;
  return product;
}

std::string DimsKey(const std::vector<Dim>& dims) {
  std::string key;
  for (const Dim& dim : dims) {
    absl::StrAppend(&key, "(", dim.size, " ", dim.lhs_stride, " ", dim.rhs_stride, " ",
                    dim.bias_stride, ")");
  }
  return key;
}

// Everything the emitted code depends on.
std::string SpecKey(const DotLoopSpec& spec) {
  std::string key =
      absl::StrCat("dot ", pu::LowercasePrimitiveTypeName(spec.lhs_type), " ",
                   pu::LowercasePrimitiveTypeName(spec.rhs_type), " -> ",
                   pu::LowercasePrimitiveTypeName(spec.output_type),
                   spec.packed_nibble ? " packed_nibble" : "", "\nbatch ", DimsKey(spec.batch),
                   "\nm ", DimsKey(spec.m), "\nn ", DimsKey(spec.n), "\nk ", DimsKey(spec.k), "\n");
  if (spec.has_bias) absl::StrAppend(&key, "bias ", pu::LowercasePrimitiveTypeName(spec.bias_type));
  for (const DotLoopSpec::EpilogueOp& op : spec.epilogue) {
    absl::StrAppend(&key, "\n", InstructionKey(*op.instruction), " chain ", op.chain_operand,
                    " bias ", op.bias_operand, " reads ", absl::StrJoin(op.operand_values, ","));
    for (const auto& constant : op.constants) {
      absl::StrAppend(&key, " ", constant ? constant->ToString() : "-");
    }
  }
  return key;
}

class DotLoopEmitter {
 public:
  DotLoopEmitter(const DotLoopSpec& spec, llvm::Module* module)
      : spec_(spec),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, CpuTargetHooks()) {
    batch_ = Collapse(spec.batch);
    m_ = Collapse(spec.m);
    n_ = Collapse(spec.n);
    k_ = Collapse(spec.k);
    // The innermost column dim is the vectorized loop; the others are loops
    // around the chunks.
    if (n_.empty()) n_.push_back(Dim{});
    inner_ = n_.back();
    n_.pop_back();
    rows_in_batch_ = Product(m_);
    block_rows_ = rows_in_batch_ >= kMaxBlockRows ? kMaxBlockRows : rows_in_batch_ >= 4 ? 4 : 1;
    columns_ = Product(n_) * inner_.size;
    acc_type_ = AccumulatorType(spec.output_type);
    complex_ = pu::IsComplexType(acc_type_);
    const PrimitiveType scalar = complex_ ? pu::ComplexComponentType(acc_type_) : acc_type_;
    chunk_ = std::max<int64_t>(16, kChunkBytes / std::max<int64_t>(1, pu::ByteWidth(scalar)));
  }

  absl::Status Emit(absl::string_view name) {
    const int num_buffers = spec_.has_bias ? 4 : 3;
    return EmitKernelFunctions(
        module_, b_, name, num_buffers, /*num_read_only=*/num_buffers - 1,
        [&](const std::vector<llvm::Value*>& buffers, llvm::Value* begin, llvm::Value* end) {
          lhs_ = buffers[0];
          rhs_ = buffers[1];
          bias_ = spec_.has_bias ? buffers[2] : nullptr;
          out_ = buffers.back();
          return EmitBody(begin, end);
        });
  }

 private:
  llvm::Value* I64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // The scalar type of one accumulator array (a complex sum is two arrays).
  llvm::Type* AccScalarType() {
    return elemental_.ValueType(complex_ ? pu::ComplexComponentType(acc_type_) : acc_type_);
  }

  absl::Status EmitBody(llvm::Value* begin, llvm::Value* end) {
    llvm::Type* scalar = AccScalarType();
    for (int64_t r = 0; r < block_rows_; ++r) {
      acc_re_.push_back(b_.CreateAlloca(scalar, I64(chunk_), absl::StrCat("acc", r)));
      if (complex_) {
        acc_im_.push_back(b_.CreateAlloca(scalar, I64(chunk_), absl::StrCat("acc_im", r)));
      }
    }
    // Columns outermost (the outer column dims, then chunks of the inner
    // one), so that the rhs panel of a chunk stays in cache while every row
    // of [begin, end) reads it.
    return EmitNest(n_, 0, Offsets{I64(0), I64(0), I64(0)}, I64(0), "columns",
                    [&](Offsets outer, llvm::Value* outer_index) -> absl::Status {
                      llvm::Value* column_base = b_.CreateMul(outer_index, I64(inner_.size));
                      const int64_t chunks = (inner_.size + chunk_ - 1) / chunk_;
                      return elemental_.EmitForLoop(
                          I64(0), I64(chunks), "chunk", [&](llvm::Value* chunk) -> absl::Status {
                            Chunk columns;
                            columns.rhs = outer.rhs;
                            columns.bias = outer.bias;
                            columns.base = column_base;
                            columns.first = b_.CreateMul(chunk, I64(chunk_));
                            llvm::Value* left = b_.CreateSub(I64(inner_.size), columns.first);
                            columns.width = b_.CreateSelect(b_.CreateICmpSLT(left, I64(chunk_)),
                                                            left, I64(chunk_));
                            return EmitRowLoop(begin, end, columns);
                          });
                    });
  }

  // Where a chunk of columns is: the outer column dims' offsets into rhs
  // and bias, their first output column, and the chunk's first column and
  // width in the inner dim.
  struct Chunk {
    llvm::Value* rhs;
    llvm::Value* bias;
    llvm::Value* base;
    llvm::Value* first;
    llvm::Value* width;
  };

  // while (row < end): a block of block_rows_ rows of one batch where they
  // fit, else one row.
  absl::Status EmitRowLoop(llvm::Value* begin, llvm::Value* end, const Chunk& columns) {
    llvm::Function* function = b_.GetInsertBlock()->getParent();
    llvm::LLVMContext& context = b_.getContext();
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(context, "rows.header", function);
    auto* exit = llvm::BasicBlock::Create(context, "rows.exit", function);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* row = b_.CreatePHI(b_.getInt64Ty(), 3, "row");
    row->addIncoming(begin, preheader);
    auto* dispatch = llvm::BasicBlock::Create(context, "rows.dispatch", function);
    b_.CreateCondBr(b_.CreateICmpSLT(row, end), dispatch, exit);
    b_.SetInsertPoint(dispatch);
    auto* single = llvm::BasicBlock::Create(context, "rows.single", function);
    if (block_rows_ > 1) {
      auto* block = llvm::BasicBlock::Create(context, "rows.block", function);
      llvm::Value* in_batch = b_.CreateURem(row, I64(rows_in_batch_));
      llvm::Value* fits = b_.CreateAnd(
          b_.CreateICmpSLE(b_.CreateAdd(row, I64(block_rows_)), end),
          b_.CreateICmpSLE(b_.CreateAdd(in_batch, I64(block_rows_)), I64(rows_in_batch_)));
      b_.CreateCondBr(fits, block, single);
      b_.SetInsertPoint(block);
      AXLE_RETURN_IF_ERROR(EmitRows(row, block_rows_, columns));
      row->addIncoming(b_.CreateAdd(row, I64(block_rows_)), b_.GetInsertBlock());
      b_.CreateBr(header);
    } else {
      b_.CreateBr(single);
    }
    b_.SetInsertPoint(single);
    AXLE_RETURN_IF_ERROR(EmitRows(row, 1, columns));
    row->addIncoming(b_.CreateAdd(row, I64(1)), b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

  // Offsets of output row `row` (batch dims then m dims, row-major) into
  // lhs, rhs and the bias.
  struct Offsets {
    llvm::Value* lhs;
    llvm::Value* rhs;
    llvm::Value* bias;
  };
  Offsets RowOffsets(llvm::Value* row) {
    Offsets offsets{I64(0), I64(0), I64(0)};
    std::vector<Dim> dims = batch_;
    dims.insert(dims.end(), m_.begin(), m_.end());
    llvm::Value* rest = row;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      llvm::Value* index = it + 1 == dims.rend() ? rest : b_.CreateURem(rest, I64(it->size));
      if (it + 1 != dims.rend()) rest = b_.CreateUDiv(rest, I64(it->size));
      offsets.lhs = b_.CreateAdd(offsets.lhs, b_.CreateMul(index, I64(it->lhs_stride)));
      offsets.rhs = b_.CreateAdd(offsets.rhs, b_.CreateMul(index, I64(it->rhs_stride)));
      offsets.bias = b_.CreateAdd(offsets.bias, b_.CreateMul(index, I64(it->bias_stride)));
    }
    return offsets;
  }

  // Nested loops over `dims` (outermost first), calling `body` with the
  // offsets they add (lhs, rhs, bias) and the row-major linear index.
  absl::Status EmitNest(const std::vector<Dim>& dims, size_t depth, Offsets offsets,
                        llvm::Value* linear, absl::string_view name,
                        const std::function<absl::Status(Offsets, llvm::Value*)>& body) {
    if (depth == dims.size()) return body(offsets, linear);
    const Dim& dim = dims[depth];
    return elemental_.EmitForLoop(
        I64(0), I64(dim.size), absl::StrCat(name, depth), [&](llvm::Value* i) -> absl::Status {
          Offsets inner{b_.CreateAdd(offsets.lhs, b_.CreateMul(i, I64(dim.lhs_stride))),
                        b_.CreateAdd(offsets.rhs, b_.CreateMul(i, I64(dim.rhs_stride))),
                        b_.CreateAdd(offsets.bias, b_.CreateMul(i, I64(dim.bias_stride)))};
          llvm::Value* index = b_.CreateAdd(b_.CreateMul(linear, I64(dim.size)), i);
          return EmitNest(dims, depth + 1, inner, index, name, body);
        });
  }

  // A loaded operand element as a value of the output type (as the
  // interpreter converts operands first).
  absl::StatusOr<llvm::Value*> LoadOperand(llvm::Value* base, llvm::Value* offset,
                                           PrimitiveType type) {
    llvm::Value* value = elemental_.LoadElement(base, offset, type);
    return elemental_.EmitConvert(value, type, spec_.output_type);
  }

  // Packed nibbles of an integer (PACKED_NIBBLE precision): low, high.
  std::pair<llvm::Value*, llvm::Value*> Nibbles(llvm::Value* x) {
    const unsigned width = x->getType()->getIntegerBitWidth();
    llvm::Value* shift = llvm::ConstantInt::get(x->getType(), width - 4);
    llvm::Value* four = llvm::ConstantInt::get(x->getType(), 4);
    if (pu::IsSignedIntegralType(spec_.output_type)) {
      return {b_.CreateAShr(b_.CreateShl(x, shift), shift), b_.CreateAShr(x, four)};
    }
    return {b_.CreateAnd(x, llvm::ConstantInt::get(x->getType(), 15)), b_.CreateLShr(x, four)};
  }

  // acc + a * x in the accumulator type (a, x values of the output type;
  // complex ones as their parts).
  llvm::Value* MultiplyAdd(llvm::Value* acc, llvm::Value* a, llvm::Value* x) {
    if (spec_.output_type == PRED) return b_.CreateOr(acc, b_.CreateAnd(a, x));
    if (pu::IsFloatingPointType(acc_type_)) {
      return b_.CreateFAdd(acc, b_.CreateFMul(a, x));
    }
    if (spec_.packed_nibble) {
      auto [a_low, a_high] = Nibbles(a);
      auto [x_low, x_high] = Nibbles(x);
      return b_.CreateAdd(acc,
                          b_.CreateAdd(b_.CreateMul(a_low, x_low), b_.CreateMul(a_high, x_high)));
    }
    return b_.CreateAdd(acc, b_.CreateMul(a, x));
  }

  // Rows [row, row + count) (one batch) of one chunk of columns.
  absl::Status EmitRows(llvm::Value* row, int64_t count, const Chunk& columns) {
    std::vector<Offsets> rows;
    for (int64_t r = 0; r < count; ++r) rows.push_back(RowOffsets(b_.CreateAdd(row, I64(r))));
    llvm::Value* out_row = b_.CreateMul(row, I64(columns_));
    AXLE_RETURN_IF_ERROR(EmitZero(count, columns.width));
    AXLE_RETURN_IF_ERROR(EmitContraction(rows, b_.CreateAdd(rows[0].rhs, columns.rhs),
                                         columns.first, columns.width));
    return EmitStores(rows, out_row, columns.bias, columns.base, columns.first, columns.width);
  }

  absl::Status EmitZero(int64_t count, llvm::Value* width) {
    llvm::Value* zero = llvm::Constant::getNullValue(AccScalarType());
    llvm::Type* scalar = AccScalarType();
    return elemental_.EmitForLoop(I64(0), width, "zero", [&](llvm::Value* j) -> absl::Status {
      for (int64_t r = 0; r < count; ++r) {
        b_.CreateStore(zero, b_.CreateInBoundsGEP(scalar, acc_re_[r], j));
        if (complex_) b_.CreateStore(zero, b_.CreateInBoundsGEP(scalar, acc_im_[r], j));
      }
      return absl::OkStatus();
    });
  }

  llvm::Value* Part(llvm::Value* z, unsigned i) { return b_.CreateExtractValue(z, i); }

  // The contraction loops around the vectorized column loop.
  absl::Status EmitContraction(const std::vector<Offsets>& rows, llvm::Value* rhs_base,
                               llvm::Value* first, llvm::Value* width) {
    const int64_t count = static_cast<int64_t>(rows.size());
    llvm::Type* scalar = AccScalarType();
    return EmitNest(
        k_, 0, Offsets{I64(0), I64(0), I64(0)}, I64(0), "k",
        [&](Offsets step, llvm::Value*) -> absl::Status {
          std::vector<llvm::Value*> a;
          for (const Offsets& offsets : rows) {
            AXLE_ASSIGN_OR_RETURN(
                llvm::Value * value,
                LoadOperand(lhs_, b_.CreateAdd(offsets.lhs, step.lhs), spec_.lhs_type));
            a.push_back(value);
          }
          llvm::Value* rhs_row = b_.CreateAdd(b_.CreateAdd(rhs_base, step.rhs),
                                              b_.CreateMul(first, I64(inner_.rhs_stride)));
          return elemental_.EmitForLoop(
              I64(0), width, "column", [&](llvm::Value* j) -> absl::Status {
                AXLE_ASSIGN_OR_RETURN(
                    llvm::Value * x,
                    LoadOperand(rhs_,
                                b_.CreateAdd(rhs_row, b_.CreateMul(j, I64(inner_.rhs_stride))),
                                spec_.rhs_type));
                for (int64_t r = 0; r < count; ++r) {
                  llvm::Value* re_slot = b_.CreateInBoundsGEP(scalar, acc_re_[r], j);
                  llvm::Value* re = b_.CreateLoad(scalar, re_slot);
                  if (!complex_) {
                    b_.CreateStore(MultiplyAdd(re, a[r], x), re_slot);
                    continue;
                  }
                  // (ar + i ai)(xr + i xi) = (ar xr - ai xi) + i (ar xi + ai xr).
                  llvm::Value* im_slot = b_.CreateInBoundsGEP(scalar, acc_im_[r], j);
                  llvm::Value* im = b_.CreateLoad(scalar, im_slot);
                  llvm::Value *ar = Part(a[r], 0), *ai = Part(a[r], 1);
                  llvm::Value *xr = Part(x, 0), *xi = Part(x, 1);
                  llvm::Value* real = b_.CreateFSub(b_.CreateFMul(ar, xr), b_.CreateFMul(ai, xi));
                  llvm::Value* imag = b_.CreateFAdd(b_.CreateFMul(ar, xi), b_.CreateFMul(ai, xr));
                  b_.CreateStore(b_.CreateFAdd(re, real), re_slot);
                  b_.CreateStore(b_.CreateFAdd(im, imag), im_slot);
                }
                return absl::OkStatus();
              });
        });
  }

  // The sums rounded to the output type, through the epilogue, stored.
  absl::Status EmitStores(const std::vector<Offsets>& rows, llvm::Value* out_row,
                          llvm::Value* bias_columns, llvm::Value* column_base, llvm::Value* first,
                          llvm::Value* width) {
    llvm::Type* scalar = AccScalarType();
    return elemental_.EmitForLoop(I64(0), width, "store", [&](llvm::Value* j) -> absl::Status {
      llvm::Value* column = b_.CreateAdd(first, j);
      for (size_t r = 0; r < rows.size(); ++r) {
        llvm::Value* sum = b_.CreateLoad(scalar, b_.CreateInBoundsGEP(scalar, acc_re_[r], j));
        if (complex_) {
          llvm::Value* im = b_.CreateLoad(scalar, b_.CreateInBoundsGEP(scalar, acc_im_[r], j));
          llvm::Value* z = llvm::UndefValue::get(elemental_.ValueType(acc_type_));
          sum = b_.CreateInsertValue(b_.CreateInsertValue(z, sum, 0), im, 1);
        }
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value,
                              elemental_.EmitConvert(sum, acc_type_, spec_.output_type));
        std::vector<llvm::Value*> values = {value};
        for (const DotLoopSpec::EpilogueOp& op : spec_.epilogue) {
          std::vector<llvm_ir::ElementGenerator> operands;
          for (int64_t i = 0; i < op.instruction->operand_count(); ++i) {
            llvm::Value* operand = nullptr;
            if (!op.operand_values.empty() && op.operand_values[i] >= 0) {
              operand = values.at(op.operand_values[i]);
            } else if (i == op.chain_operand) {
              operand = value;
            } else if (i == op.bias_operand) {
              llvm::Value* offset = b_.CreateAdd(b_.CreateAdd(rows[r].bias, bias_columns),
                                                 b_.CreateMul(column, I64(inner_.bias_stride)));
              operand = elemental_.LoadElement(bias_, offset, spec_.bias_type);
            } else {
              operand = EmitScalarLiteral(elemental_, module_, *op.constants.at(i));
            }
            operands.push_back([operand](const llvm_ir::IrIndex&) -> absl::StatusOr<llvm::Value*> {
              return operand;
            });
          }
          AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitElement(*op.instruction, operands, {}));
          values.push_back(value);
        }
        llvm::Value* offset =
            b_.CreateAdd(b_.CreateAdd(out_row, I64(static_cast<int64_t>(r) * columns_)),
                         b_.CreateAdd(column_base, column));
        elemental_.StoreElement(value, out_, offset, spec_.output_type);
      }
      return absl::OkStatus();
    });
  }

  const DotLoopSpec& spec_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  std::vector<Dim> batch_, m_, n_, k_;
  Dim inner_;
  int64_t rows_in_batch_ = 1;
  int64_t block_rows_ = 1;
  int64_t columns_ = 1;
  int64_t chunk_ = 16;  // columns per chunk
  PrimitiveType acc_type_ = F32;
  bool complex_ = false;
  llvm::Value *lhs_ = nullptr, *rhs_ = nullptr, *bias_ = nullptr, *out_ = nullptr;
  std::vector<llvm::Value*> acc_re_, acc_im_;
};

}  // namespace

int64_t DotLoopSpec::rows() const { return Product(batch) * Product(m); }

absl::Status CheckDotLoopSpec(const DotLoopSpec& spec, const HloInstruction& instruction) {
  for (PrimitiveType type : {spec.lhs_type, spec.rhs_type, spec.output_type}) {
    AXLE_RETURN_IF_ERROR(llvm_ir::ElementalIrEmitter::CheckSupportedType(type, instruction));
  }
  if (spec.packed_nibble &&
      (!pu::IsIntegralType(spec.output_type) || pu::BitWidth(spec.output_type) < 8)) {
    return absl::UnimplementedError(absl::StrCat("cpu platform: a PACKED_NIBBLE dot into ",
                                                 pu::LowercasePrimitiveTypeName(spec.output_type),
                                                 " (instruction %", instruction.name(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CompiledKernel>> AddDotLoopKernel(LoopKernelModule& module,
                                                                 const DotLoopSpec& spec,
                                                                 absl::string_view name) {
  return module.AddEmittedKernel(SpecKey(spec), name, spec.rows(), spec.has_bias ? 3 : 2, 1,
                                 [&](llvm::Module* llvm_module) {
                                   DotLoopEmitter emitter(spec, llvm_module);
                                   return emitter.Emit(name);
                                 });
}

}  // namespace axle::cpu
