// XLA's XlaComputation(HloModuleProto), the usual way from a proto (or
// `module->ToProto()`) to a computation; built when axle_hlo_proto is.
#include <iostream>

#include "axle/builder/xla_computation.h"
#include "axle/hlo/proto/hlo_proto.h"

namespace axle {

XlaComputation::XlaComputation(const proto::HloModuleProto& proto) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = HloModule::CreateFromProto(proto);
  if (!module.ok()) {
    std::cerr << "axle: XlaComputation(HloModuleProto " << proto.name() << "): " << module.status()
              << "\n";
    return;
  }
  *this = XlaComputation(*std::move(module));
}

}  // namespace axle
