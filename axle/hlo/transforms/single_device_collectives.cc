//===- single_device_collectives.cc - Collectives of a one-device run ------===//
#include "axle/hlo/transforms/single_device_collectives.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/send_recv_validation.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

constexpr absl::string_view kPass = "single-device-collectives";

// Element `index` of `tuple`: the operand itself when `tuple` is a tuple
// instruction.
HloInstruction* ElementOf(HloInstruction* tuple, int64_t index) {
  if (tuple->opcode() == HloOpcode::kTuple) return tuple->mutable_operand(index);
  return MakeGetTupleElement(tuple, index);
}

// Zeros of `shape` (arrays and tuples of them).
absl::StatusOr<HloInstruction*> MakeZeros(HloComputation* computation, const Shape& shape,
                                          const HloInstruction& for_instruction) {
  if (shape.IsArray()) {
    Literal zero(ShapeUtil::MakeShape(shape.element_type(), {}));
    return MakeFilledArray(computation, zero, WithDescendingLayout(shape));
  }
  if (!shape.IsTuple()) {
    return PassUnimplemented(kPass, for_instruction,
                             absl::StrCat("no value for a ", shape.ToString(false), " element"));
  }
  std::vector<HloInstruction*> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    AXLE_ASSIGN_OR_RETURN(HloInstruction * zeros, MakeZeros(computation, element, for_instruction));
    elements.push_back(zeros);
  }
  return MakeTuple(computation, elements);
}

// The tuple an async start returns: element 0 the operands, element 1
// `value`, zeros for the rest (contexts the done would read on a device).
absl::StatusOr<HloInstruction*> MakeStartTuple(HloInstruction* start, HloInstruction* value) {
  HloComputation* computation = start->parent();
  const Shape& shape = start->shape();
  std::vector<HloInstruction*> operands(start->operands().begin(), start->operands().end());
  std::vector<Shape> operand_shapes;
  operand_shapes.reserve(operands.size());
  for (const HloInstruction* operand : operands) operand_shapes.push_back(operand->shape());
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.tuple_shapes().size()); ++i) {
    const Shape& element = shape.tuple_shapes(i);
    if (i == 1) {
      elements.push_back(value);
    } else if (i == 0 && operands.size() == 1 &&
               ShapeUtil::Compatible(operands[0]->shape(), element)) {
      elements.push_back(operands[0]);
    } else if (i == 0 &&
               ShapeUtil::Compatible(ShapeUtil::MakeTupleShape(operand_shapes), element)) {
      elements.push_back(MakeTuple(computation, operands));
    } else {
      AXLE_ASSIGN_OR_RETURN(HloInstruction * zeros, MakeZeros(computation, element, *start));
      elements.push_back(zeros);
    }
  }
  return MakeTuple(computation, elements);
}

// Whether every replica group of `collective` has a single member.
bool GroupsOfOne(const HloCollectiveInstruction& collective) {
  if (collective.attrs().iota_replica_groups) {
    return collective.attrs().iota_replica_groups->group_size == 1;
  }
  if (collective.replica_groups().empty()) return false;
  for (const ReplicaGroup& group : collective.replica_groups()) {
    if (group.replica_ids_size() != 1) return false;
  }
  return true;
}

class Lowering {
 public:
  Lowering(const HloModuleConfig& config, bool keep_multi_device, bool keep_on_one_device)
      : replicas_(config.replica_count),
        partitions_(config.num_partitions),
        keep_(keep_on_one_device ||
              (keep_multi_device && config.replica_count * config.num_partitions > 1)),
        keep_singletons_(keep_on_one_device) {}

