//===- side_by_side_reduction_emitter.cc - Variadic reduces across lanes ---===//
//
// A variadic reduce (argmax, argmin) whose elements fold side by side, one
// per vector lane (loop_kernel_plan.h: SideBySideReduction): for each block
// of output elements along the output's minor dimension, the accumulators
// of the block's elements live in stack arrays; each step of the reduced
// dimensions (in row-major order, as the interpreter folds) runs the
// combiner on every element of the block in one loop, vectorized across
// the elements. A step reads the block's inputs a row apart when the
// reduced dimensions include the input's minor one (gathers; the lines
// they touch serve the next steps from L1), contiguously otherwise. See
// loop_kernel_emitter_internal.h: EmitSideBySideReduction. A short fold
// (argmax over a minor dimension of 3) is unrolled inside the loop over
// the block's elements instead, so its strided reads load as whole vectors.
//
// Also here, a split fold (loop_kernel_plan.h: SplitFoldReduction): one
// output element's fold cut into as many consecutive runs as a vector has
// lanes, the runs folded side by side, one per lane (each run in order),
// and their results folded in order after the init value. A split fold to
// a scalar of many inputs is cut into chunks (loop_kernel_plan.h:
// FoldChunks), each split that way and folded without the init value into
// a partial result, which the kernel's last row folds in order after it.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/cpu/host_cache_sizes.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Function.h"

namespace axle::cpu {
namespace {

// Inputs per element up to which a side-by-side fold is unrolled.
constexpr int64_t kUnrolledFoldSteps = 8;

// The length (in bytes of the reduce's first input) from which a split
// fold's runs are cut to an odd number of cache lines.
constexpr int64_t kOddLineRunBytes = 2048;

// Adds "llvm.loop.interleave.count" 1 to the loop entered from `preheader`
// when it carries loop metadata (EmitForLoop's forced vector width): one
// vector per iteration, so a block of 8 or 16 elements is one vector
// iteration rather than the scalar remainder of an interleaved one.
void DisableInterleaving(llvm::BasicBlock* preheader) {
  llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
  llvm::LLVMContext& context = header->getContext();
  for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
    if (latch == preheader) continue;
    llvm::MDNode* old = latch->getTerminator()->getMetadata(llvm::LLVMContext::MD_loop);
    if (old == nullptr) continue;
    std::vector<llvm::Metadata*> properties = {nullptr};
    for (unsigned i = 1; i < old->getNumOperands(); ++i) properties.push_back(old->getOperand(i));
    llvm::Metadata* count[] = {
        llvm::MDString::get(context, "llvm.loop.interleave.count"),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
    properties.push_back(llvm::MDNode::get(context, count));
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
}

// A variadic reduce being emitted, with the arguments of
// EmitSideBySideReduction and EmitSplitFoldReduction, and what both
// emitters read off it (Read): N (inputs, init values and results), each
// result's element type, the input dimension of each output dimension
// (kept), the reduced ones in order (folded), the inputs each output
// element folds, and the init values.
struct VariadicReduceEmitter {
  llvm_ir::ElementalIrEmitter& elemental;
  llvm::IRBuilderBase& b;
  const HloInstruction& reduce;
  absl::Span<const llvm_ir::ElementGenerator> operands;
  const std::vector<SideBySideOutput>& outputs;
  int64_t range_dimension;
  llvm::Value* begin;
  llvm::Value* end;

  const HloComputation& combiner = *reduce.to_apply();
  int64_t count = 0;
  absl::Span<const int64_t> in_dims;
  absl::Span<const int64_t> out_dims;
  std::vector<PrimitiveType> types;
  std::vector<int64_t> kept;
  std::vector<int64_t> folded;
  int64_t folded_count = 1;
  int64_t out_rank = 0;
  // The init values (operands count..2*count-1), each read once.
  std::vector<llvm::Value*> init;
  // The output element being emitted and the input element it reads.
  llvm_ir::IrIndex out_index;
  llvm_ir::IrIndex in_index;

  // Checks the reduce, fills in what is read off it and reads the init
  // values.
  absl::Status Read() {
    count = reduce.operand_count() / 2;
    for (const Shape& result : reduce.shape().tuple_shapes()) {
      types.push_back(result.element_type());
    }
    if (count < 2 || reduce.operand_count() != 2 * count ||
        static_cast<int64_t>(types.size()) != count ||
        static_cast<int64_t>(operands.size()) != reduce.operand_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce ", reduce.name(), ": needs N inputs, N init values and N results, N >= 2"));
    }
    in_dims = reduce.operand(0)->shape().dimensions();
    out_dims = reduce.shape().tuple_shapes(0).dimensions();
    const int64_t in_rank = static_cast<int64_t>(in_dims.size());
    std::vector<bool> is_reduced(in_rank, false);
    for (int64_t d : cast<HloDimensionsInstruction>(&reduce)->dimensions()) {
      if (d < 0 || d >= in_rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("reduce ", reduce.name(), ": a reduced dimension is out of range"));
      }
      is_reduced[d] = true;
    }
    for (int64_t d = 0; d < in_rank; ++d) {
      (is_reduced[d] ? folded : kept).push_back(d);
      if (is_reduced[d]) folded_count *= in_dims[d];
    }
    if (kept.size() != out_dims.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce ", reduce.name(), ": the result must have the kept dimensions"));
    }
    out_rank = static_cast<int64_t>(kept.size());
    out_index.resize(out_rank);
    in_index.resize(in_rank);
    for (int64_t k = 0; k < count; ++k) {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[count + k](llvm_ir::IrIndex{}));
      init.push_back(value);
    }
    return absl::OkStatus();
  }

