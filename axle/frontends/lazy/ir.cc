//===- ir.cc - The lazy-tensor IR: nodes, values, device data --------------===//
#include "axle/frontends/lazy/ir.h"

#include <cstring>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/logging.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/device.h"
#include "axle/frontends/lazy/metrics.h"

namespace axle::lazy {

uint64_t HashCombine(uint64_t seed, uint64_t value) {
  // splitmix64 of the value, folded into the seed.
  uint64_t z = value + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (seed ^ z) * 0x100000001b3ULL + (seed >> 17);
}

uint64_t HashString(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t HashShape(const Shape& shape) {
  uint64_t h = HashCombine(0x5348415045ULL, static_cast<uint64_t>(shape.element_type()));
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) h = HashCombine(h, HashShape(element));
    return h;
  }
  h = HashCombine(h, shape.dimensions().size());
  for (int64_t d : shape.dimensions()) h = HashCombine(h, static_cast<uint64_t>(d));
  return h;
}

namespace {

// Interned shapes by HashShape (entries of one hash: the colliding shapes).
// Arrays equal to ShapeUtil::MakeShape's have their own table, looked up by
// element type and dimensions without building a Shape.
struct ShapeTable {
  std::mutex mutex;
  absl::flat_hash_map<uint64_t, absl::InlinedVector<std::unique_ptr<Shape>, 1>> shapes;
  absl::flat_hash_map<uint64_t, absl::InlinedVector<std::unique_ptr<Shape>, 1>> arrays;
};

ShapeTable& Shapes() {
  static auto* table = new ShapeTable();
  return *table;
}

uint64_t HashArray(PrimitiveType type, absl::Span<const int64_t> dimensions) {
  uint64_t h = HashCombine(0x5348415045ULL, static_cast<uint64_t>(type));
  h = HashCombine(h, dimensions.size());
  for (int64_t d : dimensions) h = HashCombine(h, static_cast<uint64_t>(d));
  return h;
}

}  // namespace

const Shape& InternShape(const Shape& shape) {
  ShapeTable& table = Shapes();
  uint64_t hash = HashShape(shape);  // HashArray(type, dimensions) for an array
  std::lock_guard<std::mutex> lock(table.mutex);
  if (shape.IsArray()) {
    auto& arrays = table.arrays[hash];
    for (const auto& entry : arrays) {
      if (*entry == shape) return *entry;
    }
    // One copy per shape whichever form interns it first.
    if (shape == ShapeUtil::MakeShape(shape.element_type(), shape.dimensions())) {
      arrays.push_back(std::make_unique<Shape>(shape));
      return *arrays.back();
    }
  }
  auto& entries = table.shapes[hash];
  for (const auto& entry : entries) {
    if (*entry == shape) return *entry;
  }
  entries.push_back(std::make_unique<Shape>(shape));
  return *entries.back();
}

const Shape& InternShape(PrimitiveType type, absl::Span<const int64_t> dimensions) {
  ShapeTable& table = Shapes();
  uint64_t hash = HashArray(type, dimensions);
  std::lock_guard<std::mutex> lock(table.mutex);
  auto& entries = table.arrays[hash];
  for (const auto& entry : entries) {
    if (entry->element_type() == type && absl::MakeConstSpan(entry->dimensions()) == dimensions) {
      return *entry;
    }
  }
  entries.push_back(std::make_unique<Shape>(ShapeUtil::MakeShape(type, dimensions)));
  return *entries.back();
}

namespace {

uint64_t HashAttr(const Attr& attr) {
  uint64_t h = HashCombine(0x41545452ULL, attr.index());
  if (const auto* i = std::get_if<int64_t>(&attr)) return HashCombine(h, static_cast<uint64_t>(*i));
  if (const auto* d = std::get_if<double>(&attr)) {
    uint64_t bits = 0;
    std::memcpy(&bits, d, sizeof(bits));
    return HashCombine(h, bits);
  }
  if (const auto* v = std::get_if<std::vector<int64_t>>(&attr)) {
    h = HashCombine(h, v->size());
    for (int64_t x : *v) h = HashCombine(h, static_cast<uint64_t>(x));
    return h;
  }
  return HashCombine(h, HashString(std::get<std::string>(attr)));
}

std::string AttrToString(const Attr& attr) {
  if (const auto* i = std::get_if<int64_t>(&attr)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&attr)) return absl::StrCat(*d);
  if (const auto* v = std::get_if<std::vector<int64_t>>(&attr)) {
    return absl::StrCat("{", absl::StrJoin(*v, ","), "}");
  }
  return absl::StrCat("\"", std::get<std::string>(attr), "\"");
}

}  // namespace

