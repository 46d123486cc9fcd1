//===- collective_thunk.cc - Collectives among the devices of a run --------===//
//
// A module compiled for several devices (HloModuleConfig replica_count *
// num_partitions > 1) keeps its collectives (single_device_collectives.h
// lowers them only for one device); each becomes a CollectiveThunk that
// runs it through the communicator of the run's participant
// (ExecutableRunOptions::participant(), axle/collectives/communicator.h),
// on the executable's buffers. The semantics are the interpreter's
// multi-participant mode (axle/eval/evaluator_collectives.cc), and so are
// the bits: reductions fold in group order, ((v0 op v1) op v2) ..., which is
// the communicator's order.
//
//  - all-reduce, reduce-scatter: to_apply as a reduction kind
//    (MakeReducer) when it is one binary op of its two parameters in order
//    (either order over integers and pred) over a type the communicator
//    reduces; else the computation compiled as a scalar function, applied
//    element by element in the same order.
//  - all-gather, all-to-all, reduce-scatter along a dimension that is not
//    the major one: the pieces are packed contiguously around the
//    communicator's call.
//  - the -start forms: all-reduce-start is the value; the others the tuple
//    (operands, values, context...), whose -done forwards element 1.
//  - collective-permute's in-place form (input, output, input_offsets,
//    output_offsets; collectives/in_place_permute.h): the output copied
//    into the result, then the slices each run's source sends written in
//    (RunInPlacePermute, shared with the interpreter). The -start form's
//    tuple is (input, output, context zeros).
//  - ragged-all-to-all: the group's inputs, offsets and sizes all-gathered,
//    each member applying the updates addressed to it (RaggedAllToAllThunk).
//  - replica-id, partition-id: the run's ids.
//  - collective-permute with _xla_send_recv_validation (set by XLA's
//    pipelining passes, or carried over from the send/recv pair the permute
//    replaces): the run counts the thunk's executions from 0
//    (ThunkContext::collectives), and on its i-th a pair moves data only if
//    i is in the pair's [first, last]; a target whose pair does not move
//    gets zeros, as in the interpreter. This is XLA's collective-permute
//    thunk's execution counter; a permute in a loop body runs once per
//    iteration.
//
// The participant groups are resolved at compile time from the module's
// grid; the run's grid must be the module's.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/dimension_split.h"
#include "axle/collectives/in_place_permute.h"
#include "axle/collectives/replica_groups.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/integer_element.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/cpu/scalar_function_emitter.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/send_recv_validation.h"

namespace axle::cpu {

// The run's executions of each collective-permute that has a validation.
// The thunks of one run execute one at a time, so it needs no lock.
struct CollectiveRunState {
  absl::flat_hash_map<const Thunk*, int64_t> executions;
};

namespace {

DeviceGrid GridOf(const HloInstruction& instruction) {
  const HloModuleConfig& config = instruction.parent()->parent()->config();
  return DeviceGrid{config.replica_count, config.num_partitions};
}

// The run's participant, checked against the grid the module was compiled
// for.
absl::StatusOr<const RunParticipant*> ParticipantOf(const ThunkContext& context,
                                                    const DeviceGrid& grid,
                                                    const std::string& name) {
  const RunParticipant* participant =
      context.run_options != nullptr ? &context.run_options->participant() : nullptr;
  if (participant == nullptr || participant->communicator == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cpu platform: ", name, " is a collective of a module compiled for ", grid.replica_count,
        " replicas x ", grid.partition_count,
        " partitions; the run has no communicator (ExecutableRunOptions::set_participant)"));
  }
  if (participant->replica_count != grid.replica_count ||
      participant->partition_count != grid.partition_count ||
      participant->communicator->size() != grid.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cpu platform: ", name, ": the module was compiled for ", grid.replica_count,
                     " replicas x ", grid.partition_count, " partitions, the run is one of ",
                     participant->replica_count, " x ", participant->partition_count, " with ",
                     participant->communicator->size(), " communicator ranks"));
  }
  int64_t id = grid.FlattenedId(participant->replica_id, participant->partition_id);
  if (participant->replica_id < 0 || participant->replica_id >= grid.replica_count ||
      participant->partition_id < 0 || participant->partition_id >= grid.partition_count ||
      id != participant->communicator->rank()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cpu platform: ", name, ": device (replica ", participant->replica_id,
                     ", partition ", participant->partition_id, ") is not communicator rank ",
                     participant->communicator->rank()));
  }
  return participant;
}

// The group of `groups` that holds `device`, as communicator ranks, and
// `device`'s place in it.
struct GroupOfDevice {
  std::vector<int> group;
  int64_t rank = -1;
};

absl::StatusOr<GroupOfDevice> FindGroupOf(const std::vector<std::vector<int64_t>>& groups,
                                          int64_t device, absl::string_view name) {
  for (const std::vector<int64_t>& members : groups) {
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i] != device) continue;
      return GroupOfDevice{std::vector<int>(members.begin(), members.end()),
                           static_cast<int64_t>(i)};
    }
  }
  return absl::InternalError(
      absl::StrCat("cpu platform: ", name, ": device ", device, " is in no participant group"));
}

