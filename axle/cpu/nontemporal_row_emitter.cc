//===- nontemporal_row_emitter.cc - Rows stored with non-temporal stores ----===//
//
// A large output (at least the last-level cache) is stored row by row: a scalar
// head to the first aligned address, a vector main loop of non-temporal
// stores, a scalar tail (UseNonTemporalStores says when).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace axle::cpu {

// The innermost loop [low, high) over one row of the output `out` (the
// outer dimensions fixed in `index`), split in two: ordinary stores up to
// the first 64-byte boundary of the row's output (kVectorizeNever: at
// most 63 bytes), then the main loop, whose stores (StoreOutput) address
// the output from a base pointer that llvm.assume declares 64-byte
// aligned, and which is tagged kNonTemporalStoresLoopProperty. LLVM's
// vectorizer copies the scalar store's alignment (4) to its vector
// stores; the AlignmentFromAssumptions pass (after vectorization) raises
// them to 64 from the assumption; then the Jit marks the aligned vector
// stores of tagged loops !nontemporal (jit.cc: a scalar store marked
// before vectorization keeps the loop scalar on x86, and an under-aligned
// non-temporal vector store is split into scalar ones). A range that
// starts anywhere (a thread's block, a misaligned buffer) is handled: the
// main loop always starts aligned; its remainder stores stay ordinary.
absl::Status LoopKernelEmitter::EmitNonTemporalRow(
    llvm::Value* low, llvm::Value* high, llvm::Value* out, PrimitiveType type,
    llvm_ir::IrIndex index, absl::Span<const int64_t> dims,
    const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::Type* storage = elemental_.StorageType(type);
  const int64_t size =
      static_cast<int64_t>(module_->getDataLayout().getTypeAllocSize(storage).getFixedValue());
  index[dims.size() - 1] = low;
  llvm::Value* row = b_.CreateInBoundsGEP(storage, out, elemental_.Linearize(index, dims));
  llvm::Value* address = b_.CreatePtrToInt(row, b_.getInt64Ty());
  // Bytes to the next boundary, and a pointer there: 64-byte aligned by
  // construction, so the assumption always holds (also when the main loop
  // is empty).
  llvm::Value* skip = b_.CreateAnd(b_.CreateNeg(address), kBufferAlignment - 1);
  llvm::Value* aligned = b_.CreateGEP(b_.getInt8Ty(), row, skip, "nt.base");
  b_.CreateAlignmentAssumption(module_->getDataLayout(), aligned, kBufferAlignment);
  // The main loop's first index; `high` (no main loop) when the output is
  // not even aligned to its element size.
  llvm::Value* element_aligned = b_.CreateICmpEQ(b_.CreateAnd(address, size - 1), b_.getInt64(0));
  llvm::Value* first = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, b_.CreateAdd(low, b_.CreateUDiv(skip, b_.getInt64(size))), high);
  first = b_.CreateSelect(element_aligned, first, high, "nt.first");
  AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(low, first, "nt_head", body,
                                              llvm_ir::ElementalIrEmitter::kVectorizeNever));
  // The main loop counts from 0 (the offset from `aligned`), so that the
  // stores' addresses are `aligned` plus the induction variable (what
  // AlignmentFromAssumptions can follow, whatever becomes of `first`).
  nontemporal_base_ = aligned;
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  absl::Status status = elemental_.EmitForLoop(b_.getInt64(0), b_.CreateSub(high, first), "nt_main",
                                               [&](llvm::Value* offset) {
                                                 nontemporal_offset_ = offset;
                                                 return body(b_.CreateAdd(first, offset));
                                               });
  nontemporal_base_ = nullptr;
  nontemporal_offset_ = nullptr;
  AXLE_RETURN_IF_ERROR(status);
  llvm_ir::ElementalIrEmitter::AddLoopProperty(preheader, kNonTemporalStoresLoopProperty);
  return absl::OkStatus();
}

}  // namespace axle::cpu
