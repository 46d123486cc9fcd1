//===- nccl_collective_plan.cc - What an NCCL collective thunk does ---------===//
#include "axle/gpu/nccl_collective_plan.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/in_place_permute.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/send_recv_validation.h"

namespace axle::gpu {
namespace {

const char* KindName(NcclCollectiveKind kind) {
  switch (kind) {
    case NcclCollectiveKind::kAllReduce:
      return "all-reduce";
    case NcclCollectiveKind::kAllGather:
      return "all-gather";
    case NcclCollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case NcclCollectiveKind::kAllToAll:
      return "all-to-all";
    case NcclCollectiveKind::kCollectivePermute:
      return "collective-permute";
    case NcclCollectiveKind::kCollectiveBroadcast:
      return "collective-broadcast";
  }
  return "?";
}

const char* ReductionName(NcclReduction reduction) {
  switch (reduction) {
    case NcclReduction::kNone:
      return "";
    case NcclReduction::kSum:
      return " sum";
    case NcclReduction::kProduct:
      return " prod";
    case NcclReduction::kMin:
      return " min";
    case NcclReduction::kMax:
      return " max";
  }
  return "";
}

const char* ElementName(NcclElement element) {
  switch (element) {
    case NcclElement::kInt8:
      return "int8";
    case NcclElement::kUint8:
      return "uint8";
    case NcclElement::kInt32:
      return "int32";
    case NcclElement::kUint32:
      return "uint32";
    case NcclElement::kInt64:
      return "int64";
    case NcclElement::kUint64:
      return "uint64";
    case NcclElement::kFloat16:
      return "float16";
    case NcclElement::kBfloat16:
      return "bfloat16";
    case NcclElement::kFloat32:
      return "float32";
    case NcclElement::kFloat64:
      return "float64";
  }
  return "?";
}

std::optional<NcclCollectiveKind> KindOf(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce:
      return NcclCollectiveKind::kAllReduce;
    case HloOpcode::kAllGather:
      return NcclCollectiveKind::kAllGather;
    case HloOpcode::kReduceScatter:
      return NcclCollectiveKind::kReduceScatter;
    case HloOpcode::kAllToAll:
      return NcclCollectiveKind::kAllToAll;
    case HloOpcode::kCollectivePermute:
      return NcclCollectiveKind::kCollectivePermute;
    case HloOpcode::kCollectiveBroadcast:
      return NcclCollectiveKind::kCollectiveBroadcast;
    default:
      return std::nullopt;
  }
}

// The type NCCL reduces elements of `type` as, and how many of its
// elements one element is (2 for complex).
struct ReducedType {
  NcclElement element;
  int64_t per_element = 1;
};

std::optional<ReducedType> ReducedTypeOf(PrimitiveType type) {
  switch (type) {
    case S8:
      return ReducedType{NcclElement::kInt8};
    case PRED:
    case U8:
      return ReducedType{NcclElement::kUint8};
    case S32:
      return ReducedType{NcclElement::kInt32};
    case U32:
      return ReducedType{NcclElement::kUint32};
    case S64:
      return ReducedType{NcclElement::kInt64};
    case U64:
      return ReducedType{NcclElement::kUint64};
    case F16:
      return ReducedType{NcclElement::kFloat16};
    case BF16:
      return ReducedType{NcclElement::kBfloat16};
    case F32:
      return ReducedType{NcclElement::kFloat32};
    case F64:
      return ReducedType{NcclElement::kFloat64};
    case C64:
      return ReducedType{NcclElement::kFloat32, 2};
    case C128:
      return ReducedType{NcclElement::kFloat64, 2};
    default:
      return std::nullopt;
  }
}

// to_apply as NCCL's reduction over `type`: one binary op of its two
// parameters (in either order: NCCL's reductions are commutative). On pred
// (stored as 0/1 bytes) and/or are min/max, and add/multiply (XLA's or/and
// on pred) too.
absl::StatusOr<NcclReduction> ReductionOf(const HloInstruction& instruction, PrimitiveType type) {
  const std::string type_name(primitive_util::LowercasePrimitiveTypeName(type));
  if (instruction.called_computations().size() != 1) {
    return GpuUnsupported(instruction, "a reduction without one to_apply computation");
  }
  const HloComputation& computation = *instruction.to_apply();
  const HloInstruction* root = computation.root_instruction();
  auto unsupported = [&](absl::string_view op) {
    return GpuUnsupported(
        instruction, absl::StrCat("NCCL has no ", op, " reduction over ", type_name, " (to_apply %",
                                  computation.name(), ")"));
  };
  if (root == nullptr || root->operand_count() != 2 || computation.num_parameters() != 2 ||
      root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1)) {
    return unsupported(root != nullptr
                           ? absl::StrCat("'", HloOpcodeString(root->opcode()), "' computation")
                           : std::string("empty computation"));
  }
  if (!ReducedTypeOf(type).has_value()) return unsupported(HloOpcodeString(root->opcode()));
  const bool complex = primitive_util::IsComplexType(type);
  const bool pred = type == PRED;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return pred ? NcclReduction::kMax : NcclReduction::kSum;
    case HloOpcode::kMultiply:
      if (complex) return unsupported("multiply");
      return pred ? NcclReduction::kMin : NcclReduction::kProduct;
    case HloOpcode::kMinimum:
      if (complex) return unsupported("minimum");
      return NcclReduction::kMin;
    case HloOpcode::kMaximum:
      if (complex) return unsupported("maximum");
      return NcclReduction::kMax;
    case HloOpcode::kAnd:
      if (pred) return NcclReduction::kMin;
      return unsupported("and");
    case HloOpcode::kOr:
      if (pred) return NcclReduction::kMax;
      return unsupported("or");
    default:
      return unsupported(HloOpcodeString(root->opcode()));
  }
}

}  // namespace

