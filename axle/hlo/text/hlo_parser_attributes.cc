//===- hlo_parser_attributes.cc - Attribute values of HLO text ------------===//
//
// `name=value` attributes: the machinery that matches names against what an
// opcode accepts, and the parsers of the value forms (integers, lists,
// computations, windows, dim labels, paddings, precision, literals, ...;
// metadata, shardings, replica groups and aliasing are in
// hlo_parser_annotations.cc). Value forms that Axle keeps only as text
// (origin, statistics, result_accuracy, ...) are still parsed, so that what
// XLA rejects is rejected here too.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/core/literal_text.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

// --- The attribute machinery -------------------------------------------------

namespace {

// The first, by name, of the required attributes of `attrs` not in `seen`.
std::optional<std::string> FirstMissing(const AttrMap& attrs,
                                        const absl::flat_hash_set<std::string>& seen) {
  std::optional<std::string> first;
  for (const auto& [name, spec] : attrs) {
    if (spec.required && !seen.contains(name) && (!first.has_value() || name < *first)) {
      first = name;
    }
  }
  return first;
}

}  // namespace

bool HloParserImpl::ParseAttributes(const AttrMap& attrs, bool allow_attributes) {
  // A missing attribute is reported right after what precedes the list.
  size_t offset = last_end_;
  absl::flat_hash_set<std::string> seen;
  if (allow_attributes) {
    while (EatIfPresent(TokKind::kComma)) {
      if (!ParseAttributeHelper(attrs, &seen)) return false;
    }
  }
  if (std::optional<std::string> missing = FirstMissing(attrs, seen)) {
    return Error(offset, absl::StrCat("attribute ", *missing, " is expected but not seen"));
  }
  return true;
}

bool HloParserImpl::ParseSubAttributes(const AttrMap& attrs) {
  size_t offset = lexer_.token_start();
  if (!ParseToken(TokKind::kLbrace, "expects '{' to start sub attributes")) return false;
  absl::flat_hash_set<std::string> seen;
  while (kind() != TokKind::kRbrace) {
    EatIfPresent(TokKind::kComma);
    if (!ParseAttributeHelper(attrs, &seen)) return false;
  }
  if (std::optional<std::string> missing = FirstMissing(attrs, seen)) {
    return Error(offset, absl::StrCat("sub-attribute ", *missing, " is expected but not seen"));
  }
  return ParseToken(TokKind::kRbrace, "expects '}' to end sub attributes");
}

bool HloParserImpl::ParseAttributeHelper(const AttrMap& attrs,
                                         absl::flat_hash_set<std::string>* seen) {
  size_t offset = lexer_.token_start();
  std::string name;
  if (!ParseAttributeName(&name)) return false;
  if (!seen->insert(name).second) {
    return Error(offset, absl::StrCat("attribute ", name, " already exists"));
  }
  auto it = attrs.find(name);
  if (it == attrs.end()) {
    std::vector<std::string> allowed;
    for (const auto& [n, spec] : attrs) allowed.push_back(n);
    std::sort(allowed.begin(), allowed.end());
    return Error(offset,
                 absl::StrCat("unexpected attribute \"", name, "\". ",
                              allowed.empty() ? "No attributes are allowed here."
                                              : absl::StrCat("Allowed attributes: ",
                                                             absl::StrJoin(allowed, ", "))));
  }
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (!it->second.parse()) {
    if (errors_.empty()) TokenError(absl::StrCat("error parsing attribute ", name));
    Note(offset, absl::StrCat("while parsing attribute ", name));
    return false;
  }
  return true;
}

AttrSpec HloParserImpl::Raw(const std::string& name, bool required, std::function<bool()> parse) {
  return {
      required, [this, name, parse = std::move(parse)]() {
        size_t start = lexer_.token_start();
        if (!parse()) return false;
        pending_raw_.push_back({name, std::string(lexer_.text().substr(start, last_end_ - start))});
        return true;
      }};
}

AttrSpec HloParserImpl::RawAny(const std::string& name) {
  return Raw(name, false, [this] { return SkipBalancedValue(); });
}

bool HloParserImpl::SkipBalancedValue() {
  std::vector<TokKind> closers;
  do {
    switch (kind()) {
      case TokKind::kLbrace:
        closers.push_back(TokKind::kRbrace);
        break;
      case TokKind::kLparen:
        closers.push_back(TokKind::kRparen);
        break;
      case TokKind::kLsquare:
        closers.push_back(TokKind::kRsquare);
        break;
      case TokKind::kRbrace:
      case TokKind::kRparen:
      case TokKind::kRsquare:
        if (closers.empty() || closers.back() != kind()) return TokenError("unbalanced brackets");
        closers.pop_back();
        break;
      case TokKind::kEof:
      case TokKind::kError:
        return TokenError("unterminated attribute value");
      case TokKind::kComma:
        if (closers.empty()) return TokenError("expects an attribute value");
        break;
      default:
        break;
    }
    if (closers.size() > static_cast<size_t>(kMaxDepth)) return TokenError("nesting is too deep");
    Lex();
  } while (!closers.empty());
  return true;
}

