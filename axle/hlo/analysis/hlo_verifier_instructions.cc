//===- hlo_verifier_instructions.cc - Per-instruction checks ---------------===//
//
// For one instruction: operand and called-computation counts, layouts, the
// shape against shape inference (with XLA's rules on which ops may change
// layouts or float precision), mixed precision, implicit broadcasts,
// comparison types, replica groups and source-target pairs, fusion bodies,
// custom-call aliasing and async/send/recv pairing.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "axle/hlo/analysis/hlo_verifier_internal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle::verifier_internal {

using shape_inference_internal::CollectiveGroupMode;
using shape_inference_internal::Str;

bool ShapesMatch(const Shape& a, const Shape& b, bool compare_layouts, bool ignore_fp_precision) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!ShapesMatch(a.tuple_shapes(i), b.tuple_shapes(i), compare_layouts,
                       ignore_fp_precision)) {
        return false;
      }
    }
    return true;
  }
  if (!shape_inference_internal::CompatibleShapes(a, b, ignore_fp_precision)) return false;
  if (compare_layouts && a.IsArray() && a.has_layout() && b.has_layout() &&
      a.layout().minor_to_major() != b.layout().minor_to_major()) {
    return false;
  }
  return true;
}

absl::Status InstructionError(const HloInstruction& instruction, absl::string_view message) {
  std::string where = instruction.parent() == nullptr
                          ? std::string("(no computation)")
                          : absl::StrCat("computation ", instruction.parent()->name());
  return absl::InvalidArgumentError(absl::StrCat("%", instruction.name(), " (",
                                                 HloOpcodeString(instruction.opcode()), ") in ",
                                                 where, ": ", message));
}

namespace {

// Opcodes that may have called computations, and how many.
enum class Calls { kNone, kOne, kTwo, kAtLeastOne, kAny };

Calls ExpectedCalls(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScatter:
    case HloOpcode::kSort:
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kScan:
    // The reducing collectives call their reduction.
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
      return Calls::kOne;
    case HloOpcode::kWhile:
    case HloOpcode::kSelectAndScatter:
      return Calls::kTwo;
    case HloOpcode::kConditional:
      return Calls::kAtLeastOne;
    case HloOpcode::kCustomCall:
      return Calls::kAny;
    default:
      return Calls::kNone;
  }
}

absl::Status CheckCounts(const HloInstruction& instruction) {
  // async-update may bind further operands (XLA's progressive binding).
  const int arity = instruction.opcode() == HloOpcode::kAsyncUpdate
                        ? kVariadic
                        : HloOpcodeArity(instruction.opcode());
  if (arity != kVariadic && instruction.operand_count() != arity) {
    return InstructionError(instruction, absl::StrCat("expected ", arity, " operand(s), got ",
                                                      instruction.operand_count()));
  }
  const size_t calls = instruction.called_computations().size();
  for (const HloComputation* callee : instruction.called_computations()) {
    if (callee == nullptr) return InstructionError(instruction, "a called computation is null");
  }
  switch (ExpectedCalls(instruction.opcode())) {
    case Calls::kNone:
      if (calls != 0) {
        return InstructionError(instruction, absl::StrCat("this opcode calls no computations, but ",
                                                          calls, " are attached"));
      }
      break;
    case Calls::kOne:
      if (calls != 1) {
        return InstructionError(instruction,
                                absl::StrCat("expected 1 called computation, got ", calls));
      }
      break;
    case Calls::kTwo:
      if (calls != 2) {
        return InstructionError(instruction,
                                absl::StrCat("expected 2 called computations, got ", calls));
      }
      break;
    case Calls::kAtLeastOne:
      if (calls < 1) {
        return InstructionError(instruction, "expected at least 1 called computation, got 0");
      }
      break;
    case Calls::kAny:
      break;
  }
  return absl::OkStatus();
}

