//===- evaluator_collectives.cc - Collectives among several participants ---===//
//
// The interpreter's multi-participant mode: every participant (a thread of
// this process, or a process of a run) evaluates the whole module; at a
// collective each one hands its operands to all the others through the
// communicator (an all-gather of every operand over every participant),
// then works out its own result from everyone's values. That moves more
// bytes than needed but keeps the semantics in one obvious place:
//
//  - all-reduce, reduce-scatter: the group's values folded with to_apply in
//    group order, ((v0 op v1) op v2) ..., the order communicator.h's
//    transports reduce in; reduce-scatter keeps piece `rank` along its
//    dimension.
//  - all-gather: the group's values concatenated along the dimension.
//  - all-to-all: piece `rank` of every member, concatenated (array form,
//    split = concat dimension), or element `rank` of every member's tuple.
//  - collective-permute: the value of the source whose target is this
//    participant, zeros when there is none. With _xla_send_recv_validation
//    a pair moves data only on the executions of the instruction it names
//    (counted from 0 in each run), as XLA's collective-permute thunk does;
//    on the others its target gets zeros.
//  - collective-permute's in-place form (input, output, input_offsets,
//    output_offsets; collectives/in_place_permute.h): the output with the
//    slices received from each run's source written in; only the slices
//    travel (RunInPlacePermute, as the cpu backend does).
//  - collective-broadcast: the group's first member's value.
//  - send / recv (with _xla_send_recv_source_target_pairs, read as XLA
//    reads them: replica_groups.h, SendRecvPairsOf): the send hands its
//    data to everyone; a target's recv-done
//    returns its source's, a non-target's zeros. Sends always run (they
//    are side effects), before their recv-done in the module's order.
//    With _xla_send_recv_validation a pair moves data only on the
//    executions of the send it names (counted from 0 in each run); on the
//    others its target's recv-done returns zeros (XLA leaves the buffer
//    unspecified).
//
// Before the values, every participant shares a fingerprint of the
// collective it is at (opcode, name, operand shapes); a difference means
// the participants run different modules or shapes, reported as such.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/dimension_split.h"
#include "axle/collectives/in_place_permute.h"
#include "axle/collectives/replica_groups.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/ragged_rows.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/send_recv_validation.h"