// --- Scalars and lists -----------------------------------------------------------

bool HloParserImpl::ParseAttributeName(std::string* name) {
  if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
  *name = lexer_.str_val();
  Lex();
  return true;
}

bool HloParserImpl::ParseString(std::string* value) {
  if (kind() != TokKind::kString) return TokenError("expects string");
  *value = lexer_.str_val();
  Lex();
  return true;
}

bool HloParserImpl::ParseJsonDict(std::string* value) {
  if (kind() != TokKind::kLbrace) return TokenError("expects JSON dict");
  if (lexer_.LexJsonDict() != TokKind::kString) {
    return Error(lexer_.token_start(), "expects JSON dict (unterminated braces or string)");
  }
  *value = lexer_.str_val();
  Lex();
  return true;
}

bool HloParserImpl::ParseInt64(int64_t* value) {
  if (kind() != TokKind::kInt) return TokenError("expects integer");
  *value = lexer_.int64_val();
  Lex();
  return true;
}

bool HloParserImpl::ParseDouble(double* value) {
  switch (kind()) {
    case TokKind::kDecimal:
      if (std::isinf(lexer_.decimal_val())) {
        return TokenError("Constant is out of range for double and so is unparsable.");
      }
      *value = lexer_.decimal_val();
      break;
    case TokKind::kInt:
      *value = static_cast<double>(lexer_.int64_val());
      break;
    case TokKind::kw_inf:
      *value = std::numeric_limits<double>::infinity();
      break;
    case TokKind::kNegInf:
      *value = -std::numeric_limits<double>::infinity();
      break;
    default:
      return TokenError("expects decimal or integer");
  }
  Lex();
  return true;
}

bool HloParserImpl::ParseBool(bool* value) {
  if (kind() != TokKind::kw_true && kind() != TokKind::kw_false) {
    return TokenError("expects true or false");
  }
  *value = kind() == TokKind::kw_true;
  Lex();
  return true;
}

bool HloParserImpl::ParseList(TokKind start, TokKind end, TokKind delim,
                              const std::function<bool()>& item) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (!ParseToken(start, absl::StrCat("expects a list starting with ", TokKindToString(start)))) {
    return false;
  }
  if (kind() != end) {
    do {
      if (!item()) return false;
    } while (EatIfPresent(delim));
  }
  return ParseToken(end, absl::StrCat("expects a list to end with ", TokKindToString(end)));
}

bool HloParserImpl::ParseInt64List(TokKind start, TokKind end, TokKind delim,
                                   std::vector<int64_t>* out) {
  return ParseList(start, end, delim, [&] {
    int64_t v = 0;
    if (!ParseInt64(&v)) return false;
    out->push_back(v);
    return true;
  });
}

bool HloParserImpl::ParseInt64ListList(std::vector<std::vector<int64_t>>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    out->emplace_back();
    return ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, &out->back());
  });
}

bool HloParserImpl::ParseShapeIndex(ShapeIndex* index) {
  index->clear();
  return ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, index);
}

bool HloParserImpl::ParseShapeList(std::vector<Shape>* shapes) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    shapes->emplace_back();
    return ParseShape(&shapes->back());
  });
}

bool HloParserImpl::ParseComputationRef(HloComputation** computation) {
  if (kind() == TokKind::kLbrace) {
    return ParseInstructionList(computation, "_", lexer_.token_start());
  }
  size_t offset = lexer_.token_start();
  std::string name;
  if (!ParseName(&name)) return Error(offset, "expects computation name");
  auto it = computation_pool_.find(name);
  if (it == computation_pool_.end()) {
    return Error(offset, absl::StrCat("computation does not exist: ", name));
  }
  *computation = it->second.first;
  return true;
}

bool HloParserImpl::ParseComputationList(std::vector<HloComputation*>* computations) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    HloComputation* computation = nullptr;
    if (!ParseComputationRef(&computation)) return false;
    computations->push_back(computation);
    return true;
  });
}

bool HloParserImpl::ParseInstructionNames(std::vector<HloInstruction*>* instructions) {
  if (!ParseToken(TokKind::kLbrace, "expects '{' at the beginning of instruction name list")) {
    return false;
  }
  do {
    size_t offset = lexer_.token_start();
    std::string name;
    if (!ParseName(&name)) return false;
    auto it = scope().names.find(name);
    if (it == scope().names.end()) {
      return Error(offset, absl::StrCat("instruction '", name, "' is not defined"));
    }
    instructions->push_back(it->second.first);
  } while (EatIfPresent(TokKind::kComma));
  return ParseToken(TokKind::kRbrace, "expects '}' at the end of instruction name list");
}