  absl::Status EmitSideBySide();
  // chunks > 0: chunk `row` of a fold to a scalar into `partials`, or
  // (row `chunks`) the combine (loop_kernel_plan.h: FoldChunks).
  absl::Status EmitSplitFold(int64_t chunks, llvm::Value* partials);

  // The combiner on `arguments` (N accumulators, then N values), checked to
  // give N results.
  absl::StatusOr<std::vector<llvm::Value*>> Combine(const std::vector<llvm::Value*>& arguments) {
    AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                          elemental.EmitScalarComputation(combiner, arguments));
    if (static_cast<int64_t>(results.size()) != count) {
      return absl::InvalidArgumentError(absl::StrCat("reduce ", reduce.name(),
                                                     ": the computation returns ", results.size(),
                                                     " values for ", count, " accumulators"));
    }
    return results;
  }

  // Output dimension d's loop bounds: [begin, end) for range_dimension, the
  // whole dimension for the others.
  llvm::Value* Low(int64_t d) { return d == range_dimension ? begin : b.getInt64(0); }
  llvm::Value* High(int64_t d) { return d == range_dimension ? end : b.getInt64(out_dims[d]); }

  // Loops over output dimensions d..stop-1 (setting out_index and the kept
  // dimensions of in_index) around `inner`.
  absl::Status EmitOuterLoops(int64_t d, int64_t stop, absl::FunctionRef<absl::Status()> inner) {
    if (d == stop) return inner();
    return elemental.EmitForLoop(
        Low(d), High(d), absl::StrCat("d", d),
        [&](llvm::Value* i) {
          out_index[d] = i;
          in_index[kept[d]] = i;
          return EmitOuterLoops(d + 1, stop, inner);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  }
};

absl::Status VariadicReduceEmitter::EmitSideBySide() {
  if (out_rank < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduce ", reduce.name(), ": the result must have the kept dimensions"));
  }
  const int64_t minor = out_rank - 1;
  const int width = static_cast<int>(SideBySideVectorLanes(reduce));

  // One block's accumulators per result.
  const std::vector<llvm::Value*> accumulators = EntryArrays(elemental, b, types, kSideBySideBlock);

  // Elements [first, first + size) of the output's minor dimension, size
  // at most kSideBySideBlock: init, every step of the reduced dimensions,
  // then the results stored.
  // A short fold (at most kUnrolledFoldSteps inputs per element): one
  // loop over the block's elements, each folding its inputs unrolled, in
  // order, in registers. Reads a row apart become an interleaved group
  // LLVM loads as whole vectors and shuffles apart, not gathers.
  auto emit_unrolled_block = [&](llvm::Value* first, llvm::Value* size) -> absl::Status {
    return elemental.EmitForLoop(
        b.getInt64(0), size, "lanes",
        [&](llvm::Value* lane) -> absl::Status {
          in_index[kept[minor]] = b.CreateAdd(first, lane);
          std::vector<llvm::Value*> accumulators = init;
          for (int64_t step = 0; step < folded_count; ++step) {
            int64_t position = step;
            for (auto d = folded.rbegin(); d != folded.rend(); ++d) {
              in_index[*d] = b.getInt64(position % in_dims[*d]);
              position /= in_dims[*d];
            }
            std::vector<llvm::Value*> arguments = accumulators;
            for (int64_t k = 0; k < count; ++k) {
              AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](in_index));
              arguments.push_back(value);
            }
            AXLE_ASSIGN_OR_RETURN(accumulators, Combine(arguments));
          }
          out_index[minor] = in_index[kept[minor]];
          llvm::Value* linear = elemental.Linearize(out_index, out_dims);
          for (const SideBySideOutput& output : outputs) {
            elemental.StoreElement(accumulators[output.result], output.buffer, linear,
                                   types[output.result]);
          }
          return absl::OkStatus();
        },
        width > 1 ? width : llvm_ir::ElementalIrEmitter::kVectorizeAuto);
  };

