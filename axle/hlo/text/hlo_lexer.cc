//===- hlo_lexer.cc - Tokens of XLA's HLO text format ---------------------===//
//
// The token grammar is XLA's (xla/hlo/parser/hlo_lexer.cc), matched by hand
// instead of with regular expressions:
//
//   decimal    [-]?((\d+|\d+[.]\d*|\d*[.]\d+)([eE][+-]?\d+))|[-]?(\d+[.]\d*|\d*[.]\d+)
//   dim labels [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
//   DxD        [0-9]+(x[0-9]+)+
//   pad        [-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?(x[-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?)*
//   int        [-]?[0-9]+      (non-negative values up to 2^64-1 wrap to int64)
//
// tried in that order at a digit, '-' or '?'.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/text/hlo_lexer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace axle {
namespace {

constexpr int kEndOfText = -1;

bool IsIdentifierChar(int c) {
  return c >= 0 &&
         (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_');
}
bool IsDigit(int c) { return c >= '0' && c <= '9'; }

// The NaN with the given sign and payload (payload 0: the quiet NaN).
double MakeNan(bool negative, uint64_t payload) {
  constexpr uint64_t kQuietBit = uint64_t{1} << 51;
  uint64_t bits = (uint64_t{0x7ff} << 52) | (payload == 0 ? kQuietBit : payload);
  if (negative) bits |= uint64_t{1} << 63;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Length of the run of characters at `s[i...]` satisfying `pred`.
template <typename Pred>
size_t RunLength(absl::string_view s, size_t i, Pred pred) {
  size_t n = 0;
  while (i + n < s.size() && pred(s[i + n])) ++n;
  return n;
}

// Each Match* returns the length of the longest match of its pattern at the
// start of `s`, or 0.
size_t MatchDecimal(absl::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t int_digits = RunLength(s, i, [](char c) { return IsDigit(c); });
  i += int_digits;
  bool dot = false;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    dot = true;
    frac_digits = RunLength(s, i + 1, [](char c) { return IsDigit(c); });
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  size_t mantissa_end = dot ? i + 1 + frac_digits : i;
  size_t j = mantissa_end;
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    size_t exp_digits = RunLength(s, k, [](char c) { return IsDigit(c); });
    if (exp_digits > 0) return k + exp_digits;
  }
  return dot ? mantissa_end : 0;
}

size_t MatchDimLabels(absl::string_view s) {
  auto lhs = [](char c) { return IsDigit(c) || c == 'b' || c == 'f' || c == '?'; };
  auto rhs = [](char c) { return IsDigit(c) || c == 'i' || c == 'o' || c == '?'; };
  size_t i = RunLength(s, 0, lhs);
  if (i < 2 || i >= s.size() || s[i] != '_') return 0;
  size_t n = RunLength(s, i + 1, rhs);
  if (n < 2) return 0;
  i += 1 + n;
  if (s.substr(i, 2) != "->") return 0;
  n = RunLength(s, i + 2, lhs);
  if (n < 2) return 0;
  return i + 2 + n;
}

size_t MatchDxD(absl::string_view s) {
  size_t i = RunLength(s, 0, [](char c) { return IsDigit(c); });
  if (i == 0) return 0;
  size_t groups = 0;
  while (i + 1 < s.size() && s[i] == 'x' && IsDigit(s[i + 1])) {
    i += 1 + RunLength(s, i + 1, [](char c) { return IsDigit(c); });
    ++groups;
  }
  return groups > 0 ? i : 0;
}

// [-]?[0-9]+_[-]?[0-9]+(_[0-9]+)? at s[i...]; returns the end or 0.
size_t MatchPadGroup(absl::string_view s, size_t i) {
  auto signed_int = [&](size_t at) -> size_t {
    size_t j = at;
    if (j < s.size() && s[j] == '-') ++j;
    size_t n = RunLength(s, j, [](char c) { return IsDigit(c); });
    return n == 0 ? 0 : j + n;
  };
  size_t j = signed_int(i);
  if (j == 0 || j >= s.size() || s[j] != '_') return 0;
  size_t k = signed_int(j + 1);
  if (k == 0) return 0;
  if (k + 1 < s.size() && s[k] == '_' && IsDigit(s[k + 1])) {
    k += 1 + RunLength(s, k + 1, [](char c) { return IsDigit(c); });
  }
  return k;
}

size_t MatchPad(absl::string_view s) {
  size_t end = MatchPadGroup(s, 0);
  if (end == 0) return 0;
  while (end < s.size() && s[end] == 'x') {
    size_t next = MatchPadGroup(s, end + 1);
    if (next == 0) break;
    end = next;
  }
  return end;
}

}  // namespace

absl::string_view TokKindToString(TokKind kind) {
  switch (kind) {
    case TokKind::kEof:
      return "end of text";
    case TokKind::kError:
      return "invalid token";
    case TokKind::kEqual:
      return "'='";
    case TokKind::kComma:
      return "','";
    case TokKind::kColon:
      return "':'";
    case TokKind::kAsterisk:
      return "'*'";
    case TokKind::kQuestionMark:
      return "'?'";
    case TokKind::kOctothorp:
      return "'#'";
    case TokKind::kPlus:
      return "'+'";
    case TokKind::kTilde:
      return "'~'";
    case TokKind::kLsquare:
      return "'['";
    case TokKind::kRsquare:
      return "']'";
    case TokKind::kLbrace:
      return "'{'";
    case TokKind::kRbrace:
      return "'}'";
    case TokKind::kLparen:
      return "'('";
    case TokKind::kRparen:
      return "')'";
    case TokKind::kArrow:
      return "'->'";
    case TokKind::kLeq:
      return "'<='";
    case TokKind::kDots:
      return "'...'";
    case TokKind::kw_HloModule:
      return "'HloModule'";
    case TokKind::kw_ENTRY:
      return "'ENTRY'";
    case TokKind::kw_ROOT:
      return "'ROOT'";
    case TokKind::kw_true:
      return "'true'";
    case TokKind::kw_false:
      return "'false'";
    case TokKind::kw_maximal:
      return "'maximal'";
    case TokKind::kw_replicated:
      return "'replicated'";
    case TokKind::kw_manual:
      return "'manual'";
    case TokKind::kw_last_tile_dim_replicate:
      return "'last_tile_dim_replicate'";
    case TokKind::kw_shard_as:
      return "'shard_as'";
    case TokKind::kw_shard_like:
      return "'shard_like'";
    case TokKind::kw_unknown:
      return "'unknown'";
    case TokKind::kw_unreduced:
      return "'unreduced'";
    case TokKind::kw_inf:
      return "'inf'";
    case TokKind::kw_FileNames:
      return "'FileNames'";
    case TokKind::kw_FunctionNames:
      return "'FunctionNames'";
    case TokKind::kw_FileLocations:
      return "'FileLocations'";
    case TokKind::kw_StackFrames:
      return "'StackFrames'";
    case TokKind::kNegInf:
      return "'-inf'";
    case TokKind::kPrimitiveType:
      return "primitive type";
    case TokKind::kName:
      return "name";
    case TokKind::kAttributeName:
      return "attribute name";
    case TokKind::kDimLabels:
      return "dim labels";
    case TokKind::kDxD:
      return "DxD pattern";
    case TokKind::kPad:
      return "padding pattern";
    case TokKind::kIdent:
      return "identifier";
    case TokKind::kString:
      return "string";
    case TokKind::kInt:
      return "integer";
    case TokKind::kDecimal:
      return "decimal";
  }
  return "token";
}

int HloLexer::Peek(size_t ahead) const {
  size_t at = pos_ + ahead;
  if (at >= text_.size()) return kEndOfText;
  return static_cast<unsigned char>(text_[at]);
}

TokKind HloLexer::Fail(std::string message) {
  error_message_ = std::move(message);
  return TokKind::kError;
}

TokKind HloLexer::Lex() {
  // An error token is sticky: the parser reports it where it stands.
  if (kind_ == TokKind::kError && pos_ != 0) return kind_;
  kind_ = LexToken();
  return kind_;
}

TokKind HloLexer::ResetTo(size_t offset) {
  pos_ = offset > text_.size() ? text_.size() : offset;
  kind_ = LexToken();
  return kind_;
}

TokKind HloLexer::LookAhead() const {
  if (kind_ == TokKind::kEof || kind_ == TokKind::kError) return kind_;
  HloLexer copy = *this;
  return copy.Lex();
}

TokKind HloLexer::LexToken() {
  error_message_.clear();
  while (true) {
    token_start_ = pos_;
    int c = Peek();
    if (c == kEndOfText) return TokKind::kEof;
    ++pos_;
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        continue;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
      case '-':
      case '?': {
        if (c == '-' && Peek() == '>') {
          ++pos_;
          return TokKind::kArrow;
        }
        TokKind kind = LexNumberOrPattern();
        if (kind == TokKind::kError && c == '?') {
          pos_ = token_start_ + 1;
          error_message_.clear();
          return TokKind::kQuestionMark;
        }
        return kind;
      }
      case '=':
        return TokKind::kEqual;
      case '<':
        if (Peek() == '=') {
          ++pos_;
          return TokKind::kLeq;
        }
        return Fail("unexpected character '<'");
      case ',':
        return TokKind::kComma;
      case '%':
        return LexPercent();
      case ':':
        return TokKind::kColon;
      case '*':
        return TokKind::kAsterisk;
      case '#':
        return TokKind::kOctothorp;
      case '+':
        return TokKind::kPlus;
      case '~':
        return TokKind::kTilde;
      case '[':
        return TokKind::kLsquare;
      case ']':
        return TokKind::kRsquare;
      case '{':
        return TokKind::kLbrace;
      case '}':
        return TokKind::kRbrace;
      case '(':
        return TokKind::kLparen;
      case ')':
        return TokKind::kRparen;
      case '/':
        if (Peek() == '*') {
          size_t end = text_.find("*/", pos_ + 1);
          if (end == absl::string_view::npos) {
            pos_ = token_start_;
            return Fail("unterminated /* comment");
          }
          pos_ = end + 2;
          continue;
        }
        if (Peek() == '/') {
          while (Peek() != kEndOfText && Peek() != '\n' && Peek() != '\r') ++pos_;
          continue;
        }
        return Fail("unexpected character '/'");
      case '.':
        if (Peek() == '.' && Peek(1) == '.') {
          pos_ += 2;
          return TokKind::kDots;
        }
        return Fail("unexpected character '.'");
      case '"':
      case '\'':
        return LexString();
      default:
        if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') return LexIdentifier();
        if (c == 0) return Fail("unexpected NUL character");
        if (absl::ascii_isprint(static_cast<unsigned char>(c))) {
          return Fail(
              absl::StrCat("unexpected character '", std::string(1, static_cast<char>(c)), "'"));
        }
        return Fail(absl::StrCat("unexpected byte 0x", absl::Hex(c)));
    }
  }
}