// --- replica-id, partition-id ------------------------------------------------

class DeviceIdThunk : public Thunk {
 public:
  DeviceIdThunk(std::string name, bool partition, DeviceGrid grid, int64_t output)
      : Thunk(std::move(name)), partition_(partition), grid_(grid), output_(output) {}

  absl::Status Execute(const ThunkContext& context) const override {
    AXLE_ASSIGN_OR_RETURN(const RunParticipant* participant, ParticipantOf(context, grid_, name()));
    auto id =
        static_cast<uint32_t>(partition_ ? participant->partition_id : participant->replica_id);
    std::memcpy(context.address(output_), &id, sizeof(id));
    return absl::OkStatus();
  }
  std::optional<BufferUses> buffer_uses() const override { return BufferUses{{}, {output_}}; }

 private:
  bool partition_;
  DeviceGrid grid_;
  int64_t output_;
};

// --- The reduction --------------------------------------------------------------

// to_apply over elements of `type` as a reduction kind (acc op in), when
// it is one binary op of its two parameters. With the parameters swapped
// (`maximum(y, x)`) only over integers and pred, where the order of the
// operands does not change the bits: over floats it picks which of two
// equal values (+0 and -0) or of two NaNs is the result, and the
// interpreter applies the computation as written, so it runs compiled.
std::optional<ReductionKind> KindOf(const HloComputation& computation, PrimitiveType type) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b ||
      computation.num_parameters() != 2) {
    return std::nullopt;
  }
  const bool in_order = cast<HloParameterInstruction>(a)->parameter_number() == 0;
  if (!in_order && type != PRED && !primitive_util::IsIntegralType(type)) return std::nullopt;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return ReductionKind::kSum;
    case HloOpcode::kMultiply:
      return ReductionKind::kProduct;
    case HloOpcode::kMinimum:
      return ReductionKind::kMin;
    case HloOpcode::kMaximum:
      return ReductionKind::kMax;
    case HloOpcode::kAnd:
      return ReductionKind::kAnd;
    case HloOpcode::kOr:
      return ReductionKind::kOr;
    case HloOpcode::kXor:
      return ReductionKind::kXor;
    default:
      return std::nullopt;
  }
}

// acc = to_apply(acc, in), element by element, with the compiled scalar
// function.
Reducer ScalarFunctionReducer(std::shared_ptr<const CompiledScalarFunction> function,
                              int element_bytes) {
  return [function = std::move(function), element_bytes](void* accumulator, const void* input,
                                                         int64_t count) {
    auto* acc = static_cast<char*>(accumulator);
    const auto* in = static_cast<const char*>(input);
    alignas(16) char result[16];
    for (int64_t i = 0; i < count; ++i) {
      const void* parameters[2] = {acc + i * element_bytes, in + i * element_bytes};
      void* results[1] = {result};
      function->Run(parameters, results);
      std::memcpy(acc + i * element_bytes, result, element_bytes);
    }
    return absl::OkStatus();
  };
}

// --- The collectives ------------------------------------------------------------

using Split = DimensionSplit;

// Piece m of n (along the split) of `whole` goes to packed[m]: pieces
// contiguous, each `outer` rows of length/n indices.
void Pack(const char* whole, char* packed, const Split& split, int64_t n) {
  int64_t row = split.length / n * split.inner;
  for (int64_t m = 0; m < n; ++m) {
    for (int64_t o = 0; o < split.outer; ++o) {
      std::memcpy(packed + (m * split.outer + o) * row,
                  whole + o * split.length * split.inner + m * row, row);
    }
  }
}
// The inverse of Pack.
void Unpack(const char* packed, char* whole, const Split& split, int64_t n) {
  int64_t row = split.length / n * split.inner;
  for (int64_t m = 0; m < n; ++m) {
    for (int64_t o = 0; o < split.outer; ++o) {
      std::memcpy(whole + o * split.length * split.inner + m * row,
                  packed + (m * split.outer + o) * row, row);
    }
  }
}

class CollectiveThunk : public Thunk {
 public:
  struct Operand {
    int64_t value = 0;   // the operand's buffer
    int64_t result = 0;  // the result's buffer
    Shape shape;         // the operand's
    Shape result_shape;
    int64_t bytes = 0;
  };

  CollectiveThunk(const HloInstruction& instruction, DeviceGrid grid,
                  std::vector<std::vector<int64_t>> groups,
                  std::vector<std::pair<int64_t, int64_t>> pairs, std::vector<Operand> operands,
                  std::vector<int64_t> forwarded, std::vector<int64_t> zeroed, int64_t dimension,
                  Reducer reducer, SendRecvValidation validation)
      : Thunk(instruction.name()),
        opcode_(instruction.opcode()),
        grid_(grid),
        groups_(std::move(groups)),
        pairs_(std::move(pairs)),
        operands_(std::move(operands)),
        forwarded_(std::move(forwarded)),
        zeroed_(std::move(zeroed)),
        dimension_(dimension),
        reducer_(std::move(reducer)),
        validation_(std::move(validation)) {}