  auto emit_block = [&](llvm::Value* first, llvm::Value* size) -> absl::Status {
    if (folded_count <= kUnrolledFoldSteps) return emit_unrolled_block(first, size);
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(b.getInt64(0), size, "init", [&](llvm::Value* lane) {
      for (int64_t k = 0; k < count; ++k) {
        elemental.StoreElement(init[k], accumulators[k], lane, types[k]);
      }
      return absl::OkStatus();
    }));
    std::function<absl::Status(size_t)> emit_folded = [&](size_t f) -> absl::Status {
      if (f < folded.size()) {
        const int64_t d = folded[f];
        return elemental.EmitForLoop(
            b.getInt64(0), b.getInt64(in_dims[d]), absl::StrCat("r", d),
            [&](llvm::Value* i) {
              in_index[d] = i;
              return emit_folded(f + 1);
            },
            llvm_ir::ElementalIrEmitter::kVectorizeNever);
      }
      llvm::BasicBlock* preheader = b.GetInsertBlock();
      AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
          b.getInt64(0), size, "lanes",
          [&](llvm::Value* lane) -> absl::Status {
            in_index[kept[minor]] = b.CreateAdd(first, lane);
            std::vector<llvm::Value*> arguments;
            for (int64_t k = 0; k < count; ++k) {
              arguments.push_back(elemental.LoadElement(accumulators[k], lane, types[k]));
            }
            for (int64_t k = 0; k < count; ++k) {
              AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](in_index));
              arguments.push_back(value);
            }
            AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results, Combine(arguments));
            for (int64_t k = 0; k < count; ++k) {
              elemental.StoreElement(results[k], accumulators[k], lane, types[k]);
            }
            return absl::OkStatus();
          },
          width > 1 ? width : llvm_ir::ElementalIrEmitter::kVectorizeAuto));
      DisableInterleaving(preheader);
      return absl::OkStatus();
    };
    AXLE_RETURN_IF_ERROR(emit_folded(0));
    return elemental.EmitForLoop(b.getInt64(0), size, "store", [&](llvm::Value* lane) {
      out_index[minor] = b.CreateAdd(first, lane);
      llvm::Value* linear = elemental.Linearize(out_index, out_dims);
      for (const SideBySideOutput& output : outputs) {
        const PrimitiveType type = types[output.result];
        elemental.StoreElement(elemental.LoadElement(accumulators[output.result], lane, type),
                               output.buffer, linear, type);
      }
      return absl::OkStatus();
    });
  };

  // The loops over the output's other dimensions, then its minor one in
  // blocks of kSideBySideBlock elements.
  return EmitOuterLoops(0, minor, [&]() -> absl::Status {
    llvm::Value* low = Low(minor);
    llvm::Value* length = b.CreateSub(High(minor), low);
    llvm::Value* blocks = b.CreateSDiv(b.CreateAdd(length, b.getInt64(kSideBySideBlock - 1)),
                                       b.getInt64(kSideBySideBlock));
    return elemental.EmitForLoop(
        b.getInt64(0), blocks, "block",
        [&](llvm::Value* block) {
          llvm::Value* offset = b.CreateMul(block, b.getInt64(kSideBySideBlock));
          llvm::Value* size = b.CreateBinaryIntrinsic(
              llvm::Intrinsic::smin, b.CreateSub(length, offset), b.getInt64(kSideBySideBlock));
          return emit_block(b.CreateAdd(low, offset), size);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  });
}

absl::Status VariadicReduceEmitter::EmitSplitFold(int64_t chunks, llvm::Value* partials) {
  const int64_t lanes = SplitFoldVectorLanes(reduce);
  // Inputs per run: of the element's whole fold, or of the shortest chunk.
  const int64_t run = (chunks > 0 ? folded_count / chunks : folded_count) / lanes;
  if (run < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduce ", reduce.name(), ": too few inputs per element to split"));
  }
  // Runs a multiple of 4 KiB apart read lines of the same few L1 sets, one
  // per run, every step: with 16 runs they evict each other (an f32[1M]
  // argmax: 2.26 ms; 0.91 ms when the runs are 68 bytes off). Long runs
  // are therefore shortened to an odd number of cache lines of the input
  // (the lanes' lines then fall in distinct sets), the inputs past them
  // folded after the runs as any leftover is: at most 2 x lanes lines.
  const int64_t input_bytes = primitive_util::ByteWidth(reduce.operand(0)->shape().element_type());
  const int64_t line_elements =
      std::max<int64_t>(1, kCacheLineBytes / std::max<int64_t>(1, input_bytes));
  const bool odd_line_runs = run * input_bytes >= kOddLineRunBytes && run >= 3 * line_elements;
  if (chunks > 0 && (out_rank != 0 || partials == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduce ", reduce.name(), ": only a fold to a scalar is cut into chunks, with partials"));
  }

  // Per result: the runs' accumulators, and the in-order fold's.
  const std::vector<llvm::Value*> runs = EntryArrays(elemental, b, types, lanes);
  const std::vector<llvm::Value*> total = EntryArrays(elemental, b, types, 1);
  // Input `position` of the element's fold (row-major over the reduced
  // dimensions) into in_index.
  auto set_position = [&](llvm::Value* position) {
    for (auto d = folded.rbegin(); d != folded.rend(); ++d) {
      if (d + 1 == folded.rend()) {
        in_index[*d] = position;
      } else {
        llvm::Value* size = b.getInt64(in_dims[*d]);
        in_index[*d] = b.CreateURem(position, size);
        position = b.CreateUDiv(position, size);
      }
    }
  };
  auto combine = [&](std::vector<llvm::Value*> accumulators,
                     const std::vector<llvm::Value*>& values) {
    accumulators.insert(accumulators.end(), values.begin(), values.end());
    return Combine(accumulators);
  };
  auto inputs_at = [&](llvm::Value* position) -> absl::StatusOr<std::vector<llvm::Value*>> {
    set_position(position);
    std::vector<llvm::Value*> values;
    for (int64_t k = 0; k < count; ++k) {
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](in_index));
      values.push_back(value);
    }
    return values;
  };

  auto fold_into_total = [&](const std::vector<llvm::Value*>& values) -> absl::Status {
    std::vector<llvm::Value*> accumulators;
    for (int64_t k = 0; k < count; ++k) {
      accumulators.push_back(elemental.LoadElement(total[k], b.getInt64(0), types[k]));
    }
    AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results, combine(accumulators, values));
    for (int64_t k = 0; k < count; ++k) {
      elemental.StoreElement(results[k], total[k], b.getInt64(0), types[k]);
    }
    return absl::OkStatus();
  };

  // Folds inputs [first, first + length) of the element (out_index set)
  // into `total`: split into `lanes` runs of length / lanes inputs folded
  // side by side, then, from the init value (`from_init`) or from the first
  // run's result, the runs' results and the inputs past the last run in
  // order. length / lanes is at least one.
  auto emit_fold = [&](llvm::Value* first, llvm::Value* length, bool from_init) -> absl::Status {
    const int width = static_cast<int>(lanes);
    llvm::Value* run_length = b.CreateUDiv(length, b.getInt64(lanes));
    if (odd_line_runs) {
      // The largest multiple of a cache line's elements at most that long
      // whose lines are odd in number.
      llvm::Value* lines = b.CreateUDiv(run_length, b.getInt64(line_elements));
      lines = b.CreateSub(lines, b.CreateXor(b.CreateAnd(lines, b.getInt64(1)), b.getInt64(1)));
      run_length = b.CreateMul(lines, b.getInt64(line_elements));
    }
    auto run_start = [&](llvm::Value* lane) {
      return b.CreateAdd(first, b.CreateMul(lane, run_length));
    };
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
        b.getInt64(0), b.getInt64(lanes), "run.first",
        [&](llvm::Value* lane) -> absl::Status {
          AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> values, inputs_at(run_start(lane)));
          for (int64_t k = 0; k < count; ++k) {
            elemental.StoreElement(values[k], runs[k], lane, types[k]);
          }
          return absl::OkStatus();
        },
        width));
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
        b.getInt64(1), run_length, "run.step",
        [&](llvm::Value* step) -> absl::Status {
          llvm::BasicBlock* preheader = b.GetInsertBlock();
          AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
              b.getInt64(0), b.getInt64(lanes), "run.lanes",
              [&](llvm::Value* lane) -> absl::Status {
                std::vector<llvm::Value*> accumulators;
                for (int64_t k = 0; k < count; ++k) {
                  accumulators.push_back(elemental.LoadElement(runs[k], lane, types[k]));
                }
                AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> values,
                                      inputs_at(b.CreateAdd(run_start(lane), step)));
                AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                                      combine(accumulators, values));
                for (int64_t k = 0; k < count; ++k) {
                  elemental.StoreElement(results[k], runs[k], lane, types[k]);
                }
                return absl::OkStatus();
              },
              width));
          DisableInterleaving(preheader);
          return absl::OkStatus();
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever));
    // init (or the first run), the runs in order, then the inputs past the
    // last run.
    for (int64_t k = 0; k < count; ++k) {
      llvm::Value* start =
          from_init ? init[k] : elemental.LoadElement(runs[k], b.getInt64(0), types[k]);
      elemental.StoreElement(start, total[k], b.getInt64(0), types[k]);
    }
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
        b.getInt64(from_init ? 0 : 1), b.getInt64(lanes), "runs.fold",
        [&](llvm::Value* lane) -> absl::Status {
          std::vector<llvm::Value*> values;
          for (int64_t k = 0; k < count; ++k) {
            values.push_back(elemental.LoadElement(runs[k], lane, types[k]));
          }
          return fold_into_total(values);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever));
    return elemental.EmitForLoop(
        b.CreateAdd(first, b.CreateMul(run_length, b.getInt64(lanes))), b.CreateAdd(first, length),
        "rest.fold",
        [&](llvm::Value* position) -> absl::Status {
          AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> values, inputs_at(position));
          return fold_into_total(values);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  };
  auto store_total = [&]() {
    llvm::Value* linear = elemental.Linearize(out_index, out_dims);
    for (const SideBySideOutput& output : outputs) {
      const PrimitiveType type = types[output.result];
      elemental.StoreElement(elemental.LoadElement(total[output.result], b.getInt64(0), type),
                             output.buffer, linear, type);
    }
  };
  // One output element (out_index set): its whole fold.
  auto emit_element = [&]() -> absl::Status {
    AXLE_RETURN_IF_ERROR(emit_fold(b.getInt64(0), b.getInt64(folded_count), /*from_init=*/true));
    store_total();
    return absl::OkStatus();
  };

  if (chunks > 0) {
    // Result k's partial result of chunk c: slot c of the k-th array of
    // `chunks` 8-byte slots.
    auto partial = [&](int64_t k) {
      return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), partials, k * chunks * 8);
    };
    // Chunk c: inputs [c * N / chunks, (c + 1) * N / chunks).
    auto chunk_start = [&](llvm::Value* c) {
      return b.CreateUDiv(b.CreateMul(c, b.getInt64(folded_count)), b.getInt64(chunks));
    };
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
        begin, b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, b.getInt64(chunks)), "chunk",
        [&](llvm::Value* c) -> absl::Status {
          llvm::Value* first = chunk_start(c);
          llvm::Value* last = chunk_start(b.CreateAdd(c, b.getInt64(1)));
          AXLE_RETURN_IF_ERROR(emit_fold(first, b.CreateSub(last, first), /*from_init=*/false));
          for (int64_t k = 0; k < count; ++k) {
            elemental.StoreElement(elemental.LoadElement(total[k], b.getInt64(0), types[k]),
                                   partial(k), c, types[k]);
          }
          return absl::OkStatus();
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever));
    // Row `chunks` (when in range): init, then the partial results in order.
    return elemental.EmitForLoop(
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, begin, b.getInt64(chunks)), end, "combine",
        [&](llvm::Value*) -> absl::Status {
          for (int64_t k = 0; k < count; ++k) {
            elemental.StoreElement(init[k], total[k], b.getInt64(0), types[k]);
          }
          AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
              b.getInt64(0), b.getInt64(chunks), "partials.fold",
              [&](llvm::Value* c) -> absl::Status {
                std::vector<llvm::Value*> values;
                for (int64_t k = 0; k < count; ++k) {
                  values.push_back(elemental.LoadElement(partial(k), c, types[k]));
                }
                return fold_into_total(values);
              },
              llvm_ir::ElementalIrEmitter::kVectorizeNever));
          store_total();
          return absl::OkStatus();
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  }

  return EmitOuterLoops(0, out_rank, emit_element);
}

}  // namespace