  // The instruction that replaces `instruction`, or null to keep it.
  absl::StatusOr<HloInstruction*> Lower(HloInstruction* instruction) {
    HloComputation* computation = instruction->parent();
    const HloOpcode opcode = instruction->opcode();
    switch (opcode) {
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
        if (keep_) return nullptr;
        if (replicas_ * partitions_ > 1) return MoreThanOneDevice(*instruction);
        return MakeZeros(computation, instruction->shape(), *instruction);
      case HloOpcode::kAsyncStart:
        return LowerAsyncStart(instruction);
      case HloOpcode::kAsyncUpdate:
        return instruction->mutable_operand(0);
      case HloOpcode::kCopyStart:
        // (destination, source, context): the copy is the operand itself.
        return MakeStartTuple(instruction, instruction->mutable_operand(0));
      case HloOpcode::kCopyDone:
        return LowerDone(instruction);
      default:
        break;
    }
    if (keep_ && HloOpcodeIsCollective(opcode) && HloOpcodeIsAsyncDone(opcode)) {
      return SynchronousOf(instruction);
    }
    if (opcode == HloOpcode::kAsyncDone ||
        (HloOpcodeIsCollective(opcode) && HloOpcodeIsAsyncDone(opcode))) {
      return LowerDone(instruction);
    }
    if (HloOpcodeIsCollective(opcode)) {
      // Kept unless every group has one member (no communicator needed).
      if (keep_ &&
          (keep_singletons_ || !SingletonGroups(*cast<HloCollectiveInstruction>(instruction)))) {
        return nullptr;
      }
      return LowerCollective(instruction);
    }
    return nullptr;
  }

 private:
  // Whether every participant group of `collective` has one device: groups
  // of one id, unless the ids are replicas that stand for all the
  // partitions of each (channel_id without use_global_device_ids on an op
  // that has that attribute, XLA's kCrossReplicaAndPartition).
  bool SingletonGroups(const HloCollectiveInstruction& collective) const {
    if (!GroupsOfOne(collective)) return false;
    switch (collective.opcode()) {
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kReduceScatter:
        return partitions_ == 1 || !collective.channel_id().has_value() ||
               collective.attrs().use_global_device_ids;
      default:
        return true;
    }
  }

  absl::Status MoreThanOneDevice(const HloInstruction& instruction) const {
    return PassUnimplemented(
        kPass, instruction,
        absl::StrCat("this op needs ", replicas_ * partitions_, " devices (replica_count=",
                     replicas_, ", num_partitions=", partitions_, "); this lowering runs one"));
  }

