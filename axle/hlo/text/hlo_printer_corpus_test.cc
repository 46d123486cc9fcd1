// The printer against XLA's own text: the parser corpus's round-trip
// modules print back byte for byte, and canonical text is a fixed point.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_printer.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// XLA's HLO conformance corpus: AXLE_CONFORMANCE_DIR, else ../shared beside
// the checkout this file is in.
std::string CorpusRoot() {
  if (const char* dir = std::getenv("AXLE_CONFORMANCE_DIR")) return dir;
  std::string here = __FILE__;  // .../axle/hlo/text/hlo_printer_corpus_test.cc
  size_t pos = here.rfind("/axle/hlo/text/");
  if (pos == std::string::npos) return "";
  std::string checkout = here.substr(0, pos);
  return checkout.substr(0, checkout.rfind('/')) + "/shared/conformance/hlo";
}

// The file's text, or nullopt when the corpus is not there.
std::optional<std::string> ReadCorpusFile(const std::string& name) {
  std::ifstream in(CorpusRoot() + "/" + name, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string StripTrailingNewlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// XLA's parser tests check ToString(Parse(text)) == text, printing with
// HloPrintOptions().set_print_operand_shape(true).set_print_large_constants(true)
// ("long") or ShortParsable() ("short"). Axle's printer must give the same
// bytes. Together these cover fusion, while, conditional, custom-call,
// collectives, async shorthand and threads, sharding, metadata, convolution,
// gather/scatter, dot, control-predecessors, frontend_attributes, schedules,
// tuple constants, sort, reduce-window, rng, /*index=5*/, JSON backend
// configs and the stack frame index.
TEST(HloPrinterCorpusTest, PrintsXlaParserRoundTripTestsByteForByte) {
  struct Case {
    const char* file;
    bool short_form;
  };
  const Case cases[] = {
      {"parser/hlo_parser_test__1.hlo", false},   {"parser/hlo_parser_test__3.hlo", false},
      {"parser/hlo_parser_test__17.hlo", false},  {"parser/hlo_parser_test__18.hlo", false},
      {"parser/hlo_parser_test__24.hlo", false},  {"parser/hlo_parser_test__26.hlo", false},
      {"parser/hlo_parser_test__31.hlo", false},  {"parser/hlo_parser_test__37.hlo", false},
      {"parser/hlo_parser_test__41.hlo", false},  {"parser/hlo_parser_test__44.hlo", false},
      {"parser/hlo_parser_test__73.hlo", false},  {"parser/hlo_parser_test__99.hlo", false},
      {"parser/hlo_parser_test__100.hlo", false}, {"parser/hlo_parser_test__101.hlo", false},
      {"parser/hlo_parser_test__104.hlo", false}, {"parser/hlo_parser_test__111.hlo", false},
      {"parser/hlo_parser_test__116.hlo", true},  {"parser/hlo_parser_test__118.hlo", true},
      {"parser/hlo_parser_test__126.hlo", true},  {"parser/hlo_parser_test__128.hlo", true},
      {"parser/hlo_parser_test__132.hlo", true},  {"parser/hlo_parser_test__134.hlo", true},
      {"parser/hlo_parser_test__135.hlo", true},  {"parser/hlo_parser_test__141.hlo", true},
      {"parser/hlo_parser_test__142.hlo", true},  {"parser/hlo_parser_test__150.hlo", true},
      {"parser/hlo_parser_test__155.hlo", true},  {"parser/hlo_parser_test__170.hlo", true},
  };
  if (!ReadCorpusFile("MANIFEST.tsv").has_value()) GTEST_SKIP() << "no corpus at " << CorpusRoot();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::optional<std::string> text = ReadCorpusFile(c.file);
    ASSERT_TRUE(text.has_value());
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseAndReturnUnverifiedModule(*text, c.file);
    ASSERT_TRUE(module.ok()) << module.status();
    HloPrintOptions options =
        c.short_form
            ? HloPrintOptions::ShortParsable()
            : HloPrintOptions().set_print_operand_shape(true).set_print_large_constants(true);
    EXPECT_EQ(StripTrailingNewlines((*module)->ToString(options)), StripTrailingNewlines(*text));
  }
}

// print(parse(print(parse(x)))) == print(parse(x)) for modules from XLA's
// pass, backend and execution tests (hand-written text in many styles).
TEST(HloPrinterCorpusTest, CanonicalTextIsAFixedPoint) {
  const char* files[] = {
      "exec/all_reduce_test__1.hlo",
      "exec/batch_norm_grad_test__1.hlo",
      "exec/bitcast_convert_test__2.hlo",
      "other/diffrax.b380012920__1.hlo",
      "other/logical_buffer_analysis_test__14.hlo",
      "other/unflatten_call_graph_test__7.hlo",
      "other/host_offloading_prepare_test__5.hlo",
      "other/hlo_module_stitcher_test__1.hlo",
      "other/spmd_partitioner_test__101.hlo",
      "parser/hlo_parser_test__105.hlo",
      "parser/hlo_parser_test__110.hlo",
      "parser/hlo_parser_test__138.hlo",
      "parser/hlo_parser_test__358.hlo",
      "parser/hlo_parser_test__385.hlo",
      "parser/hlo_parser_test__394.hlo",
  };
  if (!ReadCorpusFile("MANIFEST.tsv").has_value()) GTEST_SKIP() << "no corpus at " << CorpusRoot();
  for (const char* file : files) {
    SCOPED_TRACE(file);
    std::optional<std::string> text = ReadCorpusFile(file);
    ASSERT_TRUE(text.has_value());
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(*text, file);
    ASSERT_TRUE(module.ok()) << module.status();
    std::string printed = (*module)->ToString();
    absl::StatusOr<std::unique_ptr<HloModule>> reparsed =
        ParseAndReturnUnverifiedModule(printed, "printed");
    ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << printed;
    EXPECT_EQ((*reparsed)->ToString(), printed);
  }
}

// Every string prints escaped, so that whatever the IR holds reads back.

}  // namespace
}  // namespace axle
