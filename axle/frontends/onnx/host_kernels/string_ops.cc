//===- string_ops.cc - String tensors on the host ---------------------------===//
//
// Strings have no device type (graph/string_tensor.h), so the nodes that
// read or make them run here (mark_for_compilation.h places them):
// - Cast / CastLike to a string: numbers in their shortest round-trip form
//   (std::to_chars: "0.039187793"), NaN as "NaN", infinities as "INF" and
//   "-INF", bools as "1" / "0";
// - Cast / CastLike from a string: strtof / strtod / strtoll, which accept
//   "NaN", "INF", "+INF", "-INF" and exponents; a string that is not a
//   whole number of the target type is an error naming the node;
// - StringNormalizer: stopwords removed (compared case-insensitively unless
//   is_case_sensitive), then LOWER / UPPER / NONE (ASCII; the locale
//   attribute is not honoured); an input of [C] or [1, C]; when nothing is
//   left the output holds one empty string, as ONNX specifies;
// - Identity of a string tensor.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/graph/string_tensor.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

using graph::HostKernelContext;

constexpr int64_t kOnnxString = 8;

std::string NumberToString(const Literal& x, int64_t i) {
  PrimitiveType type = x.shape().element_type();
  char buffer[64];
  if (primitive_util::IsFloatingPointType(type)) {
    double v = x.GetAsDouble(i);
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    std::to_chars_result r =
        type == F64 ? std::to_chars(buffer, buffer + sizeof(buffer), v)
                    : std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(v));
    return std::string(buffer, r.ptr);
  }
  if (type == PRED) return x.GetAsDouble(i) != 0 ? "1" : "0";
  if (primitive_util::IsUnsignedIntegralType(type)) {
    uint64_t v = type == U64 ? x.data<uint64_t>()[i] : static_cast<uint64_t>(x.GetAsDouble(i));
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), v).ptr);
  }
  int64_t v = type == S64 ? x.data<int64_t>()[i] : static_cast<int64_t>(x.GetAsDouble(i));
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), v).ptr);
}

absl::Status ToStrings(HostKernelContext* ctx) {
  const Literal& x = ctx->Input(0);
  if (!x.shape().IsArray() || primitive_util::IsComplexType(x.shape().element_type())) {
    return ctx->Error("cannot cast ", x.shape().ToString(false), " to strings");
  }
  std::vector<std::string> out;
  out.reserve(x.element_count());
  for (int64_t i = 0; i < x.element_count(); ++i) out.push_back(NumberToString(x, i));
  ctx->SetOutput(0, graph::MakeStringTensor(
                        out, {x.shape().dimensions().begin(), x.shape().dimensions().end()}));
  return absl::OkStatus();
}

absl::Status FromStrings(HostKernelContext* ctx, PrimitiveType to) {
  absl::StatusOr<std::vector<std::string>> in =
      graph::ReadStringTensor(ctx->Input(0), ctx->node().Describe() + ": input 0");
  if (!in.ok()) return in.status();
  Literal out(ShapeUtil::MakeShape(to, graph::StringTensorDims(ctx->Input(0))));
  for (size_t i = 0; i < in->size(); ++i) {
    const std::string& s = (*in)[i];
    const char* begin = s.c_str();
    char* end = nullptr;
    errno = 0;
    if (primitive_util::IsFloatingPointType(to)) {
      double v = to == F64 ? std::strtod(begin, &end) : std::strtof(begin, &end);
      if (end == begin || *end != '\0') {
        return ctx->Error("string ", i, " '", s, "' is not a number");
      }
      out.SetFromDouble(static_cast<int64_t>(i), v);
    } else if (primitive_util::IsIntegralType(to) || to == PRED) {
      long long v = std::strtoll(begin, &end, 10);  // NOLINT(google-runtime-int)
      if (end == begin || *end != '\0' || errno == ERANGE) {
        return ctx->Error("string ", i, " '", s, "' is not a whole number");
      }
      out.SetFromDouble(static_cast<int64_t>(i), to == PRED ? (v != 0) : static_cast<double>(v));
    } else {
      return ctx->Error("cannot cast strings to ", primitive_util::LowercasePrimitiveTypeName(to));
    }
  }
  ctx->SetOutput(0, std::move(out));
  return absl::OkStatus();
}

