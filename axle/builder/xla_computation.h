//===- xla_computation.h - A built program ---------------------------------===//
//
// XlaComputation is what XlaBuilder::Build() returns: an immutable HLO
// module (the built computation as its entry, every computation it calls
// embedded). Where XLA's holds an HloModuleProto, Axle's holds the HloModule
// itself; copies share it. Use module() to read it and CloneModule() to get
// a module of one's own to compile or transform.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BUILDER_XLA_COMPUTATION_H_
#define AXLE_BUILDER_XLA_COMPUTATION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

class XlaComputation {
 public:
  // A null computation (IsNull()).
  XlaComputation() = default;
  // Takes `module`, which must have an entry computation with a root.
  explicit XlaComputation(std::unique_ptr<HloModule> module);
  // XLA's constructor from an HloModuleProto (hlo/proto/hlo_proto.h; links
  // axle_hlo_proto): the module it describes, or a null computation, after
  // printing the error to stderr, when it cannot be read.
  explicit XlaComputation(const proto::HloModuleProto& proto);

  bool IsNull() const { return module_ == nullptr; }

  // The entry computation's name ("" when null).
  std::string name() const;

  // Parameter shapes and result shape of the entry computation.
  absl::StatusOr<ProgramShape> GetProgramShape() const;

  // The module. Precondition: !IsNull().
  const HloModule& module() const;
  // A deep copy of the module (same names), or null when IsNull().
  std::unique_ptr<HloModule> CloneModule() const;

  // The module as HLO text ("" when null).
  std::string ToString() const;

  // Identifies the module: copies of a computation share it. Builders embed
  // a computation used several times only once.
  int64_t unique_id() const { return unique_id_; }

 private:
  std::shared_ptr<const HloModule> module_;
  int64_t unique_id_ = -1;
};

}  // namespace axle

#endif  // AXLE_BUILDER_XLA_COMPUTATION_H_
