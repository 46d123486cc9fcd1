//===- row_fusion.cc - Row reductions with their epilogue in one kernel ----===//
#include "axle/gpu/row_fusion.h"

#include <algorithm>
#include <map>
#include <set>

#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

constexpr int64_t kMinColumns = 32;  // a warp

// Whether `broadcast` (an operand of `rows` elements into rows * columns)
// keeps rows: its operand's non-degenerate dimensions map, in order, onto
// the output's non-degenerate leading dimensions whose product is `rows`.
bool SpreadsRowsAlongColumns(const HloInstruction& broadcast, int64_t rows) {
  const std::vector<int64_t>& out = broadcast.shape().dimensions();
  int64_t product = 1;
  size_t prefix = 0;
  while (prefix < out.size() && product < rows) product *= out[prefix++];
  if (product != rows) return false;
  std::vector<int64_t> leading;
  for (size_t d = 0; d < prefix; ++d) {
    if (out[d] > 1) leading.push_back(static_cast<int64_t>(d));
  }
  const std::vector<int64_t>& mapping = cast<HloDimensionsInstruction>(&broadcast)->dimensions();
  const std::vector<int64_t>& in = broadcast.operand(0)->shape().dimensions();
  std::vector<int64_t> mapped;
  for (size_t i = 0; i < in.size() && i < mapping.size(); ++i) {
    if (in[i] > 1) mapped.push_back(mapping[i]);
  }
  return mapped == leading;
}

// Whether `instruction`, which depends on a reduction, reads its dependent
// operands (`dependent`) at its own row (see row_fusion.h).
bool KeepsRows(const HloInstruction& instruction, const RowGeometry& geometry,
               const std::map<const HloInstruction*, bool>& dependent) {
  const int64_t rows = geometry.rows;
  const int64_t elements = rows * geometry.columns;
  auto is_dependent = [&](const HloInstruction* operand) {
    auto it = dependent.find(operand);
    return it != dependent.end() && it->second;
  };
  if (!instruction.shape().IsArray()) return false;
  const int64_t count = instruction.shape().num_elements();
  if (count != rows && count != elements) return false;
  switch (instruction.opcode()) {
    case HloOpcode::kReshape:
      return true;
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
      return ShapeUtil::HasDescendingLayout(instruction.shape()) &&
             ShapeUtil::HasDescendingLayout(instruction.operand(0)->shape()) &&
             instruction.operand(0)->shape().num_elements() == count;
    case HloOpcode::kBroadcast: {
      const HloInstruction* operand = instruction.operand(0);
      if (operand->shape().num_elements() == count) {
        // Only degenerate dimensions added: row-major positions stay when
        // the operand's other dimensions keep their order.
        const std::vector<int64_t>& mapping =
            cast<HloDimensionsInstruction>(&instruction)->dimensions();
        const std::vector<int64_t>& in = operand->shape().dimensions();
        int64_t last = -1;
        for (size_t i = 0; i < in.size() && i < mapping.size(); ++i) {
          if (in[i] == 1) continue;
          if (mapping[i] <= last) return false;
          last = mapping[i];
        }
        return true;
      }
      return operand->shape().num_elements() == rows && count == elements &&
             SpreadsRowsAlongColumns(instruction, rows);
    }
    default:
      break;
  }
  if (!instruction.IsElementwise()) return false;
  for (const HloInstruction* operand : instruction.operands()) {
    if (is_dependent(operand) &&
        operand->shape().dimensions() != instruction.shape().dimensions()) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<RowGeometry> RowReductionGeometry(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || reduce.operand_count() != 2 ||
      !reduce.shape().IsArray()) {
    return std::nullopt;
  }
  const PrimitiveType type = reduce.shape().element_type();
  if (pu::IsComplexType(type) || pu::BitWidth(type) > 64) return std::nullopt;
  const Shape& input = reduce.operand(0)->shape();
  std::vector<int64_t> reduced = cast<HloDimensionsInstruction>(&reduce)->dimensions();
  std::sort(reduced.begin(), reduced.end());
  const int64_t kept = input.rank() - static_cast<int64_t>(reduced.size());
  RowGeometry geometry;
  geometry.columns = 1;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] != kept + static_cast<int64_t>(i)) return std::nullopt;
    geometry.columns *= input.dimensions()[reduced[i]];
  }
  geometry.input_dims = input.dimensions();
  geometry.row_dims.assign(input.dimensions().begin(), input.dimensions().begin() + kept);
  geometry.rows = 1;
  for (int64_t d : geometry.row_dims) geometry.rows *= d;
  if (reduced.empty() || geometry.columns < kMinColumns || geometry.rows < 1) return std::nullopt;
  return geometry;
}