// Whether every dimension more major than `dim` in the shape's layout
// (row-major without one) has size 1: the pieces cut along `dim` are then
// contiguous.
bool NcclPiecesContiguous(const Shape& shape, int64_t dim) {
  if (dim < 0 || dim >= shape.rank()) return false;
  if (!shape.has_layout() || shape.layout().minor_to_major().empty()) {
    for (int64_t d = 0; d < dim; ++d) {
      if (shape.dimensions(d) != 1) return false;
    }
    return true;
  }
  const std::vector<int64_t>& order = shape.layout().minor_to_major();
  bool more_major = false;
  for (int64_t d : order) {
    if (more_major && shape.dimensions(d) != 1) return false;
    if (d == dim) more_major = true;
  }
  return true;
}

std::string NcclClique::ToString() const {
  return absl::StrCat("{", absl::StrJoin(devices, ","), "} rank ", rank);
}

absl::StatusOr<NcclCollectivePlan> MakeNcclCollectivePlan(const HloInstruction& instruction) {
  const std::optional<NcclCollectiveKind> kind = KindOf(instruction.opcode());
  const auto* collective = dyn_cast<HloCollectiveInstruction>(&instruction);
  if (!kind.has_value() || collective == nullptr) {
    return GpuUnsupported(instruction, absl::StrCat(HloOpcodeString(instruction.opcode()),
                                                    " among several devices is not supported "
                                                    "on CUDA yet"));
  }
  if (IsInPlacePermute(instruction)) {
    return GpuUnsupported(instruction,
                          "the in-place collective-permute is not supported on CUDA "
                          "yet");
  }
  if (instruction.frontend_attributes().count(kSendRecvValidationAttribute) != 0) {
    return GpuUnsupported(
        instruction, absl::StrCat(kSendRecvValidationAttribute, " is not supported on CUDA yet"));
  }
  NcclCollectivePlan plan;
  plan.kind = *kind;
  const HloModuleConfig& config = instruction.parent()->parent()->config();
  plan.grid = DeviceGrid{config.replica_count, config.num_partitions};
  const int64_t count = instruction.operand_count();
  const Shape& shape = instruction.shape();
  if (shape.IsTuple() ? static_cast<int64_t>(shape.tuple_shapes().size()) != count : count != 1) {
    return GpuUnsupported(instruction, "the result must be one array per operand");
  }
  if (plan.kind == NcclCollectiveKind::kCollectivePermute) {
    if (count != 1) return GpuUnsupported(instruction, "collective-permute of several operands");
    AXLE_ASSIGN_OR_RETURN(plan.pairs, PermutePairsOf(*collective, plan.grid));
  } else {
    AXLE_ASSIGN_OR_RETURN(plan.groups, ParticipantGroupsOf(*collective, plan.grid));
  }
  const std::vector<int64_t>& dimensions = collective->attrs().dimensions;
  plan.tuple_all_to_all = plan.kind == NcclCollectiveKind::kAllToAll && dimensions.empty();
  const bool reduces = plan.kind == NcclCollectiveKind::kAllReduce ||
                       plan.kind == NcclCollectiveKind::kReduceScatter;
  for (int64_t k = 0; k < count; ++k) {
    const Shape& operand = instruction.operand(k)->shape();
    const Shape& result = shape.IsTuple() ? shape.tuple_shapes(k) : shape;
    if (!operand.IsArray() || !result.IsArray() ||
        operand.element_type() != result.element_type() ||
        primitive_util::IsSubByteType(operand.element_type()) ||
        primitive_util::ByteWidth(operand.element_type()) <= 0) {
      return GpuUnsupported(instruction, absl::StrCat("operand ", k, " ", operand.ToString(false),
                                                      " and result ", result.ToString(false),
                                                      " must be arrays of one byte-sized type"));
    }
    const PrimitiveType type = operand.element_type();
    NcclBuffer buffer;
    buffer.operand_bytes = ShapeUtil::ByteSizeOfElements(operand);
    buffer.result_bytes = ShapeUtil::ByteSizeOfElements(result);
    if (reduces) {
      AXLE_ASSIGN_OR_RETURN(NcclReduction reduction, ReductionOf(instruction, type));
      if (k > 0 && reduction != plan.reduction) {
        return GpuUnsupported(instruction, "operands of several element types");
      }
      plan.reduction = reduction;
      const ReducedType reduced = *ReducedTypeOf(type);
      buffer.element = reduced.element;
      buffer.operand_count = ShapeUtil::ElementsIn(operand) * reduced.per_element;
      buffer.result_count = ShapeUtil::ElementsIn(result) * reduced.per_element;
    } else {
      buffer.operand_count = buffer.operand_bytes;
      buffer.result_count = buffer.result_bytes;
    }
    const bool cut = plan.kind == NcclCollectiveKind::kAllGather ||
                     plan.kind == NcclCollectiveKind::kReduceScatter ||
                     (plan.kind == NcclCollectiveKind::kAllToAll && !plan.tuple_all_to_all);
    if (cut) {
      const int64_t dim = dimensions.empty() ? 0 : dimensions[0];
      const Shape& whole = plan.kind == NcclCollectiveKind::kAllGather ? result : operand;
      if (!NcclPiecesContiguous(whole, dim)) {
        return GpuUnsupported(
            instruction,
            absl::StrCat("NCCL moves contiguous pieces: dimension ", dim, " of ",
                         whole.ToString(true),
                         " must be the most major one of size > 1 (packing is not done yet)"));
      }
    }
    plan.buffers.push_back(buffer);
  }
  // The sizes every group implies.
  for (const std::vector<int64_t>& group : plan.groups) {
    const auto n = static_cast<int64_t>(group.size());
    for (const NcclBuffer& buffer : plan.buffers) {
      bool fits = true;
      switch (plan.kind) {
        case NcclCollectiveKind::kAllGather:
          fits = buffer.result_bytes == buffer.operand_bytes * n;
          break;
        case NcclCollectiveKind::kReduceScatter:
          fits = buffer.operand_bytes == buffer.result_bytes * n;
          break;
        case NcclCollectiveKind::kAllToAll:
          fits = buffer.operand_bytes == buffer.result_bytes &&
                 (plan.tuple_all_to_all ? count == n : buffer.operand_bytes % n == 0);
          break;
        default:
          fits = buffer.operand_bytes == buffer.result_bytes;
          break;
      }
      if (!fits) {
        return GpuUnsupported(
            instruction, absl::StrCat("operand of ", buffer.operand_bytes,
                                      " bytes and result "
                                      "of ",
                                      buffer.result_bytes, " bytes do not fit a group of ", n));
      }
    }
  }
  if (plan.tuple_all_to_all) {
    for (const NcclBuffer& buffer : plan.buffers) {
      if (buffer.operand_bytes != plan.buffers[0].operand_bytes) {
        return GpuUnsupported(instruction, "all-to-all operands of different sizes");
      }
    }
  }
  return plan;
}

