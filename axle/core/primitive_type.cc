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

namespace {

// The significand (with its implicit bit) and exponent widths of each
// floating-point type.
struct FloatFormat {
  PrimitiveType type;
  int significand_width;
  int exponent_width;
};
constexpr FloatFormat kFloatFormats[] = {
    {F16, 11, 5},          {BF16, 8, 8},       {F32, 24, 8},   {F64, 53, 11},
    {F4E2M1FN, 2, 2},      {F8E3M4, 5, 3},     {F8E4M3, 4, 4}, {F8E4M3FN, 4, 4},
    {F8E4M3B11FNUZ, 4, 4}, {F8E4M3FNUZ, 4, 4}, {F8E5M2, 3, 5}, {F8E5M2FNUZ, 3, 5},
    {F8E8M0FNU, 1, 8},
};

// The format of `type`; all zero for a type that is not a float.
FloatFormat FloatFormatOf(PrimitiveType type) {
  for (const FloatFormat& format : kFloatFormats) {
    if (format.type == type) return format;
  }
  return {type, 0, 0};
}

}  // namespace

int SignificandWidth(PrimitiveType type) { return FloatFormatOf(type).significand_width; }

int ExponentWidth(PrimitiveType type) { return FloatFormatOf(type).exponent_width; }

PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b) {
  auto rank = [](PrimitiveType t) { return std::make_pair(BitWidth(t), SignificandWidth(t)); };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace axle::primitive_util
