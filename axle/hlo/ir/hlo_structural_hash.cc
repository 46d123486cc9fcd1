//===- hlo_structural_hash.cc - Structural identity of HLO -----------------===//
//
// The hasher, the instructions' identity (one Tie per attribute struct: a
// structured binding of all the struct's members, so adding a member without
// naming it here does not compile), and the computation and module
// fingerprints.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/ir/hlo_structural_hash.h"

#include <bit>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <typeinfo>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction_subclasses.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {
namespace {

// MurmurHash3's finalizer: a bijection that mixes every input bit into every
// output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Shape::operator==, but an array without a layout has the default one.
bool ShapesIdentical(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple() || a.IsBuffer()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!ShapesIdentical(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (a.dimensions() != b.dimensions() || a.dynamic_dimensions() != b.dynamic_dimensions()) {
    return false;
  }
  if (!a.IsArray()) return true;
  const Layout layout_a = a.has_layout() ? a.layout() : ShapeUtil::MakeDescendingLayout(a.rank());
  const Layout layout_b = b.has_layout() ? b.layout() : ShapeUtil::MakeDescendingLayout(b.rank());
  return layout_a == layout_b;
}

}  // namespace

std::string Fingerprint128::ToHex() const { return absl::StrFormat("%016x%016x", high, low); }

// --- StructuralHasher ----------------------------------------------------------

void StructuralHasher::AddWord(uint64_t word) {
  a_ = Mix(a_ ^ word);
  b_ = Mix(std::rotl(b_, 23) + word * 0x9e3779b97f4a7c15ull);
  ++count_;
}

void StructuralHasher::AddBytes(const void* data, size_t size) {
  AddWord(size);
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    AddWord(word);
  }
  if (i < size) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, size - i);
    AddWord(word);
  }
}

void StructuralHasher::Add(float value) { AddWord(std::bit_cast<uint32_t>(value)); }
void StructuralHasher::Add(double value) { AddWord(std::bit_cast<uint64_t>(value)); }
void StructuralHasher::Add(absl::string_view text) { AddBytes(text.data(), text.size()); }

void StructuralHasher::Add(const std::vector<bool>& bits) {
  AddWord(bits.size());
  for (bool bit : bits) AddWord(bit ? 1 : 0);
}

void StructuralHasher::Add(const Fingerprint128& fingerprint) {
  AddWord(fingerprint.low);
  AddWord(fingerprint.high);
}

// An array without a layout has the default (descending) one: the passes
// make some shapes without, the parser gives every shape one.
void StructuralHasher::Add(const Shape& shape) {
  Combine(shape.element_type(), shape.dimensions(), shape.dynamic_dimensions(),
          shape.tuple_shapes());
  if (!shape.IsArray()) return;
  if (shape.has_layout()) {
    Add(shape.layout());
  } else {
    Add(ShapeUtil::MakeDescendingLayout(shape.rank()));
  }
}

// Layout::operator== compares more than this (dim levels, split configs,
// physical shape); a hash may be coarser than equality.
void StructuralHasher::Add(const Layout& layout) {
  Add(layout.minor_to_major());
  AddWord(layout.tiles().size());
  for (const Tile& tile : layout.tiles()) Add(tile.dimensions);
  Combine(layout.tail_padding_alignment_in_elements(), layout.index_primitive_type(),
          layout.pointer_primitive_type(), layout.element_size_in_bits(), layout.memory_space(),
          layout.dynamic_shape_metadata_prefix_bytes());
}

void StructuralHasher::Add(const ProgramShape& shape) {
  Combine(shape.parameters(), shape.result());
}

// As Literal::operator==: the shape without its layout, and the bytes.
void StructuralHasher::Add(const Literal& literal) {
  const Shape& shape = literal.shape();
  Combine(shape.element_type(), shape.dimensions());
  if (shape.IsTuple()) {
    AddWord(literal.tuple_size());
    for (int64_t i = 0; i < literal.tuple_size(); ++i) Add(literal.tuple_element(i));
  } else if (shape.IsArray()) {
    AddBytes(literal.untyped_data(), literal.size_bytes());
  }
}

