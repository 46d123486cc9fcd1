//===- custom_call_thunk.h - Custom calls on the executable's buffers ------===//
//
// A CustomCallThunk runs an HLO custom-call on the cpu platform the way
// XLA:CPU does: the target (platform "Host") is resolved at compile time
// (HostCustomCallTarget, axle/runtime/host_custom_call.h) and called at run
// time on the executable's own buffers, laid out as host_custom_call.h
// describes: `in[i]` is operand i's buffer, tuples are pointer tables
// (nested), tokens are null, `out` is the result's buffer (or table);
// typed-FFI handlers get the flattened leaf buffers.
//
// What the target sees, and what it may write:
//   * Result leaves are temporaries of the executable (the arena).
//   * output_to_operand_aliasing: the aliased result leaf's temporary is
//     filled with the operand's value before the call and passed both as
//     that operand leaf (in `in`) and as the result leaf (in `out`).
//   * Operand leaves that are parameters or constants are copied into a
//     scratch temporary first and the copy is passed. XLA passes them as
//     they are, and a target writing to them is undefined behaviour there;
//     here such a target cannot change a caller's argument or a constant
//     that later runs read. The copy costs one pass over those operands.
//   * Other operand leaves (values computed earlier in the run) are passed
//     directly, as XLA does: a target that writes to them is wrong but can
//     only spoil this run's values.
//
// Layouts: every buffer is passed as it is, so a layout-constrained call
// gets operand i in its constraint's layout and its result in the
// instruction's (layout-normalization copies operands there; jaxlib's
// column-major LAPACK calls rely on it). An operand in any other layout is
// Unimplemented at compile time.
//
// A failure (XlaCustomCallStatus or an FFI error) ends the run with the
// interpreter path's error.
//
// Serialized, a custom call is its target's spec and its plan; a loaded
// program resolves the target by name from its own registries
// (custom_call_registry.h, host_ffi.h), so an AOT binary registers its
// targets as a JIT user does (XLA_CPU_REGISTER_CUSTOM_CALL_TARGET...).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CUSTOM_CALL_THUNK_H_
#define AXLE_CPU_RUNTIME_CUSTOM_CALL_THUNK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "axle/cpu/runtime/thunk.h"
#include "axle/runtime/host_custom_call_target.h"

namespace axle::cpu {

class CustomCallThunk : public Thunk {
 public:
  // One pointer the target receives. Slots [0, num_operands) are `in`,
  // slot num_operands is `out`; a tuple's table is a run of consecutive
  // slots.
  struct Slot {
    enum class Kind { kNull, kValue, kTable };
    Kind kind = Kind::kNull;
    int64_t index = 0;  // kValue: the value id; kTable: the table's first slot
    // kValue: the value's bytes; kTable: its elements (what a serialized
    // program's loader checks the values and the tables against).
    int64_t size = 0;
  };
  // A copy made before the call (aliased outputs, protected operands).
  struct Copy {
    int64_t from = 0;
    int64_t to = 0;
    int64_t size_bytes = 0;
  };
  // A typed-FFI leaf: its type and dimensions, and its value (-1: a token).
  struct FfiLeaf {
    FfiBuffer buffer;
    int64_t value = -1;
  };
  struct Plan {
    int64_t num_operands = 0;
    std::vector<Slot> slots;        // untyped conventions
    std::vector<FfiLeaf> ffi_args;  // typed FFI
    std::vector<FfiLeaf> ffi_rets;  // typed FFI
    std::vector<Copy> copies;
    BufferUses uses;
  };

  CustomCallThunk(std::string name, HostCustomCallTarget target, Plan plan)
      : Thunk(std::move(name)), target_(std::move(target)), plan_(std::move(plan)) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override { return plan_.uses; }
  // The target's spec (its registered name, api_version and opaque) and
  // the plan: LoadCustomCallThunk (thunk_serialization.h) resolves the
  // target again by name from the registries of the loading program, as
  // XLA's AOT does; an unregistered one is NotFound naming it.
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  HostCustomCallTarget target_;
  Plan plan_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CUSTOM_CALL_THUNK_H_
