//===- host_ffi.cc - Typed custom calls on the host ------------------------===//
#include "axle/runtime/host_ffi.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace axle {
namespace {

// A recursive-descent reader of the MLIR attribute subset host_ffi.h lists.
class AttributeParser {
 public:
  explicit AttributeParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<FfiAttributes> ParseDictionary() {
    absl::StatusOr<FfiAttributes> attributes = ParseDictionaryBody();
    if (!attributes.ok()) return attributes;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dictionary");
    return attributes;
  }

 private:
  // `{name = value, ...}` at the current position.
  absl::StatusOr<FfiAttributes> ParseDictionaryBody() {
    FfiAttributes attributes;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    SkipSpace();
    if (!Consume('}')) {
      while (true) {
        absl::StatusOr<std::string> name = ParseName();
        if (!name.ok()) return name.status();
        SkipSpace();
        if (!Consume('=')) return Error(absl::StrCat("expected '=' after '", *name, "'"));
        element_type_.clear();
        absl::StatusOr<FfiAttribute> value = ParseValue();
        if (!value.ok()) return value.status();
        attributes.Set(*name, *std::move(value));
        attributes.SetElementType(*name, element_type_);
        SkipSpace();
        if (Consume('}')) break;
        if (!Consume(',')) return Error("expected ',' or '}'");
      }
    }
    return attributes;
  }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("backend_config \"", text_, "\": ", what, " at offset ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    size_t end = pos_ + word.size();
    if (end < text_.size() && (absl::ascii_isalnum(text_[end]) || text_[end] == '_')) return false;
    pos_ = end;
    return true;
  }
  std::optional<bool> ConsumeBool() {
    if (ConsumeWord("true")) return true;
    if (ConsumeWord("false")) return false;
    return std::nullopt;
  }
  absl::string_view Word() {
    size_t start = pos_;
    while (pos_ < text_.size() && (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '_' ||
                                   text_[pos_] == '.' || text_[pos_] == '$')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  absl::StatusOr<std::string> ParseString() {
    if (!Consume('"')) return Error("expected a string");
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case '"':
          case '\\':
            value += e;
            break;
          default:
            if (pos_ < text_.size() && absl::ascii_isxdigit(e) &&
                absl::ascii_isxdigit(text_[pos_])) {
              value += static_cast<char>(
                  std::strtol(std::string{e, text_[pos_++]}.c_str(), nullptr, 16));
            } else {
              return Error("bad escape in string");
            }
        }
      } else {
        value += c;
      }
    }
    if (!Consume('"')) return Error("unterminated string");
    return value;
  }

