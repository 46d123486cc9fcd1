//===- hlo_parser.h - Parsing XLA's HLO text format -----------------------===//
//
// Reads HLO text (what XLA's HloModule::ToString prints and what XLA's tests
// write by hand) into an HloModule, attribute for attribute. The result is
// not verified: shapes are taken as written (the verifier in
// axle/hlo/analysis checks them); only what the text itself gets wrong is an
// error here: syntax, unknown opcodes, operands or computations, attributes
// that the opcode does not take, malformed shardings, values out of range.
//
// Errors are InvalidArgument with the message
//
//   FILE:LINE:COL: error: what went wrong
//   <the source line>
//   <spaces>^
//
// The parser never crashes on bad input: nesting depth, numbers and shape
// sizes are bounded and checked.
//
// How text maps to the IR:
//   * array shapes written without a layout get the default (descending) one;
//   * attributes Axle has no typed field for are kept verbatim in
//     HloInstruction::raw_attributes (HloModuleConfig::raw_attributes for the
//     module header), in the order written;
//   * backend_config="..." is stored unescaped; backend_config={...} (JSON) is
//     stored as written, braces included;
//   * sharding={...} is stored as its canonical text (HloSharding);
//   * the async shorthand `op-start(...)`, `op-update(...)`, `op-done(...)`
//     becomes async-start / async-update / async-done with a wrapped
//     computation holding `op` (not yet taken: a start whose operands only
//     arrive in later updates, `dot-start()`, and `op-done` on a state that
//     no async op made, both in XLA's newest parser tests);
//   * an async-update/-done continues the async op whose state it takes,
//     also through copy, opt-barrier and tuple/get-tuple-element;
//   * `b(f32[16])` is a buffer shape (Shape::IsBuffer);
//   * a name spelled like a type (`s1 = ...`, `add(f32, x)`) is a name
//     wherever no `[` follows it;
//   * `%t#1#0` as an operand is a get-tuple-element chain (made once per
//     computation and index path);
//   * instruction names are unique per module: a name reused in another
//     computation gets a ".N" suffix, as XLA's module does.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_PARSER_H_
#define AXLE_HLO_TEXT_HLO_PARSER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/layout.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/ir/hlo_module_config.h"

namespace axle {

// Parses a whole module (`HloModule name, ...` followed by computations; the
// header may be left out, and then the module is named after the entry).
// `filename` only appears in error messages.
absl::StatusOr<std::unique_ptr<HloModule>> ParseAndReturnUnverifiedModule(
    absl::string_view text, absl::string_view filename = "<text>");

// The same, starting from `config` (the text's header attributes override
// its fields).
absl::StatusOr<std::unique_ptr<HloModule>> ParseAndReturnUnverifiedModule(
    absl::string_view text, const HloModuleConfig& config, absl::string_view filename = "<text>");

// One instruction, e.g. "ROOT r = f32[2] add(f32[2] x, f32[2] y)", as the
// root of the entry computation "single_instruction" of a module of that
// name; each operand named nowhere (it must state its shape) becomes a
// parameter, numbered in order of appearance. Nested instructions and
// attributes work as in a module; called computations cannot be written.
absl::StatusOr<std::unique_ptr<HloModule>> ParseSingleInstruction(absl::string_view text);

// One shape, e.g. "f32[2,<=3]{1,0}" or "(s32[], token[])"; a missing layout
// becomes the default one, as in a module.
absl::StatusOr<Shape> ParseShape(absl::string_view text);

// One layout, e.g. "{1,0}" or "{1,0:T(8,128)S(1)}".
absl::StatusOr<Layout> ParseLayout(absl::string_view text);

// One sharding, e.g. "{devices=[2,1]0,1}", returned in canonical form.
absl::StatusOr<HloSharding> ParseSharding(absl::string_view text);

}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_PARSER_H_