bool HloLexer::LexNanPayload(uint64_t* payload) {
  // "(0x" hex+ ")" right after "nan".
  if (Peek() != '(' || Peek(1) != '0' || Peek(2) != 'x') return false;
  size_t i = pos_ + 3;
  uint64_t value = 0;
  size_t digits = 0;
  bool overflow = false;
  while (i < text_.size() && absl::ascii_isxdigit(static_cast<unsigned char>(text_[i]))) {
    char h = text_[i];
    int v = IsDigit(h) ? h - '0' : (absl::ascii_tolower(static_cast<unsigned char>(h)) - 'a' + 10);
    if (value > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
    value = (value << 4) | static_cast<uint64_t>(v);
    ++digits;
    ++i;
  }
  if (digits == 0 || i >= text_.size() || text_[i] != ')') return false;
  pos_ = i + 1;
  constexpr uint64_t kPayloadMask = (uint64_t{1} << 52) - 1;
  if (overflow || value == 0 || value > kPayloadMask) {
    Fail("NaN payload out of range");
    return false;
  }
  *payload = value;
  return true;
}

TokKind HloLexer::LexIdentifier() {
  while (IsIdentifierChar(Peek())) ++pos_;
  absl::string_view identifier = text_.substr(token_start_, pos_ - token_start_);
  if (Peek() == ':') {
    str_val_ = std::string(identifier.data(), identifier.size());
    ++pos_;
    return TokKind::kName;
  }
  if (Peek() == '=') {
    str_val_ = std::string(identifier.data(), identifier.size());
    ++pos_;
    return TokKind::kAttributeName;
  }
  if (std::optional<PrimitiveType> type = primitive_util::StringToPrimitiveType(identifier);
      type.has_value() && *type != TUPLE && *type != BUFFER) {
    primitive_type_val_ = *type;
    return TokKind::kPrimitiveType;
  }
  if (identifier == "nan") {
    uint64_t payload = 0;
    if (Peek() == '(' && !LexNanPayload(&payload)) {
      if (error_message_.empty()) error_message_ = "malformed NaN payload";
      return TokKind::kError;
    }
    decimal_val_ = MakeNan(false, payload);
    return TokKind::kDecimal;
  }
  static constexpr std::pair<absl::string_view, TokKind> kKeywords[] = {
      {"true", TokKind::kw_true},
      {"false", TokKind::kw_false},
      {"inf", TokKind::kw_inf},
      {"HloModule", TokKind::kw_HloModule},
      {"ENTRY", TokKind::kw_ENTRY},
      {"ROOT", TokKind::kw_ROOT},
      {"FileLocations", TokKind::kw_FileLocations},
      {"FileNames", TokKind::kw_FileNames},
      {"FunctionNames", TokKind::kw_FunctionNames},
      {"StackFrames", TokKind::kw_StackFrames},
      {"maximal", TokKind::kw_maximal},
      {"replicated", TokKind::kw_replicated},
      {"manual", TokKind::kw_manual},
      {"last_tile_dim_replicate", TokKind::kw_last_tile_dim_replicate},
      {"shard_as", TokKind::kw_shard_as},
      {"shard_like", TokKind::kw_shard_like},
      {"unknown", TokKind::kw_unknown},
      {"unreduced", TokKind::kw_unreduced},
  };
  for (const auto& [word, kind] : kKeywords) {
    if (identifier == word) return kind;
  }
  if (size_t n = MatchDimLabels(text_.substr(token_start_)); n > 0) {
    pos_ = token_start_ + n;
    str_val_ = std::string(text_.substr(token_start_, n));
    return TokKind::kDimLabels;
  }
  str_val_ = std::string(identifier.data(), identifier.size());
  return TokKind::kIdent;
}

TokKind HloLexer::LexPercent() {
  size_t name_start = pos_;
  int c = Peek();
  if (c >= 0 && (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_')) {
    ++pos_;
    while (IsIdentifierChar(Peek())) ++pos_;
    str_val_ = std::string(text_.substr(name_start, pos_ - name_start));
    return TokKind::kName;
  }
  return Fail("expects a name after '%'");
}

TokKind HloLexer::LexNumberOrPattern() {
  absl::string_view rest = text_.substr(token_start_);
  if (size_t n = MatchDecimal(rest); n > 0) {
    pos_ = token_start_ + n;
    std::string digits(rest.substr(0, n));
    decimal_val_ = std::strtod(digits.c_str(), nullptr);
    return TokKind::kDecimal;
  }
  if (size_t n = MatchDimLabels(rest); n > 0) {
    pos_ = token_start_ + n;
    str_val_ = std::string(rest.substr(0, n));
    return TokKind::kDimLabels;
  }
  if (size_t n = MatchDxD(rest); n > 0) {
    pos_ = token_start_ + n;
    str_val_ = std::string(rest.substr(0, n));
    return TokKind::kDxD;
  }
  if (size_t n = MatchPad(rest); n > 0) {
    pos_ = token_start_ + n;
    str_val_ = std::string(rest.substr(0, n));
    return TokKind::kPad;
  }
  // Integers: negative ones down to INT64_MIN, non-negative ones up to
  // 2^64-1 (wrapping to int64, as XLA does for u64 literals).
  size_t i = 0;
  bool negative = !rest.empty() && rest[0] == '-';
  if (negative) ++i;
  size_t digits = RunLength(rest, i, [](char c) { return IsDigit(c); });
  if (digits > 0) {
    uint64_t magnitude = 0;
    bool overflow = false;
    for (size_t k = i; k < i + digits; ++k) {
      uint64_t d = static_cast<uint64_t>(rest[k] - '0');
      if (magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        overflow = true;
        break;
      }
      magnitude = magnitude * 10 + d;
    }
    if (negative && magnitude > (uint64_t{1} << 63)) overflow = true;
    pos_ = token_start_ + i + digits;
    if (overflow) return Fail("integer literal out of range");
    int64_val_ = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return TokKind::kInt;
  }
  if (rest.substr(0, 4) == "-inf") {
    pos_ = token_start_ + 4;
    return TokKind::kNegInf;
  }
  if (rest.substr(0, 4) == "-nan") {
    pos_ = token_start_ + 4;
    uint64_t payload = 0;
    if (Peek() == '(' && !LexNanPayload(&payload)) {
      if (error_message_.empty()) error_message_ = "malformed NaN payload";
      return TokKind::kError;
    }
    decimal_val_ = MakeNan(true, payload);
    return TokKind::kDecimal;
  }
  return Fail(absl::StrCat("unexpected character '", std::string(1, rest[0]), "'"));
}

TokKind HloLexer::LexString() {
  char quote = text_[token_start_];
  size_t i = token_start_ + 1;
  while (i < text_.size() && text_[i] != quote) {
    if (text_[i] == '\\') ++i;
    ++i;
  }
  if (i >= text_.size()) {
    pos_ = token_start_;
    return Fail("unterminated string");
  }
  pos_ = i + 1;
  absl::string_view raw = text_.substr(token_start_ + 1, i - token_start_ - 1);
  std::string error;
  if (!absl::CUnescape(raw, &str_val_, &error)) {
    return Fail(absl::StrCat("invalid escape in string: ", error));
  }
  return TokKind::kString;
}

TokKind HloLexer::LexJsonDict() {
  if (kind_ != TokKind::kLbrace) return kind_ = TokKind::kError;
  size_t i = token_start_;
  int64_t depth = 0;
  while (i < text_.size()) {
    char c = text_[i];
    if (c == '"') {
      ++i;
      while (i < text_.size() && text_[i] != '"') {
        if (text_[i] == '\\') ++i;
        ++i;
      }
      if (i >= text_.size()) break;
      ++i;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) {
      pos_ = i + 1;
      str_val_ = std::string(text_.substr(token_start_, pos_ - token_start_));
      return kind_ = TokKind::kString;
    }
    ++i;
  }
  error_message_ = "unterminated JSON dictionary";
  return kind_ = TokKind::kError;
}

std::pair<int, int> HloLexer::LineAndColumn(size_t offset) const {
  if (offset > text_.size()) offset = text_.size();
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

absl::string_view HloLexer::LineAt(size_t offset) const {
  if (offset > text_.size()) offset = text_.size();
  size_t newline = offset == 0 ? absl::string_view::npos : text_.rfind('\n', offset - 1);
  size_t start = newline == absl::string_view::npos ? 0 : newline + 1;
  size_t end = text_.find('\n', offset);
  if (end == absl::string_view::npos) end = text_.size();
  absl::string_view line = text_.substr(start, end - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace axle
