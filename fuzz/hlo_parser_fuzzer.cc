//===- hlo_parser_fuzzer.cc - libFuzzer target for the HLO text parser ----===//
//
// Any input must parse or fail with a status: no crash, no hang, no
// unbounded memory (run under ASan/UBSan, see CMakeLists.txt). A module that
// parses is printed and parsed again: the printed text must parse, and with
// AXLE_FUZZ_ROUND_TRIP=1 in the environment it must also print the same
// (print(parse(print(parse(x)))) == print(parse(x))).
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "axle/hlo/text/hlo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<axle::HloModule>> module =
      axle::ParseAndReturnUnverifiedModule(text, "<fuzz>");
  if (!module.ok()) return 0;
  std::string printed = (*module)->ToString();
  absl::StatusOr<std::unique_ptr<axle::HloModule>> reparsed =
      axle::ParseAndReturnUnverifiedModule(printed, "<printed>");
  static const bool check_round_trip = std::getenv("AXLE_FUZZ_ROUND_TRIP") != nullptr;
  if (!check_round_trip) return 0;
  if (!reparsed.ok()) {
    std::fprintf(stderr, "printed text does not parse:\n%s\n%s\n", printed.c_str(),
                 std::string(reparsed.status().message()).c_str());
    std::abort();
  }
  if ((*reparsed)->ToString() != printed) {
    std::fprintf(stderr, "print is not a fixed point:\n%s\n---\n%s\n", printed.c_str(),
                 (*reparsed)->ToString().c_str());
    std::abort();
  }
  return 0;
}