// --- Typed attribute closures ---------------------------------------------------

namespace {

// An attribute whose value `parse` reads into a T, stored in `out`.
template <typename T>
AttrSpec TypedAttr(bool required, std::optional<T>* out, std::function<bool(T*)> parse) {
  return {required, [out, parse = std::move(parse)] {
            T value{};
            if (!parse(&value)) return false;
            *out = std::move(value);
            return true;
          }};
}

}  // namespace

AttrSpec HloParserImpl::Int64Attr(bool required, std::optional<int64_t>* out) {
  return TypedAttr<int64_t>(required, out, [this](int64_t* v) { return ParseInt64(v); });
}

AttrSpec HloParserImpl::Int32Attr(bool required, std::optional<int64_t>* out) {
  return {required, [this, out] {
            size_t offset = lexer_.token_start();
            int64_t v = 0;
            if (!ParseInt64(&v)) return false;
            if (v != static_cast<int32_t>(v))
              return Error(offset, "value out of range for int32_t");
            *out = v;
            return true;
          }};
}

AttrSpec HloParserImpl::BoolAttr(bool required, std::optional<bool>* out) {
  return TypedAttr<bool>(required, out, [this](bool* v) { return ParseBool(v); });
}

AttrSpec HloParserImpl::FloatAttr(bool required, std::optional<float>* out) {
  return {required, [this, out] {
            size_t offset = lexer_.token_start();
            double v = 0;
            if (!ParseDouble(&v)) return false;
            if (v > std::numeric_limits<float>::max() || v < std::numeric_limits<float>::lowest()) {
              return Error(offset, "value out of range for float");
            }
            *out = static_cast<float>(v);
            return true;
          }};
}

AttrSpec HloParserImpl::StringAttr(bool required, std::optional<std::string>* out) {
  return TypedAttr<std::string>(required, out, [this](std::string* v) { return ParseString(v); });
}

AttrSpec HloParserImpl::Int64ListAttr(bool required, std::optional<std::vector<int64_t>>* out) {
  return TypedAttr<std::vector<int64_t>>(required, out, [this](std::vector<int64_t>* v) {
    return ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, v);
  });
}

AttrSpec HloParserImpl::Int64ListListAttr(bool required,
                                          std::optional<std::vector<std::vector<int64_t>>>* out) {
  return TypedAttr<std::vector<std::vector<int64_t>>>(
      required, out,
      [this](std::vector<std::vector<int64_t>>* v) { return ParseInt64ListList(v); });
}

AttrSpec HloParserImpl::ComputationAttr(bool required, std::optional<HloComputation*>* out) {
  return TypedAttr<HloComputation*>(required, out,
                                    [this](HloComputation** c) { return ParseComputationRef(c); });
}

AttrSpec HloParserImpl::ComputationListAttr(bool required,
                                            std::optional<std::vector<HloComputation*>>* out) {
  return TypedAttr<std::vector<HloComputation*>>(
      required, out, [this](std::vector<HloComputation*>* v) { return ParseComputationList(v); });
}

AttrSpec HloParserImpl::WindowAttr(bool required, std::optional<Window>* out) {
  return TypedAttr<Window>(
      required, out, [this](Window* w) { return ParseWindow(w, /*expect_outer_curlies=*/true); });
}

AttrSpec HloParserImpl::DimLabelsAttr(bool required,
                                      std::optional<ConvolutionDimensionNumbers>* out) {
  return TypedAttr<ConvolutionDimensionNumbers>(
      required, out,
      [this](ConvolutionDimensionNumbers* d) { return ParseConvolutionDimensionNumbers(d); });
}

AttrSpec HloParserImpl::PrecisionListAttr(
    bool required, std::optional<std::vector<PrecisionConfig::Precision>>* out) {
  return TypedAttr<std::vector<PrecisionConfig::Precision>>(
      required, out,
      [this](std::vector<PrecisionConfig::Precision>* v) { return ParsePrecisionList(v); });
}

AttrSpec HloParserImpl::ShapeAttr(bool required, std::optional<Shape>* out) {
  return TypedAttr<Shape>(required, out, [this](Shape* s) { return ParseShape(s); });
}

AttrSpec HloParserImpl::ShapeListAttr(bool required, std::optional<std::vector<Shape>>* out) {
  return TypedAttr<std::vector<Shape>>(required, out,
                                       [this](std::vector<Shape>* v) { return ParseShapeList(v); });
}