bool IsStrings(const Literal& x) { return graph::IsStringTensorShape(x.shape()); }

absl::Status Cast(HostKernelContext* ctx) {
  bool to_string;
  PrimitiveType to = PRIMITIVE_TYPE_INVALID;
  if (ctx->node().op_type == "CastLike") {
    if (!ctx->HasInput(1)) return ctx->Error("CastLike needs its second input");
    to_string = IsStrings(ctx->Input(1));
    if (!to_string) to = ctx->Input(1).shape().element_type();
  } else {
    absl::StatusOr<int64_t> number = ctx->GetAttrInt("to", -1);
    if (!number.ok()) return number.status();
    to_string = *number == kOnnxString;
    if (!to_string) {
      absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*number));
      if (!type.ok()) {
        return absl::UnimplementedError(
            absl::StrCat(ctx->node().Describe(), ": cast to ", type.status().message()));
      }
      to = *type;
    }
  }
  const bool from_string = IsStrings(ctx->Input(0));
  if (from_string && to_string) {
    ctx->SetOutput(0, ctx->Input(0).Clone());
    return absl::OkStatus();
  }
  if (to_string) return ToStrings(ctx);
  if (from_string) return FromStrings(ctx, to);
  return ctx->Error("the host runs Cast only on strings");
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

absl::Status StringNormalizer(HostKernelContext* ctx) {
  const graph::Node& node = ctx->node();
  std::string action = "NONE";
  if (auto it = node.attrs.find("case_change_action"); it != node.attrs.end()) {
    if (!std::holds_alternative<std::string>(it->second)) {
      return ctx->Error("attribute 'case_change_action' must be a string");
    }
    action = std::get<std::string>(it->second);
  }
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx->Error("case_change_action '", action, "' is not LOWER, UPPER or NONE");
  }
  absl::StatusOr<int64_t> sensitive = ctx->GetAttrInt("is_case_sensitive", 0);
  if (!sensitive.ok()) return sensitive.status();
  std::set<std::string> stopwords;
  if (auto it = node.attrs.find("stopwords"); it != node.attrs.end()) {
    if (!std::holds_alternative<std::vector<std::string>>(it->second)) {
      return ctx->Error("attribute 'stopwords' must be a list of strings");
    }
    for (const std::string& w : std::get<std::vector<std::string>>(it->second)) {
      stopwords.insert(*sensitive ? w : Lower(w));
    }
  }
  absl::StatusOr<std::vector<std::string>> in =
      graph::ReadStringTensor(ctx->Input(0), node.Describe() + ": input 0");
  if (!in.ok()) return in.status();
  std::vector<int64_t> dims = graph::StringTensorDims(ctx->Input(0));
  if (!(dims.size() == 1 || (dims.size() == 2 && dims[0] == 1))) {
    return ctx->Error("input must be [C] or [1, C], got rank ", dims.size());
  }
  std::vector<std::string> out;
  for (const std::string& s : *in) {
    if (stopwords.count(*sensitive ? s : Lower(s))) continue;
    out.push_back(action == "LOWER" ? Lower(s) : action == "UPPER" ? Upper(s) : s);
  }
  if (out.empty()) out.emplace_back();
  dims.back() = static_cast<int64_t>(out.size());
  ctx->SetOutput(0, graph::MakeStringTensor(out, dims));
  return absl::OkStatus();
}

absl::Status Identity(HostKernelContext* ctx) {
  ctx->SetOutput(0, ctx->Input(0).Clone());
  return absl::OkStatus();
}

}  // namespace

REGISTER_HOST_KERNEL(Name("Cast"), kNoDeviceKernel, Cast);
REGISTER_HOST_KERNEL(Name("CastLike"), kNoDeviceKernel, Cast);
REGISTER_HOST_KERNEL(Name("StringNormalizer"), kNoDeviceKernel, StringNormalizer);
REGISTER_HOST_KERNEL(Name("Identity"), kNoDeviceKernel, Identity);

AXLE_ONNX_KERNEL_FILE(string)

}  // namespace axle::onnx
