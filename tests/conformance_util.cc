#include "tests/conformance_util.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"

namespace axle::testing {

std::string CorpusRoot() {
  if (const char* dir = std::getenv("AXLE_CONFORMANCE_DIR")) return dir;
  return AXLE_DEFAULT_CONFORMANCE_DIR;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<CorpusEntry> ReadManifest() {
  std::vector<CorpusEntry> entries;
  std::ifstream in(CorpusRoot() + "/MANIFEST.tsv");
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (header.empty()) {
      header = fields;
      continue;
    }
    if (fields.size() != header.size()) continue;
    CorpusEntry entry;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (header[i] == "file") entry.file = fields[i];
      if (header[i] == "test_expects_error") entry.expects_error = fields[i] == "1";
      if (header[i] == "custom_call") entry.custom_call = fields[i] == "1";
      if (header[i] == "collectives") entry.collectives = fields[i] == "1";
    }
    entry.path = CorpusRoot() + "/" + entry.file;
    entries.push_back(entry);
  }
  return entries;
}

}  // namespace axle::testing