AttrSpec HloParserImpl::AliasingAttr(bool required,
                                     std::optional<std::vector<OutputOperandAlias>>* out) {
  return TypedAttr<std::vector<OutputOperandAlias>>(
      required, out,
      [this](std::vector<OutputOperandAlias>* v) { return ParseOutputOperandAliasing(v); });
}

AttrSpec HloParserImpl::CollectiveDevicesAttr(CollectiveAttrs* out) {
  return {false, [this, out] {
            size_t start = lexer_.token_start();
            std::string mesh_text;
            if (!ParseCollectiveDevices(out, &mesh_text)) return false;
            if (!mesh_text.empty()) {
              // The mesh-axes form has no typed field: kept as written.
              pending_raw_.push_back(
                  {"replica_groups", std::string(lexer_.text().substr(start, last_end_ - start))});
            }
            return true;
          }};
}

AttrSpec HloParserImpl::EnumAttr(bool required, std::vector<absl::string_view> names,
                                 std::optional<int>* out) {
  return {required, [this, names = std::move(names), out] {
            if (kind() != TokKind::kIdent) return TokenError("expects an enumeration value");
            for (size_t i = 0; i < names.size(); ++i) {
              if (lexer_.str_val() == names[i]) {
                *out = static_cast<int>(i);
                Lex();
                return true;
              }
            }
            return TokenError(absl::StrCat("unknown value ", lexer_.str_val(), "; expects one of ",
                                           absl::StrJoin(names, ", ")));
          }};
}

// --- Windows, convolutions, paddings, slices, precision ---------------------------

bool HloParserImpl::ParseDxD(const std::string& name, std::vector<int64_t>* out) {
  size_t offset = lexer_.token_start();
  if (!out->empty())
    return Error(offset, absl::StrCat("sub-attribute '", name, "=' already exists"));
  if (kind() == TokKind::kInt) {
    out->push_back(lexer_.int64_val());
    Lex();
    return true;
  }
  if (kind() == TokKind::kDxD) {
    for (absl::string_view piece : absl::StrSplit(lexer_.str_val(), 'x')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(piece, &v)) {
        return Error(offset, absl::StrCat("expects sub-attribute '", name, "=ixj...'"));
      }
      out->push_back(v);
    }
    Lex();
    return true;
  }
  return TokenError("expects token type kInt or kDxD");
}

bool HloParserImpl::ParseWindowPad(std::vector<std::vector<int64_t>>* pad) {
  size_t offset = lexer_.token_start();
  if (!pad->empty()) return Error(offset, "sub-attribute 'pad=' already exists");
  if (kind() != TokKind::kPad) return TokenError("expects window pad pattern, e.g., '0_0x3_3'");
  for (absl::string_view dim : absl::StrSplit(lexer_.str_val(), 'x')) {
    std::vector<int64_t> low_high;
    for (absl::string_view piece : absl::StrSplit(dim, '_')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(piece, &v)) {
        return Error(offset, "expects padding_low and padding_high separated by '_'");
      }
      low_high.push_back(v);
    }
    if (low_high.size() != 2) {
      return Error(offset, "expects padding_low and padding_high separated by '_'");
    }
    pad->push_back(std::move(low_high));
  }
  Lex();
  return true;
}

bool HloParserImpl::ParseWindow(Window* window, bool expect_outer_curlies) {
  size_t offset = lexer_.token_start();
  if (expect_outer_curlies &&
      !ParseToken(TokKind::kLbrace, "expected '{' to start window attribute")) {
    return false;
  }
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, rhs_reversal;
  std::vector<std::vector<int64_t>> pad;
  TokKind end = expect_outer_curlies ? TokKind::kRbrace : TokKind::kEof;
  while (kind() != end) {
    size_t attr_offset = lexer_.token_start();
    std::string field;
    if (!ParseAttributeName(&field)) return Error(attr_offset, "expects sub-attributes in window");
    bool ok;
    if (field == "size") {
      ok = ParseDxD("size", &size);
    } else if (field == "stride") {
      ok = ParseDxD("stride", &stride);
    } else if (field == "lhs_dilate") {
      ok = ParseDxD("lhs_dilate", &lhs_dilate);
    } else if (field == "rhs_dilate") {
      ok = ParseDxD("rhs_dilate", &rhs_dilate);
    } else if (field == "pad") {
      ok = ParseWindowPad(&pad);
    } else if (field == "rhs_reversal") {
      ok = ParseDxD("rhs_reversal", &rhs_reversal);
    } else {
      return Error(attr_offset, absl::StrCat("unexpected attribute name: ", field));
    }
    if (!ok) return false;
  }
  auto check = [&](const auto& v, absl::string_view name) {
    if (!v.empty() && v.size() != size.size()) {
      return Error(offset, absl::StrCat("expects '", name, "=' has the same size as 'size='"));
    }
    return true;
  };
  if (!check(stride, "stride") || !check(lhs_dilate, "lhs_dilate") ||
      !check(rhs_dilate, "rhs_dilate") || !check(pad, "pad") ||
      !check(rhs_reversal, "rhs_reversal")) {
    return false;
  }
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDimension* dim = window->add_dimensions();
    dim->set_size(size[i]);
    if (!pad.empty()) {
      dim->set_padding_low(pad[i][0]);
      dim->set_padding_high(pad[i][1]);
    }
    dim->set_stride(stride.empty() ? 1 : stride[i]);
    dim->set_base_dilation(lhs_dilate.empty() ? 1 : lhs_dilate[i]);
    dim->set_window_dilation(rhs_dilate.empty() ? 1 : rhs_dilate[i]);
    dim->set_window_reversal(!rhs_reversal.empty() && rhs_reversal[i] == 1);
  }
  return !expect_outer_curlies ||
         ParseToken(TokKind::kRbrace, "expected '}' to end window attribute");
}

