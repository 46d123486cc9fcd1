//===- shape_tree.h - One value per subshape of a shape --------------------===//
//
// XLA's ShapeTree<T>: a value of type T for every node of a shape (the tuple
// itself and each of its elements, recursively), kept in pre-order. Used for
// the buffers of a ShapedBuffer and of an ExecutionInput.
//
// The shape and its nodes' indices are an IndexedShape, immutable and
// shared by every tree made from it: copying a tree, or making a tree of a
// shape an executable keeps, copies only the values. (A run's result
// buffers used to copy the result shape and build an index per node, a
// quarter of a tiny program's run.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_SHAPE_TREE_H_
#define AXLE_RUNTIME_SHAPE_TREE_H_

#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "axle/base/logging.h"
#include "axle/core/shape.h"
#include "axle/core/shape_util.h"

namespace axle {

// A shape and the index of each of its nodes, in pre-order.
class IndexedShape {
 public:
  explicit IndexedShape(Shape shape) : shape_(std::move(shape)) {
    ShapeUtil::ForEachSubshape(
        shape_, [&](const Shape&, const ShapeIndex& index) { indices_.push_back(index); });
  }
  static std::shared_ptr<const IndexedShape> Make(Shape shape) {
    return std::make_shared<const IndexedShape>(std::move(shape));
  }

  const Shape& shape() const { return shape_; }
  // Node i's index (indices()[0] is the root's, {}).
  const std::vector<ShapeIndex>& indices() const { return indices_; }
  size_t node_count() const { return indices_.size(); }

 private:
  Shape shape_;
  std::vector<ShapeIndex> indices_;
};

template <typename T>
class ShapeTree {
  static_assert(!std::is_same_v<T, bool>, "ShapeTree<bool>: the nodes are a std::vector<bool>");

 public:
  // A node, as iteration yields it: its index and a reference to its value
  // (`for (auto&& [index, value] : tree)`).
  using Node = std::pair<const ShapeIndex&, T&>;
  using ConstNode = std::pair<const ShapeIndex&, const T&>;

  template <typename Value>
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::pair<const ShapeIndex&, Value&>;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    // What `it->second` goes through.
    struct pointer {
      value_type node;
      const value_type* operator->() const { return &node; }
    };

    Iterator() = default;
    Iterator(const ShapeIndex* index, Value* value) : index_(index), value_(value) {}
    // iterator -> const_iterator.
    template <typename Other, typename = std::enable_if_t<std::is_same_v<const Other, Value> &&
                                                          !std::is_same_v<Other, Value>>>
    Iterator(const Iterator<Other>& other)  // NOLINT(google-explicit-constructor)
        : index_(other.index_), value_(other.value_) {}

    reference operator*() const { return {*index_, *value_}; }
    pointer operator->() const { return {**this}; }
    reference operator[](difference_type n) const { return *(*this + n); }

    Iterator& operator++() {
      ++index_;
      ++value_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    Iterator& operator--() {
      --index_;
      --value_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator old = *this;
      --*this;
      return old;
    }
    Iterator& operator+=(difference_type n) {
      index_ += n;
      value_ += n;
      return *this;
    }
    Iterator& operator-=(difference_type n) { return *this += -n; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator& a, const Iterator& b) {
      return a.value_ - b.value_;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.value_ == b.value_; }
    friend bool operator!=(const Iterator& a, const Iterator& b) { return a.value_ != b.value_; }
    friend bool operator<(const Iterator& a, const Iterator& b) { return a.value_ < b.value_; }

   private:
    template <typename>
    friend class Iterator;

    const ShapeIndex* index_ = nullptr;
    Value* value_ = nullptr;
  };
  using iterator = Iterator<T>;
  using const_iterator = Iterator<const T>;

