//===- loop_kernel_emitter.cc - Compile a loop fusion to a JIT function ----===//
//
// Emits `kernel(buffers, begin, end)` as a thin wrapper that loads the
// buffer pointers and calls an always-inlined body whose pointer arguments
// are noalias (so, once inlined, the vectorizer needs no runtime alias
// checks). The body is a loop nest over the output shape, the range
// dimension (RangeDimension) [begin, end); its innermost block computes each output element
// through the elemental emitter, one generator per instruction, with a
// per-index cache so shared subexpressions are emitted once.
//
// A kernel whose one output is large (the last-level cache's size) stores it with
// non-temporal stores, on x86-64 targets that allow them (EmitNonTemporalRow
// in nontemporal_row_emitter.cc, StoreOutput).
//
// A `reduce` root is a reduction kernel: the loop nest walks the output, and
// the elemental emitter's reduce folds, for each output element, the input's
// elements in a nest over the reduced dimensions. Values emitted inside such
// an inner loop are cached only for as long as the loop's scope is open.
// A reduce root that keeps the input's minor dimension (a column reduction)
// instead accumulates into the output row, input row by input row (sibling
// column reductions of a multi-output fusion in the same loops); a
// variadic reduce (argmax) folds a block of output elements side by side,
// one per vector lane (side_by_side_reduction_emitter.cc).
//
// Row values (row_index_analysis.h): a reduction inside a loop fusion is
// computed once per row, before the inner loops; a value both it and the
// rest of the kernel read is kept in a row buffer on the stack.
//
// LoopKernelModule (loop_kernel_module.cc) collects the kernels of an
// executable into LLVM modules and compiles them.
//
// This file holds Emit, the plain loop nest and the generators; each other
// schedule has a file of its own (loop_kernel_emitter_class.h lists them).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_emitter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/emitted_kernel_internal.h"
#include "axle/cpu/loop_kernel_emitter_class.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {

absl::Status LoopKernelEmitter::Emit(absl::string_view kernel_name,
                                     const std::vector<const HloInstruction*>& outputs) {
  const int64_t num_parameters = computation_.num_parameters();
  // A chunked fold (FoldChunks) or column reduction (ColumnChunks) takes
  // its partial results' buffer last.
  const int64_t chunks = FoldChunks(outputs);
  const int64_t column_chunks = ColumnChunks(outputs);
  const int num_buffers =
      static_cast<int>(num_parameters + outputs.size() + (chunks > 0 || column_chunks > 0 ? 1 : 0));
  return EmitKernelFunctions(
      module_, b_, kernel_name, num_buffers, static_cast<int>(num_parameters),
      [&](const std::vector<llvm::Value*>& buffers, llvm::Value* begin,
          llvm::Value* end) -> absl::Status {
        llvm::Function* body = b_.GetInsertBlock()->getParent();
        BuildGenerators(buffers);
        // A variadic reduce (argmax) that one of the reduction emitters
        // below folds: its operands' generators and the outputs' buffers.
        using VariadicEmitter = absl::FunctionRef<absl::Status(
            llvm_ir::ElementalIrEmitter&, llvm::IRBuilderBase&, const HloInstruction&,
            absl::Span<const llvm_ir::ElementGenerator>, const std::vector<SideBySideOutput>&,
            int64_t, llvm::Value*, llvm::Value*)>;
        auto emit_variadic = [&](const HloInstruction& reduce,
                                 VariadicEmitter emit) -> absl::Status {
          std::vector<llvm_ir::ElementGenerator> operands;
          for (const HloInstruction* operand : reduce.operands()) {
            operands.push_back(generators_.at(operand));
          }
          std::vector<SideBySideOutput> results;
          for (size_t o = 0; o < outputs.size(); ++o) {
            results.push_back({cast<HloGetTupleElementInstruction>(outputs[o])->tuple_index(),
                               buffers[num_parameters + o]});
          }
          return emit(elemental_, b_, reduce, operands, results, RangeDimension(outputs), begin,
                      end);
        };
        std::optional<ScanPlan> scan = outputs.size() == 1 ? ScanOf(*outputs[0]) : std::nullopt;
        if (scan.has_value()) {
          const HloInstruction& root = *outputs[0];
          AXLE_ASSIGN_OR_RETURN(llvm::Value * init,
                                generators_.at(root.operand(1))(llvm_ir::IrIndex{}));
          AXLE_RETURN_IF_ERROR(EmitScan(elemental_, b_, root, *scan,
                                        generators_.at(root.operand(0)), init,
                                        buffers[num_parameters], begin, end));
        } else if (const HloInstruction* split = SplitFoldReduction(outputs); split != nullptr) {
          llvm::Value* partials = chunks > 0 ? buffers[num_parameters + outputs.size()] : nullptr;
          AXLE_RETURN_IF_ERROR(emit_variadic(
              *split, [&](llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                          const HloInstruction& reduce,
                          absl::Span<const llvm_ir::ElementGenerator> operands,
                          const std::vector<SideBySideOutput>& results, int64_t range_dimension,
                          llvm::Value* begin, llvm::Value* end) {
                return EmitSplitFoldReduction(elemental, b, reduce, operands, results,
                                              range_dimension, begin, end, chunks, partials);
              }));
        } else if (const HloInstruction* reduce = SideBySideReduction(outputs); reduce != nullptr) {
          AXLE_RETURN_IF_ERROR(emit_variadic(*reduce, EmitSideBySideReduction));
        } else if (std::vector<const HloInstruction*> columns = ColumnReductions(outputs);
                   !columns.empty()) {
          AXLE_RETURN_IF_ERROR(EmitColumnReduction(
              columns,
              std::vector<llvm::Value*>(
                  buffers.begin() + num_parameters,
                  buffers.begin() + num_parameters + static_cast<std::ptrdiff_t>(outputs.size())),
              begin, end, column_chunks,
              column_chunks > 0 ? buffers[num_parameters + outputs.size()] : nullptr));
        } else {
          AXLE_RETURN_IF_ERROR(EmitLoopNest(body, outputs, buffers, begin, end));
        }
        // Non-temporal stores are weakly ordered: drain them before the
        // caller (another thread, after the thread pool's join) reads the
        // output.
        if (nontemporal_) {
          b_.CreateCall(llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::x86_sse_sfence));
        }
        return absl::OkStatus();
      });
}

