// The target-neutral core of buffer assignment (see buffer_assignment.h):
// logical buffers -> allocations and slices, the temp arena's packing,
// live ranges over a backend's steps, lookups and the text dump.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/buffer_assignment.h"

namespace axle {
namespace {

int64_t RoundUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

absl::string_view BufferAllocationKindName(BufferAllocation::Kind kind) {
  switch (kind) {
    case BufferAllocation::Kind::kParameter:
      return "parameter";
    case BufferAllocation::Kind::kConstant:
      return "constant";
    case BufferAllocation::Kind::kOutput:
      return "output";
    case BufferAllocation::Kind::kTemp:
      return "temp";
  }
  return "?";
}

ArenaPacking PackArena(absl::Span<const ArenaBlock> blocks, int64_t alignment) {
  const size_t n = blocks.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto size_of = [&](size_t i) { return RoundUp(blocks[i].size, alignment); };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return blocks[a].size > blocks[b].size; });
  ArenaPacking packing;
  packing.offsets.assign(n, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of conflicting placed ones
  for (size_t b : order) {
    const int64_t size = size_of(b);
    if (size == 0) continue;
    taken.clear();
    for (size_t p : placed) {
      if (blocks[p].first <= blocks[b].last && blocks[b].first <= blocks[p].last) {
        taken.emplace_back(packing.offsets[p], packing.offsets[p] + size_of(p));
      }
    }
    std::sort(taken.begin(), taken.end());
    // The lowest gap that fits.
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (begin - offset >= size) break;
      offset = std::max(offset, end);
    }
    packing.offsets[b] = offset;
    packing.size = std::max(packing.size, offset + size);
    placed.push_back(b);
  }
  return packing;
}

std::vector<std::pair<int64_t, int64_t>> LiveRangesOverSteps(
    int64_t num_buffers, absl::Span<const std::optional<StepUses>> steps) {
  const int64_t end = static_cast<int64_t>(steps.size());
  std::vector<std::pair<int64_t, int64_t>> live(num_buffers, {0, end});
  std::vector<bool> seen(num_buffers, false);
  for (int64_t i = 0; i < end; ++i) {
    if (!steps[i].has_value())
      return std::vector<std::pair<int64_t, int64_t>>(num_buffers, {0, end});
    for (const std::vector<int64_t>* buffers : {&steps[i]->writes, &steps[i]->reads}) {
      for (int64_t buffer : *buffers) {
        if (buffer < 0 || buffer >= num_buffers) continue;
        if (!seen[buffer]) live[buffer] = {i, i};
        seen[buffer] = true;
        live[buffer].first = std::min(live[buffer].first, i);
        live[buffer].second = std::max(live[buffer].second, i);
      }
    }
  }
  return live;
}

std::vector<LogicalBuffer> TemporaryBuffers(
    absl::Span<const ValueSlot> values, absl::Span<const int64_t> temporary_sizes,
    absl::Span<const std::pair<ShapeIndex, int64_t>> result_leaves,
    absl::Span<const std::optional<StepUses>> steps) {
  auto add_temporaries = [&](absl::Span<const int64_t> ids, std::vector<int64_t>& temporaries) {
    for (int64_t id : ids) {
      const ValueSlot& value = values[id];
      if (value.kind == ValueSlot::Kind::kTemporary) temporaries.push_back(value.temporary);
    }
  };
  // The steps over temporaries rather than values.
  std::vector<std::optional<StepUses>> temporary_steps;
  temporary_steps.reserve(steps.size());
  for (const std::optional<StepUses>& step : steps) {
    if (!step.has_value()) {
      temporary_steps.emplace_back();
      continue;
    }
    StepUses uses;
    add_temporaries(step->reads, uses.reads);
    add_temporaries(step->writes, uses.writes);
    temporary_steps.push_back(std::move(uses));
  }
  const int64_t num_temporaries = static_cast<int64_t>(temporary_sizes.size());
  const std::vector<std::pair<int64_t, int64_t>> live =
      LiveRangesOverSteps(num_temporaries, temporary_steps);
  std::vector<LogicalBuffer> buffers(num_temporaries);
  for (int64_t t = 0; t < num_temporaries; ++t) {
    buffers[t].size = temporary_sizes[t];
    buffers[t].first = live[t].first;
    buffers[t].last = live[t].second;
  }
  for (const auto& [index, id] : result_leaves) {
    const ValueSlot& value = values[id];
    if (value.kind != ValueSlot::Kind::kTemporary) continue;
    buffers[value.temporary].last = static_cast<int64_t>(steps.size());
    buffers[value.temporary].live_out = true;
  }
  return buffers;
}

