//===- in_place_sharing.cc - Outputs that take over their operand's memory -===//
#include "axle/hlo/analysis/in_place_sharing.h"

#include <algorithm>
#include <set>

#include "axle/base/logging.h"

namespace axle {

void ShareTemporary(std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                    int64_t value, int64_t with) {
  const ValueSlot& from = values[value];
  const ValueSlot& to = values[with];
  CHECK(from.kind == ValueSlot::Kind::kTemporary && to.kind == ValueSlot::Kind::kTemporary);
  CHECK_EQ(from.size_bytes, to.size_bytes);
  const int64_t unused = from.temporary, target = to.temporary;
  if (unused == target) return;
  // Values already sharing `value`'s memory move along.
  for (ValueSlot& slot : values) {
    if (slot.kind == ValueSlot::Kind::kTemporary && slot.temporary == unused) {
      slot.temporary = target;
    }
  }
  temporary_sizes[unused] = 0;
}

void ShareInPlaceOperands(absl::Span<const std::optional<InPlaceStep>> steps,
                          std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                          std::vector<int64_t>& roots, const std::vector<int64_t>* destinations,
                          bool nested) {
  for (const std::optional<InPlaceStep>& step : steps) {
    if (!step.has_value()) return;
  }
  // The temporary of `value`, or -1 (parameters, constants). Looked up
  // afresh each time: sharing moves values between temporaries.
  auto temporary = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = values[value];
    return slot.kind == ValueSlot::Kind::kTemporary ? slot.temporary : -1;
  };
  auto touches = [&](const StepUses& u, int64_t t, int64_t except_a, int64_t except_o) {
    for (const std::vector<int64_t>* ids : {&u.reads, &u.writes}) {
      for (int64_t v : *ids) {
        if (v != except_a && v != except_o && temporary(v) == t) return true;
      }
    }
    return false;
  };
  const int64_t n = static_cast<int64_t>(steps.size());
  for (int64_t w = 0; w < n; ++w) {
    // One pair realized per operand and per output (a step may list
    // several for each, nearest first: InPlaceOutputCandidates).
    std::vector<int64_t> realized;
    for (const auto& [a, o] : steps[w]->pairs) {
      if (std::find(realized.begin(), realized.end(), a) != realized.end() ||
          std::find(realized.begin(), realized.end(), o) != realized.end()) {
        continue;
      }
      const int64_t t = temporary(a);
      if (t < 0 || temporary(o) < 0 || t == temporary(o) ||
          values[a].size_bytes != values[o].size_bytes) {
        continue;
      }
      if (touches(steps[w]->uses, t, a, o)) continue;  // rule 1
      bool later_use = false;                          // rule 2
      for (int64_t i = w + 1; i < n && !later_use; ++i) {
        later_use = touches(steps[i]->uses, t, -1, -1);
      }
      if (later_use) continue;
      int64_t other_roots = 0, o_roots = 0, o_root = -1;
      for (size_t k = 0; k < roots.size(); ++k) {
        if (roots[k] == o) {
          o_root = static_cast<int64_t>(k);
          ++o_roots;
        } else if (temporary(roots[k]) == t) {
          ++other_roots;
        }
      }
      // One root leaf o at most: two state leaves must not end up sharing.
      if (other_roots > 0 || o_roots > 1) continue;
      bool written_before = false;  // rule 3a
      for (int64_t i = 0; i < w && !written_before; ++i) {
        for (int64_t v : steps[i]->uses.writes) written_before |= temporary(v) == t;
      }
      const bool own = written_before && (!nested || o_root < 0);
      const bool state = destinations != nullptr && o_root >= 0 &&  // rule 3b
                         (*destinations)[o_root] == a;
      if (!own && !state) continue;
      ShareTemporary(values, temporary_sizes, o, a);
      realized.push_back(a);
      realized.push_back(o);
      if (state) roots[o_root] = a;
    }
  }
}

void WriteRootsInPlace(absl::Span<const std::optional<InPlaceStep>> steps,
                       std::vector<ValueSlot>& values, std::vector<int64_t>& temporary_sizes,
                       std::vector<int64_t>& sources, absl::Span<const int64_t> destinations,
                       const std::function<bool(size_t)>& may_write) {
  CHECK_EQ(sources.size(), destinations.size());
  for (const std::optional<InPlaceStep>& step : steps) {
    if (!step.has_value()) return;
  }
  auto temporary = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = values[value];
    return slot.kind == ValueSlot::Kind::kTemporary ? slot.temporary : -1;
  };
  // Whether a value of `ids` lives in temporary `t`.
  auto any_in = [&](absl::Span<const int64_t> ids, int64_t t) {
    return std::any_of(ids.begin(), ids.end(), [&](int64_t v) { return temporary(v) == t; });
  };
  for (size_t k = 0; k < sources.size(); ++k) {
    const int64_t source = sources[k], destination = destinations[k];
    const int64_t s = temporary(source), d = temporary(destination);
    if (source == destination || s < 0 || d < 0 || s == d ||
        values[source].size_bytes != values[destination].size_bytes) {
      continue;
    }
    // Rule 4: s_k holds no destination; D holds no other root leaf.
    if (any_in(destinations, s)) continue;
    bool other_root = false;
    for (size_t j = 0; j < sources.size(); ++j) other_root |= j != k && temporary(sources[j]) == d;
    if (other_root) continue;
    // Rule 5: the one writer W.
    int64_t writer = -1, writers = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::vector<int64_t>& writes = steps[i]->uses.writes;
      if (std::find(writes.begin(), writes.end(), source) != writes.end()) {
        writer = static_cast<int64_t>(i);
        ++writers;
      }
    }
    if (writers != 1 || (may_write && !may_write(static_cast<size_t>(writer)))) continue;
    // Rule 6: D untouched from W on.
    bool touched = false;
    for (size_t i = writer; i < steps.size() && !touched; ++i) {
      touched = any_in(steps[i]->uses.reads, d) || any_in(steps[i]->uses.writes, d);
    }
    if (touched) continue;
    ShareTemporary(values, temporary_sizes, source, destination);
    std::replace(sources.begin(), sources.end(), source, destination);
  }
}

std::vector<std::pair<int64_t, int64_t>> StoreCopies(
    absl::Span<const int64_t> sources, absl::Span<const int64_t> destinations,
    const std::function<bool(size_t)>& in_place, const std::function<int64_t(size_t)>& snapshot) {
  CHECK_EQ(sources.size(), destinations.size());
  std::set<int64_t> written;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!in_place(i)) written.insert(destinations[i]);
  }
  std::vector<std::pair<int64_t, int64_t>> snapshots, copies;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (in_place(i)) continue;
    int64_t source = sources[i];
    if (written.count(source) > 0) {
      const int64_t copy = snapshot(i);
      snapshots.emplace_back(source, copy);
      source = copy;
    }
    copies.emplace_back(source, destinations[i]);
  }
  if (copies.empty()) return {};
  snapshots.insert(snapshots.end(), copies.begin(), copies.end());
  return snapshots;
}

}  // namespace axle
