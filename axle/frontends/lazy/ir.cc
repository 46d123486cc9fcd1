//===- ir.cc - The lazy-tensor IR: nodes, values, device data --------------===//
#include "axle/frontends/lazy/ir.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/logging.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/block_pool.h"
#include "axle/frontends/lazy/device.h"
#include "axle/frontends/lazy/metrics.h"

namespace axle::lazy {

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

// An interned shape and its HashShape, computed once: every node hashes
// its shape (InternedShapeHash).
struct InternedShape : Shape {
  InternedShape(const Shape& shape, uint64_t hash) : Shape(shape), hash(hash) {}
  uint64_t hash;
};

// Interned shapes by HashShape (entries of one hash: the colliding shapes).
// Arrays equal to ShapeUtil::MakeShape's have their own table, looked up by
// element type and dimensions without building a Shape.
struct ShapeTable {
  std::mutex mutex;
  absl::flat_hash_map<uint64_t, absl::InlinedVector<std::unique_ptr<InternedShape>, 1>> shapes;
  absl::flat_hash_map<uint64_t, absl::InlinedVector<std::unique_ptr<InternedShape>, 1>> arrays;
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

namespace {

// Per-thread caches in front of the table (its lock and hashing): recording
// one op interns its result's shape at least once. Interned shapes are never
// freed, so a pointer found in `known` is one the table handed out.
constexpr size_t kCacheSlots = 256;
struct ThreadShapeCache {
  const Shape* known[kCacheSlots] = {};   // by address
  const Shape* arrays[kCacheSlots] = {};  // by HashArray
};
ThreadShapeCache& ThreadCache() {
  thread_local ThreadShapeCache cache;
  return cache;
}
size_t AddressSlot(const Shape* shape) {
  return (reinterpret_cast<uintptr_t>(shape) >> 4) % kCacheSlots;
}

const Shape& InternShapeLocked(const Shape& shape);

}  // namespace

const Shape& InternShape(const Shape& shape) {
  ThreadShapeCache& cache = ThreadCache();
  const Shape*& slot = cache.known[AddressSlot(&shape)];
  if (slot == &shape) return shape;  // interned already
  const Shape& interned = InternShapeLocked(shape);
  cache.known[AddressSlot(&interned)] = &interned;
  return interned;
}

namespace {

const Shape& InternShapeLocked(const Shape& shape) {
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
      arrays.push_back(std::make_unique<InternedShape>(shape, hash));
      return *arrays.back();
    }
  }
  auto& entries = table.shapes[hash];
  for (const auto& entry : entries) {
    if (*entry == shape) return *entry;
  }
  entries.push_back(std::make_unique<InternedShape>(shape, hash));
  return *entries.back();
}

}  // namespace

const Shape& InternShape(PrimitiveType type, absl::Span<const int64_t> dimensions) {
  uint64_t hash = HashArray(type, dimensions);
  ThreadShapeCache& cache = ThreadCache();
  const Shape*& cached = cache.arrays[hash % kCacheSlots];
  if (cached != nullptr && cached->element_type() == type &&
      absl::MakeConstSpan(cached->dimensions()) == dimensions) {
    return *cached;
  }
  ShapeTable& table = Shapes();
  const Shape* interned = nullptr;
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    auto& entries = table.arrays[hash];
    for (const auto& entry : entries) {
      if (entry->element_type() == type && absl::MakeConstSpan(entry->dimensions()) == dimensions) {
        interned = entry.get();
        break;
      }
    }
    if (interned == nullptr) {
      entries.push_back(
          std::make_unique<InternedShape>(ShapeUtil::MakeShape(type, dimensions), hash));
      interned = entries.back().get();
    }
  }
  cached = interned;
  cache.known[AddressSlot(interned)] = interned;
  return *interned;
}