namespace axle {
namespace eval_internal {
namespace {

// FNV-1a over `text`.
uint64_t Fingerprint(absl::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// Every participant's copy of `mine` (index: flattened id).
absl::StatusOr<std::vector<Literal>> GatherFromAll(Communicator& communicator,
                                                   const Literal& mine) {
  int size = communicator.size();
  std::vector<int> everyone(size);
  for (int i = 0; i < size; ++i) everyone[i] = i;
  int64_t bytes = mine.size_bytes();
  std::vector<char> all(static_cast<size_t>(bytes) * size);
  AXLE_RETURN_IF_ERROR(communicator.AllGather(everyone, mine.untyped_data(), all.data(), bytes));
  std::vector<Literal> result;
  result.reserve(size);
  for (int i = 0; i < size; ++i) {
    Literal& value = result.emplace_back(mine.shape());
    if (bytes > 0) std::memcpy(value.untyped_data(), all.data() + i * bytes, bytes);
  }
  return result;
}

// Checks that every participant is at the same collective with the same
// operand shapes.
absl::Status CheckSameCollective(Communicator& communicator, const HloInstruction& instruction,
                                 absl::Span<const Literal* const> operands) {
  std::string what = absl::StrCat(HloOpcodeString(instruction.opcode()), " ", instruction.name());
  for (const Literal* operand : operands)
    absl::StrAppend(&what, " ", operand->shape().ToString(false));
  uint64_t mine = Fingerprint(what);
  int size = communicator.size();
  std::vector<int> everyone(size);
  for (int i = 0; i < size; ++i) everyone[i] = i;
  std::vector<uint64_t> all(size);
  AXLE_RETURN_IF_ERROR(communicator.AllGather(everyone, &mine, all.data(), sizeof(mine)));
  for (int i = 0; i < size; ++i) {
    if (all[i] != mine) {
      return absl::FailedPreconditionError(absl::StrCat(
          "participant ", i, " is at a different collective or operand shapes than participant ",
          communicator.rank(), ", which runs ", what,
          ": the participants must run the same module on arguments of the same shapes"));
    }
  }
  return absl::OkStatus();
}

// Folds `values` in order with the scalar computation `reducer`.
absl::StatusOr<Literal> Fold(HloEvaluator& evaluator, const HloInstruction& instruction,
                             const std::vector<const Literal*>& values) {
  if (instruction.to_apply() == nullptr) return InvalidInstruction(instruction, "has no to_apply");
  Literal acc = values[0]->Clone();
  for (size_t i = 1; i < values.size(); ++i) {
    Literal next(acc.shape());
    void* out = next.untyped_data();
    Lanes args[2] = {LanesOf(acc), LanesOf(*values[i])};
    AXLE_RETURN_IF_ERROR(evaluator.RunLanewise(*instruction.to_apply(), args,
                                               absl::MakeConstSpan(&out, 1), acc.element_count()));
    acc = std::move(next);
  }
  return acc;
}

using Split = DimensionSplit;
absl::StatusOr<Split> SplitOf(const HloInstruction& instruction, const Shape& shape, int64_t dim) {
  absl::StatusOr<Split> split = SplitAtDimension(shape, dim);
  if (!split.ok()) return InvalidInstruction(instruction, split.status().message());
  return split;
}

// Concatenates pieces (equal shapes) along `dim`.
absl::StatusOr<Literal> Concatenate(const HloInstruction& instruction,
                                    const std::vector<const Literal*>& pieces, int64_t dim,
                                    const Shape& result_shape) {
  AXLE_ASSIGN_OR_RETURN(Split piece, SplitOf(instruction, pieces[0]->shape(), dim));
  if (result_shape.num_elements() !=
      pieces[0]->element_count() * static_cast<int64_t>(pieces.size())) {
    return InvalidInstruction(
        instruction, absl::StrCat("result ", result_shape.ToString(false), " does not hold ",
                                  pieces.size(), " x ", pieces[0]->shape().ToString(false)));
  }
  Literal result(result_shape);
  auto* out = static_cast<char*>(result.untyped_data());
  int64_t row = piece.length * piece.inner;
  for (int64_t o = 0; o < piece.outer; ++o) {
    for (size_t m = 0; m < pieces.size(); ++m) {
      const auto* in = static_cast<const char*>(pieces[m]->untyped_data());
      std::memcpy(out + (o * pieces.size() + m) * row, in + o * row, row);
    }
  }
  return result;
}

// Piece `index` of `count` equal pieces of `value` along `dim`.
absl::StatusOr<Literal> PieceOf(const HloInstruction& instruction, const Literal& value,
                                int64_t dim, int64_t index, int64_t count) {
  AXLE_ASSIGN_OR_RETURN(Split whole, SplitOf(instruction, value.shape(), dim));
  if (whole.length % count != 0) {
    return InvalidInstruction(instruction,
                              absl::StrCat("dimension ", dim, " of ", value.shape().ToString(false),
                                           " does not split into ", count, " pieces"));
  }
  Shape shape = value.shape();
  shape.set_dimensions(dim, whole.length / count);
  Literal result(shape);
  int64_t row = (whole.length / count) * whole.inner;
  const auto* in = static_cast<const char*>(value.untyped_data());
  auto* out = static_cast<char*>(result.untyped_data());
  for (int64_t o = 0; o < whole.outer; ++o) {
    std::memcpy(out + o * row, in + (o * whole.length * whole.inner) + index * row, row);
  }
  return result;
}

// ragged-all-to-all(input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes) among the group's n members, as XLA defines
// it: the offsets and sizes hold n * k updates, update j * k + t of a member
// going to member j; member i's update sends rows [input_offsets[u],
// +send_sizes[u]) of its input to rows [output_offsets[u], +send_sizes[u])
// of member j's output. This member's result is its output operand with
// the updates addressed to it applied in member order, then update order
// (rows outside either array skipped, as with one participant).
// recv_sizes is not read: the senders' sizes say it.
absl::StatusOr<Literal> RaggedAllToAll(const HloInstruction& instruction,
                                       const std::vector<std::vector<Literal>>& values,
                                       const ParticipantGroup& group) {
  if (values.size() != 6) return InvalidInstruction(instruction, "needs 6 operands");
  const Shape& in = values[0][0].shape();
  const Shape& out = values[1][0].shape();
  if (in.rank() < 1 || in.rank() != out.rank() || in.element_type() != out.element_type() ||
      !ShapeUtil::SameDimensions(ShapeUtil::DeleteDimensions({0}, in),
                                 ShapeUtil::DeleteDimensions({0}, out))) {
    return InvalidInstruction(instruction,
                              "input and output must be arrays that differ only in dimension 0");
  }
  const int64_t updates = values[2][0].element_count();
  for (size_t i = 2; i < 6; ++i) {
    const Shape& shape = values[i][0].shape();
    if (shape.rank() != 1 || shape.dimensions(0) != updates ||
        !primitive_util::IsIntegralType(shape.element_type())) {
      return InvalidInstruction(instruction,
                                "offsets and sizes must be integer vectors of one length");
    }
  }
  const auto n = static_cast<int64_t>(group.members.size());
  if (updates % n != 0) {
    return InvalidInstruction(
        instruction, absl::StrCat(updates, " updates do not split among ", n, " participants"));
  }
  const int64_t k = updates / n;
  const int64_t me = group.members[group.rank];
  Literal result = values[1][me].Clone();
  int64_t row_bytes = primitive_util::ByteWidth(in.element_type());
  for (int64_t d = 1; d < in.rank(); ++d) row_bytes *= in.dimensions(d);
  const int64_t in_rows = in.dimensions(0), out_rows = out.dimensions(0);
  auto* dst = static_cast<char*>(result.untyped_data());
  for (int64_t sender : group.members) {
    const auto* src = static_cast<const char*>(values[0][sender].untyped_data());
    for (int64_t t = 0; t < k; ++t) {
      const int64_t u = group.rank * k + t;
      CopyRaggedRows(src, in_rows, dst, out_rows, row_bytes, *values[2][sender].GetIntegralAsS64(u),
                     *values[3][sender].GetIntegralAsS64(u),
                     *values[4][sender].GetIntegralAsS64(u));
    }
  }
  return result;
}

int64_t FirstDimension(const HloCollectiveInstruction& collective) {
  return collective.attrs().dimensions.empty() ? 0 : collective.attrs().dimensions[0];
}

}  // namespace

namespace {

const Literal& LiteralAt(const Literal& literal, const ShapeIndex& index) {
  const Literal* at = &literal;
  for (int64_t i : index) at = &at->tuple_element(i);
  return *at;
}
Literal& MutableLiteralAt(Literal& literal, const ShapeIndex& index) {
  Literal* at = &literal;
  for (int64_t i : index) at = &at->mutable_tuple_element(i);
  return *at;
}

}  // namespace

absl::StatusOr<Literal> EvaluateInPlacePermute(const HloCollectiveInstruction& collective,
                                               absl::Span<const Literal* const> operands,
                                               Communicator& communicator, int64_t replica_count,
                                               int64_t partition_count, int64_t me) {
  const DeviceGrid grid{replica_count, partition_count};
  AXLE_ASSIGN_OR_RETURN(InPlacePermute permute, InPlacePermuteOf(collective, grid));
  if (operands.size() != 4) return InvalidInstruction(collective, "needs four operands");
  Literal output = operands[1]->Clone();
  std::vector<const char*> inputs;
  std::vector<char*> outputs;
  for (int64_t b = 0; b < permute.buffers; ++b) {
    const ShapeIndex index = permute.BufferIndex(b);
    inputs.push_back(static_cast<const char*>(LiteralAt(*operands[0], index).untyped_data()));
    outputs.push_back(static_cast<char*>(MutableLiteralAt(output, index).untyped_data()));
  }
  auto offsets = [&](int64_t buffer, int64_t chunk, bool input) {
    const int64_t rank = (input ? permute.inputs : permute.outputs)[buffer].rank();
    std::vector<int64_t> starts(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const Literal& scalar =
          LiteralAt(*operands[input ? 2 : 3], permute.OffsetIndex(buffer, chunk, d));
      starts[d] = scalar.GetIntegralAsS64(0).value_or(0);
    }
    return starts;
  };
  absl::Status status = RunInPlacePermute(communicator, permute, me, offsets, inputs, outputs);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(Describe(collective), ": ", status.message()));
  }
  if (collective.opcode() != HloOpcode::kCollectivePermuteStart) return output;
  // (input, output, context...): the context is zeros.
  const Shape& shape = collective.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() < 2 ||
      !ShapeUtil::Compatible(shape.tuple_shapes(0), operands[0]->shape()) ||
      !ShapeUtil::Compatible(shape.tuple_shapes(1), output.shape())) {
    return InvalidInstruction(collective, "must produce (input, output, context...)");
  }
  Literal wrapped(shape);
  wrapped.mutable_tuple_element(0) = operands[0]->Clone();
  wrapped.mutable_tuple_element(1) = std::move(output);
  return wrapped;
}