  absl::Status Execute(const ThunkContext& context) const override {
    AXLE_ASSIGN_OR_RETURN(const RunParticipant* participant, ParticipantOf(context, grid_, name()));
    Communicator& communicator = *participant->communicator;
    absl::Status status = Run(context, communicator);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("cpu platform: ", HloOpcodeString(opcode_),
                                                      " ", name(), ": ", status.message()));
    }
    // A start's element 0: its operands, as they were.
    for (size_t k = 0; k < forwarded_.size(); ++k) {
      std::memcpy(context.address(forwarded_[k]), context.address(operands_[k].value),
                  operands_[k].bytes);
    }
    for (int64_t value : zeroed_) {
      std::memset(context.address(value), 0, context.size_bytes(value));
    }
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    BufferUses uses;
    for (const Operand& operand : operands_) {
      uses.reads.push_back(operand.value);
      uses.writes.push_back(operand.result);
    }
    for (int64_t value : forwarded_) uses.writes.push_back(value);
    for (int64_t value : zeroed_) uses.writes.push_back(value);
    return uses;
  }

 private:
  absl::Status Run(const ThunkContext& context, Communicator& communicator) const {
    const int64_t me = communicator.rank();
    auto in = [&](const Operand& operand) {
      return static_cast<const char*>(context.address(operand.value));
    };
    auto out = [&](const Operand& operand) {
      return static_cast<char*>(context.address(operand.result));
    };
    if (opcode_ == HloOpcode::kCollectivePermute || opcode_ == HloOpcode::kCollectivePermuteStart) {
      int64_t execution = 0;
      if (!validation_.always()) {
        if (context.collectives == nullptr) {
          context.collectives = std::make_shared<CollectiveRunState>();
        }
        execution = context.collectives->executions[this]++;
      }
      int64_t source = -1, target = -1;
      for (size_t i = 0; i < pairs_.size(); ++i) {
        if (!validation_.Moves(i, execution)) continue;
        const auto& [from, to] = pairs_[i];
        if (to == me) source = from;
        if (from == me) target = to;
      }
      const Operand& operand = operands_[0];
      if (source < 0) std::memset(out(operand), 0, operand.bytes);
      return communicator.Permute(static_cast<int>(target), in(operand), static_cast<int>(source),
                                  out(operand), operand.bytes);
    }
    // The group of this participant, as communicator ranks.
    AXLE_ASSIGN_OR_RETURN(const GroupOfDevice found, FindGroupOf(groups_, me, name()));
    const std::vector<int>& group = found.group;
    const auto n = static_cast<int64_t>(group.size());
    switch (opcode_) {
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
        for (const Operand& operand : operands_) {
          const int width = primitive_util::ByteWidth(operand.shape.element_type());
          AXLE_RETURN_IF_ERROR(communicator.AllReduce(group, in(operand), out(operand),
                                                      operand.bytes / width, width, reducer_));
        }
        return absl::OkStatus();
      case HloOpcode::kCollectiveBroadcast:
        for (const Operand& operand : operands_) {
          std::memcpy(out(operand), in(operand), operand.bytes);
          AXLE_RETURN_IF_ERROR(communicator.Broadcast(group, 0, out(operand), operand.bytes));
        }
        return absl::OkStatus();
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
        for (const Operand& operand : operands_) {
          AXLE_ASSIGN_OR_RETURN(Split split, SplitOf(operand.shape, dimension_));
          if (split.outer == 1) {
            AXLE_RETURN_IF_ERROR(
                communicator.AllGather(group, in(operand), out(operand), operand.bytes));
            continue;
          }
          // Member m's operand lands at packed piece m; the result is them
          // concatenated along the dimension.
          std::vector<char> packed(operand.bytes * n);
          AXLE_RETURN_IF_ERROR(
              communicator.AllGather(group, in(operand), packed.data(), operand.bytes));
          Split whole = split;
          whole.length *= n;
          Unpack(packed.data(), out(operand), whole, n);
        }
        return absl::OkStatus();
      case HloOpcode::kReduceScatter:
        for (const Operand& operand : operands_) {
          AXLE_ASSIGN_OR_RETURN(Split split, SplitOf(operand.shape, dimension_));
          const int width = primitive_util::ByteWidth(operand.shape.element_type());
          const int64_t count = operand.bytes / width / n;
          if (split.outer == 1) {
            AXLE_RETURN_IF_ERROR(communicator.ReduceScatter(group, in(operand), out(operand), count,
                                                            width, reducer_));
            continue;
          }
          std::vector<char> packed(operand.bytes);
          Pack(in(operand), packed.data(), split, n);
          AXLE_RETURN_IF_ERROR(communicator.ReduceScatter(group, packed.data(), out(operand), count,
                                                          width, reducer_));
        }
        return absl::OkStatus();
      case HloOpcode::kAllToAll: {
        if (dimension_ < 0) {
          // Tuple form: element m of the result is member m's operand
          // at this participant's place in the group.
          const int64_t piece = operands_[0].bytes;
          std::vector<char> packed(piece * n), received(piece * n);
          for (int64_t m = 0; m < n; ++m) {
            std::memcpy(packed.data() + m * piece, in(operands_[m]), piece);
          }
          AXLE_RETURN_IF_ERROR(communicator.AllToAll(group, packed.data(), received.data(), piece));
          for (int64_t m = 0; m < n; ++m) {
            std::memcpy(out(operands_[m]), received.data() + m * piece, piece);
          }
          return absl::OkStatus();
        }
        for (const Operand& operand : operands_) {
          AXLE_ASSIGN_OR_RETURN(Split split, SplitOf(operand.shape, dimension_));
          const int64_t piece = operand.bytes / n;
          if (split.outer == 1) {
            AXLE_RETURN_IF_ERROR(communicator.AllToAll(group, in(operand), out(operand), piece));
            continue;
          }
          std::vector<char> packed(operand.bytes), received(operand.bytes);
          Pack(in(operand), packed.data(), split, n);
          AXLE_RETURN_IF_ERROR(communicator.AllToAll(group, packed.data(), received.data(), piece));
          Unpack(received.data(), out(operand), split, n);
        }
        return absl::OkStatus();
      }
      default:
        return absl::InternalError("not a collective this thunk runs");
    }
  }

  absl::StatusOr<Split> SplitOf(const Shape& shape, int64_t dim) const {
    absl::StatusOr<Split> split = SplitAtDimension(shape, dim);
    if (!split.ok())
      return absl::InternalError(absl::StrCat(name(), ": ", split.status().message()));
    return split;
  }

  HloOpcode opcode_;
  DeviceGrid grid_;
  std::vector<std::vector<int64_t>> groups_;
  std::vector<std::pair<int64_t, int64_t>> pairs_;
  std::vector<Operand> operands_;
  std::vector<int64_t> forwarded_;
  std::vector<int64_t> zeroed_;
  int64_t dimension_;
  Reducer reducer_;
  SendRecvValidation validation_;  // collective-permute: one range per pair
};