bool HloParserImpl::ParseConvolutionDimensionNumbers(ConvolutionDimensionNumbers* dnums) {
  if (kind() != TokKind::kDimLabels) {
    return TokenError("expects dim labels pattern, e.g., 'bf0_0io->0bf'");
  }
  std::string text = lexer_.str_val();
  std::vector<std::string> split1 = absl::StrSplit(text, '_');
  if (split1.size() != 2) return TokenError("expects 3 items: lhs, rhs, and output dims");
  std::vector<std::string> split2 = absl::StrSplit(split1[1], "->");
  if (split2.size() != 2) return TokenError("expects 3 items: lhs, rhs, and output dims");
  // One side of the labels: `batch`/`feature` letters, spatial digits.
  struct Side {
    std::optional<int64_t> a, b;
    std::vector<int64_t> spatial;
  };
  auto parse_side = [&](absl::string_view labels, char a, char b, absl::string_view what,
                        Side* side) {
    absl::flat_hash_set<char> seen;
    int64_t spatial_count = 0;
    for (char c : labels) {
      if (c == '?') continue;
      if (!seen.insert(c).second) {
        return TokenError(
            absl::StrCat("expects unique ", what, " dimension numbers, but sees ", labels));
      }
      if (c != a && c != b) ++spatial_count;
    }
    side->spatial.assign(spatial_count, -1);
    for (size_t i = 0; i < labels.size(); ++i) {
      char c = labels[i];
      if (c == '?') continue;
      if (c == a) {
        side->a = i;
      } else if (c == b) {
        side->b = i;
      } else if (c >= '0' && c < '0' + spatial_count) {
        side->spatial[c - '0'] = i;
      } else {
        return TokenError(absl::StrCat("expects [0-", spatial_count - 1, std::string(1, a),
                                       std::string(1, b), "?] in ", what, " dimension numbers"));
      }
    }
    return true;
  };
  Side lhs, rhs, out;
  if (!parse_side(split1[0], 'b', 'f', "lhs", &lhs) ||
      !parse_side(split2[0], 'i', 'o', "rhs", &rhs) ||
      !parse_side(split2[1], 'b', 'f', "output", &out)) {
    return false;
  }
  if (lhs.spatial.size() != out.spatial.size() || lhs.spatial.size() != rhs.spatial.size()) {
    return TokenError(absl::StrCat(
        "input, kernel, and output must have same number of spatial dimensions, but got ",
        lhs.spatial.size(), ", ", rhs.spatial.size(), ", ", out.spatial.size(), ", respectively."));
  }
  dnums->set_input_batch_dimension(lhs.a.value_or(0));
  dnums->set_input_feature_dimension(lhs.b.value_or(0));
  *dnums->mutable_input_spatial_dimensions() = lhs.spatial;
  dnums->set_kernel_input_feature_dimension(rhs.a.value_or(0));
  dnums->set_kernel_output_feature_dimension(rhs.b.value_or(0));
  *dnums->mutable_kernel_spatial_dimensions() = rhs.spatial;
  dnums->set_output_batch_dimension(out.a.value_or(0));
  dnums->set_output_feature_dimension(out.b.value_or(0));
  *dnums->mutable_output_spatial_dimensions() = out.spatial;
  Lex();
  return true;
}

