//===- in_place.cc - Outputs that take over their operand's memory ---------===//
#include "axle/cpu/runtime/in_place.h"

#include <optional>

namespace axle::cpu {

void ShareInPlaceOperands(const std::vector<std::unique_ptr<Thunk>>& sequence,
                          std::vector<int64_t>& roots, const std::vector<int64_t>* destinations,
                          bool nested, ProgramBuilder& builder) {
  std::vector<Thunk::BufferUses> uses;
  for (const std::unique_ptr<Thunk>& thunk : sequence) {
    std::optional<Thunk::BufferUses> thunk_uses = thunk->buffer_uses();
    if (!thunk_uses.has_value()) return;
    uses.push_back(std::move(*thunk_uses));
  }
  // The temporary of `value`, or -1 (parameters, constants). Looked up
  // afresh each time: sharing moves values between temporaries.
  auto temporary = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = builder.slot(value);
    return slot.kind == ValueSlot::Kind::kTemporary ? slot.temporary : -1;
  };
  auto touches = [&](const Thunk::BufferUses& u, int64_t t, int64_t except_a, int64_t except_o) {
    for (const std::vector<int64_t>* values : {&u.reads, &u.writes}) {
      for (int64_t v : *values) {
        if (v != except_a && v != except_o && temporary(v) == t) return true;
      }
    }
    return false;
  };
  const int64_t n = static_cast<int64_t>(sequence.size());
  for (int64_t w = 0; w < n; ++w) {
    // One pair realized per operand and per output (a thunk may list
    // several for each).
    std::vector<int64_t> realized;
    for (const auto& [a, o] : sequence[w]->in_place_pairs()) {
      if (std::count(realized.begin(), realized.end(), a) > 0 ||
          std::count(realized.begin(), realized.end(), o) > 0) {
        continue;
      }
      const int64_t t = temporary(a);
      if (t < 0 || temporary(o) < 0 || t == temporary(o) ||
          builder.slot(a).size_bytes != builder.slot(o).size_bytes) {
        continue;
      }
      if (touches(uses[w], t, a, o)) continue;  // rule 1
      bool later_use = false;                   // rule 2
      for (int64_t i = w + 1; i < n && !later_use; ++i) later_use = touches(uses[i], t, -1, -1);
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
        for (int64_t v : uses[i].writes) written_before |= temporary(v) == t;
      }
      const bool own = written_before && (!nested || o_root < 0);
      const bool state = destinations != nullptr && o_root >= 0 &&  // rule 3b
                         (*destinations)[o_root] == a;
      if (!own && !state) continue;
      builder.ShareTemporary(o, a);
      realized.push_back(a);
      realized.push_back(o);
      if (state) roots[o_root] = a;
    }
  }
}

}  // namespace axle::cpu