std::optional<RowFusionAnalysis> AnalyzeRowFusion(const HloComputation& computation,
                                                  const std::optional<RowGeometry>& known,
                                                  absl::Span<const int64_t> dependent_parameters) {
  RowFusionAnalysis analysis;
  std::optional<RowGeometry> geometry = known;
  std::map<const HloInstruction*, bool> dependent;
  bool any_dependent = false;
  const HloInstruction* root = computation.root_instruction();
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    bool depends = false;
    if (instruction->opcode() == HloOpcode::kParameter) {
      const int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
      depends = std::find(dependent_parameters.begin(), dependent_parameters.end(), number) !=
                dependent_parameters.end();
    }
    for (const HloInstruction* operand : instruction->operands()) depends |= dependent[operand];
    if (instruction->opcode() == HloOpcode::kReduce) {
      std::optional<RowGeometry> own = RowReductionGeometry(*instruction);
      if (!own.has_value() || dependent[instruction->operand(1)]) return std::nullopt;
      if (geometry.has_value() &&
          (own->input_dims != geometry->input_dims || own->row_dims != geometry->row_dims)) {
        return std::nullopt;
      }
      geometry = own;
      analysis.reductions.push_back(instruction);
      dependent[instruction] = true;
      any_dependent = true;
      continue;
    }
    dependent[instruction] = depends;
    if (!depends) continue;
    any_dependent = true;
    if (!geometry.has_value()) return std::nullopt;
    if (instruction == root && instruction->opcode() == HloOpcode::kTuple) continue;
    if (instruction->opcode() == HloOpcode::kParameter) {
      const int64_t count =
          instruction->shape().IsArray() ? instruction->shape().num_elements() : -1;
      if (count != geometry->rows && count != geometry->rows * geometry->columns) {
        return std::nullopt;
      }
      continue;
    }
    if (!KeepsRows(*instruction, *geometry, dependent)) return std::nullopt;
  }
  if (!any_dependent || !geometry.has_value()) return std::nullopt;
  analysis.geometry = *geometry;
  analysis.root_dependent = dependent[root];
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  analysis.outputs_ok = !outputs.empty();
  for (const HloInstruction* output : outputs) {
    if (!output->shape().IsArray() || (output->shape().dimensions() != geometry->input_dims &&
                                       output->shape().dimensions() != geometry->row_dims)) {
      analysis.outputs_ok = false;
    }
  }
  return analysis;
}

namespace {

bool IsLoopFusion(const HloInstruction& instruction) {
  const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction);
  return fusion != nullptr && (fusion->fusion_kind() == FusionKind::kLoop ||
                               fusion->fusion_kind() == FusionKind::kInput);
}

// Whether fusing `producer` into `consumer` leaves a row fusion whose
// outputs the kernel writes, without making any kernel read more.
bool CanMerge(const HloInstruction& producer, const HloInstruction& consumer) {
  if (!IsLoopFusion(producer) || !IsLoopFusion(consumer) || !producer.shape().IsArray()) {
    return false;
  }
  const HloComputation& produced =
      *cast<HloFusionInstruction>(&producer)->fused_instructions_computation();
  const HloComputation& consumed =
      *cast<HloFusionInstruction>(&consumer)->fused_instructions_computation();
  if (produced.instruction_count() + consumed.instruction_count() >
      GpuRowFusionMerger::kMaxInstructions) {
    return false;
  }
  std::optional<RowFusionAnalysis> inner = AnalyzeRowFusion(produced);
  if (!inner.has_value() || inner->reductions.empty() || !inner->root_dependent) return false;
  if (producer.user_count() > 1) {
    for (const HloInstruction* operand : producer.operands()) {
      if (std::find(consumer.operands().begin(), consumer.operands().end(), operand) ==
          consumer.operands().end()) {
        return false;
      }
    }
  }
  std::vector<int64_t> reading;
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (consumer.operand(i) == &producer) reading.push_back(i);
  }
  std::optional<RowFusionAnalysis> merged = AnalyzeRowFusion(consumed, inner->geometry, reading);
  return merged.has_value() && merged->outputs_ok;
}

}  // namespace

absl::StatusOr<bool> GpuRowFusionMerger::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    bool merged = true;
    while (merged) {
      merged = false;
      // Consumers last-first, so a chain folds into its last kernel.
      const std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
      for (auto it = order.rbegin(); it != order.rend() && !merged; ++it) {
        HloInstruction* consumer = *it;
        if (!IsLoopFusion(*consumer)) continue;
        std::set<const HloInstruction*> tried;
        for (HloInstruction* producer : consumer->operands()) {
          if (!tried.insert(producer).second || !CanMerge(*producer, *consumer)) continue;
          const FusionKind kind = cast<HloFusionInstruction>(consumer)->fusion_kind();
          AXLE_RETURN_IF_ERROR(FuseProducerIntoConsumer(producer, consumer, kind).status());
          merged = changed = true;
          break;
        }
      }
    }
  }
  return changed;
}

}  // namespace axle::gpu
