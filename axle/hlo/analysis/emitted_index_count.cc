//===- emitted_index_count.cc - How often a loop kernel emits each value --===//
#include "axle/hlo/analysis/emitted_index_count.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace axle {
namespace {

// Counts past this saturate (they only ever get compared with small limits).
constexpr int64_t kSaturated = int64_t{1} << 40;

// Whether `reader` reads `value` at the index it is computed at.
bool ReadsAtItsIndex(const HloInstruction& reader, const HloInstruction& value) {
  return reader.IsElementwise() && reader.shape().IsArray() && value.shape().IsArray() &&
         reader.shape().dimensions() == value.shape().dimensions();
}

}  // namespace

absl::flat_hash_map<const HloInstruction*, int64_t> EmittedIndexCounts(
    const HloComputation& computation) {
  absl::flat_hash_map<const HloInstruction*, int64_t> counts;
  // The index sources each value is read at: readers that remap the index.
  absl::flat_hash_map<const HloInstruction*, absl::flat_hash_set<const HloInstruction*>> sources;
  const std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  const HloInstruction* root = computation.root_instruction();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const HloInstruction* value = *it;
    absl::flat_hash_set<const HloInstruction*>& own = sources[value];
    if (value == root) {
      counts[value] = 1;
      own.insert(value);
      continue;
    }
    for (const HloInstruction* reader : value->users()) {
      if (ReadsAtItsIndex(*reader, *value)) {
        const auto& passed = sources[reader];
        own.insert(passed.begin(), passed.end());
      } else {
        own.insert(reader);
      }
    }
    int64_t count = 0;
    for (const HloInstruction* source : own) {
      if (source == value) continue;
      const int64_t weight =
          source->opcode() == HloOpcode::kConcatenate ? source->operand_count() : 1;
      count = std::min(kSaturated, count + counts[source] * weight);
    }
    counts[value] = count;
  }
  return counts;
}

int64_t MaxEmittedIndexCount(const HloComputation& computation) {
  int64_t most = 0;
  for (const auto& [value, count] : EmittedIndexCounts(computation)) {
    most = std::max(most, count);
  }
  return most;
}

}  // namespace axle
