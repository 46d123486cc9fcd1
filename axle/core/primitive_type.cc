#include "axle/core/primitive_type.h"

#include "absl/container/flat_hash_map.h"

namespace axle::primitive_util {
namespace {

enum class Kind { P, S, U, F, C, X };

struct TypeInfo {
  PrimitiveType type;
  absl::string_view name;
  int bits;
  Kind kind;
};

constexpr TypeInfo kTypes[] = {
#define AXLE_INFO_ENTRY_(e, n, s, w, k) {e, s, w, Kind::k},
    AXLE_PRIMITIVE_TYPE_LIST(AXLE_INFO_ENTRY_)
#undef AXLE_INFO_ENTRY_
};

const TypeInfo* Find(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

Kind KindOf(PrimitiveType type) {
  const TypeInfo* info = Find(type);
  return info ? info->kind : Kind::X;
}

}  // namespace

absl::string_view LowercasePrimitiveTypeName(PrimitiveType type) {
  const TypeInfo* info = Find(type);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> StringToPrimitiveType(absl::string_view name) {
  static const auto* map = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, PrimitiveType>();
    for (const TypeInfo& info : kTypes) (*m)[info.name] = info.type;
    return m;
  }();
  auto it = map->find(name);
  if (it == map->end()) return std::nullopt;
  return it->second;
}

bool IsArrayType(PrimitiveType type) {
  return type != PRIMITIVE_TYPE_INVALID && KindOf(type) != Kind::X;
}
bool IsIntegralType(PrimitiveType type) {
  Kind k = KindOf(type);
  return k == Kind::S || k == Kind::U;
}
bool IsSignedIntegralType(PrimitiveType type) { return KindOf(type) == Kind::S; }
bool IsUnsignedIntegralType(PrimitiveType type) { return KindOf(type) == Kind::U; }
bool IsFloatingPointType(PrimitiveType type) { return KindOf(type) == Kind::F; }
bool IsComplexType(PrimitiveType type) { return KindOf(type) == Kind::C; }
bool IsF8Type(PrimitiveType type) { return IsFloatingPointType(type) && BitWidth(type) <= 8; }
bool IsSubByteType(PrimitiveType type) { return IsArrayType(type) && BitWidth(type) < 8; }

int BitWidth(PrimitiveType type) {
  const TypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

int ByteWidth(PrimitiveType type) {
  if (!IsArrayType(type)) return 0;
  int bits = BitWidth(type);
  return bits < 8 ? 1 : bits / 8;
}

PrimitiveType ComplexComponentType(PrimitiveType type) {
  if (type == C64) return F32;
  if (type == C128) return F64;
  return type;
}

int SignificandWidth(PrimitiveType type) {
  switch (type) {
    case F16:
      return 11;
    case BF16:
      return 8;
    case F32:
      return 24;
    case F64:
      return 53;
    case F4E2M1FN:
      return 2;
    case F8E3M4:
      return 5;
    case F8E4M3:
    case F8E4M3FN:
    case F8E4M3B11FNUZ:
    case F8E4M3FNUZ:
      return 4;
    case F8E5M2:
    case F8E5M2FNUZ:
      return 3;
    case F8E8M0FNU:
      return 1;
    default:
      return 0;
  }
}

int ExponentWidth(PrimitiveType type) {
  switch (type) {
    case F16:
      return 5;
    case BF16:
      return 8;
    case F32:
      return 8;
    case F64:
      return 11;
    case F4E2M1FN:
      return 2;
    case F8E3M4:
      return 3;
    case F8E4M3:
    case F8E4M3FN:
    case F8E4M3B11FNUZ:
    case F8E4M3FNUZ:
      return 4;
    case F8E5M2:
    case F8E5M2FNUZ:
      return 5;
    case F8E8M0FNU:
      return 8;
    default:
      return 0;
  }
}

PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b) {
  auto rank = [](PrimitiveType t) { return std::make_pair(BitWidth(t), SignificandWidth(t)); };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace axle::primitive_util
