//===- loop_kernel_plan.cc - What shape of loop nest a loop kernel gets ----===//
//
// See loop_kernel_plan.h.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_plan.h"

#include <algorithm>
#include <set>

#include "axle/base/alignment.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/associative_selection.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

std::optional<std::pair<size_t, const HloInstruction*>> TransposedDimension(
    const HloComputation& computation, const RowIndexAnalysis& rows,
    const std::vector<int64_t>& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < 2 || dims[rank - 1] < kTransposeTile) return std::nullopt;
  for (const HloInstruction* instruction : computation.instructions()) {
    if (instruction->opcode() != HloOpcode::kTranspose ||
        primitive_util::IsComplexType(instruction->shape().element_type())) {
      continue;
    }
    if (instruction->shape().dimensions() != dims || rows.LoopPrefix(instruction) != rank) {
      continue;
    }
    const std::vector<int64_t>& permutation =
        cast<HloDimensionsInstruction>(instruction)->dimensions();
    for (int64_t a = 0; a + 1 < rank; ++a) {
      if (permutation[a] == rank - 1 && dims[a] >= kTransposeTile) {
        return std::make_pair(static_cast<size_t>(a), instruction);
      }
    }
  }
  return std::nullopt;
}

bool IsColumnReduction(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kReduce || root.operand_count() != 2 || !root.shape().IsArray() ||
      root.shape().rank() < 1) {
    return false;
  }
  const int64_t rank = root.operand(0)->shape().rank();
  const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(&root)->dimensions();
  if (reduced.empty()) return false;
  return std::find(reduced.begin(), reduced.end(), rank - 1) == reduced.end();
}

std::vector<const HloInstruction*> ColumnReductions(
    const std::vector<const HloInstruction*>& outputs) {
  if (outputs.empty()) return {};
  for (const HloInstruction* output : outputs) {
    if (!IsColumnReduction(*output) ||
        output->operand(0)->shape().dimensions() != outputs[0]->operand(0)->shape().dimensions() ||
        cast<HloDimensionsInstruction>(output)->dimensions() !=
            cast<HloDimensionsInstruction>(outputs[0])->dimensions()) {
      return {};
    }
  }
  return outputs;
}

namespace {

// The variadic reduce whose results `outputs` are, when its results are
// integers of 8 to 64 bits or 16- to 64-bit floats and nothing it reads is
// another reduce or reduce-window (a row value would be computed again
// for every element). Null otherwise.
const HloInstruction* VariadicReduceOf(const std::vector<const HloInstruction*>& outputs) {
  const HloInstruction* reduce = nullptr;
  for (const HloInstruction* output : outputs) {
    if (output->opcode() != HloOpcode::kGetTupleElement) return nullptr;
    const HloInstruction* tuple = output->operand(0);
    if (tuple->opcode() != HloOpcode::kReduce || (reduce != nullptr && tuple != reduce)) {
      return nullptr;
    }
    reduce = tuple;
  }
  if (reduce == nullptr || !reduce->shape().IsTuple() || reduce->operand_count() < 4) {
    return nullptr;
  }
  for (const Shape& result : reduce->shape().tuple_shapes()) {
    const PrimitiveType type = result.element_type();
    const int bits = primitive_util::BitWidth(type);
    const bool integer = primitive_util::IsIntegralType(type) && bits >= 8 && bits <= 64;
    const bool floating = type == F16 || type == BF16 || type == F32 || type == F64;
    if (!result.IsArray() || !(integer || floating)) return nullptr;
  }
  std::vector<const HloInstruction*> stack(reduce->operands().begin(), reduce->operands().end());
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (instruction->opcode() == HloOpcode::kReduce ||
        instruction->opcode() == HloOpcode::kReduceWindow) {
      return nullptr;
    }
    for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return reduce;
}

// The lanes of a 512-bit vector of `reduce`'s widest result type (bf16 and
// f16 compute in f32).
int64_t VectorLanesOfWidestResult(const HloInstruction& reduce) {
  int64_t widest = 8;
  for (const Shape& result : reduce.shape().tuple_shapes()) {
    const PrimitiveType type = result.element_type();
    const int64_t bits = primitive_util::IsFloatingPointType(type)
                             ? std::max<int64_t>(32, primitive_util::BitWidth(type))
                             : primitive_util::BitWidth(type);
    widest = std::max(widest, bits);
  }
  return 512 / widest;
}

}  // namespace

