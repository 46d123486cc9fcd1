//===- graph_test_util.h - Building graphs in the graph front end's tests ---===//
//
// What graph_test.cc and mark_for_compilation_test.cc share: a node of the
// test kernels' domain.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_GRAPH_TEST_UTIL_H_
#define AXLE_FRONTENDS_GRAPH_GRAPH_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "axle/frontends/graph/graph.h"

namespace axle::graph {

// A node `name` of op `op` in `domain`, reading `in` and writing `out`.
inline Node MakeTestNode(std::string domain, std::string name, std::string op,
                         std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_GRAPH_TEST_UTIL_H_