// ragged-all-to-all among the group (the interpreter's RaggedAllToAll in
// axle/eval/evaluator_collectives.cc): every member all-gathers the group's
// inputs and their offsets and sizes (as s64), then applies the updates
// addressed to it, in member order then update order, to a copy of its
// output operand.
class RaggedAllToAllThunk : public Thunk {
 public:
  RaggedAllToAllThunk(std::string name, DeviceGrid grid, std::vector<std::vector<int64_t>> groups,
                      std::vector<int64_t> operands, std::vector<Shape> shapes, int64_t result)
      : Thunk(std::move(name)),
        grid_(grid),
        groups_(std::move(groups)),
        operands_(std::move(operands)),
        shapes_(std::move(shapes)),
        result_(result) {}

  absl::Status Execute(const ThunkContext& context) const override {
    AXLE_ASSIGN_OR_RETURN(const RunParticipant* participant, ParticipantOf(context, grid_, name()));
    Communicator& communicator = *participant->communicator;
    const int64_t me = communicator.rank();
    AXLE_ASSIGN_OR_RETURN(const GroupOfDevice found, FindGroupOf(groups_, me, name()));
    const std::vector<int>& group = found.group;
    const int64_t rank = found.rank;
    const auto n = static_cast<int64_t>(group.size());
    const Shape& in = shapes_[0];
    const Shape& out = shapes_[1];
    const int64_t updates = shapes_[2].dimensions(0);
    if (updates % n != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cpu platform: ragged-all-to-all ", name(),
                                                     ": ", updates, " updates do not split among ",
                                                     n, " participants"));
    }
    const int64_t k = updates / n;
    // This member's offsets and sizes as s64: input_offsets, send_sizes,
    // output_offsets.
    std::vector<int64_t> mine(3 * updates);
    for (int i = 0; i < 3; ++i) {
      const void* data = context.address(operands_[2 + i]);
      const PrimitiveType type = shapes_[2 + i].element_type();
      for (int64_t u = 0; u < updates; ++u)
        mine[i * updates + u] = ReadIntegerElement(data, type, u);
    }
    std::vector<int64_t> metadata(3 * updates * n);
    const int64_t input_bytes = ShapeUtil::ByteSizeOfElements(in);
    std::vector<char> inputs(input_bytes * n);
    absl::Status status = communicator.AllGather(group, mine.data(), metadata.data(),
                                                 static_cast<int64_t>(mine.size() * 8));
    if (status.ok()) {
      status =
          communicator.AllGather(group, context.address(operands_[0]), inputs.data(), input_bytes);
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("cpu platform: ragged-all-to-all ", name(),
                                                      ": ", status.message()));
    }
    auto* dst = static_cast<char*>(context.address(result_));
    std::memcpy(dst, context.address(operands_[1]), ShapeUtil::ByteSizeOfElements(out));
    int64_t row_bytes = primitive_util::ByteWidth(in.element_type());
    for (int64_t d = 1; d < in.rank(); ++d) row_bytes *= in.dimensions(d);
    const int64_t in_rows = in.dimensions(0), out_rows = out.dimensions(0);
    for (int64_t m = 0; m < n; ++m) {
      const int64_t* theirs = metadata.data() + m * 3 * updates;
      const char* src = inputs.data() + m * input_bytes;
      for (int64_t t = 0; t < k; ++t) {
        const int64_t u = rank * k + t;
        // In 128 bits: offsets near the int64 limits do not overflow.
        const __int128 from = theirs[u];
        const __int128 size = theirs[updates + u];
        const __int128 to = theirs[2 * updates + u];
        const __int128 first = std::max<__int128>({0, -from, -to});
        const __int128 last = std::min<__int128>({size, in_rows - from, out_rows - to});
        for (__int128 r = first; r < last; ++r) {
          std::memcpy(dst + static_cast<int64_t>(to + r) * row_bytes,
                      src + static_cast<int64_t>(from + r) * row_bytes, row_bytes);
        }
      }
    }
    return absl::OkStatus();
  }
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operands_, {result_}};
  }

 private:
  DeviceGrid grid_;
  std::vector<std::vector<int64_t>> groups_;
  std::vector<int64_t> operands_;
  std::vector<Shape> shapes_;
  int64_t result_;
};