bool HloParserImpl::ParsePaddingConfig(PaddingConfig* padding) {
  if (kind() != TokKind::kPad) return TokenError("expects padding config, e.g., '0_0_0x3_3_1'");
  size_t offset = lexer_.token_start();
  for (absl::string_view dim : absl::StrSplit(lexer_.str_val(), 'x')) {
    std::vector<int64_t> values;
    for (absl::string_view piece : absl::StrSplit(dim, '_')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(piece, &v)) {
        return Error(offset,
                     "expects padding config pattern like 'low_high_interior' or "
                     "'low_high'");
      }
      values.push_back(v);
    }
    if (values.size() != 2 && values.size() != 3) {
      return Error(offset, "expects padding config pattern like 'low_high_interior' or 'low_high'");
    }
    auto* d = padding->add_dimensions();
    d->set_edge_padding_low(values[0]);
    d->set_edge_padding_high(values[1]);
    d->set_interior_padding(values.size() == 3 ? values[2] : 0);
  }
  Lex();
  return true;
}

bool HloParserImpl::ParseSliceRanges(SliceAttrs* slice) {
  if (!ParseToken(TokKind::kLbrace, "expects '{' to start ranges")) return false;
  if (kind() != TokKind::kRbrace) {
    do {
      size_t offset = lexer_.token_start();
      std::vector<int64_t> range;
      if (!ParseInt64List(TokKind::kLsquare, TokKind::kRsquare, TokKind::kColon, &range)) {
        return false;
      }
      if (range.size() != 2 && range.size() != 3) {
        return Error(offset, absl::StrCat("expects [start:limit:step] or [start:limit], but sees ",
                                          range.size(), " elements."));
      }
      slice->starts.push_back(range[0]);
      slice->limits.push_back(range[1]);
      slice->strides.push_back(range.size() == 3 ? range[2] : 1);
    } while (EatIfPresent(TokKind::kComma));
  }
  return ParseToken(TokKind::kRbrace, "expects '}' to end ranges");
}

bool HloParserImpl::ParsePrecisionList(std::vector<PrecisionConfig::Precision>* precisions) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    if (kind() != TokKind::kIdent) return TokenError("expects precision");
    std::string value = absl::AsciiStrToLower(lexer_.str_val());
    static constexpr std::pair<absl::string_view, PrecisionConfig::Precision> kNames[] = {
        {"default", PrecisionConfig::DEFAULT},
        {"high", PrecisionConfig::HIGH},
        {"highest", PrecisionConfig::HIGHEST},
        {"packed_nibble", PrecisionConfig::PACKED_NIBBLE},
    };
    for (const auto& [name, precision] : kNames) {
      if (value == name) {
        precisions->push_back(precision);
        Lex();
        return true;
      }
    }
    return TokenError(absl::StrCat("expects precision but sees: ", lexer_.str_val()));
  });
}

bool HloParserImpl::ParseAlgorithm(PrecisionConfig::Algorithm* algorithm) {
  static constexpr std::pair<absl::string_view, PrecisionConfig::Algorithm> kNames[] = {
      {"unset", PrecisionConfig::ALG_UNSET},
      {"dot_any_f8_any_f8_f32", PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32},
      {"dot_any_f8_any_f8_f32_fast_accum", PrecisionConfig::ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM},
      {"dot_f16_f16_f16", PrecisionConfig::ALG_DOT_F16_F16_F16},
      {"dot_f16_f16_f32", PrecisionConfig::ALG_DOT_F16_F16_F32},
      {"dot_bf16_bf16_bf16", PrecisionConfig::ALG_DOT_BF16_BF16_BF16},
      {"dot_bf16_bf16_f32", PrecisionConfig::ALG_DOT_BF16_BF16_F32},
      {"dot_bf16_bf16_f32_x3", PrecisionConfig::ALG_DOT_BF16_BF16_F32_X3},
      {"dot_bf16_bf16_f32_x6", PrecisionConfig::ALG_DOT_BF16_BF16_F32_X6},
      {"dot_tf32_tf32_f32", PrecisionConfig::ALG_DOT_TF32_TF32_F32},
      {"dot_tf32_tf32_f32_x3", PrecisionConfig::ALG_DOT_TF32_TF32_F32_X3},
      {"dot_f32_f32_f32", PrecisionConfig::ALG_DOT_F32_F32_F32},
      {"dot_f64_f64_f64", PrecisionConfig::ALG_DOT_F64_F64_F64},
      {"dot_bf16_bf16_f32_x9", PrecisionConfig::ALG_DOT_BF16_BF16_F32_X9},
  };
  if (kind() != TokKind::kIdent) return TokenError("expects algorithm");
  for (const auto& [name, value] : kNames) {
    if (lexer_.str_val() == name) {
      *algorithm = value;
      Lex();
      return true;
    }
  }
  return TokenError(absl::StrCat("expects algorithm but sees: ", lexer_.str_val()));
}

// --- Values Axle keeps as text ----------------------------------------------------