// The loop nest over the outputs' shape, outermost dimension [begin, end).
absl::Status LoopKernelEmitter::EmitLoopNest(llvm::Function* body,
                                             const std::vector<const HloInstruction*>& outputs,
                                             const std::vector<llvm::Value*>& buffers,
                                             llvm::Value* begin, llvm::Value* end) {
  const int64_t num_parameters = computation_.num_parameters();
  const Shape& shape = outputs[0]->shape();
  std::vector<int64_t> dims = shape.dimensions();
  // Row values (row_index_analysis.h) by the loop depth they are computed
  // at: once per iteration of the loops outside that depth.
  std::vector<std::vector<const HloInstruction*>> row_values(dims.size() + 1);
  RowIndexAnalysis rows(computation_);
  for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
    if (!rows.IsHoistableRowValue(instruction)) continue;
    const size_t depth = static_cast<size_t>(instruction->shape().rank());
    if (depth <= dims.size()) row_values[depth].push_back(instruction);
  }
  PlanRowBuffers(rows, body);
  llvm_ir::IrIndex index(dims.size());
  llvm::BasicBlock* after_nest = nullptr;
  bool has_row_values = false;
  for (const auto& values : row_values) has_row_values |= !values.empty();
  // [begin, end) ranges over this dimension (loop_kernel_plan.h); the
  // skewed and tiled nests take it over the outermost one only.
  const int64_t range = RangeDimension(outputs);
  if (range > 0) {
    // Past leading dimensions of one: the plain nest.
  } else if (const HloInstruction* reduce = SkewableRowReduction(
                 row_values, outputs, dims, nontemporal_, kMaxRowBufferBytes,
                 [&](const HloInstruction* instruction) {
                   auto row_buffer = row_buffers_.find(instruction);
                   return row_buffer != row_buffers_.end() && row_buffer->second.depth == 1;
                 });
             reduce != nullptr) {
    return EmitSkewedRows(body, *outputs[0], *reduce, row_values[1], buffers, dims, begin, end);
  } else if (!has_row_values) {
    if (auto tiled = TransposedDimension(computation_, rows, dims); tiled.has_value()) {
      // Tiles are whole (the last one starts earlier and overlaps its
      // neighbour), so a range of rows shorter than a tile takes the
      // plain loop nest below.
      llvm::LLVMContext& context = module_->getContext();
      auto* tiled_block = llvm::BasicBlock::Create(context, "tiled", body);
      auto* plain_block = llvm::BasicBlock::Create(context, "plain", body);
      auto* done_block = llvm::BasicBlock::Create(context, "nest.done", body);
      llvm::Value* enough = tiled->first == 0 ? b_.CreateICmpSGE(b_.CreateSub(end, begin),
                                                                 b_.getInt64(kTransposeTile))
                                              : b_.getTrue();
      b_.CreateCondBr(enough, tiled_block, plain_block);
      b_.SetInsertPoint(tiled_block);
      AXLE_RETURN_IF_ERROR(EmitTiledLoopNest(body, outputs, buffers, dims, tiled->first,
                                             *tiled->second, begin, end));
      b_.CreateBr(done_block);
      b_.SetInsertPoint(plain_block);
      tile_buffer_ = TileBuffer{};
      after_nest = done_block;
    }
  }
  const std::vector<int64_t> inner_splits = InnerLoopSplits(computation_, dims);
  std::function<absl::Status(size_t)> emit_dimension = [&](size_t d) -> absl::Status {
    // Computed here, each row value is in the cache for every read below;
    // meanwhile row buffers are filled.
    filling_row_buffers_ = true;
    const HloInstruction* last_reduce = LastRowReduction(row_values[d], dims);
    for (const HloInstruction* value : row_values[d]) {
      llvm_ir::IrIndex row_index(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(d));
      llvm_ir::ElementalIrEmitter::RowReductionHook hook;
      if (value == last_reduce) ArmRowReduction(hook, *value, dims, row_index, buffers);
      AXLE_RETURN_IF_ERROR(generators_.at(value)(row_index).status());
      elemental_.ClearRowReductionHook();
    }
    filling_row_buffers_ = false;
    if (d == dims.size()) {
      llvm::Value* linear = elemental_.Linearize(index, dims);
      for (size_t o = 0; o < outputs.size(); ++o) {
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, generators_.at(outputs[o])(index));
        StoreOutput(value, buffers[num_parameters + o], linear, outputs[o]->shape().element_type());
      }
      return absl::OkStatus();
    }
    const bool ranged = static_cast<int64_t>(d) == range;
    llvm::Value* low = ranged ? begin : b_.getInt64(0);
    llvm::Value* high = ranged ? end : b_.getInt64(dims[d]);
    if (nontemporal_ && d + 1 == dims.size()) {
      return EmitNonTemporalRow(low, high, buffers[num_parameters],
                                outputs[0]->shape().element_type(), index, dims,
                                [&](llvm::Value* i) {
                                  index[d] = i;
                                  return emit_dimension(d + 1);
                                });
    }
    auto inner = [&](llvm::Value* i) {
      index[d] = i;
      return emit_dimension(d + 1);
    };
    if (!ranged && d + 1 == dims.size() && !inner_splits.empty()) {
      // The innermost loop in parts (InnerLoopSplits), each with the body.
      int64_t part_begin = 0;
      for (size_t part = 0; part <= inner_splits.size(); ++part) {
        const int64_t part_end = part < inner_splits.size() ? inner_splits[part] : dims[d];
        AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(b_.getInt64(part_begin), b_.getInt64(part_end),
                                                    absl::StrCat("d", d, ".part", part), inner));
        part_begin = part_end;
      }
      return absl::OkStatus();
    }
    return elemental_.EmitForLoop(low, high, absl::StrCat("d", d), inner);
  };
  if (dims.empty()) {
    // A scalar: one element when the range is non-empty.
    AXLE_RETURN_IF_ERROR(elemental_.EmitForLoop(
        begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, b_.getInt64(1)), "scalar",
        [&](llvm::Value*) { return emit_dimension(0); }));
  } else {
    AXLE_RETURN_IF_ERROR(emit_dimension(0));
  }
  if (after_nest != nullptr) {
    b_.CreateBr(after_nest);
    b_.SetInsertPoint(after_nest);
  }
  return absl::OkStatus();
}