const HloInstruction* SideBySideReduction(const std::vector<const HloInstruction*>& outputs) {
  const HloInstruction* reduce = VariadicReduceOf(outputs);
  if (reduce == nullptr) return nullptr;
  const Shape& shape = reduce->shape().tuple_shapes(0);
  if (shape.rank() < 1 || shape.dimensions(shape.rank() - 1) < kMinSideBySideLanes) return nullptr;
  return reduce;
}

int64_t SideBySideVectorLanes(const HloInstruction& reduce) {
  const Shape& shape = reduce.shape().tuple_shapes(0);
  const int64_t lanes = std::min(kSideBySideBlock, shape.dimensions(shape.rank() - 1));
  int64_t width = VectorLanesOfWidestResult(reduce);
  while (width > lanes) width /= 2;
  return std::max<int64_t>(1, width);
}

const HloInstruction* SplitFoldReduction(const std::vector<const HloInstruction*>& outputs) {
  const HloInstruction* reduce = VariadicReduceOf(outputs);
  if (reduce == nullptr) return nullptr;
  const Shape& input = reduce->operand(0)->shape();
  int64_t folded = 1;
  bool minor_folded = false;
  for (int64_t d : cast<HloDimensionsInstruction>(reduce)->dimensions()) {
    if (d < 0 || d >= input.rank()) return nullptr;
    folded *= input.dimensions(d);
    minor_folded = minor_folded || d == input.rank() - 1;
  }
  if (folded < SplitFoldVectorLanes(*reduce) * kMinSplitFoldRun) return nullptr;
  if (SideBySideReduction(outputs) != nullptr && !(minor_folded && folded >= kMinSplitFoldRow)) {
    return nullptr;
  }
  return IsAssociativeSelection(*reduce->to_apply()) ? reduce : nullptr;
}

int64_t SplitFoldVectorLanes(const HloInstruction& reduce) {
  return VectorLanesOfWidestResult(reduce);
}

int64_t FoldChunks(const std::vector<const HloInstruction*>& outputs) {
  const HloInstruction* reduce = SplitFoldReduction(outputs);
  if (reduce == nullptr || reduce->shape().tuple_shapes(0).rank() != 0) return 0;
  const int64_t chunks =
      std::min({kMaxFoldChunks, ShapeUtil::ElementsIn(reduce->operand(0)->shape()) / kMinFoldChunk,
                kMaxFoldChunkBytes / FoldChunkBytes(*reduce, 1)});
  return chunks >= 2 ? chunks : 0;
}

int64_t FoldChunkBytes(const HloInstruction& reduce, int64_t chunks) {
  return static_cast<int64_t>(reduce.shape().tuple_shapes().size()) * chunks * 8;
}

namespace {

// Whether `computation` is `op(p0, p1)` (either order) for an op that is
// commutative and associative on its type.
bool IsCommutativeFold(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || root->operand_count() != 2 || !root->shape().IsArray() ||
      root->shape().rank() != 0) {
    return false;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b) {
    return false;
  }
  const PrimitiveType type = root->shape().element_type();
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
      return !primitive_util::IsComplexType(type) || root->opcode() == HloOpcode::kAdd;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      return !primitive_util::IsComplexType(type);
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return !primitive_util::IsFloatingPointType(type) && !primitive_util::IsComplexType(type);
    default:
      return false;
  }
}

}  // namespace

int64_t ColumnChunkPartialsOffset(const std::vector<const HloInstruction*>& reduces, size_t r,
                                  int64_t chunks) {
  int64_t offset = 0;
  for (size_t i = 0; i < r; ++i) {
    const Shape& shape = reduces[i]->shape();
    offset += RoundUpToAlignment((chunks - 1) * shape.dimensions(0) *
                                 primitive_util::ByteWidth(shape.element_type()));
  }
  return offset;
}