bool HloParserImpl::ParseResultAccuracy() {
  // {mode=default|highest} or {tolerance={atol=x, rtol=y, ulps=n}}
  if (!ParseToken(TokKind::kLbrace, "expected '{' to start result accuracy")) return false;
  std::string name;
  if (!ParseAttributeName(&name)) return false;
  if (name == "mode") {
    if (kind() != TokKind::kIdent) return TokenError("expects ResultAccuracy mode");
    std::string mode = absl::AsciiStrToLower(lexer_.str_val());
    if (mode != "default" && mode != "highest" && mode != "tolerance") {
      return TokenError(absl::StrCat("expects ResultAccuracy type but sees: ", lexer_.str_val()));
    }
    Lex();
  } else if (name == "tolerance") {
    if (!ParseToken(TokKind::kLbrace, "expected '{' to start result accuracy tolerance")) {
      return false;
    }
    if (kind() != TokKind::kRbrace) {
      do {
        std::string key;
        double value;
        if (!ParseAttributeName(&key)) return false;
        if (key != "ulps" && key != "rtol" && key != "atol") {
          return TokenError(absl::StrCat("invalid attribute name: ", key));
        }
        if (!ParseDouble(&value)) return false;
      } while (EatIfPresent(TokKind::kComma));
    }
    if (!ParseToken(TokKind::kRbrace, "expects '}' at the end of result accuracy tolerance")) {
      return false;
    }
  } else {
    return TokenError(absl::StrCat("invalid attribute name: ", name));
  }
  return ParseToken(TokKind::kRbrace, "expected '}' to end result_accuracy");
}

bool HloParserImpl::ParseOriginalValue() {
  // '{' ( '[synthetic_call]' | tuple tree of {"name" {index}} ) '}'
  if (!ParseToken(TokKind::kLbrace, "Expects '{' to start original value")) return false;
  if (EatIfPresent(TokKind::kLsquare)) {
    if (kind() != TokKind::kIdent || lexer_.str_val() != "synthetic_call") {
      return TokenError("Expects 'synthetic_call' after '['");
    }
    Lex();
    return ParseToken(TokKind::kRsquare, "Expects ']'") &&
           ParseToken(TokKind::kRbrace, "Expects '}' to end original value");
  }
  int depth = 0;
  while (kind() != TokKind::kRbrace || depth > 0) {
    switch (kind()) {
      case TokKind::kLparen:
        if (++depth > kMaxDepth) return TokenError("nesting is too deep");
        Lex();
        break;
      case TokKind::kRparen:
        if (--depth < 0) return TokenError("unbalanced ')' in original value");
        Lex();
        break;
      case TokKind::kComma:
        Lex();
        break;
      case TokKind::kLbrace: {
        Lex();
        if (kind() == TokKind::kString) {
          Lex();
          if (kind() == TokKind::kLbrace) {
            ShapeIndex index;
            if (!ParseShapeIndex(&index)) return false;
          }
        }
        if (!ParseToken(TokKind::kRbrace, "Expects '}' at end of an original array")) return false;
        break;
      }
      default:
        return TokenError("Expects '[synthetic_call]' or a tuple tree of original arrays");
    }
  }
  Lex();
  return true;
}

bool HloParserImpl::ParseStatistics() {
  if (!ParseToken(TokKind::kLbrace, "expected '{' to start statistics")) return false;
  if (kind() != TokKind::kRbrace) {
    std::string name;
    int64_t index;
    if (!ParseAttributeName(&name) || !ParseInt64(&index)) return false;
    while (EatIfPresent(TokKind::kComma)) {
      double value;
      if (!ParseAttributeName(&name) || !ParseDouble(&value)) return false;
    }
  }
  return ParseToken(TokKind::kRbrace, "expects '}' at the end of statistics");
}

bool HloParserImpl::ParseDebugAttributes() {
  // { {"name"}:({log_mode=m, callback_id=n, partitioned=b}), ... }
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    if (!ParseToken(TokKind::kLbrace, "expects '{'")) return false;
    std::string name;
    if (!ParseString(&name) || !ParseToken(TokKind::kRbrace, "expects '}'") ||
        !ParseToken(TokKind::kColon, "expects ':'") ||
        !ParseToken(TokKind::kLparen, "expects '('")) {
      return false;
    }
    std::optional<int> log_mode;
    std::optional<int64_t> callback_id;
    std::optional<bool> partitioned;
    AttrMap attrs;
    attrs["log_mode"] = EnumAttr(false, {"default", "fusion_debugger"}, &log_mode);
    attrs["callback_id"] = Int64Attr(false, &callback_id);
    attrs["partitioned"] = BoolAttr(false, &partitioned);
    return ParseSubAttributes(attrs) && ParseToken(TokKind::kRparen, "expects ')'");
  });
}

