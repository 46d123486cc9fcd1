//===- hlo_lexer.h - Tokens of XLA's HLO text format ----------------------===//
//
// Splits HLO text into the tokens of XLA's HloLexer: punctuation, keywords,
// primitive types, names (`%foo`, `foo:`), attribute names (`foo=`), the
// patterns of dim labels (`b01f_01io->b01f`), window sizes (`3x3`) and
// paddings (`1_1x0_0`), strings, integers and decimals. Comments (`/*...*/`
// and `//...`) and whitespace are skipped. Every token knows its byte range
// in the text, so that errors can point at line and column.
//
// The lexer is a small copyable value: the parser saves and restores it to
// look ahead. It never allocates per character and never backtracks more
// than one token, so lexing is linear in the text.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_LEXER_H_
#define AXLE_HLO_TEXT_HLO_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "axle/core/primitive_type.h"

namespace axle {

enum class TokKind {
  kEof,
  kError,
  // Punctuation.
  kEqual,         // =
  kComma,         // ,
  kColon,         // :
  kAsterisk,      // *
  kQuestionMark,  // ?
  kOctothorp,     // #
  kPlus,          // +
  kTilde,         // ~
  kLsquare,       // [
  kRsquare,       // ]
  kLbrace,        // {
  kRbrace,        // }
  kLparen,        // (
  kRparen,        // )
  kArrow,         // ->
  kLeq,           // <=
  kDots,          // ...
  // Keywords.
  kw_HloModule,
  kw_ENTRY,
  kw_ROOT,
  kw_true,
  kw_false,
  kw_maximal,
  kw_replicated,
  kw_manual,
  kw_last_tile_dim_replicate,
  kw_shard_as,
  kw_shard_like,
  kw_unknown,
  kw_unreduced,
  kw_inf,
  kw_FileNames,
  kw_FunctionNames,
  kw_FileLocations,
  kw_StackFrames,
  // Tokens with a value.
  kNegInf,         // -inf
  kPrimitiveType,  // f32, s8, token, ... (not "tuple")
  kName,           // %foo or foo:   (str_val is "foo")
  kAttributeName,  // foo=           (str_val is "foo")
  kDimLabels,      // b01f_01io->b01f
  kDxD,            // 1x2x3
  kPad,            // 1_2x3_4_5
  kIdent,          // other identifiers: opcodes, enum values, ...
  kString,         // "..." or '...' (str_val is unescaped)
  kInt,            // -12
  kDecimal,        // 1.5, 1e3, nan, -nan(0x1)
};

// "kLbrace" etc., for messages.
absl::string_view TokKindToString(TokKind kind);

class HloLexer {
 public:
  explicit HloLexer(absl::string_view text) : text_(text) {}

  // Lexes the next token and returns its kind.
  TokKind Lex();
  // The kind of the token after the current one (the lexer does not move).
  TokKind LookAhead() const;
  // With the current token a '{': lexes everything up to the matching '}' as
  // one kString token whose str_val is the raw text, braces included
  // (strings inside may contain braces). Returns kString or kError.
  TokKind LexJsonDict();
  // Moves to byte `offset` and lexes the token there.
  TokKind ResetTo(size_t offset);

  TokKind kind() const { return kind_; }
  size_t token_start() const { return token_start_; }
  size_t token_end() const { return pos_; }  // one past the current token
  absl::string_view token_text() const { return text_.substr(token_start_, pos_ - token_start_); }
  const std::string& str_val() const { return str_val_; }
  int64_t int64_val() const { return int64_val_; }
  double decimal_val() const { return decimal_val_; }
  PrimitiveType primitive_type_val() const { return primitive_type_val_; }
  // Why the current token is kError.
  const std::string& error_message() const { return error_message_; }

  absl::string_view text() const { return text_; }
  // 1-based line and column of a byte offset.
  std::pair<int, int> LineAndColumn(size_t offset) const;
  // The whole line holding byte `offset`, without its newline.
  absl::string_view LineAt(size_t offset) const;

 private:
  int Peek(size_t ahead = 0) const;
  TokKind LexToken();
  TokKind LexIdentifier();
  TokKind LexPercent();
  TokKind LexNumberOrPattern();
  TokKind LexString();
  TokKind Fail(std::string message);
  bool LexNanPayload(uint64_t* payload);

  absl::string_view text_;
  size_t pos_ = 0;
  size_t token_start_ = 0;
  TokKind kind_ = TokKind::kEof;
  std::string str_val_;
  int64_t int64_val_ = 0;
  double decimal_val_ = 0;
  PrimitiveType primitive_type_val_ = PRIMITIVE_TYPE_INVALID;
  std::string error_message_;
};

}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_LEXER_H_
