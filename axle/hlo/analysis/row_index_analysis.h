//===- row_index_analysis.h - Which fused values a loop kernel computes per row -===//
//
// A loop kernel walks its root's shape in a nest of loops, outermost
// dimension first, and computes each fused instruction at the index its
// users ask for. When every read of an instruction X asks for an index whose
// leading rank(X) entries are the kernel's outer loop variables, X has one
// value per iteration of those loops: the kernel can compute it once, before
// the inner loops, instead of once per element. That is what makes a row
// reduction fusible into its consumer (softmax, layer norm): the row's max or
// sum is computed once per row, and the row stays in cache between the
// passes over it.
//
// `RowIndexAnalysis` computes, for each instruction of a fused computation,
// its *loop prefix*: how many leading entries of its index are the outer
// loop variables at every read. Index-preserving reads (the rules of
// `OperandLoopPrefix`):
//   - elementwise ops read their operands at their own index;
//   - a broadcast with dimensions={0,...,r-1} (a "row broadcast") reads its
//     operand at the leading r entries of its index;
//   - a reduce whose reduced dimensions are the trailing ones reads its
//     input at (its own index, the reduction's loop variables), so the
//     leading entries are kept;
//   - every other read (transpose, reshape, slice, gather, ...) keeps none.
// The root (each element of a root tuple) is read at the loop variables
// themselves: its prefix is its rank.
//
// `IsRowMaterializable`: a value that both a hoisted row reduction and the
// rest of the kernel read (at the full index); the kernel stores the row
// while the reduction computes it and loads it afterwards.
//
// `IsHoistableRowValue`: an instruction the emitter computes once per row:
// its prefix is its full rank (>= 1), and it is a reduce, or every user is a
// row broadcast. The fusion pass (instruction_fusion.cc) only puts a reduce
// inside a fusion (other than as its root) where it is hoistable, so no
// kernel ever recomputes a reduction per element.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_ROW_INDEX_ANALYSIS_H_
#define AXLE_HLO_ANALYSIS_ROW_INDEX_ANALYSIS_H_

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// The loop prefix of operand `operand_index` of `user` when `user` itself is
// read with loop prefix `user_prefix`.
int64_t OperandLoopPrefix(const HloInstruction& user, int64_t operand_index, int64_t user_prefix);

// Whether `broadcast` is a row broadcast: dimensions={0, ..., rank(operand)-1}.
bool IsRowBroadcast(const HloInstruction& broadcast);

// Whether `reduce` (array-shaped) reduces exactly the trailing dimensions of
// its input, keeping the leading rank(reduce) ones.
bool IsRowReduce(const HloInstruction& reduce);

class RowIndexAnalysis {
 public:
  // `root_prefix`: the loop prefix the root is read with; by default its
  // rank (a kernel's root), or each operand's rank for a root tuple.
  explicit RowIndexAnalysis(const HloComputation& computation,
                            std::optional<int64_t> root_prefix = std::nullopt);

  // The loop prefix of `instruction` (0 for one that nothing reads).
  int64_t LoopPrefix(const HloInstruction* instruction) const;

  // Whether the kernel computes `instruction` once per iteration of its
  // leading rank(instruction) loops (see the file comment).
  bool IsHoistableRowValue(const HloInstruction* instruction) const;

  // Whether every reduce other than the root is hoistable.
  bool ReducesAreHoistable() const;

  // Whether `instruction` has the kernel's full rank, is an input of a
  // hoistable row reduce, and is otherwise read (at least once) only at the
  // kernel's full loop index: the kernel can keep the row the reduce computes
  // in a buffer and load it there instead of computing it again (softmax's
  // exp, read by the row sum and by the divide).
  bool IsRowMaterializable(const HloInstruction* instruction) const;

 private:
  const HloComputation& computation_;
  int64_t kernel_rank_ = 0;
  absl::flat_hash_map<const HloInstruction*, int64_t> prefix_;
};

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_ROW_INDEX_ANALYSIS_H_