  ShapeTree() : ShapeTree(ShapeUtil::MakeNil()) {}
  explicit ShapeTree(Shape shape) : ShapeTree(IndexedShape::Make(std::move(shape))) {}
  ShapeTree(Shape shape, const T& init_value)
      : indexed_(IndexedShape::Make(std::move(shape))),
        values_(indexed_->node_count(), init_value) {}
  // A tree of a shared shape: nothing but the values is allocated.
  explicit ShapeTree(std::shared_ptr<const IndexedShape> shape)
      : indexed_(std::move(shape)), values_(indexed_->node_count()) {}
  ShapeTree(const ShapeTree&) = default;
  ShapeTree& operator=(const ShapeTree&) = default;
  // O(1). The moved-from tree has no shape (PRIMITIVE_TYPE_INVALID) and one
  // default value.
  ShapeTree(ShapeTree&& other) noexcept
      : indexed_(std::move(other.indexed_)), values_(std::move(other.values_)) {
    other.BecomeMovedFrom();
  }
  ShapeTree& operator=(ShapeTree&& other) noexcept {
    if (this != &other) {
      indexed_ = std::move(other.indexed_);
      values_ = std::move(other.values_);
      other.BecomeMovedFrom();
    }
    return *this;
  }
  ~ShapeTree() = default;

  const Shape& shape() const { return indexed_->shape(); }
  const std::shared_ptr<const IndexedShape>& indexed_shape() const { return indexed_; }

  // The node at `index`, which must be valid for the shape.
  const T& element(const ShapeIndex& index) const { return values_[Find(index)]; }
  T* mutable_element(const ShapeIndex& index) { return &values_[Find(index)]; }
  bool IsLeaf(const ShapeIndex& index) const {
    return !ShapeUtil::GetSubshape(shape(), index).IsTuple();
  }

  // Pre-order over every node.
  iterator begin() { return iterator(indexed_->indices().data(), values_.data()); }
  iterator end() { return begin() + size(); }
  const_iterator begin() const {
    return const_iterator(indexed_->indices().data(), values_.data());
  }
  const_iterator end() const { return begin() + size(); }
  int64_t size() const { return static_cast<int64_t>(values_.size()); }

  void ForEachElement(const std::function<void(const ShapeIndex&, const T&)>& fn) const {
    for (auto&& [index, value] : *this) fn(index, value);
  }
  void ForEachMutableElement(const std::function<void(const ShapeIndex&, T*)>& fn) {
    for (auto&& [index, value] : *this) fn(index, &value);
  }
  absl::Status ForEachElementWithStatus(
      const std::function<absl::Status(const ShapeIndex&, const T&)>& fn) const {
    for (auto&& [index, value] : *this) {
      absl::Status status = fn(index, value);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  // Leaves only (arrays and tokens), in pre-order.
  void ForEachLeaf(const std::function<void(const ShapeIndex&, const T&)>& fn) const {
    for (auto&& [index, value] : *this) {
      if (IsLeaf(index)) fn(index, value);
    }
  }

 private:
  void BecomeMovedFrom() noexcept {
    // Shared by every moved-from tree; never destroyed (a tree may be moved
    // while statics are destroyed).
    static const auto* const kNoShape =
        new std::shared_ptr<const IndexedShape>(IndexedShape::Make(Shape()));
    indexed_ = *kNoShape;
    values_.clear();
    values_.emplace_back();  // inline: allocates nothing
  }
  size_t Find(const ShapeIndex& index) const {
    // Walk down the tuple structure, skipping the subtrees before `index`.
    size_t position = 0;
    const Shape* shape = &indexed_->shape();
    for (int64_t i : index) {
      CHECK(shape->IsTuple() && i >= 0 && i < shape->tuple_shapes_size())
          << "ShapeTree: index out of range for " << indexed_->shape().ToString();
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

  std::shared_ptr<const IndexedShape> indexed_;
  // One per node; most trees are of one array (one node).
  absl::InlinedVector<T, 1> values_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_SHAPE_TREE_H_
