//===- sort_key_order.h - sort comparators that order by a native key -----===//
//
// Most sorts that reach a compiler order by the first operand alone: `lhs0
// < rhs0` (or `>`), for floats under the total order (`order=TOTAL`, what
// JAX writes), often after a canonicalization that maps every NaN to one
// NaN and -0 to +0 (`select(x != x, nan, select(x == 0, 0, x))`). Such a
// comparator is a strict weak order that a native key reproduces: every
// element becomes an unsigned integer whose `<` is the comparator's, and a
// stable sort of the keys gives the order the comparator gives, without a
// call of compiled code per comparison.
//
// MatchSortKeyOrder recognizes these comparators: the root a compare of
// K(parameter 0) and K(parameter 1) (either way round), K the same chain
// of `select(cond(x), constant, K'(x))` on both sides, each cond `x != x`
// or `x == constant`, and no other parameter read. Anything else returns
// nullopt and the sort calls the comparator.
//
// A float compare under the default (partial) order — XLA's `LT`/`GT`
// without `type=TOTALORDER`, what approx_max_k's CPU fallback and XLA's
// builders write — is such an order only where no key is NaN: there -0 and
// +0 are one key (a replacement of 0 by +0 says so) and the keys give the
// comparator's order. Its key order is `nan_free_only`: a slice with a NaN
// key is sorted by calling the comparator, whatever order that gives.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SORT_KEY_ORDER_H_
#define AXLE_CPU_RUNTIME_SORT_KEY_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::cpu {

class SortKeyOrder {
 public:
  // One replacement of the canonicalization, tried outermost first: an
  // element that is NaN (`nan`) or equals `value` (float ==, so -0 == +0)
  // is replaced by `replacement`.
  struct Replacement {
    bool nan = false;
    double value = 0;
    double replacement = 0;
  };

  SortKeyOrder(PrimitiveType type, bool descending, std::vector<Replacement> replacements,
               bool nan_free_only = false)
      : type_(type),
        descending_(descending),
        replacements_(std::move(replacements)),
        nan_free_only_(nan_free_only) {}

  PrimitiveType type() const { return type_; }
  bool descending() const { return descending_; }
  // Whether the keys order only slices without a NaN key (the file comment).
  bool nan_free_only() const { return nan_free_only_; }
  const std::vector<Replacement>& replacements() const { return replacements_; }
  // Whether Keys takes elements of `type`: f32, f64 and the byte-sized
  // integers.
  static bool Supports(PrimitiveType type);

  // Keys of `count` elements of `type()` at `data`, `stride` elements
  // apart: key(a) < key(b) exactly when the comparator says a goes before b
  // (for a nan_free_only order, when every key is a number). Returns
  // whether every key is a number (after the replacements).
  bool Keys(const char* data, int64_t count, int64_t stride, uint64_t* keys) const;

 private:
  template <typename Float, typename Bits>
  bool FloatKeys(const char* data, int64_t count, int64_t stride, uint64_t* keys) const;
  template <typename Int>
  void IntegerKeys(const char* data, int64_t count, int64_t stride, uint64_t* keys) const;

  PrimitiveType type_;
  bool descending_;
  std::vector<Replacement> replacements_;
  bool nan_free_only_;
};

// The native key order of `comparator` (a sort's to_apply), or nullopt
// (sort_key_order_from_hlo.cc).
std::optional<SortKeyOrder> MatchSortKeyOrder(const HloComputation& comparator);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SORT_KEY_ORDER_H_
