//===- hlo_parser_shapes.cc - Shapes and layouts in HLO text --------------===//
//
// Array shapes `f32[2,<=3,?]{1,0,2:T(8,128)S(1)}`, tuples `(s32[], token[])`
// and buffers `b(f32[16])`: sizes bounded so that element counts cannot
// overflow, layouts checked to be permutations of the dimensions.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

// --- Shapes and layouts -------------------------------------------------------------

bool HloParserImpl::IsBufferShapeStart() const {
  return kind() == TokKind::kIdent && lexer_.str_val() == "b" &&
         lexer_.LookAhead() == TokKind::kLparen;
}

bool HloParserImpl::CanBeShape() const {
  // A type name without '[' is no shape: it is an instruction named `s1`.
  return (kind() == TokKind::kPrimitiveType && lexer_.LookAhead() == TokKind::kLsquare) ||
         kind() == TokKind::kLparen || IsBufferShapeStart();
}

bool HloParserImpl::ParseShape(Shape* result, bool fill_default_layout) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (IsBufferShapeStart()) {
    // `b(f32[16])`: a buffer holding an array.
    Lex();
    Lex();
    size_t array_offset = lexer_.token_start();
    Shape array;
    if (!ParseShape(&array, fill_default_layout)) return false;
    if (!array.IsArray()) return Error(array_offset, "a buffer shape b(...) holds an array shape");
    *result = Shape::MakeBuffer(std::move(array));
    return ParseToken(TokKind::kRparen, "expects ')' at the end of buffer shape");
  }
  if (EatIfPresent(TokKind::kLparen)) {
    std::vector<Shape> elements;
    if (kind() != TokKind::kRparen) {
      do {
        elements.emplace_back();
        if (!ParseShape(&elements.back(), fill_default_layout)) return false;
      } while (EatIfPresent(TokKind::kComma));
    }
    *result = Shape::MakeTuple(std::move(elements));
    return ParseToken(TokKind::kRparen, "expects ')' at the end of tuple shape");
  }
  if (kind() != TokKind::kPrimitiveType) {
    return TokenError(absl::StrCat("expected primitive type, saw ", TokKindToString(kind())));
  }
  PrimitiveType type = lexer_.primitive_type_val();
  Lex();
  Shape shape;
  shape.set_element_type(type);
  int64_t elements = 1;
  auto dimension = [&]() {
    size_t offset = lexer_.token_start();
    if (EatIfPresent(TokKind::kQuestionMark)) {
      shape.add_dimension(Shape::kUnboundedSize, /*dynamic=*/true);
      return true;
    }
    bool dynamic = EatIfPresent(TokKind::kLeq);
    int64_t size = 0;
    if (!ParseInt64(&size)) return false;
    if (size < 0) return Error(offset, absl::StrCat("invalid dimension size ", size));
    if (size > 0 && elements > std::numeric_limits<int64_t>::max() / size) {
      return Error(offset, "shape has too many elements (the count overflows int64)");
    }
    elements *= size;
    shape.add_dimension(size, dynamic);
    return true;
  };
  if (!ParseList(TokKind::kLsquare, TokKind::kRsquare, TokKind::kComma, dimension)) return false;
  if (!shape.IsArray() && shape.rank() != 0) {
    return Error(last_end_, absl::StrCat(primitive_util::LowercasePrimitiveTypeName(type),
                                         " shapes have no dimensions"));
  }
  if (shape.IsArray() && (fill_default_layout || shape.rank() == 0)) {
    shape.set_layout(ShapeUtil::MakeDescendingLayout(shape.rank()));
  }
  // A '{' after a shape is its layout when an integer or ':' follows; else
  // it opens a computation body.
  if (kind() == TokKind::kLbrace &&
      (lexer_.LookAhead() == TokKind::kInt || lexer_.LookAhead() == TokKind::kColon)) {
    size_t layout_offset = lexer_.token_start();
    Layout layout;
    if (!ParseLayout(&layout)) return false;
    if (static_cast<int64_t>(layout.minor_to_major().size()) != shape.rank()) {
      return Error(layout_offset, absl::StrCat("Dimensions size is ", shape.rank(),
                                               ", but minor to major size is ",
                                               layout.minor_to_major().size(), "."));
    }
    std::vector<bool> seen(shape.rank(), false);
    for (int64_t d : layout.minor_to_major()) {
      if (d < 0 || d >= shape.rank() || seen[d]) {
        return Error(layout_offset,
                     absl::StrCat("layout {", absl::StrJoin(layout.minor_to_major(), ","),
                                  "} is not a permutation of the dimensions"));
      }
      seen[d] = true;
    }
    if (!shape.IsArray()) return Error(layout_offset, "only arrays have layouts");
    shape.set_layout(std::move(layout));
  }
  *result = std::move(shape);
  return true;
}