void StructuralHasher::Add(const Window& window) {
  AddWord(window.dimensions_size());
  for (const WindowDimension& d : window.dimensions()) {
    Combine(d.size(), d.stride(), d.padding_low(), d.padding_high(), d.window_dilation(),
            d.base_dilation(), d.window_reversal());
  }
}

void StructuralHasher::Add(const PaddingConfig& config) {
  AddWord(config.dimensions_size());
  for (const PaddingConfig::PaddingConfigDimension& d : config.dimensions()) {
    Combine(d.edge_padding_low(), d.edge_padding_high(), d.interior_padding());
  }
}

void StructuralHasher::Add(const DotDimensionNumbers& n) {
  Combine(n.lhs_contracting_dimensions(), n.rhs_contracting_dimensions(), n.lhs_batch_dimensions(),
          n.rhs_batch_dimensions());
}

void StructuralHasher::Add(const ConvolutionDimensionNumbers& n) {
  Combine(n.input_batch_dimension(), n.input_feature_dimension(), n.input_spatial_dimensions(),
          n.kernel_input_feature_dimension(), n.kernel_output_feature_dimension(),
          n.kernel_spatial_dimensions(), n.output_batch_dimension(), n.output_feature_dimension(),
          n.output_spatial_dimensions());
}

void StructuralHasher::Add(const GatherDimensionNumbers& n) {
  Combine(n.offset_dims(), n.collapsed_slice_dims(), n.start_index_map(), n.index_vector_dim(),
          n.operand_batching_dims(), n.start_indices_batching_dims());
}

void StructuralHasher::Add(const ScatterDimensionNumbers& n) {
  Combine(n.update_window_dims(), n.inserted_window_dims(), n.scatter_dims_to_operand_dims(),
          n.index_vector_dim(), n.input_batching_dims(), n.scatter_indices_batching_dims());
}

void StructuralHasher::Add(const PrecisionConfig& config) {
  Combine(config.operand_precision(), config.algorithm());
}

void StructuralHasher::Add(const TriangularSolveOptions& o) {
  Combine(o.left_side(), o.lower(), o.unit_diagonal(), o.transpose_a());
}

void StructuralHasher::Add(const CholeskyOptions& options) { Add(options.lower()); }
void StructuralHasher::Add(const ReplicaGroup& group) { Add(group.replica_ids()); }

void StructuralHasher::Add(const IotaReplicaGroupList& groups) {
  const auto& [num_groups, group_size, reshape_dims, transpose_perm] = groups;
  Combine(num_groups, group_size, reshape_dims, transpose_perm);
}

void StructuralHasher::Add(const OutputOperandAlias& alias) {
  const auto& [output_index, operand_number, operand_index] = alias;
  Combine(output_index, operand_number, operand_index);
}

void StructuralHasher::Add(const HloSharding& sharding) { Add(sharding.ToString()); }

void StructuralHasher::Add(const RawAttribute& attribute) {
  const auto& [name, value] = attribute;
  Combine(name, value);
}

Fingerprint128 StructuralHasher::Finish() const {
  return {Mix(a_ ^ Mix(count_)), Mix(b_ + a_ + count_)};
}

// --- The attribute structs -------------------------------------------------------

// Tie(attrs): every member of an attribute struct, as a tuple of references.
// Each binds all members by a structured binding, so a struct that gains a
// member fails to compile here until the member is named, and then it counts
// in both identity and hash.
#define AXLE_TIE_ATTRS(Type, ...)      \
  auto Tie(const Type& attrs) {        \
    const auto& [__VA_ARGS__] = attrs; \
    return std::tie(__VA_ARGS__);      \
  }