int64_t ColumnChunks(const std::vector<const HloInstruction*>& outputs) {
  if (ColumnReductions(outputs).empty() || outputs[0]->shape().rank() != 1) return 0;
  const Shape& input = outputs[0]->operand(0)->shape();
  const int64_t columns = input.dimensions(input.rank() - 1);
  const int64_t rows = ShapeUtil::ElementsIn(input) / std::max<int64_t>(1, columns);
  int64_t row_bytes = 0;
  for (const HloInstruction* reduce : outputs) {
    const PrimitiveType type = reduce->shape().element_type();
    if (!(primitive_util::IsFloatingPointType(type) || primitive_util::IsIntegralType(type)) ||
        primitive_util::BitWidth(type) < 8 || !IsCommutativeFold(*reduce->to_apply())) {
      return 0;
    }
    row_bytes += columns * primitive_util::ByteWidth(reduce->operand(0)->shape().element_type());
  }
  if (row_bytes == 0) return 0;
  int64_t chunks = std::min({kMaxColumnChunks, rows, rows * row_bytes / kMinColumnChunkBytes});
  while (chunks >= 2 && ColumnChunkPartialsOffset(outputs, outputs.size(), chunks) >
                            kMaxColumnChunkPartialsBytes) {
    --chunks;
  }
  return chunks >= 2 ? chunks : 0;
}

std::optional<ScanPlan> ScanOf(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kReduceWindow || root.operand_count() != 2 ||
      !root.shape().IsArray()) {
    return std::nullopt;
  }
  const Shape& input = root.operand(0)->shape();
  const std::vector<WindowDimension>& window =
      cast<HloWindowInstruction>(&root)->window().dimensions();
  if (!input.IsArray() || input.dimensions() != root.shape().dimensions() ||
      static_cast<int64_t>(window.size()) != input.rank()) {
    return std::nullopt;
  }
  std::optional<ScanPlan> plan;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const WindowDimension& w = window[d];
    if (w.stride() != 1 || w.window_dilation() != 1 || w.base_dilation() != 1 ||
        w.window_reversal()) {
      return std::nullopt;
    }
    if (w.size() == 1 && w.padding_low() == 0 && w.padding_high() == 0) continue;
    const int64_t n = input.dimensions(d);
    if (plan.has_value() || n < 2 || w.size() < n) return std::nullopt;
    if (w.padding_low() == w.size() - 1 && w.padding_high() == 0) {
      plan = ScanPlan{d, false};
    } else if (w.padding_low() == 0 && w.padding_high() == w.size() - 1) {
      plan = ScanPlan{d, true};
    } else {
      return std::nullopt;
    }
  }
  if (plan.has_value() && plan->reverse && !IsCommutativeFold(*root.to_apply())) {
    return std::nullopt;
  }
  return plan;
}

int64_t RangeDimension(const std::vector<const HloInstruction*>& outputs) {
  const Shape& shape = outputs[0]->shape();
  const int64_t rank = shape.IsArray() ? shape.rank() : 0;
  if (rank == 0) return -1;
  if (outputs.size() == 1) {
    if (std::optional<ScanPlan> scan = ScanOf(*outputs[0]); scan.has_value()) {
      return scan->dimension == 0 ? (rank > 1 ? 1 : -1) : 0;
    }
  }
  if (!ColumnReductions(outputs).empty()) return 0;
  // Past leading dimensions of one (JAX's [1, b, h, q, k] attention
  // scores), which would leave one row to split across threads.
  int64_t range = 0;
  while (range + 1 < rank && shape.dimensions(range) == 1) ++range;
  return range;
}

bool ComputesTranscendentals(const HloInstruction& hlo) {
  std::vector<const HloInstruction*> stack = {&hlo};
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (HloOpcodeIsTranscendental(instruction->opcode())) return true;
    switch (instruction->opcode()) {
      case HloOpcode::kReduce:
      case HloOpcode::kParameter:
        continue;  // another row value, or memory
      default:
        break;
    }
    for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return false;
}