  absl::StatusOr<HloInstruction*> LowerCollective(HloInstruction* instruction) {
    HloComputation* computation = instruction->parent();
    const HloOpcode opcode = instruction->opcode();
    const auto& collective = *cast<HloCollectiveInstruction>(instruction);
    if (opcode == HloOpcode::kRaggedAllToAll) return LowerRaggedAllToAll(instruction);
    if (replicas_ * partitions_ > 1 && !GroupsOfOne(collective)) {
      return MoreThanOneDevice(*instruction);
    }
    // all-reduce-start returns its value; the other starts a tuple.
    Shape value_shape = instruction->shape();
    const bool start_tuple = HloOpcodeIsAsyncStart(opcode) && opcode != HloOpcode::kAllReduceStart;
    if (start_tuple) {
      if (!value_shape.IsTuple() || value_shape.tuple_shapes().size() < 2) {
        return PassUnimplemented(kPass, *instruction, "an async start whose result is not a tuple");
      }
      value_shape = value_shape.tuple_shapes(1);
    }
    if ((opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) &&
        instruction->operand_count() == 4 && instruction->operand(2)->shape().IsTuple()) {
      return LowerInPlacePermute(instruction);
    }
    std::vector<HloInstruction*> operands(instruction->operands().begin(),
                                          instruction->operands().end());
    HloInstruction* value = operands.size() == 1 ? operands[0] : MakeTuple(computation, operands);
    if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
      // Device 0 receives only what a {0,0} pair sends it.
      bool self_pair = false;
      for (const auto& [source, target] : collective.attrs().source_target_pairs) {
        self_pair = self_pair || (source == 0 && target == 0);
      }
      if (!self_pair) {
        AXLE_ASSIGN_OR_RETURN(value, MakeZeros(computation, value_shape, *instruction));
      }
    }
    if (!ShapeUtil::Compatible(value->shape(), value_shape)) {
      const Shape& from = value->shape();
      if (!from.IsArray() || !value_shape.IsArray() ||
          from.element_type() != value_shape.element_type() ||
          from.num_elements() != value_shape.num_elements()) {
        return PassUnimplemented(
            kPass, *instruction,
            absl::StrCat("gathering or scattering ", from.ToString(false), " into ",
                         value_shape.ToString(false),
                         " needs more than one participant; this lowering runs one device"));
      }
      value = MakeReshape(value, WithDescendingLayout(value_shape));
    }
    if (!start_tuple) return value;
    return MakeStartTuple(instruction, value);
  }

  // collective-permute's in-place form on one device
  // (axle/collectives/in_place_permute.h for the form): for each run c of
  // the pairs holding {0,0}, chunk c of each input buffer (a dynamic-slice
  // at its input offsets, clamped alike) is written into the output buffer
  // at its output offsets (a dynamic-update-slice); the output unchanged
  // otherwise.
  absl::StatusOr<HloInstruction*> LowerInPlacePermute(HloInstruction* instruction) {
    const auto& collective = *cast<HloCollectiveInstruction>(instruction);
    auto unsupported = [&](absl::string_view why) {
      return PassUnimplemented(kPass, *instruction,
                               absl::StrCat("collective-permute's in-place form: ", why));
    };
    const RawAttribute* raw = instruction->FindRawAttribute("slice_sizes");
    if (raw == nullptr) return unsupported("no slice_sizes");
    // "{{1,2},{3,4}}" -> {{1,2},{3,4}}.
    std::vector<std::vector<int64_t>> sizes;
    int depth = 0;
    int64_t number = -1;
    for (char c : raw->value) {
      if (c >= '0' && c <= '9') {
        number = (number < 0 ? 0 : number * 10) + (c - '0');
        continue;
      }
      if (number >= 0 && !sizes.empty()) sizes.back().push_back(number);
      number = -1;
      if (c == '{' && ++depth == 2) sizes.emplace_back();
      if (c == '}') --depth;
      if (c != '{' && c != '}' && c != ',' && c != ' ') return unsupported("bad slice_sizes");
    }
    HloInstruction* input = instruction->mutable_operand(0);
    HloInstruction* output = instruction->mutable_operand(1);
    const bool tuples = input->shape().IsTuple();
    const int64_t buffers = tuples ? input->shape().tuple_shapes_size() : 1;
    if (buffers == 0 || sizes.empty() || static_cast<int64_t>(sizes.size()) % buffers != 0) {
      return unsupported("slice_sizes does not give each buffer as many sizes");
    }
    const int64_t chunks = static_cast<int64_t>(sizes.size()) / buffers;
    const auto& pairs = collective.attrs().source_target_pairs;
    if (static_cast<int64_t>(pairs.size()) % chunks != 0) {
      return unsupported("the pairs do not split into a run per offset");
    }
    const int64_t run = static_cast<int64_t>(pairs.size()) / chunks;
    std::vector<HloInstruction*> outs;
    for (int64_t b = 0; b < buffers; ++b) outs.push_back(tuples ? ElementOf(output, b) : output);
    // The scalar start index of dimension d of chunk c of buffer b.
    auto start = [&](HloInstruction* offsets, int64_t b, int64_t c, int64_t d) {
      HloInstruction* mine = tuples ? ElementOf(offsets, b) : offsets;
      if (mine->shape().tuple_shapes_size() > 0 && mine->shape().tuple_shapes(0).IsTuple()) {
        mine = ElementOf(mine, c);
      }
      return ElementOf(mine, d);
    };
    for (int64_t c = 0; c < chunks; ++c) {
      bool self = false;
      for (int64_t i = c * run; i < (c + 1) * run; ++i) {
        self = self || (pairs[i].first == 0 && pairs[i].second == 0);
      }
      if (!self) continue;
      for (int64_t b = 0; b < buffers; ++b) {
        HloInstruction* in = tuples ? ElementOf(input, b) : input;
        const std::vector<int64_t>& size = sizes[b * chunks + c];
        if (!in->shape().IsArray() || static_cast<int64_t>(size.size()) != in->shape().rank()) {
          return unsupported("a slice size does not fit its buffer");
        }
        std::vector<HloInstruction*> from = {in};
        std::vector<HloInstruction*> into = {outs[b], nullptr};
        for (int64_t d = 0; d < in->shape().rank(); ++d) {
          from.push_back(start(instruction->mutable_operand(2), b, c, d));
          into.push_back(start(instruction->mutable_operand(3), b, c, d));
        }
        const Shape slice_shape =
            WithDescendingLayout(ShapeUtil::MakeShape(in->shape().element_type(), size));
        auto slice = std::make_unique<HloDynamicSliceInstruction>(HloOpcode::kDynamicSlice,
                                                                  slice_shape, from);
        slice->mutable_attrs()->dynamic_slice_sizes = size;
        into[1] = instruction->parent()->AddInstruction(std::move(slice));
        outs[b] = instruction->parent()->AddInstruction(
            HloInstruction::Create(HloOpcode::kDynamicUpdateSlice, outs[b]->shape(), into));
      }
    }
    HloInstruction* value = tuples ? MakeTuple(instruction->parent(), outs) : outs[0];
    if (instruction->opcode() == HloOpcode::kCollectivePermuteStart) {
      return MakeStartTuple(instruction, value);
    }
    return value;
  }

  // ragged-all-to-all with one participant: each update u copies rows
  // [input_offsets[u], +send_sizes[u]) of the input to rows
  // [output_offsets[u], +send_sizes[u]) of the output, rows outside either
  // array skipped. The sizes are values, so each update is a select over
  // the output rows of the input shifted by input_offsets[u] -
  // output_offsets[u] (a dynamic-slice of the input padded by the output's
  // row count on both sides).
  absl::StatusOr<HloInstruction*> LowerRaggedAllToAll(HloInstruction* instruction) {
    const auto& collective = *cast<HloCollectiveInstruction>(instruction);
    int64_t participants = GroupsOfOne(collective) ? 1 : replicas_ * partitions_;
    if (!collective.replica_groups().empty()) {
      participants = collective.replica_groups()[0].replica_ids_size();
    } else if (collective.attrs().iota_replica_groups) {
      participants = collective.attrs().iota_replica_groups->group_size;
    }
    if (participants > 1) {
      return PassUnimplemented(
          kPass, *instruction,
          absl::StrCat("ragged-all-to-all among ", participants,
                       " participants needs as many devices; this lowering runs one"));
    }
    if (instruction->operand_count() != 6) {
      return PassUnimplemented(kPass, *instruction, "ragged-all-to-all takes 6 operands");
    }
    HloInstruction* input = instruction->mutable_operand(0);
    HloInstruction* result = instruction->mutable_operand(1);
    const Shape& in = input->shape();
    const Shape& out = result->shape();
    if (!in.IsArray() || !out.IsArray() || in.rank() < 1 || in.rank() != out.rank() ||
        in.element_type() != out.element_type() ||
        !ShapeUtil::SameDimensions(ShapeUtil::DeleteDimensions({0}, in),
                                   ShapeUtil::DeleteDimensions({0}, out))) {
      return PassUnimplemented(kPass, *instruction,
                               "input and output must differ only in dimension 0");
    }
    const int64_t updates = instruction->operand(2)->shape().IsArray()
                                ? instruction->operand(2)->shape().num_elements()
                                : -1;
    for (int64_t i = 2; i < 6; ++i) {
      const Shape& shape = instruction->operand(i)->shape();
      if (!shape.IsArray() || shape.rank() != 1 || shape.dimensions(0) != updates ||
          !primitive_util::IsIntegralType(shape.element_type())) {
        return PassUnimplemented(kPass, *instruction,
                                 "offsets and sizes must be integer vectors of one length");
      }
    }
    const int64_t in_rows = in.dimensions(0), out_rows = out.dimensions(0);
    if (updates == 0 || in_rows == 0 || out_rows == 0) return result;
    HloComputation* computation = instruction->parent();
    const Shape scalar = ShapeUtil::MakeShape(S64, {});
    const Shape rows_shape = WithDescendingLayout(ShapeUtil::MakeShape(S64, {out_rows}));
    const Shape mask_shape = WithDescendingLayout(ShapeUtil::MakeShape(PRED, {out_rows}));
    const Shape out_shape = WithDescendingLayout(out);
    auto constant = [&](int64_t value) {
      return MakeConstant(computation, LiteralUtil::CreateR0<int64_t>(value));
    };
    // Element u of operand i, as an s64 scalar.
    auto element = [&](int64_t i, int64_t u) {
      HloInstruction* vector = instruction->mutable_operand(i);
      Shape one = WithDescendingLayout(vector->shape());
      one.set_dimensions(0, 1);
      HloInstruction* value = MakeReshape(MakeSlice(vector, one, {u}, {u + 1}, {1}),
                                          ShapeUtil::MakeShape(one.element_type(), {}));
      return computation->AddInstruction(
          HloInstruction::Create(HloOpcode::kConvert, scalar, {value}));
    };
    auto compare = [&](HloInstruction* lhs, HloInstruction* rhs, ComparisonDirection direction) {
      HloInstruction* operands[] = {lhs, rhs};
      auto instruction =
          std::make_unique<HloCompareInstruction>(HloOpcode::kCompare, mask_shape, operands);
      instruction->mutable_attrs()->direction = direction;
      return computation->AddInstruction(std::move(instruction));
    };
    auto all = [&](std::vector<HloInstruction*> masks) {
      HloInstruction* mask = masks[0];
      for (size_t m = 1; m < masks.size(); ++m) {
        mask = MakeBinary(HloOpcode::kAnd, mask, masks[m], mask_shape);
      }
      return mask;
    };
    auto rows = [&](HloInstruction* value) { return MakeBroadcast(value, rows_shape, {}); };
    // The input with out_rows rows of zeros above and below.
    PaddingConfig padding;
    for (int64_t d = 0; d < in.rank(); ++d) {
      PaddingConfig::PaddingConfigDimension* dimension = padding.add_dimensions();
      dimension->set_edge_padding_low(d == 0 ? out_rows : 0);
      dimension->set_edge_padding_high(d == 0 ? out_rows : 0);
    }
    Shape padded_shape = WithDescendingLayout(in);
    padded_shape.set_dimensions(0, in_rows + 2 * out_rows);
    HloInstruction* pad_operands[] = {
        input, MakeConstant(computation, Literal(ShapeUtil::MakeShape(in.element_type(), {})))};
    auto pad = std::make_unique<HloPadInstruction>(HloOpcode::kPad, padded_shape, pad_operands);
    pad->mutable_attrs()->padding_config = padding;
    HloInstruction* padded = computation->AddInstruction(std::move(pad));
    auto iota = std::make_unique<HloIotaInstruction>(HloOpcode::kIota, rows_shape,
                                                     absl::Span<HloInstruction* const>{});
    HloInstruction* row = computation->AddInstruction(std::move(iota));
    for (int64_t u = 0; u < updates; ++u) {
      HloInstruction* from = element(2, u);
      HloInstruction* size = element(3, u);
      HloInstruction* to = element(4, u);
      HloInstruction* shift = MakeBinary(HloOpcode::kSubtract, from, to, scalar);
      // Row i of `shifted` is input row i + shift.
      std::vector<HloInstruction*> operands = {
          padded, MakeBinary(HloOpcode::kAdd, constant(out_rows), shift, scalar)};
      for (int64_t d = 1; d < in.rank(); ++d) operands.push_back(constant(0));
      auto slice = std::make_unique<HloDynamicSliceInstruction>(HloOpcode::kDynamicSlice, out_shape,
                                                                operands);
      slice->mutable_attrs()->dynamic_slice_sizes = out_shape.dimensions();
      HloInstruction* shifted = computation->AddInstruction(std::move(slice));
      HloInstruction* source = MakeBinary(HloOpcode::kAdd, row, rows(shift), rows_shape);
      HloInstruction* within = MakeBinary(HloOpcode::kSubtract, row, rows(to), rows_shape);
      HloInstruction* mask =
          all({compare(within, rows(constant(0)), ComparisonDirection::kGe),
               compare(within, rows(size), ComparisonDirection::kLt),
               compare(source, rows(constant(0)), ComparisonDirection::kGe),
               compare(source, rows(constant(in_rows)), ComparisonDirection::kLt)});
      Shape out_mask = out_shape;
      out_mask.set_element_type(PRED);
      result = computation->AddInstruction(HloInstruction::Create(
          HloOpcode::kSelect, out_shape, {MakeBroadcast(mask, out_mask, {0}), shifted, result}));
    }
    return result;
  }

  static void SetExecutionThread(HloComputation* computation, const std::string& thread) {
    if (computation->execution_thread() == thread) return;
    computation->SetExecutionThread(thread);
    for (HloInstruction* instruction : computation->instructions()) {
      for (HloComputation* called : instruction->called_computations()) {
        SetExecutionThread(called, thread);
      }
    }
  }

  // async-start: call the wrapped computation now.
  absl::StatusOr<HloInstruction*> LowerAsyncStart(HloInstruction* instruction) {
    const Shape& shape = instruction->shape();
    HloComputation* wrapped = cast<HloAsyncInstruction>(instruction)->async_wrapped_computation();
    if (!shape.IsTuple() || shape.tuple_shapes().size() < 2 ||
        !ShapeUtil::Compatible(shape.tuple_shapes(1), wrapped->root_instruction()->shape())) {
      return PassUnimplemented(kPass, *instruction,
                               absl::StrCat("the result ", shape.ToString(false),
                                            " does not hold the wrapped computation's"));
    }
    std::vector<HloInstruction*> operands(instruction->operands().begin(),
                                          instruction->operands().end());
    HloInstruction* call = instruction->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, shape.tuple_shapes(1), operands));
    call->set_to_apply(wrapped);
    // Called now, from the caller's thread: the wrapped computation (and
    // what it calls) runs on that thread, as the verifier requires.
    SetExecutionThread(wrapped, instruction->parent()->execution_thread());
    return MakeStartTuple(instruction, call);
  }

  // Kept collectives (several devices): a -done of an all-reduce-,
  // all-gather- or collective-permute-start becomes the synchronous op, with
  // the start's operands and attributes.
  absl::StatusOr<HloInstruction*> SynchronousOf(HloInstruction* done) {
    HloInstruction* start = done->mutable_operand(0);
    HloOpcode sync;
    switch (start->opcode()) {
      case HloOpcode::kAllReduceStart:
        sync = HloOpcode::kAllReduce;
        break;
      case HloOpcode::kAllGatherStart:
        sync = HloOpcode::kAllGather;
        break;
      case HloOpcode::kCollectivePermuteStart:
        sync = HloOpcode::kCollectivePermute;
        break;
      default:
        return LowerDone(done);
    }
    const auto* collective = dyn_cast<HloCollectiveInstruction>(start);
    if (collective == nullptr) return LowerDone(done);
    std::vector<HloInstruction*> operands(start->operands().begin(), start->operands().end());
    auto instruction = std::make_unique<HloCollectiveInstruction>(sync, done->shape(), operands);
    *instruction->mutable_attrs() = collective->attrs();
    // collective-permute's in-place form keeps its slice_sizes there.
    *instruction->mutable_raw_attributes() = start->raw_attributes();
    instruction->SetName(start->name());
    HloInstruction* made = done->parent()->AddInstruction(std::move(instruction));
    if (start->called_computations().size() == 1) made->set_to_apply(start->to_apply());
    // The op runs where the -done was: what had to precede the start
    // precedes it; what only had to follow the start is free (following
    // the op could close a cycle through the -done's own predecessors).
    for (HloInstruction* predecessor : start->control_predecessors()) {
      predecessor->AddControlDependencyTo(made);
    }
    start->DropAllControlDeps();
    return made;  // replacing the -done removes the start
  }

  // A -done: element 1 of its start's tuple, or the start's value itself
  // (all-reduce-done).
  absl::StatusOr<HloInstruction*> LowerDone(HloInstruction* instruction) {
    HloInstruction* start = instruction->mutable_operand(0);
    const Shape& from = start->shape();
    if (from.IsTuple() && from.tuple_shapes().size() >= 2 &&
        ShapeUtil::Compatible(from.tuple_shapes(1), instruction->shape())) {
      return ElementOf(start, 1);
    }
    if (ShapeUtil::Compatible(from, instruction->shape())) return start;
    return PassUnimplemented(
        kPass, *instruction,
        absl::StrCat("its operand ", from.ToString(false), " is not the tuple of an async start"));
  }

  int64_t replicas_, partitions_;
  bool keep_;  // several devices (or keep_on_one_device), and the backend runs their collectives
  bool keep_singletons_;  // keep_on_one_device: groups of one member kept too
};

