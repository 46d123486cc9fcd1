// A program built the way a user builds against axle-aot's output: the
// generated classes (mlp_aot.h, cnn_aot.h and their objects) and the
// runtime library axle_aot_runtime, nothing else of Axle. It runs each
// model on its test_data_set_0 input and compares with the reference
// output (exit 1 naming the model and the element on a mismatch).
// tests/aot_runtime_link_test.sh runs it and checks that the binary holds
// no compiler: no libLLVM, no HLO parser, no passes.
//
// Usage: axle_aot_standalone TESTDATA_DIR
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cnn_aot.h"
#include "mlp_aot.h"

namespace {

// The raw_data of the TensorProto in `path` (field 9, length-delimited),
// which must hold `count` floats: ONNX writes it after the dims, the type
// and the name.
bool ReadRawFloats(const std::string& path, int64_t count, std::vector<float>& values) {
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Field 9, wire type 2, then the length as a varint.
  std::string prefix(1, static_cast<char>(0x4a));
  for (uint64_t length = static_cast<uint64_t>(count) * 4;; length >>= 7) {
    const auto byte = static_cast<unsigned char>(length & 0x7f);
    if (length < 0x80) {
      prefix.push_back(static_cast<char>(byte));
      break;
    }
    prefix.push_back(static_cast<char>(byte | 0x80));
  }
  const size_t at = bytes.find(prefix);
  if (at == std::string::npos || bytes.size() - at - prefix.size() < size_t(count) * 4) {
    std::fprintf(stderr, "%s: no raw_data of %lld floats\n", path.c_str(),
                 static_cast<long long>(count));
    return false;
  }
  values.resize(count);
  std::memcpy(values.data(), bytes.data() + at + prefix.size(), count * 4);
  return true;
}

template <typename Model>
bool Check(const std::string& testdata, const char* name) {
  Model model;
  if (!model.ok()) {
    std::fprintf(stderr, "%s: load failed: %s\n", name, model.error().c_str());
    return false;
  }
  const std::string dir = testdata + "/" + name + "/test_data_set_0/";
  std::vector<float> input, expected;
  if (!ReadRawFloats(dir + "input_0.pb", Model::kArg0Size, input) ||
      !ReadRawFloats(dir + "output_0.pb", Model::kResult0Size, expected)) {
    return false;
  }
  std::memcpy(model.arg0_data(), input.data(), input.size() * sizeof(float));
  if (!model.Run()) {
    std::fprintf(stderr, "%s: run failed: %s\n", name, model.error().c_str());
    return false;
  }
  for (int64_t i = 0; i < Model::kResult0Size; ++i) {
    const float got = model.result0_data()[i];
    if (!(std::fabs(got - expected[i]) <= 1e-4F)) {
      std::fprintf(stderr, "%s: element %lld is %g, the reference %g\n", name,
                   static_cast<long long>(i), got, expected[i]);
      return false;
    }
  }
  std::printf("%s: %lld results agree with the reference\n", name,
              static_cast<long long>(Model::kResult0Size));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TESTDATA_DIR\n", argv[0]);
    return 2;
  }
  const bool mlp = Check<axle_aot_test::mlp>(argv[1], "mlp");
  const bool cnn = Check<axle_aot_test::cnn>(argv[1], "cnn");
  return mlp && cnn ? 0 : 1;
}
