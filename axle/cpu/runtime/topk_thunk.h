//===- topk_thunk.h - topk as a partial sort -------------------------------===//
//
// The topk thunk (topk_thunk.cc: which types, the interpreter's order) as
// its emitter (topk_thunk_emitter.cc) and its loader
// (thunk_serialization.h) make it: `rows` rows of `length` elements of
// `type` in value `input`; the first `k` of each row (the largest when
// `largest`) into `values`, their s32 indices into `indices`.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_TOPK_THUNK_H_
#define AXLE_CPU_RUNTIME_TOPK_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "axle/core/primitive_type.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

std::unique_ptr<Thunk> MakeTopKThunk(std::string name, PrimitiveType type, int64_t rows,
                                     int64_t length, int64_t k, bool largest, int64_t input,
                                     int64_t values, int64_t indices);

// The element types the thunk takes.
bool TopKThunkSupports(PrimitiveType type);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_TOPK_THUNK_H_