std::vector<llvm::Value*> EntryArrays(llvm_ir::ElementalIrEmitter& elemental,
                                      llvm::IRBuilderBase& b,
                                      const std::vector<PrimitiveType>& types, int64_t length) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  std::vector<llvm::Value*> arrays;
  for (PrimitiveType type : types) {
    llvm::AllocaInst* array =
        entry.CreateAlloca(elemental.StorageType(type), entry.getInt64(length));
    array->setAlignment(llvm::Align(kBufferAlignment));
    arrays.push_back(array);
  }
  return arrays;
}

absl::Status EmitSideBySideReduction(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                                     const HloInstruction& reduce,
                                     absl::Span<const llvm_ir::ElementGenerator> operands,
                                     const std::vector<SideBySideOutput>& outputs,
                                     int64_t range_dimension, llvm::Value* begin,
                                     llvm::Value* end) {
  VariadicReduceEmitter emitter{elemental,       b,     reduce, operands, outputs,
                                range_dimension, begin, end};
  AXLE_RETURN_IF_ERROR(emitter.Read());
  return emitter.EmitSideBySide();
}

absl::Status EmitSplitFoldReduction(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                                    const HloInstruction& reduce,
                                    absl::Span<const llvm_ir::ElementGenerator> operands,
                                    const std::vector<SideBySideOutput>& outputs,
                                    int64_t range_dimension, llvm::Value* begin, llvm::Value* end,
                                    int64_t chunks, llvm::Value* partials) {
  VariadicReduceEmitter emitter{elemental,       b,     reduce, operands, outputs,
                                range_dimension, begin, end};
  AXLE_RETURN_IF_ERROR(emitter.Read());
  return emitter.EmitSplitFold(chunks, partials);
}

}  // namespace axle::cpu
