//===- ir.h - The lazy-tensor IR: nodes, values, device data ---------------===//
//
// torch-xla's IR. An operation on a lazy tensor records a Node: the op kind
// (a name such as "add" or "dot_general"), its operands (Values: a node and
// one of its outputs), its shape (an array; a tuple when it has several
// outputs) and its attributes (integers, reals, lists of integers, strings).
// Each node's hash covers the op, the shape, the attributes and its
// operands' hashes, so two graphs built the same way hash the same however
// their nodes were allocated: the graph executor's compile cache is keyed by
// it.
//
// Leaves are "device_data" nodes: a value already computed (DeviceData, a
// device buffer) or a host value waiting to be transferred (a scalar an op
// took, such as a learning rate). They become parameters of the compiled
// graph, never constants, and their hash covers their shape only: a new
// value of the same shape reuses the executable. Constants that belong to
// the graph's structure (0 in relu) are "constant" nodes, whose value is an
// attribute and so part of the hash.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_IR_H_
#define AXLE_FRONTENDS_LAZY_IR_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/shaped_buffer.h"

namespace axle::lazy {

// A stable 64-bit hash (the same in every process): splitmix64 of the
// value, folded into the seed. Inline: every node hashes its op, shape,
// attributes and operands.
inline uint64_t HashCombine(uint64_t seed, uint64_t value) {
  uint64_t z = value + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (seed ^ z) * 0x100000001b3ULL + (seed >> 17);
}
uint64_t HashString(absl::string_view s);
uint64_t HashShape(const Shape& shape);

// The process-wide copy of `shape` (never freed): nodes, tensors and device
// data of one shape share it instead of each holding a copy. The second form
// is ShapeUtil::MakeShape(type, dimensions) without building a Shape when
// the shape is known already. Thread-safe.
const Shape& InternShape(const Shape& shape);
const Shape& InternShape(PrimitiveType type, absl::Span<const int64_t> dimensions);
// HashShape of a shape InternShape returned (kept with it: no rehash).
uint64_t InternedShapeHash(const Shape& interned);

// A computed value: a device buffer (an array's), or a host literal not yet
// transferred (the executor transfers it when a graph first needs it).
class DeviceData {
 public:
  // `buffer` holds an array.
  explicit DeviceData(ScopedShapedBuffer buffer);
  // An array of `shape` in `memory` (null when it has no bytes). `shape`:
  // interned (InternShape) or otherwise never freed.
  DeviceData(se::OwningDeviceMemory memory, const Shape& shape);
  explicit DeviceData(Literal literal);
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;

  const Shape& shape() const { return *shape_; }
  // The device buffer, transferring the host literal first if need be (a
  // view of Memory(), made on the first call).
  absl::StatusOr<const ShapedBuffer*> Buffer();
  // The same as device memory (the graph executor's arguments).
  absl::StatusOr<se::DeviceMemoryBase> Memory();
  // The value on the host (a transfer from the device, unless it is still
  // the host literal).
  absl::StatusOr<Literal> ToLiteral();
  bool on_device() const { return on_device_; }
  // Gives the device memory to an execution (the program may write over
  // it): this value is invalid afterwards (donated() is true; Buffer()
  // fails). Must be on the device, not shared and not donated already.
  se::OwningDeviceMemory Donate();
  bool donated() const { return donated_; }
  // Shared by many leaves (a cached scalar, ScalarData): never donated, and
  // each leaf of it is a parameter of its own (lowering.h's ParameterKey),
  // so whether two scalars happen to be equal never changes a graph.
  bool shared() const { return shared_; }
  // For a graph walk (lowering.h's ComputePostOrder, which serializes
  // them): the parameter number this value has in walk `walk`; the first
  // call of a walk gives it `next`.
  int64_t ParameterIn(uint64_t walk, int64_t next) {
    if (walk_ != walk) {
      walk_ = walk;
      parameter_ = next;
    }
    return parameter_;
  }

 private:
  friend std::shared_ptr<DeviceData> ScalarData(Literal literal);
  // Transfers the host literal (mutex_ held).
  absl::Status TransferLocked();