// The _xla_send_recv_validation of a send/recv pair with `num_pairs`
// pairs (hlo/text/send_recv_validation.h), which the pair's
// collective-permute carries: the backend counts the permute's executions
// in each run (a loop body's permute runs once per iteration) and moves a
// pair's data only on the executions it names. None: every execution.
absl::StatusOr<std::optional<std::string>> ValidationOf(const HloInstruction& recv,
                                                        const HloInstruction& send,
                                                        size_t num_pairs) {
  const auto& recv_attributes = recv.frontend_attributes();
  const auto& send_attributes = send.frontend_attributes();
  auto recv_text = recv_attributes.find(kSendRecvValidationAttribute);
  auto send_text = send_attributes.find(kSendRecvValidationAttribute);
  const bool recv_has = recv_text != recv_attributes.end();
  const bool send_has = send_text != send_attributes.end();
  if (recv_has != send_has || (recv_has && recv_text->second != send_text->second)) {
    return PassUnimplemented(
        kPass, recv,
        absl::StrCat("its send ", send.name(), " has another ", kSendRecvValidationAttribute));
  }
  if (!recv_has) return std::nullopt;
  absl::StatusOr<SendRecvValidation> validation =
      ParseSendRecvValidation(recv_text->second, num_pairs);
  if (!validation.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(recv.name(), ": ", validation.status().message()));
  }
  if (validation->always()) return std::nullopt;
  return recv_text->second;
}

