//===- shape_tree.h - One value per subshape of a shape --------------------===//
//
// XLA's ShapeTree<T>: a value of type T for every node of a shape (the tuple
// itself and each of its elements, recursively), kept in pre-order. Used for
// the buffers of a ShapedBuffer and of an ExecutionInput.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_SHAPE_TREE_H_
#define AXLE_RUNTIME_SHAPE_TREE_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "axle/base/logging.h"
#include "axle/core/shape.h"
#include "axle/core/shape_util.h"

namespace axle {

template <typename T>
class ShapeTree {
 public:
  using Node = std::pair<ShapeIndex, T>;
  using iterator = typename std::vector<Node>::iterator;
  using const_iterator = typename std::vector<Node>::const_iterator;

  ShapeTree() : ShapeTree(ShapeUtil::MakeNil()) {}
  explicit ShapeTree(Shape shape) : shape_(std::move(shape)) {
    ShapeUtil::ForEachSubshape(
        shape_, [&](const Shape&, const ShapeIndex& index) { nodes_.push_back(Node(index, T())); });
  }
  ShapeTree(Shape shape, const T& init_value) : shape_(std::move(shape)) { Build(init_value); }

  const Shape& shape() const { return shape_; }

  // The node at `index`, which must be valid for the shape.
  const T& element(const ShapeIndex& index) const { return nodes_[Find(index)].second; }
  T* mutable_element(const ShapeIndex& index) { return &nodes_[Find(index)].second; }
  bool IsLeaf(const ShapeIndex& index) const {
    return !ShapeUtil::GetSubshape(shape_, index).IsTuple();
  }

  // Pre-order over every node.
  iterator begin() { return nodes_.begin(); }
  iterator end() { return nodes_.end(); }
  const_iterator begin() const { return nodes_.begin(); }
  const_iterator end() const { return nodes_.end(); }
  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }

  void ForEachElement(const std::function<void(const ShapeIndex&, const T&)>& fn) const {
    for (const Node& node : nodes_) fn(node.first, node.second);
  }
  void ForEachMutableElement(const std::function<void(const ShapeIndex&, T*)>& fn) {
    for (Node& node : nodes_) fn(node.first, &node.second);
  }
  absl::Status ForEachElementWithStatus(
      const std::function<absl::Status(const ShapeIndex&, const T&)>& fn) const {
    for (const Node& node : nodes_) {
      absl::Status status = fn(node.first, node.second);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  // Leaves only (arrays and tokens), in pre-order.
  void ForEachLeaf(const std::function<void(const ShapeIndex&, const T&)>& fn) const {
    for (const Node& node : nodes_) {
      if (IsLeaf(node.first)) fn(node.first, node.second);
    }
  }

 private:
  void Build(const T& init_value) {
    ShapeUtil::ForEachSubshape(shape_, [&](const Shape&, const ShapeIndex& index) {
      nodes_.emplace_back(index, init_value);
    });
  }
  size_t Find(const ShapeIndex& index) const {
    // Walk down the tuple structure, skipping the subtrees before `index`.
    size_t position = 0;
    const Shape* shape = &shape_;
    for (int64_t i : index) {
      CHECK(shape->IsTuple() && i >= 0 && i < shape->tuple_shapes_size())
          << "ShapeTree: index out of range for " << shape_.ToString();
      position += 1;
      for (int64_t j = 0; j < i; ++j) position += NodeCount(shape->tuple_shapes(j));
      shape = &shape->tuple_shapes(i);
    }
    return position;
  }
  static size_t NodeCount(const Shape& shape) {
    size_t count = 1;
    if (shape.IsTuple()) {
      for (const Shape& element : shape.tuple_shapes()) count += NodeCount(element);
    }
    return count;
  }

  Shape shape_;
  std::vector<Node> nodes_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_SHAPE_TREE_H_
