//===- literal_text.cc - XLA's literal text: printing and parsing ---------===//
//
// The printer follows xla::LiteralBase::Print* and xla::RoundTripFpToString
// exactly; the parser follows the literal part of XLA's HLO lexer and parser
// (HloParserImpl::ParseDenseLiteral and SetValueInLiteralHelper): the same
// tokens, the same element counting per dimension, the same range checks and
// NaN payload rules, with the same messages.
//
//===----------------------------------------------------------------------===//
#include "axle/core/literal_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace axle {
namespace {

// ===--------------------------------------------------------------------=== //
// Printing
// ===--------------------------------------------------------------------=== //

// Bits of a NaN payload for types that have signaling NaNs (XLA's
// NanPayloadBits): the explicit mantissa. 0 for the finite and fnuz formats.
int NanPayloadBits(PrimitiveType type) {
  switch (type) {
    case F16:
    case BF16:
    case F32:
    case F64:
    case F8E5M2:
    case F8E4M3:
    case F8E3M4:
      return primitive_util::SignificandWidth(type) - 1;
    default:
      return 0;
  }
}

// max_digits10 of a float type: ceil(1 + digits * log10(2)).
int MaxDigits10(PrimitiveType type) {
  return static_cast<int>(
      std::ceil(1.0 + primitive_util::SignificandWidth(type) * 0.30102999566398119521));
}

std::string FormatG(int digits, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return buffer;
}

// The value of a float of `type` with bit pattern `bits`, as a double.
double FloatBitsToDouble(PrimitiveType type, uint64_t bits) {
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> double {
        if constexpr (std::is_same_v<T, float>) {
          uint32_t word = static_cast<uint32_t>(bits);
          float f;
          std::memcpy(&f, &word, sizeof(f));
          return f;
        } else if constexpr (std::is_same_v<T, double>) {
          double d;
          std::memcpy(&d, &bits, sizeof(d));
          return d;
        } else if constexpr (is_narrow_float_v<T>) {
          return static_cast<double>(
              static_cast<float>(T::FromBits(static_cast<typename T::storage_type>(bits))));
        } else {
          return 0.0;
        }
      },
      type);
}

template <typename T>
uint64_t BitsOf(T value) {
  if constexpr (is_narrow_float_v<T>) {
    return value.bits();
  } else {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
  }
}

std::string ElementString(const Literal& literal, int64_t i, bool pred_as_digit) {
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> std::string {
        T value = static_cast<const T*>(literal.untyped_data())[i];
        if constexpr (std::is_same_v<T, bool>) {
          if (pred_as_digit) return value ? "1" : "0";
          return value ? "true" : "false";
        } else if constexpr (is_intn_v<T>) {
          return absl::StrCat(static_cast<int64_t>(value.value()));
        } else if constexpr (std::is_integral_v<T>) {
          return absl::StrCat(value);
        } else if constexpr (is_complex_v<T>) {
          constexpr PrimitiveType kPart = std::is_same_v<T, complex64> ? F32 : F64;
          return absl::StrCat("(", FloatBitsToString(kPart, BitsOf(value.real())), ", ",
                              FloatBitsToString(kPart, BitsOf(value.imag())), ")");
        } else {
          return FloatBitsToString(NativeToPrimitiveType<T>(), BitsOf(value));
        }
      },
      literal.shape().element_type());
}

std::vector<int64_t> PrintedDimensions(const Shape& shape) {
  std::vector<int64_t> dims = shape.dimensions();
  for (int64_t& d : dims) {
    if (d == Shape::kUnboundedSize) d = 0;
  }
  return dims;
}

class LiteralPrinter {
 public:
  LiteralPrinter(const LiteralPrintOptions& options, std::string* out)
      : options_(options), out_(out), linebreak_(options.oneline ? " " : "\n") {}

