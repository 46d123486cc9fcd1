//===- host_kernel.cc - The host kernel registry and context ----------------===//
#include "axle/frontends/graph/host_kernel.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "axle/frontends/graph/string_tensor.h"

namespace axle::graph {

HostKernelContext::HostKernelContext(const Node& node, int64_t opset,
                                     std::vector<const Literal*> inputs)
    : node_(node), opset_(opset), inputs_(std::move(inputs)), outputs_(node.outputs.size()) {}

absl::StatusOr<std::vector<int64_t>> HostKernelContext::InputAsIntVector(int i) const {
  const Literal& value = Input(i);
  if (!value.shape().IsArray() || !primitive_util::IsIntegralType(value.shape().element_type())) {
    return Error("input ", i, " ('", node_.inputs[i], "') must be integers, got ",
                 value.shape().ToString(false));
  }
  std::vector<int64_t> out(value.element_count());
  for (int64_t k = 0; k < static_cast<int64_t>(out.size()); ++k) {
    out[k] = *value.GetIntegralAsS64(k);
  }
  return out;
}

absl::StatusOr<double> HostKernelContext::ScalarInput(int i, double def) const {
  if (!HasInput(i)) return def;
  const Literal& value = Input(i);
  if (!value.shape().IsArray() || value.element_count() != 1) {
    return Error("input ", i, " ('", node_.inputs[i], "') must hold one element, got ",
                 value.shape().ToString(false));
  }
  return value.GetAsDouble(0);
}

absl::StatusOr<int64_t> HostKernelContext::GetAttrInt(const std::string& name, int64_t def) const {
  absl::StatusOr<std::optional<int64_t>> v = GetOptionalAttrInt(name);
  if (!v.ok()) return v.status();
  return v->value_or(def);
}

absl::StatusOr<std::optional<int64_t>> HostKernelContext::GetOptionalAttrInt(
    const std::string& name) const {
  auto it = node_.attrs.find(name);
  if (it == node_.attrs.end()) return std::optional<int64_t>();
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return std::optional<int64_t>(*v);
  return Error("attribute '", name, "' must be an int");
}

absl::StatusOr<float> HostKernelContext::GetAttrFloat(const std::string& name, float def) const {
  auto it = node_.attrs.find(name);
  if (it == node_.attrs.end()) return def;
  if (const float* v = std::get_if<float>(&it->second)) return *v;
  return Error("attribute '", name, "' must be a float");
}

void HostKernelContext::SetOutput(int i, Literal value) {
  CHECK_LT(i, num_outputs()) << node_.Describe();
  outputs_[i] = std::move(value);
}

HostKernelRegistry& HostKernelRegistry::Global() {
  static HostKernelRegistry* registry = new HostKernelRegistry;
  return *registry;
}

void HostKernelRegistry::Register(KernelDef def, HostKernelKind kind, HostKernelFn fn) {
  CHECK_LE(def.since_version, def.until_version) << def.op_type;
  for (const Entry& e : entries_) {
    CHECK(e.def.op_type != def.op_type || e.def.domain != def.domain ||
          e.def.since_version > def.until_version || def.since_version > e.def.until_version)
        << "two host kernels registered for " << def.op_type;
  }
  entries_.push_back({std::move(def), kind, std::move(fn)});
}

const HostKernelRegistry::Entry* HostKernelRegistry::Find(const Node& node, int64_t opset) const {
  const std::string& domain = node.domain == "ai.onnx" ? std::string() : node.domain;
  for (const Entry& e : entries_) {
    if (e.def.op_type == node.op_type && e.def.domain == domain && e.def.since_version <= opset &&
        opset <= e.def.until_version) {
      return &e;
    }
  }
  return nullptr;
}

std::vector<std::string> HostKernelRegistry::ListKernels() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.def.Describe());
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::vector<Literal>> RunHostKernel(const Node& node, int64_t opset,
                                                   std::vector<const Literal*> inputs) {
  const HostKernelRegistry::Entry* entry = HostKernelRegistry::Global().Find(node, opset);
  if (!entry) {
    return absl::UnimplementedError(absl::StrCat(node.Describe(), ": no host kernel for op '",
                                                 node.op_type, "' at opset ", opset));
  }
  for (const Literal* in : inputs) {
    if (in && !in->shape().IsArray() && !IsStringTensorShape(in->shape())) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.Describe(), ": inputs must be arrays or string tensors, got ",
                       in->shape().ToString()));
    }
  }
  HostKernelContext ctx(node, opset, std::move(inputs));
  if (absl::Status s = entry->fn(&ctx); !s.ok()) {
    if (absl::StrContains(s.message(), node.Describe())) return s;
    return absl::Status(s.code(), absl::StrCat(node.Describe(), ": ", s.message()));
  }
  return TakeKernelOutputs(node, ctx.outputs(), "host kernel");
}

}  // namespace axle::graph