DeviceData::DeviceData(ScopedShapedBuffer buffer)
    : shape_(&InternShape(buffer.on_device_shape())),
      buffer_(std::make_unique<ScopedShapedBuffer>(std::move(buffer))) {}

DeviceData::DeviceData(Literal literal)
    : shape_(&InternShape(literal.shape())), host_(std::move(literal)) {}

absl::StatusOr<const ShapedBuffer*> DeviceData::Buffer() {
  if (donated_) {
    return absl::FailedPreconditionError(absl::StrCat("lazy tensors: a value of shape ",
                                                      shape_->ToString(false),
                                                      " was donated to an earlier execution"));
  }
  if (buffer_ != nullptr) return buffer_.get();
  absl::StatusOr<LocalClient*> client = GetClient();
  if (!client.ok()) return client.status();
  metrics::ScopedTimer timer("TransferToDeviceTime");
  absl::StatusOr<ScopedShapedBuffer> buffer = (*client)->LiteralToShapedBuffer(*host_, 0);
  if (!buffer.ok()) return buffer.status();
  buffer_ = std::make_unique<ScopedShapedBuffer>(std::move(*buffer));
  host_.reset();
  return buffer_.get();
}

ExecutionInput DeviceData::Donate() {
  CHECK(buffer_ != nullptr && !donated_);
  donated_ = true;
  return ExecutionInput::Donate(buffer_.get());
}

absl::StatusOr<Literal> DeviceData::ToLiteral() {
  if (donated_) return Buffer().status();
  if (buffer_ == nullptr) return host_->Clone();
  absl::StatusOr<LocalClient*> client = GetClient();
  if (!client.ok()) return client.status();
  metrics::ScopedTimer timer("TransferFromDeviceTime");
  return (*client)->ShapedBufferToLiteral(*buffer_);
}

const Shape& Value::shape() const { return node->output_shape(index); }

uint64_t Value::hash() const { return HashCombine(node->hash(), static_cast<uint64_t>(index)); }

Node::Node(std::string op, std::vector<Value> operands, const Shape& shape, std::vector<Attr> attrs)
    : op_(std::move(op)),
      operands_(std::move(operands)),
      shape_(&InternShape(shape)),
      attrs_(std::move(attrs)) {
  uint64_t h = HashCombine(HashString(op_), HashShape(*shape_));
  h = HashCombine(h, attrs_.size());
  for (const Attr& attr : attrs_) h = HashCombine(h, HashAttr(attr));
  h = HashCombine(h, operands_.size());
  for (const Value& operand : operands_) h = HashCombine(h, operand.hash());
  hash_ = h;
}

std::shared_ptr<Node> Node::MakeDeviceData(std::shared_ptr<DeviceData> data) {
  auto node = std::make_shared<Node>("device_data", std::vector<Value>{}, data->shape());
  node->data_ = std::move(data);
  return node;
}

std::shared_ptr<Node> Node::MakeConstant(double value, const Shape& shape) {
  return std::make_shared<Node>("constant", std::vector<Value>{}, shape, std::vector<Attr>{value});
}

const Shape& Node::output_shape(int index) const {
  if (!shape_->IsTuple()) {
    CHECK_EQ(index, 0) << op_;
    return *shape_;
  }
  return shape_->tuple_shapes(index);
}

int Node::num_outputs() const {
  return shape_->IsTuple() ? static_cast<int>(shape_->tuple_shapes().size()) : 1;
}

int64_t Node::attr_int(int i) const { return std::get<int64_t>(attrs_.at(i)); }
double Node::attr_double(int i) const { return std::get<double>(attrs_.at(i)); }
const std::vector<int64_t>& Node::attr_ints(int i) const {
  return std::get<std::vector<int64_t>>(attrs_.at(i));
}
const std::string& Node::attr_string(int i) const { return std::get<std::string>(attrs_.at(i)); }

std::string Node::ToString() const {
  std::vector<std::string> operands;
  operands.reserve(operands_.size());
  for (const Value& v : operands_) operands.push_back(absl::StrCat(v.node->op(), ":", v.index));
  std::vector<std::string> attrs;
  attrs.reserve(attrs_.size());
  for (const Attr& a : attrs_) attrs.push_back(AttrToString(a));
  return absl::StrCat(op_, "(", absl::StrJoin(operands, ", "), ") ", shape_->ToString(false),
                      attrs.empty() ? "" : absl::StrCat(" {", absl::StrJoin(attrs, ", "), "}"));
}

Value MakeValue(std::string op, std::vector<Value> operands, const Shape& shape,
                std::vector<Attr> attrs) {
  return Value{std::make_shared<Node>(std::move(op), std::move(operands), shape, std::move(attrs)),
               0};
}

}  // namespace axle::lazy