  absl::StatusOr<std::string> ParseName() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '"') return ParseString();
    absl::string_view name = Word();
    if (name.empty()) return Error("expected an attribute name");
    return std::string(name);
  }

  // A number's text: sign, digits, fraction, exponent (or hex).
  absl::string_view NumberText() {
    size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    while (pos_ < text_.size() && (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '.' ||
                                   ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                    (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  // ": type" after a scalar; returns the type's name, or "" when absent.
  absl::string_view OptionalType() {
    size_t save = pos_;
    SkipSpace();
    if (!Consume(':')) {
      pos_ = save;
      return "";
    }
    SkipSpace();
    absl::string_view type = Word();
    element_type_ = std::string(type);
    return type;
  }
  static bool IsFloatType(absl::string_view type) {
    return !type.empty() && (type[0] == 'f' || type == "bf16" || absl::StartsWith(type, "tf32"));
  }

  absl::StatusOr<FfiAttribute> ParseNumber(bool want_float) {
    absl::string_view number = NumberText();
    if (number.empty()) return Error("expected a value");
    bool looks_float = number.find_first_of(".eE") != absl::string_view::npos &&
                       !absl::StartsWith(number, "0x") && !absl::StartsWith(number, "-0x");
    if (want_float || looks_float) {
      double d;
      if (!absl::SimpleAtod(number, &d)) return Error(absl::StrCat("bad number '", number, "'"));
      return FfiAttribute(d);
    }
    int64_t i;
    if (!absl::SimpleAtoi(number, &i)) {
      uint64_t u;
      if (absl::StartsWith(number, "0x") && absl::SimpleHexAtoi(number, &u)) {
        return FfiAttribute(static_cast<int64_t>(u));
      }
      return Error(absl::StrCat("bad number '", number, "'"));
    }
    return FfiAttribute(i);
  }

  absl::StatusOr<FfiAttribute> ParseValue() {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a value");
    if (text_[pos_] == '"') {
      absl::StatusOr<std::string> s = ParseString();
      if (!s.ok()) return s.status();
      return FfiAttribute(*std::move(s));
    }
    if (std::optional<bool> value = ConsumeBool()) {
      OptionalType();
      return FfiAttribute(*value);
    }
    if (text_[pos_] == '{') {
      absl::StatusOr<FfiAttributes> nested = ParseDictionaryBody();
      if (!nested.ok()) return nested.status();
      element_type_.clear();
      return FfiAttribute(std::make_shared<const FfiAttributes>(*std::move(nested)));
    }
    if (ConsumeWord("array")) return ParseDenseArray();
    size_t start = pos_;
    absl::StatusOr<FfiAttribute> value = ParseNumber(false);
    if (!value.ok()) return value;
    absl::string_view type = OptionalType();
    if (IsFloatType(type) && std::holds_alternative<int64_t>(*value)) {
      pos_ = start;
      value = ParseNumber(true);
      OptionalType();
    } else if (type == "i1" && std::holds_alternative<int64_t>(*value)) {
      return FfiAttribute(std::get<int64_t>(*value) != 0);
    }
    return value;
  }

  // array<i32: 1, 2, 3> or array<f32: 0.5, 1.0>
  absl::StatusOr<FfiAttribute> ParseDenseArray() {
    SkipSpace();
    if (!Consume('<')) return Error("expected '<' after 'array'");
    SkipSpace();
    absl::string_view type = Word();
    element_type_ = std::string(type);
    bool is_float = IsFloatType(type);
    std::vector<int64_t> ints;
    std::vector<double> floats;
    SkipSpace();
    if (Consume(':')) {
      do {
        SkipSpace();
        if (std::optional<bool> value = ConsumeBool()) {
          ints.push_back(*value);
          SkipSpace();
          continue;
        }
        absl::StatusOr<FfiAttribute> element = ParseNumber(is_float);
        if (!element.ok()) return element;
        if (is_float) {
          floats.push_back(std::get<double>(*element));
        } else if (const int64_t* i = std::get_if<int64_t>(&*element)) {
          ints.push_back(*i);
        } else {
          return Error("a float in an integer array");
        }
        SkipSpace();
      } while (Consume(','));
    }
    SkipSpace();
    if (!Consume('>')) return Error("expected '>' to close the array");
    if (is_float) return FfiAttribute(std::move(floats));
    return FfiAttribute(std::move(ints));
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::string element_type_;  // the MLIR type of the value parsed last
};

}  // namespace

const FfiAttribute* FfiAttributes::Find(absl::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

absl::string_view FfiAttributes::ElementType(absl::string_view name) const {
  auto it = element_types_.find(name);
  return it == element_types_.end() ? absl::string_view() : absl::string_view(it->second);
}

absl::StatusOr<FfiAttributes> ParseFfiAttributes(absl::string_view backend_config) {
  if (absl::StripAsciiWhitespace(backend_config).empty()) return FfiAttributes();
  return AttributeParser(backend_config).ParseDictionary();
}

FfiHandlerRegistry* FfiHandlerRegistry::Global() {
  static auto* registry = new FfiHandlerRegistry;
  return registry;
}

absl::Status FfiHandlerRegistry::Register(const std::string& name, const std::string& platform,
                                          FfiHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = handlers_.try_emplace({name, platform}, std::move(handler));
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat("an FFI handler for custom-call target '", name,
                                                 "' on platform \"", platform,
                                                 "\" is already registered"));
  }
  return absl::OkStatus();
}

absl::StatusOr<FfiHandler> FfiHandlerRegistry::Find(const std::string& name,
                                                    const std::string& platform) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = handlers_.find({name, platform});
  if (it == handlers_.end()) {
    return absl::NotFoundError(absl::StrCat("no FFI handler is registered for custom-call target '",
                                            name, "' on platform \"", platform, "\""));
  }
  return it->second;
}

RegisterFfiHandler::RegisterFfiHandler(const std::string& name, const std::string& platform,
                                       FfiHandler handler) {
  absl::Status status = FfiHandlerRegistry::Global()->Register(name, platform, std::move(handler));
  if (!status.ok())
    std::fprintf(stderr, "axle: warning: %s\n", std::string(status.message()).c_str());
}

}  // namespace axle
