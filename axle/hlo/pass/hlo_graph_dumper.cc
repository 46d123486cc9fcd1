#include "axle/hlo/pass/hlo_graph_dumper.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "axle/base/file_io.h"
#include "axle/base/subprocess.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {
namespace {

// Longest label line and tooltip kept; tuples of many elements and long
// instructions are cut with "...".
constexpr size_t kMaxLabelLine = 64;
constexpr size_t kMaxTooltip = 1500;

std::string Truncate(std::string text, size_t limit) {
  if (text.size() > limit) {
    text.resize(limit);
    text += "...";
  }
  return text;
}

// A string inside DOT's double quotes.
std::string DotEscape(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

std::string HtmlEscape(absl::string_view text) {
  return absl::StrReplaceAll(text,
                             {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

// The op families the picture colours, with the legend's words.
enum class Family {
  kParameter,
  kConstant,
  kLibrary,  // dot, convolution, fft, custom-call, linear algebra
  kReduction,
  kDataMovement,
  kControlFlow,
  kCollective,
  kPlumbing,  // tuple, get-tuple-element, bitcast
  kElementwise,
};

struct FamilyStyle {
  Family family;
  const char* fill;
  const char* legend;
};

constexpr FamilyStyle kFamilyStyles[] = {
    {Family::kParameter, "#fff3b0", "parameter"},
    {Family::kConstant, "#e0e0e0", "constant, iota"},
    {Family::kLibrary, "#a6cee3", "dot, convolution, fft, custom-call, linear algebra"},
    {Family::kReduction, "#fdbf6f", "reduce, scatter, gather, sort, windows"},
    {Family::kDataMovement, "#cab2d6",
     "transpose, copy, broadcast, reshape, slice, pad, concatenate"},
    {Family::kControlFlow, "#b2df8a", "while, conditional, call"},
    {Family::kCollective, "#fb9a99", "collectives, send/recv, infeed/outfeed"},
    {Family::kPlumbing, "#ffffff", "tuple, get-tuple-element, bitcast"},
    {Family::kElementwise, "#ffffff", "elementwise and the rest"},
};

const char* FillColor(Family family) {
  for (const FamilyStyle& style : kFamilyStyles) {
    if (style.family == family) return style.fill;
  }
  return "#ffffff";
}

Family FamilyOf(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  if (HloOpcodeIsCollective(opcode)) return Family::kCollective;
  switch (opcode) {
    case HloOpcode::kParameter:
      return Family::kParameter;
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      return Family::kConstant;
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kFft:
    case HloOpcode::kCustomCall:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
      return Family::kLibrary;
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScatter:
    case HloOpcode::kGather:
    case HloOpcode::kSort:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kTopK:
      return Family::kReduction;
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
      return Family::kDataMovement;
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
      return Family::kControlFlow;
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
      return Family::kCollective;
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
      return Family::kPlumbing;
    default:
      return Family::kElementwise;
  }
}

// What the label says after the name: the opcode, made specific where that
// helps to read the picture.
std::string OpcodeLine(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
      return absl::StrCat("parameter ",
                          cast<HloParameterInstruction>(&instruction)->parameter_number());
    case HloOpcode::kGetTupleElement:
      return absl::StrCat("get-tuple-element ",
                          cast<HloGetTupleElementInstruction>(&instruction)->tuple_index());
    case HloOpcode::kCustomCall:
      return absl::StrCat("custom-call ",
                          cast<HloCustomCallInstruction>(&instruction)->custom_call_target());
    case HloOpcode::kFusion:
      return absl::StrCat(
          "fusion ", FusionKindToString(cast<HloFusionInstruction>(&instruction)->fusion_kind()));
    case HloOpcode::kConstant: {
      if (ShapeUtil::ElementsIn(instruction.shape()) > 1 || !instruction.shape().IsArray()) break;
      // The value as printed: "name = f32[] constant(1)".
      const std::string text = instruction.ToString(HloPrintOptions::ShortParsable());
      const size_t open = text.find("constant(");
      const size_t close = text.rfind(')');
      if (open == std::string::npos || close == std::string::npos || close < open) break;
      return std::string(absl::string_view(text).substr(open, close - open + 1));
    }
    default:
      break;
  }
  return std::string(HloOpcodeString(instruction.opcode()));
}

int64_t CountNodes(const HloModule& module) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    count += computation->instruction_count();
  }
  return count;
}

// Builds the DOT text: node ids, clusters, edges.
class DotBuilder {
 public:
  DotBuilder(const HloModule& module, const HloRenderOptions& options)
      : expand_fusions_(options.show_fusion_subcomputations &&
                        CountNodes(module) <= options.max_expanded_nodes) {}

  std::string Build(const HloModule& module, absl::string_view label) {
    absl::StrAppend(&out_, "digraph \"", DotEscape(module.name()), "\" {\n",
                    "  compound=true;\n  rankdir=TB;\n  labelloc=t;\n", "  label=\"",
                    DotEscape(label), "\";\n",
                    "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
                    "fontsize=10];\n",
                    "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n");
    const HloComputation* entry = module.entry_computation();
    if (entry != nullptr) {
      drawn_.insert(entry);
      DrawComputationBody(*entry, "  ");
    }
    // Called computations (loop bodies, branches) drawn after the entry, so
    // that the entry is laid out first.
    for (size_t i = 0; i < pending_.size(); ++i) {
      const HloComputation* computation = pending_[i].computation;
      absl::StrAppend(&out_, "  subgraph cluster_c", computation->unique_id(), " {\n",
                      "    label=\"", DotEscape(pending_[i].title), "\";\n",
                      "    style=\"rounded,dashed\";\n    color=\"#33a02c\";\n");
      DrawComputationBody(*computation, "    ");
      absl::StrAppend(&out_, "  }\n");
    }
    for (const std::string& edge : calls_) absl::StrAppend(&out_, edge);
    absl::StrAppend(&out_, "}\n");
    return std::move(out_);
  }

 private:
  struct PendingComputation {
    const HloComputation* computation;
    std::string title;
  };

  bool Expanded(const HloInstruction& instruction) const {
    return expand_fusions_ && instruction.opcode() == HloOpcode::kFusion;
  }

  std::string NodeId(const HloInstruction* instruction) {
    auto [it, inserted] = ids_.try_emplace(instruction, "");
    if (inserted) it->second = absl::StrCat("n", ids_.size());
    return it->second;
  }

  // The node an edge from `instruction`'s result starts at.
  std::string OutputNode(const HloInstruction* instruction) {
    while (Expanded(*instruction)) {
      instruction = cast<HloFusionInstruction>(instruction)
                        ->fused_instructions_computation()
                        ->root_instruction();
    }
    return NodeId(instruction);
  }

  void DrawNode(const HloInstruction& instruction, absl::string_view indent) {
    std::string label = absl::StrCat(
        instruction.name(), "\n", OpcodeLine(instruction), "\n",
        Truncate(ShapeUtil::HumanStringWithLayout(instruction.shape()), kMaxLabelLine));
    std::string tooltip = Truncate(instruction.ToString(), kMaxTooltip);
    const Family family = FamilyOf(instruction);
    absl::StrAppend(&out_, indent, NodeId(&instruction), " [label=\"", DotEscape(label),
                    "\", tooltip=\"", DotEscape(tooltip), "\", fillcolor=\"", FillColor(family),
                    "\"");
    if (family == Family::kPlumbing) absl::StrAppend(&out_, ", fontsize=8, color=\"#999999\"");
    if (family == Family::kLibrary) absl::StrAppend(&out_, ", penwidth=2");
    absl::StrAppend(&out_, "];\n");
  }

  void DrawFusionCluster(const HloFusionInstruction& fusion, absl::string_view indent) {
    const HloComputation* fused = fusion.fused_instructions_computation();
    absl::StrAppend(
        &out_, indent, "subgraph cluster_f", fused->unique_id(), " {\n", indent, "  label=\"",
        DotEscape(absl::StrCat(
            fusion.name(), " (", FusionKindToString(fusion.fusion_kind()), ")\n",
            Truncate(ShapeUtil::HumanStringWithLayout(fusion.shape()), kMaxLabelLine))),
        "\";\n", indent, "  tooltip=\"", DotEscape(Truncate(fusion.ToString(), kMaxTooltip)),
        "\";\n", indent, "  style=\"rounded,filled\";\n", indent, "  fillcolor=\"#f4f9ff\";\n",
        indent, "  color=\"#1f78b4\";\n");
    DrawComputationBody(*fused, absl::StrCat(indent, "  "));
    absl::StrAppend(&out_, indent, "}\n");
    // The fusion's operands flow into its fused parameters.
    for (int64_t i = 0; i < fusion.operand_count() && i < fused->num_parameters(); ++i) {
      absl::StrAppend(&out_, indent, OutputNode(fusion.operand(i)), " -> ",
                      NodeId(fused->parameter_instruction(i)), ";\n");
    }
  }

  // Queues a called computation for drawing (once) and joins its root to the
  // caller with a dashed edge.
  void DrawCall(const HloInstruction& caller, const HloComputation* callee,
                absl::string_view role) {
    if (drawn_.insert(callee).second) {
      pending_.push_back({callee, absl::StrCat(role, " of ", caller.name(), ": ", callee->name())});
    }
    const HloInstruction* root = callee->root_instruction();
    if (root == nullptr) return;
    calls_.push_back(absl::StrCat("  ", OutputNode(root), " -> ", NodeId(&caller),
                                  " [style=dashed, color=\"#33a02c\", label=\"", DotEscape(role),
                                  "\"];\n"));
  }

  void DrawCalledComputations(const HloInstruction& instruction) {
    const std::vector<HloComputation*>& called = instruction.called_computations();
    switch (instruction.opcode()) {
      case HloOpcode::kWhile:
        // XLA's order: condition, then body.
        if (called.size() == 2) {
          DrawCall(instruction, called[0], "condition");
          DrawCall(instruction, called[1], "body");
        }
        return;
      case HloOpcode::kConditional:
        for (size_t i = 0; i < called.size(); ++i) {
          DrawCall(instruction, called[i], absl::StrCat("branch ", i));
        }
        return;
      case HloOpcode::kCall:
      case HloOpcode::kAsyncStart:
        for (const HloComputation* callee : called) DrawCall(instruction, callee, "calls");
        return;
      default:
        // Reducers, comparators, scatter combiners: named in the tooltip.
        return;
    }
  }

  void DrawComputationBody(const HloComputation& computation, absl::string_view indent) {
    const std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
    for (const HloInstruction* instruction : order) {
      if (Expanded(*instruction)) {
        DrawFusionCluster(*cast<HloFusionInstruction>(instruction), indent);
        continue;
      }
      DrawNode(*instruction, indent);
      DrawCalledComputations(*instruction);
    }
    for (const HloInstruction* instruction : order) {
      if (Expanded(*instruction)) continue;
      const int64_t operands = instruction->operand_count();
      for (int64_t i = 0; i < operands; ++i) {
        absl::StrAppend(&out_, indent, OutputNode(instruction->operand(i)), " -> ",
                        NodeId(instruction));
        // Operand numbers where order matters and there is more than one.
        if (operands > 1 && !HloOpcodeIsElementwise(instruction->opcode())) {
          absl::StrAppend(&out_, " [label=\"", i, "\"]");
        }
        absl::StrAppend(&out_, ";\n");
      }
    }
    if (const HloInstruction* root = computation.root_instruction(); root != nullptr) {
      absl::StrAppend(&out_, indent, OutputNode(root), " [peripheries=2];\n");
    }
  }

  bool expand_fusions_ = true;
  std::string out_;
  absl::flat_hash_map<const HloInstruction*, std::string> ids_;
  absl::flat_hash_set<const HloComputation*> drawn_;
  std::vector<PendingComputation> pending_;
  std::vector<std::string> calls_;
};

// The table of the entry's top-level instructions: what runs, and on what.
std::string EntryTable(const HloModule& module) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return "";
  absl::flat_hash_map<std::string, int64_t> by_opcode;
  std::string rows;
  for (const HloInstruction* instruction : entry->MakeInstructionPostOrder()) {
    const Family family = FamilyOf(*instruction);
    if (family == Family::kParameter || family == Family::kConstant ||
        family == Family::kPlumbing) {
      continue;
    }
    ++by_opcode[std::string(HloOpcodeString(instruction->opcode()))];
    const Shape& shape = instruction->shape();
    const std::string bytes =
        shape.IsArray() ? absl::StrCat(ShapeUtil::ByteSizeOfElements(shape)) : "-";
    absl::StrAppend(&rows, "<tr><td style=\"background:", FillColor(family), "\">",
                    HtmlEscape(instruction->name()), "</td><td>",
                    HtmlEscape(OpcodeLine(*instruction)), "</td><td>",
                    HtmlEscape(Truncate(ShapeUtil::HumanStringWithLayout(shape), 200)),
                    "</td><td class=\"num\">", bytes, "</td><td>", instruction->operand_count(),
                    "</td></tr>\n");
  }
  std::vector<std::pair<std::string, int64_t>> counts(by_opcode.begin(), by_opcode.end());
  std::sort(counts.begin(), counts.end());
  std::string summary;
  for (const auto& [opcode, count] : counts) {
    absl::StrAppend(&summary, summary.empty() ? "" : ", ", count, " ", HtmlEscape(opcode));
  }
  return absl::StrCat(
      "<h2>Entry computation</h2>\n<p>Top-level instructions (each runs as a kernel, a library "
      "call, a copy or a control-flow step): ",
      summary.empty() ? "none" : summary, ".</p>\n",
      "<table>\n<tr><th>instruction</th><th>op</th><th>result</th><th>bytes</th>"
      "<th>operands</th></tr>\n",
      rows, "</table>\n");
}

std::string Legend() {
  std::string items;
  for (const FamilyStyle& style : kFamilyStyles) {
    absl::StrAppend(&items, "<span class=\"key\" style=\"background:", style.fill, "\">",
                    HtmlEscape(style.legend), "</span>\n");
  }
  return absl::StrCat(
      "<p class=\"legend\">", items,
      "<span class=\"key fusion\">fusion: one kernel</span>\n"
      "<span class=\"key\" style=\"border-style:dashed\">called computation</span></p>\n");
}

}  // namespace

