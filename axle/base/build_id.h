//===- build_id.h - The build of the running code --------------------------===//
//
// The GNU build ID (the linker's `--build-id` note, on by default in
// Debian's toolchain) of the executable or shared library that holds Axle's
// code: it changes with every build that changes the code, so a disk cache
// keyed by it never serves one build's results to another.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_BUILD_ID_H_
#define AXLE_BASE_BUILD_ID_H_

#include <string>

namespace axle {

// Lowercase hex; "" when the binary has no build ID note.
const std::string& AxleBuildId();

}  // namespace axle

#endif  // AXLE_BASE_BUILD_ID_H_