absl::StatusOr<Literal> EvaluateCollectiveAmongParticipants(
    HloEvaluator& evaluator, const HloCollectiveInstruction& collective,
    absl::Span<const Literal* const> operands, const HloEvaluator::Participant& participant,
    absl::flat_hash_map<const HloInstruction*, int64_t>& executions) {
  Communicator& communicator = *participant.communicator;
  DeviceGrid grid{participant.replica_count, participant.partition_count};
  int64_t me = grid.FlattenedId(participant.replica_id, participant.partition_id);
  HloOpcode op = collective.opcode();
  if (IsInPlacePermute(collective)) {
    if (collective.frontend_attributes().count(kSendRecvValidationAttribute) != 0) {
      return absl::UnimplementedError(
          absl::StrCat(Describe(collective), ": the in-place form with ",
                       kSendRecvValidationAttribute, " is not supported yet"));
    }
    AXLE_RETURN_IF_ERROR(CheckSameCollective(communicator, collective, operands));
    return EvaluateInPlacePermute(collective, operands, communicator, grid.replica_count,
                                  grid.partition_count, me);
  }
  for (const Literal* operand : operands) {
    AXLE_RETURN_IF_ERROR(ExpectArray(collective, *operand, "operand"));
  }
  AXLE_RETURN_IF_ERROR(CheckSameCollective(communicator, collective, operands));
  // values[k][d]: operand k of participant d.
  std::vector<std::vector<Literal>> values;
  for (const Literal* operand : operands) {
    AXLE_ASSIGN_OR_RETURN(values.emplace_back(), GatherFromAll(communicator, *operand));
  }
  auto of = [&](size_t k, const std::vector<int64_t>& members) {
    std::vector<const Literal*> result;
    result.reserve(members.size());
    for (int64_t d : members) result.push_back(&values[k][d]);
    return result;
  };

  // The result before any async wrapping, one literal per operand.
  Shape result_shape = collective.shape();
  bool wrap_in_start_tuple = false;
  if (HloOpcodeIsAsyncStart(op) && op != HloOpcode::kAllReduceStart && result_shape.IsTuple() &&
      result_shape.tuple_shapes_size() >= 2) {
    result_shape = result_shape.tuple_shapes(1);
    wrap_in_start_tuple = true;
  }
  auto leaf_shape = [&](size_t k) -> const Shape& {
    return result_shape.IsTuple() ? result_shape.tuple_shapes(k) : result_shape;
  };
  if (result_shape.IsTuple() &&
      static_cast<size_t>(result_shape.tuple_shapes_size()) != operands.size()) {
    return InvalidInstruction(collective, "the result tuple must have one element per operand");
  }
  std::vector<Literal> results;
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast: {
      AXLE_ASSIGN_OR_RETURN(auto groups, ParticipantGroupsOf(collective, grid));
      AXLE_ASSIGN_OR_RETURN(ParticipantGroup group, FindParticipantGroup(groups, me));
      int64_t n = static_cast<int64_t>(group.members.size());
      if (op == HloOpcode::kAllToAll && collective.attrs().dimensions.empty()) {
        // Tuple form: element m of the result is member m's operand `rank`.
        if (static_cast<int64_t>(operands.size()) != n) {
          return InvalidInstruction(collective, absl::StrCat("the tuple form needs one operand per "
                                                             "member (",
                                                             n, "), has ", operands.size()));
        }
        for (int64_t m = 0; m < n; ++m) {
          results.push_back(values[group.rank][group.members[m]].Clone());
        }
        break;
      }
      for (size_t k = 0; k < operands.size(); ++k) {
        std::vector<const Literal*> members = of(k, group.members);
        switch (op) {
          case HloOpcode::kAllReduce:
          case HloOpcode::kAllReduceStart: {
            AXLE_ASSIGN_OR_RETURN(results.emplace_back(), Fold(evaluator, collective, members));
            break;
          }
          case HloOpcode::kReduceScatter: {
            AXLE_ASSIGN_OR_RETURN(Literal folded, Fold(evaluator, collective, members));
            AXLE_ASSIGN_OR_RETURN(
                results.emplace_back(),
                PieceOf(collective, folded, FirstDimension(collective), group.rank, n));
            break;
          }
          case HloOpcode::kAllGather:
          case HloOpcode::kAllGatherStart: {
            AXLE_ASSIGN_OR_RETURN(
                results.emplace_back(),
                Concatenate(collective, members, FirstDimension(collective), leaf_shape(k)));
            break;
          }
          case HloOpcode::kAllToAll: {
            std::vector<Literal> pieces;
            for (const Literal* member : members) {
              AXLE_ASSIGN_OR_RETURN(
                  pieces.emplace_back(),
                  PieceOf(collective, *member, FirstDimension(collective), group.rank, n));
            }
            std::vector<const Literal*> pointers;
            pointers.reserve(pieces.size());
            for (const Literal& piece : pieces) pointers.push_back(&piece);
            AXLE_ASSIGN_OR_RETURN(
                results.emplace_back(),
                Concatenate(collective, pointers, FirstDimension(collective), leaf_shape(k)));
            break;
          }
          default:  // collective-broadcast
            results.push_back(members[0]->Clone());
            break;
        }
      }
      break;
    }
    case HloOpcode::kRaggedAllToAll: {
      AXLE_ASSIGN_OR_RETURN(auto groups, ParticipantGroupsOf(collective, grid));
      AXLE_ASSIGN_OR_RETURN(ParticipantGroup group, FindParticipantGroup(groups, me));
      AXLE_ASSIGN_OR_RETURN(results.emplace_back(), RaggedAllToAll(collective, values, group));
      break;
    }
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      // The pairs that move data on this execution (every participant runs
      // the same program, so its count is everyone's).
      const int64_t execution = executions[&collective]++;
      AXLE_ASSIGN_OR_RETURN(auto pairs, PermutePairsOf(collective, grid, execution));
      int64_t source = -1;
      for (const auto& [from, to] : pairs) {
        if (to == me) source = from;
      }
      if (operands.size() != 1) {
        return absl::UnimplementedError(absl::StrCat(
            Describe(collective), ": collective-permute with ", operands.size(),
            " operands (the in-place form) among several participants is not supported yet"));
      }
      results.push_back(source >= 0 ? values[0][source].Clone() : Literal(leaf_shape(0)));
      break;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat(Describe(collective), ": not supported among several participants yet"));
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (!ShapeUtil::Compatible(results[k].shape(), leaf_shape(k))) {
      if (results[k].element_count() == leaf_shape(k).num_elements() && leaf_shape(k).IsArray() &&
          results[k].shape().element_type() == leaf_shape(k).element_type()) {
        AXLE_ASSIGN_OR_RETURN(results[k], results[k].Reshape(leaf_shape(k).dimensions()));
      } else {
        return InvalidInstruction(
            collective, absl::StrCat("computes ", results[k].shape().ToString(false),
                                     " where the result is ", leaf_shape(k).ToString(false)));
      }
    }
  }
  Literal value =
      result_shape.IsTuple() ? Literal::MakeTuple(std::move(results)) : std::move(results[0]);
  if (!wrap_in_start_tuple) return value;
  Literal wrapped(collective.shape());
  wrapped.mutable_tuple_element(1) = std::move(value);
  if (ShapeUtil::Compatible(collective.shape().tuple_shapes(0), operands[0]->shape())) {
    wrapped.mutable_tuple_element(0) = operands[0]->Clone();
  }
  return wrapped;
}