namespace {

AXLE_TIE_ATTRS(ParameterAttrs, parameter_number, parameter_replication)
AXLE_TIE_ATTRS(ConstantAttrs, literal, elided)
AXLE_TIE_ATTRS(GetTupleElementAttrs, tuple_index)
AXLE_TIE_ATTRS(IotaAttrs, iota_dimension)
AXLE_TIE_ATTRS(DimensionsAttrs, dimensions)
AXLE_TIE_ATTRS(SortAttrs, sort_dimension, is_stable)
AXLE_TIE_ATTRS(ReshapeAttrs, inferred_dimension)
AXLE_TIE_ATTRS(SliceAttrs, starts, limits, strides)
AXLE_TIE_ATTRS(DynamicSliceAttrs, dynamic_slice_sizes)
AXLE_TIE_ATTRS(PadAttrs, padding_config)
AXLE_TIE_ATTRS(CompareAttrs, direction, type)
AXLE_TIE_ATTRS(DotAttrs, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions,
               precision_config)
AXLE_TIE_ATTRS(ConvolutionAttrs, window, convolution_dimension_numbers, feature_group_count,
               batch_group_count, precision_config)
AXLE_TIE_ATTRS(WindowAttrs, window)
AXLE_TIE_ATTRS(GatherAttrs, gather_dimension_numbers, slice_sizes, indices_are_sorted)
AXLE_TIE_ATTRS(ScatterAttrs, scatter_dimension_numbers, indices_are_sorted, unique_indices)
AXLE_TIE_ATTRS(FftAttrs, fft_type, fft_length)
AXLE_TIE_ATTRS(RngAttrs, distribution)
AXLE_TIE_ATTRS(RngBitGeneratorAttrs, algorithm)
AXLE_TIE_ATTRS(TriangularSolveAttrs, options)
AXLE_TIE_ATTRS(CholeskyAttrs, options)
AXLE_TIE_ATTRS(ReducePrecisionAttrs, exponent_bits, mantissa_bits)
AXLE_TIE_ATTRS(BatchNormAttrs, epsilon, feature_index)
AXLE_TIE_ATTRS(CustomCallAttrs, custom_call_target, opaque, api_version,
               custom_call_has_side_effect, output_to_operand_aliasing, operand_layout_constraints,
               schedule, literal, window, convolution_dimension_numbers, feature_group_count,
               batch_group_count, precision_config)
AXLE_TIE_ATTRS(FusionAttrs, kind)
AXLE_TIE_ATTRS(CollectiveAttrs, replica_groups, iota_replica_groups, channel_id,
               use_global_device_ids, constrain_layout, dimensions, source_target_pairs)
AXLE_TIE_ATTRS(SendRecvAttrs, channel_id, is_host_transfer)
AXLE_TIE_ATTRS(FeedAttrs, config, outfeed_shape)
AXLE_TIE_ATTRS(TopKAttrs, k, largest)
AXLE_TIE_ATTRS(ScanAttrs, dimensions, num_carries, is_reverse, is_associative)
AXLE_TIE_ATTRS(AsyncAttrs, async_execution_thread)
AXLE_TIE_ATTRS(CopyStartAttrs, cross_program_prefetch_index)

#undef AXLE_TIE_ATTRS

// An instruction of a subclass missing from HloInstructionSubclasses fails
// the CHECK in VisitAttrs (every fingerprinted module, so every CSE run,
// reaches it).
using AttributeClasses = HloInstructionSubclasses;

// Calls visit(attrs) with the attribute struct of `instruction`'s subclass;
// false for a plain HloInstruction (no attributes).
template <typename Visit, typename... T>
bool VisitAttrs(const HloInstruction& instruction, HloClassList<T...>, Visit&& visit) {
  bool visited = false;
  auto try_class = [&](auto* tag) {
    using Class = std::remove_pointer_t<decltype(tag)>;
    if (visited || !Class::ClassOf(&instruction)) return;
    CHECK(typeid(instruction) == typeid(Class))
        << instruction.name() << ": " << HloOpcodeString(instruction.opcode())
        << " is not of the class hlo_structural_hash.cc expects";
    visit(static_cast<const Class&>(instruction).attrs());
    visited = true;
  };
  (try_class(static_cast<T*>(nullptr)), ...);
  if (!visited) {
    CHECK(typeid(instruction) == typeid(HloInstruction))
        << HloOpcodeString(instruction.opcode())
        << ": an attribute class missing from hlo_instruction_subclasses.h";
  }
  return visited;
}

bool IdenticalAttributes(const HloInstruction& a, const HloInstruction& b) {
  bool equal = true;
  VisitAttrs(a, AttributeClasses(), [&](const auto& attrs_a) {
    using Attrs = std::decay_t<decltype(attrs_a)>;
    VisitAttrs(b, AttributeClasses(), [&](const auto& attrs_b) {
      if constexpr (std::is_same_v<Attrs, std::decay_t<decltype(attrs_b)>>) {
        equal = Tie(attrs_a) == Tie(attrs_b);
      } else {
        equal = false;
      }
    });
  });
  return equal;
}

}  // namespace