  void Print(const Literal& literal) {
    const Shape& shape = literal.shape();
    if (shape.IsTuple()) {
      *out_ += options_.oneline ? "( " : "(\n";
      for (int64_t i = 0; i < literal.tuple_size(); ++i) {
        if (i > 0) *out_ += options_.oneline ? ", " : ",\n";
        Print(literal.tuple_element(i));
      }
      *out_ += options_.oneline ? " )" : "\n)";
    } else if (shape.IsToken()) {
      *out_ += "token";
    } else if (shape.IsArray()) {
      PrintArray(literal);
    } else {
      *out_ += std::string(primitive_util::LowercasePrimitiveTypeName(shape.element_type()));
    }
  }

 private:
  void PrintArray(const Literal& literal) {
    const Shape& shape = literal.shape();
    dims_ = PrintedDimensions(shape);
    if (options_.print_shape) {
      *out_ += shape.ToString(options_.print_layout);
      if (shape.is_dynamic()) {
        *out_ += "(";
        for (size_t i = 0; i < dims_.size(); ++i) {
          if (i > 0) *out_ += ",";
          absl::StrAppend(out_, dims_[i]);
        }
        *out_ += ")";
      }
      *out_ += " ";
    }
    if (dims_.empty()) {
      *out_ += ElementString(literal, 0, /*pred_as_digit=*/false);
      return;
    }
    literal_ = &literal;
    next_element_ = 0;
    indices_.clear();
    PrintDimension(0);
  }

  // Prints the sub-array of dimension `dim` (indices_ holds the enclosing
  // indices), with XLA's bracing: see DenseArrayPrintHelper.
  void PrintDimension(size_t dim) {
    const size_t rank = dims_.size();
    if (dim == rank) {
      *out_ += ElementString(*literal_, next_element_++, /*pred_as_digit=*/true);
      return;
    }
    const int64_t size = dims_[dim];
    const bool innermost = dim + 1 == rank;
    // Opening brace.
    if (rank == 1) {
      *out_ += "{";
    } else if (innermost) {
      absl::StrAppend(out_, options_.oneline ? "" : "  ", "{", size <= 1 ? "" : " ");
    } else if (rank > 3 && dim > 0) {
      absl::StrAppend(out_, "{ /*i", dim - 1, "=", indices_.back(), "*/",
                      size > 0 ? linebreak_ : "");
    } else {
      absl::StrAppend(out_, "{", linebreak_);
    }
    for (int64_t i = 0; i < size; ++i) {
      indices_.push_back(i);
      PrintDimension(dim + 1);
      indices_.pop_back();
      if (i < size - 1) {
        *out_ += ",";
        *out_ += innermost ? " " : linebreak_;
      }
    }
    // Closing brace.
    if (rank == 1) {
      *out_ += "}";
    } else if (innermost) {
      absl::StrAppend(out_, size <= 1 ? "" : " ", "}");
    } else {
      absl::StrAppend(out_, linebreak_, "}");
    }
  }

  const LiteralPrintOptions& options_;
  std::string* out_;
  const char* linebreak_;
  const Literal* literal_ = nullptr;
  std::vector<int64_t> dims_;
  std::vector<int64_t> indices_;
  int64_t next_element_ = 0;
};

// ===--------------------------------------------------------------------=== //
// Lexing: the subset of XLA's HLO lexer that literal values use.
// ===--------------------------------------------------------------------=== //

enum class Tok {
  kEof,
  kError,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kComma,
  kDots,
  kTrue,
  kFalse,
  kInt,
  kDecimal,
  kInf,
  kNegInf,
  kNan,
  kToken,
  kIdent,
};

struct Token {
  Tok kind = Tok::kEof;
  size_t begin = 0;
  size_t end = 0;
  bool nan_negative = false;
  uint64_t nan_payload = 0;  // 0: the default (quiet) NaN
  std::string error;         // for kError
};

constexpr uint64_t kDoubleQuietNanPayload = uint64_t{1} << 51;
constexpr uint64_t kDoublePayloadMask = (uint64_t{1} << 52) - 1;