// Several devices, kept collectives: each recv-done and the send of the
// same channel and _xla_send_recv_source_target_pairs in its computation become one
// collective-permute of the send's data, as the interpreter's multi-participant mode computes them
// (a target gets its source's data, a device that is no target zeros); the dones' tokens come from
// after-all. The pairs are read as XLA reads them (collectives/replica_groups.h, SendRecvPairsOf).
absl::StatusOr<bool> SendRecvToPermutes(HloComputation* computation,
                                        const HloModuleConfig& config) {
  auto pairs_text = [](const HloInstruction* instruction) -> const std::string* {
    auto it = instruction->frontend_attributes().find("_xla_send_recv_source_target_pairs");
    return it == instruction->frontend_attributes().end() ? nullptr : &it->second;
  };
  std::vector<HloInstruction*> sends, recv_dones, send_dones;
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kSend) sends.push_back(instruction);
    if (instruction->opcode() == HloOpcode::kRecvDone) recv_dones.push_back(instruction);
    if (instruction->opcode() == HloOpcode::kSendDone) send_dones.push_back(instruction);
  }
  if (sends.empty() && recv_dones.empty()) return false;
  for (HloInstruction* done : recv_dones) {
    HloInstruction* recv = done->mutable_operand(0);
    const auto* attrs = dyn_cast<HloSendRecvInstruction>(recv);
    if (recv->opcode() != HloOpcode::kRecv || attrs == nullptr) {
      return PassUnimplemented(kPass, *done, "does not complete a recv");
    }
    if (attrs->is_host_transfer()) {
      return PassUnimplemented(kPass, *done, "host transfers need host I/O");
    }
    const std::string* text = pairs_text(recv);
    if (text == nullptr) {
      return PassUnimplemented(kPass, *recv,
                               "send/recv without _xla_send_recv_source_target_pairs among "
                               "several devices");
    }
    HloInstruction* send = nullptr;
    for (HloInstruction*& candidate : sends) {
      const auto* send_attrs =
          candidate == nullptr ? nullptr : dyn_cast<HloSendRecvInstruction>(candidate);
      if (send_attrs == nullptr || send_attrs->channel_id() != attrs->channel_id() ||
          pairs_text(candidate) == nullptr || *pairs_text(candidate) != *text) {
        continue;
      }
      send = candidate;
      candidate = nullptr;
      break;
    }
    if (send == nullptr) {
      return PassUnimplemented(kPass, *recv,
                               absl::StrCat("no send of channel ", attrs->channel_id().value_or(-1),
                                            " with the same source-target pairs in its "
                                            "computation"));
    }
    const Shape& data = send->operand(0)->shape();
    if (!done->shape().IsTuple() || done->shape().tuple_shapes().empty() ||
        !ShapeUtil::Compatible(done->shape().tuple_shapes(0), data)) {
      return PassUnimplemented(kPass, *done, "does not receive its send's data shape");
    }
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
        ParseSendRecvSourceTargetPairs(*text);
    if (!pairs.ok()) return PassUnimplemented(kPass, *recv, pairs.status().message());
    AXLE_ASSIGN_OR_RETURN(std::optional<std::string> validation,
                          ValidationOf(*recv, *send, pairs->size()));
    auto permute = std::make_unique<HloCollectiveInstruction>(
        HloOpcode::kCollectivePermute, data,
        absl::Span<HloInstruction* const>{send->mutable_operand(0)});
    if (validation.has_value()) {
      (*permute->mutable_frontend_attributes())[kSendRecvValidationAttribute] = *validation;
    }
    permute->mutable_attrs()->source_target_pairs = *std::move(pairs);
    // XLA's reading (GetNcclP2PConfigForSendRecv): a channel id > 0 makes
    // the pairs partition ids, alike in every replica; else replica ids,
    // alike in every partition. A collective-permute reads its pairs the
    // same way with and without a channel_id. On a grid of one replica
    // (partition) the pairs name the partitions (replicas).
    bool cross_partition = attrs->channel_id().value_or(0) > 0;
    if (config.replica_count == 1) cross_partition = true;
    if (config.num_partitions == 1) cross_partition = false;
    if (cross_partition) permute->mutable_attrs()->channel_id = attrs->channel_id().value_or(0);
    permute->SetName(absl::StrCat(send->name(), ".permute"));
    HloInstruction* value = computation->AddInstruction(std::move(permute));
    std::vector<HloInstruction*> elements = {value};
    for (size_t i = 1; i < done->shape().tuple_shapes().size(); ++i) {
      const Shape& element = done->shape().tuple_shapes(i);
      if (!element.IsToken()) {
        return PassUnimplemented(kPass, *done, "a recv-done is (data, token)");
      }
      elements.push_back(computation->AddInstruction(
          HloInstruction::Create(HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), {})));
    }
    HloInstruction* tuple = computation->AddInstruction(
        HloInstruction::Create(HloOpcode::kTuple, done->shape(), elements));
    recv->DropAllControlDeps();
    AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(done, tuple));
    if (recv->users().empty()) AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(recv));
  }
  for (HloInstruction* done : send_dones) {
    HloInstruction* send = done->mutable_operand(0);
    if (std::find(sends.begin(), sends.end(), send) != sends.end()) {
      return PassUnimplemented(kPass, *send, "no recv-done of the same channel and pairs");
    }
    send->DropAllControlDeps();
    AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(
        done, computation->AddInstruction(
                  HloInstruction::Create(HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), {}))));
    if (send->users().empty()) AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(send));
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> LowerSingleDeviceCollectives::Run(HloModule* module) {
  bool changed = false;
  if (keep_on_one_device_ ||
      (keep_multi_device_ &&
       module->config().replica_count * module->config().num_partitions > 1)) {
    for (HloComputation* computation : module->MakeComputationPostOrder()) {
      if (computation->IsFusionComputation()) continue;
      AXLE_ASSIGN_OR_RETURN(bool rewrote, SendRecvToPermutes(computation, module->config()));
      changed = changed || rewrote;
    }
  }
  Lowering lowering(module->config(), keep_multi_device_, keep_on_one_device_);
  // Callees first, so that an async-start's wrapped computation is lowered
  // before the start becomes a call of it.
  AXLE_ASSIGN_OR_RETURN(const bool lowered,
                        ReplaceEachInstruction(module, [&](HloInstruction* instruction) {
                          return lowering.Lower(instruction);
                        }));
  changed = changed || lowered;
  // Reducers of the all-reduces, the async computations' done halves.
  if (changed) module->RemoveUnusedComputations();
  return changed;
}

}  // namespace axle