std::vector<int64_t> TemporaryResultLeaves(
    absl::Span<const ValueSlot> values, int64_t num_temporaries,
    absl::Span<const std::pair<ShapeIndex, int64_t>> result_leaves) {
  std::vector<int64_t> leaf(num_temporaries, -1);
  std::vector<int> leaf_count(num_temporaries, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(result_leaves.size()); ++i) {
    const ValueSlot& value = values[result_leaves[i].second];
    if (value.kind != ValueSlot::Kind::kTemporary) continue;
    leaf[value.temporary] = i;
    ++leaf_count[value.temporary];
  }
  for (int64_t t = 0; t < num_temporaries; ++t) {
    if (leaf_count[t] > 1) leaf[t] = -1;
  }
  return leaf;
}

// Allocations and slices from logical buffers (AssignLogicalBuffers, and
// the last step of AssignBuffers).
class BufferAllocator {
 public:
  BufferAllocator(const BufferAssignmentOptions& options, BufferAssignment& out)
      : options_(options), out_(out) {}

  absl::Status Run(std::vector<LogicalBuffer> buffers) {
    for (size_t b = 0; b < buffers.size(); ++b) {
      const LogicalBuffer& buffer = buffers[b];
      if (buffer.size < 0 || buffer.first < 0 || buffer.last < buffer.first) {
        return absl::InvalidArgumentError(absl::StrCat("logical buffer ", b, " has size ",
                                                       buffer.size, " and live range [",
                                                       buffer.first, ", ", buffer.last, "]"));
      }
      if (buffer.kind == BufferAllocation::Kind::kParameter && buffer.parameter_number < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("logical buffer ", b, " is a parameter without its number"));
      }
    }
    out_.buffers_.assign(buffers.size(), {});
    std::vector<size_t> temps;
    for (size_t b = 0; b < buffers.size(); ++b) {
      const LogicalBuffer& buffer = buffers[b];
      out_.buffers_[b].range = {buffer.first, buffer.last};
      if (buffer.kind == BufferAllocation::Kind::kTemp) {
        temps.push_back(b);
        continue;
      }
      BufferAllocation& allocation = NewAllocation(buffer.kind, buffer.size);
      allocation.live_out_ = buffer.live_out || buffer.kind == BufferAllocation::Kind::kOutput;
      allocation.parameter_number_ = buffer.parameter_number;
      allocation.parameter_index_ = buffer.parameter_index;
      Place(static_cast<int64_t>(b), buffer, allocation, 0);
    }
    if (temps.empty()) return absl::OkStatus();
    std::vector<ArenaBlock> blocks;
    blocks.reserve(temps.size());
    for (size_t b : temps) blocks.push_back({buffers[b].size, buffers[b].first, buffers[b].last});
    ArenaPacking packing = PackArena(blocks, options_.alignment);
    BufferAllocation& arena = NewAllocation(BufferAllocation::Kind::kTemp, packing.size);
    out_.temp_allocation_ = arena.index_;
    // Listed by offset, then by start of live range: the dump reads as a map.
    std::vector<size_t> order(temps.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (packing.offsets[a] != packing.offsets[b]) return packing.offsets[a] < packing.offsets[b];
      return blocks[a].first < blocks[b].first;
    });
    for (size_t i : order) {
      const size_t b = temps[i];
      arena.live_out_ |= buffers[b].live_out;
      Place(static_cast<int64_t>(b), buffers[b], arena, packing.offsets[i]);
    }
    return absl::OkStatus();
  }

 private:
  BufferAllocation& NewAllocation(BufferAllocation::Kind kind, int64_t size) {
    BufferAllocation allocation;
    allocation.index_ = static_cast<int64_t>(out_.allocations_.size());
    allocation.kind_ = kind;
    allocation.size_ = size;
    out_.allocations_.push_back(std::move(allocation));
    return out_.allocations_.back();
  }

  void Place(int64_t id, const LogicalBuffer& buffer, BufferAllocation& allocation,
             int64_t offset) {
    out_.buffers_[id].slice = BufferSlice{allocation.index_, offset, buffer.size};
    if (buffer.values.empty() && !buffer.label.empty()) {
      allocation.assigned_.push_back({BufferValue{}, offset, buffer.size, buffer.label, id});
    }
    for (const BufferValue& value : buffer.values) {
      allocation.assigned_.push_back({value, offset, buffer.size, "", id});
      // Each value's own size: a buffer is as large as its largest value.
      const Shape& shape = ShapeUtil::GetSubshape(value.instruction->shape(), value.index);
      const int64_t size = shape.IsTuple()
                               ? shape.tuple_shapes_size() * options_.pointer_size
                               : (shape.IsArray() ? ShapeUtil::ByteSizeOfElements(shape) : 0);
      allocation.assigned_.back().size = std::min(size, buffer.size);
      out_.values_.try_emplace(
          {value.instruction, value.index},
          BufferAssignment::ValueInfo{
              BufferSlice{allocation.index_, offset, allocation.assigned_.back().size}, id});
    }
  }

  const BufferAssignmentOptions& options_;
  BufferAssignment& out_;
};

absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignLogicalBuffers(
    std::vector<LogicalBuffer> buffers, const BufferAssignmentOptions& options) {
  if (options.alignment <= 0) return absl::InvalidArgumentError("alignment must be positive");
  auto out = std::make_unique<BufferAssignment>();
  absl::Status status = BufferAllocator(options, *out).Run(std::move(buffers));
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<BufferSlice> BufferAssignment::GetUniqueSlice(const HloInstruction* instruction,
                                                             const ShapeIndex& index) const {
  auto it = values_.find({instruction, index});
  if (it == values_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no buffer for ", instruction->name(), " at ", ShapeIndexToString(index)));
  }
  return it->second.slice;
}

bool BufferAssignment::HasSlice(const HloInstruction* instruction, const ShapeIndex& index) const {
  return values_.contains({instruction, index});
}

int64_t BufferAssignment::temp_allocation_total_size() const {
  return temp_allocation_ < 0 ? 0 : allocations_[temp_allocation_].size();
}

std::pair<int64_t, int64_t> BufferAssignment::LiveRange(const HloInstruction* instruction,
                                                        const ShapeIndex& index) const {
  return buffers_.at(values_.at({instruction, index}).buffer).range;
}

std::vector<std::pair<BufferValue, int64_t>> BufferAssignment::ValuesWithBufferIds() const {
  std::vector<std::pair<BufferValue, int64_t>> out;
  for (const auto& [key, info] : values_) out.push_back({{key.first, key.second}, info.buffer});
  return out;
}

std::string BufferAssignment::ToString() const {
  std::string out;
  for (const BufferAllocation& allocation : allocations_) {
    absl::StrAppend(&out, "allocation ", allocation.index(), ": ",
                    BufferAllocationKindName(allocation.kind()), ", size ", allocation.size());
    if (allocation.kind() == BufferAllocation::Kind::kParameter) {
      absl::StrAppend(&out, ", parameter ", allocation.parameter_number(), " at ",
                      ShapeIndexToString(allocation.parameter_index()));
    }
    if (allocation.is_live_out()) {
      absl::StrAppend(&out, allocation.kind() == BufferAllocation::Kind::kTemp ? ", maybe live out"
                                                                               : ", live out");
    }
    if (allocation.is_read_only()) absl::StrAppend(&out, ", read only");
    absl::StrAppend(&out, "\n");
    const bool temp = allocation.index() == temp_allocation_;
    for (const BufferAllocation::Assigned& assigned : allocation.assigned()) {
      if (assigned.value.instruction == nullptr) {
        absl::StrAppend(&out, "  ", assigned.label);
      } else {
        absl::StrAppend(&out, "  %", assigned.value.instruction->name(),
                        ShapeIndexToString(assigned.value.index), " (",
                        assigned.value.instruction->parent()->name(), ")");
      }
      absl::StrAppend(&out, ": offset ", assigned.offset, ", size ", assigned.size);
      if (temp && assigned.buffer >= 0) {
        const auto& [first, last] = buffers_[assigned.buffer].range;
        absl::StrAppend(&out, ", live [", first, ", ", last, "]");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  for (const AliasedOutput& alias : aliased_outputs_) {
    absl::StrAppend(&out, "output ", ShapeIndexToString(alias.output_index), " aliases parameter ",
                    alias.parameter_number, " at ", ShapeIndexToString(alias.parameter_index),
                    alias.needs_copy ? ": copied at the end" : ": in place", "\n");
  }
  for (const auto& [instruction, in_user] : values_in_users_) {
    if (in_user.stored) {
      absl::StrAppend(&out, "%", instruction->name(), " is written into %", in_user.user->name(),
                      " from byte ", in_user.offset, "\n");
    } else {
      absl::StrAppend(&out, "%", instruction->name(), " is not stored: %", in_user.user->name(),
                      " computes from it\n");
    }
  }
  for (const RequiredCopy& copy : copies_) {
    absl::StrAppend(&out, "copy %", copy.from.instruction->name(),
                    ShapeIndexToString(copy.from.index), " -> %", copy.to.instruction->name(),
                    ShapeIndexToString(copy.to.index), "\n");
  }
  absl::StrAppend(&out, "temp arena: ", temp_allocation_total_size(), " bytes\n");
  return out;
}

}  // namespace axle