  const Shape* shape_;  // interned
  std::mutex mutex_;    // the transfer and the view (a shared value is used by any thread)
  se::OwningDeviceMemory memory_;
  std::unique_ptr<ShapedBuffer> view_;  // Buffer()'s
  std::optional<Literal> host_;
  bool on_device_ = false;
  bool donated_ = false;
  bool shared_ = false;
  uint64_t walk_ = 0;  // ParameterIn's
  int64_t parameter_ = 0;
};

// The device data of a scalar (a rank-0 literal): one per distinct value and
// type, transferred once and reused by every later use of the value (an
// optimizer's hyperparameters are the same each step), so a step does not
// transfer its scalars again. The cache holds a bounded number of values
// (it forgets them all when full; leaves in use keep theirs).
std::shared_ptr<DeviceData> ScalarData(Literal literal);
// How many scalars ScalarData holds (tests).
size_t ScalarDataCacheSize();

using Attr = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

class Node;

struct Value {
  std::shared_ptr<Node> node;
  int index = 0;  // which output of the node

  const Shape& shape() const;
  uint64_t hash() const;
  explicit operator bool() const { return node != nullptr; }
};

class Node {
 public:
  // `shape` is interned unless it is already (InternShape).
  Node(absl::string_view op, absl::Span<const Value> operands, const Shape& shape,
       std::vector<Attr> attrs = {});
  // Frees the graph below iteratively (a long chain of nodes would
  // otherwise recurse once per node). Nodes are only ever held by
  // shared_ptr, never by weak_ptr: an operand whose use count is 1 is held
  // by this node alone, and no other thread can take a reference to it.
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // A new node, with its shared_ptr's count, in one pooled block
  // (block_pool.h): how every node is made.
  static std::shared_ptr<Node> Make(absl::string_view op, absl::Span<const Value> operands,
                                    const Shape& shape, std::vector<Attr> attrs = {});
  // A leaf holding `data`.
  static std::shared_ptr<Node> MakeDeviceData(std::shared_ptr<DeviceData> data);
  // A constant of `shape`, every element `value` (converted to its type).
  static std::shared_ptr<Node> MakeConstant(double value, const Shape& shape);

  const std::string& op() const { return op_->name; }
  // Most nodes have one to three operands: stored inline.
  using Operands = absl::InlinedVector<Value, 3>;
  const Operands& operands() const { return operands_; }
  const Value& operand(int i) const { return operands_.at(i); }
  // The node's shape: an array, or a tuple of its outputs' shapes.
  const Shape& shape() const { return *shape_; }
  const Shape& output_shape(int index) const;
  int num_outputs() const;
  const std::vector<Attr>& attrs() const { return attrs_; }
  // The attribute at `i` as the given kind; CHECK-fails on a mismatch (the
  // lowerings' own invariant: attributes come from this project's code).
  int64_t attr_int(int i) const;
  double attr_double(int i) const;
  const std::vector<int64_t>& attr_ints(int i) const;
  const std::string& attr_string(int i) const;
  uint64_t hash() const { return hash_; }
  // The data of a "device_data" leaf, else null.
  const std::shared_ptr<DeviceData>& data() const { return data_; }

  // For a graph walk (lowering.h's ComputePostOrder, which serializes
  // them): true the first time it is called with `walk`.
  bool FirstVisit(uint64_t walk) const {
    if (visited_in_ == walk) return false;
    visited_in_ = walk;
    return true;
  }

  // "%op(operand hashes) shape {attrs}" (debugging).
  std::string ToString() const;

 private:
  // An op name, interned: one per distinct name, with its hash.
  struct OpName {
    std::string name;
    uint64_t hash;
  };
  static const OpName* InternOp(absl::string_view op);

  const OpName* op_;
  Operands operands_;
  const Shape* shape_;  // interned
  std::vector<Attr> attrs_;
  uint64_t hash_ = 0;
  std::shared_ptr<DeviceData> data_;
  mutable uint64_t visited_in_ = 0;  // FirstVisit's
};

// Value of output 0 of a new node.
Value MakeValue(absl::string_view op, absl::Span<const Value> operands, const Shape& shape,
                std::vector<Attr> attrs = {});

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_IR_H_