uint64_t InternedShapeHash(const Shape& interned) {
  // Every shape InternShape hands out is a table entry.
  return static_cast<const InternedShape&>(interned).hash;
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

namespace {

// The memory of `buffer`, an array (this project's lazy values are arrays).
se::OwningDeviceMemory TakeArrayMemory(ScopedShapedBuffer buffer) {
  CHECK(buffer.on_device_shape().IsArray()) << buffer.on_device_shape().ToString();
  se::DeviceMemoryAllocator* allocator = buffer.memory_allocator();
  const int ordinal = buffer.device_ordinal();
  se::DeviceMemoryBase root = buffer.root_buffer();
  buffer.buffers().begin()->second = se::DeviceMemoryBase();  // owned by the result now
  return se::OwningDeviceMemory(root, ordinal, allocator);
}

}  // namespace

DeviceData::DeviceData(ScopedShapedBuffer buffer)
    : shape_(&InternShape(buffer.on_device_shape())),
      memory_(TakeArrayMemory(std::move(buffer))),
      on_device_(true) {}

DeviceData::DeviceData(se::OwningDeviceMemory memory, const Shape& shape)
    : shape_(&shape), memory_(std::move(memory)), on_device_(true) {}

DeviceData::DeviceData(Literal literal)
    : shape_(&InternShape(literal.shape())), host_(std::move(literal)) {}

absl::Status DeviceData::TransferLocked() {
  if (donated_) {
    return absl::FailedPreconditionError(absl::StrCat("lazy tensors: a value of shape ",
                                                      shape_->ToString(false),
                                                      " was donated to an earlier execution"));
  }
  if (on_device_) return absl::OkStatus();
  absl::StatusOr<LocalClient*> client = GetClient();
  if (!client.ok()) return client.status();
  metrics::ScopedTimer timer("TransferToDeviceTime");
  absl::StatusOr<ScopedShapedBuffer> buffer = (*client)->LiteralToShapedBuffer(*host_, 0);
  if (!buffer.ok()) return buffer.status();
  memory_ = TakeArrayMemory(std::move(*buffer));
  on_device_ = true;
  host_.reset();
  return absl::OkStatus();
}

absl::StatusOr<const ShapedBuffer*> DeviceData::Buffer() {
  std::lock_guard<std::mutex> lock(mutex_);
  absl::Status status = TransferLocked();
  if (!status.ok()) return status;
  if (view_ == nullptr) {
    view_ = std::make_unique<ShapedBuffer>(*shape_, memory_.device_ordinal());
    view_->set_buffer(memory_.cref(), {});
  }
  return view_.get();
}

absl::StatusOr<se::DeviceMemoryBase> DeviceData::Memory() {
  std::lock_guard<std::mutex> lock(mutex_);
  absl::Status status = TransferLocked();
  if (!status.ok()) return status;
  return memory_.cref();
}

se::OwningDeviceMemory DeviceData::Donate() {
  std::lock_guard<std::mutex> lock(mutex_);
  CHECK(on_device_ && !donated_ && !shared_);
  donated_ = true;
  view_.reset();
  return std::move(memory_);
}

absl::StatusOr<Literal> DeviceData::ToLiteral() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!on_device_ && !donated_) return host_->Clone();
  }
  absl::StatusOr<const ShapedBuffer*> buffer = Buffer();
  if (!buffer.ok()) return buffer.status();
  absl::StatusOr<LocalClient*> client = GetClient();
  if (!client.ok()) return client.status();
  metrics::ScopedTimer timer("TransferFromDeviceTime");
  return (*client)->ShapedBufferToLiteral(**buffer);
}

namespace {

// ScalarData's cache: by element type and the value's bytes.
struct ScalarCache {
  static constexpr size_t kCapacity = 4096;
  std::mutex mutex;
  absl::flat_hash_map<std::pair<int, std::string>, std::shared_ptr<DeviceData>> values;
};

ScalarCache& Scalars() {
  static auto* cache = new ScalarCache();
  return *cache;
}

}  // namespace

std::shared_ptr<DeviceData> ScalarData(Literal literal) {
  CHECK(literal.shape().IsArray() && literal.shape().dimensions().empty())
      << literal.shape().ToString();
  std::pair<int, std::string> key(
      static_cast<int>(literal.shape().element_type()),
      std::string(static_cast<const char*>(literal.untyped_data()), literal.size_bytes()));
  ScalarCache& cache = Scalars();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.values.find(key);
  if (it != cache.values.end()) return it->second;
  if (cache.values.size() >= ScalarCache::kCapacity) cache.values.clear();
  auto data = std::make_shared<DeviceData>(std::move(literal));
  data->shared_ = true;
  cache.values.emplace(std::move(key), data);
  return data;
}

size_t ScalarDataCacheSize() {
  ScalarCache& cache = Scalars();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.values.size();
}

const Shape& Value::shape() const { return node->output_shape(index); }