bool IsIdentifierChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token Next() {
    while (true) {
      Token tok;
      tok.begin = pos_;
      if (pos_ >= text_.size()) {
        tok.kind = Tok::kEof;
        tok.end = pos_;
        return tok;
      }
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '/' && Peek(1) == '*') {
        size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) return Error(tok, "unterminated /* comment");
        pos_ = close + 2;
        continue;
      }
      if (c == '/' && Peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
        continue;
      }
      switch (c) {
        case '{':
          return Single(tok, Tok::kLbrace);
        case '}':
          return Single(tok, Tok::kRbrace);
        case '(':
          return Single(tok, Tok::kLparen);
        case ')':
          return Single(tok, Tok::kRparen);
        case ',':
          return Single(tok, Tok::kComma);
        case '.':
          if (Peek(1) == '.' && Peek(2) == '.') {
            pos_ += 3;
            tok.kind = Tok::kDots;
            tok.end = pos_;
            return tok;
          }
          return Error(tok, "unexpected '.'");
        default:
          break;
      }
      if (c == '-' || absl::ascii_isdigit(static_cast<unsigned char>(c))) return LexNumber(tok);
      if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') return LexIdentifier(tok);
      if (c == '\0') return Error(tok, "unexpected NUL character");
      return Error(tok, absl::StrFormat("unexpected character '%s'",
                                        absl::CEscape(std::string(1, text_[pos_]))));
    }
  }

 private:
  char Peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool StartsWith(std::string_view s) const { return text_.substr(pos_).starts_with(s); }

  Token Single(Token tok, Tok kind) {
    tok.kind = kind;
    tok.end = ++pos_;
    return tok;
  }
  Token Error(Token tok, std::string message) {
    tok.kind = Tok::kError;
    tok.end = tok.begin;
    tok.error = std::move(message);
    return tok;
  }

  // After "nan" or "-nan": an optional "(0x<hex>)" payload.
  Token LexNan(Token tok, bool negative) {
    tok.kind = Tok::kNan;
    tok.nan_negative = negative;
    if (Peek(0) == '(') {
      size_t p = pos_ + 1;
      if (!text_.substr(p).starts_with("0x")) return Error(tok, "expects (0x<hex>) after nan");
      p += 2;
      uint64_t payload = 0;
      size_t digits = 0;
      bool overflow = false;
      while (p < text_.size() && absl::ascii_isxdigit(static_cast<unsigned char>(text_[p]))) {
        char h = text_[p];
        int v = absl::ascii_isdigit(static_cast<unsigned char>(h))
                    ? h - '0'
                    : absl::ascii_tolower(h) - 'a' + 10;
        if (payload > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
        payload = (payload << 4) | static_cast<uint64_t>(v);
        ++digits;
        ++p;
      }
      if (digits == 0 || p >= text_.size() || text_[p] != ')') {
        return Error(tok, "expects (0x<hex>) after nan");
      }
      if (overflow || payload == 0 || payload > kDoublePayloadMask) {
        return Error(tok, "NaN payload out of range");
      }
      pos_ = p + 1;
      tok.nan_payload = payload == kDoubleQuietNanPayload ? 0 : payload;
    }
    tok.end = pos_;
    return tok;
  }

  // [-]?(\d+|\d+.\d*|\d*.\d+)([eE][+-]?\d+)? ; also -inf, -nan.
  Token LexNumber(Token tok) {
    if (StartsWith("-inf")) {
      pos_ += 4;
      tok.kind = Tok::kNegInf;
      tok.end = pos_;
      return tok;
    }
    if (StartsWith("-nan")) {
      pos_ += 4;
      return LexNan(tok, /*negative=*/true);
    }
    size_t p = pos_;
    if (text_[p] == '-') ++p;
    auto digits = [&] {
      size_t start = p;
      while (p < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[p]))) ++p;
      return p - start;
    };
    size_t int_digits = digits();
    bool decimal = false;
    size_t frac_digits = 0;
    if (p < text_.size() && text_[p] == '.' && !(p + 1 < text_.size() && text_[p + 1] == '.')) {
      ++p;
      frac_digits = digits();
      decimal = true;
    }
    if (int_digits == 0 && frac_digits == 0) return Error(tok, "expects a number");
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      size_t q = p + 1;
      if (q < text_.size() && (text_[q] == '+' || text_[q] == '-')) ++q;
      if (q < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[q]))) {
        p = q;
        digits();
        decimal = true;
      }
    }
    pos_ = p;
    tok.kind = decimal ? Tok::kDecimal : Tok::kInt;
    tok.end = pos_;
    return tok;
  }

  Token LexIdentifier(Token tok) {
    size_t p = pos_;
    while (p < text_.size() && IsIdentifierChar(text_[p])) ++p;
    std::string_view word = text_.substr(pos_, p - pos_);
    pos_ = p;
    tok.end = pos_;
    if (word == "nan") return LexNan(tok, /*negative=*/false);
    if (word == "true")
      tok.kind = Tok::kTrue;
    else if (word == "false")
      tok.kind = Tok::kFalse;
    else if (word == "inf")
      tok.kind = Tok::kInf;
    else if (word == "token")
      tok.kind = Tok::kToken;
    else
      tok.kind = Tok::kIdent;
    return tok;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ===--------------------------------------------------------------------=== //
// Parsing
// ===--------------------------------------------------------------------=== //

constexpr int kMaxTupleDepth = 256;
// A literal written with the `{...}` shorthand may not exceed this size.
constexpr int64_t kMaxShorthandBytes = int64_t{1} << 32;

std::string TypeName(PrimitiveType type) {
  return std::string(primitive_util::LowercasePrimitiveTypeName(type));
}

std::string UpperTypeName(PrimitiveType type) { return absl::AsciiStrToUpper(TypeName(type)); }

// Total bytes of the arrays in `shape`, or -1 on overflow / unbounded dims.
int64_t CheckedByteSize(const Shape& shape, int depth) {
  if (depth > kMaxTupleDepth) return -1;
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) {
      int64_t bytes = CheckedByteSize(s, depth + 1);
      if (bytes < 0 || __builtin_add_overflow(total, bytes, &total)) return -1;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t n = primitive_util::ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text), lexer_(text) { Advance(); }

  // Parses a value of `literal`'s shape into it (already allocated).
  bool ParseInto(Literal* literal, int depth) {
    const Shape& shape = literal->shape();
    if (depth > kMaxTupleDepth) return Fail(tok_.begin, "literal nesting is too deep");
    if (shape.IsTuple()) return ParseTuple(literal, depth);
    if (shape.IsToken()) {
      if (tok_.kind != Tok::kToken) return Fail(tok_.begin, "expects 'token' for a token literal");
      Advance();
      return true;
    }
    if (!shape.IsArray()) {
      return Fail(tok_.begin, absl::StrCat("cannot parse a literal of shape ", shape.ToString()));
    }
    return ParseDense(literal);
  }

  const Token& current() const { return tok_; }
  size_t last_end() const { return last_end_; }
  size_t error_offset() const { return error_offset_; }
  const std::string& error() const { return error_; }

  bool Fail(size_t offset, std::string message) {
    if (error_.empty()) {
      error_offset_ = offset;
      error_ = std::move(message);
    }
    return false;
  }
  // Reports a lexer error if the current token is one.
  bool FailAtToken(std::string message) {
    if (tok_.kind == Tok::kError) return Fail(tok_.begin, tok_.error);
    return Fail(tok_.begin, std::move(message));
  }

 private:
  void Advance() {
    last_end_ = tok_.end;
    tok_ = lexer_.Next();
  }
  std::string_view TokenText(const Token& t) const {
    return text_.substr(t.begin, t.end - t.begin);
  }

  bool ParseTuple(Literal* literal, int depth) {
    if (tok_.kind != Tok::kLparen) return FailAtToken("expects '(' in front of tuple elements");
    Advance();
    const int64_t n = literal->tuple_size();
    for (int64_t i = 0; i < n; ++i) {
      if (i > 0 && tok_.kind == Tok::kComma) Advance();  // XLA tolerates a missing comma
      if (!ParseInto(&literal->mutable_tuple_element(i), depth + 1)) {
        return FailAtToken(absl::StrCat("expects the ", i, "th element"));
      }
    }
    if (tok_.kind != Tok::kRparen) {
      return FailAtToken(absl::StrCat("expects ')' at the end of the tuple with ", n, " elements"));
    }
    Advance();
    return true;
  }

  bool ParseDense(Literal* literal) {
    const Shape& shape = literal->shape();
    const int rank = static_cast<int>(shape.rank());
    const std::vector<int64_t>& dims = shape.dimensions();
    const int64_t count = literal->element_count();
    if (rank == 0) return ParseElement(literal, 0);

    int nest_level = 0;
    int64_t linear_index = 0;
    std::vector<int64_t> seen(rank, 0);
    auto index_str = [&](int dim) {
      std::string s = "[";
      for (int i = 0; i < dim; ++i) absl::StrAppend(&s, i ? "," : "", seen[i] - 1);
      return s + "]";
    };
    do {
      switch (tok_.kind) {
        case Tok::kLbrace:
          ++nest_level;
          if (nest_level > rank) {
            return FailAtToken(
                absl::StrFormat("expects nested array in rank %d, but sees larger", rank));
          }
          if (nest_level > 1 && ++seen[nest_level - 2] > dims[nest_level - 2]) {
            return FailAtToken(
                absl::StrFormat("expects %d elements in the %sth element, but sees more",
                                dims[nest_level - 2], index_str(nest_level - 2)));
          }
          Advance();
          break;
        case Tok::kRbrace:
          if (nest_level == 0) return FailAtToken("unexpected '}' token");
          --nest_level;
          if (seen[nest_level] != dims[nest_level]) {
            return FailAtToken(
                absl::StrFormat("expects %d elements in the %sth element, but sees %d",
                                dims[nest_level], index_str(nest_level), seen[nest_level]));
          }
          seen[nest_level] = 0;
          Advance();
          break;
        case Tok::kDots:
          if (nest_level != 1) {
            return FailAtToken(absl::StrFormat(
                "expects `...` at nest level 1, but sees it at nest level %d", nest_level));
          }
          seen[0] = dims[0];
          Advance();
          break;
        case Tok::kComma:
          Advance();
          break;
        case Tok::kLparen:
        case Tok::kTrue:
        case Tok::kFalse:
        case Tok::kInt:
        case Tok::kDecimal:
        case Tok::kInf:
        case Tok::kNegInf:
        case Tok::kNan:
          if (nest_level != rank) {
            return FailAtToken(
                absl::StrFormat("expects nested array in rank %d, but sees %d", rank, nest_level));
          }
          if (++seen[rank - 1] > dims[rank - 1]) {
            return FailAtToken(absl::StrFormat(
                "expects %d elements on the minor-most dimension, but sees more", dims[rank - 1]));
          }
          if (linear_index >= count) {
            return FailAtToken(absl::StrCat("tries to set a value to a literal in shape ",
                                            shape.ToString(false), " at linear index ",
                                            linear_index, ", but the index is out of range"));
          }
          if (!ParseElement(literal, linear_index++)) return false;
          break;
        case Tok::kEof:
          return FailAtToken("expects '}' to close the literal, but the text ends");
        default:
          return FailAtToken("unexpected token type in a literal");
      }
    } while (nest_level > 0);
    return true;
  }

  // Parses the element at the current token into `literal` at `index`.
  bool ParseElement(Literal* literal, int64_t index);

  bool ParsePred(bool* out) {
    if (tok_.kind == Tok::kTrue || tok_.kind == Tok::kFalse) {
      *out = tok_.kind == Tok::kTrue;
      Advance();
      return true;
    }
    bool negative;
    uint64_t magnitude;
    if (!ParseIntegerToken(PRED, &negative, &magnitude)) return false;
    *out = magnitude != 0;  // XLA: static_cast<bool>(value)
    return true;
  }

  bool ParseIntegerToken(PrimitiveType type, bool* negative, uint64_t* magnitude) {
    if (tok_.kind != Tok::kInt) {
      return FailAtToken(absl::StrCat("expects integer for primitive type: ", UpperTypeName(type)));
    }
    std::string_view s = TokenText(tok_);
    *negative = !s.empty() && s[0] == '-';
    if (*negative) s.remove_prefix(1);
    uint64_t m = 0;
    for (char c : s) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (m > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        return FailAtToken(
            absl::StrCat("integer ", std::string(TokenText(tok_)), " does not fit in 64 bits"));
      }
      m = m * 10 + d;
    }
    *magnitude = m;
    Advance();
    return true;
  }

  template <typename T>
  bool ParseInteger(PrimitiveType type, T* out) {
    size_t at = tok_.begin;
    bool negative;
    uint64_t magnitude;
    if (!ParseIntegerToken(type, &negative, &magnitude)) return false;
    int64_t lo;
    uint64_t hi;
    if constexpr (is_intn_v<T>) {
      lo = T::kMin;
      hi = static_cast<uint64_t>(T::kMax);
    } else {
      lo = static_cast<int64_t>(std::numeric_limits<T>::min());
      hi = static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    uint64_t neg_limit = lo < 0 ? uint64_t{0} - static_cast<uint64_t>(lo) : 0;
    // As XLA, which reads integers as int64 and checks an unsigned value as
    // that int64 converted to uint64: a negative u64 wraps (-1 is 2^64-1,
    // down to -2^63), a negative narrower unsigned is out of range.
    if constexpr (std::is_same_v<T, uint64_t>) neg_limit = uint64_t{1} << 63;
    if (negative ? magnitude > neg_limit : magnitude > hi) {
      return Fail(at, absl::StrCat("value ", negative && magnitude ? "-" : "", magnitude,
                                   " is out of range for literal's primitive type ",
                                   UpperTypeName(type), " namely [", lo, ", ", hi, "]."));
    }
    uint64_t bits = negative ? uint64_t{0} - magnitude : magnitude;
    if constexpr (is_intn_v<T>) {
      *out = T(static_cast<int64_t>(bits));
    } else {
      *out = static_cast<T>(bits);
    }
    return true;
  }

  // A real value token: number, inf, -inf or nan. Returns the value as a
  // double (NaN payloads are in tok.nan_payload); `*nan` is the token for NaNs.
  bool ParseRealToken(PrimitiveType type, double* value, Token* nan) {
    switch (tok_.kind) {
      case Tok::kInt:
      case Tok::kDecimal: {
        std::string s(TokenText(tok_));
        *value = std::strtod(s.c_str(), nullptr);
        if (std::isinf(*value)) {
          return FailAtToken(absl::StrCat("Constant is out of range for double (+/-",
                                          std::numeric_limits<double>::max(),
                                          ") and so is unparsable."));
        }
        break;
      }
      case Tok::kInf:
        *value = std::numeric_limits<double>::infinity();
        break;
      case Tok::kNegInf:
        *value = -std::numeric_limits<double>::infinity();
        break;
      case Tok::kNan:
        *value = std::numeric_limits<double>::quiet_NaN();
        *nan = tok_;
        break;
      default:
        return FailAtToken(
            absl::StrCat("expect floating point value for primitive type: ", UpperTypeName(type)));
    }
    Advance();
    return true;
  }

  // Parses a real float of type T; `literal_type` names the literal's type
  // in messages (it differs from T's for complex parts).
  template <typename T>
  bool ParseFloat(PrimitiveType literal_type, PrimitiveType part_type, T* out) {
    size_t at = tok_.begin;
    double value;
    Token nan;
    if (!ParseRealToken(literal_type, &value, &nan)) return false;
    if (std::isnan(value)) return SetNan<T>(literal_type, part_type, nan, at, out);
    T converted = ConvertValue<T>(value);
    double back = static_cast<double>(converted);
    // As XLA: check the converted value when it is finite (so that rounding
    // to the largest finite value is fine), else the value as written.
    double checked = (!std::isfinite(value) || std::isfinite(back)) ? back : value;
    double lo = static_cast<double>(LowestFinite<T>());
    double hi = static_cast<double>(HighestFinite<T>());
    if (std::isfinite(checked) && (checked > hi || checked < lo)) {
      return Fail(at,
                  absl::StrCat("value ", value, " is out of range for literal's primitive type ",
                               UpperTypeName(literal_type), " namely [", lo, ", ", hi, "]."));
    }
    *out = converted;
    return true;
  }

  template <typename T>
  bool SetNan(PrimitiveType literal_type, PrimitiveType part_type, const Token& nan, size_t at,
              T* out) {
    if constexpr (is_narrow_float_v<T>) {
      if (!T::kHasNan) {
        return Fail(at, absl::StrCat(TypeName(part_type), " has no NaN"));
      }
    }
    const int payload_bits = NanPayloadBits(part_type);
    if (nan.nan_payload == 0) {
      *out = ConvertValue<T>(
          std::copysign(std::numeric_limits<double>::quiet_NaN(), nan.nan_negative ? -1.0 : 1.0));
      return true;
    }
    if (payload_bits == 0) {
      return Fail(at, absl::StrCat("tries to set NaN payload 0x", absl::Hex(nan.nan_payload),
                                   " to a literal of type ", TypeName(literal_type), ", but ",
                                   TypeName(part_type), " does not support payloads"));
    }
    const uint64_t mask = (uint64_t{1} << payload_bits) - 1;
    if (nan.nan_payload > mask) {
      return Fail(at,
                  absl::StrCat("tries to set NaN payload 0x", absl::Hex(nan.nan_payload),
                               " to a literal of type ", TypeName(literal_type),
                               ", but the NaN payload is out of range (0x", absl::Hex(mask), ")"));
    }
    const int total_bits = primitive_util::BitWidth(part_type);
    const int exponent_bits = primitive_util::ExponentWidth(part_type);
    uint64_t bits = (((uint64_t{1} << exponent_bits) - 1) << payload_bits) | nan.nan_payload;
    if (nan.nan_negative) bits |= uint64_t{1} << (total_bits - 1);
    if constexpr (is_narrow_float_v<T>) {
      *out = T::FromBits(static_cast<typename T::storage_type>(bits));
    } else {
      std::memcpy(out, &bits, sizeof(T));
    }
    return true;
  }

  template <typename T>
  bool ParseComplex(PrimitiveType type, T* out) {
    using Part = typename T::value_type;
    const PrimitiveType part_type = NativeToPrimitiveType<Part>();
    if (tok_.kind != Tok::kLparen) {
      return FailAtToken(
          absl::StrCat("expects '(' to start a complex value of type ", UpperTypeName(type)));
    }
    Advance();
    Part re, im;
    if (!ParseFloat<Part>(type, part_type, &re)) return false;
    if (tok_.kind != Tok::kComma) {
      return FailAtToken("expect comma after real part of complex literal");
    }
    Advance();
    if (!ParseFloat<Part>(type, part_type, &im)) return false;
    if (tok_.kind != Tok::kRparen) return FailAtToken("expect ')' after complex number");
    Advance();
    *out = T(re, im);
    return true;
  }

  std::string_view text_;
  Lexer lexer_;
  Token tok_;
  size_t last_end_ = 0;
  size_t error_offset_ = 0;
  std::string error_;
};

