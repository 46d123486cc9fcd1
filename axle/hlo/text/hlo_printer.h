//===- hlo_printer.h - HLO modules as XLA's text format --------------------===//
//
// Prints instructions, computations and modules in XLA's HLO text, attribute
// for attribute as XLA's printer does (hlo_instruction.cc,
// hlo_instructions.cc, hlo_computation.cc, hlo_module.cc), so that text
// printed here reads the same as text printed by XLA.
//
// Axle's canonical text (HloModule::ToString(), HloPrintOptions::Canonical())
// is XLA's default format with every constant printed in full:
//
//   HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}
//
//   %add (x: f32[], y: f32[]) -> f32[] {
//     %x = f32[] parameter(0)
//     %y = f32[] parameter(1)
//     ROOT %add = f32[] add(%x, %y)
//   }
//
//   ENTRY %main (p: f32[2]) -> f32[2] {
//     ...
//   }
//
// - names with `%`; result shapes with their layouts; operands by name only
//   (XLA's default since print_operand_shape became false); `/*index=5*/`
//   before every fifth operand and every fifth tuple element;
// - computations callees first (XLA's DFS post order from the root
//   computations), ENTRY last; instructions in XLA's post order (operands
//   first operand first, control predecessors before both), or in their
//   stored order for the non-fusion computations of an `is_scheduled` module
//   (the stored order is the schedule);
// - async ops whose wrapped computation is a single instruction use XLA's
//   syntax sugar (`%s = ... custom-call-start(%p), custom_call_target="foo"`)
//   and the wrapped computation is not printed, where the parser rebuilds
//   the same wrapped op from the sugar (else they print in full);
// - attributes in XLA's order: the op's own, then called computations, then
//   sharding, frontend_attributes, control-predecessors, statistics,
//   result_accuracy, origin, metadata, backend_config. Raw attributes (kept
//   verbatim by the parser) print as `name=value`: those XLA prints in the
//   generic places (is_composite, statistics, result_accuracy, origin,
//   padding_type) there, the others after the op's own attributes.
//
// Printing is deterministic, and print(parse(print(m))) == print(m).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_PRINTER_H_
#define AXLE_HLO_TEXT_HLO_PRINTER_H_

#include <cstdint>
#include <string>

#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// Switches for the printer, with XLA's names and XLA's defaults (a
// default-constructed HloPrintOptions prints what XLA's does).
class HloPrintOptions {
 public:
  HloPrintOptions() = default;

  // XLA's default: large constants elided as {...}.
  static HloPrintOptions Default() { return HloPrintOptions(); }
  // Axle's canonical, round-trippable text: XLA's default with large
  // constants in full. What HloModule::ToString() prints.
  static HloPrintOptions Canonical() { return HloPrintOptions().set_print_large_constants(true); }
  // XLA's ShortParsable: no `%`, no metadata, no program shapes, no
  // control dependencies, no operand index comments.
  static HloPrintOptions ShortParsable() {
    return HloPrintOptions()
        .set_print_large_constants(true)
        .set_print_metadata(false)
        .set_print_operand_shape(false)
        .set_print_operand_index_annotation_interval(0)
        .set_print_program_shape(false)
        .set_print_percent(false)
        .set_print_control_dependencies(false);
  }

#define AXLE_PRINT_OPTION_(type, name, init) \
 public:                                     \
  HloPrintOptions& set_##name(type value) {  \
    name##_ = value;                         \
    return *this;                            \
  }                                          \
  type name() const { return name##_; }      \
                                             \
 private:                                    \
  type name##_ = init;

  // Arrays of more than 10 elements and tuple constants in full (else {...}).
  AXLE_PRINT_OPTION_(bool, print_large_constants, false)
  AXLE_PRINT_OPTION_(bool, print_metadata, true)
  AXLE_PRINT_OPTION_(bool, print_backend_config, true)
  AXLE_PRINT_OPTION_(bool, print_infeed_outfeed_config, true)
  AXLE_PRINT_OPTION_(bool, print_result_shape, true)
  // `add(f32[2]{0} %x, ...)`, as XLA printed by default until 2024.
  AXLE_PRINT_OPTION_(bool, print_operand_shape, false)
  AXLE_PRINT_OPTION_(bool, print_operand_names, true)
  // `/*index=N*/` before every N-th operand; 0 for none.
  AXLE_PRINT_OPTION_(int64_t, print_operand_index_annotation_interval, 5)
  // `%comp (p: f32[]) -> f32[] {` rather than `%comp {`.
  AXLE_PRINT_OPTION_(bool, print_program_shape, true)
  AXLE_PRINT_OPTION_(bool, print_percent, true)
  AXLE_PRINT_OPTION_(bool, print_control_dependencies, true)
  AXLE_PRINT_OPTION_(bool, include_layout_in_shapes, true)
  AXLE_PRINT_OPTION_(bool, syntax_sugar_async_ops, true)
#undef AXLE_PRINT_OPTION_
};

std::string ToString(const HloModule& module, const HloPrintOptions& options);
std::string ToString(const HloComputation& computation, const HloPrintOptions& options);
// One instruction, as it appears in its computation but without `ROOT`.
std::string ToString(const HloInstruction& instruction, const HloPrintOptions& options);

// A shape as XLA's ShapeUtil::HumanString[WithLayout] prints it, with
// `/*index=5*/` before every fifth tuple element.
std::string ShapeToHloString(const Shape& shape, bool print_layout = true);

// `entry_computation_layout={...}` without the braces:
// "(f32[2]{0}, s32[])->f32[2]{0}" (with /*index=5*/ every fifth parameter).
std::string ProgramShapeToLayoutString(const ProgramShape& program_shape);

}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_PRINTER_H_