bool HloParserImpl::ParseLayout(Layout* layout) {
  if (!ParseToken(TokKind::kLbrace, "expects layout to start with '{'")) return false;
  Layout result;
  auto ident_is = [&](absl::string_view s) {
    return kind() == TokKind::kIdent && lexer_.str_val() == s;
  };
  auto int_in_parens = [&](absl::string_view what, int64_t* value) {
    return ParseToken(TokKind::kLparen, absl::StrCat("expects ", what, " to start with '('")) &&
           ParseInt64(value) &&
           ParseToken(TokKind::kRparen, absl::StrCat("expects ", what, " to end with ')'"));
  };
  auto unsigned_type_in_parens = [&](absl::string_view what, PrimitiveType* type) {
    if (!ParseToken(TokKind::kLparen, absl::StrCat("expects ", what, " to start with '('"))) {
      return false;
    }
    if (kind() != TokKind::kPrimitiveType ||
        !primitive_util::IsUnsignedIntegralType(lexer_.primitive_type_val())) {
      return TokenError("expecting an unsigned integer type");
    }
    *type = lexer_.primitive_type_val();
    Lex();
    return ParseToken(TokKind::kRparen, absl::StrCat("expects ", what, " to end with ')'"));
  };
  if (kind() == TokKind::kInt) {
    do {
      int64_t dim;
      if (!ParseInt64(&dim)) return false;
      result.mutable_minor_to_major()->push_back(dim);
    } while (EatIfPresent(TokKind::kComma));
  }
  if (EatIfPresent(TokKind::kColon)) {
    if (ident_is("D")) {
      Lex();
      auto level = [&]() {
        Layout::DimLevel dim_level;
        if (ident_is("D")) {
          dim_level.type = DimLevelType::kDense;
        } else if (ident_is("C")) {
          dim_level.type = DimLevelType::kCompressed;
        } else if (ident_is("S")) {
          dim_level.type = DimLevelType::kSingleton;
        } else if (ident_is("H")) {
          dim_level.type = DimLevelType::kLooseCompressed;
        } else {
          return TokenError("expected a DimLevelType abbreviation (D, C, S or H)");
        }
        Lex();
        if (EatIfPresent(TokKind::kPlus)) dim_level.unique = false;
        if (EatIfPresent(TokKind::kTilde)) dim_level.ordered = false;
        result.dim_levels().push_back(dim_level);
        return true;
      };
      if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, level)) return false;
    }
    if (ident_is("T")) {
      Lex();
      do {
        result.tiles().emplace_back();
        auto tile_dim = [&]() {
          if (EatIfPresent(TokKind::kAsterisk)) {
            result.tiles().back().dimensions.push_back(Tile::kCombineDimension);
            return true;
          }
          int64_t d = 0;
          if (!ParseInt64(&d)) return false;
          result.tiles().back().dimensions.push_back(d);
          return true;
        };
        if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, tile_dim)) {
          return false;
        }
      } while (kind() == TokKind::kLparen);
    }
    if (ident_is("L")) {
      Lex();
      int64_t v = 0;
      if (!int_in_parens("tail padding alignment", &v)) return false;
      result.set_tail_padding_alignment_in_elements(v);
    }
    if (EatIfPresent(TokKind::kOctothorp)) {
      PrimitiveType t;
      if (!unsigned_type_in_parens("index primitive type", &t)) return false;
      result.set_index_primitive_type(t);
    }
    if (EatIfPresent(TokKind::kAsterisk)) {
      PrimitiveType t;
      if (!unsigned_type_in_parens("pointer primitive type", &t)) return false;
      result.set_pointer_primitive_type(t);
    }
    if (ident_is("E")) {
      Lex();
      int64_t v = 0;
      if (!int_in_parens("element size in bits", &v)) return false;
      result.set_element_size_in_bits(v);
    }
    if (ident_is("S")) {
      Lex();
      int64_t v = 0;
      if (!int_in_parens("memory space", &v)) return false;
      result.set_memory_space(v);
    }
    if (ident_is("SC")) {
      Lex();
      do {
        SplitConfig config;
        if (!ParseToken(TokKind::kLparen, "expects split configs to start with '('") ||
            !ParseInt64(&config.dimension) ||
            !ParseInt64List(TokKind::kColon, TokKind::kRparen, TokKind::kComma,
                            &config.split_indices)) {
          return false;
        }
        result.split_configs().push_back(std::move(config));
      } while (kind() == TokKind::kLparen);
    }
    if (ident_is("P")) {
      return TokenError("Layout has physical shape, but is not for a sparse array");
    }
    if (ident_is("M")) {
      Lex();
      int64_t v = 0;
      if (!int_in_parens("dynamic shape metadata prefix bytes", &v)) return false;
      result.set_dynamic_shape_metadata_prefix_bytes(v);
    }
  }
  if (!ParseToken(TokKind::kRbrace, "expects layout to end with '}'")) return false;
  *layout = std::move(result);
  return true;
}

}  // namespace hlo_parser_internal
}  // namespace axle
