//===- scan_kernel_emitter.cc - Running folds (cumsum, cummax) in O(n) ----===//
//
// A reduce-window that folds every prefix (or suffix) of one dimension
// (loop_kernel_plan.h: ScanOf) as a loop kernel that folds each output from
// the one before it: O(n) instead of the window's O(n^2); an innermost
// scan folds four lines side by side (independent chains: a [32, 512]
// cumsum 50 -> 18 us); an f32 one whose combiner has a long-latency op
// (cumlogsumexp's exp and log1p) folds sixteen lines as the lanes of one
// vectorized loop instead. See loop_kernel_emitter_internal.h: EmitScan.
//
//===----------------------------------------------------------------------===//
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/loop_kernel_emitter_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// Lines scanned side by side (EmitScan).
constexpr int64_t kInterleavedLines = 4;
// Lines scanned as the lanes of one vectorized loop (an f32 vector).
constexpr int64_t kLaneLines = 16;

// Whether `combiner` costs enough per step that an innermost f32 scan
// runs kLaneLines lines as vector lanes (their inputs gathered and
// outputs scattered a line apart) rather than kInterleavedLines scalar
// chains: it computes a transcendental function, a division or a root.
// A sum's or a max's chain is a few cycles per step, cheaper than the
// gathers and scatters.
bool HasLongLatencyOp(const HloComputation& combiner) {
  for (const HloInstruction* instruction : combiner.instructions()) {
    switch (instruction->opcode()) {
      case HloOpcode::kExp:
      case HloOpcode::kExpm1:
      case HloOpcode::kLog:
      case HloOpcode::kLog1p:
      case HloOpcode::kTanh:
      case HloOpcode::kLogistic:
      case HloOpcode::kPower:
      case HloOpcode::kDivide:
      case HloOpcode::kSqrt:
      case HloOpcode::kRsqrt:
        return true;
      default:
        break;
    }
  }
  return false;
}

}  // namespace

