//===- feed_thunk.cc - infeed and outfeed on the cpu platform --------------===//
#include "axle/cpu/runtime/feed_thunk.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/host_feed.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {
namespace {

constexpr char kPlatform[] = "Host";

// The device whose queues a run uses.
int64_t DeviceOf(const ThunkContext& context) {
  if (context.run_options == nullptr) return 0;
  const RunParticipant& participant = context.run_options->participant();
  if (participant.communicator != nullptr) {
    return participant.replica_id * participant.partition_count + participant.partition_id;
  }
  return std::max(context.run_options->device_ordinal(), 0);
}

// An array leaf of the fed value and its buffer.
struct Leaf {
  ShapeIndex index;  // in the value
  int64_t value = 0;
  int64_t bytes = 0;
};

class FeedThunk : public Thunk {
 public:
  FeedThunk(std::string name, bool infeed, Shape shape, std::vector<Leaf> leaves)
      : Thunk(std::move(name)),
        infeed_(infeed),
        shape_(std::move(shape)),
        leaves_(std::move(leaves)) {}

  absl::Status Execute(const ThunkContext& context) const override {
    const int64_t device = DeviceOf(context);
    HostFeed& feed = HostFeed::Get(
        infeed_ ? HostFeed::Direction::kInfeed : HostFeed::Direction::kOutfeed, kPlatform, device);
    if (infeed_) {
      absl::StatusOr<Literal> value = feed.Pop(FeedTimeoutFromEnvironment(), &shape_);
      if (!value.ok()) {
        return absl::Status(value.status().code(), absl::StrCat("cpu platform: infeed ", name(),
                                                                ": ", value.status().message()));
      }
      for (const Leaf& leaf : leaves_) {
        std::memcpy(context.address(leaf.value), value->untyped_data(leaf.index), leaf.bytes);
      }
      return absl::OkStatus();
    }
    Literal value(shape_);
    for (const Leaf& leaf : leaves_) {
      std::memcpy(value.untyped_data(leaf.index), context.address(leaf.value), leaf.bytes);
    }
    feed.Push(std::move(value));
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    BufferUses uses;
    for (const Leaf& leaf : leaves_) (infeed_ ? uses.writes : uses.reads).push_back(leaf.value);
    return uses;
  }

 private:
  bool infeed_;
  Shape shape_;  // the value's
  std::vector<Leaf> leaves_;
};

// The array leaves of `shape` (in index order), each in the descending
// layout the thunk copies in.
absl::StatusOr<std::vector<ShapeIndex>> ArrayLeaves(const HloInstruction& instruction,
                                                    const Shape& shape) {
  std::vector<ShapeIndex> leaves;
  absl::Status status;
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex& index) {
    if (!subshape.IsArray() || !status.ok()) return;
    if (primitive_util::IsSubByteType(subshape.element_type())) {
      status = Unsupported(instruction, absl::StrCat("sub-byte leaf ", subshape.ToString(false)));
      return;
    }
    if (!ShapeUtil::HasDescendingLayout(subshape)) {
      status = Unsupported(instruction, absl::StrCat("leaf ", subshape.ToString(true),
                                                     " is not in the descending layout"));
      return;
    }
    leaves.push_back(index);
  });
  AXLE_RETURN_IF_ERROR(status);
  return leaves;
}

}  // namespace

absl::Status EmitInfeedThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(1).IsToken()) {
    return Unsupported(instruction, "must produce (data, token)");
  }
  const Shape& data = shape.tuple_shapes(0);
  AXLE_ASSIGN_OR_RETURN(std::vector<ShapeIndex> indices, ArrayLeaves(instruction, data));
  builder.DefineTemporaries(&instruction);
  std::vector<Leaf> leaves;
  for (const ShapeIndex& index : indices) {
    ShapeIndex at = index;
    at.insert(at.begin(), 0);
    Leaf leaf;
    leaf.index = index;
    leaf.bytes = ShapeUtil::ByteSizeOfElements(ShapeUtil::GetSubshape(data, index));
    AXLE_ASSIGN_OR_RETURN(leaf.value, builder.ValueOf(&instruction, at));
    leaves.push_back(std::move(leaf));
  }
  builder.AddThunk(
      std::make_unique<FeedThunk>(instruction.name(), /*infeed=*/true, data, std::move(leaves)));
  return absl::OkStatus();
}

absl::Status EmitOutfeedThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  if (instruction.operand_count() < 1) return Unsupported(instruction, "has no value");
  const HloInstruction* operand = instruction.operand(0);
  const Shape& data = operand->shape();
  AXLE_ASSIGN_OR_RETURN(std::vector<ShapeIndex> indices, ArrayLeaves(instruction, data));
  builder.DefineTemporaries(&instruction);
  std::vector<Leaf> leaves;
  for (const ShapeIndex& index : indices) {
    Leaf leaf;
    leaf.index = index;
    leaf.bytes = ShapeUtil::ByteSizeOfElements(ShapeUtil::GetSubshape(data, index));
    AXLE_ASSIGN_OR_RETURN(leaf.value, builder.ValueOf(operand, index));
    leaves.push_back(std::move(leaf));
  }
  builder.AddThunk(
      std::make_unique<FeedThunk>(instruction.name(), /*infeed=*/false, data, std::move(leaves)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