const HloInstruction* LastRowReduction(const std::vector<const HloInstruction*>& values,
                                       const std::vector<int64_t>& dims) {
  const HloInstruction* last = nullptr;
  for (const HloInstruction* value : values) {
    if (value->opcode() != HloOpcode::kReduce || value->operand_count() != 2) continue;
    const auto& reduced = cast<HloDimensionsInstruction>(value)->dimensions();
    if (dims.size() < 2 || value->shape().rank() + 1 != static_cast<int64_t>(dims.size()) ||
        value->operand(0)->shape().dimensions() != dims || reduced.size() != 1 ||
        reduced[0] != static_cast<int64_t>(dims.size()) - 1) {
      continue;
    }
    last = value;
  }
  return last;
}

const HloInstruction* SkewableRowReduction(
    const std::vector<std::vector<const HloInstruction*>>& row_values,
    const std::vector<const HloInstruction*>& outputs, const std::vector<int64_t>& dims,
    bool nontemporal, int64_t max_row_bytes,
    const std::function<bool(const HloInstruction*)>& in_row_buffer) {
  if (!nontemporal || outputs.size() != 1 || dims.size() != 2 || !row_values[0].empty() ||
      row_values[1].empty() || !row_values[2].empty()) {
    return nullptr;
  }
  const HloInstruction& output = *outputs[0];
  const int64_t row_bytes = dims[1] * static_cast<int64_t>(sizeof(float));
  if (output.shape().element_type() != F32 || row_bytes % kBufferAlignment != 0 ||
      row_bytes > max_row_bytes) {
    return nullptr;
  }
  std::set<const HloInstruction*> values(row_values[1].begin(), row_values[1].end());
  for (const HloInstruction* value : values) {
    if (value->shape().element_type() != F32) return nullptr;
  }
  std::vector<const HloInstruction*> stack = {&output};
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second || values.count(instruction) > 0) continue;
    if (in_row_buffer(instruction)) continue;
    if (instruction->opcode() != HloOpcode::kConstant &&
        instruction->opcode() != HloOpcode::kBroadcast && !instruction->IsElementwise()) {
      return nullptr;  // a parameter, a reduce, a data movement
    }
    for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return LastRowReduction(row_values[1], dims);
}

std::vector<int64_t> InnerLoopSplits(const HloComputation& computation,
                                     const std::vector<int64_t>& dims) {
  if (dims.empty()) return {};
  const int64_t size = dims.back();
  std::set<int64_t> splits;
  auto add = [&](int64_t at) {
    if (at > 0 && at < size) splits.insert(at);
  };
  for (const HloInstruction* instruction : computation.instructions()) {
    const Shape& shape = instruction->shape();
    if (!shape.IsArray() || shape.rank() == 0 || shape.dimensions().back() != size) continue;
    const int64_t minor = shape.rank() - 1;
    if (instruction->opcode() == HloOpcode::kConcatenate &&
        cast<HloDimensionsInstruction>(instruction)->dimension() == minor) {
      int64_t offset = 0;
      for (const HloInstruction* operand : instruction->operands()) {
        offset += operand->shape().dimensions(minor);
        add(offset);
      }
    } else if (instruction->opcode() == HloOpcode::kPad) {
      const auto& config = cast<HloPadInstruction>(instruction)->padding_config().dimensions(minor);
      if (config.interior_padding() != 0) continue;
      add(config.edge_padding_low());
      add(config.edge_padding_low() + instruction->operand(0)->shape().dimensions(minor));
    }
  }
  const int64_t parts = static_cast<int64_t>(splits.size()) + 1;
  if (parts > kMaxInnerLoopParts &&
      parts * computation.instruction_count() > kMaxInnerLoopInstructions) {
    return {};
  }
  return std::vector<int64_t>(splits.begin(), splits.end());
}

}  // namespace axle::cpu
