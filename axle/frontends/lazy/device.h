//===- device.h - The platform lazy tensors run on --------------------------===//
//
// Lazy tensors live on one device of one platform: the one AXLE_LAZY_PLATFORM
// names ("cpu", "interpreter"), else the default one (cpu when the program
// links it, else the interpreter).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_DEVICE_H_
#define AXLE_FRONTENDS_LAZY_DEVICE_H_

#include "absl/status/statusor.h"
#include "axle/runtime/local_client.h"

namespace axle::lazy {

// The client of the lazy tensors' platform (created on first use).
absl::StatusOr<LocalClient*> GetClient();

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_DEVICE_H_
