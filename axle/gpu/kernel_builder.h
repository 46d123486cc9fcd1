//===- kernel_builder.h - Hand-written NVPTX kernels with IRBuilder --------===//
//
// What Axle's own GPU kernels (sort, scatter, select-and-scatter) are
// written with: a kernel function of device pointers and i64 integers,
// thread and block indices, strided loops, conditionals, shared-memory
// arrays and barriers, the HLO scalar computations they apply emitted
// inline by axle/llvm_ir's elemental emitter (NVPTX hooks), and the
// combination of a memory element with a value by such a computation,
// atomically where other threads may update the same element.
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_KERNEL_BUILDER_H_
#define AXLE_GPU_KERNEL_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {

// How an element is combined with a value (EmitCombine).
enum class CombineMode {
  // No other thread touches the element meanwhile: load, compute, store.
  kPlain,
  // Other threads may combine into the same element: a native atomic for
  // a plain add/max/min/and/or/xor of a type that has one, an assignment
  // as a plain store (any one of the values wins), else a compare-and-swap
  // loop on the 32- or 64-bit word that holds the element.
  kAtomic,
};

// The atomic form of a combiner computation, when it has one.
enum class AtomicOp { kNone, kAssign, kAdd, kMax, kMin, kAnd, kOr, kXor };
// What (current, update) -> combined `computation` is on scalars of `type`
// as a native atomic (kNone: compare-and-swap). Complex add is kAdd (two
// float atomics, one per part).
AtomicOp AtomicOpOf(const HloComputation& computation, PrimitiveType type);

// Unimplemented, naming the instruction, for element types the GPU kernels
// do not move or compute (f8/f4, and what the NVPTX hooks refuse in
// `computations`: see ptx_kernel_emitter.h).
absl::Status CheckKernelTypes(const HloInstruction& instruction,
                              absl::Span<const HloComputation* const> computations);

// The elements of an array of dimensions `dims` (their product).
int64_t ElementCount(absl::Span<const int64_t> dims);

// InvalidArgument "CUDA: <op> <name>: <what>", for an instruction one of
// Axle's own kernels cannot take as it is.
absl::Status InvalidKernelOp(const HloInstruction& instruction, absl::string_view what);

class KernelBuilder {
 public:
  explicit KernelBuilder(llvm::Module* module);

  llvm::IRBuilder<>& b() { return b_; }
  llvm_ir::ElementalIrEmitter& elemental() { return elemental_; }
  llvm::Module* module() const { return module_; }

  // Starts `void name(ptr p0..., i64 n0...)`, a kernel of at most
  // `max_threads` threads a block; the builder is left in its entry block.
  // Pointers are not marked noalias: an operand and the result may share a
  // buffer.
  llvm::Function* BeginKernel(absl::string_view name, int num_pointers, int num_integers,
                              int max_threads);
  // Returns from the kernel begun last.
  void EndKernel();
  llvm::Value* pointer(int i) const { return pointers_[i]; }
  llvm::Value* integer(int i) const { return integers_[i]; }

  // Special registers as i64.
  llvm::Value* ThreadIndex();
  llvm::Value* BlockIndex();
  llvm::Value* BlockSize();
  // blockIdx.x * blockDim.x + threadIdx.x.
  llvm::Value* GlobalThreadIndex();
  void Barrier();

  llvm::Value* I64(int64_t value) { return b_.getInt64(static_cast<uint64_t>(value)); }

  // A shared-memory array of `count` elements of `type` (a pointer in
  // address space 3).
  llvm::GlobalVariable* SharedArray(llvm::Type* type, int64_t count, absl::string_view name);

  // for (i = begin; i < end; i += step) body(i), i an i64 (unsigned
  // compare); the builder is left after the loop.
  absl::Status For(llvm::Value* begin, llvm::Value* end, llvm::Value* step, absl::string_view name,
                   const std::function<absl::Status(llvm::Value*)>& body);
  // if (condition) then(); the builder is left after it.
  absl::Status If(llvm::Value* condition, absl::string_view name,
                  const std::function<absl::Status()>& then);

  // A variable in the kernel's entry block (promoted to a register by O3).
  llvm::AllocaInst* Variable(llvm::Type* type, llvm::Value* initial, absl::string_view name);

  // `linear` (i64) as a row-major multi-index of `dims`.
  llvm_ir::IrIndex Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims);

  // Element `index` of an integer array of `type` at `base`, as i64 (signed
  // or unsigned extended as its type is).
  llvm::Value* LoadIndex(llvm::Value* base, llvm::Value* index, PrimitiveType type);

  // element = computation(element, update) for element `index` of the
  // arrays of `type` at `base` (global memory), `update` of its value type.
  absl::Status EmitCombine(const HloComputation& computation, PrimitiveType type, llvm::Value* base,
                           llvm::Value* index, llvm::Value* update, CombineMode mode);

  // elements_i = computation(elements..., updates...)_i for element
  // `index` of several arrays at once (a variadic scatter) while holding
  // the spin lock `lock` (an i32 in global memory, 0 when free): other
  // threads may combine into the same elements.
  absl::Status EmitLockedCombine(const HloComputation& computation,
                                 absl::Span<const PrimitiveType> types,
                                 absl::Span<llvm::Value* const> bases, llvm::Value* index,
                                 absl::Span<llvm::Value* const> updates, llvm::Value* lock);

 private:
  // The bits of a storage element as its value, and back (through a
  // variable: the emitter converts on loads and stores only).
  llvm::Value* BitsToValue(llvm::Value* bits, PrimitiveType type);
  llvm::Value* ValueToBits(llvm::Value* value, PrimitiveType type, llvm::Type* bits_type);
  absl::Status EmitCasCombine(const HloComputation& computation, PrimitiveType type,
                              llvm::Value* address, llvm::Value* update);

  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  llvm::Function* kernel_ = nullptr;
  std::vector<llvm::Value*> pointers_;
  std::vector<llvm::Value*> integers_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_KERNEL_BUILDER_H_