bool HloParserImpl::ParseOriginalValueRecoveryTable() {
  // { {"a" {i}} : {"b" {j}} (, "module text")? ... }
  if (!ParseToken(TokKind::kLbrace, "Expects '{'")) return false;
  auto original_array = [&]() {
    if (!ParseToken(TokKind::kLbrace, "Expects '{'")) return false;
    if (kind() == TokKind::kString) {
      Lex();
      if (kind() == TokKind::kLbrace) {
        ShapeIndex index;
        if (!ParseShapeIndex(&index)) return false;
      }
    }
    return ParseToken(TokKind::kRbrace, "Expects '}' at end of OriginalArray");
  };
  while (kind() != TokKind::kRbrace) {
    const char* format = "Expected format: <original_array>: <original_array>, <HloModule>";
    if (!original_array() || !ParseToken(TokKind::kColon, format) || !original_array())
      return false;
    if (EatIfPresent(TokKind::kComma)) {
      if (kind() == TokKind::kString) {
        size_t offset = lexer_.token_start();
        std::string text = lexer_.str_val();
        absl::StatusOr<std::unique_ptr<HloModule>> module =
            ParseAndReturnUnverifiedModule(text, filename_);
        if (!module.ok()) {
          return Error(offset,
                       absl::StrCat("invalid recovery module: ", module.status().message()));
        }
        Lex();
        EatIfPresent(TokKind::kComma);
      }
    }
  }
  return ParseToken(TokKind::kRbrace, "Expects '}'");
}

// --- Literals ----------------------------------------------------------------------

bool HloParserImpl::ParseLiteral(const Shape& shape, Literal* literal) {
  if (shape.IsArray()) {
    int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
    if (bytes > kMaxConstantBytes || shape.is_dynamic()) {
      return TokenError(shape.is_dynamic()
                            ? "constants must have static shapes"
                            : absl::StrCat("constant of ", bytes, " bytes is larger than the ",
                                           kMaxConstantBytes, " bytes the parser accepts"));
    }
  }
  size_t start = lexer_.token_start();
  size_t consumed = 0;
  size_t error_offset = 0;
  absl::string_view rest = lexer_.text().substr(start);
  bool scalar_token =
      kind() == TokKind::kInt || kind() == TokKind::kDecimal || kind() == TokKind::kw_inf ||
      kind() == TokKind::kNegInf || kind() == TokKind::kw_true || kind() == TokKind::kw_false ||
      (kind() == TokKind::kLparen && primitive_util::IsComplexType(shape.element_type()));
  if (shape.IsArray() && shape.rank() > 0 && scalar_token) {
    // One value for a whole array: every element gets it.
    Shape scalar_shape = ShapeUtil::MakeShape(shape.element_type(), {});
    absl::StatusOr<Literal> scalar = ParseLiteralValuePrefix(
        std::string_view(rest.data(), rest.size()), scalar_shape, &consumed, &error_offset);
    if (!scalar.ok()) return Error(start + error_offset, scalar.status().message());
    Literal filled(shape);
    int64_t width = primitive_util::ByteWidth(shape.element_type());
    auto* dst = static_cast<uint8_t*>(filled.untyped_data());
    const auto* src = static_cast<const uint8_t*>(scalar->untyped_data());
    for (int64_t i = 0; i < filled.element_count(); ++i) std::memcpy(dst + i * width, src, width);
    *literal = std::move(filled);
    last_end_ = start + consumed;
    lexer_.ResetTo(start + consumed);
    return true;
  }
  absl::StatusOr<Literal> parsed = ParseLiteralValuePrefix(
      std::string_view(rest.data(), rest.size()), shape, &consumed, &error_offset);
  if (!parsed.ok()) return Error(start + error_offset, parsed.status().message());
  *literal = std::move(parsed).value();
  last_end_ = start + consumed;
  lexer_.ResetTo(start + consumed);
  return true;
}

bool HloParserImpl::ParseLiteralWithShape(Literal* literal) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (EatIfPresent(TokKind::kLparen)) {
    // A tuple: each element with its shape.
    std::vector<Literal> elements;
    while (kind() != TokKind::kRparen) {
      elements.emplace_back();
      if (!ParseLiteralWithShape(&elements.back())) return false;
      if (kind() != TokKind::kRparen &&
          !ParseToken(TokKind::kComma, "expects ',' to separate tuple elements")) {
        return false;
      }
    }
    Lex();
    *literal = Literal::MakeTuple(std::move(elements));
    return true;
  }
  Shape shape;
  if (!ParseShape(&shape)) return false;
  return ParseLiteral(shape, literal);
}

}  // namespace hlo_parser_internal
}  // namespace axle
