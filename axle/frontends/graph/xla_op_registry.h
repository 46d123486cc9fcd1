//===- xla_op_registry.h - Op kernels by op, domain, opset and device -------===//
//
// tf2xla's XlaOpRegistry: kernels are registered at static-initialization
// time, keyed by (op type, domain, opset range, device type):
//
//   REGISTER_XLA_OP(Name("Conv"), ConvOp);                      // every device
//   REGISTER_XLA_OP(Name("Slice").SinceVersion(10), SliceOp);   // opsets 10..
//   REGISTER_XLA_OP(Name("Foo").Device(DEVICE_CPU), FooOp);     // cpu only
//
// Device types: DEVICE_CPU, DEVICE_INTERPRETER, DEVICE_CUDA.
//
// The opset range is of the domain's opset the model imports (ONNX picks an
// op's version as the newest at or below it). A kernel without Device()
// serves every device in kAllDevices. Lookup failing is an Unimplemented
// error naming the op, the opset and the node.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_XLA_OP_REGISTRY_H_
#define AXLE_FRONTENDS_GRAPH_XLA_OP_REGISTRY_H_

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/frontends/graph/xla_op_kernel.h"

namespace axle::graph {

inline constexpr char DEVICE_CPU[] = "cpu";
inline constexpr char DEVICE_INTERPRETER[] = "interpreter";
// The CUDA platform (axle/gpu/). A kernel serves it like the others; the
// graph front end itself needs no GPU to compile for it.
inline constexpr char DEVICE_CUDA[] = "cuda";
// The devices a kernel registered without Device() serves.
const std::vector<std::string>& AllDevices();

// A kernel's key; built fluently by Name(...).
struct KernelDef {
  std::string op_type;
  std::string domain;  // "" = the default ONNX domain
  int64_t since_version = 1;
  int64_t until_version = std::numeric_limits<int64_t>::max();
  std::vector<std::string> devices;  // empty: every device
  // Inputs the kernel reads with ConstantInput (tf2xla's
  // CompileTimeConstantInput): the JIT feeds graph inputs that reach them
  // as compile-time constants (see ConstantGraphInputs).
  std::vector<int> constant_inputs;
  // The outputs depend only on the inputs' shapes (Shape, Size): constness
  // does not propagate through the node's inputs.
  bool metadata_only = false;
  // The kernel takes sequences and optionals (XlaExpression's lists); the
  // compiler refuses a non-tensor input to any other kernel.
  bool non_tensor_inputs = false;

  // "domain.Op[since-until]" ("Op[7-]" in the default domain, no upper
  // bound): how ListKernels names the kernel.
  std::string Describe() const;

  KernelDef& Domain(std::string d) {
    domain = std::move(d);
    return *this;
  }
  KernelDef& SinceVersion(int64_t v) {
    since_version = v;
    return *this;
  }
  KernelDef& UntilVersion(int64_t v) {
    until_version = v;
    return *this;
  }
  KernelDef& Device(std::string d) {
    devices.push_back(std::move(d));
    return *this;
  }
  KernelDef& CompileTimeConstantInput(int input) {
    constant_inputs.push_back(input);
    return *this;
  }
  KernelDef& TakesNonTensors() {
    non_tensor_inputs = true;
    return *this;
  }
  KernelDef& MetadataOnly() {
    metadata_only = true;
    return *this;
  }
};
inline KernelDef Name(std::string op_type) {
  KernelDef def;
  def.op_type = std::move(op_type);
  return def;
}

using KernelFactory = std::function<std::unique_ptr<XlaOpKernel>()>;

class XlaOpRegistry {
 public:
  static XlaOpRegistry& Global();

  // CHECK-fails on a registration overlapping another for the same op,
  // domain and device (a bug in the kernels, not in any input).
  void Register(KernelDef def, KernelFactory factory);

  // A fresh kernel for `node` at `opset` on `device`.
  absl::StatusOr<std::unique_ptr<XlaOpKernel>> CreateKernel(const Node& node, int64_t opset,
                                                            const std::string& device) const;
  bool HasKernel(const std::string& op_type, const std::string& domain, int64_t opset,
                 const std::string& device) const;
  // The registration that serves the node, or null.
  const KernelDef* FindKernelDef(const Node& node, int64_t opset, const std::string& device) const;

  // "Op[since-until]" for every registration on `device`, sorted.
  std::vector<std::string> ListKernels(const std::string& device) const;

 private:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };
  const Entry* Find(const std::string& op_type, const std::string& domain, int64_t opset,
                    const std::string& device) const;
  std::vector<Entry> entries_;
};

// tf2xla's backwards constant analysis: the graph inputs whose values must
// be known at compile time because they reach, through nodes that are not
// metadata-only, an input some kernel declares CompileTimeConstantInput.
// Nodes without a kernel are skipped (compiling reports them).
std::vector<int> ConstantGraphInputs(const Graph& graph, const std::string& device);

struct XlaOpRegistrar {
  XlaOpRegistrar(KernelDef def, KernelFactory factory) {
    XlaOpRegistry::Global().Register(std::move(def), std::move(factory));
  }
};

}  // namespace axle::graph

#define AXLE_XLA_OP_CONCAT_INNER(a, b) a##b
#define AXLE_XLA_OP_CONCAT(a, b) AXLE_XLA_OP_CONCAT_INNER(a, b)
// The kernel class comes last so that template arguments need no parentheses.
#define REGISTER_XLA_OP(def, ...)                                                               \
  static ::axle::graph::XlaOpRegistrar AXLE_XLA_OP_CONCAT(axle_xla_op_registrar_, __COUNTER__)( \
      ::axle::graph::def, [] { return std::make_unique<__VA_ARGS__>(); })

#endif  // AXLE_FRONTENDS_GRAPH_XLA_OP_REGISTRY_H_