absl::StatusOr<NcclClique> NcclCliqueOf(const NcclCollectivePlan& plan, int64_t device) {
  if (plan.kind == NcclCollectiveKind::kCollectivePermute) {
    NcclClique clique;
    for (int64_t d = 0; d < plan.grid.size(); ++d) clique.devices.push_back(d);
    clique.rank = device;
    if (device < 0 || device >= plan.grid.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("device ", device, " is not in the grid of ", plan.grid.size()));
    }
    return clique;
  }
  for (const std::vector<int64_t>& group : plan.groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i] == device) return NcclClique{group, static_cast<int64_t>(i)};
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("device ", device, " is in no participant group"));
}

NcclPermutePeers NcclPermutePeersOf(const NcclCollectivePlan& plan, int64_t device) {
  NcclPermutePeers peers;
  for (const auto& [source, target] : plan.pairs) {
    if (target == device) peers.source = source;
    if (source == device) peers.target = target;
  }
  return peers;
}

std::string NcclCollectivePlanToString(const NcclCollectivePlan& plan) {
  std::string text = absl::StrCat(KindName(plan.kind), ReductionName(plan.reduction));
  for (const NcclBuffer& buffer : plan.buffers) {
    absl::StrAppend(&text, " ", ElementName(buffer.element), "[", buffer.operand_count, "->",
                    buffer.result_count, "]");
  }
  if (plan.kind == NcclCollectiveKind::kCollectivePermute) {
    absl::StrAppend(&text, " pairs {",
                    absl::StrJoin(plan.pairs, ",",
                                  [](std::string* out, const std::pair<int64_t, int64_t>& p) {
                                    absl::StrAppend(out, "{", p.first, ",", p.second, "}");
                                  }),
                    "}");
  } else {
    absl::StrAppend(&text, " groups {",
                    absl::StrJoin(plan.groups, ",",
                                  [](std::string* out, const std::vector<int64_t>& g) {
                                    absl::StrAppend(out, "{", absl::StrJoin(g, ","), "}");
                                  }),
                    "}");
  }
  if (plan.tuple_all_to_all) absl::StrAppend(&text, " tuple");
  return text;
}

}  // namespace axle::gpu