// Stores an output element: inside EmitNonTemporalRow's main loop through
// its aligned base, elsewhere as usual.
void LoopKernelEmitter::StoreOutput(llvm::Value* value, llvm::Value* out, llvm::Value* linear,
                                    PrimitiveType type) {
  if (nontemporal_base_ == nullptr) {
    elemental_.StoreElement(value, out, linear, type);
    return;
  }
  elemental_.StoreElement(value, nontemporal_base_, nontemporal_offset_, type);
}

void LoopKernelEmitter::BuildGenerators(const std::vector<llvm::Value*>& buffers) {
  for (const HloInstruction* instruction : computation_.MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kTuple) continue;
    if (instruction->opcode() == HloOpcode::kParameter) {
      const int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
      llvm::Value* base = buffers[number];
      generators_[instruction] =
          [this, instruction, base](const llvm_ir::IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const Shape& shape = instruction->shape();
        llvm::Value* linear =
            index.empty() ? b_.getInt64(0) : elemental_.Linearize(index, shape.dimensions());
        return elemental_.LoadElement(base, linear, shape.element_type());
      };
      continue;
    }
    generators_[instruction] =
        [this, instruction](const llvm_ir::IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      for (const CacheEntry& entry : cache_[instruction]) {
        if (entry.index == index && elemental_.InScope(entry.scope)) return entry.value;
      }
      if (instruction == tile_buffer_.transpose && tile_buffer_.a_start != nullptr) {
        return elemental_.LoadElement(TileReadBuffer(), TileReadOffset(index),
                                      instruction->shape().element_type());
      }
      auto row_buffer = row_buffers_.find(instruction);
      if (row_buffer != row_buffers_.end() && !filling_row_buffers_) {
        return elemental_.LoadElement(RowBufferBase(row_buffer->second),
                                      RowBufferOffset(row_buffer->second, index),
                                      instruction->shape().element_type());
      }
      std::vector<llvm_ir::ElementGenerator> operands;
      for (const HloInstruction* operand : instruction->operands()) {
        auto it = generators_.find(operand);
        if (it == generators_.end()) {
          return absl::UnimplementedError(absl::StrCat(
              "CPU codegen: ", HloOpcodeString(operand->opcode()),
              " as an operand inside a loop kernel is not implemented (", operand->name(), ")"));
        }
        operands.push_back(it->second);
      }
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value,
                            elemental_.EmitElement(*instruction, operands, index));
      cache_[instruction].push_back({index, value, elemental_.scope()});
      if (row_buffer != row_buffers_.end()) {
        elemental_.StoreElement(value, RowBufferBase(row_buffer->second),
                                RowBufferOffset(row_buffer->second, index),
                                instruction->shape().element_type());
      }
      return value;
    };
  }
}