// Defined after the class so that clang sees the member templates it uses.
bool LiteralParser::ParseElement(Literal* literal, int64_t index) {
  PrimitiveType type = literal->shape().element_type();
  void* data = literal->untyped_data();
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> bool {
        T* out = static_cast<T*>(data) + index;
        if constexpr (std::is_same_v<T, bool>) {
          return ParsePred(out);
        } else if constexpr (is_integer_v<T>) {
          return ParseInteger<T>(type, out);
        } else if constexpr (is_complex_v<T>) {
          return ParseComplex<T>(type, out);
        } else {
          return ParseFloat<T>(type, type, out);
        }
      },
      type);
}

absl::StatusOr<Literal> Parse(std::string_view text, const Shape& shape, bool whole,
                              size_t* consumed, size_t* error_offset) {
  auto fail = [&](size_t offset, std::string message) -> absl::Status {
    if (error_offset) *error_offset = offset;
    return absl::InvalidArgumentError(std::move(message));
  };
  int64_t bytes = CheckedByteSize(shape, 0);
  if (bytes < 0) {
    return fail(0, absl::StrCat("cannot parse a literal of shape ", shape.ToString(),
                                ": it is too large, too deeply nested, or unbounded"));
  }
  // Every element takes at least one byte of text, except with `{...}`.
  int64_t max_bytes = static_cast<int64_t>(text.size()) * 16;
  if (text.find("...") != std::string_view::npos)
    max_bytes = std::max(max_bytes, kMaxShorthandBytes);
  if (bytes > max_bytes) {
    return fail(0, absl::StrCat("the text is too short for a literal of shape ", shape.ToString()));
  }
  Literal literal(shape);
  LiteralParser parser(text);
  if (!parser.ParseInto(&literal, 0)) return fail(parser.error_offset(), parser.error());
  if (whole && parser.current().kind != Tok::kEof) {
    parser.FailAtToken("unexpected text after the literal");
    return fail(parser.error_offset(), parser.error());
  }
  if (consumed) *consumed = parser.last_end();
  return literal;
}

}  // namespace

