//===- relayout.h - Arrays between row-major storage and a layout ----------===//
//
// A literal (and a custom call's row-major view) stores an array in
// row-major order; a device buffer, or a custom call operand with an
// explicit layout, stores it in that layout. Relayout copies between the
// two, element by element where the layout is not the descending one.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_RELAYOUT_H_
#define AXLE_RUNTIME_RELAYOUT_H_

#include "axle/core/shape.h"

namespace axle {

// Copies the elements of array `shape` (its dimensions and element type;
// its own layout is ignored) between dense row-major storage and dense
// storage in `layout`: with `to_layout`, from row-major `from` into `to` in
// `layout`, otherwise the other way. A descending layout, or at most one
// element, is one memcpy.
void Relayout(const Shape& shape, const Layout& layout, const void* from, void* to, bool to_layout);

}  // namespace axle

#endif  // AXLE_RUNTIME_RELAYOUT_H_
