//===- compile_cache.h - Dropping the lazy executor's compiled graphs ------===//
//
// The one call of GraphExecutor's cache that the PyTorch device's files
// need, without the executor's headers (C++20; those files are read as
// C++17 by clang-tidy: ../torch/.clang-tidy).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_COMPILE_CACHE_H_
#define AXLE_FRONTENDS_LAZY_COMPILE_CACHE_H_

namespace axle::lazy {

// Drops every compiled graph (GraphExecutor::ClearCache); the next sync of
// each graph compiles again (or loads from AXLE_CACHE_DIR). With
// AXLE_PROFILE=1 each executable prints its thunk table as it is destroyed.
void ClearCompileCache();

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_COMPILE_CACHE_H_