// --- collective-permute, in place ---------------------------------------------

class InPlacePermuteThunk : public Thunk {
 public:
  struct Buffer {
    int64_t input = 0, output = 0, result = 0;
    int64_t forwarded = -1;  // a start's element 0
  };
  struct Index {
    std::vector<int64_t> values;  // one scalar per dimension
    std::vector<PrimitiveType> types;
  };

  InPlacePermuteThunk(const HloInstruction& instruction, DeviceGrid grid, InPlacePermute permute,
                      std::vector<Buffer> buffers, std::vector<Index> input_offsets,
                      std::vector<Index> output_offsets, std::vector<int64_t> zeroed)
      : Thunk(instruction.name()),
        grid_(grid),
        permute_(std::move(permute)),
        buffers_(std::move(buffers)),
        input_offsets_(std::move(input_offsets)),
        output_offsets_(std::move(output_offsets)),
        zeroed_(std::move(zeroed)) {}

  absl::Status Execute(const ThunkContext& context) const override {
    AXLE_ASSIGN_OR_RETURN(const RunParticipant* participant, ParticipantOf(context, grid_, name()));
    Communicator& communicator = *participant->communicator;
    // The inputs as they are before anything is written (a result may
    // share an input's buffer).
    std::vector<std::vector<char>> copies(buffers_.size());
    std::vector<const char*> inputs;
    std::vector<char*> outputs;
    for (size_t b = 0; b < buffers_.size(); ++b) {
      const Buffer& buffer = buffers_[b];
      const auto* input = static_cast<const char*>(context.address(buffer.input));
      const int64_t bytes = context.size_bytes(buffer.input);
      copies[b].assign(input, input + bytes);
      inputs.push_back(copies[b].data());
    }
    // The offsets are read before the result is written, too.
    auto read = [&](const Index& index) {
      std::vector<int64_t> starts(index.values.size());
      for (size_t d = 0; d < starts.size(); ++d) {
        starts[d] = ReadIntegerElement(context.address(index.values[d]), index.types[d], 0);
      }
      return starts;
    };
    std::vector<std::vector<int64_t>> input_starts, output_starts;
    for (const Index& index : input_offsets_) input_starts.push_back(read(index));
    for (const Index& index : output_offsets_) output_starts.push_back(read(index));
    for (size_t b = 0; b < buffers_.size(); ++b) {
      const Buffer& buffer = buffers_[b];
      auto* result = static_cast<char*>(context.address(buffer.result));
      const void* output = context.address(buffer.output);
      if (result != output) std::memmove(result, output, context.size_bytes(buffer.result));
      outputs.push_back(result);
    }
    auto offsets = [&](int64_t b, int64_t c, bool input) {
      return (input ? input_starts : output_starts)[b * permute_.chunks + c];
    };
    absl::Status status =
        RunInPlacePermute(communicator, permute_, communicator.rank(), offsets, inputs, outputs);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("cpu platform: collective-permute ", name(),
                                                      ": ", status.message()));
    }
    for (size_t b = 0; b < buffers_.size(); ++b) {
      if (buffers_[b].forwarded >= 0) {
        std::memcpy(context.address(buffers_[b].forwarded), copies[b].data(), copies[b].size());
      }
    }
    for (int64_t value : zeroed_) std::memset(context.address(value), 0, context.size_bytes(value));
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    BufferUses uses;
    for (const Buffer& buffer : buffers_) {
      uses.reads.push_back(buffer.input);
      uses.reads.push_back(buffer.output);
      uses.writes.push_back(buffer.result);
      if (buffer.forwarded >= 0) uses.writes.push_back(buffer.forwarded);
    }
    for (const auto* list : {&input_offsets_, &output_offsets_}) {
      for (const Index& index : *list) {
        uses.reads.insert(uses.reads.end(), index.values.begin(), index.values.end());
      }
    }
    for (int64_t value : zeroed_) uses.writes.push_back(value);
    return uses;
  }

 private:
  DeviceGrid grid_;
  InPlacePermute permute_;
  std::vector<Buffer> buffers_;
  std::vector<Index> input_offsets_, output_offsets_;  // [b * chunks + c]
  std::vector<int64_t> zeroed_;
};