uint64_t Value::hash() const { return HashCombine(node->hash(), static_cast<uint64_t>(index)); }

const Node::OpName* Node::InternOp(absl::string_view op) {
  // A per-thread map in front of the process-wide one (which has a lock).
  struct Table {
    std::mutex mutex;
    absl::flat_hash_map<std::string, std::unique_ptr<OpName>> ops;
  };
  static auto* table = new Table();
  // The kernels pass string literals: a direct-mapped cache by the
  // characters' address answers most lookups with one compare of the name
  // (another string at a reused address fails the compare).
  struct Slot {
    const char* data = nullptr;
    const OpName* name = nullptr;
  };
  thread_local std::array<Slot, 64> slots;
  // (A multiplicative hash of the whole address: literals sit a few bytes
  // apart.)
  Slot& slot = slots[(reinterpret_cast<uintptr_t>(op.data()) * 0x9e3779b97f4a7c15ULL) >> 58];
  if (slot.data == op.data() && slot.name->name == op) return slot.name;
  thread_local absl::flat_hash_map<absl::string_view, const OpName*> local;
  auto it = local.find(op);
  if (it != local.end()) {
    slot = Slot{op.data(), it->second};
    return it->second;
  }
  const OpName* name = nullptr;
  {
    std::lock_guard<std::mutex> lock(table->mutex);
    auto& entry = table->ops[op];
    if (entry == nullptr) entry = std::make_unique<OpName>(OpName{std::string(op), HashString(op)});
    name = entry.get();
  }
  local.emplace(name->name, name);  // keyed by the interned name's own characters
  slot = Slot{op.data(), name};
  return name;
}

Node::Node(absl::string_view op, absl::Span<const Value> operands, const Shape& shape,
           std::vector<Attr> attrs)
    : op_(InternOp(op)),
      operands_(operands.begin(), operands.end()),
      shape_(&InternShape(shape)),
      attrs_(std::move(attrs)) {
  uint64_t h = HashCombine(op_->hash, InternedShapeHash(*shape_));
  h = HashCombine(h, attrs_.size());
  for (const Attr& attr : attrs_) h = HashCombine(h, HashAttr(attr));
  h = HashCombine(h, operands_.size());
  for (const Value& operand : operands_) h = HashCombine(h, operand.hash());
  hash_ = h;
}

std::shared_ptr<Node> Node::Make(absl::string_view op, absl::Span<const Value> operands,
                                 const Shape& shape, std::vector<Attr> attrs) {
  return std::allocate_shared<Node>(PoolAllocator<Node>(), op, operands, shape, std::move(attrs));
}

Node::~Node() {
  // Operands this node holds the last reference to would be destroyed
  // recursively; take them over and free them one at a time instead. (The
  // walk is depth first: the list stays short, on the stack.)
  absl::InlinedVector<std::shared_ptr<Node>, 16> dying;
  for (Value& v : operands_) {
    if (v.node != nullptr && v.node.use_count() == 1) dying.push_back(std::move(v.node));
  }
  while (!dying.empty()) {
    std::shared_ptr<Node> node = std::move(dying.back());
    dying.pop_back();
    for (Value& v : node->operands_) {
      if (v.node != nullptr && v.node.use_count() == 1) dying.push_back(std::move(v.node));
    }
    // `node` dies here with no operand left to recurse into.
  }
}

std::shared_ptr<Node> Node::MakeDeviceData(std::shared_ptr<DeviceData> data) {
  auto node = Node::Make("device_data", std::vector<Value>{}, data->shape());
  node->data_ = std::move(data);
  return node;
}

std::shared_ptr<Node> Node::MakeConstant(double value, const Shape& shape) {
  return Node::Make("constant", std::vector<Value>{}, shape, std::vector<Attr>{value});
}

const Shape& Node::output_shape(int index) const {
  if (!shape_->IsTuple()) {
    CHECK_EQ(index, 0) << op_->name;
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
  return absl::StrCat(op_->name, "(", absl::StrJoin(operands, ", "), ") ", shape_->ToString(false),
                      attrs.empty() ? "" : absl::StrCat(" {", absl::StrJoin(attrs, ", "), "}"));
}

Value MakeValue(absl::string_view op, absl::Span<const Value> operands, const Shape& shape,
                std::vector<Attr> attrs) {
  return Value{Node::Make(op, operands, shape, std::move(attrs)), 0};
}

}  // namespace axle::lazy
