//===- literal_text.h - XLA's literal text: printing and parsing ----------===//
//
// Literal values in XLA's text syntax, as xla::Literal::ToString prints them
// and as the HLO printer prints constants:
//
//   f32[] 1                      scalars: the value alone
//   f32[3] {1, 2, 3}             rank 1
//   f32[2,2] {                   rank 2 and up: one line per innermost row
//     { 1, 2 },                  (rank > 3 adds /*i0=0*/ index comments)
//     { 3, 4 }
//   }
//   (                            tuples: one element per line
//   f32[] 1,
//   s32[] 2
//   )
//   token                        tokens
//
// pred arrays print 0/1 (pred scalars true/false). Floats print the shortest
// "%.Ng" that round-trips (f32: 6 digits if that round-trips, else 9; f64: 15
// or 17; narrow floats: their max_digits10), inf/-inf, nan/-nan, and a NaN
// payload other than the quiet one as nan(0x1). Complex: (re, im).
//
// The parser reads a literal value for a given shape and accepts what XLA's
// HLO parser accepts after `constant(`: nested braces per dimension, commas
// (XLA skips them wherever they are), `{...}` (zero-filled), /*comments*/,
// true/false, decimal integers, decimals with exponents, inf, -inf, nan,
// -nan, nan(0x...), (re, im) for complex, ( , ) for tuples, `token`. It also
// keeps -0 (XLA reads "-0" as an integer and loses the sign), so that print
// -> parse -> print is a fixed point for every type and value.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_LITERAL_TEXT_H_
#define AXLE_CORE_LITERAL_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"

namespace axle {

struct LiteralPrintOptions {
  bool print_shape = true;    // "f32[2] " before each array value
  bool print_layout = false;  // the shape with its layout: "f32[2,2]{1,0}"
  bool oneline = false;       // everything on one line
};

// The whole literal in XLA's text (Literal::ToString and friends call this).
std::string PrintLiteral(const Literal& literal, const LiteralPrintOptions& options = {});

// One element of an array literal, by row-major index: "1", "-0", "nan(0x1)",
// "(1, 2)", "true".
std::string LiteralElementToString(const Literal& literal, int64_t linear_index);

// A float value of `type` (any real float type) the way XLA prints it.
// `bits` is the value's bit pattern (needed for NaN payloads), in the low bits.
std::string FloatBitsToString(PrimitiveType type, uint64_t bits);

// What XLA's HLO printer puts inside `constant(...)`: the one-line value
// without shape, or "{...}" for tuples and for arrays of more than 10
// elements unless `print_large` (Axle's canonical printer passes true, so
// that text round-trips).
std::string LiteralValueToHloText(const Literal& literal, bool print_large);

// Parses the whole of `text` as a literal value of `shape` (array, tuple or
// token; the array's layout is kept, missing layouts become the default).
// Errors are InvalidArgument; this overload prefixes the message with
// "offset N: " where N is the byte offset in `text` of the problem.
absl::StatusOr<Literal> ParseLiteralValue(std::string_view text, const Shape& shape);

// The same, but the message has no prefix and the offset goes to
// `*error_offset` (when not null) so that a caller can turn it into line:col.
absl::StatusOr<Literal> ParseLiteralValue(std::string_view text, const Shape& shape,
                                          size_t* error_offset);

// Parses one literal value at the start of `text` (after optional whitespace
// and comments) and stops right after it: `*consumed` gets the number of bytes
// used, so that a caller can go on with what follows (`)` of `constant(...)`).
absl::StatusOr<Literal> ParseLiteralValuePrefix(std::string_view text, const Shape& shape,
                                                size_t* consumed, size_t* error_offset);

}  // namespace axle

#endif  // AXLE_CORE_LITERAL_TEXT_H_
