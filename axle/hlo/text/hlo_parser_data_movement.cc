//===- hlo_parser_data_movement.cc - Reshapes, slices, tuples, ... --------===//
//
// CreateDataMovement (see hlo_parser_instructions.cc): reshape, broadcast,
// transpose, reverse, concatenate, slice, dynamic-slice and -update-slice,
// pad, tuple, get-tuple-element, topk, the dimension-size ops, and map and
// reduce (which share the `dimensions=` attribute with them).
//
//===----------------------------------------------------------------------===//
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

HloInstruction* HloParserImpl::CreateDataMovement(NewInstruction& n) {
  switch (n.opcode) {
    case HloOpcode::kTopK: {
      std::optional<int64_t> k;
      std::optional<bool> largest;
      n.attrs["k"] = Int64Attr(true, &k);
      n.attrs["largest"] = BoolAttr(false, &largest);
      n.attrs["is_stable"] = Raw("is_stable", false, [this] {
        bool ignored;
        return ParseBool(&ignored);
      });
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n,
                      [&] { return ShapeInference::InferTopKShape(n.operands[0]->shape(), *k); })) {
        return nullptr;
      }
      auto topk = std::make_unique<HloTopKInstruction>(n.opcode, *n.shape, n.operands);
      topk->mutable_attrs()->k = *k;
      topk->mutable_attrs()->largest = largest.value_or(true);
      return Add(std::move(topk));
    }
    case HloOpcode::kDynamicReshape: {
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.empty()) return FailOperands(n, "Expected at least one operand.");
      return AddPlain(n);
    }
    case HloOpcode::kReshape: {
      std::optional<int64_t> inferred_dimension;
      n.attrs["inferred_dimension"] = Int64Attr(false, &inferred_dimension);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      auto reshape = std::make_unique<HloReshapeInstruction>(n.opcode, *n.shape, n.operands);
      reshape->mutable_attrs()->inferred_dimension = inferred_dimension.value_or(-1);
      return Add(std::move(reshape));
    }
    case HloOpcode::kTuple: {
      bool ok = n.shape.has_value() ? ParseOperandsOf(n, n.shape->tuple_shapes_size())
                                    : ParseOperandsOf(n);
      if (!ok || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            std::vector<Shape> shapes;
            for (HloInstruction* operand : n.operands) shapes.push_back(operand->shape());
            return ShapeUtil::MakeTupleShape(std::move(shapes));
          })) {
        return nullptr;
      }
      return AddPlain(n);
    }
    case HloOpcode::kGetTupleElement: {
      std::optional<int64_t> index;
      n.attrs["index"] = Int64Attr(true, &index);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] {
            return ShapeInference::InferGetTupleElementShape(n.operands[0]->shape(), *index);
          })) {
        return nullptr;
      }
      auto gte = std::make_unique<HloGetTupleElementInstruction>(n.opcode, *n.shape, n.operands);
      gte->mutable_attrs()->tuple_index = *index;
      return Add(std::move(gte));
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize: {
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<HloComputation*> to_apply;
      int64_t expected = -1;
      if (n.opcode == HloOpcode::kBroadcast || n.opcode == HloOpcode::kTranspose ||
          n.opcode == HloOpcode::kReverse || n.opcode == HloOpcode::kGetDimensionSize) {
        expected = 1;
      } else if (n.opcode == HloOpcode::kSetDimensionSize) {
        expected = 2;
      }
      if (!ParseOperandsOf(n, expected)) return nullptr;
      bool scalar_broadcast = n.opcode == HloOpcode::kBroadcast &&
                              n.operands[0]->shape().IsArray() &&
                              n.operands[0]->shape().rank() == 0;
      n.attrs["dimensions"] =
          Int64ListAttr(n.opcode != HloOpcode::kMap && !scalar_broadcast, &dimensions);
      if (n.opcode == HloOpcode::kMap || n.opcode == HloOpcode::kReduce) {
        n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      }
      if (!ParseAttributesOf(n)) return nullptr;
      if (!dimensions.has_value()) dimensions.emplace();
      if (n.opcode == HloOpcode::kConcatenate || n.opcode == HloOpcode::kGetDimensionSize ||
          n.opcode == HloOpcode::kSetDimensionSize) {
        if (!SingleDimension(n, *dimensions)) return nullptr;
      }
      if (n.opcode == HloOpcode::kReduce && (n.operands.empty() || n.operands.size() % 2 != 0)) {
        return FailOperands(n, absl::StrCat("expects an even number of operands, but has ",
                                            n.operands.size(), " operands"));
      }
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            if (n.operands.empty()) {
              return absl::InvalidArgumentError("expects at least one operand");
            }
            const Shape& in = n.operands[0]->shape();
            std::vector<const Shape*> all = OperandShapes(n.operands, 0, n.operands.size());
            switch (n.opcode) {
              case HloOpcode::kBroadcast:
                return ShapeInference::InferBroadcastShape(in, *dimensions);
              case HloOpcode::kTranspose:
                return ShapeInference::InferTransposeShape(in, *dimensions);
              case HloOpcode::kReverse:
                return ShapeInference::InferReverseShape(in, *dimensions);
              case HloOpcode::kConcatenate:
                return ShapeInference::InferConcatOpShape(all, (*dimensions)[0]);
              case HloOpcode::kMap: {
                absl::StatusOr<ProgramShape> signature =
                    ShapeInference::ComputationSignature(**to_apply);
                if (!signature.ok()) return signature.status();
                std::vector<int64_t> dims = *dimensions;
                if (dims.empty() && in.IsArray()) {
                  for (int64_t d = 0; d < in.rank(); ++d) dims.push_back(d);
                }
                return ShapeInference::InferMapShape(all, *signature, dims);
              }
              case HloOpcode::kReduce: {
                absl::StatusOr<ProgramShape> signature =
                    ShapeInference::ComputationSignature(**to_apply);
                if (!signature.ok()) return signature.status();
                return ShapeInference::InferReduceShape(all, *dimensions, *signature);
              }
              case HloOpcode::kGetDimensionSize:
                return ShapeInference::InferGetDimensionSizeShape(in, (*dimensions)[0]);
              default:
                return ShapeInference::InferSetDimensionSizeShape(in, n.operands[1]->shape(),
                                                                  (*dimensions)[0]);
            }
          })) {
        return nullptr;
      }
      auto instruction = std::make_unique<HloDimensionsInstruction>(n.opcode, *n.shape, n.operands);
      instruction->mutable_attrs()->dimensions = *dimensions;
      if (to_apply.has_value()) instruction->AppendCalledComputation(*to_apply);
      return Add(std::move(instruction));
    }
    case HloOpcode::kSlice: {
      std::optional<SliceAttrs> slice;
      n.attrs["slice"] = {true, [&] {
                            slice.emplace();
                            return ParseSliceRanges(&*slice);
                          }};
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      auto instruction = std::make_unique<HloSliceInstruction>(n.opcode, *n.shape, n.operands);
      *instruction->mutable_attrs() = *slice;
      return Add(std::move(instruction));
    }
    case HloOpcode::kDynamicSlice: {
      std::optional<std::vector<int64_t>> sizes;
      n.attrs["dynamic_slice_sizes"] = Int64ListAttr(true, &sizes);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.empty()) return FailOperands(n, "Expected at least one operand.");
      if (!(n.operands.size() == 2 && n.operands[1]->shape().rank() == 1) &&
          static_cast<int64_t>(n.operands.size()) != 1 + n.operands[0]->shape().rank()) {
        return FailOperands(n, "Wrong number of operands.");
      }
      auto instruction =
          std::make_unique<HloDynamicSliceInstruction>(n.opcode, *n.shape, n.operands);
      instruction->mutable_attrs()->dynamic_slice_sizes = *sizes;
      return Add(std::move(instruction));
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.size() < 2) return FailOperands(n, "Expected at least two operands.");
      if (!(n.operands.size() == 3 && n.operands[2]->shape().rank() == 1) &&
          static_cast<int64_t>(n.operands.size()) != 2 + n.operands[0]->shape().rank()) {
        return FailOperands(n, "Wrong number of operands.");
      }
      return AddPlain(n);
    }
    case HloOpcode::kPad: {
      std::optional<PaddingConfig> padding;
      n.attrs["padding"] = {true, [&] {
                              padding.emplace();
                              return ParsePaddingConfig(&*padding);
                            }};
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] {
            return ShapeInference::InferPadShape(n.operands[0]->shape(), n.operands[1]->shape(),
                                                 *padding);
          }))
        return nullptr;
      auto pad = std::make_unique<HloPadInstruction>(n.opcode, *n.shape, n.operands);
      pad->mutable_attrs()->padding_config = *padding;
      return Add(std::move(pad));
    }
    default:
      return Unsupported(n);
  }
}
}  // namespace hlo_parser_internal
}  // namespace axle
