//===- hlo_structural_hash.h - Structural identity of HLO ------------------===//
//
// When two instructions, computations or modules compute the same thing,
// whatever their names: the key of CSE, of the cpu backend's kernel sharing
// and of the executable caches (in memory and on disk).
//
// An instruction's identity is IdenticalIgnoringOperands below (opcode,
// shape with layout, op-specific attribute struct, generic attributes; not
// names, ids or metadata), in XLA's HloInstruction::Identical's spirit. A computation's identity
// adds its structure: each instruction in post order with its operands and control predecessors as
// post-order positions, its root, and its called computations compared structurally in turn. A
// module's fingerprint adds its config (entry layout, aliasing, donors, replica and partition
// counts).
//
// Fingerprints are 128-bit and the same in every process and on every run
// (unlike absl::Hash, which is seeded per process), so they can name files
// of an on-disk cache.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_STRUCTURAL_HASH_H_
#define AXLE_HLO_IR_HLO_STRUCTURAL_HASH_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

class HloComputation;
class HloModule;
struct IotaReplicaGroupList;
struct OutputOperandAlias;

// A 128-bit digest.
struct Fingerprint128 {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const Fingerprint128&) const = default;
  auto operator<=>(const Fingerprint128&) const = default;
  // 32 lowercase hex digits.
  std::string ToHex() const;
  template <typename H>
  friend H AbslHashValue(H h, const Fingerprint128& f) {
    return H::combine(std::move(h), f.low, f.high);
  }
};

// Accumulates values into a Fingerprint128, deterministically. Every value
// is added with its length where it has one, so that ("ab", "c") and ("a",
// "bc") differ.
class StructuralHasher {
 public:
  void AddBytes(const void* data, size_t size);

  template <typename T>
  requires(std::is_integral_v<T> || std::is_enum_v<T>) void Add(T value) {
    AddWord(static_cast<uint64_t>(value));
  }
  void Add(float value);
  void Add(double value);
  void Add(absl::string_view text);
  void Add(const std::string& text) { Add(absl::string_view(text)); }
  void Add(const std::vector<bool>& bits);
  template <typename T>
  void Add(const std::vector<T>& values) {
    AddWord(values.size());
    for (const T& value : values) Add(value);
  }
  template <typename T>
  void Add(const std::optional<T>& value) {
    AddWord(value.has_value() ? 1 : 0);
    if (value.has_value()) Add(*value);
  }
  template <typename A, typename B>
  void Add(const std::pair<A, B>& pair) {
    Add(pair.first);
    Add(pair.second);
  }
  template <typename K, typename V>
  void Add(const std::map<K, V>& map) {
    AddWord(map.size());
    for (const auto& entry : map) Add(entry);
  }
  void Add(const Fingerprint128& fingerprint);

  // The types attribute structs hold.
  void Add(const Shape& shape);
  void Add(const Layout& layout);
  void Add(const ProgramShape& shape);
  void Add(const Literal& literal);
  void Add(const Window& window);
  void Add(const PaddingConfig& config);
  void Add(const DotDimensionNumbers& numbers);
  void Add(const ConvolutionDimensionNumbers& numbers);
  void Add(const GatherDimensionNumbers& numbers);
  void Add(const ScatterDimensionNumbers& numbers);
  void Add(const PrecisionConfig& config);
  void Add(const TriangularSolveOptions& options);
  void Add(const CholeskyOptions& options);
  void Add(const ReplicaGroup& group);
  void Add(const IotaReplicaGroupList& groups);
  void Add(const OutputOperandAlias& alias);
  void Add(const HloSharding& sharding);
  void Add(const RawAttribute& attribute);

  template <typename... T>
  void Combine(const T&... values) {
    (Add(values), ...);
  }

  Fingerprint128 Finish() const;

 private:
  void AddWord(uint64_t word);

  uint64_t a_ = 0x243f6a8885a308d3ull;  // digits of pi
  uint64_t b_ = 0x13198a2e03707344ull;
  uint64_t count_ = 0;
};

// --- Instructions ---------------------------------------------------------------

// Equal opcode, shape (with layout), op-specific attributes (every member of
// the subclass's attribute struct) and the generic attributes that can change
// what runs (sharding, frontend attributes, backend config, raw attributes).
// Names, ids, metadata, operands and called computations do not count.
bool IdenticalIgnoringOperands(const HloInstruction& a, const HloInstruction& b);
// The same, and the very same operands and called computations (what CSE
// merges).
bool Identical(const HloInstruction& a, const HloInstruction& b);
// Adds what IdenticalIgnoringOperands compares to `hasher`.
void HashIgnoringOperands(StructuralHasher& hasher, const HloInstruction& instruction);

// --- Computations and modules ------------------------------------------------------

// Equal when the two compute the same function of their parameters on the
// same threads (see the top of this file).
bool ComputationsIdentical(const HloComputation& a, const HloComputation& b);
// Equal fingerprints for identical computations.
Fingerprint128 FingerprintComputation(const HloComputation& computation);

// The instructions are identical ignoring operands and compute the same on
// them: called computations compared structurally.
bool InstructionsIdenticalIgnoringOperands(const HloInstruction& a, const HloInstruction& b);
// Equal fingerprints for such instructions.
Fingerprint128 FingerprintInstructionIgnoringOperands(const HloInstruction& instruction);

// The module's entry computation (structurally, with everything it calls)
// and config; names do not count.
Fingerprint128 FingerprintModule(const HloModule& module);

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_STRUCTURAL_HASH_H_