// --- Instructions -------------------------------------------------------------------

bool IdenticalIgnoringOperands(const HloInstruction& a, const HloInstruction& b) {
  if (a.opcode() != b.opcode() || !ShapesIdentical(a.shape(), b.shape()) ||
      a.has_sharding() != b.has_sharding() ||
      (a.has_sharding() && !(a.sharding() == b.sharding())) ||
      a.frontend_attributes() != b.frontend_attributes() ||
      a.raw_backend_config_string() != b.raw_backend_config_string() ||
      a.raw_attributes() != b.raw_attributes()) {
    return false;
  }
  return IdenticalAttributes(a, b);
}

bool Identical(const HloInstruction& a, const HloInstruction& b) {
  return a.operands() == b.operands() && a.called_computations() == b.called_computations() &&
         IdenticalIgnoringOperands(a, b);
}

void HashIgnoringOperands(StructuralHasher& hasher, const HloInstruction& instruction) {
  hasher.Combine(instruction.opcode(), instruction.shape(), instruction.has_sharding());
  if (instruction.has_sharding()) hasher.Add(instruction.sharding());
  hasher.Combine(instruction.frontend_attributes(), instruction.raw_backend_config_string(),
                 instruction.raw_attributes());
  VisitAttrs(instruction, AttributeClasses(), [&](const auto& attrs) {
    std::apply([&](const auto&... members) { hasher.Combine(members...); }, Tie(attrs));
  });
}

// --- Computations and modules ---------------------------------------------------------

namespace {

// The instructions of `computation` in a post order its graph alone decides
// (not the order instructions were added in, which printing and parsing
// change): the parameters by number, then a depth-first walk from the root
// (operands in order, then control predecessors), then whatever the root
// does not reach, in insertion order.
std::vector<const HloInstruction*> CanonicalPostOrder(const HloComputation& computation) {
  std::vector<const HloInstruction*> order;
  absl::flat_hash_map<const HloInstruction*, bool> done;  // false: on the stack
  auto walk = [&](const HloInstruction* start) {
    if (done.contains(start)) return;
    std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start, 0}};
    done[start] = false;
    while (!stack.empty()) {
      auto& [instruction, next] = stack.back();
      const size_t operands = instruction->operands().size();
      const size_t total = operands + instruction->control_predecessors().size();
      if (next < total) {
        const HloInstruction* input = next < operands
                                          ? instruction->operands()[next]
                                          : instruction->control_predecessors()[next - operands];
        ++next;
        if (!done.contains(input)) {
          done[input] = false;
          stack.emplace_back(input, 0);
        }
        continue;
      }
      done[instruction] = true;
      order.push_back(instruction);
      stack.pop_back();
    }
  };
  for (const HloInstruction* parameter : computation.parameter_instructions()) walk(parameter);
  walk(computation.root_instruction());
  for (const HloInstruction* instruction : computation.instructions()) walk(instruction);
  return order;
}

// Fingerprints of computations, each computed once (a reducer called by
// many reduces).
class ComputationFingerprints {
 public:
  Fingerprint128 Of(const HloComputation& computation) {
    auto it = memo_.find(&computation);
    if (it != memo_.end()) return it->second;
    StructuralHasher hasher;
    hasher.Add(computation.execution_thread());
    absl::flat_hash_map<const HloInstruction*, int64_t> position;
    const std::vector<const HloInstruction*> order = CanonicalPostOrder(computation);
    hasher.Add(order.size());
    for (const HloInstruction* instruction : order) {
      const int64_t index = static_cast<int64_t>(position.size());
      position[instruction] = index;
      HashIgnoringOperands(hasher, *instruction);
      hasher.Add(instruction->operand_count());
      for (const HloInstruction* operand : instruction->operands()) {
        hasher.Add(position.at(operand));
      }
      hasher.Add(instruction->control_predecessors().size());
      for (const HloInstruction* pred : instruction->control_predecessors()) {
        hasher.Add(position.at(pred));
      }
      AddCalled(*instruction, hasher);
    }
    hasher.Add(position.at(computation.root_instruction()));
    Fingerprint128 fingerprint = hasher.Finish();
    memo_.emplace(&computation, fingerprint);
    return fingerprint;
  }

