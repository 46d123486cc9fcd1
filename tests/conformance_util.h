//===- conformance_util.h - Reading the HLO conformance corpus -------------===//
#ifndef AXLE_TESTS_CONFORMANCE_UTIL_H_
#define AXLE_TESTS_CONFORMANCE_UTIL_H_

#include <string>
#include <vector>

#include "axle/hlo/ir/hlo_module.h"

namespace axle::testing {

struct CorpusEntry {
  std::string file;  // relative to the corpus root, e.g. "exec/foo__1.hlo"
  std::string path;  // absolute path
  bool expects_error = false;
  bool custom_call = false;
  bool collectives = false;
};

// The corpus root: $AXLE_CONFORMANCE_DIR, else ../shared/conformance/hlo
// relative to the source tree.
std::string CorpusRoot();
// Every MANIFEST.tsv row; empty when the corpus is missing.
std::vector<CorpusEntry> ReadManifest();
std::string ReadWholeFile(const std::string& path);

// A rough count of the scalar operations one run of `module` performs:
// output elements for most ops, times the reduction length for dot and
// convolution; loops count once. Tests skip modules far beyond what the
// interpreter does in a second.
double EstimateCost(const HloModule& module);

}  // namespace axle::testing

#endif  // AXLE_TESTS_CONFORMANCE_UTIL_H_