absl::Status CheckLayouts(const HloInstruction& instruction, const HloVerifierOptions& options) {
  absl::Status status;
  ShapeUtil::ForEachSubshape(instruction.shape(), [&](const Shape& s, const ShapeIndex& index) {
    if (!status.ok() || !s.IsArray()) return;
    if (!options.allow_unbounded_dynamism) {
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (s.is_unbounded_dynamic_dimension(d)) {
          status = InstructionError(
              instruction,
              absl::StrCat("unbounded dynamic dimensions are not allowed: ", s.ToString(false)));
          return;
        }
      }
    }
    if (s.has_layout() &&
        !shape_inference_internal::IsPermutation(s.layout().minor_to_major(), s.rank())) {
      status = InstructionError(
          instruction,
          absl::StrCat("layout ", s.layout().ToString(), " of ", s.ToString(false), " at index ",
                       ShapeIndexToString(index), " is not a permutation of its dimensions"));
    }
  });
  return status;
}

// The ops that only move or reinterpret data: their shape must match
// exactly (layouts too when layout-sensitive, never float precision).
bool IsExactShapeOp(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kBitcast:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kParameter:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
      return true;
    default:
      return false;
  }
}

// Ops whose operands may legitimately have different float types.
bool AllowsMixedPrecisionOperands(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kConvolution:
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDomain:
    case HloOpcode::kFusion:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kParameter:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kSort:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
      return true;
    default:
      return false;
  }
}

