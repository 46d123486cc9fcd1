//===- hlo_pass_interface.h - A transformation of an HLO module ------------===//
//
// A pass rewrites a module in place and says whether it changed anything.
// Passes are registered by name (pass_registry.h) so that `axle-opt
// --passes=a,b` can run any of them alone; pass tests are written that way,
// HLO text in and HLO text out.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PASS_HLO_PASS_INTERFACE_H_
#define AXLE_HLO_PASS_HLO_PASS_INTERFACE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

class HloPassInterface {
 public:
  virtual ~HloPassInterface() = default;
  // The name used by --passes and in dumps.
  virtual absl::string_view name() const = 0;
  // Returns whether the module changed.
  virtual absl::StatusOr<bool> Run(HloModule* module) = 0;
};

}  // namespace axle

#endif  // AXLE_HLO_PASS_HLO_PASS_INTERFACE_H_
