//===- hlo_parser_collectives.cc - Collectives and channel ops ------------===//
//
// all-reduce, all-gather, reduce-scatter, all-to-all, ragged-all-to-all,
// collective-broadcast, collective-permute (and their -start forms), send,
// recv and their -done ops: replica groups, channels, source-target pairs,
// and the shapes XLA builds for send/recv from their operands.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

bool IsCollectiveOrChannelOp(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kSend:
    case HloOpcode::kRecv:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone:
      return true;
    default:
      return false;
  }
}

HloInstruction* HloParserImpl::CreateCollective(std::optional<Shape> shape, HloOpcode opcode,
                                                AttrMap& attrs, bool allow_attributes,
                                                size_t opcode_offset, const Operands* preset) {
  Operands operands;
  size_t operands_offset = lexer_.token_start();
  auto parse_operands = [&](int64_t expected = -1) {
    return TakeOrParseOperands(preset, expected, opcode_offset, &operands);
  };
  auto parse_attributes = [&]() { return ParseAttributes(attrs, allow_attributes); };
  auto fail = [&](absl::string_view message) -> HloInstruction* {
    Error(operands_offset, message);
    return nullptr;
  };
  auto no_inference = [&]() {
    if (shape.has_value()) return true;
    return Error(opcode_offset,
                 absl::StrCat("failed to infer shape for opcode: ", HloOpcodeString(opcode),
                              ", error: write the result shape: Axle's parser "
                              "does not infer it"));
  };
  auto single_dimension = [&](const std::optional<std::vector<int64_t>>& dims) {
    if (dims->size() != 1) {
      return Error(operands_offset, absl::StrCat("expects dimensions={d} with exactly one "
                                                 "dimension, but sees ",
                                                 dims->size()));
    }
    return true;
  };

  switch (opcode) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      CollectiveAttrs collective;
      std::optional<int64_t> channel_id;
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<bool> constrain_layout, use_global_device_ids;
      std::optional<HloComputation*> to_apply;
      std::optional<std::vector<std::vector<int64_t>>> source_target_pairs;
      attrs["channel_id"] = Int64Attr(false, &channel_id);
      bool is_permute =
          opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart;
      bool is_reduce = opcode == HloOpcode::kAllReduce || opcode == HloOpcode::kAllReduceStart ||
                       opcode == HloOpcode::kReduceScatter;
      bool is_gather = opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart;
      if (is_permute) {
        attrs["source_target_pairs"] = Int64ListListAttr(true, &source_target_pairs);
        attrs["slice_sizes"] = Raw("slice_sizes", false, [this] {
          std::vector<std::vector<int64_t>> ignored;
          return ParseInt64ListList(&ignored);
        });
      } else {
        attrs["replica_groups"] = CollectiveDevicesAttr(&collective);
      }
      if (is_reduce) {
        attrs["to_apply"] = ComputationAttr(true, &to_apply);
        attrs["mode"] = Raw("mode", false, [this] {
          if (kind() != TokKind::kIdent) return TokenError("expects collective op group mode");
          Lex();
          return true;
        });
      }
      if (is_reduce || is_gather) {
        attrs["use_global_device_ids"] = BoolAttr(false, &use_global_device_ids);
      }
      if (is_reduce || is_gather || opcode == HloOpcode::kAllToAll) {
        attrs["constrain_layout"] = BoolAttr(false, &constrain_layout);
      }
      if (is_gather || opcode == HloOpcode::kReduceScatter || opcode == HloOpcode::kAllToAll ||
          opcode == HloOpcode::kRaggedAllToAll) {
        attrs["dimensions"] =
            Int64ListAttr(is_gather || opcode == HloOpcode::kReduceScatter, &dimensions);
      }
      if (opcode == HloOpcode::kCollectiveBroadcast) {
        attrs["has_dynamic_root"] = Raw("has_dynamic_root", false, [this] {
          bool ignored;
          return ParseBool(&ignored);
        });
      }
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (dimensions.has_value() && !single_dimension(dimensions)) return nullptr;
      if (is_permute) {
        for (const auto& pair : *source_target_pairs) {
          if (pair.size() != 2) return fail("expects 'source_target_pairs=' to be a list of pairs");
          collective.source_target_pairs.push_back({pair[0], pair[1]});
        }
        bool combined = false;
        for (const RawAttribute& raw : pending_raw_) combined |= raw.name == "slice_sizes";
        if (combined && operands.size() != 4) {
          return fail(
              "CollectivePermute and CollectivePermuteStart must have exactly four "
              "operands for dynamic-slice and in-place update.");
        }
      }
      if (opcode == HloOpcode::kRaggedAllToAll && operands.size() != 6) {
        return fail(absl::StrCat("expects 6 operands, but has ", operands.size(), " operands"));
      }
      if (!no_inference()) return nullptr;
      collective.channel_id = channel_id;
      collective.use_global_device_ids = use_global_device_ids.value_or(false);
      collective.constrain_layout = constrain_layout.value_or(false);
      if (dimensions.has_value()) collective.dimensions = *dimensions;
      auto instruction = std::make_unique<HloCollectiveInstruction>(opcode, *shape, operands);
      *instruction->mutable_attrs() = std::move(collective);
      if (to_apply.has_value()) instruction->AppendCalledComputation(*to_apply);
      return Add(std::move(instruction));
    }
    case HloOpcode::kSend:
    case HloOpcode::kRecv:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone: {
      std::optional<int64_t> channel_id;
      std::optional<bool> is_host_transfer;
      attrs["channel_id"] = Int64Attr(false, &channel_id);
      attrs["is_host_transfer"] = BoolAttr(false, &is_host_transfer);
      if (!parse_operands(opcode == HloOpcode::kSend ? 2 : 1) || !parse_attributes()) {
        return nullptr;
      }
      // XLA builds these shapes from the operands: the written shape only
      // names the received data.
      Shape u32 = ShapeUtil::MakeShape(U32, {});
      Shape token = ShapeUtil::MakeTokenShape();
      if (opcode == HloOpcode::kRecv) {
        if (!shape->IsTuple() || shape->tuple_shapes_size() == 0) {
          return fail("recv must have a tuple shape (data, u32[], token[])");
        }
        shape = ShapeUtil::MakeTupleShape({shape->tuple_shapes(0), u32, token});
      } else if (opcode == HloOpcode::kSend) {
        shape = ShapeUtil::MakeTupleShape({operands[0]->shape(), u32, token});
      } else {
        const Shape& start = operands[0]->shape();
        if (!start.IsTuple() || start.tuple_shapes_size() == 0) {
          return fail("the operand of send-done/recv-done must be a send/recv");
        }
        if (const auto* channel = dyn_cast<HloSendRecvInstruction>(operands[0]);
            channel != nullptr && channel->channel_id() != channel_id) {
          return fail("channel_id does not match the channel_id of the operand");
        }
        shape = opcode == HloOpcode::kSendDone
                    ? token
                    : ShapeUtil::MakeTupleShape({start.tuple_shapes(0), token});
      }
      auto instruction = std::make_unique<HloSendRecvInstruction>(opcode, *shape, operands);
      instruction->mutable_attrs()->channel_id = channel_id;
      instruction->mutable_attrs()->is_host_transfer = is_host_transfer.value_or(false);
      return Add(std::move(instruction));
    }
    default:
      break;
  }
  Error(opcode_offset, absl::StrCat("opcode ", HloOpcodeString(opcode), " is not supported"));
  return nullptr;
}

}  // namespace hlo_parser_internal
}  // namespace axle