absl::Status EmitInPlacePermuteThunk(const HloCollectiveInstruction& instruction,
                                     ProgramBuilder& builder) {
  const DeviceGrid grid = GridOf(instruction);
  absl::StatusOr<InPlacePermute> permute = InPlacePermuteOf(instruction, grid);
  if (!permute.ok()) return Unsupported(instruction, permute.status().message());
  const bool start = instruction.opcode() == HloOpcode::kCollectivePermuteStart;
  const Shape& shape = instruction.shape();
  const Shape& output_shape = instruction.operand(1)->shape();
  if (start ? !shape.IsTuple() || shape.tuple_shapes_size() < 2 ||
                  !ShapeUtil::Compatible(shape.tuple_shapes(0), instruction.operand(0)->shape()) ||
                  !ShapeUtil::Compatible(shape.tuple_shapes(1), output_shape)
            : !ShapeUtil::Compatible(shape, output_shape)) {
    return Unsupported(instruction, absl::StrCat("the result ", shape.ToString(false),
                                                 " must be the output's shape ",
                                                 start ? "after the input's" : ""));
  }
  builder.DefineTemporaries(&instruction);
  std::vector<InPlacePermuteThunk::Buffer> buffers;
  for (int64_t b = 0; b < permute->buffers; ++b) {
    const ShapeIndex index = permute->BufferIndex(b);
    InPlacePermuteThunk::Buffer buffer;
    AXLE_ASSIGN_OR_RETURN(buffer.input, builder.ValueOf(instruction.operand(0), index));
    AXLE_ASSIGN_OR_RETURN(buffer.output, builder.ValueOf(instruction.operand(1), index));
    ShapeIndex result = index;
    if (start) result.insert(result.begin(), 1);
    AXLE_ASSIGN_OR_RETURN(buffer.result, builder.ValueOf(&instruction, result));
    if (start) {
      ShapeIndex forwarded = index;
      forwarded.insert(forwarded.begin(), 0);
      AXLE_ASSIGN_OR_RETURN(buffer.forwarded, builder.ValueOf(&instruction, forwarded));
    }
    buffers.push_back(buffer);
  }
  std::vector<InPlacePermuteThunk::Index> offsets[2];
  for (int operand = 0; operand < 2; ++operand) {
    for (int64_t b = 0; b < permute->buffers; ++b) {
      for (int64_t c = 0; c < permute->chunks; ++c) {
        InPlacePermuteThunk::Index& index = offsets[operand].emplace_back();
        for (int64_t d = 0; d < permute->inputs[b].rank(); ++d) {
          const ShapeIndex at = permute->OffsetIndex(b, c, d);
          const HloInstruction* offsets_operand = instruction.operand(2 + operand);
          AXLE_ASSIGN_OR_RETURN(index.values.emplace_back(), builder.ValueOf(offsets_operand, at));
          index.types.push_back(
              ShapeUtil::GetSubshape(offsets_operand->shape(), at).element_type());
        }
      }
    }
  }
  std::vector<int64_t> zeroed;
  if (start) {
    for (const auto& [index, value] : builder.LeavesOf(&instruction)) {
      if (!index.empty() && index[0] >= 2) zeroed.push_back(value);
    }
  }
  builder.AddThunk(std::make_unique<InPlacePermuteThunk>(instruction, grid, *std::move(permute),
                                                         std::move(buffers), std::move(offsets[0]),
                                                         std::move(offsets[1]), std::move(zeroed)));
  return absl::OkStatus();
}

bool IsIntegerVector(const Shape& shape) {
  return shape.IsArray() && IsByteIntegerType(shape.element_type()) && shape.rank() == 1;
}