std::string FloatBitsToString(PrimitiveType type, uint64_t bits) {
  double value = FloatBitsToDouble(type, bits);
  if (std::isnan(value)) {
    std::string out = std::signbit(value) ? "-nan" : "nan";
    int payload_bits = NanPayloadBits(type);
    if (payload_bits > 0) {
      uint64_t payload = bits & ((uint64_t{1} << payload_bits) - 1);
      if (payload != (uint64_t{1} << (payload_bits - 1))) {
        absl::StrAppendFormat(&out, "(0x%x)", payload);
      }
    }
    return out;
  }
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (type == F32) {
    std::string s = FormatG(std::numeric_limits<float>::digits10, value);
    if (std::strtof(s.c_str(), nullptr) == static_cast<float>(value)) return s;
    return FormatG(std::numeric_limits<float>::max_digits10, value);
  }
  if (type == F64) {
    std::string s = FormatG(std::numeric_limits<double>::digits10, value);
    if (std::strtod(s.c_str(), nullptr) == value) return s;
    return FormatG(std::numeric_limits<double>::max_digits10, value);
  }
  return FormatG(MaxDigits10(type), value);
}

std::string LiteralElementToString(const Literal& literal, int64_t linear_index) {
  return ElementString(literal, linear_index, /*pred_as_digit=*/false);
}

