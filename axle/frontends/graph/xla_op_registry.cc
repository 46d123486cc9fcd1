//===- xla_op_registry.cc - The kernel registry -----------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace axle::graph {

const std::vector<std::string>& AllDevices() {
  static const std::vector<std::string> devices = {DEVICE_CPU, DEVICE_INTERPRETER, DEVICE_CUDA};
  return devices;
}

std::string KernelDef::Describe() const {
  std::string until =
      until_version == std::numeric_limits<int64_t>::max() ? "" : absl::StrCat(until_version);
  return absl::StrCat(domain.empty() ? "" : domain + ".", op_type, "[", since_version, "-", until,
                      "]");
}

XlaOpRegistry& XlaOpRegistry::Global() {
  static XlaOpRegistry* registry = new XlaOpRegistry;
  return *registry;
}

namespace {
bool Serves(const KernelDef& def, const std::string& device) {
  return def.devices.empty() ||
         std::find(def.devices.begin(), def.devices.end(), device) != def.devices.end();
}
}  // namespace

void XlaOpRegistry::Register(KernelDef def, KernelFactory factory) {
  CHECK_LE(def.since_version, def.until_version) << def.op_type;
  for (const Entry& e : entries_) {
    if (e.def.op_type != def.op_type || e.def.domain != def.domain) continue;
    bool versions_overlap =
        e.def.since_version <= def.until_version && def.since_version <= e.def.until_version;
    bool devices_overlap = false;
    for (const std::string& d : AllDevices()) {
      devices_overlap |= Serves(e.def, d) && Serves(def, d);
    }
    CHECK(!(versions_overlap && devices_overlap))
        << "two kernels registered for " << def.op_type << " opsets " << def.since_version << ".."
        << def.until_version;
  }
  entries_.push_back({std::move(def), std::move(factory)});
}

const XlaOpRegistry::Entry* XlaOpRegistry::Find(const std::string& op_type,
                                                const std::string& domain, int64_t opset,
                                                const std::string& device) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  for (const Entry& e : entries_) {
    if (e.def.op_type == op_type && e.def.domain == d && e.def.since_version <= opset &&
        opset <= e.def.until_version && Serves(e.def, device)) {
      return &e;
    }
  }
  return nullptr;
}

bool XlaOpRegistry::HasKernel(const std::string& op_type, const std::string& domain, int64_t opset,
                              const std::string& device) const {
  return Find(op_type, domain, opset, device) != nullptr;
}

absl::StatusOr<std::unique_ptr<XlaOpKernel>> XlaOpRegistry::CreateKernel(
    const Node& node, int64_t opset, const std::string& device) const {
  const Entry* e = Find(node.op_type, node.domain, opset, device);
  if (!e) {
    return absl::UnimplementedError(absl::StrCat(node.Describe(), ": no kernel for op '",
                                                 node.op_type, "' at opset ", opset, " on device '",
                                                 device, "'"));
  }
  return e->factory();
}

const KernelDef* XlaOpRegistry::FindKernelDef(const Node& node, int64_t opset,
                                              const std::string& device) const {
  const Entry* e = Find(node.op_type, node.domain, opset, device);
  return e ? &e->def : nullptr;
}

std::vector<int> ConstantGraphInputs(const Graph& graph, const std::string& device) {
  std::map<std::string, const Node*> producer;
  for (const Node& node : graph.nodes) {
    for (const std::string& out : node.outputs) producer[out] = &node;
  }
  std::vector<std::string> work;
  for (const Node& node : graph.nodes) {
    absl::StatusOr<int64_t> opset = graph.OpsetFor(node.domain);
    if (!opset.ok()) continue;
    const KernelDef* def = XlaOpRegistry::Global().FindKernelDef(node, *opset, device);
    if (!def) continue;
    for (int i : def->constant_inputs) {
      if (i < static_cast<int>(node.inputs.size()) && !node.inputs[i].empty()) {
        work.push_back(node.inputs[i]);
      }
    }
  }
  std::set<std::string> seen;
  std::set<std::string> constant_inputs;
  while (!work.empty()) {
    std::string value = work.back();
    work.pop_back();
    if (!seen.insert(value).second) continue;
    auto it = producer.find(value);
    if (it == producer.end()) {
      constant_inputs.insert(value);
      continue;
    }
    const Node& node = *it->second;
    absl::StatusOr<int64_t> opset = graph.OpsetFor(node.domain);
    const KernelDef* def =
        opset.ok() ? XlaOpRegistry::Global().FindKernelDef(node, *opset, device) : nullptr;
    if (def && def->metadata_only) continue;
    for (const std::string& in : node.inputs) {
      if (!in.empty()) work.push_back(in);
    }
  }
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(graph.inputs.size()); ++i) {
    // A sequence or optional is never a constant (its length, what kernels
    // read at compile time, is known from the signature).
    if (constant_inputs.count(graph.inputs[i].name) && graph.inputs[i].kind == ValueKind::kTensor) {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<std::string> XlaOpRegistry::ListKernels(const std::string& device) const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) {
    if (Serves(e.def, device)) out.push_back(e.def.Describe());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace axle::graph