absl::Status EmitRaggedAllToAllThunk(const HloCollectiveInstruction& instruction,
                                     ProgramBuilder& builder) {
  if (instruction.operand_count() != 6) {
    return Unsupported(instruction, "ragged-all-to-all takes 6 operands");
  }
  std::vector<Shape> shapes;
  std::vector<int64_t> operands;
  for (const HloInstruction* operand : instruction.operands()) {
    shapes.push_back(operand->shape());
    AXLE_ASSIGN_OR_RETURN(operands.emplace_back(), builder.ValueOf(operand));
  }
  const Shape& in = shapes[0];
  const Shape& out = shapes[1];
  if (!in.IsArray() || !out.IsArray() || in.rank() < 1 || in.rank() != out.rank() ||
      in.element_type() != out.element_type() || primitive_util::IsSubByteType(in.element_type()) ||
      !ShapeUtil::SameDimensions(ShapeUtil::DeleteDimensions({0}, in),
                                 ShapeUtil::DeleteDimensions({0}, out)) ||
      !ShapeUtil::Compatible(instruction.shape(), out)) {
    return Unsupported(instruction,
                       "input and output must be arrays that differ only in "
                       "dimension 0, the result the output's shape");
  }
  for (int i = 2; i < 6; ++i) {
    if (!IsIntegerVector(shapes[i]) || shapes[i].dimensions(0) != shapes[2].dimensions(0)) {
      return Unsupported(instruction, "offsets and sizes must be integer vectors of one length");
    }
  }
  const DeviceGrid grid = GridOf(instruction);
  AXLE_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                        ParticipantGroupsOf(instruction, grid));
  int64_t result = builder.DefineTemporary(&instruction, {}, instruction.shape());
  builder.AddThunk(std::make_unique<RaggedAllToAllThunk>(
      instruction.name(), grid, std::move(groups), std::move(operands), std::move(shapes), result));
  return absl::OkStatus();
}

bool IsByteSized(const Shape& shape) {
  return shape.IsArray() && !primitive_util::IsSubByteType(shape.element_type()) &&
         primitive_util::ByteWidth(shape.element_type()) > 0;
}

}  // namespace

absl::Status EmitDeviceIdThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_type() != U32 || shape.rank() != 0) {
    return Unsupported(instruction, absl::StrCat("must produce u32[], not ", shape.ToString()));
  }
  int64_t output = builder.DefineTemporary(&instruction, {}, shape);
  builder.AddThunk(std::make_unique<DeviceIdThunk>(instruction.name(),
                                                   instruction.opcode() == HloOpcode::kPartitionId,
                                                   GridOf(instruction), output));
  return absl::OkStatus();
}