  void AddCalled(const HloInstruction& instruction, StructuralHasher& hasher) {
    hasher.Add(instruction.called_computations().size());
    for (const HloComputation* called : instruction.called_computations()) hasher.Add(Of(*called));
  }

 private:
  absl::flat_hash_map<const HloComputation*, Fingerprint128> memo_;
};

bool CalledIdentical(const HloInstruction& a, const HloInstruction& b) {
  if (a.called_computations().size() != b.called_computations().size()) return false;
  for (size_t i = 0; i < a.called_computations().size(); ++i) {
    const HloComputation* ca = a.called_computations()[i];
    const HloComputation* cb = b.called_computations()[i];
    if (ca != cb && !ComputationsIdentical(*ca, *cb)) return false;
  }
  return true;
}

}  // namespace

bool InstructionsIdenticalIgnoringOperands(const HloInstruction& a, const HloInstruction& b) {
  return IdenticalIgnoringOperands(a, b) && CalledIdentical(a, b);
}

Fingerprint128 FingerprintInstructionIgnoringOperands(const HloInstruction& instruction) {
  StructuralHasher hasher;
  HashIgnoringOperands(hasher, instruction);
  ComputationFingerprints computations;
  computations.AddCalled(instruction, hasher);
  return hasher.Finish();
}

bool ComputationsIdentical(const HloComputation& a, const HloComputation& b) {
  if (&a == &b) return true;
  if (a.execution_thread() != b.execution_thread()) return false;
  const std::vector<const HloInstruction*> order_a = CanonicalPostOrder(a);
  const std::vector<const HloInstruction*> order_b = CanonicalPostOrder(b);
  if (order_a.size() != order_b.size()) return false;
  absl::flat_hash_map<const HloInstruction*, int64_t> position_a, position_b;
  for (size_t i = 0; i < order_a.size(); ++i) {
    position_a[order_a[i]] = static_cast<int64_t>(i);
    position_b[order_b[i]] = static_cast<int64_t>(i);
  }
  auto same_positions = [&](const std::vector<HloInstruction*>& xs,
                            const std::vector<HloInstruction*>& ys) {
    if (xs.size() != ys.size()) return false;
    for (size_t k = 0; k < xs.size(); ++k) {
      if (position_a.at(xs[k]) != position_b.at(ys[k])) return false;
    }
    return true;
  };
  for (size_t i = 0; i < order_a.size(); ++i) {
    const HloInstruction& x = *order_a[i];
    const HloInstruction& y = *order_b[i];
    if (!same_positions(x.operands(), y.operands()) ||
        !same_positions(x.control_predecessors(), y.control_predecessors()) ||
        !InstructionsIdenticalIgnoringOperands(x, y)) {
      return false;
    }
  }
  return position_a.at(a.root_instruction()) == position_b.at(b.root_instruction());
}

Fingerprint128 FingerprintComputation(const HloComputation& computation) {
  return ComputationFingerprints().Of(computation);
}

Fingerprint128 FingerprintModule(const HloModule& module) {
  StructuralHasher hasher;
  hasher.Add(ComputationFingerprints().Of(*module.entry_computation()));
  // Every member of the config but the stack frame index (source locations,
  // like metadata) changes what the module does.
  const auto& [entry_computation_layout, replica_count, num_partitions, is_scheduled,
               input_output_alias, buffer_donor, frontend_attributes, raw_attributes,
               stack_frame_index] = module.config();
  hasher.Combine(entry_computation_layout, replica_count, num_partitions, is_scheduled,
                 frontend_attributes, raw_attributes);
  hasher.Add(input_output_alias.aliases().size());
  for (const HloInputOutputAliasConfig::Alias& alias : input_output_alias.aliases()) {
    hasher.Combine(alias.output_index, alias.parameter_number, alias.parameter_index, alias.kind);
  }
  hasher.Add(buffer_donor.donors().size());
  for (const HloBufferDonorConfig::Donor& donor : buffer_donor.donors()) {
    hasher.Combine(donor.parameter_number, donor.parameter_index);
  }
  return hasher.Finish();
}

}  // namespace axle