// Whether a kernel stores its outputs with non-temporal stores: one array
// output of at least the last-level cache's size, in rows of at least
// kNonTemporalMinRowBytes, with a plain scalar element type,
// written once per element (not a reduction: its output is small and its
// loop nest is not the output's rows), for an x86-64 target (the kernel ends
// with an sfence).
bool UseNonTemporalStores(const std::vector<const HloInstruction*>& outputs, const Jit& jit) {
  if (outputs.size() != 1) return false;
  const HloInstruction* output = outputs[0];
  if (output->opcode() == HloOpcode::kReduce || output->shape().rank() == 0) return false;
  // A scan reads back the row it stored last.
  if (ScanOf(*output).has_value()) return false;
  const PrimitiveType type = output->shape().element_type();
  if (!primitive_util::IsFloatingPointType(type) && !primitive_util::IsIntegralType(type)) {
    return false;
  }
  const int64_t bytes = ShapeUtil::ByteSizeOfElements(output->shape());
  if (bytes < jit.last_level_cache_bytes()) return false;
  const int64_t row_bytes = bytes / ShapeUtil::ElementsIn(output->shape()) *
                            output->shape().dimensions(output->shape().rank() - 1);
  if (row_bytes < kNonTemporalMinRowBytes) return false;
  return absl::StartsWith(jit.target_triple(), "x86_64");
}

// The outputs of a loop fusion: the root, or the elements of a root tuple.
absl::StatusOr<std::vector<const HloInstruction*>> LoopOutputs(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) return absl::InvalidArgumentError("loop kernel: computation has no root");
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  if (outputs.empty()) return absl::InvalidArgumentError("loop kernel: the root tuple is empty");
  for (const HloInstruction* output : outputs) {
    if (!output->shape().IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop kernel: output ", output->name(),
                       " is not an array: ", output->shape().ToString()));
    }
    if (output->shape().dimensions() != outputs[0]->shape().dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop kernel: outputs of a multi-output fusion must have one shape; ",
                       output->name(), " is ", output->shape().ToString(), ", ", outputs[0]->name(),
                       " is ", outputs[0]->shape().ToString()));
    }
    // A bitcast (from layout-normalization) reads its operand linearly, as
    // memory holds it, so it may read or write an array in any layout.
    if (!ShapeUtil::HasDescendingLayout(output->shape()) &&
        output->opcode() != HloOpcode::kBitcast) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: output ", output->name(), " has a non-default layout"));
    }
  }
  for (const HloInstruction* parameter : computation.parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " is not an array"));
    }
    const bool only_bitcasts = std::all_of(
        parameter->users().begin(), parameter->users().end(),
        [](const HloInstruction* user) { return user->opcode() == HloOpcode::kBitcast; });
    if (!ShapeUtil::HasDescendingLayout(parameter->shape()) && !only_bitcasts) {
      return absl::UnimplementedError(
          absl::StrCat("CPU codegen: parameter ", parameter->name(), " has a non-default layout"));
    }
  }
  return outputs;
}

absl::Status EmitLoopKernel(const HloComputation& computation, absl::string_view kernel_name,
                            const std::vector<const HloInstruction*>& outputs, bool nontemporal,
                            llvm::Module* module) {
  LoopKernelEmitter emitter(computation, module);
  if (nontemporal) emitter.EnableNonTemporalStores();
  return emitter.Emit(kernel_name, outputs);
}

}  // namespace axle::cpu