absl::Status EmitCollectiveThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const HloOpcode opcode = instruction.opcode();
  const auto* collective = dyn_cast<HloCollectiveInstruction>(&instruction);
  if (collective == nullptr) return Unsupported(instruction, "not a collective");
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      break;
    case HloOpcode::kRaggedAllToAll:
      return EmitRaggedAllToAllThunk(*collective, builder);
    default:
      return Unsupported(instruction,
                         "this collective among several devices is not supported "
                         "yet");
  }
  if (IsInPlacePermute(instruction)) {
    if (instruction.frontend_attributes().count(kSendRecvValidationAttribute) != 0) {
      return Unsupported(instruction,
                         absl::StrCat("the in-place form with ", kSendRecvValidationAttribute,
                                      " is not supported yet"));
    }
    return EmitInPlacePermuteThunk(*collective, builder);
  }
  const DeviceGrid grid = GridOf(instruction);
  // Where the values are in the result: element 1 of a start's tuple.
  const bool start_tuple = HloOpcodeIsAsyncStart(opcode) && opcode != HloOpcode::kAllReduceStart;
  const Shape& shape = instruction.shape();
  if (start_tuple && (!shape.IsTuple() || shape.tuple_shapes().size() < 2)) {
    return Unsupported(instruction, "an async start whose result is not a tuple");
  }
  const Shape& values = start_tuple ? shape.tuple_shapes(1) : shape;
  const ShapeIndex values_index = start_tuple ? ShapeIndex{1} : ShapeIndex{};
  const int64_t count = instruction.operand_count();
  if (values.IsTuple() && static_cast<int64_t>(values.tuple_shapes().size()) != count) {
    return Unsupported(instruction, "the result tuple must have one element per operand");
  }
  if (!values.IsTuple() && count != 1) {
    return Unsupported(instruction, "several operands need a tuple result");
  }
  if ((opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) &&
      count != 1) {
    return Unsupported(instruction, absl::StrCat("collective-permute with ", count,
                                                 " operands: one, or four (the in-place form), "
                                                 "are supported"));
  }

  builder.DefineTemporaries(&instruction);
  std::vector<CollectiveThunk::Operand> operands;
  for (int64_t k = 0; k < count; ++k) {
    CollectiveThunk::Operand operand;
    operand.shape = instruction.operand(k)->shape();
    operand.result_shape = values.IsTuple() ? values.tuple_shapes(k) : values;
    if (!IsByteSized(operand.shape) || !IsByteSized(operand.result_shape) ||
        operand.shape.element_type() != operand.result_shape.element_type()) {
      return Unsupported(instruction,
                         absl::StrCat("operand ", k, " ", operand.shape.ToString(false),
                                      " and result ", operand.result_shape.ToString(false),
                                      " must be arrays of one byte-sized element type"));
    }
    operand.bytes = ShapeUtil::ByteSizeOfElements(operand.shape);
    AXLE_ASSIGN_OR_RETURN(operand.value, builder.ValueOf(instruction.operand(k)));
    ShapeIndex index = values_index;
    if (values.IsTuple()) index.push_back(k);
    AXLE_ASSIGN_OR_RETURN(operand.result, builder.ValueOf(&instruction, index));
    operands.push_back(std::move(operand));
  }

  // The group sizes the shapes imply.
  std::vector<std::vector<int64_t>> groups;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  SendRecvValidation validation;
  if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
    AXLE_ASSIGN_OR_RETURN(pairs, PermutePairsOf(*collective, grid));
    AXLE_ASSIGN_OR_RETURN(validation, PermuteValidationOf(*collective, grid));
  } else {
    AXLE_ASSIGN_OR_RETURN(groups, ParticipantGroupsOf(*collective, grid));
  }
  int64_t dimension =
      collective->attrs().dimensions.empty() ? 0 : collective->attrs().dimensions[0];
  if (opcode == HloOpcode::kAllToAll && collective->attrs().dimensions.empty()) dimension = -1;
  for (const std::vector<int64_t>& group : groups) {
    const auto n = static_cast<int64_t>(group.size());
    for (const CollectiveThunk::Operand& operand : operands) {
      int64_t in = ShapeUtil::ElementsIn(operand.shape);
      int64_t out = ShapeUtil::ElementsIn(operand.result_shape);
      bool fits = true;
      switch (opcode) {
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
          fits = out == in * n && dimension < operand.shape.rank();
          break;
        case HloOpcode::kReduceScatter:
          fits = in == out * n && dimension < operand.shape.rank() &&
                 operand.shape.dimensions(dimension) % n == 0;
          break;
        case HloOpcode::kAllToAll:
          fits = in == out && (dimension < 0 ? count == n
                                             : dimension < operand.shape.rank() &&
                                                   operand.shape.dimensions(dimension) % n == 0);
          break;
        default:
          fits = in == out;
          break;
      }
      if (!fits) {
        return Unsupported(
            instruction,
            absl::StrCat("operand ", operand.shape.ToString(false), " and result ",
                         operand.result_shape.ToString(false), " do not fit a group of ", n,
                         " along dimension ", dimension));
      }
    }
  }

  Reducer reducer;
  if (opcode == HloOpcode::kAllReduce || opcode == HloOpcode::kAllReduceStart ||
      opcode == HloOpcode::kReduceScatter) {
    if (instruction.called_computations().size() != 1) {
      return Unsupported(instruction, "has no to_apply");
    }
    const HloComputation* to_apply = instruction.to_apply();
    PrimitiveType type = operands[0].shape.element_type();
    for (const CollectiveThunk::Operand& operand : operands) {
      if (operand.shape.element_type() != type) {
        return Unsupported(instruction, "operands of several element types are not supported yet");
      }
    }
    absl::StatusOr<Reducer> kind_reducer = absl::UnimplementedError("not one op");
    if (std::optional<ReductionKind> kind = KindOf(*to_apply, type)) {
      kind_reducer = MakeReducer(*kind, type);
    }
    if (kind_reducer.ok()) {
      reducer = *std::move(kind_reducer);
    } else {
      AXLE_RETURN_IF_ERROR(CheckScalarFunction(*to_apply));
      if (primitive_util::ByteWidth(type) > 16) {
        return Unsupported(instruction, "elements wider than 16 bytes");
      }
      AXLE_ASSIGN_OR_RETURN(
          std::unique_ptr<CompiledScalarFunction> function,
          builder.kernels().AddScalarFunction(*to_apply, builder.UniqueName("collective_reducer")));
      reducer = ScalarFunctionReducer(std::move(function), primitive_util::ByteWidth(type));
    }
  }

  // A start's other elements: its operands (element 0) and context.
  // Element 0 holds the operands when its leaves are theirs, else zeros
  // (as the interpreter's start tuple).
  std::vector<int64_t> forwarded, zeroed;
  if (start_tuple) {
    const Shape& first = shape.tuple_shapes(0);
    const bool operands_first =
        first.IsTuple() ? static_cast<int64_t>(first.tuple_shapes().size()) == count : count == 1;
    for (int64_t k = 0; operands_first && k < count; ++k) {
      ShapeIndex index = {0};
      if (first.IsTuple()) index.push_back(k);
      absl::StatusOr<int64_t> value = builder.ValueOf(&instruction, index);
      if (!value.ok() ||
          !ShapeUtil::Compatible(ShapeUtil::GetSubshape(shape, index), operands[k].shape)) {
        forwarded.clear();
        break;
      }
      forwarded.push_back(*value);
    }
    for (const auto& [index, value] : builder.LeavesOf(&instruction)) {
      if (index.empty() || index[0] == 1 || (index[0] == 0 && !forwarded.empty())) continue;
      zeroed.push_back(value);
    }
  }
  builder.AddThunk(std::make_unique<CollectiveThunk>(
      instruction, grid, std::move(groups), std::move(pairs), std::move(operands),
      std::move(forwarded), std::move(zeroed), dimension, std::move(reducer),
      std::move(validation)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
