//===- host_kernel.h - Kernels that run graph nodes on the host -------------===//
//
// The fallback for nodes outside every cluster (mark_for_compilation.h): a
// host kernel computes a node's outputs from its inputs' values, as C++ on
// Literals, between the runs of the compiled clusters. It serves the ops
// whose output shape depends on the data (NonZero, Unique, Compress,
// NonMaxSuppression), which no static-shape computation can express, and any
// op that has a host kernel but no kernel for the device.
//
// Host kernels register like op kernels, keyed by (op type, domain, opset
// range); they serve every device:
//
//   REGISTER_HOST_KERNEL(Name("NonZero").SinceVersion(9), kDataDependentShape,
//                        NonZero);
//
// A kernel's errors name the node (HostKernelContext::Error).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_HOST_KERNEL_H_
#define AXLE_FRONTENDS_GRAPH_HOST_KERNEL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/frontends/graph/graph.h"
#include "axle/frontends/graph/xla_op_registry.h"

namespace axle::graph {

class HostKernelContext {
 public:
  HostKernelContext(const Node& node, int64_t opset, std::vector<const Literal*> inputs);

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }

  // Inputs, counting omitted optional ones ("" in the graph).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool HasInput(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  // Precondition: HasInput(i).
  const Literal& Input(int i) const { return *inputs_[i]; }
  // The input's elements as int64 (indices, axes, counts); an error unless
  // it is an integer array.
  absl::StatusOr<std::vector<int64_t>> InputAsIntVector(int i) const;
  // A scalar (or one-element) input as a double, `def` when omitted.
  absl::StatusOr<double> ScalarInput(int i, double def) const;

  absl::StatusOr<int64_t> GetAttrInt(const std::string& name, int64_t def) const;
  absl::StatusOr<std::optional<int64_t>> GetOptionalAttrInt(const std::string& name) const;
  absl::StatusOr<float> GetAttrFloat(const std::string& name, float def) const;

  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool HasOutput(int i) const { return i < num_outputs() && !node_.outputs[i].empty(); }
  void SetOutput(int i, Literal value);
  std::vector<std::optional<Literal>>& outputs() { return outputs_; }

  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(node_.Describe(), ": ", args...));
  }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<const Literal*> inputs_;
  std::vector<std::optional<Literal>> outputs_;
};

using HostKernelFn = std::function<absl::Status(HostKernelContext*)>;

// Whether the op's output shape depends on its input values (the reason a
// device kernel cannot exist), reported with the fallback.
enum HostKernelKind { kNoDeviceKernel, kDataDependentShape };

class HostKernelRegistry {
 public:
  static HostKernelRegistry& Global();

  // CHECK-fails on overlapping registrations for one op and domain.
  void Register(KernelDef def, HostKernelKind kind, HostKernelFn fn);

  struct Entry {
    KernelDef def;
    HostKernelKind kind;
    HostKernelFn fn;
  };
  // The kernel for `node` at `opset`, or null.
  const Entry* Find(const Node& node, int64_t opset) const;
  // "Op[since-until]" for every registration, sorted.
  std::vector<std::string> ListKernels() const;

 private:
  std::vector<Entry> entries_;
};

// Runs `node`'s host kernel on `inputs` (null for omitted ones); one literal
// per node output ("" outputs get an empty literal). Errors name the node.
absl::StatusOr<std::vector<Literal>> RunHostKernel(const Node& node, int64_t opset,
                                                   std::vector<const Literal*> inputs);

struct HostKernelRegistrar {
  HostKernelRegistrar(KernelDef def, HostKernelKind kind, HostKernelFn fn) {
    HostKernelRegistry::Global().Register(std::move(def), kind, std::move(fn));
  }
};

}  // namespace axle::graph

#define REGISTER_HOST_KERNEL(def, kind, fn)                     \
  static ::axle::graph::HostKernelRegistrar AXLE_XLA_OP_CONCAT( \
      axle_host_kernel_registrar_, __COUNTER__)(::axle::graph::def, ::axle::graph::kind, fn)

#endif  // AXLE_FRONTENDS_GRAPH_HOST_KERNEL_H_