absl::Status CheckMixedPrecisionOperands(const HloInstruction& instruction) {
  if (AllowsMixedPrecisionOperands(instruction.opcode())) return absl::OkStatus();
  PrimitiveType fp_type = PRIMITIVE_TYPE_INVALID;
  for (const HloInstruction* operand : instruction.operands()) {
    bool mixed = false;
    ShapeUtil::ForEachSubshape(operand->shape(), [&](const Shape& s, const ShapeIndex&) {
      if (!s.IsArray() || !primitive_util::IsFloatingPointType(s.element_type())) return;
      if (fp_type == PRIMITIVE_TYPE_INVALID) {
        fp_type = s.element_type();
      } else if (fp_type != s.element_type()) {
        mixed = true;
      }
    });
    if (mixed) {
      return InstructionError(instruction,
                              "operands have floating-point types of different "
                              "precisions, but mixed precision is disallowed");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const HloInstruction& instruction, const Shape& inferred,
                        const HloVerifierOptions& options) {
  if (!options.allow_mixed_precision) {
    if (auto s = CheckMixedPrecisionOperands(instruction); !s.ok()) return s;
  }
  const bool exact = IsExactShapeOp(instruction.opcode());
  const bool match =
      exact ? ShapesMatch(instruction.shape(), inferred, options.layout_sensitive, false)
            : ShapesMatch(instruction.shape(), inferred, false, options.allow_mixed_precision);
  if (!match) {
    return InstructionError(instruction,
                            absl::StrCat("expected shape ", inferred.ToString(false),
                                         " (from its operands and attributes), but the "
                                         "instruction's shape is ",
                                         instruction.shape().ToString(false)));
  }
  return absl::OkStatus();
}

// XLA forbids implicit broadcasts in HLO: every operand of an elementwise
// unary/binary op has the result's dimensions.
absl::Status CheckElementwise(const HloInstruction& instruction) {
  if (!instruction.IsElementwise() || instruction.operand_count() > 2 ||
      instruction.opcode() == HloOpcode::kStochasticConvert) {
    return absl::OkStatus();
  }
  for (const HloInstruction* operand : instruction.operands()) {
    if (!shape_inference_internal::CompatibleIgnoringElementType(operand->shape(),
                                                                 instruction.shape())) {
      return InstructionError(
          instruction,
          absl::StrCat("implicit broadcast is not allowed in HLO: operand %", operand->name(),
                       " has shape ", operand->shape().ToString(false), " but the result is ",
                       instruction.shape().ToString(false)));
    }
  }
  if (const auto* compare = dyn_cast<HloCompareInstruction>(&instruction)) {
    const ComparisonType type = compare->type();
    if (type == ComparisonType::kDefault) return absl::OkStatus();
    const PrimitiveType element = instruction.operand(1)->shape().element_type();
    bool ok;
    if (primitive_util::IsFloatingPointType(element) || primitive_util::IsComplexType(element)) {
      ok = type == ComparisonType::kFloat || type == ComparisonType::kFloatTotalOrder;
    } else if (primitive_util::IsSignedIntegralType(element)) {
      ok = type == ComparisonType::kSigned;
    } else {
      ok = type == ComparisonType::kUnsigned;
    }
    if (!ok) {
      return InstructionError(
          instruction,
          absl::StrCat("comparison type does not suit operands of type ", Str(element)));
    }
  }
  return absl::OkStatus();
}

// Reduce, map and reduce-window: unless mixed precision is allowed, the
// called computation's parameters have the operands' element types.
absl::Status CheckToApplyElementTypes(const HloInstruction& instruction) {
  const HloComputation* to_apply = instruction.called_computations()[0];
  for (int64_t i = 0; i < instruction.operand_count() && i < to_apply->num_parameters(); ++i) {
    const HloInstruction* parameter = to_apply->parameter_instruction(i);
    if (parameter == nullptr) continue;
    if (parameter->shape().element_type() != instruction.operand(i)->shape().element_type()) {
      return InstructionError(
          instruction, absl::StrCat("parameter ", i, " of ", to_apply->name(), " has type ",
                                    parameter->shape().ToString(false), " but operand ", i,
                                    " has type ", instruction.operand(i)->shape().ToString(false)));
    }
  }
  return absl::OkStatus();
}

std::string GroupsString(const std::vector<ReplicaGroup>& groups) {
  std::vector<std::string> pieces;
  pieces.reserve(groups.size());
  for (const ReplicaGroup& g : groups) {
    pieces.push_back(absl::StrCat("{", absl::StrJoin(g.replica_ids(), ","), "}"));
  }
  return absl::StrCat("{", absl::StrJoin(pieces, ","), "}");
}

// Replica groups name each participant 0..n-1 exactly once, where n is the
// replica count, partition count or their product (unless that is 1).
absl::Status CheckReplicaGroups(const HloCollectiveInstruction& collective,
                                CollectiveGroupMode mode, bool uniform) {
  std::vector<ReplicaGroup> groups = shape_inference_internal::ReplicaGroups(collective);
  if (groups.empty()) {
    if (mode == CollectiveGroupMode::kFlattenedId) {
      return InstructionError(collective,
                              "replica_groups must be given when use_global_device_ids=true");
    }
    return absl::OkStatus();
  }
  absl::flat_hash_set<int64_t> seen;
  for (const ReplicaGroup& g : groups) {
    if (g.replica_ids().empty()) {
      return InstructionError(collective, "replica_groups contains an empty group");
    }
    for (int64_t id : g.replica_ids()) {
      if (!seen.insert(id).second) {
        return InstructionError(
            collective,
            absl::StrCat("replica ", id, " is repeated in replica_groups=", GroupsString(groups)));
      }
    }
  }
  const int64_t n = static_cast<int64_t>(seen.size());
  for (int64_t i = 0; i < n; ++i) {
    if (!seen.contains(i)) {
      return InstructionError(
          collective,
          absl::StrCat("replica ", i, " is not named in replica_groups=", GroupsString(groups)));
    }
  }
  const HloModule* module = collective.parent() ? collective.parent()->parent() : nullptr;
  const int64_t replicas = module ? module->config().replica_count : 1;
  const int64_t partitions = module ? module->config().num_partitions : 1;
  int64_t expected = 1;
  absl::string_view what;
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      expected = replicas;
      what = "replicas (replica_count)";
      break;
    case CollectiveGroupMode::kCrossPartition:
      expected = partitions;
      what = "partitions (num_partitions)";
      break;
    case CollectiveGroupMode::kFlattenedId:
      expected = replicas * partitions;
      what = "flattened device ids (replica_count * num_partitions)";
      break;
  }
  if (expected != 1 && n != expected) {
    return InstructionError(collective,
                            absl::StrCat("replica_groups=", GroupsString(groups), " name ", n,
                                         " participants but the module has ", expected, " ", what));
  }
  if (uniform) {
    for (const ReplicaGroup& g : groups) {
      if (g.replica_ids_size() != groups[0].replica_ids_size()) {
        return InstructionError(
            collective,
            absl::StrCat("replica groups must all have the same size: ", GroupsString(groups)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCollective(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  if (HloOpcodeIsAsyncDone(opcode) || opcode == HloOpcode::kCollectiveBroadcast) {
    return absl::OkStatus();
  }
  const auto* collective = cast<HloCollectiveInstruction>(&instruction);
  const CollectiveAttrs& attrs = collective->attrs();
  const bool global_ids = shape_inference_internal::HasGlobalDeviceIdsAttribute(opcode);
  auto mode = shape_inference_internal::GetCollectiveGroupMode(
      attrs.channel_id.has_value(),
      global_ids ? std::optional<bool>(attrs.use_global_device_ids) : std::nullopt);
  if (!mode.ok()) return InstructionError(instruction, mode.status().message());
  if ((opcode == HloOpcode::kAllReduce || opcode == HloOpcode::kAllReduceStart) &&
      attrs.channel_id.has_value() && *attrs.channel_id <= 0) {
    return InstructionError(instruction, "all-reduce channel_id must be greater than 0");
  }
  const HloModule* module = instruction.parent() ? instruction.parent()->parent() : nullptr;
  if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
    const int64_t limit = *mode == CollectiveGroupMode::kCrossReplica
                              ? (module ? module->config().replica_count : 1)
                              : (module ? module->config().num_partitions : 1);
    const bool in_place =
        instruction.operand_count() == 4 && instruction.operand(2)->shape().IsTuple();
    absl::flat_hash_set<int64_t> sources, targets;
    for (const auto& [source, target] : attrs.source_target_pairs) {
      for (int64_t id : {source, target}) {
        if (id < 0 || (limit != 1 && id >= limit)) {
          return InstructionError(instruction, absl::StrCat("source_target_pairs entry ", id,
                                                            " is out of range [0, ", limit, ")"));
        }
      }
      if (!in_place && !sources.insert(source).second) {
        return InstructionError(instruction, absl::StrCat("source ", source,
                                                          " appears more than once in "
                                                          "source_target_pairs"));
      }
      if (!in_place && !targets.insert(target).second) {
        return InstructionError(instruction, absl::StrCat("target ", target,
                                                          " appears more than once in "
                                                          "source_target_pairs"));
      }
    }
    return absl::OkStatus();
  }
  const bool uniform = opcode != HloOpcode::kAllReduce && opcode != HloOpcode::kAllReduceStart;
  if (auto s = CheckReplicaGroups(*collective, *mode, uniform); !s.ok()) return s;
  if (opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart ||
      opcode == HloOpcode::kReduceScatter) {
    // The shard count implied by the shapes must be the group size.
    if (attrs.dimensions.size() != 1 || instruction.operand_count() < 1) return absl::OkStatus();
    const int64_t dim = attrs.dimensions[0];
    const Shape* out = &instruction.shape();
    if (opcode == HloOpcode::kAllGatherStart && out->IsTuple() && out->tuple_shapes_size() == 2) {
      out = &out->tuple_shapes(1);
    }
    if (instruction.operand_count() > 1 && out->IsTuple() && out->tuple_shapes_size() > 0) {
      out = &out->tuple_shapes(0);
    }
    const Shape& in = instruction.operand(0)->shape();
    if (!out->IsArray() || !in.IsArray() || dim < 0 || dim >= in.rank() || dim >= out->rank()) {
      return absl::OkStatus();  // shape inference reports it
    }
    const int64_t big =
        opcode == HloOpcode::kReduceScatter ? in.dimensions(dim) : out->dimensions(dim);
    const int64_t small =
        opcode == HloOpcode::kReduceScatter ? out->dimensions(dim) : in.dimensions(dim);
    const int64_t shard_count = small <= 0 ? 1 : (big + small - 1) / small;
    const int64_t subgroup = shape_inference_internal::SubgroupSize(*collective, *mode);
    if (subgroup != 1 && shard_count != subgroup) {
      return InstructionError(
          instruction,
          absl::StrCat("the shapes imply ", shard_count, " shards along dimension ", dim,
                       " but each replica group has ", subgroup, " participants"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFusion(const HloInstruction& fusion) {
  const HloComputation* fused = fusion.called_computations()[0];
  if (fused->FusionInstruction() != nullptr && fused->FusionInstruction() != &fusion) {
    return InstructionError(fusion, absl::StrCat("fused computation ", fused->name(),
                                                 " belongs to another fusion instruction (%",
                                                 fused->FusionInstruction()->name(), ")"));
  }
  const HloInstruction* root = fused->root_instruction();
  for (const HloInstruction* instruction : fused->instructions()) {
    if (instruction == root) continue;
    if (instruction->user_count() == 0) {
      return InstructionError(
          fusion, absl::StrCat("instruction %", instruction->name(), " of fused computation ",
                               fused->name(), " is not the root and has no users"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCustomCall(const HloInstruction& instruction, const HloVerifierOptions& options) {
  const auto* custom_call = cast<HloCustomCallInstruction>(&instruction);
  for (const OutputOperandAlias& alias : custom_call->output_to_operand_aliasing()) {
    if (alias.operand_number < 0 || alias.operand_number >= instruction.operand_count()) {
      return InstructionError(instruction, absl::StrCat("output_to_operand_aliasing names operand ",
                                                        alias.operand_number, " but there are ",
                                                        instruction.operand_count()));
    }
    const Shape& operand = instruction.operand(alias.operand_number)->shape();
    if (!ShapeUtil::IndexIsValid(operand, alias.operand_index)) {
      return InstructionError(instruction,
                              absl::StrCat("output_to_operand_aliasing: operand index ",
                                           ShapeIndexToString(alias.operand_index), " is not in ",
                                           operand.ToString(false)));
    }
    if (!ShapeUtil::IndexIsValid(instruction.shape(), alias.output_index)) {
      return InstructionError(instruction,
                              absl::StrCat("output_to_operand_aliasing: output index ",
                                           ShapeIndexToString(alias.output_index), " is not in ",
                                           instruction.shape().ToString(false)));
    }
    const Shape& out = ShapeUtil::GetSubshape(instruction.shape(), alias.output_index);
    const Shape& in = ShapeUtil::GetSubshape(operand, alias.operand_index);
    if (!ShapesMatch(out, in, options.layout_sensitive, false)) {
      return InstructionError(
          instruction, absl::StrCat("output_to_operand_aliasing: output ",
                                    ShapeIndexToString(alias.output_index), " (",
                                    out.ToString(false), ") and operand ", alias.operand_number,
                                    " at ", ShapeIndexToString(alias.operand_index), " (",
                                    in.ToString(false), ") have different shapes"));
    }
  }
  const auto& constraints = custom_call->attrs().operand_layout_constraints;
  if (constraints.has_value()) {
    if (static_cast<int64_t>(constraints->size()) != instruction.operand_count()) {
      return InstructionError(
          instruction,
          absl::StrCat("operand_layout_constraints has ", constraints->size(),
                       " shapes but there are ", instruction.operand_count(), " operands"));
    }
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (!ShapesMatch((*constraints)[i], instruction.operand(i)->shape(), false, false)) {
        return InstructionError(
            instruction, absl::StrCat("operand_layout_constraints[", i, "] ",
                                      (*constraints)[i].ToString(false), " does not match operand ",
                                      i, " ", instruction.operand(i)->shape().ToString(false)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSingleUser(const HloInstruction& instruction,
                             std::initializer_list<HloOpcode> expected) {
  if (instruction.user_count() != 1) {
    return InstructionError(
        instruction, absl::StrCat("requires exactly one user, found ", instruction.user_count()));
  }
  const HloInstruction* user = instruction.users()[0];
  if (std::find(expected.begin(), expected.end(), user->opcode()) == expected.end()) {
    std::vector<std::string> names;
    for (HloOpcode op : expected) names.emplace_back(HloOpcodeString(op));
    return InstructionError(
        instruction, absl::StrCat("its user must be ", absl::StrJoin(names, " or "), ", found %",
                                  user->name(), " (", HloOpcodeString(user->opcode()), ")"));
  }
  return absl::OkStatus();
}

// Operand 0 must have one of the `expected` opcodes.
absl::Status CheckSingleOperand(const HloInstruction& instruction,
                                std::initializer_list<HloOpcode> expected) {
  if (instruction.operand_count() < 1) return absl::OkStatus();  // arity check reports it
  const HloInstruction* operand = instruction.operand(0);
  if (std::find(expected.begin(), expected.end(), operand->opcode()) == expected.end()) {
    std::vector<std::string> names;
    for (HloOpcode op : expected) names.emplace_back(HloOpcodeString(op));
    return InstructionError(
        instruction, absl::StrCat("its operand must be ", absl::StrJoin(names, " or "), ", found %",
                                  operand->name(), " (", HloOpcodeString(operand->opcode()), ")"));
  }
  return absl::OkStatus();
}

// XLA's VerifyAsynchronousInstructionPairs and the send/recv user rules.
absl::Status CheckPairing(const HloInstruction& instruction, const ModuleFacts& facts) {
  const bool root_of_async =
      instruction.IsRoot() && facts.async_computations.contains(instruction.parent());
  switch (instruction.opcode()) {
    // The async state may also travel through a tuple (e.g. a while loop's
    // state) and come back through get-tuple-element, and pass through the
    // ops that leave a value as it is (copy, opt-barrier), as in XLA.
    case HloOpcode::kAsyncStart:
      return CheckSingleUser(instruction,
                             {HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone, HloOpcode::kTuple,
                              HloOpcode::kCopy, HloOpcode::kOptimizationBarrier});
    case HloOpcode::kAsyncUpdate:
      if (auto s = CheckSingleOperand(instruction, {HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate,
                                                    HloOpcode::kGetTupleElement, HloOpcode::kCopy,
                                                    HloOpcode::kOptimizationBarrier});
          !s.ok()) {
        return s;
      }
      return CheckSingleUser(instruction,
                             {HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone, HloOpcode::kTuple,
                              HloOpcode::kCopy, HloOpcode::kOptimizationBarrier});
    case HloOpcode::kAsyncDone:
      return CheckSingleOperand(instruction, {HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate,
                                              HloOpcode::kGetTupleElement, HloOpcode::kCopy,
                                              HloOpcode::kOptimizationBarrier});
    case HloOpcode::kAllReduceStart:
      return CheckSingleUser(instruction, {HloOpcode::kAllReduceDone});
    case HloOpcode::kAllReduceDone:
      return CheckSingleOperand(instruction, {HloOpcode::kAllReduceStart});
    case HloOpcode::kCopyStart:
      return CheckSingleUser(instruction, {HloOpcode::kCopyDone});
    case HloOpcode::kCopyDone:
      return CheckSingleOperand(instruction, {HloOpcode::kCopyStart});
    case HloOpcode::kCollectivePermuteStart:
      return CheckSingleUser(instruction, {HloOpcode::kCollectivePermuteDone});
    case HloOpcode::kCollectivePermuteDone:
      return CheckSingleOperand(instruction, {HloOpcode::kCollectivePermuteStart});
    case HloOpcode::kSend:
      if (root_of_async) return absl::OkStatus();
      return CheckSingleUser(instruction, {HloOpcode::kSendDone, HloOpcode::kTuple});
    case HloOpcode::kSendDone:
      return CheckSingleOperand(instruction, {HloOpcode::kSend, HloOpcode::kGetTupleElement});
    case HloOpcode::kRecv:
      if (root_of_async) return absl::OkStatus();
      return CheckSingleUser(instruction, {HloOpcode::kRecvDone, HloOpcode::kTuple});
    case HloOpcode::kRecvDone:
      return CheckSingleOperand(instruction, {HloOpcode::kRecv, HloOpcode::kGetTupleElement});
    default:
      return absl::OkStatus();
  }
}

// The wrapped computation of an async-update/done is its operand's. (The
// thread needs no check: async_execution_thread defines the wrapped
// computation's thread, as in XLA.)
absl::Status CheckAsync(const HloInstruction& instruction) {
  const auto* async = cast<HloAsyncInstruction>(&instruction);
  const HloComputation* wrapped = async->async_wrapped_computation();
  if (instruction.opcode() != HloOpcode::kAsyncStart && instruction.operand_count() >= 1) {
    const HloInstruction* operand = instruction.operand(0);
    if ((operand->opcode() == HloOpcode::kAsyncStart ||
         operand->opcode() == HloOpcode::kAsyncUpdate) &&
        !operand->called_computations().empty() && operand->called_computations()[0] != wrapped) {
      return InstructionError(
          instruction,
          absl::StrCat("wraps computation ", wrapped->name(), " but its operand %", operand->name(),
                       " wraps ", operand->called_computations()[0]->name()));
    }
  }
  return absl::OkStatus();
}

// `origin={...}` (XLA's original value): every leaf names a value; an empty
// leaf `{}` is what XLA's VerifyOriginalValue rejects.
absl::Status CheckOriginalValue(const HloInstruction& instruction) {
  const RawAttribute* origin = instruction.FindRawAttribute("origin");
  if (origin == nullptr) return absl::OkStatus();
  bool in_string = false;
  const std::string& text = origin->value;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      size_t j = i + 1;
      while (j < text.size() && text[j] == ' ') ++j;
      if (j < text.size() && text[j] == '}') {
        return InstructionError(instruction,
                                absl::StrCat("origin=", text,
                                             " has a leaf without a value ({}); every leaf of "
                                             "an original value must name one"));
      }
    }
  }
  return absl::OkStatus();
}

// Called computations run on the caller's execution thread (async ops move
// work to their own thread and are checked by CheckAsync).
absl::Status CheckExecutionThreads(const HloInstruction& instruction, const ModuleFacts& facts) {
  const HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kAsyncStart || opcode == HloOpcode::kAsyncUpdate ||
      opcode == HloOpcode::kAsyncDone || instruction.parent() == nullptr) {
    return absl::OkStatus();
  }
  auto thread_of = [&](const HloComputation* c) -> std::string {
    auto it = facts.execution_thread.find(c);
    return it == facts.execution_thread.end() ? c->execution_thread() : it->second;
  };
  const std::string thread = thread_of(instruction.parent());
  for (const HloComputation* callee : instruction.called_computations()) {
    const std::string callee_thread = thread_of(callee);
    if (callee_thread != thread) {
      return InstructionError(
          instruction, absl::StrCat("calls computation ", callee->name(), " on execution thread \"",
                                    callee_thread, "\" from thread \"", thread,
                                    "\"; called computations must run on the caller's thread"));
    }
  }
  return absl::OkStatus();
}

// A composite call names its composite in frontend attributes.
absl::Status CheckComposite(const HloInstruction& call) {
  const RawAttribute* composite = call.FindRawAttribute("is_composite");
  if (composite == nullptr || composite->value != "true") return absl::OkStatus();
  const FrontendAttributes& attrs = call.frontend_attributes();
  auto name = attrs.find("composite.name");
  if (name == attrs.end() || name->second.empty()) {
    return InstructionError(call,
                            "a composite call needs a non-empty composite.name frontend "
                            "attribute");
  }
  auto attributes = attrs.find("composite.attributes");
  if (attributes != attrs.end() && attributes->second.empty()) {
    return InstructionError(call, "composite.attributes must be {} or non-empty");
  }
  auto version = attrs.find("composite.version");
  if (version != attrs.end()) {
    int64_t v = -1;
    if (!absl::SimpleAtoi(version->second, &v) || v < 0) {
      return InstructionError(call, absl::StrCat("composite.version must be a non-negative "
                                                 "integer; got \"",
                                                 version->second, "\""));
    }
  }
  return absl::OkStatus();
}

// While and conditional: the instruction and the values that flow through
// it (body root and parameters, branch roots) agree on their sharding.
absl::Status CheckConsistentSharding(const HloInstruction& instruction) {
  std::vector<const HloInstruction*> related = {&instruction};
  const auto& called = instruction.called_computations();
  if (instruction.opcode() == HloOpcode::kWhile && called.size() == 2) {
    related.push_back(called[1]->root_instruction());
    for (const HloComputation* c : called) {
      if (c->num_parameters() == 1) related.push_back(c->parameter_instruction(0));
    }
  } else if (instruction.opcode() == HloOpcode::kConditional) {
    for (const HloComputation* c : called) related.push_back(c->root_instruction());
  } else {
    return absl::OkStatus();
  }
  const HloInstruction* first = nullptr;
  for (const HloInstruction* r : related) {
    if (r == nullptr || !r->has_sharding()) continue;
    if (first == nullptr) {
      first = r;
    } else if (!(r->sharding() == first->sharding())) {
      return InstructionError(
          instruction, absl::StrCat("inconsistent sharding: %", first->name(), " has ",
                                    first->sharding().ToString(), " but %", r->name(), " has ",
                                    r->sharding().ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyInstruction(const HloInstruction& instruction, const HloVerifierOptions& options,
                               const ModuleFacts& facts) {
  if (auto s = CheckCounts(instruction); !s.ok()) return s;
  if (auto s = CheckLayouts(instruction, options); !s.ok()) return s;
  const HloOpcode opcode = instruction.opcode();

  auto inferred = ShapeInference::InferInstructionShape(instruction);
  if (inferred.ok()) {
    if (auto s = CheckShape(instruction, *inferred, options); !s.ok()) return s;
  } else if (!absl::IsUnimplemented(inferred.status()) || opcode == HloOpcode::kComplex) {
    return InstructionError(instruction, inferred.status().message());
  } else if (!options.allow_mixed_precision) {
    if (auto s = CheckMixedPrecisionOperands(instruction); !s.ok()) return s;
  }

  if (auto s = CheckElementwise(instruction); !s.ok()) return s;
  if (auto s = CheckOriginalValue(instruction); !s.ok()) return s;
  if (auto s = CheckExecutionThreads(instruction, facts); !s.ok()) return s;
  if (auto s = CheckPairing(instruction, facts); !s.ok()) return s;
  if (HloOpcodeIsCollective(opcode)) {
    if (auto s = CheckCollective(instruction); !s.ok()) return s;
  }
  switch (opcode) {
    case HloOpcode::kReduce:
    case HloOpcode::kMap:
    case HloOpcode::kReduceWindow:
      if (!options.allow_mixed_precision) return CheckToApplyElementTypes(instruction);
      break;
    case HloOpcode::kBroadcast:
      if (options.verify_broadcast_dimensions_order) {
        const auto& dims = cast<HloDimensionsInstruction>(&instruction)->dimensions();
        if (!std::is_sorted(dims.begin(), dims.end())) {
          return InstructionError(instruction, "broadcast dimensions must be sorted");
        }
      }
      break;
    case HloOpcode::kFusion:
      return CheckFusion(instruction);
    case HloOpcode::kCall:
      return CheckComposite(instruction);
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
      return CheckConsistentSharding(instruction);
    case HloOpcode::kCustomCall:
      return CheckCustomCall(instruction, options);
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return CheckAsync(instruction);
    case HloOpcode::kBitcast:
      if (options.layout_sensitive &&
          ShapeUtil::ByteSizeOfElements(instruction.shape()) !=
              ShapeUtil::ByteSizeOfElements(instruction.operand(0)->shape())) {
        return InstructionError(instruction,
                                absl::StrCat("bitcast changes the size in bytes: ",
                                             instruction.operand(0)->shape().ToString(true), " -> ",
                                             instruction.shape().ToString(true)));
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace axle::verifier_internal