absl::StatusOr<Literal> EvaluateSendRecvAmongParticipants(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands,
    const HloEvaluator::Participant& participant,
    absl::flat_hash_map<std::string, Literal>& received,
    absl::flat_hash_map<const HloInstruction*, int64_t>& executions) {
  HloOpcode op = instruction.opcode();
  bool done = op == HloOpcode::kSendDone || op == HloOpcode::kRecvDone;
  if (done && instruction.operand_count() != 1) {
    return InvalidInstruction(instruction, "takes the send or recv it completes");
  }
  const HloInstruction& start = done ? *instruction.operand(0) : instruction;
  const auto* send_recv = dyn_cast<HloSendRecvInstruction>(&start);
  if (send_recv == nullptr)
    return InvalidInstruction(instruction, "does not complete a send or recv");
  if (send_recv->is_host_transfer()) {
    return absl::UnimplementedError(
        absl::StrCat(Describe(instruction),
                     ": host transfers need host I/O, which the interpreter "
                     "does not have"));
  }
  auto attribute = start.frontend_attributes().find("_xla_send_recv_source_target_pairs");
  if (attribute == start.frontend_attributes().end()) {
    return absl::UnimplementedError(absl::StrCat(
        Describe(instruction),
        ": send/recv without _xla_send_recv_source_target_pairs among several participants"));
  }
  std::string key = absl::StrCat(send_recv->channel_id().value_or(-1), "/", attribute->second);
  switch (op) {
    case HloOpcode::kSend: {
      if (operands.empty()) return InvalidInstruction(instruction, "has no data operand");
      Communicator& communicator = *participant.communicator;
      DeviceGrid grid{participant.replica_count, participant.partition_count};
      // The pairs that move data on this execution of the send: every
      // participant runs the same program, so its count is everyone's.
      const int64_t execution = executions[&instruction]++;
      AXLE_ASSIGN_OR_RETURN(auto pairs, SendRecvPairsOf(instruction, grid, execution));
      int64_t me = grid.FlattenedId(participant.replica_id, participant.partition_id);
      const Literal& data = *operands[0];
      AXLE_RETURN_IF_ERROR(ExpectArray(instruction, data, "data"));
      AXLE_RETURN_IF_ERROR(CheckSameCollective(communicator, instruction, {&data}));
      AXLE_ASSIGN_OR_RETURN(std::vector<Literal> values, GatherFromAll(communicator, data));
      Literal mine(data.shape());
      for (const auto& [source, target] : pairs) {
        if (target == me) mine = values[source].Clone();
      }
      received[key] = std::move(mine);
      Literal result(instruction.shape());
      if (!result.shape().IsTuple() || result.tuple_size() < 1) {
        return InvalidInstruction(instruction, "must produce (data, context, token)");
      }
      result.mutable_tuple_element(0) = data.Clone();
      return result;
    }
    case HloOpcode::kRecvDone: {
      auto it = received.find(key);
      if (it == received.end()) {
        return absl::UnimplementedError(absl::StrCat(
            Describe(instruction), ": runs before the matching send (channel ",
            send_recv->channel_id().value_or(-1), "), which this interpreter cannot wait for"));
      }
      Literal result(instruction.shape());
      if (!result.shape().IsTuple() || result.tuple_size() < 1 ||
          !ShapeUtil::Compatible(result.tuple_element(0).shape(), it->second.shape())) {
        return InvalidInstruction(instruction, "does not match its send's data");
      }
      result.mutable_tuple_element(0) = std::move(it->second);
      received.erase(it);
      return result;
    }
    default:  // recv, send-done: placeholders (zeros, tokens)
      return Literal(instruction.shape());
  }
}

}  // namespace eval_internal
}  // namespace axle
