//===- hlo_graph_dumper.h - A module as a picture: Graphviz DOT and HTML ---===//
//
// What XLA's --xla_dump_hlo_as_dot / _as_html give: a module drawn as a
// graph, so that a user can see what was fused and where the time may go.
//
// - Nodes are instructions, labelled with name, opcode (or custom-call
//   target, fusion kind, parameter number, small constant's value) and the
//   result shape with its layout; the tooltip is the instruction's text.
//   Colours follow the op's family (see the legend on the HTML page).
// - A fusion is a cluster holding its fused instructions; edges enter at the
//   fused parameters and leave from the fused root.
// - A while loop's body and condition, a conditional's branches and a
//   call's callee are clusters of their own, joined to their caller by
//   dashed edges. Reducers and comparators (to_apply of reduce, sort, ...)
//   are named in their caller's tooltip rather than drawn.
//
// The HTML page is self-contained: the graph rendered to SVG by Graphviz's
// `dot` (the graphviz package) when it is found, a table of the entry's
// top-level instructions (what runs as a kernel, a library call or a
// copy), and the module's text.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PASS_HLO_GRAPH_DUMPER_H_
#define AXLE_HLO_PASS_HLO_GRAPH_DUMPER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

enum class RenderedGraphFormat { kDot, kHtml };

struct HloRenderOptions {
  // Draw each fusion's fused instructions inside its cluster. Modules with
  // more than `max_expanded_nodes` instructions draw each fusion as one node.
  bool show_fusion_subcomputations = true;
  int64_t max_expanded_nodes = 2000;
  // Graphviz's dot: a path, or a name looked up in PATH.
  std::string dot_program = "dot";
  // Graphs with more nodes than this are not laid out for the HTML page
  // (Graphviz takes minutes on them); the page says so and keeps the DOT.
  int64_t max_svg_nodes = 2000;
};

// The module as a Graphviz DOT digraph. `label` titles the graph.
std::string RenderModuleAsDot(const HloModule& module, absl::string_view label,
                              const HloRenderOptions& options = {});

// DOT text laid out as SVG by Graphviz's dot. NotFound naming Graphviz when
// the program is not there; Internal with dot's message when it fails.
absl::StatusOr<std::string> RenderDotAsSvg(absl::string_view dot,
                                           const HloRenderOptions& options = {});

// The module in `format`. kHtml always gives a page: when Graphviz is missing
// or fails, the page says why and holds the DOT text instead of the picture.
std::string RenderGraph(const HloModule& module, absl::string_view label,
                        RenderedGraphFormat format, const HloRenderOptions& options = {});

}  // namespace axle

#endif  // AXLE_HLO_PASS_HLO_GRAPH_DUMPER_H_