std::string RenderModuleAsDot(const HloModule& module, absl::string_view label,
                              const HloRenderOptions& options) {
  DotBuilder builder(module, options);
  return builder.Build(module, label);
}

absl::StatusOr<std::string> RenderDotAsSvg(absl::string_view dot, const HloRenderOptions& options) {
  ScratchDirectory scratch("axle-dot");
  if (!scratch.ok()) {
    return absl::InternalError(
        absl::StrCat("no scratch directory for Graphviz: ", std::strerror(errno)));
  }
  const std::string input = scratch.File("graph.dot");
  const std::string output = scratch.File("graph.svg");
  const std::string log = scratch.File("dot.log");
  absl::Status written = WriteWholeFile(input, dot);
  if (!written.ok()) return written;
  absl::StatusOr<int> exit_code =
      RunProgram(options.dot_program, {"-Tsvg", "-o", output, input}, log);
  if (!exit_code.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "Graphviz's ", options.dot_program,
        " is not available (install the graphviz package): ", exit_code.status().message()));
  }
  if (*exit_code != 0) {
    return absl::InternalError(absl::StrCat("Graphviz's ", options.dot_program, " exited with ",
                                            *exit_code, ": ", ReadFileOrEmpty(log)));
  }
  std::string svg = ReadFileOrEmpty(output);
  // The page embeds the <svg> element itself, without the XML prologue.
  if (const size_t start = svg.find("<svg"); start != std::string::npos) svg.erase(0, start);
  return svg;
}