std::string PrintLiteral(const Literal& literal, const LiteralPrintOptions& options) {
  std::string out;
  LiteralPrinter(options, &out).Print(literal);
  return out;
}

std::string LiteralValueToHloText(const Literal& literal, bool print_large) {
  const Shape& shape = literal.shape();
  if (print_large || (shape.IsArray() && literal.element_count() <= 10)) {
    return PrintLiteral(literal, {.print_shape = false, .print_layout = false, .oneline = true});
  }
  return "{...}";
}

absl::StatusOr<Literal> ParseLiteralValue(std::string_view text, const Shape& shape) {
  size_t offset = 0;
  absl::StatusOr<Literal> result = ParseLiteralValue(text, shape, &offset);
  if (!result.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", offset, ": ", result.status().message()));
  }
  return result;
}

absl::StatusOr<Literal> ParseLiteralValue(std::string_view text, const Shape& shape,
                                          size_t* error_offset) {
  return Parse(text, shape, /*whole=*/true, nullptr, error_offset);
}

absl::StatusOr<Literal> ParseLiteralValuePrefix(std::string_view text, const Shape& shape,
                                                size_t* consumed, size_t* error_offset) {
  return Parse(text, shape, /*whole=*/false, consumed, error_offset);
}

// --- Literal's printing members ------------------------------------------- //

std::string Literal::ToString() const { return PrintLiteral(*this, {}); }
std::string Literal::ToStringWithoutShape() const {
  return PrintLiteral(*this, {.print_shape = false});
}
std::string Literal::ToStringOneline() const { return PrintLiteral(*this, {.oneline = true}); }
std::string Literal::ToStringWithoutShapeOneline() const {
  return PrintLiteral(*this, {.print_shape = false, .oneline = true});
}
std::string Literal::ToStringWithLayout() const {
  return PrintLiteral(*this, {.print_layout = true});
}
std::string Literal::ToStringWithLayoutOneline() const {
  return PrintLiteral(*this, {.print_layout = true, .oneline = true});
}

}  // namespace axle
