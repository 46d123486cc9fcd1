#include "axle/hlo/ir/hlo_opcode.h"

#include "absl/container/flat_hash_map.h"

namespace axle {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
  int properties;
};

constexpr OpcodeInfo kOpcodes[] = {
#define AXLE_OPCODE_INFO_(e, name, arity, props) {name, arity, props},
    AXLE_HLO_OPCODE_LIST(AXLE_OPCODE_INFO_)
#undef AXLE_OPCODE_INFO_
};

}  // namespace

absl::string_view HloOpcodeString(HloOpcode opcode) {
  return kOpcodes[static_cast<int>(opcode)].name;
}
int HloOpcodeArity(HloOpcode opcode) { return kOpcodes[static_cast<int>(opcode)].arity; }
int HloOpcodeProperties(HloOpcode opcode) { return kOpcodes[static_cast<int>(opcode)].properties; }

std::optional<HloOpcode> StringToHloOpcode(absl::string_view name) {
  static const auto* map = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, HloOpcode>();
    for (int i = 0; i < kHloOpcodeCount; ++i) (*m)[kOpcodes[i].name] = static_cast<HloOpcode>(i);
    return m;
  }();
  auto it = map->find(name);
  if (it == map->end()) return std::nullopt;
  return it->second;
}

}  // namespace axle