std::string RenderGraph(const HloModule& module, absl::string_view label,
                        RenderedGraphFormat format, const HloRenderOptions& options) {
  std::string dot = RenderModuleAsDot(module, label, options);
  if (format == RenderedGraphFormat::kDot) return dot;
  std::string picture;
  if (const int64_t nodes = CountNodes(module); nodes > options.max_svg_nodes) {
    picture =
        absl::StrCat("<p class=\"note\">The module has ", nodes, " instructions, more than the ",
                     options.max_svg_nodes, " laid out here; its DOT text follows.</p>\n<pre>",
                     HtmlEscape(dot), "</pre>\n");
  } else if (absl::StatusOr<std::string> svg = RenderDotAsSvg(dot, options); svg.ok()) {
    picture = absl::StrCat("<div class=\"graph\">", *svg, "</div>\n");
  } else {
    picture = absl::StrCat("<p class=\"note\">No picture: ", HtmlEscape(svg.status().message()),
                           ". The DOT text follows; `dot -Tsvg` renders it.</p>\n<pre>",
                           HtmlEscape(dot), "</pre>\n");
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>",
      HtmlEscape(module.name()), " - ", HtmlEscape(label), "</title>\n<style>\n",
      "body { font-family: Helvetica, Arial, sans-serif; margin: 1em; }\n"
      ".graph { overflow: auto; border: 1px solid #ccc; max-height: 90vh; }\n"
      ".key { display: inline-block; border: 1px solid #999; border-radius: 4px; "
      "padding: 1px 6px; margin: 2px; font-size: 12px; }\n"
      ".key.fusion { border: 2px solid #1f78b4; background: #f4f9ff; }\n"
      ".note { color: #a00; }\n"
      "table { border-collapse: collapse; font-size: 12px; }\n"
      "td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }\n"
      "td.num { text-align: right; }\n"
      "pre { font-size: 11px; background: #f7f7f7; padding: 8px; overflow: auto; }\n"
      "</style>\n</head>\n<body>\n<h1>",
      HtmlEscape(module.name()), "</h1>\n<p>", HtmlEscape(label),
      ". Hover over a node for its instruction's text.</p>\n", Legend(), picture,
      EntryTable(module), "<h2>Module text</h2>\n<details><summary>show</summary><pre>",
      HtmlEscape(ToString(module, HloPrintOptions())), "</pre></details>\n</body>\n</html>\n");
}

}  // namespace axle
