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

HloInstruction* HloParserImpl::CreateCollective(NewInstruction& n) {
  switch (n.opcode) {
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
      n.attrs["channel_id"] = Int64Attr(false, &channel_id);
      bool is_permute = n.opcode == HloOpcode::kCollectivePermute ||
                        n.opcode == HloOpcode::kCollectivePermuteStart;
      bool is_reduce = n.opcode == HloOpcode::kAllReduce ||
                       n.opcode == HloOpcode::kAllReduceStart ||
                       n.opcode == HloOpcode::kReduceScatter;
      bool is_gather = n.opcode == HloOpcode::kAllGather || n.opcode == HloOpcode::kAllGatherStart;
      if (is_permute) {
        n.attrs["source_target_pairs"] = Int64ListListAttr(true, &source_target_pairs);
        n.attrs["slice_sizes"] = Raw("slice_sizes", false, [this] {
          std::vector<std::vector<int64_t>> ignored;
          return ParseInt64ListList(&ignored);
        });
      } else {
        n.attrs["replica_groups"] = CollectiveDevicesAttr(&collective);
      }
      if (is_reduce) {
        n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
        n.attrs["mode"] = Raw("mode", false, [this] {
          if (kind() != TokKind::kIdent) return TokenError("expects collective op group mode");
          Lex();
          return true;
        });
      }
      if (is_reduce || is_gather) {
        n.attrs["use_global_device_ids"] = BoolAttr(false, &use_global_device_ids);
      }
      if (is_reduce || is_gather || n.opcode == HloOpcode::kAllToAll) {
        n.attrs["constrain_layout"] = BoolAttr(false, &constrain_layout);
      }
      if (is_gather || n.opcode == HloOpcode::kReduceScatter || n.opcode == HloOpcode::kAllToAll ||
          n.opcode == HloOpcode::kRaggedAllToAll) {
        n.attrs["dimensions"] =
            Int64ListAttr(is_gather || n.opcode == HloOpcode::kReduceScatter, &dimensions);
      }
      if (n.opcode == HloOpcode::kCollectiveBroadcast) {
        n.attrs["has_dynamic_root"] = Raw("has_dynamic_root", false, [this] {
          bool ignored;
          return ParseBool(&ignored);
        });
      }
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (dimensions.has_value() && !SingleDimension(n, *dimensions)) return nullptr;
      if (is_permute) {
        for (const auto& pair : *source_target_pairs) {
          if (pair.size() != 2)
            return FailOperands(n, "expects 'source_target_pairs=' to be a list of pairs");
          collective.source_target_pairs.push_back({pair[0], pair[1]});
        }
        bool combined = false;
        for (const RawAttribute& raw : pending_raw_) combined |= raw.name == "slice_sizes";
        if (combined && n.operands.size() != 4) {
          return FailOperands(n,
                              "CollectivePermute and CollectivePermuteStart must have exactly four "
                              "operands for dynamic-slice and in-place update.");
        }
      }
      if (n.opcode == HloOpcode::kRaggedAllToAll && n.operands.size() != 6) {
        return FailOperands(
            n, absl::StrCat("expects 6 operands, but has ", n.operands.size(), " operands"));
      }
      if (!RequireShape(n)) return nullptr;
      collective.channel_id = channel_id;
      collective.use_global_device_ids = use_global_device_ids.value_or(false);
      collective.constrain_layout = constrain_layout.value_or(false);
      if (dimensions.has_value()) collective.dimensions = *dimensions;
      auto instruction = std::make_unique<HloCollectiveInstruction>(n.opcode, *n.shape, n.operands);
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
      n.attrs["channel_id"] = Int64Attr(false, &channel_id);
      n.attrs["is_host_transfer"] = BoolAttr(false, &is_host_transfer);
      if (!ParseOperandsOf(n, n.opcode == HloOpcode::kSend ? 2 : 1) || !ParseAttributesOf(n)) {
        return nullptr;
      }
      // XLA builds these shapes from the n.operands: the written n.shape only
      // names the received data.
      Shape u32 = ShapeUtil::MakeShape(U32, {});
      Shape token = ShapeUtil::MakeTokenShape();
      if (n.opcode == HloOpcode::kRecv) {
        if (!n.shape->IsTuple() || n.shape->tuple_shapes_size() == 0) {
          return FailOperands(n, "recv must have a tuple shape (data, u32[], token[])");
        }
        n.shape = ShapeUtil::MakeTupleShape({n.shape->tuple_shapes(0), u32, token});
      } else if (n.opcode == HloOpcode::kSend) {
        n.shape = ShapeUtil::MakeTupleShape({n.operands[0]->shape(), u32, token});
      } else {
        const Shape& start = n.operands[0]->shape();
        if (!start.IsTuple() || start.tuple_shapes_size() == 0) {
          return FailOperands(n, "the operand of send-done/recv-done must be a send/recv");
        }
        if (const auto* channel = dyn_cast<HloSendRecvInstruction>(n.operands[0]);
            channel != nullptr && channel->channel_id() != channel_id) {
          return FailOperands(n, "channel_id does not match the channel_id of the operand");
        }
        n.shape = n.opcode == HloOpcode::kSendDone
                      ? token
                      : ShapeUtil::MakeTupleShape({start.tuple_shapes(0), token});
      }
      auto instruction = std::make_unique<HloSendRecvInstruction>(n.opcode, *n.shape, n.operands);
      instruction->mutable_attrs()->channel_id = channel_id;
      instruction->mutable_attrs()->is_host_transfer = is_host_transfer.value_or(false);
      return Add(std::move(instruction));
    }
    default:
      return Unsupported(n);
  }
}

}  // namespace hlo_parser_internal
}  // namespace axle
