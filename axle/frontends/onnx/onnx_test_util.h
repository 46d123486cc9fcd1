//===- onnx_test_util.h - Running ONNX test cases in tests ------------------===//
//
// ONNX's test-case layout: a folder with model.onnx and test_data_set_N/
// holding input_K.pb and output_K.pb (serialized TensorProtos). RunCase
// runs every data set of a case through a Session and compares each output
// with the expected one (|e - a| <= 1e-5 or relative 1e-3, ONNX's rtol).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_
#define AXLE_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "axle/core/literal.h"
#include "axle/frontends/graph/graph.h"

namespace axle::onnx {

struct CaseResult {
  absl::Status status;  // OK: every data set matched
  // The outputs of the last data set run (empty on a load or compile error).
  std::vector<Literal> outputs;
};

CaseResult RunCase(const std::string& dir, const std::string& platform);

// Whether a case draws random values (Bernoulli, RandomUniform(Like),
// RandomNormal(Like), Multinomial, or Dropout in training mode), so that
// its expected outputs are one sample, not the answer.
bool IsRandomCase(const std::string& dir);

// A random case, checked as onnxruntime documents random ops: not bit for
// bit but by shape, type, support, statistics and seeded determinism. Runs
// the first data set `runs` times and checks
// - each output's shape and element type against the expected one;
// - support: Bernoulli's outputs are 0 or 1; Dropout's y is 0 or
//   x / (1 - ratio), exactly where its mask is false or true;
// - statistics over the runs: each Bernoulli element is 1 with frequency p
//   (the ONNX 1.12 function body of the _expanded cases draws 1 - p), a
//   Dropout element is kept with frequency 1 - ratio (within 0.1 and 0.03);
// - the runs differ, and a second session repeats the first one's first
//   runs bit for bit.
// `outputs` is the first run's.
CaseResult RunRandomCase(const std::string& dir, const std::string& platform, int runs = 200);

// A data set's PREFIX0.pb, PREFIX1.pb, ... (in `dir`), each as the graph
// declares it (`declared`: the graph's inputs or outputs; bf16 tensors that
// libonnx-testdata stores as u16 are read as bf16).
absl::StatusOr<std::vector<Literal>> LoadValues(const std::string& dir, const std::string& prefix,
                                                const std::vector<graph::ValueInfo>& declared);

// The op types of a case's model ("?" when it does not load).
std::string CaseOps(const std::string& dir);

// A node of the tests' hand-built graphs.
graph::Node MakeNode(std::string name, std::string op, std::vector<std::string> in,
                     std::vector<std::string> out);

// Subdirectories of `dir`, sorted by name.
std::vector<std::string> ListDirs(const std::string& dir);

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_
