#include "tests/conformance_util.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "axle/hlo/ir/hlo_instructions.h"

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

double EstimateCost(const HloModule& module) {
  double cost = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      double elements = 0;
      ShapeUtil::ForEachLeafShape(instruction->shape(), [&](const Shape& shape, const ShapeIndex&) {
        if (shape.IsArray()) elements += static_cast<double>(shape.num_elements());
      });
      double per_element = 1;
      if (const auto* dot = dyn_cast<HloDotInstruction>(instruction)) {
        for (int64_t d : dot->dot_dimension_numbers().lhs_contracting_dimensions()) {
          per_element *= static_cast<double>(instruction->operand(0)->shape().dimensions(d));
        }
      } else if (const auto* conv = dyn_cast<HloConvolutionInstruction>(instruction)) {
        const auto& dnums = conv->convolution_dimension_numbers();
        const Shape& kernel = instruction->operand(1)->shape();
        per_element =
            static_cast<double>(kernel.dimensions(dnums.kernel_input_feature_dimension()));
        for (int64_t d : dnums.kernel_spatial_dimensions()) per_element *= kernel.dimensions(d);
      } else if (const auto* windowed = dyn_cast<HloWindowInstruction>(instruction)) {
        // Every output (or, for select-and-scatter, source) element folds a
        // whole window.
        for (const WindowDimension& d : windowed->window().dimensions()) {
          per_element *= static_cast<double>(d.size());
        }
      } else if (instruction->opcode() == HloOpcode::kReduce) {
        elements = 0;
        for (const HloInstruction* operand : instruction->operands()) {
          if (operand->shape().IsArray())
            elements += static_cast<double>(operand->shape().num_elements());
        }
      }
      cost += elements * per_element;
    }
  }
  return cost;
}

}  // namespace axle::testing
