//===- hlo_graph_dumper_test.cc - Tests of the DOT and HTML pictures ------===//
#include "axle/hlo/pass/hlo_graph_dumper.h"

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "axle/base/file_io.h"
#include "axle/base/subprocess.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// A loop fusion, a while loop with its condition and body, a reduce with its
// reducer, and a custom call whose text holds quotes.
constexpr absl::string_view kModule = R"(
HloModule pictured

fused_scale {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  m = f32[4]{0} multiply(p0, p1)
  ROOT e = f32[4]{0} exponential(m)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(next, y)
}

ENTRY main {
  pa = f32[4]{0} parameter(0)
  pb = f32[4]{0} parameter(1)
  f = f32[4]{0} fusion(pa, pb), kind=kLoop, calls=fused_scale
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, f)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  x = f32[4] get-tuple-element(w), index=1
  c = f32[4] custom-call(x), custom_call_target="my_target", backend_config="{\"k\": 1}"
  z = f32[] constant(0)
  ROOT r = f32[] reduce(c, z), dimensions={0}, to_apply=add
}
)";

std::unique_ptr<HloModule> Parse() {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

bool HaveGraphviz() { return RenderDotAsSvg("digraph g { a -> b; }\n").ok(); }

TEST(HloGraphDumperTest, DotDrawsFusionsAsClustersAndLoopsAsCalledComputations) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  const std::string dot = RenderModuleAsDot(*module, "after fusion");
  EXPECT_TRUE(absl::StartsWith(dot, "digraph \"pictured\" {")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "label=\"after fusion\""));
  // The fusion is a cluster holding its fused instructions.
  EXPECT_TRUE(absl::StrContains(dot, "subgraph cluster_f")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "f (kLoop)")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "m\\nmultiply\\nf32[4]{0}")) << dot;
  // Shapes show their layouts; small constants their values.
  EXPECT_TRUE(absl::StrContains(dot, "pa\\nparameter 0\\nf32[4]{0}")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "three\\nconstant(3)\\ns32[]")) << dot;
  // The loop's condition and body are clusters joined to it by dashed edges.
  EXPECT_TRUE(absl::StrContains(dot, "condition of w: cond")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "body of w: body")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "style=dashed")) << dot;
  // The reducer is not drawn: its instruction `s` = add appears only in the
  // reduce's tooltip.
  EXPECT_FALSE(absl::StrContains(dot, "s\\nadd\\nf32[]")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "to_apply=%add"));
  // The custom call names its target, and the quotes of its text are escaped.
  EXPECT_TRUE(absl::StrContains(dot, "custom-call my_target")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "custom_call_target=\\\"my_target\\\"")) << dot;
}

TEST(HloGraphDumperTest, LargeModulesDrawFusionsAsSingleNodes) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  HloRenderOptions options;
  options.max_expanded_nodes = 3;
  const std::string dot = RenderModuleAsDot(*module, "collapsed", options);
  EXPECT_FALSE(absl::StrContains(dot, "subgraph cluster_f")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "f\\nfusion kLoop\\nf32[4]{0}")) << dot;
  EXPECT_FALSE(absl::StrContains(dot, "m\\nmultiply")) << dot;
}

TEST(HloGraphDumperTest, DotIsValidGraphvizInput) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (scripts/setup does)";
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::string> svg = RenderDotAsSvg(RenderModuleAsDot(*module, "svg"));
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(absl::StartsWith(*svg, "<svg")) << svg->substr(0, 200);
  EXPECT_TRUE(absl::StrContains(*svg, "multiply"));
}

TEST(HloGraphDumperTest, HtmlPageHoldsPictureTableAndText) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (scripts/setup does)";
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  const std::string html = RenderGraph(*module, "after fusion", RenderedGraphFormat::kHtml);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(html, "<svg")) << html.substr(0, 2000);
  EXPECT_FALSE(absl::StrContains(html, "No picture"));
  // The entry's top-level instructions: the fusion, the loop, the custom
  // call and the reduce (parameters, constants and plumbing left out).
  EXPECT_TRUE(absl::StrContains(html, "1 custom-call, 1 fusion, 1 reduce, 1 while")) << html;
  EXPECT_TRUE(absl::StrContains(html, "<td>fusion kLoop</td>"));
  // The module's text, escaped.
  EXPECT_TRUE(absl::StrContains(html, "custom_call_target=&quot;my_target&quot;"));
  EXPECT_TRUE(absl::StrContains(html, "<pre>HloModule pictured"));
}

TEST(HloGraphDumperTest, HtmlWithoutGraphvizSaysWhyAndKeepsTheDot) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  HloRenderOptions options;
  options.dot_program = "/nonexistent/axle-test-dot";
  const std::string html = RenderGraph(*module, "no graphviz", RenderedGraphFormat::kHtml, options);
  EXPECT_TRUE(absl::StrContains(html, "No picture: Graphviz")) << html.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(html, "install the graphviz package"));
  EXPECT_TRUE(absl::StrContains(html, "digraph &quot;pictured&quot;"));
  EXPECT_FALSE(absl::StrContains(html, "<svg"));
  absl::StatusOr<std::string> svg = RenderDotAsSvg("digraph g {}", options);
  EXPECT_EQ(svg.status().code(), absl::StatusCode::kNotFound);
}

TEST(HloGraphDumperTest, BadDotIsAnErrorWithGraphvizsMessage) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (scripts/setup does)";
  absl::StatusOr<std::string> svg = RenderDotAsSvg("digraph { a -> ");
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::StrContains(svg.status().message(), "syntax error")) << svg.status();
}

// A pass that renames the module's root, so that the pipeline dumps.
class RenameRoot : public HloPassInterface {
 public:
  absl::string_view name() const override { return "rename-root"; }
  absl::StatusOr<bool> Run(HloModule* module) override {
    module->entry_computation()->root_instruction()->SetName("renamed_root");
    return true;
  }
};

TEST(HloGraphDumperTest, PipelineDumpsDotPerPassAndHtmlAtTheEnd) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  ScratchDirectory scratch("axle-graph-dump-test");
  ASSERT_TRUE(scratch.ok());
  const std::string dir = absl::StrCat(scratch.path(), "/dump");
  HloPassPipeline pipeline("pictures", /*verify_between_passes=*/false);
  pipeline.AddPass<RenameRoot>();
  pipeline.set_dump_dir(dir);
  ASSERT_TRUE(pipeline.Run(module.get()).ok());
  const std::string dot = ReadFileOrEmpty(dir + "/0000.pictured.rename-root.dot");
  EXPECT_TRUE(absl::StrContains(dot, "label=\"after rename-root\"")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "renamed_root\\nreduce")) << dot;
  EXPECT_TRUE(std::filesystem::exists(dir + "/0000.pictured.rename-root.hlo"));
  const std::string html = ReadFileOrEmpty(dir + "/pictured.pictures.html");
  EXPECT_TRUE(absl::StrContains(html, "after pipeline pictures")) << html.substr(0, 500);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace axle