absl::Status EmitScan(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                      const HloInstruction& scan, const ScanPlan& plan,
                      const llvm_ir::ElementGenerator& input, llvm::Value* init,
                      llvm::Value* output, llvm::Value* begin, llvm::Value* end) {
  const PrimitiveType type = scan.shape().element_type();
  const std::vector<int64_t>& dims = scan.shape().dimensions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t scanned = plan.dimension;
  const int64_t length = dims[scanned];
  const int64_t range_dimension = scanned == 0 ? (rank > 1 ? 1 : -1) : 0;
  const HloComputation& combiner = *scan.to_apply();
  llvm_ir::IrIndex index(rank);

  // The loop over dimension d, [begin, end) for the range dimension.
  auto emit_loop = [&](int64_t d, const std::function<absl::Status()>& body) {
    llvm::Value* low = d == range_dimension ? begin : b.getInt64(0);
    llvm::Value* high = d == range_dimension ? end : b.getInt64(dims[d]);
    return elemental.EmitForLoop(low, high, absl::StrCat("d", d), [&](llvm::Value* i) {
      index[d] = i;
      return body();
    });
  };
  // One output row at position `step` of the scanned dimension (the
  // dimensions inside it looped over): the fold of the row before it (init
  // for the first) with the input's row.
  auto emit_row = [&](llvm::Value* position, llvm::Value* previous) -> absl::Status {
    std::function<absl::Status(int64_t)> inner = [&](int64_t d) -> absl::Status {
      if (d < rank) return emit_loop(d, [&] { return inner(d + 1); });
      index[scanned] = position;
      AXLE_ASSIGN_OR_RETURN(llvm::Value * value, input(index));
      llvm::Value* accumulated = init;
      if (previous != nullptr) {
        llvm_ir::IrIndex before = index;
        before[scanned] = previous;
        accumulated = elemental.LoadElement(output, elemental.Linearize(before, dims), type);
      }
      AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded,
                            elemental.EmitScalarComputation(combiner, {accumulated, value}));
      if (folded.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("reduce-window ", scan.name(), ": the computation must return one value"));
      }
      index[scanned] = position;
      elemental.StoreElement(folded[0], output, elemental.Linearize(index, dims), type);
      return absl::OkStatus();
    };
    return inner(scanned + 1);
  };
  // The first row from init, then each next one from the one before, in
  // order (never vectorized across rows: each needs the last). `lines`:
  // the values of dimension `interleaved` (-1: none) whose scans run side
  // by side in one loop, independent dependency chains.
  auto emit_scanned = [&](int64_t interleaved,
                          const std::vector<llvm::Value*>& lines) -> absl::Status {
    auto each_line = [&](const std::function<absl::Status()>& body) -> absl::Status {
      if (interleaved < 0) return body();
      for (llvm::Value* line : lines) {
        index[interleaved] = line;
        AXLE_RETURN_IF_ERROR(body());
      }
      return absl::OkStatus();
    };
    AXLE_RETURN_IF_ERROR(
        each_line([&] { return emit_row(b.getInt64(plan.reverse ? length - 1 : 0), nullptr); }));
    return elemental.EmitForLoop(
        b.getInt64(1), b.getInt64(length), "step",
        [&](llvm::Value* step) -> absl::Status {
          llvm::Value* position = plan.reverse ? b.CreateSub(b.getInt64(length - 1), step) : step;
          llvm::Value* previous = plan.reverse ? b.CreateAdd(position, b.getInt64(1))
                                               : b.CreateSub(position, b.getInt64(1));
          return each_line([&] { return emit_row(position, previous); });
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  };
  // A scan along the innermost dimension folds one element per step, each
  // waiting on the last (an add's latency and a store-to-load forward):
  // kInterleavedLines lines of the dimension outside it scan together.
  const int64_t interleaved = scanned == rank - 1 && rank >= 2 ? rank - 2 : -1;
  // kLaneLines lines from `first` on as the lanes of a loop vectorized
  // across them: each step folds every lane's accumulator (a stack array,
  // kept from the step before) with its input, and stores it. Every line
  // still folds in order, as the scalar chains do.
  const bool lanes = interleaved >= 0 && type == F32 && HasLongLatencyOp(combiner);
  llvm::Value* accumulators = nullptr;
  if (lanes) {
    llvm::Function* function = b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    accumulators =
        entry.CreateAlloca(llvm::ArrayType::get(b.getFloatTy(), kLaneLines), nullptr, "scan.lanes");
  }
  auto emit_lanes = [&](llvm::Value* first) -> absl::Status {
    auto emit_step = [&](llvm::Value* position, bool initial) -> absl::Status {
      return elemental.EmitForLoop(
          b.getInt64(0), b.getInt64(kLaneLines), "lane",
          [&](llvm::Value* lane) -> absl::Status {
            index[interleaved] = b.CreateAdd(first, lane);
            index[scanned] = position;
            AXLE_ASSIGN_OR_RETURN(llvm::Value * value, input(index));
            llvm::Value* slot =
                b.CreateInBoundsGEP(llvm::ArrayType::get(b.getFloatTy(), kLaneLines), accumulators,
                                    {b.getInt64(0), lane});
            llvm::Value* accumulated = initial ? init : b.CreateLoad(b.getFloatTy(), slot);
            AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded,
                                  elemental.EmitScalarComputation(combiner, {accumulated, value}));
            if (folded.size() != 1) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "reduce-window ", scan.name(), ": the computation must return one value"));
            }
            b.CreateStore(folded[0], slot);
            index[scanned] = position;
            elemental.StoreElement(folded[0], output, elemental.Linearize(index, dims), type);
            return absl::OkStatus();
          },
          kLaneLines);
    };
    AXLE_RETURN_IF_ERROR(emit_step(b.getInt64(plan.reverse ? length - 1 : 0), true));
    return elemental.EmitForLoop(
        b.getInt64(1), b.getInt64(length), "step",
        [&](llvm::Value* step) -> absl::Status {
          return emit_step(plan.reverse ? b.CreateSub(b.getInt64(length - 1), step) : step, false);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever);
  };
  std::function<absl::Status(int64_t)> outer = [&](int64_t d) -> absl::Status {
    if (d < scanned && d != interleaved) return emit_loop(d, [&] { return outer(d + 1); });
    if (d != interleaved) return emit_scanned(-1, {});
    llvm::Value* low = d == range_dimension ? begin : b.getInt64(0);
    llvm::Value* high = d == range_dimension ? end : b.getInt64(dims[d]);
    if (lanes) {
      llvm::Value* lane_groups = b.CreateSDiv(b.CreateSub(high, low), b.getInt64(kLaneLines));
      AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
          b.getInt64(0), lane_groups, absl::StrCat("d", d, ".lanes"),
          [&](llvm::Value* group) {
            return emit_lanes(b.CreateAdd(low, b.CreateMul(group, b.getInt64(kLaneLines))));
          },
          llvm_ir::ElementalIrEmitter::kVectorizeNever));
      low = b.CreateAdd(low, b.CreateMul(lane_groups, b.getInt64(kLaneLines)));
    }
    llvm::Value* groups = b.CreateSDiv(b.CreateSub(high, low), b.getInt64(kInterleavedLines));
    AXLE_RETURN_IF_ERROR(elemental.EmitForLoop(
        b.getInt64(0), groups, absl::StrCat("d", d, ".groups"),
        [&](llvm::Value* group) -> absl::Status {
          llvm::Value* first = b.CreateAdd(low, b.CreateMul(group, b.getInt64(kInterleavedLines)));
          std::vector<llvm::Value*> lines;
          for (int64_t j = 0; j < kInterleavedLines; ++j) {
            lines.push_back(b.CreateAdd(first, b.getInt64(j)));
          }
          return emit_scanned(d, lines);
        },
        llvm_ir::ElementalIrEmitter::kVectorizeNever));
    llvm::Value* rest = b.CreateAdd(low, b.CreateMul(groups, b.getInt64(kInterleavedLines)));
    return elemental.EmitForLoop(rest, high, absl::StrCat("d", d, ".rest"),
                                 [&](llvm::Value* line) { return emit_scanned(d, {line}); });
  };
  return outer(0);
}

}  // namespace axle::cpu
